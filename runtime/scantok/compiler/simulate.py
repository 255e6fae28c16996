"""A reference interpreter of the compiler's DFA, in Python.

It walks the same tables the C engine walks (before layout), with findall semantics, so
the compiler can be tested against the `regex` oracle on arbitrary patterns without
building C; the C engine is then tested against the same oracle on the shipped patterns.
"""
from __future__ import annotations

from bisect import bisect_right

from .determinize import DFA


class Simulator:
    def __init__(self, dfa: DFA):
        self.dfa = dfa
        pairs = sorted((lo, hi, cid) for cid, cs in enumerate(dfa.classes) for lo, hi in cs.ranges)
        self._los = [p[0] for p in pairs]
        self._pairs = pairs

    def class_of(self, ch: str) -> int:
        i = bisect_right(self._los, ord(ch)) - 1
        return self._pairs[i][2]

    def spans(self, text: str) -> list[tuple[int, int]]:
        dfa, out, start, n = self.dfa, [], 0, len(text)
        while start < n:
            s, last, p = dfa.start, None, start
            while True:
                if p == n:
                    if dfa.eoi[s]:
                        last = n
                    break
                s, match_before = dfa.trans[s][self.class_of(text[p])]
                if match_before:
                    last = p
                if s == dfa.dead:
                    break
                p += 1
            if last is None:
                start += 1  # nothing starts here: findall moves on one character
            else:
                out.append((start, last))
                start = last
        return out

    def findall(self, text: str) -> list[str]:
        return [text[a:b] for a, b in self.spans(text)]
