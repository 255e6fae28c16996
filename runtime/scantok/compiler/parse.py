"""Stage 1: pattern text → syntax tree, with every character set resolved against the UCD.

The accepted language is the subset that tokenizer pre-tokenizers use (see DESIGN.md).
Anything else raises PatternError naming the construct and its offset: a construct we
cannot reproduce exactly must never compile to something that merely looks right.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Union

from . import FLAVORS
from .charset import CharSet, MAX_CODE_POINT


class PatternError(ValueError):
    """The pattern is malformed or uses a construct outside the supported subset."""

    def __init__(self, message: str, pattern: str, offset: int):
        self.msg, self.pattern, self.offset = message, pattern, offset
        super().__init__(f"{message} at offset {offset} in pattern {pattern!r}")


# ---- syntax tree -------------------------------------------------------------------

@dataclass(frozen=True)
class Chars:
    """Consume one character from the set."""
    set: CharSet


@dataclass(frozen=True)
class Seq:
    items: tuple


@dataclass(frozen=True)
class Alt:
    """Alternatives in priority order (leftmost-first)."""
    items: tuple


@dataclass(frozen=True)
class Repeat:
    item: "Node"
    min: int
    max: Optional[int]  # None = unbounded
    mode: str  # "greedy" | "lazy" | "possessive"


@dataclass(frozen=True)
class Look:
    """A zero-width test of the next character.

    kind "in": the next character is in `set`; "not_in": the next character is not in
    `set`, or the text ends; "end": the text ends here.
    """
    kind: str
    set: Optional[CharSet] = None


Node = Union[Chars, Seq, Alt, Repeat, Look]

EMPTY = Seq(())

_SIMPLE_ESCAPES = {"n": 0x0A, "r": 0x0D, "t": 0x09, "f": 0x0C, "v": 0x0B, "a": 0x07, "e": 0x1B}
_UNSUPPORTED_ESCAPES = {
    "b": "word boundary \\b", "B": "non-boundary \\B", "A": "start anchor \\A", "G": "\\G anchor",
    "K": "\\K", "X": "grapheme cluster \\X", "R": "\\R", "N": "\\N", "h": "\\h", "H": "\\H",
    "m": "word-start \\m", "M": "word-end \\M", "L": "named list \\L", "g": "group reference \\g",
    "k": "backreference \\k",
}
_QUANTIFIER_LIMIT = 1000
_COUNTED = re.compile(r"\{(\d*)(?:,(\d*))?\}")


# Oniguruma as HuggingFace tokenizers 0.23.3 runs it (Ruby syntax; measured every code point
# against tokenizers' Split): \w outside a class also holds U+00B2 U+00B3 U+00B9 U+00BC..U+00BE
# (its Latin-1 ctype table) and, in and out of classes, lacks Join_Control U+200C U+200D;
# \h is an ASCII hex digit, as is \p{XDigit}; \p{ASCII} exists.
_ONIG_W_EXTRA = CharSet([(0xB2, 0xB3), (0xB9, 0xB9), (0xBC, 0xBE)])
_ONIG_W_MINUS = CharSet([(0x200C, 0x200D)])
_ASCII_HEX = CharSet([(0x30, 0x39), (0x41, 0x46), (0x61, 0x66)])


class _Parser:
    def __init__(self, pattern: str, ucd, flavor: str = "regex"):
        self.p, self.ucd, self.i = pattern, ucd, 0
        self.ignore_case = False
        self.onig = flavor == "onig"
        # the bodies of groups other than (?:...), by id(); kept here so that no id is reused by
        # a later node while the parse runs (a lookahead's body is otherwise dropped)
        self.bags: dict[int, Node] = {}

    # -- helpers
    def error(self, message: str, offset: Optional[int] = None) -> PatternError:
        return PatternError(message, self.p, self.i if offset is None else offset)

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.p[j] if j < len(self.p) else ""

    def take(self) -> str:
        if self.i >= len(self.p):
            raise self.error("unexpected end of pattern")
        c = self.p[self.i]
        self.i += 1
        return c

    def fold(self, cs: CharSet, at: Optional[int] = None) -> CharSet:
        if not self.ignore_case:
            return cs
        folded = self.ucd.casefold_closure_set(cs)
        if self.onig and any(cp in folded for cp in self.ucd.multi_char_folds()):
            # Oniguruma lets such a character match its multi-character folding (ß ~ "ss").
            raise self.error("case-insensitive class or character with a multi-character case "
                             "folding (Oniguruma matches e.g. ß as 'ss')", at)
        return folded

    def onig_word(self, in_class: bool) -> CharSet:
        word = self.ucd.word() - _ONIG_W_MINUS
        return word if in_class else word | _ONIG_W_EXTRA

    def check_onig_strings(self, items: list, offset: int) -> None:
        """Under (?i) Oniguruma also matches a run of literals by its full case folding
        ("st" matches U+FB06): refuse a run that spells such a folding."""
        run: list[int] = []
        folds = {tuple(self.ucd.simple_casefold(c) for c in t): cp
                 for cp, t in self.ucd.multi_char_folds().items()}
        longest = max((len(k) for k in folds), default=0)
        for item in items + [None]:
            cps = item.set if isinstance(item, Chars) and len(item.set) <= 8 else None
            keys = {self.ucd.simple_casefold(c) for c in cps} if cps is not None else set()
            if len(keys) == 1:
                run.append(keys.pop())
                continue
            for i in range(len(run)):
                for n in range(2, longest + 1):
                    if tuple(run[i:i + n]) in folds:
                        raise self.error(f"case-insensitive literal spelling the case folding of "
                                         f"U+{folds[tuple(run[i:i + n])]:04X} (Oniguruma matches it)", offset)
            run = []

    # -- grammar
    def parse(self) -> Node:
        if self.p.startswith("(?i)"):
            self.ignore_case, self.i = True, 4
        node = self.alternation()
        if self.i < len(self.p):
            raise self.error("unbalanced ')'")
        return node

    def alternation(self) -> Node:
        items = [self.sequence()]
        while self.peek() == "|":
            self.i += 1
            items.append(self.sequence())
        return items[0] if len(items) == 1 else Alt(tuple(items))

    def sequence(self) -> Node:
        items = []
        at, case = self.i, self.ignore_case
        while self.peek() not in ("", "|", ")"):
            start = self.i
            atom = self.atom()
            items.append(self.quantified(atom, start))
        if self.onig and case:
            self.check_onig_strings(items, at)
        return items[0] if len(items) == 1 else Seq(tuple(items))

    def quantified(self, atom: Node, atom_offset: int) -> Node:
        while True:
            c, at = self.peek(), self.i
            if c in ("*", "+", "?"):
                self.i += 1
                lo, hi = {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
            elif c == "{" and self._counted_ahead():
                lo, hi = self.counted()
                if self.onig and self.peek() == "+":
                    # Ruby syntax: X{m,n}+ is (?:X{m,n})+, not possessive; the loop reads the +.
                    atom = Repeat(self._check_repeatable(atom, at), lo, hi, "greedy")
                    continue
                if self.onig and lo == hi and self.peek() == "?":
                    raise self.error("X{n}? (Oniguruma reads it as (?:X{n})?, not as lazy)", at)
            else:
                return atom
            self._check_repeatable(atom, at)
            mode = "greedy"
            if self.peek() == "?":
                self.i, mode = self.i + 1, "lazy"
            elif self.peek() == "+":
                self.i, mode = self.i + 1, "possessive"
            if mode == "possessive":
                single = single_class(atom)
                if single is None:
                    raise self.error(
                        "possessive quantifier on an operand that is not a single character class "
                        "(only X*+, X++, X?+, X{m,n}+ with one-character X are supported)", at)
                atom = Chars(single)
            atom = Repeat(atom, lo, hi, mode)
            if not self.onig and (self.peek() in ("*", "+", "?") or (self.peek() == "{" and self._counted_ahead())):
                # the regex module refuses a quantifier on a quantified atom ("multiple repeat");
                # Oniguruma repeats the repeat, which the loop does for flavor onig
                raise self.error("multiple repeat (a quantifier on a quantifier)", self.i)

    def _check_repeatable(self, atom: Node, at: int) -> Node:
        if isinstance(atom, Look):
            raise self.error("quantifier on a zero-width assertion", at)
        if self.onig and self._onig_invalid_target(atom):
            raise self.error("quantifier on alternatives one of which is a zero-width assertion "
                             "(Oniguruma: target of repeat operator is invalid)", at)
        return atom

    def _onig_invalid_target(self, node: Node) -> bool:
        # Oniguruma refuses to repeat an anchor (lookarounds and $ are anchors to it), or
        # alternatives any of which is one; a sequence, or a group other than (?:...), is
        # always a valid target (is_invalid_quantifier_target in its regparse.c).
        if id(node) in self.bags:
            return False
        if isinstance(node, Look):
            return True
        return isinstance(node, Alt) and any(self._onig_invalid_target(x) for x in node.items)

    def _counted_ahead(self) -> bool:
        m = _COUNTED.match(self.p, self.i)
        return bool(m and (m.group(1) or m.group(2)))

    def counted(self) -> tuple[int, Optional[int]]:
        at = self.i
        j = self.p.index("}", self.i)
        body = self.p[self.i + 1:j]
        self.i = j + 1
        if "," in body:
            a, b = body.split(",")
            lo, hi = int(a or 0), (int(b) if b else None)
        else:
            lo = hi = int(body)
        if hi is not None and hi < lo:
            raise self.error(f"counted repetition {{{body}}} has max < min", at)
        if max(lo, hi or 0) > _QUANTIFIER_LIMIT:
            raise self.error(f"counted repetition {{{body}}} exceeds {_QUANTIFIER_LIMIT}", at)
        return lo, hi

    def atom(self) -> Node:
        at = self.i
        c = self.take()
        if c == "(":
            return self.group(at)
        if c == "[":
            return Chars(self.char_class(at))
        if c == ".":
            return Chars(CharSet.of(0x0A).complement())
        if c == "$":
            # Oniguruma (Ruby syntax): $ is an end of line, before any \n or at the end.
            return Look("not_in", CharSet.of(0x0A).complement()) if self.onig else Look("end")
        if c == "^":
            raise self.error("start anchor '^' is not supported", at)
        if c == "\\":
            return self.escape(at, in_class=False)
        if c in ("*", "+", "?"):
            raise self.error(f"nothing to repeat before {c!r}", at)
        if c == "{" and self._counted_ahead():
            raise self.error("nothing to repeat before '{'", at)
        return Chars(self.fold(CharSet.of(ord(c)), at))

    def group(self, at: int) -> Node:
        saved_case = self.ignore_case
        look = None
        bag = True  # Oniguruma's word for a group that is a node of its own (see _check_repeatable)
        if self.peek() == "?":
            self.i += 1
            c = self.take()
            if c == ":":
                bag = False
            elif c in ("=", "!"):
                look = "in" if c == "=" else "not_in"
            elif c == "<" and self.peek() in ("=", "!"):
                raise self.error("lookbehind is not supported", at)
            elif c == "P" and self.peek() == "<" or c == "<":
                if c == "P" and self.onig:
                    raise self.error("(?P<name>...) is not Oniguruma syntax (use (?<name>...))", at)
                if c == "P":
                    self.i += 1
                end = self.p.find(">", self.i)
                if end < 0:
                    raise self.error("unterminated group name", at)
                self.i = end + 1
            elif c == ">":
                raise self.error("atomic group (?>...) is not supported", at)
            elif c == "#":
                end = self.p.find(")", self.i)
                if end < 0:
                    raise self.error("unterminated comment", at)
                self.i = end + 1
                return EMPTY
            elif c == "P" and self.peek() in ("=", ">"):
                raise self.error("backreference is not supported", at)
            else:
                self.i -= 1
                flags_at = self.i
                flags = ""
                while self.peek().isalpha() or self.peek() == "-":
                    flags += self.take()
                if flags != "i" or self.peek() not in (":", ")"):
                    bad = flags or self.peek()
                    raise self.error(f"inline flag group '(?{bad}' is not supported (only (?i:...))", flags_at)
                if self.take() == ")":
                    raise self.error("scoped inline flag (?i) must start the pattern; use (?i:...)", at)
                self.ignore_case = True
        body = self.alternation()
        if self.peek() != ")":
            raise self.error("missing ')'", at)
        self.i += 1
        self.ignore_case = saved_case
        if look is None:
            if bag:
                self.bags[id(body)] = body
            return body
        single = single_class(body)
        if single is None:
            raise self.error("lookahead must test exactly one character class (multi-character lookahead is not supported)", at)
        return Look(look, single)

    def char_class(self, at: int) -> CharSet:
        negate = False
        if self.peek() == "^":
            negate, self.i = True, self.i + 1
        items: list[CharSet] = []
        first = True
        while True:
            if self.i >= len(self.p):
                raise self.error("unterminated character class", at)
            c, c_at = self.take(), self.i - 1
            if c == "]" and not first:
                break
            first = False
            if c == "[" and self.peek() == ":":
                raise self.error("POSIX class [:...:] is not supported", c_at)
            if self.onig and c == "[":
                raise self.error("nested character class (Oniguruma reads [ inside a class as a set)", c_at)
            if self.onig and c == "&" and self.peek() == "&":
                raise self.error("character class intersection && is not supported", c_at)
            if c == "\\":
                item = self.escape(c_at, in_class=True)
                if not isinstance(item, Chars):
                    raise self.error("assertion inside a character class", c_at)
                lo_set = item.set
            else:
                lo_set = CharSet.of(ord(c))
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                if len(lo_set) != 1:
                    raise self.error("character range with a class as its start", c_at)
                self.i += 1
                hi_at = self.i
                h = self.take()
                if h == "\\":
                    hi_item = self.escape(hi_at, in_class=True)
                    if not isinstance(hi_item, Chars) or len(hi_item.set) != 1:
                        raise self.error("character range with a class as its end", hi_at)
                    hi = hi_item.set.ranges[0][0]
                else:
                    hi = ord(h)
                lo = lo_set.ranges[0][0]
                if hi < lo:
                    raise self.error("bad character range (end before start)", c_at)
                lo_set = CharSet([(lo, hi)])
            items.append(lo_set)
        cs = self.fold(CharSet().union(*items), at)
        return cs.complement() if negate else cs

    def escape(self, at: int, in_class: bool) -> Node:
        c = self.take()
        u = self.ucd
        # a character in a class is folded with the class's other members (so that it can
        # start or end a range: (?i)[\\x41-\\x5a])
        fold = (lambda cs, at: cs) if in_class else self.fold
        if c in "wW" and self.onig:
            base = self.onig_word(in_class)
            return Chars(base if c == "w" else base.complement())
        if c in "hH" and self.onig:
            return Chars(_ASCII_HEX if c == "h" else _ASCII_HEX.complement())
        if c in "dDsSwW":
            base = {"d": u.digit, "s": u.space, "w": u.word}[c.lower()]()
            return Chars(base if c.islower() else base.complement())
        if c in "pP":
            return Chars(self.property(c == "P", at, in_class))
        if c in _SIMPLE_ESCAPES:
            return Chars(fold(CharSet.of(_SIMPLE_ESCAPES[c]), at))
        if c == "U" and self.onig:
            raise self.error("\\U is not an escape in Oniguruma (it matches 'U')", at)
        if c == "x" and self.onig and self.peek() != "{":
            return Chars(fold(CharSet.of(self.onig_byte_escape(at, in_class)), at))
        if c in "xuU":
            return Chars(fold(CharSet.of(self.hex_escape(c, at)), at))
        if c == "0":
            digits = ""
            while len(digits) < 2 and self.peek() in "01234567" and self.peek():
                digits += self.take()
            return Chars(fold(CharSet.of(int(digits or "0", 8)), at))
        if c.isdigit():
            raise self.error("backreference is not supported", at)
        if c == "Z" and self.onig:
            raise self.error("\\Z (end, or before a final newline) needs two characters of lookahead", at)
        if c in ("z", "Z"):
            if in_class:
                raise self.error(f"\\{c} inside a character class", at)
            return Look("end")
        if c in _UNSUPPORTED_ESCAPES:
            raise self.error(f"{_UNSUPPORTED_ESCAPES[c]} is not supported", at)
        if c.isalnum():
            raise self.error(f"unknown escape \\{c}", at)
        return Chars(fold(CharSet.of(ord(c)), at))

    def onig_byte_escape(self, at: int, in_class: bool) -> int:
        """Oniguruma's \\xHH: a code unit, so in UTF-8 \\x00-\\x7F are those characters and
        \\x80-\\xFF bytes: escapes that spell a character's UTF-8 in full ("\\xc3\\xa9" is "é")
        are that character; a lone lead or continuation byte is Oniguruma's "too short
        multibyte code string" (tokenizers fails to load it). A byte in a class (where
        Oniguruma compares bytes, "[\\x80-\\xff]" matching no character) is not supported."""
        value = self.hex_escape("x", at)
        if value < 0x80:
            return value
        if in_class:
            raise self.error("\\x80-\\xFF in a character class (a byte of UTF-8 in Oniguruma) is not supported; "
                             "write \\x{HH} for the code point", at)
        need = 1 if 0xC2 <= value <= 0xDF else 2 if 0xE0 <= value <= 0xEF else 3 if 0xF0 <= value <= 0xF4 else -1
        raw = [value]
        while 0 < need and self.p.startswith("\\x", self.i) and self.p[self.i + 2:self.i + 3] != "{":
            self.i += 2
            raw.append(self.hex_escape("x", at))
            need -= 1
        try:
            cp = bytes(raw).decode("utf-8")
        except UnicodeDecodeError:
            raise self.error("\\xHH escapes that are no character's UTF-8 are not supported (a partial "
                             "character is Oniguruma's too short multibyte code string; write \\x{HH} for the "
                             "code point)", at) from None
        return ord(cp)

    def hex_escape(self, kind: str, at: int) -> int:
        if kind == "x" and self.peek() == "{":
            end = self.p.find("}", self.i)
            digits = self.p[self.i + 1:end] if end > 0 else ""
            self.i = end + 1 if end > 0 else self.i
        else:
            width = {"x": 2, "u": 4, "U": 8}[kind]
            digits = self.p[self.i:self.i + width]
            if len(digits) == width:
                self.i += width
            else:
                digits = ""
        try:
            value = int(digits, 16)
        except ValueError:
            raise self.error(f"bad \\{kind} escape", at) from None
        if value > MAX_CODE_POINT:
            raise self.error(f"\\{kind} escape beyond U+10FFFF", at)
        return value

    def property(self, negated: bool, at: int, in_class: bool = False) -> CharSet:
        if self.peek() == "{":
            end = self.p.find("}", self.i)
            if end < 0:
                raise self.error("unterminated \\p{...}", at)
            name = self.p[self.i + 1:end]
            self.i = end + 1
        else:
            name = self.take()
        if name.startswith("^"):
            negated, name = not negated, name[1:]
        if self.onig:
            # Oniguruma folds no property under (?i) outside a class (measured).
            cs = self.onig_property(name, at, in_class)
            return cs.complement() if negated else cs
        try:
            cs = self.ucd.property(name)
        except KeyError:
            raise self.error(f"unknown Unicode property {name!r}", at) from None
        cs = self.fold(cs, at)
        return cs.complement() if negated else cs

    def onig_property(self, name: str, at: int, in_class: bool) -> CharSet:
        """\\p{name} as Oniguruma resolves it: general categories, scripts and binary
        properties by loose name; no name=value form, no L&, no Is prefix (measured)."""
        from .unicode import loose

        key = loose(name)
        if key == "WORD":
            return self.onig_word(in_class)
        if key == "XDIGIT":
            return _ASCII_HEX
        if key == "ASCII":
            return CharSet([(0, 0x7F)])
        u = self.ucd
        known = (key in u._prop("gc").values or key in u._prop("sc").values
                 or (key in u._props and u._props[key].is_binary))
        if not known or any(ch in name for ch in "=:&"):
            raise self.error(f"unknown Unicode property {name!r} (Oniguruma)", at)
        try:
            return u.property(name)
        except KeyError:
            raise self.error(f"unknown Unicode property {name!r}", at) from None


def single_class(node: Node) -> Optional[CharSet]:
    """The character set if `node` always consumes exactly one character from a set."""
    if isinstance(node, Chars):
        return node.set
    if isinstance(node, Seq) and len(node.items) == 1:
        return single_class(node.items[0])
    if isinstance(node, Alt):
        sets = [single_class(x) for x in node.items]
        if all(s is not None for s in sets):
            return CharSet().union(*sets)
    return None


def can_match_empty(node: Node) -> bool:
    """Conservative: True if some path consumes nothing (assertions count as passable)."""
    if isinstance(node, Chars):
        return False
    if isinstance(node, Look):
        return True
    if isinstance(node, Seq):
        return all(can_match_empty(x) for x in node.items)
    if isinstance(node, Alt):
        return any(can_match_empty(x) for x in node.items)
    if isinstance(node, Repeat):
        return node.min == 0 or can_match_empty(node.item)
    raise TypeError(node)




def parse(pattern: str, ucd, flavor: str = "regex") -> Node:
    """Parse `pattern`; raises PatternError for anything outside the supported subset."""
    if not isinstance(pattern, str):
        raise TypeError("pattern must be str")
    if flavor not in FLAVORS:
        raise ValueError(f"unknown pattern flavor {flavor!r}; choose one of {', '.join(FLAVORS)}")
    if pattern == "":
        raise PatternError("empty pattern matches the empty string", pattern, 0)
    tree = _Parser(pattern, ucd, flavor).parse()
    if can_match_empty(tree):
        raise PatternError("pattern can match the empty string (tokenizer patterns must consume "
                           "at least one character)", pattern, 0)
    return tree
