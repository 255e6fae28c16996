"""Piece finders for HF pre-tokenizers: a compiled scanner when one has the exact semantics,
else the `regex` module, with Oniguruma's ``\\w`` reproduced for Split regexes."""
from __future__ import annotations

from .errors import UnsupportedComponentError
from .native import _native, _native_spans, _scanner_dfa
from .unicode_tables import _BERT_PUNCT, _NUMERIC, _class

class _Matcher:
    """Finds non-overlapping matches (regex.findall semantics); ``scanner`` names the compiled
    scanner with exactly the same semantics, ``pattern`` is the equivalent `regex` pattern."""

    def __init__(self, scanner: str | None, pattern: str, literal: str | None = None):
        self.scanner = scanner
        self.pattern = pattern
        self.literal = literal
        self._dfa = _scanner_dfa(scanner) if scanner else None
        self._re = None

    @property
    def dfa(self):
        return self._dfa

    def spans(self, text: str) -> list[tuple[int, int]]:
        if self.literal is not None:
            out, lit, n, i = [], self.literal, len(self.literal), 0
            if not n:
                return out
            while True:
                j = text.find(lit, i)
                if j < 0:
                    return out
                out.append((j, j + n))
                i = j + n
        if self._dfa is not None:
            return _native_spans(self._dfa, text)
        if self._re is None:
            import regex

            self._re = regex.compile(self.pattern, regex.V0)
        return [m.span() for m in self._re.finditer(text)]

    def findall(self, text: str) -> list[str]:
        return [text[a:b] for a, b in self.spans(text)]


_BERT_P_CLASS = None


def _bert_class() -> str:
    global _BERT_P_CLASS
    if _BERT_P_CLASS is None:
        _BERT_P_CLASS = _class(_BERT_PUNCT)
    return _BERT_P_CLASS


_MATCHER_CACHE: dict[str, _Matcher] = {}


def _builtin_matcher(kind: str) -> _Matcher:
    m = _MATCHER_CACHE.get(kind)
    if m is None:
        if kind == "whitespace":
            m = _Matcher("whitespace", r"\w+|[^\w\s]+")
        elif kind == "whitespace_split":
            m = _Matcher("whitespace_split", r"\S+")
        elif kind == "bert":
            p = _bert_class()
            m = _Matcher("hf_bert", f"[^\\s{p}]+|[{p}]")
        elif kind == "punct":
            m = _Matcher("hf_punctuation", f"[{_bert_class()}]")
        elif kind == "digits":
            m = _Matcher("hf_digits", f"[{_class(_NUMERIC)}]+")
        elif kind == "digit":
            m = _Matcher("hf_digit", f"[{_class(_NUMERIC)}]")
        else:  # pragma: no cover
            raise KeyError(kind)
        _MATCHER_CACHE[kind] = m
    return m


_ONIG_W_EXTRA = r"\xb2\xb3\xb9\xbc-\xbe"  # word characters for Oniguruma, not for Unicode \w
_ONIG_W_MINUS = r"\u200c\u200d"  # Join_Control: Unicode \w, not Oniguruma's


def _onig_translate(pattern: str) -> str:
    """Rewrites the \\w / \\W of a HF Split regex (run by Oniguruma in `tokenizers`) into the
    Unicode-\\w dialect of the scanner compiler and `regex`: Oniguruma's \\w also holds
    U+00B2, U+00B3, U+00B9, U+00BC..U+00BE and lacks U+200C, U+200D; inside a character class
    it only lacks U+200C, U+200D (measured, every code point; the other classes agree)."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            e = pattern[i + 1]
            if e == "w":
                out.append(f"(?:[{_ONIG_W_EXTRA}]|(?![{_ONIG_W_MINUS}])\\w)")
            elif e == "W":
                out.append(f"(?:[{_ONIG_W_MINUS}]|(?![{_ONIG_W_EXTRA}])\\W)")
            else:
                out.append(pattern[i:i + 2])
            i += 2
            continue
        if c != "[":
            out.append(c)
            i += 1
            continue
        # a character class: find its end
        j = i + 1
        neg = j < n and pattern[j] == "^"
        if neg:
            j += 1
        if j < n and pattern[j] == "]":
            j += 1
        items: list[str] = []
        has_w = False
        while j < n and pattern[j] != "]":
            if pattern[j] == "\\" and j + 1 < n:
                if pattern[j + 1] == "w":
                    has_w = True
                elif pattern[j + 1] == "W":
                    raise UnsupportedComponentError(f"Split regex {pattern!r}: \\W inside a character class")
                else:
                    items.append(pattern[j:j + 2])
                j += 2
                continue
            if pattern[j] == "[":
                raise UnsupportedComponentError(f"Split regex {pattern!r}: nested character class")
            items.append(pattern[j])
            j += 1
        if j >= n:
            out.append(pattern[i:])
            break
        whole = pattern[i:j + 1]
        if not has_w:
            out.append(whole)
        else:
            others = "".join(items)
            if neg:
                join_branch = f"(?=[{_ONIG_W_MINUS}])[^{others}]" if others else f"[{_ONIG_W_MINUS}]"
                out.append(f"(?:{join_branch}|[^\\w{others}])")
            else:
                alts = [f"(?![{_ONIG_W_MINUS}])[\\w{others}]"]
                if others:
                    alts.append(f"(?=[{_ONIG_W_MINUS}])[{others}]")
                out.append("(?:" + "|".join(alts) + ")")
        i = j + 1
    return "".join(out)


def _regex_matcher(pattern: str) -> _Matcher:
    key = "re:" + pattern
    translated = _onig_translate(pattern)
    if translated != pattern:
        m = _MATCHER_CACHE.get(key)
        if m is None:
            m = _MATCHER_CACHE[key] = _Matcher(None, translated)
            m.onig_pattern = pattern
        return m
    m = _MATCHER_CACHE.get(key)
    if m is None:
        name = None
        nat = _native()
        if nat is not None:
            ffi, lib = nat
            for i in range(lib.scantok_scanner_count()):
                dfa = lib.scantok_scanner_at(i)
                if ffi.string(lib.scantok_scanner_pattern(dfa)).decode("utf-8") == pattern:
                    name = ffi.string(lib.scantok_scanner_name(dfa)).decode()
                    break
        m = _Matcher(name, pattern)
        m.onig_pattern = pattern
        _MATCHER_CACHE[key] = m
    return m
