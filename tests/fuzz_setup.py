"""The common start of the differential fuzz scripts (fuzz_hf, fuzz_hf_components): the oracle
on one thread (set before tokenizers loads) and where the shared data is."""
from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("RAYON_NUM_THREADS", "1")

TESTS = Path(__file__).resolve().parent
SHARED = TESTS.parent.parent / "shared"
if not SHARED.exists():
    SHARED = Path("/work/shared")
CORPORA = ("en", "code", "multi")


class Raised:
    """An exception's outcome: equal to any other (the libraries raise different types)."""

    def __init__(self, exc: BaseException):
        self.name = type(exc).__name__
        self.msg = str(exc)[:200]

    def __eq__(self, other) -> bool:
        return isinstance(other, Raised)

    def __repr__(self) -> str:
        return f"<raised {self.name}: {self.msg}>"


def outcome(fn, *args):
    """fn(*args), or Raised for what it raised, tokenizers' panics included."""
    try:
        return fn(*args)
    except Exception as exc:
        return Raised(exc)
    except BaseException as exc:  # pyo3_runtime.PanicException: tokenizers panicked (not an Exception)
        if type(exc).__name__ != "PanicException":
            raise
        return Raised(exc)
