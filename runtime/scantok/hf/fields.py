"""tokenizer.json fields read as tokenizers' deserializer reads them, for every component
module of ``scantok.hf``: a value of the wrong JSON type is an error naming where it is, never
coerced (the string "false" is not False, 1.5 is not an id), so a file tokenizers refuses does
not load into a tokenizer that gives other results, or fails only when it is used.  (Arguments
of Python calls are read by ``args``, with the exception types of tokenizers' binding.)"""
from __future__ import annotations

from typing import Any, Mapping

from .args import U32_END
from .errors import HFError


def flag(spec: Mapping, key: str, default: bool, where: str, error: type = HFError) -> bool:
    """spec[key] as a JSON boolean (default when absent or null)."""
    v = spec.get(key)
    if v is None:
        return default
    if type(v) is not bool:
        raise error(f"{where}: {key} must be true or false, got {v!r}")
    return v


def u32(v: Any, where: str, error: type = HFError) -> int:
    """v as a JSON integer in [0, 2**32) (a token id, a type id)."""
    if type(v) is not int or not 0 <= v < U32_END:
        raise error(f"{where} must be an integer in [0, 2**32), got {v!r}")
    return v


def string(v: Any, where: str, error: type = HFError) -> str:
    """v as a JSON string."""
    if not isinstance(v, str):
        raise error(f"{where} must be a string, got {v!r}")
    return v


def items(v: Any, where: str, error: type = HFError) -> list:
    """v as a JSON array."""
    if not isinstance(v, list):
        raise error(f"{where} must be a list, got {v!r}")
    return v
