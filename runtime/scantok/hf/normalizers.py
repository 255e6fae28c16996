"""HuggingFace normalizers with their alignments: a normalized string (`_NS`) keeps, per
char, the range of the original text it comes from, so offsets map back exactly as HF's."""
from __future__ import annotations

import re
import threading
import unicodedata
from typing import Any, Mapping

from .errors import UnsupportedComponentError, WordLevelError
from .fields import flag, items
from .unicode_tables import (_BERT_REMOVED, _CJK_RANGES, _FREEZE_NFC, _FREEZE_NFD, _FREEZE_NFKC,
                             _FREEZE_NFKD, _HF_CCC0, _HF_MARK, _HF_MN, _LOWER_TABLE, _WS)

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

    def filter_out(self, kind: str) -> None:
        """Removes every character of a measured set (_CHAR_BITS' kind) (HF's filter: the kept
        characters keep their alignments)."""
        text = self.text
        if kind != "bert_removed" and text.isascii():  # (no mark is ASCII)
            return
        gone = _char_positions(text, kind)
        if not len(gone):
            return
        if self.track:
            align = self.materialize()  # (of the text before: its length)
            drop = set(gone.tolist())
            self.align = [a for i, a in enumerate(align) if i not in drop]
        self.text = _without(text, gone)

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


_LOWER_DIFF: frozenset | None = None
# the chars tokenizers' Lowercase maps to several (only "İ" in 0.23.3): their counts
_LOWER_MULTI = {cp: len(v) for cp, v in _LOWER_TABLE.items() if len(v) > 1}


def _lower_text(t: str) -> str:
    """t through tokenizers' Lowercase: Python's str.lower where it agrees char by char (no
    char of t in _LOWER_DIFF, looked up in _code_table), else the measured table
    (str.translate with a dict took 150 us a 4 KB multi-script text, str.lower 10)."""
    if t.isascii():
        return t.lower()
    global _LOWER_DIFF
    if _LOWER_DIFF is None:  # once (~10 ms): the chars whose map here differs from Python's
        import numpy as np

        with _TABLE_LOCK:  # (another thread's table must not lose these bits)
            if _LOWER_DIFF is None:
                table = _lower_map()
                diff = [c for c in _python_lowered() | set(table)
                        if c >= 0x80 and chr(c).lower() != table.get(c, chr(c))]
                diff.append(0x3A3)  # Python's final-sigma rule: "Σ" ends a word as "ς", here "σ"
                _code_table()[np.array(diff, dtype=np.int64)] |= _LOWER_BIT
                _LOWER_DIFF = frozenset(map(chr, diff))
    if not _in_table(t, _LOWER_BIT):
        return t.lower()
    return t.translate(_lower_map())


def _python_lowered() -> set[int]:
    """The code points str.lower changes, found a block of 64K code points at a time (a block's
    lowercase compared in numpy; a block where a char lowercases to several, char by char): a
    Python loop over every code point took 0.1 s."""
    import numpy as np

    out: set[int] = set()
    for lo in range(0, 0x110000, 0x10000):
        cps = np.arange(lo, lo + 0x10000, dtype=np.uint32)
        cps = cps[(cps < 0xD800) | (cps >= 0xE000)]
        block = cps.tobytes().decode("utf-32-le")
        low = np.frombuffer(block.lower().encode("utf-32-le"), dtype=np.uint32)
        if len(low) == len(cps):
            out.update(cps[low != cps].tolist())
        else:
            out.update(c for c in cps.tolist() if chr(c).lower() != chr(c))
    return out


def _lowercase(ns: _NS) -> None:
    t = ns.text
    if t.isascii():
        ns.same_length_map(t.lower())
        return
    low = _lower_text(t)
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
    """The chars the form leaves as they are, as tokenizers does: those its older tables do not
    normalize, and the marks they take for starters (_HF_CCC0: a starter neither reorders nor
    composes, and no composition crosses it, so leaving it in place is exact)."""
    return _FROZEN[form]


def _has_frozen(form: str, text: str) -> bool:
    """Whether text holds a char _freeze(form) names: its code points looked up in a
    table of every code point (_code_table), 7 us a 4 KB multi-script text, where a `re`
    search took 100 (17 % of CLIP's encode and as much as the whole C call of Qwen's) and a
    set test over map(ord) walked every char in Python."""
    return _in_table(text, _FROZEN_BIT[form])


_CODE_TABLE = None
_TABLE_LOCK = threading.RLock()  # _lower_text's first call makes the table under it too
_LOWER_BIT = 1 << 4  # the bits below are the forms' (_FROZEN_BIT)


def _code_table():
    """Two bytes per code point (2.2 MB, made on first use): bit _FROZEN_BIT[form] set for the
    chars _freeze(form) names, _LOWER_BIT for those whose Lowercase here is not Python's, the
    _CHAR_BITS for the measured sets (each set on first use)."""
    global _CODE_TABLE
    if _CODE_TABLE is None:
        import numpy as np

        with _TABLE_LOCK:
            if _CODE_TABLE is None:
                table = np.zeros(0x110000, dtype=np.uint16)
                for form, bit in _FROZEN_BIT.items():
                    table[np.fromiter(_FROZEN[form], dtype=np.int64)] |= bit
                _CODE_TABLE = table
    return _CODE_TABLE


def _in_table(text: str, bit: int) -> bool:
    """Whether a char of text has bit in _code_table."""
    import numpy as np

    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    return bool((_code_table()[codes] & bit).any())


_FROZEN = {form: table | _HF_CCC0 for form, table in
           (("NFD", _FREEZE_NFD), ("NFKD", _FREEZE_NFKD), ("NFC", _FREEZE_NFC), ("NFKC", _FREEZE_NFKC))}

_FROZEN_BIT = {form: 1 << k for k, form in enumerate(_FROZEN)}

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
    has_frozen = _has_frozen(form, t)
    if not has_frozen and unicodedata.is_normalized(form, t):
        return
    if not ns.track:  # text only: normalize the stretches between characters HF leaves alone
        if not has_frozen:
            ns.text = unicodedata.normalize(form, t)
        else:
            fz = "".join(f"\\U{c:08X}" for c in sorted(frozen))
            ns.text = "".join(p if i % 2 else unicodedata.normalize(form, p)
                              for i, p in enumerate(re.split(f"([{fz}])", t)))
        return

    ns.transform_regions(_nf_regions(t, form, frozen))


def _nf_regions(t: str, form: str, frozen: frozenset[int]) -> list:
    """transform_regions' regions of form over t: each run of non-ASCII characters (with the
    ASCII one before it) that the form changes, and its (char, change) pairs."""
    regions = []
    for m in re.finditer(r"[\x00-\x7f]?[^\x00-\x7f]+", t):
        a, b = m.span()
        chunk = t[a:b]
        if not frozen.intersection(map(ord, chunk)) and unicodedata.is_normalized(form, chunk):
            continue
        regions.append((a, b, _nf_chunk(chunk, form, frozen)))
    return regions


def nf_aligned(text: str, forms: tuple[str, ...]):
    """text through the Unicode forms, and the original range of each of its characters as two
    numpy arrays (starts, ends): the alignments transform_regions gives, made from the regions
    alone (as index arrays, composed form after form) rather than a tuple per character (which
    cost ~0.8 ms over a 4 KB text)."""
    import numpy as np

    n = len(text)
    starts, ends = np.arange(n, dtype=np.int64), np.arange(1, n + 1, dtype=np.int64)
    for form in forms:
        step = _nf_step(text, form)
        if step is None:
            continue
        text, at = step
        keep = at >= 0
        starts, ends = np.where(keep, starts[at], 0), np.where(keep, ends[at], 0)
    return text, starts, ends


def _nf_step(text: str, form: str):
    """(text through one form, the index of the character each of its characters is aligned
    like, -1 for (0, 0)), or None when the form leaves the text as it is."""
    import numpy as np

    if text.isascii():
        return None
    frozen_in = _has_frozen(form, text)
    if not frozen_in and unicodedata.is_normalized(form, text):
        return None
    if not frozen_in:
        step = (_decomposed if form in ("NFD", "NFKD") else _composed)(text, form)
        if step is not None:
            return step
    frozen = _freeze(form)
    parts, idx, pos = [], [], 0
    for a, b, dest in _nf_regions(text, form, frozen):
        parts.append(text[pos:a])
        idx.append(np.arange(pos, a, dtype=np.int64))
        off, here = a, []
        for ch, change in dest:  # as transform_regions: an inserted char takes the one before
            if change > 0:
                here.append(off - 1)  # -1: (0, 0)
            else:
                here.append(off)
                off += 1 - change
            parts.append(ch)
        idx.append(np.array(here, dtype=np.int64))
        pos = b
    parts.append(text[pos:])
    idx.append(np.arange(pos, len(text), dtype=np.int64))
    return "".join(parts), np.concatenate(idx)


# per form of decomposition, per code point: 0 (not known yet), or the length of its
# decomposition (bits 0-4) and whether that starts (bit 5) and ends (bit 6) with a non-starter
_DECOMP: dict = {}


def _decomposed(text: str, form: str):
    """_nf_step of a decomposition (NFD, NFKD) by arrays, for a text free of frozen chars where
    no canonical reordering crosses two of its characters (no decomposition that ends with a
    non-starter is followed by one that starts with one): then each character's decomposition
    stays in place, all of it aligned like the character (the first replaces it, the others
    are inserted after: _nf_chunk's changes).  None otherwise (the caller's regions then).
    Per region in Python this was 60 % of BERT's encode of multi-script text."""
    import numpy as np

    table = _DECOMP.get(form)
    if table is None:
        with _TABLE_LOCK:
            table = _DECOMP.setdefault(form, np.zeros(0x110000, dtype=np.uint8))
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    info = table[codes]
    if not info.all():  # first sight of some characters (the same values from any thread)
        for cp in np.unique(codes[info == 0]).tolist():
            d = unicodedata.normalize(form, chr(cp))
            table[cp] = len(d) | (unicodedata.combining(d[0]) > 0) << 5 | (unicodedata.combining(d[-1]) > 0) << 6
        info = table[codes]
    if ((info[:-1] & 64) & ((info[1:] & 32) << 1)).any():
        return None
    lens = (info & 31).astype(np.int64)
    out = unicodedata.normalize(form, text)
    if len(out) != int(lens.sum()):  # (cannot happen: a guard)
        return None
    return out, np.repeat(np.arange(len(text), dtype=np.int64), lens)


# per composition form, per code point: 0 (not known yet), or the length of the character's
# own normalization (bits 0-6) and whether that differs from it (bit 7); _FORM_OF[form] maps
# the characters that differ to it
_COMPOSED: dict = {}
_FORM_OF: dict = {"NFC": {}, "NFKC": {}}


def _composed(text: str, form: str):
    """_nf_step of a composition form (NFC, NFKC) by arrays, for a text free of frozen chars
    whose normalization is its characters' own normalizations one after another: then nothing
    was reordered or composed across two characters (either would give another string), and
    each character's output is aligned like it (its composites absorb only its own
    decomposition: _nf_chunk's consumption counts).  None otherwise (the caller's regions).
    Per region in Python this was 60 % of an NFKC file's encode of multi-script text, where
    most changed characters stand alone (fullwidth forms, NBSP, ligatures)."""
    import numpy as np

    table = _COMPOSED.get(form)
    if table is None:
        with _TABLE_LOCK:
            table = _COMPOSED.setdefault(form, np.zeros(0x110000, dtype=np.uint8))
    own = _FORM_OF[form]
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    info = table[codes]
    if not info.all():  # first sight of some characters (the same values from any thread)
        for cp in np.unique(codes[info == 0]).tolist():
            d = unicodedata.normalize(form, chr(cp))
            if d != chr(cp):
                own[cp] = d
            table[cp] = min(len(d), 127) | (d != chr(cp)) << 7
        info = table[codes]
    lens = (info & 127).astype(np.int64)
    out = unicodedata.normalize(form, text)
    if len(out) != int(lens.sum()) or (lens == 127).any():
        return None
    parts, pos = [], 0
    for i in np.flatnonzero(info & 128).tolist():
        parts += (text[pos:i], own[ord(text[i])])
        pos = i + 1
    parts.append(text[pos:])
    if "".join(parts) != out:
        return None
    return out, np.repeat(np.arange(len(text), dtype=np.int64), lens)


def aligned_chain(spec: Any, where: str = "normalizer"):
    """A normalizer whose steps are Unicode forms, Replace, Lowercase, StripAccents, Strip,
    Prepend and BertNormalizer (CLIP's: NFC, Replace of \\s+ by " ", Lowercase; the quicktour's NFD,
    Lowercase, StripAccents; BERT's) as a function text -> (normalized text, starts, ends)
    with the alignments as numpy arrays (None, None where they are the identity), or None
    from it when a step changes lengths in a way it does not follow: the general path's _NS
    then.  None for any other normalizer.
    The steps are _NS's, on arrays: a tuple per character made CLIP's encode no faster than
    tokenizers'."""
    steps: list = []

    def collect(sp, w) -> bool:
        if not isinstance(sp, Mapping):
            return False
        t = sp.get("type")
        if t == "Sequence" and isinstance(sp.get("normalizers"), list):
            return all(collect(sub, f"{w}.normalizers[{i}]") for i, sub in enumerate(sp["normalizers"]))
        if t in ("NFC", "NFD", "NFKC", "NFKD"):
            steps.append(("form", t))
            return True
        if t == "Lowercase":
            steps.append(("lower",))
            return True
        if t == "StripAccents":
            steps.append(("filter", "mark"))
            return True
        if t == "BertNormalizer":  # as _bert, step by step
            strip = sp.get("strip_accents")
            lower = bool(sp.get("lowercase", True))
            if sp.get("clean_text", True):
                steps.extend((("filter", "bert_removed"), ("bert_spaces",)))
            if sp.get("handle_chinese_chars", True):
                steps.append(("cjk",))
            if strip if strip is not None else lower:
                steps.extend((("form", "NFD"), ("filter", "mn")))
            if lower:
                steps.append(("lower",))
            return True
        if t == "Replace" and isinstance(sp.get("content"), str):
            steps.append(("replace", _pattern_matcher(sp.get("pattern"), w), sp["content"]))
            return True
        if t == "Strip":
            steps.append(("strip", bool(sp.get("strip_left", True)), bool(sp.get("strip_right", True))))
            return True
        if t == "Prepend" and isinstance(sp.get("prepend"), str) and sp["prepend"]:
            # (Prepend(""): tokenizers' alignments break after it, and it panics on most texts;
            # the general path keeps what it did there)
            steps.append(("prepend", sp["prepend"]))
            return True
        return False

    # (no step at all: a BertNormalizer with every option off, which leaves texts as they are)
    if not collect(spec, where) or (steps and all(st[0] == "form" for st in steps)):
        return None

    def run(text: str):
        import numpy as np

        at_all = None  # the original character each character is aligned like (-1: (0, 0))
        for st in steps:
            kind = st[0]
            if kind == "form":
                step = _nf_step(text, st[1])
                if step is None:
                    continue
                text, at = step
            elif kind == "lower":
                low = _lower_text(text)
                if len(low) == len(text):
                    text = low
                    continue
                # a char that lowercases to several ("İ" -> "i̇"): they all come from it, as
                # _lowercase's regions (its first replaces it, the others are inserted after)
                code = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
                counts = np.ones(len(text), dtype=np.int64)
                for cp, n_out in _LOWER_MULTI.items():
                    counts[code == cp] = n_out
                if int(counts.sum()) != len(low):
                    return None
                text, at = low, np.repeat(np.arange(len(counts), dtype=np.int64), counts)
            elif kind == "filter":  # as filter_out: the kept chars keep their alignments
                if st[1] != "bert_removed" and text.isascii():  # (marks are not ASCII)
                    continue
                gone = _char_positions(text, st[1])
                if not len(gone):
                    continue
                at = np.delete(np.arange(len(text), dtype=np.int64), gone)
                text = _without(text, gone)
            elif kind == "strip":  # as _strip: the kept chars keep their alignments
                n, i, j = len(text), 0, len(text)
                while st[1] and i < n and ord(text[i]) in _WS:
                    i += 1
                while st[2] and j > i and ord(text[j - 1]) in _WS:
                    j -= 1
                if i == 0 and j == n:
                    continue
                text, at = text[i:j], np.arange(i, j, dtype=np.int64)
            elif kind == "prepend":  # as _prepend: the prefix aligned like the first char
                if not text:
                    continue
                at = np.concatenate([np.zeros(len(st[1]), dtype=np.int64), np.arange(len(text), dtype=np.int64)])
                text = st[1] + text
            elif kind == "bert_spaces":  # one for one: the alignments stay
                text = _bert_spaces(text)
                continue
            elif kind == "cjk":  # as _bert: " c " all aligned like c
                if text.isascii():
                    continue
                at_cjk = _char_positions(text, "cjk")
                if not len(at_cjk):
                    continue
                n = len(text)
                text, counts = _spaced(text, at_cjk)
                at = np.repeat(np.arange(n, dtype=np.int64), counts)
            else:
                _, matcher, content = st
                if len(text) < 512:  # a prompt: numpy's per-call cost is more than the loop's
                    spans = _replace_spans(matcher, text, content)
                    if not spans:
                        continue
                    sa, sb = (np.array(x, dtype=np.int64) for x in zip(*spans))
                else:
                    sa, sb = matcher.span_arrays(text)
                    keep = sb > sa
                    if len(content) == 1 and len(sa):  # as _replace: a match that is its content
                        code = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
                        keep &= ~((sb - sa == 1) & (code[np.minimum(sa, len(text) - 1)] == ord(content)))
                    sa, sb = sa[keep], sb[keep]
                    if not len(sa):
                        continue
                parts, pos = [], 0
                for a, b in zip(sa.tolist(), sb.tolist()):
                    parts += (text[pos:a], content)
                    pos = b
                parts.append(text[pos:])
                # as _replace: a match's characters leave, the content's come in aligned like
                # its last one: each character repeated as often as it is kept (0 in a match,
                # len(content) for a match's last one)
                n = len(text)
                delta = np.zeros(n + 1, dtype=np.int64)
                np.add.at(delta, sa, -1)
                np.add.at(delta, sb, 1)
                counts = (np.cumsum(delta[:n]) == 0).astype(np.int64)
                counts[sb - 1] = len(content)
                text, at = "".join(parts), np.repeat(np.arange(n, dtype=np.int64), counts)
            at_all = at if at_all is None else np.where(at >= 0, at_all[np.maximum(at, 0)], -1)
        if at_all is None:
            return text, None, None
        keep = at_all >= 0
        return text, np.where(keep, at_all, 0), np.where(keep, at_all + 1, 0)

    return run


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


# the measured character sets the normalizers remove or space out, by bit of _code_table
_CHAR_BITS = {"bert_removed": 1 << 5, "mn": 1 << 6, "mark": 1 << 7, "cjk": 1 << 8, "bert_ws": 1 << 9}
_CHARS_SET: set = set()  # the kinds whose bit is in the table


def _kind_cps(kind: str):
    if kind == "cjk":
        return (c for lo, hi in _CJK_RANGES for c in range(lo, hi + 1))
    if kind == "bert_ws":
        return iter(_WS | {9, 10, 13})
    if kind == "bert_removed":
        return (c for lo, hi in _BERT_REMOVED for c in range(lo, hi + 1))
    return iter({"mn": _HF_MN, "mark": _HF_MARK}[kind])


def _char_positions(text: str, kind: str):
    """The indices (a numpy array) of text's characters in a measured set (_CHAR_BITS): a
    lookup per code point in _code_table, ~10 us a 4 KB text, where a `re` class of the set
    searched 40 (BertNormalizer's removed characters) to 420 (StripAccents' marks)."""
    import numpy as np

    if kind == "bert_removed" and text.isascii():  # most texts: their ASCII controls, by bytes
        data = text.encode("ascii")
        if len(data.translate(None, _ASCII_REMOVED)) == len(data):
            return np.empty(0, dtype=np.intp)
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    return np.flatnonzero(_kind_table(kind)[codes] & _CHAR_BITS[kind])


# BertNormalizer's removed characters below 0x80, for bytes.translate's delete
_ASCII_REMOVED = bytes(c for lo, hi in _BERT_REMOVED for c in range(lo, min(hi, 127) + 1))


def _kind_table(kind: str):
    """_code_table, with kind's bit in it."""
    if kind not in _CHARS_SET:
        import numpy as np

        with _TABLE_LOCK:
            if kind not in _CHARS_SET:
                _code_table()[np.fromiter(_kind_cps(kind), dtype=np.int64)] |= _CHAR_BITS[kind]
                _CHARS_SET.add(kind)
    return _code_table()


def _without(text: str, positions) -> str:
    """text without the characters at positions (a numpy array)."""
    import numpy as np

    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    return np.delete(codes, positions).tobytes().decode("utf-32-le", "surrogatepass")


def _spaced(text: str, positions) -> tuple[str, Any]:
    """text with a space before and after each character at positions (BertNormalizer's
    handle_chinese_chars), and how many characters each one became (a numpy array)."""
    import numpy as np

    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    counts = np.ones(len(codes), dtype=np.int64)
    counts[positions] = 3
    out = np.repeat(codes, counts)
    first = np.cumsum(counts)[positions] - 3
    out[first] = out[first + 2] = 32
    return out.tobytes().decode("utf-32-le", "surrogatepass"), counts


# ASCII's whitespace characters as spaces, for bytes.translate
_BERT_WS_ASCII = bytes(32 if c in _WS or c in (9, 10, 13) else c for c in range(256))


def _bert_spaces(text: str) -> str:
    """BertNormalizer's clean_text: every whitespace character as a space (one for one).
    str.translate with a dict made this step cost more than the whole C encode (120 us a 4 KB
    multi-script text); bytes.translate and the table take 1 and 12."""
    if text.isascii():
        return text.encode("ascii").translate(_BERT_WS_ASCII).decode("ascii")
    import numpy as np

    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    spaced = np.where(_kind_table("bert_ws")[codes] & _CHAR_BITS["bert_ws"], np.uint32(32), codes)
    return spaced.astype(np.uint32).tobytes().decode("utf-32-le", "surrogatepass")


def _bert(ns: _NS, clean_text: bool, chinese: bool, strip_accents: bool | None, lowercase: bool) -> None:
    if clean_text:
        ns.filter_out("bert_removed")
        ns.same_length_map(_bert_spaces(ns.text))
    if chinese:
        t = ns.text
        if not t.isascii():
            at = _char_positions(t, "cjk")
            if not ns.track:  # the text only: one pass (a region per ideograph cost more than the encode)
                if len(at):
                    ns.text = _spaced(t, at)[0]
            else:
                ns.transform_regions([(i, i + 1, [(" ", 0), (t[i], 1), (" ", 1)]) for i in at.tolist()])
    if strip_accents if strip_accents is not None else lowercase:
        _unicode_nf(ns, "NFD")
        ns.filter_out("mn")
    if lowercase:
        _lowercase(ns)


def nf_forms(spec: Any) -> tuple[str, ...] | None:
    """The Unicode normalization forms of a normalizer that is nothing else (NFC, NFD, NFKC or
    NFKD, or a Sequence of them), in order; None for any other normalizer, or none."""
    if not isinstance(spec, Mapping):
        return None
    if spec.get("type") in ("NFC", "NFD", "NFKC", "NFKD"):
        return (spec["type"],)
    subs = spec.get("normalizers") if spec.get("type") == "Sequence" else None
    if not isinstance(subs, list) or not subs:
        return None
    forms: tuple[str, ...] = ()
    for sub in subs:
        f = nf_forms(sub)
        if f is None:
            return None
        forms += f
    return forms


def nf_unchanged(forms: tuple[str, ...]):
    """A test of whether the forms leave a text as it is, so that its alignments are the
    identity and the normalizer can be skipped (most text is NFC already: Qwen's files
    normalize with NFC): ASCII, or normalized in every form and free of the characters whose
    normalization scantok takes from tokenizers' tables rather than Python's (the frozen
    ones).  The same test _unicode_nf makes before it normalizes."""
    def unchanged(text: str) -> bool:
        if text.isascii():
            return True
        for form in forms:
            if _has_frozen(form, text) or not unicodedata.is_normalized(form, text):
                return False
        return True

    return unchanged


def _norm_steps(spec: Any, where: str = "normalizer", extended: bool = False) -> list:
    """Compiles a HF normalizer JSON object into a list of callables on _NS (``extended``:
    also Replace and Prepend, which scantok.Tokenizer supports and WordLevel does not)."""
    if spec is None:
        return []
    if not isinstance(spec, Mapping) or "type" not in spec:
        raise WordLevelError(f"{where}: expected an object with a 'type', got {spec!r}")
    t = spec["type"]
    if t == "Sequence":
        out = []
        for i, sub in enumerate(items(spec.get("normalizers"), f"{where}.normalizers", WordLevelError)):
            out.extend(_norm_steps(sub, f"{where}.normalizers[{i}]", extended))
        return out
    if t == "Lowercase":
        return [_lowercase]
    if t in ("NFC", "NFD", "NFKC", "NFKD"):
        return [lambda ns, f=t: _unicode_nf(ns, f)]
    if t == "Strip":
        left = flag(spec, "strip_left", True, where, WordLevelError)
        right = flag(spec, "strip_right", True, where, WordLevelError)
        return [lambda ns: _strip(ns, left, right)]
    if t == "BertNormalizer":
        strip = spec.get("strip_accents")
        if strip is not None and type(strip) is not bool:
            raise WordLevelError(f"{where}: strip_accents must be true, false or null, got {strip!r}")
        args = (
            flag(spec, "clean_text", True, where, WordLevelError),
            flag(spec, "handle_chinese_chars", True, where, WordLevelError),
            strip,
            flag(spec, "lowercase", True, where, WordLevelError),
        )
        return [lambda ns: _bert(ns, *args)]
    if t == "StripAccents" and extended:  # its marks are not BertNormalizer's (measured)
        return [lambda ns: ns.filter_out("mark")]
    if t == "Replace" and extended:
        pat = spec.get("pattern")
        content = spec.get("content")
        if not isinstance(content, str):
            raise WordLevelError(f"{where}: Replace needs a string 'content'")
        return [lambda ns, m=_pattern_matcher(pat, where), c=content: _replace(ns, m, c)]
    if t == "Prepend" and extended:
        pre = spec.get("prepend")
        if not isinstance(pre, str):
            raise WordLevelError(f"{where}: Prepend needs a string 'prepend'")
        return [lambda ns, p=pre: _prepend(ns, p)]
    raise UnsupportedComponentError(f"{where}: unsupported normalizer type {t!r}")


def _pattern_matcher(pat: Any, where: str):
    """The matcher of a HF pattern object: ``{"String": s}`` or ``{"Regex": r}`` (Oniguruma)."""
    from .patterns import _Matcher, _regex_matcher

    if isinstance(pat, Mapping) and isinstance(pat.get("String"), str):
        if not pat["String"]:  # tokenizers puts the content at every character boundary
            raise UnsupportedComponentError(f"{where}: Replace of the empty string (not supported)")
        return _Matcher(None, "", literal=pat["String"])
    if isinstance(pat, Mapping) and isinstance(pat.get("Regex"), str):
        try:
            return _regex_matcher(pat["Regex"])
        except UnsupportedComponentError as e:  # (its message names a Split's regex)
            msg = str(e).removeprefix("Split regex: ")
            raise UnsupportedComponentError(f"{where}: Replace regex: {msg}") from None
    raise WordLevelError(f"{where}: pattern must be {{'String': ...}} or {{'Regex': ...}}")


def _replace_spans(matcher, text: str, content: str) -> list[tuple[int, int]]:
    """The matches a Replace changes something at: non-empty, and not already its one-char
    content (a single space under \\s+ -> " " changes neither the text nor, its one char
    aligned like itself, the alignments: left out, most texts keep their identity alignments;
    building them cost CLIP's normalizer 4 ms a 4 KB text)."""
    one = len(content) == 1
    return [(a, b) for a, b in matcher.spans(text) if b > a and not (one and b == a + 1 and text[a] == content)]


def _replace(ns: _NS, matcher, content: str) -> None:
    """HF's NormalizedString::replace: each match is removed and ``content`` inserted, every
    inserted char aligned like the match's last char."""
    t = ns.text
    spans = _replace_spans(matcher, t, content)
    if not spans:
        return
    if not ns.track:
        parts, pos = [], 0
        for a, b in spans:
            parts += (t[pos:a], content)
            pos = b
        parts.append(t[pos:])
        ns.text = "".join(parts)
        return
    old = ns.materialize()
    text, align, pos = [], [], 0
    for a, b in spans:
        text += (t[pos:a], content)
        align += old[pos:a]
        align += [old[b - 1]] * len(content)
        pos = b
    text.append(t[pos:])
    align += old[pos:]
    ns.text = "".join(text)
    ns.align = align


def _prepend(ns: _NS, prefix: str) -> None:
    """HF's NormalizedString::prepend (on a non-empty string): the prefix is aligned like the
    first char.  An empty prefix leaves the text but makes its first char an insertion, which
    tokenizers aligns to (0, 0) of the segment, wherever that char came from (after a Strip, say:
    found by a helper's campaign); tokenizers 0.23.3 then panics in some normalizers after it,
    Lowercase and NFD among them, where scantok goes on with that alignment."""
    if not ns.text:
        return
    if not prefix:
        if ns.track:
            ns.align = [(0, 0)] + ns.materialize()[1:]
        return
    if ns.track:
        old = ns.materialize()
        ns.align = [old[0]] * len(prefix) + old
    ns.text = prefix + ns.text



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
