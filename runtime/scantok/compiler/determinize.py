"""Stage 3: NFA → leftmost-first DFA with one-character lookahead.

A DFA state is the priority-ordered tuple of NFA "leaf" threads alive at a position:
"char" threads waiting to consume, "look" threads waiting to test the next character,
and at most one "match" thread, always last, because a match drops every thread of
lower priority (regex-automata's leftmost-first determinisation).

Stepping a state on character class c walks its threads in priority order:
- a char thread whose set holds c continues at the next position;
- a look thread tests c; if it holds, the threads it leads to are expanded at *this*
  position and walked on c in its place (this is how X?+ or \\s+(?!\\S) resolve);
- a match thread, reached directly or through a look, means a match ends before c:
  the transition is marked `match_before` and lower-priority threads are dropped.
A match reached in the next position's closure also drops all later threads.
Each state also records whether a match ends at end of text (`eoi`), where (?!C) and
$ hold and (?=C) fails.
"""
from __future__ import annotations

from dataclasses import dataclass

from .charset import CharSet
from .classes import partition
from .nfa import NFA

STATE_LIMIT = 20000


class DFAError(ValueError):
    pass


@dataclass
class DFA:
    trans: list[list[tuple[int, bool]]]  # [state][class] -> (next state, match ends before this char)
    eoi: list[bool]  # a match ends at end of text
    start: int
    dead: int
    classes: list[CharSet]  # class id -> code points

    @property
    def nclasses(self) -> int:
        return len(self.classes)


class _Stop(Exception):
    """A match was secured: every lower-priority thread is dropped."""


def determinize(nfa: NFA) -> DFA:
    states = nfa.states
    classes = partition(nfa.sets)
    members = [[cls.ranges[0][0] in s for cls in classes] for s in nfa.sets]

    def closure(q: int, out: list[int], seen: set[int]) -> bool:
        """Append q's leaf threads to `out` in priority order; True if a match was reached.
        Depth first; `path` holds the splits being explored, so a loop's "back" state knows
        whether its head was entered in this closure (the iteration consumed nothing: leave
        the loop) or before the last character (iterate again)."""
        stack: list = [q]
        path: set[int] = set()
        while stack:
            q = stack.pop()
            if isinstance(q, tuple):  # ("done", split): its subtree is explored
                path.discard(q[1])
                continue
            st = states[q]
            if st.kind == "back":
                stack.append(st.next[1] if st.next[0] in path else st.next[0])
                continue
            if q in seen:
                continue
            seen.add(q)
            if st.kind in ("eps", "split"):
                path.add(q)
                stack.append(("done", q))
                stack.extend(reversed(st.next))
            else:
                out.append(q)
                if st.kind == "match":
                    return True
        return False

    def look_holds(st, c) -> bool:
        if st.look == "end":
            return False
        inside = c is not None and members[st.set][c]
        return inside if st.look == "in" else not inside

    def step(items: tuple[int, ...], c: int) -> tuple[tuple[int, ...], bool]:
        nxt: list[int] = []
        seen_next: set[int] = set()
        seen_here: set[int] = set()
        match_before = False

        def walk(threads) -> None:
            nonlocal match_before
            for q in threads:
                if q in seen_here:
                    continue
                seen_here.add(q)
                st = states[q]
                if st.kind == "char":
                    if members[st.set][c] and closure(st.next[0], nxt, seen_next):
                        raise _Stop
                elif st.kind == "look":
                    if look_holds(st, c):
                        expanded: list[int] = []
                        closure(st.next[0], expanded, set())
                        walk(expanded)
                elif st.kind == "match":
                    match_before = True
                    raise _Stop

        try:
            walk(items)
        except _Stop:
            pass
        return tuple(nxt), match_before

    def at_end(items, seen: set[int]) -> bool:
        for q in items:
            if q in seen:
                continue
            seen.add(q)
            st = states[q]
            if st.kind == "match":
                return True
            if st.kind == "look" and st.look != "in":  # (?!C) and $ hold at end of text
                expanded: list[int] = []
                closure(st.next[0], expanded, set())
                if at_end(expanded, seen):
                    return True
        return False

    start_items: list[int] = []
    closure(nfa.start, start_items, set())
    index: dict[tuple[int, ...], int] = {(): 0, tuple(start_items): 1}
    order = [(), tuple(start_items)]
    trans: list[list[tuple[int, bool]]] = []
    i = 0
    while i < len(order):
        items = order[i]
        row = []
        for c in range(len(classes)):
            target, mb = step(items, c)
            if target not in index:
                if len(order) >= STATE_LIMIT:
                    raise DFAError(f"pattern needs more than {STATE_LIMIT} DFA states")
                index[target] = len(order)
                order.append(target)
            row.append((index[target], mb))
        trans.append(row)
        i += 1
    eoi = [at_end(items, set()) for items in order]
    return DFA(trans=trans, eoi=eoi, start=1, dead=0, classes=classes)
