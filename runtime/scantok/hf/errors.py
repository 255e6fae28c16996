"""The errors of the HuggingFace front-ends: bad tokenizer.json data, unsupported components."""
from __future__ import annotations

import re


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


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _surrogate_error(text: str, where: str) -> TextEncodeError | None:
    """The error for text's first lone surrogate, or None if it has none."""
    m = None if str.isascii(text) else _LONE_SURROGATE.search(text)
    if m is None:
        return None
    e = TextEncodeError("utf-8", str(text), m.start(), m.end(), "surrogates not allowed")
    e.where = where
    return e


def _batch_surrogate_error(inputs: list, where: str) -> TextEncodeError | None:
    for i, t in enumerate(inputs):
        if isinstance(t, str):
            e = _surrogate_error(t, f"{where}: inputs[{i}]")
            if e is not None:
                return e
    return None


def _check_text(text: str, where: str) -> None:
    """Raises TextEncodeError if text holds a lone surrogate, as tokenizers refuses such a str.
    The test is the SIMD str -> UTF-8 copy (GB/s; CPython's encoder, and its error, for a
    surrogate), not a regex (0.5 GB/s on the multi corpus)."""
    if str.isascii(text):
        return
    try:
        from .._pylist import utf8_bytes
    except ImportError:  # pragma: no cover - the C-API module is part of every build
        utf8_bytes = str.encode
    try:
        utf8_bytes(text)
    except UnicodeEncodeError:
        raise _surrogate_error(text, where) from None

