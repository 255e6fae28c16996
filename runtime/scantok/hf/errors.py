"""The errors of the HuggingFace front-ends: bad tokenizer.json data, unsupported components."""
from __future__ import annotations


class HFError(ValueError):
    """Invalid tokenizer.json data or arguments, or an encoding error (as HuggingFace raises)."""


class WordLevelError(HFError):
    """Invalid WordLevel data, or an encoding error (as HuggingFace raises)."""


class UnsupportedComponentError(WordLevelError):
    """A tokenizer.json component (normalizer, pre-tokenizer, ...) that scantok does not support."""
