"""scantok: exact tiktoken- and HuggingFace-compatible tokenizers on compiled C scanners."""
from .scanner import Scanner, scanner, scanners, simd_impl, simd_impls

__all__ = ["Scanner", "scanner", "scanners", "simd_impl", "simd_impls"]

# tiktoken-compatible BPE encodings (issue 3)
from .encoding import Encoding  # noqa: E402
from .registry import (  # noqa: E402
    encoding_for_model,
    encoding_name_for_model,
    get_encoding,
    list_encoding_names,
)

__all__ += ["Encoding", "get_encoding", "list_encoding_names", "encoding_for_model", "encoding_name_for_model"]

# character-level and HuggingFace-compatible WordLevel tokenizers (issue 4)
from .char import CharTokenizer  # noqa: E402
from .wordlevel import WordLevel, train_wordlevel  # noqa: E402

__all__ += ["CharTokenizer", "WordLevel", "train_wordlevel"]
