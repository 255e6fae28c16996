"""Minimising a failing input for the fuzz campaigns (tests/fuzz_*.py): greedy delta
debugging over a list."""
from __future__ import annotations

import time
from typing import Callable, Sequence, TypeVar

T = TypeVar("T")


def ddmin(items: Sequence[T], fails: Callable[[list[T]], bool], deadline: float | None = None) -> list[T]:
    """items with as many elements dropped as keep fails() true: chunks of half the list, then
    ever smaller ones (until time.monotonic() passes deadline, if given)."""
    items = list(items)
    chunk = max(1, len(items) // 2)

    def in_time() -> bool:
        return deadline is None or time.monotonic() < deadline

    while chunk >= 1 and in_time():
        i, changed = 0, False
        while i < len(items) and in_time():
            cand = items[:i] + items[i + chunk:]
            if fails(cand):
                items, changed = cand, True
            else:
                i += chunk
        if not changed:
            chunk //= 2
    return items
