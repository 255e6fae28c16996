"""Stage 2: syntax tree → Thompson NFA with ordered (prioritised) splits.

Split order is match priority: the determiniser explores successors in list order, which
is what makes the resulting DFA leftmost-first (backtracking order) rather than POSIX.
Possessive quantifiers on a one-character operand are rewritten here to greedy ones
followed by a one-character lookahead, which is exactly what "never give back" means.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from .charset import CharSet
from .parse import Alt, Chars, Look, Node, Repeat, Seq


@dataclass
class State:
    kind: str  # "char" | "split" | "eps" | "look" | "match" | "back"
    # "back" ends an unbounded loop's body: next = [loop head, loop exit] (see build)
    set: Optional[int] = None  # index into NFA.sets for "char" and "look"
    look: Optional[str] = None  # "in" | "not_in" | "end"
    next: list[int] = field(default_factory=list)  # successors, in priority order


# Counted repetitions are expanded into copies of their body, and nested ones multiply:
# (?:x{1,1000}y){1,1000} is two million states (and gigabytes) before determinization starts.
NFA_LIMIT = 100_000


class NFA:
    def __init__(self) -> None:
        self.states: list[State] = []
        self.sets: list[CharSet] = []
        self._set_index: dict[CharSet, int] = {}
        self.start = -1
        # (head, end) of each unbounded loop: its back state and body are the ids in (head, end)
        self.loops: list[tuple[int, int]] = []

    def add(self, state: State) -> int:
        if len(self.states) >= NFA_LIMIT:
            raise ValueError(f"pattern expands to more than {NFA_LIMIT:,} NFA states (nested counted repetitions multiply)")
        self.states.append(state)
        return len(self.states) - 1

    def set_id(self, cs: CharSet) -> int:
        if cs not in self._set_index:
            self._set_index[cs] = len(self.sets)
            self.sets.append(cs)
        return self._set_index[cs]


def _expand_possessive(node: Repeat) -> Node:
    """X{m,n}+ on one-character X → X{m} then maximal extra copies, checked by (?!X)."""
    x = node.item
    stop = Look("not_in", x.set)
    head = [x] * node.min
    if node.max is None:
        return Seq((*head, Repeat(x, 0, None, "greedy"), stop))
    tail: Node = Seq(())
    for _ in range(node.max - node.min):
        tail = Alt((Seq((x, tail)), stop))
    return Seq((*head, tail))


def build(tree: Node) -> NFA:
    nfa = NFA()

    def compile_node(node: Node, nxt: int) -> int:
        """Return the entry state of `node`, whose exit continues at `nxt`."""
        if isinstance(node, Chars):
            return nfa.add(State("char", set=nfa.set_id(node.set), next=[nxt]))
        if isinstance(node, Look):
            sid = nfa.set_id(node.set) if node.set is not None else None
            return nfa.add(State("look", set=sid, look=node.kind, next=[nxt]))
        if isinstance(node, Seq):
            for item in reversed(node.items):
                nxt = compile_node(item, nxt)
            return nxt
        if isinstance(node, Alt):
            return nfa.add(State("split", next=[compile_node(x, nxt) for x in node.items]))
        if isinstance(node, Repeat):
            if node.mode == "possessive":
                return compile_node(_expand_possessive(node), nxt)
            lazy = node.mode == "lazy"
            if node.max is None:
                # The body returns through a "back" state: an iteration that matched nothing
                # ends the loop there (it goes on at the exit with the iteration's priority),
                # as backtracking engines do; a plain edge to the head would drop that thread.
                loop = nfa.add(State("split"))
                back = nfa.add(State("back", next=[loop, nxt]))
                body = compile_node(node.item, back)
                nfa.loops.append((loop, len(nfa.states)))
                nfa.states[loop].next = [nxt, body] if lazy else [body, nxt]
                entry = loop
            else:
                entry = nxt
                for _ in range(node.max - node.min):
                    body = compile_node(node.item, entry)
                    entry = nfa.add(State("split", next=[entry, body] if lazy else [body, entry]))
            for _ in range(node.min):
                entry = compile_node(node.item, entry)
            return entry
        raise TypeError(node)

    match = nfa.add(State("match"))
    nfa.start = compile_node(tree, match)
    return nfa
