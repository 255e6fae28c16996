"""The errors BPE training raises on bad input: each names what is wrong and where.

>>> from scantok.bpe.errors import BPETrainingError, InvalidUTF8Error
>>> issubclass(InvalidUTF8Error, BPETrainingError) and issubclass(BPETrainingError, ValueError)
True
"""
from __future__ import annotations

__all__ = ["BPETrainingError", "EmptyCorpusError", "VocabSizeError", "SpecialTokenError",
           "UnknownPatternError", "InvalidUTF8Error", "TrainingInputError"]


class BPETrainingError(ValueError):
    """Base class of the errors of :func:`scantok.train_bpe`."""


class EmptyCorpusError(BPETrainingError):
    """The corpus has no text (no files, only empty files or strings)."""


class VocabSizeError(BPETrainingError):
    """vocab_size is not an integer >= 256 + the number of special tokens."""


class SpecialTokenError(BPETrainingError):
    """A special token is repeated, empty or not a str."""


class UnknownPatternError(BPETrainingError):
    """The pattern is neither the name nor the pattern string of a compiled scanner."""


class TrainingInputError(BPETrainingError):
    """An item of the training iterator is not text (or has a lone surrogate)."""


class InvalidUTF8Error(BPETrainingError):
    """A training file is not valid UTF-8; ``path`` and ``offset`` (bytes) say where."""

    def __init__(self, path: str, offset: int, data: bytes = b""):
        self.path = path
        self.offset = offset
        shown = f" ({data!r}...)" if data else ""
        super().__init__(f"{path}: invalid UTF-8 at byte offset {offset}{shown}")

    def __reduce__(self):
        return (InvalidUTF8Error, (self.path, self.offset))
