"""Added tokens of a tokenizer.json (HF's AddedVocabulary): their options, and splitting a
text around them; and :class:`AddedToken`, the public form (tokenizers' ``AddedToken``).

Non-normalized tokens are found in the original text, normalized ones in the normalized
pieces (their pattern is their normalized content); the match is leftmost-longest, as
tokenizers' Aho-Corasick automaton; ``single_word`` discards a match inside a word,
``lstrip``/``rstrip`` take the whitespace beside it.
"""
from __future__ import annotations

import re
import warnings
from typing import Any, Callable, Mapping, Sequence

from .args import is_bool
from .errors import HFError, UnsupportedComponentError

_OPTIONS = ("single_word", "lstrip", "rstrip", "normalized", "special")
# Rust regex's \w (tokenizers' single_word test): Alphabetic, marks, decimal digits, connector
# punctuation, Join_Control (UTS #18). Python's \w is isalnum() and "_": no marks, but No ("²").
# A scanner compiled at first use (scantok.compile, from the package's Unicode tables): the
# `regex` module is a test dependency only.
_WORD = None
_WORD_CACHE: dict[str, bool] = {}


def _is_word_char(ch: str) -> bool:
    global _WORD
    hit = _WORD_CACHE.get(ch)
    if hit is None:
        if _WORD is None:
            from ..compiler.runtime import compile as compile_scanner

            _WORD = compile_scanner(r"[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}]")
        hit = bool(_WORD.spans(ch))
        if len(_WORD_CACHE) < 65536:
            _WORD_CACHE[ch] = hit
    return hit


# Rust regex's \s (tokenizers' lstrip / rstrip): the White_Space property; Python's \s also takes
# U+001C..U+001F
_RUST_WS = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
_TRAILING_WS = re.compile(f"[{_RUST_WS}]*\\Z")
_LEADING_WS = re.compile(f"[{_RUST_WS}]*")


def _bool(v, name: str) -> bool:
    """v as tokenizers' binding reads a bool (Python's, or numpy's)."""
    if is_bool(v):
        return bool(v)
    raise TypeError(f"'{type(v).__name__}' object is not an instance of 'bool' ({name})")


class AddedToken:
    """A token to add to a :class:`~scantok.Tokenizer` (``add_tokens``,
    ``add_special_tokens``), as ``tokenizers.AddedToken``: ``single_word`` (match it only as
    a whole word), ``lstrip`` / ``rstrip`` (take the whitespace on that side with it),
    ``normalized`` (match it in the normalized text; default: True unless special) and
    ``special`` (skipped by ``decode(skip_special_tokens=True)``).  ``content`` and
    ``special`` can be set afterwards, the others not (as there).

    >>> AddedToken("<tool>", special=True)
    AddedToken("<tool>", rstrip=False, lstrip=False, single_word=False, normalized=False, special=True)
    """

    __slots__ = ("_content", "_single_word", "_lstrip", "_rstrip", "_normalized", "_special")

    def __init__(self, content: str | None = None, **kwargs):
        self.content = "" if content is None else content
        self._single_word = self._lstrip = self._rstrip = False
        self._special = False
        self._normalized = None  # None: not said (normalized is then not special)
        for key, value in kwargs.items():
            if key in ("single_word", "lstrip", "rstrip", "special"):
                setattr(self, "_" + key, _bool(value, key))
            elif key == "normalized":
                self._normalized = _bool(value, key)
            else:  # tokenizers prints this and goes on
                warnings.warn(f"Ignored unknown kwarg option {key}", stacklevel=2)

    content = property(lambda self: self._content)

    @content.setter
    def content(self, value: str) -> None:
        if not isinstance(value, str):
            raise TypeError(f"'{type(value).__name__}' object is not an instance of 'str'")
        self._content = value

    special = property(lambda self: self._special)

    @special.setter
    def special(self, value: bool) -> None:
        self._special = _bool(value, "special")

    single_word = property(lambda self: self._single_word)
    lstrip = property(lambda self: self._lstrip)
    rstrip = property(lambda self: self._rstrip)

    @property
    def normalized(self) -> bool:
        return self._normalized if self._normalized is not None else not self._special

    def _key(self) -> tuple:
        return self.content, self.single_word, self.lstrip, self.rstrip, self.normalized, self.special

    def __eq__(self, other) -> bool:
        return isinstance(other, AddedToken) and self._key() == other._key()

    def __ne__(self, other) -> bool:
        return not self == other

    # tokenizers' AddedToken orders nothing: every comparison is False
    def __lt__(self, other) -> bool:
        return False

    __le__ = __gt__ = __ge__ = __lt__

    def __hash__(self) -> int:
        return hash(self.content)

    def __str__(self) -> str:
        return self.content

    def __repr__(self) -> str:
        b = lambda v: "True" if v else "False"  # noqa: E731
        return (f'AddedToken("{self.content}", rstrip={b(self.rstrip)}, lstrip={b(self.lstrip)}, '
                f"single_word={b(self.single_word)}, normalized={b(self.normalized)}, special={b(self.special)})")

    # pickled (and copied) with normalized as it reads now, as tokenizers': fixed from then on
    def __getstate__(self) -> dict:
        return {k: getattr(self, k) for k in ("content", "single_word", "lstrip", "rstrip", "normalized", "special")}

    def __setstate__(self, state: dict) -> None:
        self._content = state["content"]
        self._single_word, self._lstrip, self._rstrip = state["single_word"], state["lstrip"], state["rstrip"]
        self._normalized, self._special = state["normalized"], state["special"]


class AddedEntry:
    """An added token of the file, with its id."""

    # content: as the file gives it (token_to_id, get_vocab and the special set go by it, as
    # tokenizers); norm: the content normalized for a normalized token (what it matches in the
    # normalized text and what id_to_token gives, as tokenizers), else the content
    __slots__ = ("id", "content", "norm") + _OPTIONS

    def __init__(self, obj: Any, where: str):
        if not isinstance(obj, Mapping):
            raise HFError(f"{where}: expected an object")
        content, idx = obj.get("content"), obj.get("id")
        if not isinstance(content, str) or not content:
            raise HFError(f"{where}: 'content' must be a non-empty string")
        if isinstance(idx, bool) or not isinstance(idx, int) or not 0 <= idx < 2**32 - 1:
            raise HFError(f"{where}: 'id' must be a non-negative integer")
        self.id, self.content, self.norm = idx, content, content
        for opt in _OPTIONS:
            v = obj.get(opt, False)
            if not isinstance(v, bool):
                raise HFError(f"{where}: '{opt}' must be a boolean")
            setattr(self, opt, v)


def _trie_regex(words: Sequence[str]) -> re.Pattern | None:
    """A regex finding the leftmost-longest occurrence of any of ``words``: a trie, each node
    trying its continuations before ending, so the first match at a position is the longest
    (the words matching at one position lie on one path of the trie)."""
    if not words:
        return None
    trie: dict = {}
    for w in words:
        node = trie
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = True

    def build(node: dict) -> str:
        alts = []
        for ch, sub in sorted(node.items()):
            if not ch:
                continue
            # a chain of single continuations is one literal (no recursion per character: a
            # token may be thousands of characters long)
            chain = [ch]
            while len(sub) == 1 and "" not in sub:
                (ch, sub), = sub.items()
                chain.append(ch)
            alts.append(re.escape("".join(chain)) + build(sub))
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        return f"(?:{body})?" if "" in node else body

    try:
        return re.compile(build(trie))
    except (RecursionError, re.error, OverflowError):
        # a trie nested too deep for Python (or re) to build: the words longest first, which an
        # alternation tries in order, so the first match at a position is also the longest
        return re.compile("|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True)))


def with_tokenizers_ids(tokens: Sequence[Any], vocab: Mapping[str, int]) -> list[dict]:
    """The file's added tokens with the ids tokenizers gives them: it does not keep a file's
    ids but adds the tokens again in order (AddedVocabulary::add_tokens): a token already in the
    vocabulary (or added before) keeps that id, a new one takes the vocabulary's size, or one
    past the largest id given to a new one when that is not below it.  A token with empty content and a
    repeat of an identical token are ignored, as there.  Sorted by id (as tokenizers saves them)."""
    if not isinstance(tokens, list):
        raise HFError("added_tokens must be a list")
    size = len(vocab)
    ids: dict[str, int] = {}
    fresh: list[int] = []  # the ids given to tokens the vocabulary lacks (the others do not count)
    kept: dict[str, tuple] = {}  # content -> (options, the token object)
    for i, obj in enumerate(tokens):
        t = AddedEntry(obj, f"added_tokens[{i}]") if not (isinstance(obj, Mapping) and obj.get("content") == "") \
            else None
        if t is None:
            continue
        options = tuple(getattr(t, o) for o in _OPTIONS)
        if t.content in kept:
            if kept[t.content][0] != options:
                # tokenizers then matches the content with one token's options and splits it out
                # of the normalized or the original text by the other's: not reproduced
                raise UnsupportedComponentError(f"added_tokens[{i}]: {t.content!r} is added twice with different "
                                                "options (not supported)")
            continue
        new_id = ids.get(t.content, vocab.get(t.content))
        if new_id is None:
            # a vocabulary token added before (whatever its id) does not move the next id: vocabulary
            # {a: 0, b: 1, c: 10} with added c then x gives x 3, not 11 (found by a helper's campaign)
            top = max(fresh, default=None)
            new_id = size if top is None else top + 1 if top >= size or size == 0 else size
            fresh.append(new_id)
        ids[t.content] = new_id
        kept[t.content] = (options, dict(obj, id=new_id))
    return sorted((entry for _, entry in kept.values()), key=lambda o: o["id"])


class AddedVocabulary:
    """The added tokens and the two matchers (original text, normalized text)."""

    def __init__(self, tokens: Sequence[Any], normalize: Callable[[str], str] | None):
        self.tokens = [AddedEntry(t, f"added_tokens[{i}]") for i, t in enumerate(tokens)]
        # tokenizers' encode_special_tokens: special tokens are not split out (encoded as text)
        self.encode_special = False
        for t in self.tokens:  # a normalized token matches its normalized content (as HF)
            if t.normalized and normalize is not None:
                t.norm = normalize(t.content)
                if not t.norm:
                    # tokenizers matches the empty string at every position then: it cuts the
                    # normalized text into single characters, and some texts panic it
                    # ("AddedVocabulary bad split"); no result to reproduce
                    raise UnsupportedComponentError(
                        f"added token {t.content!r} (id {t.id}): normalized, its content normalizes to the empty "
                        "string, which tokenizers matches between every two characters (not supported)")
        self.by_content = {t.content: t for t in self.tokens}
        self.by_id = {t.id: t for t in self.tokens}
        # tokenizers' decode skips a token whose *string* (id_to_token's) is the content of a
        # special token: see Tokenizer._skip_ids
        self.special_contents = {t.content for t in self.tokens if t.special}
        raw = {t.content: t for t in self.tokens if not t.normalized}
        norm: dict[str, AddedEntry] = {}
        for t in self.tokens:
            if t.normalized:
                other = norm.setdefault(t.norm, t)
                if other is not t:
                    # tokenizers' automaton then holds the same pattern twice and reports either
                    # (it changes from process to process): no result to reproduce
                    raise UnsupportedComponentError(
                        f"added tokens {other.content!r} (id {other.id}) and {t.content!r} (id {t.id}) both "
                        f"normalize to {t.norm!r}; tokenizers then matches either one, at random (not supported)")
        self._raw, self._norm = raw, norm
        # the first characters of all tokens, when few (a substring test is much faster than
        # the trie regex, and most texts hold none of them)
        firsts = {c[0] for c in raw} | {c[0] for c in norm}
        self._firsts = firsts if len(firsts) <= 4 else None
        contents = list(raw) + list(norm)
        # the tokens by their first two characters (None when a token is one character): where
        # those two occur, str.startswith with the tuple tests them all in C
        by_two: dict[str, list[str]] | None = None
        if not any(len(c) < 2 for c in contents):
            by_two = {}
            for c in contents:
                by_two.setdefault(c[:2], []).append(c)
        self._by_two = None if by_two is None else {k: tuple(v) for k, v in by_two.items()}
        self._raw_re = _trie_regex(list(raw))
        self._norm_re = _trie_regex(list(norm))

    def __bool__(self) -> bool:
        return bool(self.tokens)

    @property
    def has_normalized(self) -> bool:
        return self._norm_re is not None

    def matches(self, text: str) -> bool:
        """True if some added token occurs in text as it is (split would cut it there when
        there is no normalizer)."""
        firsts, by_two = self._firsts, self._by_two
        if firsts is not None and by_two is not None:
            # few first characters: test the tokens where one of them occurs (the trie regex
            # costs ~30 us over 4 KB of text holding "<" in DeepSeek V3's file; this ~4 us)
            for c in firsts:
                i = text.find(c)
                while i >= 0:
                    cands = by_two.get(text[i:i + 2])
                    if cands is not None and text.startswith(cands, i):
                        return True
                    i = text.find(c, i + 1)
            return False
        if firsts is not None and not any(c in text for c in firsts):
            return False
        return any(rx is not None and rx.search(text) is not None for rx in (self._raw_re, self._norm_re))

    def split(self, text: str, normalized: bool) -> list[tuple[int, int, AddedEntry | None]]:
        """(start, end, token or None) covering text, as AddedVocabulary::find_matches."""
        rx = self._norm_re if normalized else self._raw_re
        table = self._norm if normalized else self._raw
        out: list[tuple[int, int, AddedEntry | None]] = []
        if rx is None:
            return [(0, len(text), None)] if text else []
        pos = 0
        for m in rx.finditer(text):
            start, stop = m.span()
            tok = table[m.group()]
            if tok.special and self.encode_special:
                continue
            if tok.single_word:
                if start > 0 and _is_word_char(text[start - 1]):
                    continue
                if stop < len(text) and _is_word_char(text[stop]):
                    continue
            if tok.lstrip:
                start = max(_TRAILING_WS.search(text, 0, start).start(), pos)
            if tok.rstrip:
                stop = _LEADING_WS.match(text, stop).end()
            if pos < start:
                out.append((pos, start, None))
            if stop <= start:
                # lstrip moved the start to the end of the previous match (whose rstrip took this
                # match's whitespace): tokenizers drops the empty split, token and all (and
                # panics when the start passes the end)
                pos = max(pos, start)
                continue
            out.append((start, stop, tok))
            pos = stop
        if pos < len(text):
            out.append((pos, len(text), None))
        return out
