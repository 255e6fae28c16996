"""The errors of the HuggingFace front-ends: bad tokenizer.json data, unsupported components."""
from __future__ import annotations


class HFError(ValueError):
    """Invalid tokenizer.json data or arguments, or an encoding error (as HuggingFace raises)."""


class WordLevelError(HFError):
    """Invalid WordLevel data, or an encoding error (as HuggingFace raises)."""


class UnsupportedComponentError(WordLevelError):
    """A tokenizer.json component (normalizer, pre-tokenizer, ...) that scantok does not support."""


class TextEncodeError(UnicodeEncodeError, HFError, TypeError):
    """A text to encode holds a lone surrogate (U+D800..U+DFFF on its own), which has no UTF-8.

    tokenizers raises ``TypeError`` for such a ``str`` (it cannot become a Rust string), so this
    is a ``TypeError`` too, and a ``UnicodeEncodeError`` whose ``object``, ``start`` and ``end``
    say where the surrogate is; ``where`` names the call and the input (``inputs[3]``)."""

    where = ""

    def __str__(self) -> str:
        text = super().__str__()
        return f"{self.where}: {text}" if self.where else text
