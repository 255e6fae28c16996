"""HuggingFace-compatible WordLevel tokenizer and trainer on compiled scanners (the public
face of :mod:`scantok.hf`, where the components live, one module per kind).

A :class:`WordLevel` is a vocabulary (token -> id), an ``unk_token``, a normalizer and a
pre-tokenizer, with the semantics of HuggingFace ``tokenizers`` (0.23.3): the same ids and the
same offsets (``str`` indices into the original text) for every supported component.

Supported ``tokenizer.json`` components
    normalizers: ``Lowercase``, ``NFC``, ``NFD``, ``NFKC``, ``NFKD``, ``Strip``,
    ``BertNormalizer``, ``Sequence`` of these (or none);
    pre-tokenizers: ``Whitespace``, ``WhitespaceSplit``, ``BertPreTokenizer``, ``Punctuation``,
    ``Digits``, ``Split`` (string or regex pattern; every behavior; ``invert``), ``Sequence`` of
    these (or none);
    added tokens with ``normalized: false`` and no ``lstrip``/``rstrip``/``single_word``;
    no post-processor, no decoder, no truncation, no padding.
Anything else raises :class:`UnsupportedComponentError` naming the component.

The hot path (a single pre-tokenizer that keeps its matches: Whitespace, WhitespaceSplit,
BertPreTokenizer) scans and looks every word up in one C call with the GIL released.
HuggingFace's character classes are reproduced exactly, including where its Unicode tables are
older or newer than Python's (the tables below were measured against ``tokenizers`` 0.23.3 for
every code point).
"""
from __future__ import annotations

from .hf.errors import UnsupportedComponentError, WordLevelError
from .hf.models import WordLevel
from .hf.native import _native
from .hf.normalizers import _lower_char
from .hf.patterns import _builtin_matcher, _regex_matcher
from .hf.trainers import train_wordlevel
from .hf.unicode_tables import _BERT_PUNCT, _LOWER_TABLE, _NUMERIC

__all__ = [
    "WordLevel",
    "train_wordlevel",
    "WordLevelError",
    "UnsupportedComponentError",
]
# the private names above are the tables and finders the differential tests check
_PRIVATE = (_native, _lower_char, _builtin_matcher, _regex_matcher, _BERT_PUNCT,
            _LOWER_TABLE, _NUMERIC)
