"""scantok: exact tiktoken- and HuggingFace-compatible tokenizers on compiled C scanners."""
from .scanner import Scanner, scanner, scanners, simd_impl, simd_impls

__all__ = ["Scanner", "scanner", "scanners", "simd_impl", "simd_impls"]

# tiktoken-compatible BPE encodings (issue 3)
from .encoding import Encoding  # noqa: E402
from .model import encoding_for_model, encoding_name_for_model  # noqa: E402
from .registry import get_encoding, list_encoding_names  # noqa: E402

__all__ += ["Encoding", "get_encoding", "list_encoding_names", "encoding_for_model", "encoding_name_for_model"]

# character-level and HuggingFace-compatible WordLevel tokenizers (issue 4), imported on
# first use: their Unicode tables take longer to build than the rest of `import scantok`,
# and `import scantok; scantok.get_encoding(...)` should not pay for them.
_LAZY = {"CharTokenizer": ".char", "WordLevel": ".wordlevel", "train_wordlevel": ".wordlevel"}
# patterns compiled at run time (issue 10): scantok.compile(pattern, flavor=...) -> Scanner,
# lazy because the compiler stages are only needed by a pattern with no shipped scanner
_LAZY.update({"compile": ".compiler.runtime", "PatternError": ".compiler.parse"})

# HuggingFace tokenizer.json (BPE / WordLevel) tokenizer (issue 10), imported on first use
_LAZY.update({"Tokenizer": ".hf.tokenizer", "AddedToken": ".hf.added_tokens", "HFError": ".hf.errors",
               "UnsupportedComponentError": ".hf.errors", "TextEncodeError": ".hf.errors"})

__all__ += list(_LAZY)

# code50k's file/edit framing (issue 9), imported on first use like the block above
_LAZY.update({"CodeTokenizer": ".code", "FramingError": ".code"})
__all__ += ["CodeTokenizer", "FramingError"]

# byte-level BPE training (issue 8), imported on first use
_LAZY.update({"train_bpe": ".bpe", "TrainedBPE": ".bpe"})
__all__ += ["train_bpe", "TrainedBPE"]


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'scantok' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
