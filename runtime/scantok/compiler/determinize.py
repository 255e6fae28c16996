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
# Threads stepped over the whole subset construction (DFA states x classes x threads a state
# holds): a bound on the time a pattern may take, as STATE_LIMIT bounds the size.  Counted
# repetitions nest into large NFAs whose few DFA states each hold thousands of threads:
# (?:[ab]{1,100}){1,100} ran 95 s, (?:x{1,1000}y){1,1000} did not finish.
WORK_LIMIT = 20_000_000


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

    # A thread is an NFA state plus the unbounded loops it entered with nothing consumed since
    # (its "fresh" loops): at a loop's "back" state that decides between leaving the loop (the
    # iteration matched nothing) and iterating again. It belongs to the thread, not to one
    # closure, because a pending lookahead carries it to the next position's closure. Only
    # loops enclosing the state matter, so a thread is the plain state id when none does,
    # and the DFA states of patterns without such loops are unchanged.
    loop_heads = {head for head, _ in nfa.loops}
    enclosing = [frozenset(head for head, end in nfa.loops if head < q < end)
                 for q in range(len(states))]
    no_loops: frozenset[int] = frozenset()

    def thread(q: int, fresh: frozenset[int]):
        fresh = fresh & enclosing[q]
        return (q, fresh) if fresh else q

    def unpack(item) -> tuple[int, frozenset[int]]:
        return (item, no_loops) if isinstance(item, int) else item

    def closure(item, out: list, seen: set) -> bool:
        """Append the leaf threads reachable from thread `item` without consuming to `out`,
        in priority order (depth first); True if a match was reached. `seen` holds threads
        already explored at this position: a later arrival has the same future and a lower
        priority. Char and match threads drop their fresh loops (consuming resets them)."""
        stack: list = [item]
        while stack:
            q, fresh = unpack(stack.pop())
            st = states[q]
            if st.kind == "back":
                head, after = st.next
                stack.append(thread(after, fresh) if head in fresh else thread(head, fresh))
                continue
            item = q if st.kind in ("char", "match") else thread(q, fresh)
            if item in seen:
                continue
            seen.add(item)
            if st.kind in ("eps", "split"):
                if q in loop_heads:
                    fresh = fresh | {q}
                stack.extend(thread(n, fresh) for n in reversed(st.next))
            else:
                out.append(item)
                if st.kind == "match":
                    return True
        return False

    def resolve(item, out: list) -> None:
        """Expand what a look thread leads to once its assertion holds, with its fresh loops."""
        q, fresh = unpack(item)
        closure(thread(states[q].next[0], fresh), out, set())

    def look_holds(st, c) -> bool:
        if st.look == "end":
            return False
        inside = c is not None and members[st.set][c]
        return inside if st.look == "in" else not inside

    def step(items: tuple, c: int) -> tuple[tuple, bool]:
        nxt: list = []
        seen_next: set = set()
        seen_here: set = set()
        match_before = False

        def walk(threads) -> None:
            nonlocal match_before
            for item in threads:
                if item in seen_here:
                    continue
                seen_here.add(item)
                st = states[unpack(item)[0]]
                if st.kind == "char":
                    if members[st.set][c] and closure(st.next[0], nxt, seen_next):
                        raise _Stop
                elif st.kind == "look":
                    if look_holds(st, c):
                        expanded: list = []
                        resolve(item, expanded)
                        walk(expanded)
                elif st.kind == "match":
                    match_before = True
                    raise _Stop

        try:
            walk(items)
        except _Stop:
            pass
        return tuple(nxt), match_before

    def at_end(items, seen: set) -> bool:
        for item in items:
            if item in seen:
                continue
            seen.add(item)
            st = states[unpack(item)[0]]
            if st.kind == "match":
                return True
            if st.kind == "look" and st.look != "in":  # (?!C) and $ hold at end of text
                expanded: list = []
                resolve(item, expanded)
                if at_end(expanded, seen):
                    return True
        return False

    start_items: list[int] = []
    closure(nfa.start, start_items, set())
    index: dict[tuple, int] = {(): 0, tuple(start_items): 1}
    order = [(), tuple(start_items)]
    trans: list[list[tuple[int, bool]]] = []
    i = work = 0
    while i < len(order):
        items = order[i]
        work += len(items) * len(classes)
        if work > WORK_LIMIT:
            raise DFAError(f"pattern too complex to compile: its subset construction passes {WORK_LIMIT:,} "
                           f"thread steps at {len(order)} DFA states (nested counted repetitions multiply)")
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
