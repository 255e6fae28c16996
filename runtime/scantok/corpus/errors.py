"""The corpus pipeline's exceptions: what went wrong, in which input file, at which line."""
from __future__ import annotations

__all__ = ["CorpusError", "CorpusInputError", "CorpusStateError"]


class CorpusError(ValueError):
    """Base class of the corpus pipeline's errors."""


class CorpusInputError(CorpusError):
    """A document (or a whole input file) that cannot be read as the format says.

    ``path`` is the input file, ``line`` the 1-based line (JSON Lines), the 0-based row
    (Parquet) or None (the file as a whole), ``reason`` what is wrong.

    >>> str(CorpusInputError("a.jsonl", 3, "invalid JSON: Expecting value"))
    'a.jsonl, line 3: invalid JSON: Expecting value'
    """

    def __init__(self, path: str, line: int | None, reason: str, *, kind: str = "line"):
        super().__init__(path, line, reason)
        self.path = path
        self.line = line
        self.reason = reason
        self.kind = kind

    def __reduce__(self):
        # the exception crosses process boundaries (process pool, Dask) intact
        return (_rebuild_input_error, (self.path, self.line, self.reason, self.kind))

    def __str__(self) -> str:
        if self.line is None:
            return f"{self.path}: {self.reason}"
        return f"{self.path}, {self.kind} {self.line}: {self.reason}"


def _rebuild_input_error(path, line, reason, kind):
    return CorpusInputError(path, line, reason, kind=kind)


class CorpusStateError(CorpusError):
    """The output directory holds something else: another corpus (different inputs or
    parameters), or an incomplete or damaged shard directory."""
