"""Truncation, as tokenizers' ``utils/truncation.rs`` (0.23.3): the parameters (from a
tokenizer.json's ``"truncation"`` or :meth:`Tokenizer.enable_truncation`) and how a sequence
and its pair are cut to ``max_length`` tokens before the post-processor adds its own."""
from __future__ import annotations

from typing import Any, Mapping

from .args import USIZE_END, usize
from .encoding import truncate
from .errors import HFError

__all__ = ["Truncation", "truncate_pair"]

_STRATEGIES = {"longest_first": "LongestFirst", "only_first": "OnlyFirst", "only_second": "OnlySecond"}
_DIRECTIONS = {"left": "Left", "right": "Right"}


class Truncation:
    """max_length, stride, strategy ("longest_first", "only_first", "only_second") and
    direction ("left", "right")."""

    __slots__ = ("max_length", "stride", "strategy", "direction")

    def __init__(self, max_length: int, stride: int = 0, strategy: str = "longest_first", direction: str = "right"):
        self.max_length = usize(max_length, "max_length")
        self.stride = usize(stride, "stride")
        if strategy not in _STRATEGIES:
            raise ValueError(f"Unknown `strategy`: `{strategy}`. Use one of `longest_first`, `only_first`, or "
                             "`only_second`")
        if direction not in _DIRECTIONS:
            raise ValueError(f"Unknown `direction`: `{direction}`. Use one of `left` or `right`.")
        self.strategy = strategy
        self.direction = direction

    @classmethod
    def from_json(cls, spec: Any, where: str = "truncation") -> "Truncation | None":
        """The tokenizer.json form ({"direction": "Right", "max_length": 512, "strategy":
        "LongestFirst", "stride": 0}; direction may be absent), or None for null."""
        if spec is None:
            return None
        if not isinstance(spec, Mapping):
            raise HFError(f"{where}: expected an object or null")
        strategies = {v: k for k, v in _STRATEGIES.items()}
        directions = {v: k for k, v in _DIRECTIONS.items()}
        for key in ("max_length", "strategy", "stride"):
            if key not in spec:
                raise HFError(f"{where}: missing {key!r}")
        for key in ("max_length", "stride"):
            v = spec[key]
            if type(v) is not int or not 0 <= v < USIZE_END:
                raise HFError(f"{where}.{key}: expected an unsigned integer, got {v!r}")
        if spec["strategy"] not in strategies:
            raise HFError(f"{where}.strategy: expected one of {sorted(strategies)}, got {spec['strategy']!r}")
        direction = spec.get("direction", "Right")
        if direction not in directions:
            raise HFError(f"{where}.direction: expected 'Left' or 'Right', got {direction!r}")
        return cls(spec["max_length"], spec["stride"], strategies[spec["strategy"]], directions[direction])

    def to_json(self) -> dict:
        return {"direction": _DIRECTIONS[self.direction], "max_length": self.max_length,
                "strategy": _STRATEGIES[self.strategy], "stride": self.stride}

    def as_dict(self) -> dict:
        """The ``Tokenizer.truncation`` dict, as tokenizers gives it."""
        return {"max_length": self.max_length, "stride": self.stride, "strategy": self.strategy,
                "direction": self.direction}


def truncate_pair(enc: dict, pair: dict | None, max_length: int, t: Truncation) -> None:
    """Cuts enc and pair (records; pair may be None) to max_length tokens together, in place,
    as tokenizers' truncate_encodings (max_length may exceed t.max_length: the caller's usize
    arithmetic)."""
    stride, direction = t.stride, t.direction
    if max_length == 0:
        truncate(enc, 0, stride, direction)
        if pair is not None:
            truncate(pair, 0, stride, direction)
        return
    total = len(enc["ids"]) + (len(pair["ids"]) if pair is not None else 0)
    if total <= max_length:
        return
    to_remove = total - max_length
    if t.strategy == "longest_first":
        if pair is None:
            truncate(enc, total - to_remove, stride, direction)
            return
        n1, n2 = len(enc["ids"]), len(pair["ids"])
        swap = n1 > n2
        if swap:
            n1, n2 = n2, n1
        n2 = n1 if n1 > max_length else max(n1, max_length - n1)
        if n1 + n2 > max_length:
            n1 = max_length // 2
            n2 = n1 + max_length % 2
        if swap:
            n1, n2 = n2, n1
        truncate(enc, n1, stride, direction)
        truncate(pair, n2, stride, direction)
        return
    if t.strategy == "only_first":
        target = enc
    elif pair is not None:
        target = pair
    else:
        raise HFError("Truncation error: Second sequence not provided")
    n = len(target["ids"])
    if n <= to_remove:
        raise HFError("Truncation error: Sequence to truncate too short to respect the provided max_length")
    truncate(target, n - to_remove, stride, direction)
