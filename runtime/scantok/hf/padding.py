"""Padding, as tokenizers' ``utils/padding.rs`` (0.23.3): the parameters (from a
tokenizer.json's ``"padding"`` or :meth:`Tokenizer.enable_padding`) and how encodings are
padded to a fixed length or to the longest of a batch."""
from __future__ import annotations

from typing import Any, Mapping

from .args import U32_END, u32, usize
from .encoding import pad
from .errors import HFError

__all__ = ["Padding", "pad_encodings", "pad_records"]

_DIRECTIONS = {"left": "Left", "right": "Right"}


class Padding:
    """length (None: the longest of the batch), pad_to_multiple_of, pad_id, pad_type_id,
    pad_token and direction ("left", "right")."""

    __slots__ = ("length", "pad_to_multiple_of", "pad_id", "pad_type_id", "pad_token", "direction")

    def __init__(self, *, direction: str = "right", pad_id: int = 0, pad_type_id: int = 0, pad_token: str = "[PAD]",
                 length: int | None = None, pad_to_multiple_of: int | None = None):
        if not isinstance(direction, str):
            raise TypeError(f"direction must be a str, got {type(direction).__name__}")
        if direction not in _DIRECTIONS:
            raise ValueError(f"Unknown `direction`: `{direction}`. Use one of `left` or `right`")
        if not isinstance(pad_token, str):
            raise TypeError(f"pad_token must be a str, got {type(pad_token).__name__}")
        self.direction = direction
        self.pad_id = u32(pad_id, "pad_id")
        self.pad_type_id = u32(pad_type_id, "pad_type_id")
        self.pad_token = pad_token
        self.length = None if length is None else usize(length, "length")
        self.pad_to_multiple_of = None if pad_to_multiple_of is None else usize(pad_to_multiple_of, "pad_to_multiple_of")

    @classmethod
    def from_json(cls, spec: Any, where: str = "padding") -> "Padding | None":
        """The tokenizer.json form ({"strategy": "BatchLongest" or {"Fixed": n}, "direction":
        "Right", "pad_to_multiple_of": null, "pad_id": 0, "pad_type_id": 0, "pad_token":
        "[PAD]"}), or None for null."""
        if spec is None:
            return None
        if not isinstance(spec, Mapping):
            raise HFError(f"{where}: expected an object or null")
        for key in ("strategy", "direction", "pad_to_multiple_of", "pad_id", "pad_type_id", "pad_token"):
            if key not in spec:
                raise HFError(f"{where}: missing {key!r}")
        strategy = spec["strategy"]
        if strategy == "BatchLongest":
            length = None
        elif (isinstance(strategy, Mapping) and list(strategy) == ["Fixed"] and type(strategy["Fixed"]) is int
              and strategy["Fixed"] >= 0):
            length = strategy["Fixed"]
        else:
            raise HFError(f"{where}.strategy: expected \"BatchLongest\" or {{\"Fixed\": n}}, got {strategy!r}")
        directions = {v: k for k, v in _DIRECTIONS.items()}
        if spec["direction"] not in directions:
            raise HFError(f"{where}.direction: expected 'Left' or 'Right', got {spec['direction']!r}")
        multiple = spec["pad_to_multiple_of"]
        for key, v in (("pad_id", spec["pad_id"]), ("pad_type_id", spec["pad_type_id"]),
                       ("pad_to_multiple_of", 0 if multiple is None else multiple)):
            if type(v) is not int or v < 0 or (key != "pad_to_multiple_of" and v >= U32_END):
                raise HFError(f"{where}.{key}: expected an unsigned integer, got {v!r}")
        if not isinstance(spec["pad_token"], str):
            raise HFError(f"{where}.pad_token: expected a string")
        try:
            return cls(direction=directions[spec["direction"]], pad_id=spec["pad_id"], pad_type_id=spec["pad_type_id"],
                       pad_token=spec["pad_token"], length=length, pad_to_multiple_of=multiple)
        except (TypeError, ValueError, OverflowError) as e:
            raise HFError(f"{where}: {e}") from None

    def to_json(self) -> dict:
        return {"strategy": "BatchLongest" if self.length is None else {"Fixed": self.length},
                "direction": _DIRECTIONS[self.direction], "pad_to_multiple_of": self.pad_to_multiple_of,
                "pad_id": self.pad_id, "pad_type_id": self.pad_type_id, "pad_token": self.pad_token}

    def as_dict(self) -> dict:
        """The ``Tokenizer.padding`` dict, as tokenizers gives it."""
        return {"length": self.length, "pad_to_multiple_of": self.pad_to_multiple_of, "pad_id": self.pad_id,
                "pad_token": self.pad_token, "pad_type_id": self.pad_type_id, "direction": self.direction}

    def target(self, recs: list) -> int:
        """The length to pad recs to: the fixed length or the longest, rounded up to a multiple."""
        return self.target_of([len(r["ids"]) for r in recs])

    def target_of(self, lengths: list) -> int:
        """The length to pad encodings of these lengths to (at least one length)."""
        n = self.length if self.length is not None else max(lengths)
        m = self.pad_to_multiple_of
        if m and n % m:
            n += m - n % m
        return n


def pad_encodings(encs: list, p: Padding) -> None:
    """Pads new Encodings (lazy ones by a note) as pad_records pads records."""
    if not encs:
        return
    n = p.target_of([len(e) for e in encs])
    for e in encs:
        e._padded(n, p)


def pad_records(recs: list, p: Padding) -> None:
    """Pads each record (and its overflowing parts) as tokenizers' pad_encodings."""
    if not recs:
        return
    n = p.target(recs)
    for r in recs:
        pad(r, n, p.pad_id, p.pad_type_id, p.pad_token, p.direction)
