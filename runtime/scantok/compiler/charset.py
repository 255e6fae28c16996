"""Sets of code points as sorted, disjoint, non-adjacent inclusive ranges.

Every stage of the compiler speaks in these: the UCD reader produces them, the parser
combines them, the NFA labels its edges with them, and the class stage partitions them.
"""
from __future__ import annotations

from bisect import bisect_right
from typing import Iterable

MAX_CODE_POINT = 0x10FFFF


class CharSet:
    __slots__ = ("ranges", "_hash")

    def __init__(self, ranges: Iterable[tuple[int, int]] = ()):
        merged: list[tuple[int, int]] = []
        for lo, hi in sorted(ranges):
            if lo > hi:
                continue
            if merged and lo <= merged[-1][1] + 1:
                if hi > merged[-1][1]:
                    merged[-1] = (merged[-1][0], hi)
            else:
                merged.append((lo, hi))
        self.ranges: tuple[tuple[int, int], ...] = tuple(merged)
        self._hash = hash(self.ranges)

    @classmethod
    def of(cls, *code_points: int) -> "CharSet":
        return cls((c, c) for c in code_points)

    @classmethod
    def full(cls) -> "CharSet":
        return cls([(0, MAX_CODE_POINT)])

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CharSet) and self.ranges == other.ranges

    def __hash__(self) -> int:
        return self._hash

    def __bool__(self) -> bool:
        return bool(self.ranges)

    def __len__(self) -> int:
        return sum(hi - lo + 1 for lo, hi in self.ranges)

    def __contains__(self, cp: int) -> bool:
        i = bisect_right(self.ranges, (cp, MAX_CODE_POINT + 1)) - 1
        return i >= 0 and self.ranges[i][0] <= cp <= self.ranges[i][1]

    def __iter__(self):
        for lo, hi in self.ranges:
            yield from range(lo, hi + 1)

    def __repr__(self) -> str:
        shown = ", ".join(f"{lo:X}-{hi:X}" if lo != hi else f"{lo:X}" for lo, hi in self.ranges[:6])
        more = "" if len(self.ranges) <= 6 else f", ... ({len(self.ranges)} ranges)"
        return f"CharSet({shown}{more})"

    def union(self, *others: "CharSet") -> "CharSet":
        return CharSet([r for s in (self, *others) for r in s.ranges])

    __or__ = union

    def complement(self) -> "CharSet":
        out, nxt = [], 0
        for lo, hi in self.ranges:
            if lo > nxt:
                out.append((nxt, lo - 1))
            nxt = hi + 1
        if nxt <= MAX_CODE_POINT:
            out.append((nxt, MAX_CODE_POINT))
        return CharSet(out)

    def intersection(self, other: "CharSet") -> "CharSet":
        out, i, j = [], 0, 0
        a, b = self.ranges, other.ranges
        while i < len(a) and j < len(b):
            lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
            if lo <= hi:
                out.append((lo, hi))
            if a[i][1] < b[j][1]:
                i += 1
            else:
                j += 1
        return CharSet(out)

    __and__ = intersection

    def difference(self, other: "CharSet") -> "CharSet":
        return self.intersection(other.complement())

    __sub__ = difference
