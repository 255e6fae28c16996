"""Stages 0 and 5: the alphabet of code-point classes, and the tables that map to it.

Before determinising, the code points are partitioned by every set the NFA tests, so
the DFA steps on a few dozen classes instead of 1.1M code points.  After minimising,
classes whose transition columns are identical are merged, and the final map is laid
out as a direct ASCII table plus a two-stage table for the rest of Unicode, which is
then checked against the partition for every code point.
"""
from __future__ import annotations

from dataclasses import dataclass

from .charset import CharSet, MAX_CODE_POINT

BLOCK_SHIFT = 8
BLOCK_SIZE = 1 << BLOCK_SHIFT


def partition(sets: list[CharSet]) -> list[CharSet]:
    """The coarsest partition of all code points that no set in `sets` splits.

    Class 0 always contains U+0000; classes are numbered by their lowest code point.
    """
    bounds = {0, MAX_CODE_POINT + 1}
    for s in sets:
        for lo, hi in s.ranges:
            bounds.add(lo)
            bounds.add(hi + 1)
    edges = sorted(bounds)
    index = {e: k for k, e in enumerate(edges)}
    # Each range of a set covers whole elementary intervals: set its bit on exactly those.
    signature = [0] * (len(edges) - 1)
    for bit, s in enumerate(sets):
        mask = 1 << bit
        for lo, hi in s.ranges:
            for k in range(index[lo], index[hi + 1]):
                signature[k] |= mask
    groups: dict[int, list[tuple[int, int]]] = {}
    for k, sig in enumerate(signature):
        groups.setdefault(sig, []).append((edges[k], edges[k + 1] - 1))
    return [CharSet(r) for r in groups.values()]


def merge_columns(columns: list[tuple]) -> tuple[list[int], int]:
    """Map each class to the index of the first class with an identical column."""
    first: dict[tuple, int] = {}
    remap = []
    for col in columns:
        remap.append(first.setdefault(col, len(first)))
    return remap, len(first)


@dataclass
class ClassTable:
    ascii: list[int]  # 128 entries
    stage1: list[int]  # (MAX_CODE_POINT + 1) >> BLOCK_SHIFT block indices
    stage2: list[int]  # concatenated blocks of BLOCK_SIZE class ids
    nclasses: int

    def lookup(self, cp: int) -> int:
        if cp < 128:
            return self.ascii[cp]
        return self.stage2[self.stage1[cp >> BLOCK_SHIFT] * BLOCK_SIZE + (cp & (BLOCK_SIZE - 1))]


def class_table(classes: list[CharSet], nclasses: int) -> ClassTable:
    """Lay out `classes` (class id → code points) as lookup tables, verified exhaustively."""
    if nclasses > 256:
        raise ValueError(f"{nclasses} classes do not fit the one-byte class table")
    flat = bytearray(MAX_CODE_POINT + 1)
    for cid, cs in enumerate(classes):
        for lo, hi in cs.ranges:
            flat[lo:hi + 1] = bytes([cid]) * (hi - lo + 1)
    blocks: dict[bytes, int] = {}
    stage1 = []
    for b in range(0, MAX_CODE_POINT + 1, BLOCK_SIZE):
        stage1.append(blocks.setdefault(bytes(flat[b:b + BLOCK_SIZE]), len(blocks)))
    stage2 = [c for block in blocks for c in block]
    table = ClassTable(list(flat[:128]), stage1, stage2, nclasses)
    # Check every code point, not a sample: the tables are what the scanner trusts.
    s2 = bytes(stage2)
    rebuilt = b"".join(s2[i * BLOCK_SIZE:(i + 1) * BLOCK_SIZE] for i in stage1)
    if rebuilt != bytes(flat) or bytes(table.ascii) != bytes(flat[:128]):
        raise AssertionError("class table does not reproduce the partition")
    return table
