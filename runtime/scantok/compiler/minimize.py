"""Stage 4: merge DFA states that no input can tell apart (Moore's partition refinement).

Two states are equivalent when they agree on `eoi` and, for every class, on the
match-before flag and the block of the successor.  The dead state stays state 0 and the
start state becomes state 1, which the emitted step loop relies on.
"""
from __future__ import annotations

from .determinize import DFA, DFAError

# Moore's rounds can be as many as the states (a chain, as counted repetitions make): each round
# reads every transition.  A bound on that work, as determinize bounds its own: the 10,002
# states of (?:[ab]{1,100}){1,100} took 88 s here.  [a-z]{1,1000} is ~2 M.
WORK_LIMIT = 10_000_000


def minimize(dfa: DFA) -> DFA:
    n = len(dfa.trans)
    block = [(0 if s == dfa.dead else 1 + int(dfa.eoi[s])) for s in range(n)]
    per_round = n * (len(dfa.classes) + 1)
    work = 0
    while True:
        work += per_round
        if work > WORK_LIMIT:
            raise DFAError(f"pattern too complex to compile: minimizing its {n} DFA states passes "
                           f"{WORK_LIMIT:,} steps (nested counted repetitions make long chains)")
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
