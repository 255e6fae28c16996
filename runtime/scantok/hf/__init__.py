"""HuggingFace ``tokenizers``-compatible front-ends, one module per component kind.

``normalizers`` (with alignments), ``pre_tokenizers`` and ``patterns`` (their piece finders),
``added_tokens``, ``bpe`` (the BPE and WordLevel models of ``Tokenizer``), ``post_processors``,
``decoders``, ``encoding`` (``Encoding`` and what is done to it after the model),
``truncation``, ``padding``, ``tokenizer`` (``Tokenizer``), ``models`` (WordLevel),
``trainers`` (WordLevel training), ``unicode_tables`` (HF's character tables), ``native`` (the
optional C paths), ``args`` (arguments read as tokenizers' binding reads them), ``errors``.
"""
from .added_tokens import AddedToken
from .encoding import Encoding
from .errors import HFError, TextEncodeError, UnsupportedComponentError, WordLevelError
from .models import WordLevel
from .trainers import train_wordlevel

__all__ = ["AddedToken", "Encoding", "HFError", "TextEncodeError", "UnsupportedComponentError", "WordLevelError", "WordLevel", "train_wordlevel"]
