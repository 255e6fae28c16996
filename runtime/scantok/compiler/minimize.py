"""Stage 4: merge DFA states that no input can tell apart (Moore's partition refinement).

Two states are equivalent when they agree on `eoi` and, for every class, on the
match-before flag and the block of the successor.  The dead state stays state 0 and the
start state becomes state 1, which the emitted step loop relies on.
"""
from __future__ import annotations

from .determinize import DFA


def minimize(dfa: DFA) -> DFA:
    n = len(dfa.trans)
    block = [(0 if s == dfa.dead else 1 + int(dfa.eoi[s])) for s in range(n)]
    while True:
        signatures: dict[tuple, int] = {}
        new_block = []
        for s in range(n):
            sig = (block[s], dfa.eoi[s], tuple((block[t], mb) for t, mb in dfa.trans[s]))
            new_block.append(signatures.setdefault(sig, len(signatures)))
        stable = len(signatures) == len(set(block))
        block = new_block
        if stable:
            break
    # Renumber: dead → 0, start → 1, then in order of first appearance.
    renum: dict[int, int] = {block[dfa.dead]: 0}
    renum.setdefault(block[dfa.start], 1)
    for s in range(n):
        renum.setdefault(block[s], len(renum))
    size = len(renum)
    trans: list = [None] * size
    eoi = [False] * size
    for s in range(n):
        b = renum[block[s]]
        if trans[b] is None:
            trans[b] = [(renum[block[t]], mb) for t, mb in dfa.trans[s]]
            eoi[b] = dfa.eoi[s]
    return DFA(trans=trans, eoi=eoi, start=1, dead=0, classes=dfa.classes)
