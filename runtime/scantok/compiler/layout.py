"""Stage 6: lay the minimised DFA out as the engine's tables (struct scantok_dfa).

The same layout is rendered into C by `make gen` (gen/emit.py) for the shipped scanners and
handed to the C engine as arrays by ``scantok.compile`` at run time, so both kinds of
scanner run the identical tables. Equal class columns are merged, transitions are encoded
as row offsets with T_* flags, a pair block (two characters per step) is added when
small enough, and states with an ASCII self-loop get a SIMD prefilter.
"""
from __future__ import annotations

from .accel import find_accelerators
from .charset import CharSet
from .classes import class_table, merge_columns
from .determinize import DFA

T_MATCH, T_SPECIAL, T_ACCEL = 1, 2, 4
MAX_ACCELERATORS = 127  # the info byte holds (index + 1) << 1
# Flags of a two-character ASCII step (the pair block at the head of each row).
# bits 0-1: pieces that end in the pair (0-2); P_START1: the last one ends at i + 1 (else i);
# P_EMIT1: the first one ends at i + 1; P_MATCH1: a match ends at i + 1 (before c1);
# P_REWIND: the threads die in the pair without a match: the piece ends at i, or with
# P_REWIND_PREV at i - 1 if the previous pair's P_MATCH1 says a match ends there;
# P_SLOW: the general path takes c0.
P_START1, P_MATCH1, P_REWIND, P_EMIT1, P_REWIND_PREV, P_SLOW = 4, 8, 16, 32, 64, 128
MAX_PAIR_CLASSES = 32        # pairs are indexed by class0 * nclasses + class1
MAX_PAIR_ENTRIES = 1 << 15   # states * nclasses**2: keeps the pair block cache-friendly

def layout(dfa: DFA) -> dict:
    """Merge equal class columns, encode transitions and pick accelerators."""
    columns = [tuple(row[c] for row in dfa.trans) for c in range(dfa.nclasses)]
    remap, nclasses = merge_columns(columns)
    merged_sets: list = [[] for _ in range(nclasses)]
    for raw, new in enumerate(remap):
        merged_sets[new].append(dfa.classes[raw])
    classes = [CharSet().union(*sets) for sets in merged_sets]
    rows = [[None] * nclasses for _ in dfa.trans]
    for s, row in enumerate(dfa.trans):
        for raw, new in enumerate(remap):
            rows[s][new] = row[raw]
    table = class_table(classes, nclasses)
    accels = find_accelerators(rows, table.ascii, dfa.dead)
    accel_of = {a.state: i for i, a in enumerate(accels)}

    if len(accels) > MAX_ACCELERATORS:
        accels = accels[:MAX_ACCELERATORS]
        accel_of = {a.state: i for i, a in enumerate(accels)}
    pair = (nclasses <= MAX_PAIR_CLASSES and len(rows) * nclasses * nclasses <= MAX_PAIR_ENTRIES)
    P = nclasses * nclasses if pair else 0
    stride = P + nclasses + 1
    start = dfa.start

    def single(s: int, cls: int):
        """One step as the pair block sees it: (kind, next state, match flag) with kind
        "step", "emit" (piece boundary; the next state is the start state's), "die" (every
        thread died without a match: rewind to the last match) or None (the character
        starts nothing: left to the general path)."""
        nxt, mb = rows[s][cls]
        if nxt != dfa.dead:
            return "step", nxt, mb
        if not mb:
            return "die", 0, False
        nxt, _ = rows[start][cls]
        if nxt == dfa.dead:
            return None, 0, False
        return "emit", nxt, False

    def pair_entry(s: int, c0: int, c1: int) -> tuple[int, int]:
        """The pair step from state s over classes c0 c1 at positions i, i + 1."""
        if s == dfa.dead:
            return 0, P_SLOW
        k0, s1, m0 = single(s, c0)
        if k0 is None:
            return 0, P_SLOW
        if k0 == "die":  # the last match ends at i - 1 if the previous step matched
            return start * stride, P_REWIND | P_REWIND_PREV
        k1, s2, m1 = single(s1, c1)
        if k1 is None or (k1 == "die" and k0 == "emit"):
            return 0, P_SLOW
        if k1 == "die" and not m0:  # the last match may end at i - 1
            return start * stride, P_REWIND | P_REWIND_PREV
        if k1 == "die":
            # The last match ends at i (c0 matched): a piece ends there and the next one
            # starts with c0 c1, from the start state.
            j0, t1, _ = single(start, c0)
            j1, t2, n1 = single(t1, c1) if j0 == "step" else (None, 0, False)
            if j1 not in ("step", "emit"):
                return start * stride, P_REWIND
            f = P_MATCH1 if (j1 == "step" and n1) else 0
            f |= (2 | P_START1) if j1 == "emit" else 1
            return t2 * stride, f
        f = P_MATCH1 if (k1 == "step" and m1) else 0
        if k0 == "emit" and k1 == "emit":
            f |= 2 | P_START1
        elif k0 == "emit":
            f |= 1
        elif k1 == "emit":
            f |= 1 | P_EMIT1 | P_START1
        return s2 * stride, f

    def encode(nxt: int, mb: bool, cls: int) -> tuple[int, int]:
        flags = T_MATCH if mb else 0
        if nxt == dfa.dead:
            flags |= T_SPECIAL
            if mb:  # piece boundary: continue straight into the next piece's first step
                nxt, _ = rows[dfa.start][cls]
        if nxt in accel_of and nxt != dfa.dead:
            flags |= T_ACCEL
        return nxt * stride, flags

    nexts, flags = [], []
    for s, row in enumerate(rows):
        if pair:
            for c0 in range(nclasses):
                for c1 in range(nclasses):
                    # every class: the pair loop also steps two non-ASCII characters at once
                    n, f = pair_entry(s, c0, c1)
                    nexts.append(n)
                    flags.append(f)
        for cls, (nxt, mb) in enumerate(row):
            n, f = encode(nxt, mb, cls)
            nexts.append(n)
            flags.append(f)
        nexts.append(0)
        flags.append(((accel_of[s] + 1) << 1 if s in accel_of else 0) | int(dfa.eoi[s]))
    if max(nexts) >= 2**32:
        raise ValueError("transition table too large for 32-bit entries")
    return dict(nclasses=nclasses, table=table, next=nexts, flags=flags, accels=accels,
                start=dfa.start * stride, nstates=len(rows), pair=P,
                ascii_x=[c * nclasses for c in table.ascii] if pair else [0] * 128)
