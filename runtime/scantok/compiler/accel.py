"""Stage 5b: find the states worth a SIMD prefilter.

A state that loops to itself on a set of ASCII bytes (letters inside a word, spaces in an
indent) can skip a run of those bytes in one vector compare instead of one table step per
byte.  The prefilter tests at most three byte ranges; any subset of the loop set is
correct (the step loop resumes where the skip stops), so we keep the three largest.
"""
from __future__ import annotations

from dataclasses import dataclass

MAX_RANGES = 3


@dataclass
class Accel:
    state: int
    ranges: list[tuple[int, int]]  # inclusive byte ranges
    match: bool  # the self-loop transition marks a match before each byte

    def bitmap(self) -> tuple[int, int]:
        bits = 0
        for lo, hi in self.ranges:
            for b in range(lo, hi + 1):
                bits |= 1 << b
        return bits & (2**64 - 1), bits >> 64


def _runs(byte_values: list[int]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for b in sorted(byte_values):
        if runs and runs[-1][1] == b - 1:
            runs[-1] = (runs[-1][0], b)
        else:
            runs.append((b, b))
    return runs


def find_accelerators(trans, ascii_class: list[int], dead: int) -> list[Accel]:
    found = []
    for s, row in enumerate(trans):
        if s == dead:
            continue
        loops: dict[bool, list[int]] = {False: [], True: []}
        for b in range(128):
            nxt, mb = row[ascii_class[b]]
            if nxt == s:
                loops[mb].append(b)
        match = len(loops[True]) > len(loops[False])
        if not loops[match]:
            continue
        runs = sorted(_runs(loops[match]), key=lambda r: (r[0] - r[1], r[0]))[:MAX_RANGES]
        found.append(Accel(state=s, ranges=sorted(runs), match=match))
    return found
