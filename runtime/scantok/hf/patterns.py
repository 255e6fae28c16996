"""Piece finders for HF pre-tokenizers: a shipped scanner when one has the exact semantics, else
a Split regex compiled at run time in Oniguruma's semantics (``scantok.compile(flavor="onig")``)."""
from __future__ import annotations

from typing import Any

from .errors import UnsupportedComponentError
from .native import _native, _native_span_arrays, _native_spans, _scanner_dfa
from .unicode_tables import _BERT_PUNCT, _NUMERIC, _class

class _Matcher:
    """Finds non-overlapping matches (regex.findall semantics); ``scanner`` names the compiled
    scanner with exactly the same semantics, ``pattern`` is the equivalent `regex` pattern."""

    def __init__(self, scanner: str | None, pattern: str, literal: str | None = None, *,
                 compiled: Any = None, simulator: Any = None):
        self.scanner = scanner
        self.pattern = pattern
        self.literal = literal
        # a scanner compiled at run time (kept alive: its tables back the dfa), or the pure-Python
        # interpreter of the same DFA when the C extension is absent
        self._compiled, self._sim = compiled, simulator
        self._dfa = compiled._dfa if compiled is not None else _scanner_dfa(scanner) if scanner else None
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
        if self._sim is not None:
            return self._sim.spans(text)
        if self._re is None:
            import regex

            self._re = regex.compile(self.pattern, regex.V0)
        return [m.span() for m in self._re.finditer(text)]

    def span_arrays(self, text: str):
        """spans() as two numpy int64 arrays (starts, ends): no tuple per match."""
        if self._dfa is not None and self.literal is None:
            return _native_span_arrays(self._dfa, text)
        import numpy as np

        sp = np.array(self.spans(text), dtype=np.int64).reshape(-1, 2)
        return sp[:, 0], sp[:, 1]

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


def _regex_matcher(pattern: str) -> _Matcher:
    """A Split regex, in Oniguruma's semantics as HF tokenizers runs it: compiled with
    ``scantok.compile(pattern, flavor="onig")`` (a shipped scanner whose pattern means the same
    in both flavors runs as is). Outside the supported subset: UnsupportedComponentError."""
    key = "re:" + pattern
    m = _MATCHER_CACHE.get(key)
    if m is not None:
        return m
    from ..compiler import compile_dfa, parse as parse_mod, unicode as uni
    from ..compiler.simulate import Simulator

    tables = uni.load("16.0.0")  # Oniguruma in tokenizers 0.23.3 (measured)
    try:
        tree = parse_mod.parse(pattern, tables, flavor="onig")
        same = tree == parse_mod.parse(pattern, tables, flavor="regex")
    except parse_mod.PatternError as e:
        if "tree" not in locals():
            raise UnsupportedComponentError(f"Split regex: {e}") from None
        same = False
    nat = _native()
    if nat is None:
        m = _Matcher(None, pattern, simulator=Simulator(compile_dfa(pattern, tables, flavor="onig")))
    else:
        ffi, lib = nat
        name = None
        for i in range(lib.scantok_scanner_count()) if same else ():
            dfa = lib.scantok_scanner_at(i)
            if (ffi.string(lib.scantok_scanner_pattern(dfa)).decode("utf-8") == pattern
                    and ffi.string(lib.scantok_scanner_unicode(dfa)).decode() == tables.version):
                name = ffi.string(lib.scantok_scanner_name(dfa)).decode()
                break
        if name is not None:
            m = _Matcher(name, pattern)
        else:
            from ..compiler.runtime import compile as compile_pattern

            m = _Matcher(None, pattern, compiled=compile_pattern(pattern, flavor="onig"))
    _MATCHER_CACHE[key] = m
    return m
