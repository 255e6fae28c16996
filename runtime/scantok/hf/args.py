"""How tokenizers' Python binding reads arguments (pyo3's extraction): unsigned integers,
strings and bools, each raising the exception type it raises, for every module of ``scantok.hf``
that takes them (Encoding's methods, truncation, padding, AddedToken, the Tokenizer's flags)."""
from __future__ import annotations

from operator import index
from typing import Any

USIZE_END = 1 << 64  # one past the largest usize
U32_END = 1 << 32  # one past the largest u32


def usize(v: Any, what: str) -> int:
    """v as a usize: an int (TypeError otherwise), 0 <= v < 2**64 (OverflowError otherwise)."""
    v = index(v)
    if not 0 <= v < USIZE_END:
        raise OverflowError(f"{what} must be 0 <= {what} < 2**64, got {v}")
    return v


def u32(v: Any, what: str) -> int:
    """v as a u32: as usize, below 2**32."""
    v = usize(v, what)
    if v >= U32_END:
        raise OverflowError(f"{what} must be 0 <= {what} < 2**32, got {v}")
    return v


def string(v: Any, what: str) -> str:
    """v as a str (TypeError otherwise)."""
    if not isinstance(v, str):
        raise TypeError(f"'{type(v).__name__}' object is not an instance of 'str' ({what})")
    return v


def is_bool(v: Any) -> bool:
    """Whether v reads as a bool: Python's, or numpy's."""
    return type(v) is bool or (type(v).__module__ == "numpy" and type(v).__name__ in ("bool", "bool_"))
