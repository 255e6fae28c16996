"""HuggingFace-compatible WordLevel tokenizer and trainer on compiled scanners (the public
face of :mod:`scantok.hf`, where the components live, one module per kind).

A :class:`WordLevel` is a vocabulary (token -> id), an ``unk_token``, a normalizer and a
pre-tokenizer, with the semantics of HuggingFace ``tokenizers`` (0.23.3): the same ids and the
same offsets (``str`` indices into the original text) for every supported component.

Supported ``tokenizer.json`` components
    normalizers: ``Lowercase``, ``NFC``, ``NFD``, ``NFKC``, ``NFKD``, ``Strip``,
    ``BertNormalizer``, ``Sequence`` of these (or none);
    pre-tokenizers: ``Whitespace``, ``WhitespaceSplit``, ``BertPreTokenizer``, ``Punctuation``,
    ``Digits``, ``Split`` (string or regex pattern; every behavior; ``invert``), ``Sequence`` of
    these (or none);
    added tokens with ``normalized: false`` and no ``lstrip``/``rstrip``/``single_word``;
    no post-processor, no decoder, no truncation, no padding.
Anything else raises :class:`UnsupportedComponentError` naming the component.

The hot path (a single pre-tokenizer that keeps its matches: Whitespace, WhitespaceSplit,
BertPreTokenizer) scans and looks every word up in one C call with the GIL released.
HuggingFace's character classes are reproduced exactly, including where its Unicode tables are
older or newer than Python's (the tables below were measured against ``tokenizers`` 0.23.3 for
every code point).
"""
from __future__ import annotations

from .hf.errors import UnsupportedComponentError, WordLevelError
from .hf.models import WordLevel
from .hf.native import _native
from .hf.normalizers import _lower_char
from .hf.patterns import _builtin_matcher, _onig_translate, _regex_matcher
from .hf.trainers import train_wordlevel
from .hf.unicode_tables import _BERT_PUNCT, _LOWER_TABLE, _NUMERIC

__all__ = [
    "WordLevel",
    "train_wordlevel",
    "WordLevelError",
    "UnsupportedComponentError",
]
<<<<<<< HEAD
# the private names above are the tables and finders the differential tests check
_PRIVATE = (_native, _lower_char, _builtin_matcher, _onig_translate, _regex_matcher, _BERT_PUNCT,
            _LOWER_TABLE, _NUMERIC)
=======


class WordLevelError(ValueError):
    """Invalid WordLevel data, or an encoding error (as HuggingFace raises)."""


class UnsupportedComponentError(WordLevelError):
    """A tokenizer.json component (normalizer, pre-tokenizer, ...) that scantok does not support."""


def _ranges(*chunks: str) -> frozenset[int]:
    out: set[int] = set()
    for part in ",".join(chunks).split(","):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        out.update(range(int(lo, 16), int(hi or lo, 16) + 1))
    return frozenset(out)


def _lower_table(*chunks: str) -> dict[int, str]:
    out: dict[int, str] = {}
    for part in ",".join(chunks).split(","):
        if part:
            cp, _, targets = part.partition(":")
            out[int(cp, 16)] = "".join(chr(int(t, 16)) for t in targets.split("+"))
    return out


def _class(cps: Iterable[int]) -> str:
    """A regex character-class body (without brackets) for a set of code points."""
    s = sorted(cps)
    parts = []
    i = 0
    while i < len(s):
        j = i
        while j + 1 < len(s) and s[j + 1] == s[j] + 1:
            j += 1
        parts.append(f"\\U{s[i]:08X}" if i == j else f"\\U{s[i]:08X}-\\U{s[j]:08X}")
        i = j + 1
    return "".join(parts)


# ------------------------------------------------------------------------------------------------
# native code (scantok._native) -- optional: everything has a pure-Python path
# ------------------------------------------------------------------------------------------------
_NATIVE: Any = None


def _native():
    global _NATIVE
    if _NATIVE is None:
        try:
            import numpy  # noqa: F401  (the C paths exchange numpy buffers)
            from scantok._native import ffi, lib  # type: ignore

            needed = ("vt_new", "vt_encode", "vt_encode_wsplit", "vt_encode_batch", "vt_counter_new",
                      "scantok_scan", "scantok_scanner_find")
            if not all(hasattr(lib, f) for f in needed):
                raise ImportError  # an older build: use the pure-Python paths
            _NATIVE = (ffi, lib)
        except ImportError:
            _NATIVE = False
    return _NATIVE or None


def _scanner_dfa(name: str):
    nat = _native()
    if nat is None:
        return None
    ffi, lib = nat
    dfa = lib.scantok_scanner_find(name.encode())
    return None if dfa == ffi.NULL else dfa


# ------------------------------------------------------------------------------------------------
# matchers: findall-style piece finders, a compiled scanner or the `regex` module as stand-in
# ------------------------------------------------------------------------------------------------
_WS = frozenset(
    [0x9, 0xA, 0xB, 0xC, 0xD, 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029,
     0x202F, 0x205F, 0x3000]
)


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

    def findall(self, text: str) -> list[str]:
        return [text[a:b] for a, b in self.spans(text)]


def _native_spans(dfa, text: str) -> list[tuple[int, int]]:
    import numpy as np

    ffi, lib = _native()
    data = text.encode("utf-8", "surrogatepass")
    n = len(data)
    if n == 0:
        return []
    starts = np.empty(n, dtype=np.uint32)
    ends = np.empty(n, dtype=np.uint32)
    k = lib.scantok_scan(dfa, data, n, lib.SCANTOK_SURROGATEPASS,
                         ffi.cast("uint32_t *", starts.ctypes.data),
                         ffi.cast("uint32_t *", ends.ctypes.data), ffi.NULL)
    starts, ends = starts[:k], ends[:k]
    if len(data) != len(text):  # byte -> str offsets
        lead = (np.frombuffer(data, dtype=np.uint8) & 0xC0) != 0x80
        cum = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(lead, out=cum[1:])
        starts, ends = cum[starts], cum[ends]
    return list(zip(starts.tolist(), ends.tolist()))


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
    from .compiler import compile_dfa, parse as parse_mod, unicode as uni
    from .compiler.simulate import Simulator

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
            from .compiler.runtime import compile as compile_pattern

            m = _Matcher(None, pattern, compiled=compile_pattern(pattern, flavor="onig"))
    _MATCHER_CACHE[key] = m
    return m


# ------------------------------------------------------------------------------------------------
# pre-tokenizers
# ------------------------------------------------------------------------------------------------
_BEHAVIORS = ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous")


class _Step:
    """One HuggingFace split: a matcher, a delimiter behavior and ``invert``."""

    __slots__ = ("matcher", "behavior", "invert")

    def __init__(self, matcher: _Matcher, behavior: str, invert: bool = False):
        self.matcher = matcher
        self.behavior = behavior
        self.invert = invert

    @property
    def keeps_matches_only(self) -> bool:
        return self.behavior == "Removed" and self.invert

    def split(self, text: str, base: int, out: list) -> None:
        """Appends the (start, end) pieces of text (offset by base) to out, as HF's
        NormalizedString::split(pattern, behavior) followed by dropping empty pieces."""
        n = len(text)
        if n == 0:
            return
        spans = self.matcher.spans(text)
        if self.keeps_matches_only:
            out.extend((base + a, base + b) for a, b in spans)
            return
        # (start, end, is_match) covering the text, as Pattern::find_matches
        marks = []
        prev = 0
        for a, b in spans:
            if prev != a:
                marks.append((prev, a, False))
            marks.append((a, b, True))
            prev = b
        if prev != n:
            marks.append((prev, n, False))
        if self.invert:
            marks = [(a, b, not m) for a, b, m in marks]
        beh = self.behavior
        pieces: list[list] = []
        if beh == "Isolated":
            pieces = [[a, b, False] for a, b, _ in marks]
        elif beh == "Removed":
            pieces = [[a, b, m] for a, b, m in marks]
        elif beh == "Contiguous":
            prevm = False
            for a, b, m in marks:
                if m == prevm and pieces:
                    pieces[-1][1] = b
                else:
                    pieces.append([a, b, False])
                prevm = m
        elif beh == "MergedWithPrevious":
            prevm = False
            for a, b, m in marks:
                if m and not prevm and pieces:
                    pieces[-1][1] = b
                else:
                    pieces.append([a, b, False])
                prevm = m
        elif beh == "MergedWithNext":
            prevm = False
            for a, b, m in reversed(marks):
                if m and not prevm and pieces:
                    pieces[-1][0] = a
                else:
                    pieces.append([a, b, False])
                prevm = m
            pieces.reverse()
        for a, b, remove in pieces:
            if not remove and b > a:
                out.append((base + a, base + b))


def _pretok_steps(spec: Any, where: str = "pre_tokenizer") -> list[list[_Step]]:
    """Compiles a HF pre-tokenizer JSON object into a list of stages; each stage is a list of
    splits applied in turn to every piece of the previous stage."""
    if spec is None:
        return []
    if not isinstance(spec, Mapping) or "type" not in spec:
        raise WordLevelError(f"{where}: expected an object with a 'type', got {spec!r}")
    t = spec["type"]
    if t == "Sequence":
        stages: list[list[_Step]] = []
        for i, sub in enumerate(spec.get("pretokenizers", [])):
            stages.extend(_pretok_steps(sub, f"{where}.pretokenizers[{i}]"))
        return stages
    if t == "Whitespace":
        return [[_Step(_builtin_matcher("whitespace"), "Removed", True)]]
    if t == "WhitespaceSplit":
        return [[_Step(_builtin_matcher("whitespace_split"), "Removed", True)]]
    if t == "BertPreTokenizer":
        return [[_Step(_builtin_matcher("bert"), "Removed", True)]]
    if t == "Punctuation":
        beh = spec.get("behavior", "Isolated")
        _check_behavior(beh, where)
        return [[_Step(_builtin_matcher("punct"), beh)]]
    if t == "Digits":
        individual = spec.get("individual_digits", False)
        if not isinstance(individual, bool):
            raise WordLevelError(f"{where}: individual_digits must be a boolean")
        return [[_Step(_builtin_matcher("digit" if individual else "digits"), "Isolated")]]
    if t == "Split":
        pat = spec.get("pattern")
        beh = spec.get("behavior")
        _check_behavior(beh, where)
        invert = spec.get("invert", False)
        if not isinstance(invert, bool):
            raise WordLevelError(f"{where}: invert must be a boolean")
        if isinstance(pat, Mapping) and isinstance(pat.get("String"), str):
            import regex

            lit = pat["String"]
            m = _Matcher(None, regex.escape(lit), literal=lit)
        elif isinstance(pat, Mapping) and isinstance(pat.get("Regex"), str):
            m = _regex_matcher(pat["Regex"])
        else:
            raise WordLevelError(f"{where}: Split pattern must be {{'String': ...}} or {{'Regex': ...}}")
        return [[_Step(m, beh, invert)]]
    raise UnsupportedComponentError(f"{where}: unsupported pre-tokenizer type {t!r}")


def _check_behavior(beh: Any, where: str) -> None:
    if beh not in _BEHAVIORS:
        raise WordLevelError(f"{where}: unknown split behavior {beh!r} (expected one of {', '.join(_BEHAVIORS)})")


def _pretokenize(stages: list[list[_Step]], text: str) -> list[tuple[int, int]]:
    if not text:
        return []
    pieces = [(0, len(text))]
    for stage in stages:
        for step in stage:
            out: list[tuple[int, int]] = []
            if len(pieces) == 1 and pieces[0] == (0, len(text)):
                step.split(text, 0, out)
            else:
                for a, b in pieces:
                    step.split(text[a:b], a, out)
            pieces = out
    return pieces


# ------------------------------------------------------------------------------------------------
# normalizers, with HuggingFace's alignments
# ------------------------------------------------------------------------------------------------
class _NS:
    """A normalized string: ``text`` and, per char, the (start, end) range of the original it
    comes from (``align``), or ``None`` when normalized == original char by char."""

    __slots__ = ("text", "align", "track")

    def __init__(self, text: str, track: bool = True):
        self.text = text
        self.align: list[tuple[int, int]] | None = None
        self.track = track  # False: only the text is wanted (encode without offsets, training)

    def materialize(self) -> list[tuple[int, int]]:
        if self.align is None:
            n = len(self.text)
            self.align = list(zip(range(n), range(1, n + 1)))
        return self.align

    def orig_range(self, a: int, b: int) -> tuple[int, int]:
        if self.align is None:
            return a, b
        return self.align[a][0], self.align[b - 1][1]

    def same_length_map(self, new_text: str) -> None:
        self.text = new_text  # every char replaced by one char (change 0): alignments unchanged

    def filter_out(self, rx) -> None:
        """Removes every character matched by the one-character regex ``rx`` (HF's filter: the
        kept characters keep their alignments)."""
        text = self.text
        if rx.search(text) is None:
            return
        if not self.track:
            self.text = rx.sub("", text)
            return
        align = self.materialize()
        kept_text: list[str] = []
        kept_align: list[tuple[int, int]] = []
        pos = 0
        for m in rx.finditer(text):
            a = m.start()
            kept_text.append(text[pos:a])
            kept_align.extend(align[pos:a])
            pos = a + 1
        kept_text.append(text[pos:])
        kept_align.extend(align[pos:])
        self.text = "".join(kept_text)
        self.align = kept_align

    def transform_regions(self, regions: list[tuple[int, int, list[tuple[str, int]]]]) -> None:
        """Applies HF's transform to disjoint, sorted regions [a, b) of the current text, each
        replaced by (char, change) pairs (change 0: replaces, 1: inserted, -n: replaces and
        removes n following chars).  Chars outside regions are unchanged."""
        if not regions:
            return
        text = self.text
        if not self.track:
            parts: list[str] = []
            pos = 0
            for a, b, dest in regions:
                parts.append(text[pos:a])
                parts.extend(ch for ch, _ in dest)
                pos = b
            parts.append(text[pos:])
            self.text = "".join(parts)
            return
        old = self.materialize()
        new_text: list[str] = []
        new_align: list[tuple[int, int]] = []
        pos = 0
        for a, b, dest in regions:
            new_text.append(text[pos:a])
            new_align.extend(old[pos:a])
            off = a
            for ch, change in dest:
                if change > 0:
                    al = old[off - 1] if off >= 1 else (0, 0)
                else:
                    al = old[off]
                    off += 1 - change
                new_text.append(ch)
                new_align.append(al)
            pos = b
        new_text.append(text[pos:])
        new_align.extend(old[pos:])
        self.text = "".join(new_text)
        self.align = new_align


# -- Lowercase: Rust's char::to_lowercase, per char (no final-sigma rule) --
# _LOWER_TABLE holds every non-ASCII mapping of tokenizers 0.23.3 (Unicode 17), measured, so the
# result does not depend on the Python version's Unicode tables.
_LOWER_MAP: dict[int, str] | None = None


def _lower_map() -> dict[int, str]:
    global _LOWER_MAP
    if _LOWER_MAP is None:
        m = {c: chr(c + 32) for c in range(0x41, 0x5B)}
        m.update(_LOWER_TABLE)
        _LOWER_MAP = m
    return _LOWER_MAP


def _lower_char(c: str) -> str:
    if c < "\x80":
        return c.lower()
    return _LOWER_TABLE.get(ord(c), c)


def _lowercase(ns: _NS) -> None:
    t = ns.text
    if t.isascii():
        ns.same_length_map(t.lower())
        return
    low = t.translate(_lower_map())
    if len(low) == len(t):
        ns.same_length_map(low)
        return
    if not ns.track:
        ns.text = low
        return
    regions = []
    for i, c in enumerate(t):
        lc = _lower_char(c)
        if lc != c:
            regions.append((i, i + 1, [(x, 1 if k else 0) for k, x in enumerate(lc)]))
    ns.transform_regions(regions)


# -- Unicode normalization forms, with unicode-normalization-alignments' changes --
def _freeze(form: str) -> frozenset[int]:
    return {"NFD": _FREEZE_NFD, "NFKD": _FREEZE_NFKD, "NFC": _FREEZE_NFC, "NFKC": _FREEZE_NFKC}[form]


_COMPOSE_CACHE: dict[tuple[str, str], str | None] = {}


def _compose_pair(a: str, b: str) -> str | None:
    key = (a, b)
    r = _COMPOSE_CACHE.get(key, 0)
    if r == 0:
        x = unicodedata.normalize("NFC", a + b)
        r = x if len(x) == 1 else None
        _COMPOSE_CACHE[key] = r
    return r  # type: ignore[return-value]


def _nf_chunk(chunk: str, form: str, frozen: frozenset[int]) -> list[tuple[str, int]]:
    """(char, change) pairs for one chunk, as unicode-normalization-alignments produces them:
    per original char its decomposition (first 0, the rest +1), canonical reordering carrying
    the changes, then (for C/KC) composition, a composite absorbing the other's consumption."""
    decomp_form = "NFD" if form in ("NFD", "NFC") else "NFKD"
    items: list[list] = []  # [char, consumed-original-count, ccc]
    for c in chunk:
        if ord(c) in frozen:
            items.append([c, 1, 0])
            continue
        d = unicodedata.normalize(decomp_form, c)
        for k, x in enumerate(d):
            items.append([x, 0 if k else 1, unicodedata.combining(x)])
    # canonical ordering: stable sort of each run of non-starters by ccc
    i = 0
    n = len(items)
    while i < n:
        if items[i][2] == 0:
            i += 1
            continue
        j = i
        while j < n and items[j][2] != 0:
            j += 1
        if j - i > 1:
            items[i:j] = sorted(items[i:j], key=lambda it: it[2])
        i = j
    if form in ("NFC", "NFKC") and items:
        out: list[list] = [items[0]]
        starter = 0 if items[0][2] == 0 else None
        last_cc = 0 if items[0][2] == 0 else 256
        for it in items[1:]:
            cc = it[2]
            if starter is not None and (last_cc < cc or last_cc == 0):
                comp = _compose_pair(out[starter][0], it[0])
                if comp is not None and ord(out[starter][0]) not in frozen and ord(it[0]) not in frozen:
                    out[starter] = [comp, out[starter][1] + it[1], 0]
                    continue
            if cc == 0:
                starter = len(out)
            last_cc = cc
            out.append(it)
        items = out
    return [(c, 1 - cons) for c, cons, _ in items]


def _unicode_nf(ns: _NS, form: str) -> None:
    t = ns.text
    if t.isascii():
        return
    frozen = _freeze(form)
    has_frozen = bool(frozen) and not frozen.isdisjoint(map(ord, t))
    if not has_frozen and unicodedata.is_normalized(form, t):
        return
    import regex

    if not ns.track:  # text only: normalize the stretches between characters HF leaves alone
        if not has_frozen:
            ns.text = unicodedata.normalize(form, t)
        else:
            fz = "".join(f"\\U{c:08X}" for c in sorted(frozen))
            ns.text = "".join(p if i % 2 else unicodedata.normalize(form, p)
                              for i, p in enumerate(regex.split(f"([{fz}])", t)))
        return

    regions = []
    for m in regex.finditer(r"[\x00-\x7f]?[^\x00-\x7f]+", t):
        a, b = m.span()
        chunk = t[a:b]
        if not frozen.intersection(map(ord, chunk)) and unicodedata.is_normalized(form, chunk):
            continue
        regions.append((a, b, _nf_chunk(chunk, form, frozen)))
    ns.transform_regions(regions)


def _strip(ns: _NS, left: bool, right: bool) -> None:
    t = ns.text
    n = len(t)
    i = 0
    if left:
        while i < n and ord(t[i]) in _WS:
            i += 1
    j = n
    if right:
        while j > i and ord(t[j - 1]) in _WS:
            j -= 1
    if i == 0 and j == n:
        return
    if (ns.align is None and i == 0) or not ns.track:
        ns.text = t[i:j]
        return
    align = ns.materialize()
    ns.text = t[i:j]
    ns.align = align[i:j]


_CHAR_RE: dict = {}


def _char_re(kind: str):
    """A one-character `regex` for a measured table (compiled on first use)."""
    rx = _CHAR_RE.get(kind)
    if rx is None:
        import regex

        cps = {"bert_removed": _BERT_REMOVED, "mn": _HF_MN,
               "cjk": [c for lo, hi in _CJK_RANGES for c in (lo, hi)]}[kind]
        if kind == "cjk":
            body = "".join(f"\\U{lo:08X}-\\U{hi:08X}" for lo, hi in _CJK_RANGES)
        else:
            body = _class(cps)
        rx = _CHAR_RE[kind] = regex.compile(f"[{body}]")
    return rx


_CJK_RANGES = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
               (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))


_BERT_WS_MAP = None


def _bert(ns: _NS, clean_text: bool, chinese: bool, strip_accents: bool | None, lowercase: bool) -> None:
    global _BERT_WS_MAP
    if clean_text:
        ns.filter_out(_char_re("bert_removed"))
        if _BERT_WS_MAP is None:
            _BERT_WS_MAP = {cp: " " for cp in _WS | {9, 10, 13}}
        ns.same_length_map(ns.text.translate(_BERT_WS_MAP))
    if chinese:
        t = ns.text
        if not t.isascii():
            regions = [(m.start(), m.end(), [(" ", 0), (m.group(), 1), (" ", 1)])
                       for m in _char_re("cjk").finditer(t)]
            ns.transform_regions(regions)
    if strip_accents if strip_accents is not None else lowercase:
        _unicode_nf(ns, "NFD")
        ns.filter_out(_char_re("mn"))
    if lowercase:
        _lowercase(ns)


def _norm_steps(spec: Any, where: str = "normalizer") -> list:
    """Compiles a HF normalizer JSON object into a list of callables on _NS."""
    if spec is None:
        return []
    if not isinstance(spec, Mapping) or "type" not in spec:
        raise WordLevelError(f"{where}: expected an object with a 'type', got {spec!r}")
    t = spec["type"]
    if t == "Sequence":
        out = []
        for i, sub in enumerate(spec.get("normalizers", [])):
            out.extend(_norm_steps(sub, f"{where}.normalizers[{i}]"))
        return out
    if t == "Lowercase":
        return [_lowercase]
    if t in ("NFC", "NFD", "NFKC", "NFKD"):
        return [lambda ns, f=t: _unicode_nf(ns, f)]
    if t == "Strip":
        left = spec.get("strip_left", True)
        right = spec.get("strip_right", True)
        return [lambda ns: _strip(ns, bool(left), bool(right))]
    if t == "BertNormalizer":
        args = (
            bool(spec.get("clean_text", True)),
            bool(spec.get("handle_chinese_chars", True)),
            spec.get("strip_accents"),
            bool(spec.get("lowercase", True)),
        )
        return [lambda ns: _bert(ns, *args)]
    raise UnsupportedComponentError(f"{where}: unsupported normalizer type {t!r}")


# ------------------------------------------------------------------------------------------------
# component specs from user-friendly arguments
# ------------------------------------------------------------------------------------------------
_PRETOK_NAMES = {
    "whitespace": {"type": "Whitespace"},
    "whitespace_split": {"type": "WhitespaceSplit"},
    "bert": {"type": "BertPreTokenizer"},
    "punctuation": {"type": "Punctuation", "behavior": "Isolated"},
    "digits": {"type": "Digits", "individual_digits": False},
}
_NORM_NAMES = {
    "lowercase": {"type": "Lowercase"},
    "nfc": {"type": "NFC"},
    "nfd": {"type": "NFD"},
    "nfkc": {"type": "NFKC"},
    "nfkd": {"type": "NFKD"},
    "strip": {"type": "Strip", "strip_left": True, "strip_right": True},
    "bert": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
             "strip_accents": None, "lowercase": True},
}


def _as_spec(obj: Any, names: Mapping[str, dict], kind: str) -> dict | None:
    if obj is None:
        return None
    if isinstance(obj, str):
        if obj not in names:
            raise UnsupportedComponentError(f"unknown {kind} name {obj!r} (known: {', '.join(sorted(names))})")
        return json.loads(json.dumps(names[obj]))
    if isinstance(obj, Mapping):
        return json.loads(json.dumps(obj))
    if hasattr(obj, "__getstate__"):  # a `tokenizers` component object
        state = obj.__getstate__()
        if isinstance(state, (bytes, str)):
            return json.loads(state)
    if isinstance(obj, (list, tuple)):
        key = "pretokenizers" if kind == "pre-tokenizer" else "normalizers"
        return {"type": "Sequence", key: [_as_spec(o, names, kind) for o in obj]}
    raise WordLevelError(f"cannot use {obj!r} as a {kind}")


def _compose_specs(normalizer, pre_tokenizer, *, lowercase=False, split_on_cjk=False,
                   split_on_punctuation=False):
    norm = _as_spec(normalizer, _NORM_NAMES, "normalizer")
    pre = _as_spec(pre_tokenizer, _PRETOK_NAMES, "pre-tokenizer")
    extra_norm = []
    if split_on_cjk:
        extra_norm.append({"type": "BertNormalizer", "clean_text": False, "handle_chinese_chars": True,
                           "strip_accents": False, "lowercase": False})
    if lowercase:
        extra_norm.append({"type": "Lowercase"})
    if extra_norm:
        parts = ([norm] if norm else []) + extra_norm
        norm = parts[0] if len(parts) == 1 else {"type": "Sequence", "normalizers": parts}
    if split_on_punctuation:
        p = {"type": "Punctuation", "behavior": "Isolated"}
        pre = p if pre is None else {"type": "Sequence", "pretokenizers": [pre, p]}
    return norm, pre


# ------------------------------------------------------------------------------------------------
# the tokenizer
# ------------------------------------------------------------------------------------------------
class WordLevel:
    """A HuggingFace-compatible WordLevel tokenizer.

    ``WordLevel(vocab, unk_token="[UNK]", normalizer=None, pre_tokenizer="whitespace_split",
    *, added_tokens=(), lowercase=False, split_on_cjk=False, split_on_punctuation=False)``

    ``normalizer`` / ``pre_tokenizer`` are HF JSON objects (dicts), ``tokenizers`` component
    objects, short names (``"whitespace"``, ``"whitespace_split"``, ``"bert"``,
    ``"punctuation"``, ``"digits"``; ``"lowercase"``, ``"nfc"``, ..., ``"strip"``, ``"bert"``),
    lists of these (a Sequence), or ``None``.  ``lowercase`` appends a Lowercase normalizer,
    ``split_on_cjk`` makes each CJK ideograph its own word (BERT's handle_chinese_chars),
    ``split_on_punctuation`` appends an isolating Punctuation pre-tokenizer.
    """

    def __init__(self, vocab: Mapping[str, int], unk_token: str = "[UNK]", normalizer: Any = None,
                 pre_tokenizer: Any = "whitespace_split", *, added_tokens: Sequence[Mapping] = (),
                 lowercase: bool = False, split_on_cjk: bool = False, split_on_punctuation: bool = False):
        if not isinstance(vocab, Mapping):
            raise WordLevelError("vocab must be a mapping of token -> id")
        clean: dict[str, int] = {}
        for tok, idx in vocab.items():
            if not isinstance(tok, str):
                raise WordLevelError(f"vocab: token {tok!r} is not a string")
            if isinstance(idx, bool) or not isinstance(idx, int) or not 0 <= idx <= 0x7FFFFFFF:
                raise WordLevelError(f"vocab: id of {tok!r} must be an integer in [0, 2**31), got {idx!r}")
            clean[tok] = idx
        if not isinstance(unk_token, str):
            raise WordLevelError("unk_token must be a string")
        norm, pre = _compose_specs(normalizer, pre_tokenizer, lowercase=lowercase,
                                   split_on_cjk=split_on_cjk, split_on_punctuation=split_on_punctuation)
        self._vocab = clean
        self._unk_token = unk_token
        self._norm_spec = norm
        self._pre_spec = pre
        self._norm = _norm_steps(norm)
        self._stages = _pretok_steps(pre)
        self._added = [self._check_added(t, i) for i, t in enumerate(added_tokens)]
        self._setup()

    # -- construction helpers --
    @staticmethod
    def _check_added(tok: Any, i: int) -> dict:
        where = f"added_tokens[{i}]"
        if not isinstance(tok, Mapping):
            raise WordLevelError(f"{where}: expected an object")
        if not isinstance(tok.get("content"), str) or not tok["content"]:
            raise WordLevelError(f"{where}: 'content' must be a non-empty string")
        idx = tok.get("id")
        if isinstance(idx, bool) or not isinstance(idx, int) or idx < 0:
            raise WordLevelError(f"{where}: 'id' must be a non-negative integer")
        for opt in ("single_word", "lstrip", "rstrip"):
            if tok.get(opt, False):
                raise UnsupportedComponentError(f"{where}: added token option {opt}=true is not supported")
        if tok.get("normalized", False):
            raise UnsupportedComponentError(f"{where}: added token with normalized=true is not supported")
        return {
            "id": idx, "content": tok["content"], "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": bool(tok.get("special", False)),
        }

    def _setup(self) -> None:
        self._inv: dict[int, str] = {}
        for tok, idx in self._vocab.items():
            self._inv[idx] = tok
        self._added_by_content = {t["content"]: t for t in self._added}
        self._added_by_id = {t["id"]: t["content"] for t in self._added}
        self._special = {t["content"] for t in self._added if t["special"]}
        self._unk_id = self._vocab.get(self._unk_token)
        self._added_re = None
        if self._added:
            import regex

            alts = sorted((t["content"] for t in self._added), key=len, reverse=True)
            self._added_re = regex.compile("|".join(regex.escape(a) for a in alts))
        # the hot path: one split that keeps its matches
        self._fast = None
        if len(self._stages) == 1 and len(self._stages[0]) == 1 and self._stages[0][0].keeps_matches_only:
            self._fast = self._stages[0][0].matcher
        self._table = None
        self._fused = True  # use the hand-written WhitespaceSplit loop (False: the compiled scanner)
        nat = _native()
        if nat is not None:
            ffi, lib = nat
            table = lib.vt_new(len(self._vocab))
            if table == ffi.NULL:
                raise MemoryError
            table = ffi.gc(table, lib.vt_free)
            for tok, idx in self._vocab.items():
                b = tok.encode("utf-8", "surrogatepass")
                if lib.vt_insert(table, b, len(b), idx) < 0:
                    raise MemoryError
            self._table = table

    # -- loading / saving --
    @classmethod
    def from_file(cls, path: str | os.PathLike) -> "WordLevel":
        with open(path, "rb") as f:
            raw = f.read()
        try:
            return cls.from_str(raw)
        except WordLevelError as e:
            raise type(e)(f"{os.fspath(path)}: {e}") from None

    @classmethod
    def from_str(cls, data: str | bytes) -> "WordLevel":
        try:
            obj = json.loads(data)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise WordLevelError(f"not valid JSON: {e}") from None
        if not isinstance(obj, dict):
            raise WordLevelError("tokenizer.json must hold a JSON object")
        model = obj.get("model")
        if not isinstance(model, dict):
            raise WordLevelError("missing 'model' object")
        mtype = model.get("type")
        if mtype != "WordLevel":
            raise UnsupportedComponentError(f"model: unsupported model type {mtype!r} (only WordLevel)")
        for key in ("post_processor", "decoder", "truncation", "padding"):
            val = obj.get(key)
            if val is not None:
                what = val.get("type", "") if isinstance(val, dict) else ""
                raise UnsupportedComponentError(f"{key}: unsupported {key} {what!r}".replace(" ''", ""))
        vocab = model.get("vocab")
        if not isinstance(vocab, dict):
            raise WordLevelError("model.vocab must be an object")
        unk = model.get("unk_token", "<unk>")
        added = obj.get("added_tokens") or []
        if not isinstance(added, list):
            raise WordLevelError("added_tokens must be a list")
        return cls(vocab, unk, obj.get("normalizer"), obj.get("pre_tokenizer"), added_tokens=added)

    def to_json(self) -> dict:
        return {
            "version": "1.0",
            "truncation": None,
            "padding": None,
            "added_tokens": [dict(t) for t in self._added],
            "normalizer": self._norm_spec,
            "pre_tokenizer": self._pre_spec,
            "post_processor": None,
            "decoder": None,
            "model": {
                "type": "WordLevel",
                "vocab": dict(sorted(self._vocab.items(), key=lambda kv: (kv[1], kv[0]))),
                "unk_token": self._unk_token,
            },
        }

    def to_str(self, pretty: bool = False) -> str:
        return json.dumps(self.to_json(), ensure_ascii=False, indent=2 if pretty else None)

    def save(self, path: str | os.PathLike, pretty: bool = True) -> None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.to_str(pretty))

    def to_hf(self):
        """The equivalent ``tokenizers.Tokenizer`` (needs the `tokenizers` package)."""
        from tokenizers import Tokenizer

        return Tokenizer.from_str(self.to_str())

    # -- vocabulary --
    @property
    def unk_token(self) -> str:
        return self._unk_token

    @property
    def normalizer(self) -> dict | None:
        return self._norm_spec

    @property
    def pre_tokenizer(self) -> dict | None:
        return self._pre_spec

    def get_vocab(self) -> dict[str, int]:
        v = dict(self._vocab)
        for t in self._added:
            v[t["content"]] = t["id"]
        return v

    def get_vocab_size(self) -> int:
        return len(self.get_vocab())

    def __len__(self) -> int:
        return self.get_vocab_size()

    def token_to_id(self, token: str) -> int | None:
        a = self._added_by_content.get(token)
        if a is not None:
            return a["id"]
        return self._vocab.get(token)

    def id_to_token(self, idx: int) -> str | None:
        t = self._added_by_id.get(idx)
        return t if t is not None else self._inv.get(idx)

    def __repr__(self) -> str:
        return (f"WordLevel(vocab_size={len(self._vocab)}, unk_token={self._unk_token!r}, "
                f"normalizer={self._norm_spec!r}, pre_tokenizer={self._pre_spec!r})")

    # -- normalization / pre-tokenization --
    def normalize(self, text: str) -> str:
        """The normalized text (as HF's ``normalizer.normalize_str``)."""
        ns = _NS(text, track=False)
        for step in self._norm:
            step(ns)
        return ns.text

    def _normalized(self, text: str) -> _NS:
        ns = _NS(text)
        for step in self._norm:
            step(ns)
        return ns

    def pre_tokenize(self, text: str) -> list[tuple[str, tuple[int, int]]]:
        """Words and their offsets in ``text`` (normalizer applied first; no added tokens)."""
        ns = self._normalized(text)
        pieces = self._pieces(ns.text)
        return [(ns.text[a:b], ns.orig_range(a, b)) for a, b in pieces]

    def _pieces(self, text: str) -> list[tuple[int, int]]:
        if not self._stages:
            return [(0, len(text))] if text else []
        return _pretokenize(self._stages, text)

    def _segments(self, text: str) -> Iterator[tuple[int, int, int | None]]:
        """(start, end, added-token id or None) covering text."""
        if self._added_re is None:
            yield 0, len(text), None
            return
        pos = 0
        for m in self._added_re.finditer(text):
            a, b = m.span()
            if a > pos:
                yield pos, a, None
            yield a, b, self._added_by_content[m.group()]["id"]
            pos = b
        if pos < len(text):
            yield pos, len(text), None

    # -- encoding --
    def _missing_unk(self):
        return WordLevelError(f"WordLevel error: Missing {self._unk_token} token from the vocabulary")

    def _lookup(self, words: Iterable[str]) -> list[int]:
        v, unk = self._vocab, self._unk_id
        out = []
        for w in words:
            i = v.get(w)
            if i is None:
                if unk is None:
                    raise self._missing_unk()
                i = unk
            out.append(i)
        return out

    def _encode_plain(self, text: str, offsets: bool, as_numpy: bool = False):
        """ids (and offsets, in normalized-text str indices) of one segment without added tokens."""
        if self._native_fast():
            return self._encode_native(text, offsets, as_numpy)
        pieces = self._pieces(text)
        ids = self._lookup(text[a:b] for a, b in pieces)
        if as_numpy:
            import numpy as np

            ids = np.asarray(ids, dtype=np.int32)
        return (ids, pieces) if offsets else ids

    def _encode_native(self, text: str, offsets: bool, as_numpy: bool):
        import numpy as np

        ffi, lib = _native()
        data = text.encode("utf-8", "surrogatepass")
        n = len(data)
        if n == 0:
            ids = np.empty(0, dtype=np.int32) if as_numpy else []
            return (ids, []) if offsets else ids
        ids = np.empty(n, dtype=np.int32)
        unk = -1 if self._unk_id is None else self._unk_id
        pids = ffi.cast("int32_t *", ids.ctypes.data)
        if offsets:
            st = np.empty(n, dtype=np.uint32)
            en = np.empty(n, dtype=np.uint32)
            pst, pen = ffi.cast("uint32_t *", st.ctypes.data), ffi.cast("uint32_t *", en.ctypes.data)
        else:
            pst = pen = ffi.NULL
        if self._fast.scanner == "whitespace_split" and self._fused:
            k = lib.vt_encode_wsplit(self._table, data, n, unk, pids, pst, pen, 1)
        else:
            k = lib.vt_encode(self._table, self._fast.dfa, data, n, lib.SCANTOK_SURROGATEPASS, unk,
                              pids, pst, pen, 1)
        if k < 0:
            if k == -(2**63):
                raise MemoryError
            raise self._missing_unk()
        out = ids[:k].copy() if as_numpy else ids[:k].tolist()
        if offsets:
            return out, list(zip(st[:k].tolist(), en[:k].tolist()))
        return out

    def encode(self, text: str, *, as_numpy: bool = False):
        """Token ids of ``text`` (a list, or a numpy ``int32`` array with ``as_numpy=True``)."""
        if not isinstance(text, str):
            raise TypeError(f"encode() expects str, got {type(text).__name__}")
        if self._added_re is None:
            return self._encode_plain(self.normalize(text) if self._norm else text, False, as_numpy)
        ids: list[int] = []
        for a, b, aid in self._segments(text):
            if aid is not None:
                ids.append(aid)
            else:
                seg = text[a:b]
                ids.extend(self._encode_plain(self.normalize(seg) if self._norm else seg, False))
        if as_numpy:
            import numpy as np

            return np.asarray(ids, dtype=np.int32)
        return ids

    def encode_with_offsets(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        """``(ids, offsets)``; offsets are ``(start, end)`` str indices into ``text``, as HF's."""
        if not isinstance(text, str):
            raise TypeError(f"encode_with_offsets() expects str, got {type(text).__name__}")
        ids: list[int] = []
        offs: list[tuple[int, int]] = []
        for a, b, aid in self._segments(text):
            if aid is not None:
                ids.append(aid)
                offs.append((a, b))
                continue
            seg = text[a:b]
            ns = self._normalized(seg)
            sids, pieces = self._encode_plain(ns.text, True)
            ids.extend(sids)
            if ns.align is None:
                if a == 0 and not offs:
                    offs = pieces if isinstance(pieces, list) else list(pieces)
                else:
                    offs.extend((a + s, a + e) for s, e in pieces)
            else:
                al = ns.align
                offs.extend((a + al[s][0], a + al[e - 1][1]) for s, e in pieces)
        return ids, offs

    def encode_batch(self, texts: Sequence[str], num_threads: int | None = None, *,
                     with_offsets: bool = False, as_numpy: bool = False):
        """Encodes every text; ``num_threads`` > 1 uses a thread pool (the C scan and lookup run
        without the GIL).  Returns a list of what :meth:`encode` (or, with ``with_offsets``,
        :meth:`encode_with_offsets`) returns."""
        if isinstance(texts, str):
            raise TypeError("encode_batch() expects a sequence of strings, not a single str")
        if num_threads is None:
            num_threads = os.cpu_count() or 1
        if not with_offsets and self._native_fast() and self._added_re is None and texts:
            return self._encode_batch_native(texts, num_threads, as_numpy)
        if with_offsets:
            fn = self.encode_with_offsets
        else:
            def fn(t, _e=self.encode, _n=as_numpy):
                return _e(t, as_numpy=_n)
        if num_threads <= 1 or len(texts) <= 1:
            return [fn(t) for t in texts]
        with ThreadPoolExecutor(max_workers=num_threads) as pool:
            return list(pool.map(fn, texts, chunksize=max(1, len(texts) // (num_threads * 4))))

    def _native_fast(self) -> bool:
        """True when encode runs as one C call (scan + lookup) per text."""
        if self._fast is None or self._table is None:
            return False
        return (self._fast.scanner == "whitespace_split" and self._fused) or self._fast.dfa is not None

    def _encode_batch_native(self, texts: Sequence[str], num_threads: int, as_numpy: bool):
        import numpy as np

        ffi, lib = _native()
        for t in texts:
            if not isinstance(t, str):
                raise TypeError(f"encode_batch() expects strings, got {type(t).__name__}")
        norm = self.normalize if self._norm else None
        encoded = [(norm(t) if norm else t).encode("utf-8", "surrogatepass") for t in texts]
        offsets = np.zeros(len(encoded) + 1, dtype=np.uint64)
        np.cumsum([len(b) for b in encoded], out=offsets[1:])
        data = b"".join(encoded)
        total = int(offsets[-1])
        ids = np.empty(max(total, 1), dtype=np.int32)
        counts = np.empty(len(encoded), dtype=np.int64)
        dfa = ffi.NULL if (self._fast.scanner == "whitespace_split" and self._fused) else self._fast.dfa
        unk = -1 if self._unk_id is None else self._unk_id
        rc = lib.vt_encode_batch(self._table, dfa, data, ffi.cast("uint64_t *", offsets.ctypes.data),
                                 len(encoded), lib.SCANTOK_SURROGATEPASS, unk,
                                 ffi.cast("int32_t *", ids.ctypes.data),
                                 ffi.cast("int64_t *", counts.ctypes.data), max(1, int(num_threads)))
        if rc == -(2**63):
            raise MemoryError
        if rc < 0:
            raise self._missing_unk()
        offs = offsets[:-1].tolist()
        cnts = counts.tolist()
        if as_numpy:
            return [ids[o:o + c].copy() for o, c in zip(offs, cnts)]
        return [ids[o:o + c].tolist() for o, c in zip(offs, cnts)]

    def decode(self, ids: Iterable[int], skip_special_tokens: bool = True) -> str:
        """As HF with no decoder: the tokens joined by spaces; unknown ids are skipped, and so
        are special added tokens when ``skip_special_tokens``."""
        out = []
        for i in ids:
            tok = self.id_to_token(int(i))
            if tok is None or (skip_special_tokens and tok in self._special):
                continue
            out.append(tok)
        return " ".join(out)


# ------------------------------------------------------------------------------------------------
# training
# ------------------------------------------------------------------------------------------------
def _count_native(dfa, text: str, ccounter) -> None:
    ffi, lib = _native()
    data = text.encode("utf-8", "surrogatepass")
    if lib.vt_count(ccounter, dfa, data, len(data), lib.SCANTOK_SURROGATEPASS) < 0:
        raise MemoryError


def _dump_native(ccounter) -> list[tuple[bytes, int]]:
    import numpy as np

    ffi, lib = _native()
    size = lib.vt_counter_size(ccounter)
    kb = lib.vt_counter_keybytes(ccounter)
    keys = ffi.new("char[]", max(1, kb))
    lens = np.empty(size, dtype=np.uint32)
    counts = np.empty(size, dtype=np.int64)
    lib.vt_counter_dump(ccounter, keys, ffi.cast("uint32_t *", lens.ctypes.data),
                        ffi.cast("int64_t *", counts.ctypes.data))
    buf = ffi.buffer(keys, kb)[:]
    out = []
    off = 0
    for ln, c in zip(lens.tolist(), counts.tolist()):
        out.append((buf[off:off + ln], c))
        off += ln
    return out


def train_wordlevel(files_or_iterator: Any, *, vocab_size: int, min_frequency: int = 0,
                    special_tokens: Sequence[str] = (), pre_tokenizer: Any = "whitespace_split",
                    normalizer: Any = None, unk_token: str = "<unk>", lowercase: bool = False,
                    split_on_cjk: bool = False, split_on_punctuation: bool = False) -> WordLevel:
    """Trains a WordLevel vocabulary exactly like HF's ``WordLevelTrainer`` through
    ``Tokenizer.train(files)`` / ``Tokenizer.train_from_iterator(iterator)``.

    ``files_or_iterator``: a path (``str`` or ``os.PathLike``), a list of ``PathLike`` or of
    names of existing files (each read line by line, keeping line endings, as HF's
    ``Tokenizer.train(files)``), or any other iterable of strings (each one sequence, as
    ``train_from_iterator``).  The vocabulary is the
    special tokens (ids 0..), then the words with count >= ``min_frequency`` by decreasing count,
    ties broken by the words' UTF-8 bytes, cut at ``vocab_size`` entries.  The special tokens
    also become special added tokens, as HF's ``Tokenizer.train`` makes them.
    """
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int) or vocab_size < 0:
        raise ValueError("vocab_size must be a non-negative integer")
    proto = WordLevel({}, unk_token, normalizer, pre_tokenizer, lowercase=lowercase,
                      split_on_cjk=split_on_cjk, split_on_punctuation=split_on_punctuation)
    specials = list(special_tokens)

    if isinstance(files_or_iterator, (str, os.PathLike)):
        files_or_iterator = [files_or_iterator]
    is_files = isinstance(files_or_iterator, (list, tuple)) and len(files_or_iterator) > 0 and (
        all(isinstance(f, os.PathLike) for f in files_or_iterator)
        or all(isinstance(f, str) and os.path.isfile(f) for f in files_or_iterator))

    # A single split that keeps only matches that never contain "\n": counting words over a
    # whole file equals counting them line by line.
    fast = proto._fast
    whole_text_ok = fast is not None and fast.scanner in ("whitespace", "whitespace_split", "hf_bert")
    nat = _native() if (fast is not None and fast.dfa is not None) else None

    def sequences() -> Iterator[tuple[str, bool]]:
        if is_files:
            for f in files_or_iterator:
                with open(f, "r", encoding="utf-8", newline="") as fh:
                    if whole_text_ok:
                        yield fh.read(), True
                    else:
                        for line in _lines_with_ending(fh.read()):
                            yield line, False
        else:
            for s in files_or_iterator:
                if not isinstance(s, str):
                    raise TypeError(f"training data must be strings, got {type(s).__name__}")
                yield s, whole_text_ok

    counts: Counter = Counter()
    if nat is not None and whole_text_ok:
        ffi, lib = nat
        cc = ffi.gc(lib.vt_counter_new(), lib.vt_counter_free)
        for s, _ in sequences():
            s = proto.normalize(s) if proto._norm else s
            _count_native(fast.dfa, s, cc)
        items = [(k.decode("utf-8", "surrogatepass"), c) for k, c in _dump_native(cc)]
    else:
        for s, _ in sequences():
            ns = proto.normalize(s) if proto._norm else s
            counts.update(ns[a:b] for a, b in proto._pieces(ns))
        items = list(counts.items())

    items.sort(key=lambda kv: (-kv[1], kv[0].encode("utf-8", "surrogatepass")))
    vocab: dict[str, int] = {}
    i = 0
    for tok in specials:
        if i >= vocab_size:
            break
        vocab[tok] = i
        i += 1
    for w, c in items:
        if i >= vocab_size:
            break
        if c < min_frequency:
            continue
        vocab[w] = i
        i += 1
    # HF's Tokenizer.train then adds every special token to the added vocabulary: a token of the
    # model keeps its id, others get ids after the model's (AddedVocabulary::add_tokens)
    added_ids: dict[str, int] = {}
    for t in dict.fromkeys(specials):
        if t in vocab:
            nid = vocab[t]
        elif not added_ids:
            nid = len(vocab)
        else:
            mx = max(added_ids.values())
            nid = mx + 1 if (mx >= len(vocab) or len(vocab) == 0) else len(vocab)
        added_ids[t] = nid
    added = [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for t, i in added_ids.items()]
    return WordLevel(vocab, unk_token, proto._norm_spec, proto._pre_spec, added_tokens=added)


def _lines_with_ending(text: str) -> Iterator[str]:
    pos = 0
    n = len(text)
    while pos < n:
        j = text.find("\n", pos)
        if j < 0:
            yield text[pos:]
            return
        yield text[pos:j + 1]
        pos = j + 1


# ------------------------------------------------------------------------------------------------
# character tables measured from tokenizers 0.23.3, every code point
#   _BERT_PUNCT: BertPreTokenizer / Punctuation split chars (ASCII punctuation + its \p{P})
#   _NUMERIC: Digits' char::is_numeric (Unicode 17 \p{N})
#   _BERT_REMOVED: chars BertNormalizer(clean_text) removes
#   _HF_MN: nonspacing marks BertNormalizer(strip_accents) removes after NFD
#   _FREEZE_*: chars Python's unicodedata normalizes but HF's (older) tables leave unchanged
#   _LOWER_TABLE: Lowercase (char::to_lowercase) of every non-ASCII char it changes
# ------------------------------------------------------------------------------------------------

_BERT_PUNCT = _ranges(
    "0x21-0x2F,0x3A-0x40,0x5B-0x60,0x7B-0x7E,0xA1,0xA7,0xAB,0xB6-0xB7,0xBB,0xBF,0x37E,0x387,"
    "0x55A-0x55F,0x589-0x58A,0x5BE,0x5C0,0x5C3,0x5C6,0x5F3-0x5F4,0x609-0x60A,0x60C-0x60D,0x61B,"
    "0x61E-0x61F,0x66A-0x66D,0x6D4,0x700-0x70D,0x7F7-0x7F9,0x830-0x83E,0x85E,0x964-0x965,0x970,"
    "0xAF0,0xDF4,0xE4F,0xE5A-0xE5B,0xF04-0xF12,0xF14,0xF3A-0xF3D,0xF85,0xFD0-0xFD4,0xFD9-0xFDA,"
    "0x104A-0x104F,0x10FB,0x1360-0x1368,0x1400,0x166D-0x166E,0x169B-0x169C,0x16EB-0x16ED,"
    "0x1735-0x1736,0x17D4-0x17D6,0x17D8-0x17DA,0x1800-0x180A,0x1944-0x1945,0x1A1E-0x1A1F,"
    "0x1AA0-0x1AA6,0x1AA8-0x1AAD,0x1B5A-0x1B60,0x1BFC-0x1BFF,0x1C3B-0x1C3F,0x1C7E-0x1C7F,"
    "0x1CC0-0x1CC7,0x1CD3,0x2010-0x2027,0x2030-0x2043,0x2045-0x2051,0x2053-0x205E,0x207D-0x207E,"
    "0x208D-0x208E,0x2308-0x230B,0x2329-0x232A,0x2768-0x2775,0x27C5-0x27C6,0x27E6-0x27EF,"
    "0x2983-0x2998,0x29D8-0x29DB,0x29FC-0x29FD,0x2CF9-0x2CFC,0x2CFE-0x2CFF,0x2D70,0x2E00-0x2E2E,"
    "0x2E30-0x2E42,0x3001-0x3003,0x3008-0x3011,0x3014-0x301F,0x3030,0x303D,0x30A0,0x30FB,"
    "0xA4FE-0xA4FF,0xA60D-0xA60F,0xA673,0xA67E,0xA6F2-0xA6F7,0xA874-0xA877,0xA8CE-0xA8CF,"
    "0xA8F8-0xA8FA,0xA8FC,0xA92E-0xA92F,0xA95F,0xA9C1-0xA9CD,0xA9DE-0xA9DF,0xAA5C-0xAA5F,"
    "0xAADE-0xAADF,0xAAF0-0xAAF1,0xABEB,0xFD3E-0xFD3F,0xFE10-0xFE19,0xFE30-0xFE52,0xFE54-0xFE61,"
    "0xFE63,0xFE68,0xFE6A-0xFE6B,0xFF01-0xFF03,0xFF05-0xFF0A,0xFF0C-0xFF0F,0xFF1A-0xFF1B,"
    "0xFF1F-0xFF20,0xFF3B-0xFF3D,0xFF3F,0xFF5B,0xFF5D,0xFF5F-0xFF65,0x10100-0x10102,0x1039F,"
    "0x103D0,0x1056F,0x10857,0x1091F,0x1093F,0x10A50-0x10A58,0x10A7F,0x10AF0-0x10AF6,"
    "0x10B39-0x10B3F,0x10B99-0x10B9C,0x11047-0x1104D,0x110BB-0x110BC,0x110BE-0x110C1,"
    "0x11140-0x11143,0x11174-0x11175,0x111C5-0x111C9,0x111CD,0x111DB,0x111DD-0x111DF,"
    "0x11238-0x1123D,0x112A9,0x114C6,0x115C1-0x115D7,0x11641-0x11643,0x1173C-0x1173E,"
    "0x12470-0x12474,0x16A6E-0x16A6F,0x16AF5,0x16B37-0x16B3B,0x16B44,0x1BC9F,0x1DA87-0x1DA8B,"
)

_NUMERIC = _ranges(
    "0x30-0x39,0xB2-0xB3,0xB9,0xBC-0xBE,0x660-0x669,0x6F0-0x6F9,0x7C0-0x7C9,0x966-0x96F,"
    "0x9E6-0x9EF,0x9F4-0x9F9,0xA66-0xA6F,0xAE6-0xAEF,0xB66-0xB6F,0xB72-0xB77,0xBE6-0xBF2,"
    "0xC66-0xC6F,0xC78-0xC7E,0xCE6-0xCEF,0xD58-0xD5E,0xD66-0xD78,0xDE6-0xDEF,0xE50-0xE59,"
    "0xED0-0xED9,0xF20-0xF33,0x1040-0x1049,0x1090-0x1099,0x1369-0x137C,0x16EE-0x16F0,"
    "0x17E0-0x17E9,0x17F0-0x17F9,0x1810-0x1819,0x1946-0x194F,0x19D0-0x19DA,0x1A80-0x1A89,"
    "0x1A90-0x1A99,0x1B50-0x1B59,0x1BB0-0x1BB9,0x1C40-0x1C49,0x1C50-0x1C59,0x2070,0x2074-0x2079,"
    "0x2080-0x2089,0x2150-0x2182,0x2185-0x2189,0x2460-0x249B,0x24EA-0x24FF,0x2776-0x2793,0x2CFD,"
    "0x3007,0x3021-0x3029,0x3038-0x303A,0x3192-0x3195,0x3220-0x3229,0x3248-0x324F,0x3251-0x325F,"
    "0x3280-0x3289,0x32B1-0x32BF,0xA620-0xA629,0xA6E6-0xA6EF,0xA830-0xA835,0xA8D0-0xA8D9,"
    "0xA900-0xA909,0xA9D0-0xA9D9,0xA9F0-0xA9F9,0xAA50-0xAA59,0xABF0-0xABF9,0xFF10-0xFF19,"
    "0x10107-0x10133,0x10140-0x10178,0x1018A-0x1018B,0x102E1-0x102FB,0x10320-0x10323,0x10341,"
    "0x1034A,0x103D1-0x103D5,0x104A0-0x104A9,0x10858-0x1085F,0x10879-0x1087F,0x108A7-0x108AF,"
    "0x108FB-0x108FF,0x10916-0x1091B,0x109BC-0x109BD,0x109C0-0x109CF,0x109D2-0x109FF,"
    "0x10A40-0x10A48,0x10A7D-0x10A7E,0x10A9D-0x10A9F,0x10AEB-0x10AEF,0x10B58-0x10B5F,"
    "0x10B78-0x10B7F,0x10BA9-0x10BAF,0x10CFA-0x10CFF,0x10D30-0x10D39,0x10D40-0x10D49,"
    "0x10E60-0x10E7E,0x10F1D-0x10F26,0x10F51-0x10F54,0x10FC5-0x10FCB,0x11052-0x1106F,"
    "0x110F0-0x110F9,0x11136-0x1113F,0x111D0-0x111D9,0x111E1-0x111F4,0x112F0-0x112F9,"
    "0x11450-0x11459,0x114D0-0x114D9,0x11650-0x11659,0x116C0-0x116C9,0x116D0-0x116E3,"
    "0x11730-0x1173B,0x118E0-0x118F2,0x11950-0x11959,0x11BF0-0x11BF9,0x11C50-0x11C6C,"
    "0x11D50-0x11D59,0x11DA0-0x11DA9,0x11DE0-0x11DE9,0x11F50-0x11F59,0x11FC0-0x11FD4,"
    "0x12400-0x1246E,0x16130-0x16139,0x16A60-0x16A69,0x16AC0-0x16AC9,0x16B50-0x16B59,"
    "0x16B5B-0x16B61,0x16D70-0x16D79,0x16E80-0x16E96,0x16FF4-0x16FF6,0x1CCF0-0x1CCF9,"
    "0x1D2C0-0x1D2D3,0x1D2E0-0x1D2F3,0x1D360-0x1D378,0x1D7CE-0x1D7FF,0x1E140-0x1E149,"
    "0x1E2F0-0x1E2F9,0x1E4F0-0x1E4F9,0x1E5F1-0x1E5FA,0x1E8C7-0x1E8CF,0x1E950-0x1E959,"
    "0x1EC71-0x1ECAB,0x1ECAD-0x1ECAF,0x1ECB1-0x1ECB4,0x1ED01-0x1ED2D,0x1ED2F-0x1ED3D,"
    "0x1F100-0x1F10C,0x1FBF0-0x1FBF9,"
)

_BERT_REMOVED = _ranges(
    "0x0-0x8,0xB-0xC,0xE-0x1F,0x7F-0x9F,0xAD,0x600-0x605,0x61C,0x6DD,0x70F,0x180E,0x200B-0x200F,"
    "0x202A-0x202E,0x2060-0x2064,0x2066-0x206F,0xE000-0xF8FF,0xFEFF,0xFFF9-0xFFFB,0xFFFD,0x110BD,"
    "0x1BCA0-0x1BCA3,0x1D173-0x1D17A,0xE0001,0xE0020-0xE007F,0xF0000-0xFFFFD,0x100000-0x10FFFD,"
)

_HF_MN = _ranges(
    "0x300-0x36F,0x483-0x487,0x591-0x5BD,0x5BF,0x5C1-0x5C2,0x5C4-0x5C5,0x5C7,0x610-0x61A,"
    "0x64B-0x65F,0x670,0x6D6-0x6DC,0x6DF-0x6E4,0x6E7-0x6E8,0x6EA-0x6ED,0x711,0x730-0x74A,"
    "0x7A6-0x7B0,0x7EB-0x7F3,0x816-0x819,0x81B-0x823,0x825-0x827,0x829-0x82D,0x859-0x85B,"
    "0x8E3-0x902,0x93A,0x93C,0x941-0x948,0x94D,0x951-0x957,0x962-0x963,0x981,0x9BC,0x9C1-0x9C4,"
    "0x9CD,0x9E2-0x9E3,0xA01-0xA02,0xA3C,0xA41-0xA42,0xA47-0xA48,0xA4B-0xA4D,0xA51,0xA70-0xA71,"
    "0xA75,0xA81-0xA82,0xABC,0xAC1-0xAC5,0xAC7-0xAC8,0xACD,0xAE2-0xAE3,0xB01,0xB3C,0xB3F,"
    "0xB41-0xB44,0xB4D,0xB56,0xB62-0xB63,0xB82,0xBC0,0xBCD,0xC00,0xC3E-0xC40,0xC46-0xC48,"
    "0xC4A-0xC4D,0xC55-0xC56,0xC62-0xC63,0xC81,0xCBC,0xCBF,0xCC6,0xCCC-0xCCD,0xCE2-0xCE3,0xD01,"
    "0xD41-0xD44,0xD4D,0xD62-0xD63,0xDCA,0xDD2-0xDD4,0xDD6,0xE31,0xE34-0xE3A,0xE47-0xE4E,0xEB1,"
    "0xEB4-0xEB9,0xEBB-0xEBC,0xEC8-0xECD,0xF18-0xF19,0xF35,0xF37,0xF39,0xF71-0xF7E,0xF80-0xF84,"
    "0xF86-0xF87,0xF8D-0xF97,0xF99-0xFBC,0xFC6,0x102D-0x1030,0x1032-0x1037,0x1039-0x103A,"
    "0x103D-0x103E,0x1058-0x1059,0x105E-0x1060,0x1071-0x1074,0x1082,0x1085-0x1086,0x108D,0x109D,"
    "0x135D-0x135F,0x1712-0x1714,0x1732-0x1734,0x1752-0x1753,0x1772-0x1773,0x17B4-0x17B5,"
    "0x17B7-0x17BD,0x17C6,0x17C9-0x17D3,0x17DD,0x180B-0x180D,0x18A9,0x1920-0x1922,0x1927-0x1928,"
    "0x1932,0x1939-0x193B,0x1A17-0x1A18,0x1A1B,0x1A56,0x1A58-0x1A5E,0x1A60,0x1A62,0x1A65-0x1A6C,"
    "0x1A73-0x1A7C,0x1A7F,0x1AB0-0x1ABD,0x1B00-0x1B03,0x1B34,0x1B36-0x1B3A,0x1B3C,0x1B42,"
    "0x1B6B-0x1B73,0x1B80-0x1B81,0x1BA2-0x1BA5,0x1BA8-0x1BA9,0x1BAB-0x1BAD,0x1BE6,0x1BE8-0x1BE9,"
    "0x1BED,0x1BEF-0x1BF1,0x1C2C-0x1C33,0x1C36-0x1C37,0x1CD0-0x1CD2,0x1CD4-0x1CE0,0x1CE2-0x1CE8,"
    "0x1CED,0x1CF4,0x1CF8-0x1CF9,0x1DC0-0x1DF5,0x1DFC-0x1DFF,0x20D0-0x20DC,0x20E1,0x20E5-0x20F0,"
    "0x2CEF-0x2CF1,0x2D7F,0x2DE0-0x2DFF,0x302A-0x302D,0x3099-0x309A,0xA66F,0xA674-0xA67D,"
    "0xA69E-0xA69F,0xA6F0-0xA6F1,0xA802,0xA806,0xA80B,0xA825-0xA826,0xA8C4,0xA8E0-0xA8F1,"
    "0xA926-0xA92D,0xA947-0xA951,0xA980-0xA982,0xA9B3,0xA9B6-0xA9B9,0xA9BC,0xA9E5,0xAA29-0xAA2E,"
    "0xAA31-0xAA32,0xAA35-0xAA36,0xAA43,0xAA4C,0xAA7C,0xAAB0,0xAAB2-0xAAB4,0xAAB7-0xAAB8,"
    "0xAABE-0xAABF,0xAAC1,0xAAEC-0xAAED,0xAAF6,0xABE5,0xABE8,0xABED,0xFB1E,0xFE00-0xFE0F,"
    "0xFE20-0xFE2F,0x101FD,0x102E0,0x10376-0x1037A,0x10A01-0x10A03,0x10A05-0x10A06,"
    "0x10A0C-0x10A0F,0x10A38-0x10A3A,0x10A3F,0x10AE5-0x10AE6,0x11001,0x11038-0x11046,"
    "0x1107F-0x11081,0x110B3-0x110B6,0x110B9-0x110BA,0x11100-0x11102,0x11127-0x1112B,"
    "0x1112D-0x11134,0x11173,0x11180-0x11181,0x111B6-0x111BE,0x111CA-0x111CC,0x1122F-0x11231,"
    "0x11234,0x11236-0x11237,0x112DF,0x112E3-0x112EA,0x11300-0x11301,0x1133C,0x11340,"
    "0x11366-0x1136C,0x11370-0x11374,0x114B3-0x114B8,0x114BA,0x114BF-0x114C0,0x114C2-0x114C3,"
    "0x115B2-0x115B5,0x115BC-0x115BD,0x115BF-0x115C0,0x115DC-0x115DD,0x11633-0x1163A,0x1163D,"
    "0x1163F-0x11640,0x116AB,0x116AD,0x116B0-0x116B5,0x116B7,0x1171D-0x1171F,0x11722-0x11725,"
    "0x11727-0x1172B,0x16AF0-0x16AF4,0x16B30-0x16B36,0x16F8F-0x16F92,0x1BC9D-0x1BC9E,"
    "0x1D167-0x1D169,0x1D17B-0x1D182,0x1D185-0x1D18B,0x1D1AA-0x1D1AD,0x1D242-0x1D244,"
    "0x1DA00-0x1DA36,0x1DA3B-0x1DA6C,0x1DA75,0x1DA84,0x1DA9B-0x1DA9F,0x1DAA1-0x1DAAF,"
    "0x1E8D0-0x1E8D6,0xE0100-0xE01EF,"
)

_FREEZE_NFD = _ranges(
    "0x11938,"
)

_FREEZE_NFKD = _ranges(
    "0x32FF,0xA7F2-0xA7F4,0xAB69,0x10781-0x10785,0x10787-0x107B0,0x107B2-0x107BA,0x11938,0x1F16C,"
    "0x1FBF0-0x1FBF9,"
)

_FREEZE_NFC = _ranges(
    ","
)

_FREEZE_NFKC = _ranges(
    "0x32FF,0xA7F2-0xA7F4,0xAB69,0x10781-0x10785,0x10787-0x107B0,0x107B2-0x107BA,0x1F16C,"
    "0x1FBF0-0x1FBF9,"
)

_LOWER_TABLE = _lower_table(
    "C0:E0,C1:E1,C2:E2,C3:E3,C4:E4,C5:E5,C6:E6,C7:E7,C8:E8,C9:E9,CA:EA,CB:EB,CC:EC,CD:ED,CE:EE,"
    "CF:EF,D0:F0,D1:F1,D2:F2,D3:F3,D4:F4,D5:F5,D6:F6,D8:F8,D9:F9,DA:FA,DB:FB,DC:FC,DD:FD,DE:FE,"
    "100:101,102:103,104:105,106:107,108:109,10A:10B,10C:10D,10E:10F,110:111,112:113,114:115,"
    "116:117,118:119,11A:11B,11C:11D,11E:11F,120:121,122:123,124:125,126:127,128:129,12A:12B,"
    "12C:12D,12E:12F,130:69+307,132:133,134:135,136:137,139:13A,13B:13C,13D:13E,13F:140,141:142,"
    "143:144,145:146,147:148,14A:14B,14C:14D,14E:14F,150:151,152:153,154:155,156:157,158:159,"
    "15A:15B,15C:15D,15E:15F,160:161,162:163,164:165,166:167,168:169,16A:16B,16C:16D,16E:16F,"
    "170:171,172:173,174:175,176:177,178:FF,179:17A,17B:17C,17D:17E,181:253,182:183,184:185,"
    "186:254,187:188,189:256,18A:257,18B:18C,18E:1DD,18F:259,190:25B,191:192,193:260,194:263,"
    "196:269,197:268,198:199,19C:26F,19D:272,19F:275,1A0:1A1,1A2:1A3,1A4:1A5,1A6:280,1A7:1A8,"
    "1A9:283,1AC:1AD,1AE:288,1AF:1B0,1B1:28A,1B2:28B,1B3:1B4,1B5:1B6,1B7:292,1B8:1B9,1BC:1BD,"
    "1C4:1C6,1C5:1C6,1C7:1C9,1C8:1C9,1CA:1CC,1CB:1CC,1CD:1CE,1CF:1D0,1D1:1D2,1D3:1D4,1D5:1D6,"
    "1D7:1D8,1D9:1DA,1DB:1DC,1DE:1DF,1E0:1E1,1E2:1E3,1E4:1E5,1E6:1E7,1E8:1E9,1EA:1EB,1EC:1ED,"
    "1EE:1EF,1F1:1F3,1F2:1F3,1F4:1F5,1F6:195,1F7:1BF,1F8:1F9,1FA:1FB,1FC:1FD,1FE:1FF,200:201,"
    "202:203,204:205,206:207,208:209,20A:20B,20C:20D,20E:20F,210:211,212:213,214:215,216:217,"
    "218:219,21A:21B,21C:21D,21E:21F,220:19E,222:223,224:225,226:227,228:229,22A:22B,22C:22D,"
    "22E:22F,230:231,232:233,23A:2C65,23B:23C,23D:19A,23E:2C66,241:242,243:180,244:289,245:28C,"
    "246:247,248:249,24A:24B,24C:24D,24E:24F,370:371,372:373,376:377,37F:3F3,386:3AC,388:3AD,"
    "389:3AE,38A:3AF,38C:3CC,38E:3CD,38F:3CE,391:3B1,392:3B2,393:3B3,394:3B4,395:3B5,396:3B6,"
    "397:3B7,398:3B8,399:3B9,39A:3BA,39B:3BB,39C:3BC,39D:3BD,39E:3BE,39F:3BF,3A0:3C0,3A1:3C1,"
    "3A3:3C3,3A4:3C4,3A5:3C5,3A6:3C6,3A7:3C7,3A8:3C8,3A9:3C9,3AA:3CA,3AB:3CB,3CF:3D7,3D8:3D9,"
    "3DA:3DB,3DC:3DD,3DE:3DF,3E0:3E1,3E2:3E3,3E4:3E5,3E6:3E7,3E8:3E9,3EA:3EB,3EC:3ED,3EE:3EF,"
    "3F4:3B8,3F7:3F8,3F9:3F2,3FA:3FB,3FD:37B,3FE:37C,3FF:37D,400:450,401:451,402:452,403:453,"
    "404:454,405:455,406:456,407:457,408:458,409:459,40A:45A,40B:45B,40C:45C,40D:45D,40E:45E,"
    "40F:45F,410:430,411:431,412:432,413:433,414:434,415:435,416:436,417:437,418:438,419:439,"
    "41A:43A,41B:43B,41C:43C,41D:43D,41E:43E,41F:43F,420:440,421:441,422:442,423:443,424:444,"
    "425:445,426:446,427:447,428:448,429:449,42A:44A,42B:44B,42C:44C,42D:44D,42E:44E,42F:44F,"
    "460:461,462:463,464:465,466:467,468:469,46A:46B,46C:46D,46E:46F,470:471,472:473,474:475,"
    "476:477,478:479,47A:47B,47C:47D,47E:47F,480:481,48A:48B,48C:48D,48E:48F,490:491,492:493,"
    "494:495,496:497,498:499,49A:49B,49C:49D,49E:49F,4A0:4A1,4A2:4A3,4A4:4A5,4A6:4A7,4A8:4A9,"
    "4AA:4AB,4AC:4AD,4AE:4AF,4B0:4B1,4B2:4B3,4B4:4B5,4B6:4B7,4B8:4B9,4BA:4BB,4BC:4BD,4BE:4BF,"
    "4C0:4CF,4C1:4C2,4C3:4C4,4C5:4C6,4C7:4C8,4C9:4CA,4CB:4CC,4CD:4CE,4D0:4D1,4D2:4D3,4D4:4D5,"
    "4D6:4D7,4D8:4D9,4DA:4DB,4DC:4DD,4DE:4DF,4E0:4E1,4E2:4E3,4E4:4E5,4E6:4E7,4E8:4E9,4EA:4EB,"
    "4EC:4ED,4EE:4EF,4F0:4F1,4F2:4F3,4F4:4F5,4F6:4F7,4F8:4F9,4FA:4FB,4FC:4FD,4FE:4FF,500:501,"
    "502:503,504:505,506:507,508:509,50A:50B,50C:50D,50E:50F,510:511,512:513,514:515,516:517,"
    "518:519,51A:51B,51C:51D,51E:51F,520:521,522:523,524:525,526:527,528:529,52A:52B,52C:52D,"
    "52E:52F,531:561,532:562,533:563,534:564,535:565,536:566,537:567,538:568,539:569,53A:56A,"
    "53B:56B,53C:56C,53D:56D,53E:56E,53F:56F,540:570,541:571,542:572,543:573,544:574,545:575,"
    "546:576,547:577,548:578,549:579,54A:57A,54B:57B,54C:57C,54D:57D,54E:57E,54F:57F,550:580,"
    "551:581,552:582,553:583,554:584,555:585,556:586,10A0:2D00,10A1:2D01,10A2:2D02,10A3:2D03,"
    "10A4:2D04,10A5:2D05,10A6:2D06,10A7:2D07,10A8:2D08,10A9:2D09,10AA:2D0A,10AB:2D0B,10AC:2D0C,"
    "10AD:2D0D,10AE:2D0E,10AF:2D0F,10B0:2D10,10B1:2D11,10B2:2D12,10B3:2D13,10B4:2D14,10B5:2D15,"
    "10B6:2D16,10B7:2D17,10B8:2D18,10B9:2D19,10BA:2D1A,10BB:2D1B,10BC:2D1C,10BD:2D1D,10BE:2D1E,"
    "10BF:2D1F,10C0:2D20,10C1:2D21,10C2:2D22,10C3:2D23,10C4:2D24,10C5:2D25,10C7:2D27,10CD:2D2D,"
    "13A0:AB70,13A1:AB71,13A2:AB72,13A3:AB73,13A4:AB74,13A5:AB75,13A6:AB76,13A7:AB77,13A8:AB78,"
    "13A9:AB79,13AA:AB7A,13AB:AB7B,13AC:AB7C,13AD:AB7D,13AE:AB7E,13AF:AB7F,13B0:AB80,13B1:AB81,"
    "13B2:AB82,13B3:AB83,13B4:AB84,13B5:AB85,13B6:AB86,13B7:AB87,13B8:AB88,13B9:AB89,13BA:AB8A,"
    "13BB:AB8B,13BC:AB8C,13BD:AB8D,13BE:AB8E,13BF:AB8F,13C0:AB90,13C1:AB91,13C2:AB92,13C3:AB93,"
    "13C4:AB94,13C5:AB95,13C6:AB96,13C7:AB97,13C8:AB98,13C9:AB99,13CA:AB9A,13CB:AB9B,13CC:AB9C,"
    "13CD:AB9D,13CE:AB9E,13CF:AB9F,13D0:ABA0,13D1:ABA1,13D2:ABA2,13D3:ABA3,13D4:ABA4,13D5:ABA5,"
    "13D6:ABA6,13D7:ABA7,13D8:ABA8,13D9:ABA9,13DA:ABAA,13DB:ABAB,13DC:ABAC,13DD:ABAD,13DE:ABAE,"
    "13DF:ABAF,13E0:ABB0,13E1:ABB1,13E2:ABB2,13E3:ABB3,13E4:ABB4,13E5:ABB5,13E6:ABB6,13E7:ABB7,"
    "13E8:ABB8,13E9:ABB9,13EA:ABBA,13EB:ABBB,13EC:ABBC,13ED:ABBD,13EE:ABBE,13EF:ABBF,13F0:13F8,"
    "13F1:13F9,13F2:13FA,13F3:13FB,13F4:13FC,13F5:13FD,1C89:1C8A,1C90:10D0,1C91:10D1,1C92:10D2,"
    "1C93:10D3,1C94:10D4,1C95:10D5,1C96:10D6,1C97:10D7,1C98:10D8,1C99:10D9,1C9A:10DA,1C9B:10DB,"
    "1C9C:10DC,1C9D:10DD,1C9E:10DE,1C9F:10DF,1CA0:10E0,1CA1:10E1,1CA2:10E2,1CA3:10E3,1CA4:10E4,"
    "1CA5:10E5,1CA6:10E6,1CA7:10E7,1CA8:10E8,1CA9:10E9,1CAA:10EA,1CAB:10EB,1CAC:10EC,1CAD:10ED,"
    "1CAE:10EE,1CAF:10EF,1CB0:10F0,1CB1:10F1,1CB2:10F2,1CB3:10F3,1CB4:10F4,1CB5:10F5,1CB6:10F6,"
    "1CB7:10F7,1CB8:10F8,1CB9:10F9,1CBA:10FA,1CBD:10FD,1CBE:10FE,1CBF:10FF,1E00:1E01,1E02:1E03,"
    "1E04:1E05,1E06:1E07,1E08:1E09,1E0A:1E0B,1E0C:1E0D,1E0E:1E0F,1E10:1E11,1E12:1E13,1E14:1E15,"
    "1E16:1E17,1E18:1E19,1E1A:1E1B,1E1C:1E1D,1E1E:1E1F,1E20:1E21,1E22:1E23,1E24:1E25,1E26:1E27,"
    "1E28:1E29,1E2A:1E2B,1E2C:1E2D,1E2E:1E2F,1E30:1E31,1E32:1E33,1E34:1E35,1E36:1E37,1E38:1E39,"
    "1E3A:1E3B,1E3C:1E3D,1E3E:1E3F,1E40:1E41,1E42:1E43,1E44:1E45,1E46:1E47,1E48:1E49,1E4A:1E4B,"
    "1E4C:1E4D,1E4E:1E4F,1E50:1E51,1E52:1E53,1E54:1E55,1E56:1E57,1E58:1E59,1E5A:1E5B,1E5C:1E5D,"
    "1E5E:1E5F,1E60:1E61,1E62:1E63,1E64:1E65,1E66:1E67,1E68:1E69,1E6A:1E6B,1E6C:1E6D,1E6E:1E6F,"
    "1E70:1E71,1E72:1E73,1E74:1E75,1E76:1E77,1E78:1E79,1E7A:1E7B,1E7C:1E7D,1E7E:1E7F,1E80:1E81,"
    "1E82:1E83,1E84:1E85,1E86:1E87,1E88:1E89,1E8A:1E8B,1E8C:1E8D,1E8E:1E8F,1E90:1E91,1E92:1E93,"
    "1E94:1E95,1E9E:DF,1EA0:1EA1,1EA2:1EA3,1EA4:1EA5,1EA6:1EA7,1EA8:1EA9,1EAA:1EAB,1EAC:1EAD,"
    "1EAE:1EAF,1EB0:1EB1,1EB2:1EB3,1EB4:1EB5,1EB6:1EB7,1EB8:1EB9,1EBA:1EBB,1EBC:1EBD,1EBE:1EBF,"
    "1EC0:1EC1,1EC2:1EC3,1EC4:1EC5,1EC6:1EC7,1EC8:1EC9,1ECA:1ECB,1ECC:1ECD,1ECE:1ECF,1ED0:1ED1,"
    "1ED2:1ED3,1ED4:1ED5,1ED6:1ED7,1ED8:1ED9,1EDA:1EDB,1EDC:1EDD,1EDE:1EDF,1EE0:1EE1,1EE2:1EE3,"
    "1EE4:1EE5,1EE6:1EE7,1EE8:1EE9,1EEA:1EEB,1EEC:1EED,1EEE:1EEF,1EF0:1EF1,1EF2:1EF3,1EF4:1EF5,"
    "1EF6:1EF7,1EF8:1EF9,1EFA:1EFB,1EFC:1EFD,1EFE:1EFF,1F08:1F00,1F09:1F01,1F0A:1F02,1F0B:1F03,"
    "1F0C:1F04,1F0D:1F05,1F0E:1F06,1F0F:1F07,1F18:1F10,1F19:1F11,1F1A:1F12,1F1B:1F13,1F1C:1F14,"
    "1F1D:1F15,1F28:1F20,1F29:1F21,1F2A:1F22,1F2B:1F23,1F2C:1F24,1F2D:1F25,1F2E:1F26,1F2F:1F27,"
    "1F38:1F30,1F39:1F31,1F3A:1F32,1F3B:1F33,1F3C:1F34,1F3D:1F35,1F3E:1F36,1F3F:1F37,1F48:1F40,"
    "1F49:1F41,1F4A:1F42,1F4B:1F43,1F4C:1F44,1F4D:1F45,1F59:1F51,1F5B:1F53,1F5D:1F55,1F5F:1F57,"
    "1F68:1F60,1F69:1F61,1F6A:1F62,1F6B:1F63,1F6C:1F64,1F6D:1F65,1F6E:1F66,1F6F:1F67,1F88:1F80,"
    "1F89:1F81,1F8A:1F82,1F8B:1F83,1F8C:1F84,1F8D:1F85,1F8E:1F86,1F8F:1F87,1F98:1F90,1F99:1F91,"
    "1F9A:1F92,1F9B:1F93,1F9C:1F94,1F9D:1F95,1F9E:1F96,1F9F:1F97,1FA8:1FA0,1FA9:1FA1,1FAA:1FA2,"
    "1FAB:1FA3,1FAC:1FA4,1FAD:1FA5,1FAE:1FA6,1FAF:1FA7,1FB8:1FB0,1FB9:1FB1,1FBA:1F70,1FBB:1F71,"
    "1FBC:1FB3,1FC8:1F72,1FC9:1F73,1FCA:1F74,1FCB:1F75,1FCC:1FC3,1FD8:1FD0,1FD9:1FD1,1FDA:1F76,"
    "1FDB:1F77,1FE8:1FE0,1FE9:1FE1,1FEA:1F7A,1FEB:1F7B,1FEC:1FE5,1FF8:1F78,1FF9:1F79,1FFA:1F7C,"
    "1FFB:1F7D,1FFC:1FF3,2126:3C9,212A:6B,212B:E5,2132:214E,2160:2170,2161:2171,2162:2172,"
    "2163:2173,2164:2174,2165:2175,2166:2176,2167:2177,2168:2178,2169:2179,216A:217A,216B:217B,"
    "216C:217C,216D:217D,216E:217E,216F:217F,2183:2184,24B6:24D0,24B7:24D1,24B8:24D2,24B9:24D3,"
    "24BA:24D4,24BB:24D5,24BC:24D6,24BD:24D7,24BE:24D8,24BF:24D9,24C0:24DA,24C1:24DB,24C2:24DC,"
    "24C3:24DD,24C4:24DE,24C5:24DF,24C6:24E0,24C7:24E1,24C8:24E2,24C9:24E3,24CA:24E4,24CB:24E5,"
    "24CC:24E6,24CD:24E7,24CE:24E8,24CF:24E9,2C00:2C30,2C01:2C31,2C02:2C32,2C03:2C33,2C04:2C34,"
    "2C05:2C35,2C06:2C36,2C07:2C37,2C08:2C38,2C09:2C39,2C0A:2C3A,2C0B:2C3B,2C0C:2C3C,2C0D:2C3D,"
    "2C0E:2C3E,2C0F:2C3F,2C10:2C40,2C11:2C41,2C12:2C42,2C13:2C43,2C14:2C44,2C15:2C45,2C16:2C46,"
    "2C17:2C47,2C18:2C48,2C19:2C49,2C1A:2C4A,2C1B:2C4B,2C1C:2C4C,2C1D:2C4D,2C1E:2C4E,2C1F:2C4F,"
    "2C20:2C50,2C21:2C51,2C22:2C52,2C23:2C53,2C24:2C54,2C25:2C55,2C26:2C56,2C27:2C57,2C28:2C58,"
    "2C29:2C59,2C2A:2C5A,2C2B:2C5B,2C2C:2C5C,2C2D:2C5D,2C2E:2C5E,2C2F:2C5F,2C60:2C61,2C62:26B,"
    "2C63:1D7D,2C64:27D,2C67:2C68,2C69:2C6A,2C6B:2C6C,2C6D:251,2C6E:271,2C6F:250,2C70:252,"
    "2C72:2C73,2C75:2C76,2C7E:23F,2C7F:240,2C80:2C81,2C82:2C83,2C84:2C85,2C86:2C87,2C88:2C89,"
    "2C8A:2C8B,2C8C:2C8D,2C8E:2C8F,2C90:2C91,2C92:2C93,2C94:2C95,2C96:2C97,2C98:2C99,2C9A:2C9B,"
    "2C9C:2C9D,2C9E:2C9F,2CA0:2CA1,2CA2:2CA3,2CA4:2CA5,2CA6:2CA7,2CA8:2CA9,2CAA:2CAB,2CAC:2CAD,"
    "2CAE:2CAF,2CB0:2CB1,2CB2:2CB3,2CB4:2CB5,2CB6:2CB7,2CB8:2CB9,2CBA:2CBB,2CBC:2CBD,2CBE:2CBF,"
    "2CC0:2CC1,2CC2:2CC3,2CC4:2CC5,2CC6:2CC7,2CC8:2CC9,2CCA:2CCB,2CCC:2CCD,2CCE:2CCF,2CD0:2CD1,"
    "2CD2:2CD3,2CD4:2CD5,2CD6:2CD7,2CD8:2CD9,2CDA:2CDB,2CDC:2CDD,2CDE:2CDF,2CE0:2CE1,2CE2:2CE3,"
    "2CEB:2CEC,2CED:2CEE,2CF2:2CF3,A640:A641,A642:A643,A644:A645,A646:A647,A648:A649,A64A:A64B,"
    "A64C:A64D,A64E:A64F,A650:A651,A652:A653,A654:A655,A656:A657,A658:A659,A65A:A65B,A65C:A65D,"
    "A65E:A65F,A660:A661,A662:A663,A664:A665,A666:A667,A668:A669,A66A:A66B,A66C:A66D,A680:A681,"
    "A682:A683,A684:A685,A686:A687,A688:A689,A68A:A68B,A68C:A68D,A68E:A68F,A690:A691,A692:A693,"
    "A694:A695,A696:A697,A698:A699,A69A:A69B,A722:A723,A724:A725,A726:A727,A728:A729,A72A:A72B,"
    "A72C:A72D,A72E:A72F,A732:A733,A734:A735,A736:A737,A738:A739,A73A:A73B,A73C:A73D,A73E:A73F,"
    "A740:A741,A742:A743,A744:A745,A746:A747,A748:A749,A74A:A74B,A74C:A74D,A74E:A74F,A750:A751,"
    "A752:A753,A754:A755,A756:A757,A758:A759,A75A:A75B,A75C:A75D,A75E:A75F,A760:A761,A762:A763,"
    "A764:A765,A766:A767,A768:A769,A76A:A76B,A76C:A76D,A76E:A76F,A779:A77A,A77B:A77C,A77D:1D79,"
    "A77E:A77F,A780:A781,A782:A783,A784:A785,A786:A787,A78B:A78C,A78D:265,A790:A791,A792:A793,"
    "A796:A797,A798:A799,A79A:A79B,A79C:A79D,A79E:A79F,A7A0:A7A1,A7A2:A7A3,A7A4:A7A5,A7A6:A7A7,"
    "A7A8:A7A9,A7AA:266,A7AB:25C,A7AC:261,A7AD:26C,A7AE:26A,A7B0:29E,A7B1:287,A7B2:29D,A7B3:AB53,"
    "A7B4:A7B5,A7B6:A7B7,A7B8:A7B9,A7BA:A7BB,A7BC:A7BD,A7BE:A7BF,A7C0:A7C1,A7C2:A7C3,A7C4:A794,"
    "A7C5:282,A7C6:1D8E,A7C7:A7C8,A7C9:A7CA,A7CB:264,A7CC:A7CD,A7CE:A7CF,A7D0:A7D1,A7D2:A7D3,"
    "A7D4:A7D5,A7D6:A7D7,A7D8:A7D9,A7DA:A7DB,A7DC:19B,A7F5:A7F6,FF21:FF41,FF22:FF42,FF23:FF43,"
    "FF24:FF44,FF25:FF45,FF26:FF46,FF27:FF47,FF28:FF48,FF29:FF49,FF2A:FF4A,FF2B:FF4B,FF2C:FF4C,"
    "FF2D:FF4D,FF2E:FF4E,FF2F:FF4F,FF30:FF50,FF31:FF51,FF32:FF52,FF33:FF53,FF34:FF54,FF35:FF55,"
    "FF36:FF56,FF37:FF57,FF38:FF58,FF39:FF59,FF3A:FF5A,10400:10428,10401:10429,10402:1042A,"
    "10403:1042B,10404:1042C,10405:1042D,10406:1042E,10407:1042F,10408:10430,10409:10431,"
    "1040A:10432,1040B:10433,1040C:10434,1040D:10435,1040E:10436,1040F:10437,10410:10438,"
    "10411:10439,10412:1043A,10413:1043B,10414:1043C,10415:1043D,10416:1043E,10417:1043F,"
    "10418:10440,10419:10441,1041A:10442,1041B:10443,1041C:10444,1041D:10445,1041E:10446,"
    "1041F:10447,10420:10448,10421:10449,10422:1044A,10423:1044B,10424:1044C,10425:1044D,"
    "10426:1044E,10427:1044F,104B0:104D8,104B1:104D9,104B2:104DA,104B3:104DB,104B4:104DC,"
    "104B5:104DD,104B6:104DE,104B7:104DF,104B8:104E0,104B9:104E1,104BA:104E2,104BB:104E3,"
    "104BC:104E4,104BD:104E5,104BE:104E6,104BF:104E7,104C0:104E8,104C1:104E9,104C2:104EA,"
    "104C3:104EB,104C4:104EC,104C5:104ED,104C6:104EE,104C7:104EF,104C8:104F0,104C9:104F1,"
    "104CA:104F2,104CB:104F3,104CC:104F4,104CD:104F5,104CE:104F6,104CF:104F7,104D0:104F8,"
    "104D1:104F9,104D2:104FA,104D3:104FB,10570:10597,10571:10598,10572:10599,10573:1059A,"
    "10574:1059B,10575:1059C,10576:1059D,10577:1059E,10578:1059F,10579:105A0,1057A:105A1,"
    "1057C:105A3,1057D:105A4,1057E:105A5,1057F:105A6,10580:105A7,10581:105A8,10582:105A9,"
    "10583:105AA,10584:105AB,10585:105AC,10586:105AD,10587:105AE,10588:105AF,10589:105B0,"
    "1058A:105B1,1058C:105B3,1058D:105B4,1058E:105B5,1058F:105B6,10590:105B7,10591:105B8,"
    "10592:105B9,10594:105BB,10595:105BC,10C80:10CC0,10C81:10CC1,10C82:10CC2,10C83:10CC3,"
    "10C84:10CC4,10C85:10CC5,10C86:10CC6,10C87:10CC7,10C88:10CC8,10C89:10CC9,10C8A:10CCA,"
    "10C8B:10CCB,10C8C:10CCC,10C8D:10CCD,10C8E:10CCE,10C8F:10CCF,10C90:10CD0,10C91:10CD1,"
    "10C92:10CD2,10C93:10CD3,10C94:10CD4,10C95:10CD5,10C96:10CD6,10C97:10CD7,10C98:10CD8,"
    "10C99:10CD9,10C9A:10CDA,10C9B:10CDB,10C9C:10CDC,10C9D:10CDD,10C9E:10CDE,10C9F:10CDF,"
    "10CA0:10CE0,10CA1:10CE1,10CA2:10CE2,10CA3:10CE3,10CA4:10CE4,10CA5:10CE5,10CA6:10CE6,"
    "10CA7:10CE7,10CA8:10CE8,10CA9:10CE9,10CAA:10CEA,10CAB:10CEB,10CAC:10CEC,10CAD:10CED,"
    "10CAE:10CEE,10CAF:10CEF,10CB0:10CF0,10CB1:10CF1,10CB2:10CF2,10D50:10D70,10D51:10D71,"
    "10D52:10D72,10D53:10D73,10D54:10D74,10D55:10D75,10D56:10D76,10D57:10D77,10D58:10D78,"
    "10D59:10D79,10D5A:10D7A,10D5B:10D7B,10D5C:10D7C,10D5D:10D7D,10D5E:10D7E,10D5F:10D7F,"
    "10D60:10D80,10D61:10D81,10D62:10D82,10D63:10D83,10D64:10D84,10D65:10D85,118A0:118C0,"
    "118A1:118C1,118A2:118C2,118A3:118C3,118A4:118C4,118A5:118C5,118A6:118C6,118A7:118C7,"
    "118A8:118C8,118A9:118C9,118AA:118CA,118AB:118CB,118AC:118CC,118AD:118CD,118AE:118CE,"
    "118AF:118CF,118B0:118D0,118B1:118D1,118B2:118D2,118B3:118D3,118B4:118D4,118B5:118D5,"
    "118B6:118D6,118B7:118D7,118B8:118D8,118B9:118D9,118BA:118DA,118BB:118DB,118BC:118DC,"
    "118BD:118DD,118BE:118DE,118BF:118DF,16E40:16E60,16E41:16E61,16E42:16E62,16E43:16E63,"
    "16E44:16E64,16E45:16E65,16E46:16E66,16E47:16E67,16E48:16E68,16E49:16E69,16E4A:16E6A,"
    "16E4B:16E6B,16E4C:16E6C,16E4D:16E6D,16E4E:16E6E,16E4F:16E6F,16E50:16E70,16E51:16E71,"
    "16E52:16E72,16E53:16E73,16E54:16E74,16E55:16E75,16E56:16E76,16E57:16E77,16E58:16E78,"
    "16E59:16E79,16E5A:16E7A,16E5B:16E7B,16E5C:16E7C,16E5D:16E7D,16E5E:16E7E,16E5F:16E7F,"
    "16EA0:16EBB,16EA1:16EBC,16EA2:16EBD,16EA3:16EBE,16EA4:16EBF,16EA5:16EC0,16EA6:16EC1,"
    "16EA7:16EC2,16EA8:16EC3,16EA9:16EC4,16EAA:16EC5,16EAB:16EC6,16EAC:16EC7,16EAD:16EC8,"
    "16EAE:16EC9,16EAF:16ECA,16EB0:16ECB,16EB1:16ECC,16EB2:16ECD,16EB3:16ECE,16EB4:16ECF,"
    "16EB5:16ED0,16EB6:16ED1,16EB7:16ED2,16EB8:16ED3,1E900:1E922,1E901:1E923,1E902:1E924,"
    "1E903:1E925,1E904:1E926,1E905:1E927,1E906:1E928,1E907:1E929,1E908:1E92A,1E909:1E92B,"
    "1E90A:1E92C,1E90B:1E92D,1E90C:1E92E,1E90D:1E92F,1E90E:1E930,1E90F:1E931,1E910:1E932,"
    "1E911:1E933,1E912:1E934,1E913:1E935,1E914:1E936,1E915:1E937,1E916:1E938,1E917:1E939,"
    "1E918:1E93A,1E919:1E93B,1E91A:1E93C,1E91B:1E93D,1E91C:1E93E,1E91D:1E93F,1E91E:1E940,"
    "1E91F:1E941,1E920:1E942,1E921:1E943,"
)
>>>>>>> wip/compile
