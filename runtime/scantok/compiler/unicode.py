"""Unicode property sets for the compiler, from the compact tables shipped in the package.

`make gen` reads the pinned UCD files (gen/ucd.py, a subclass of :class:`UnicodeTables`) and
writes one table file per Unicode version into ``scantok/compiler/data/`` with
:func:`dump`; at run time :func:`load` reads it back, so ``scantok.compile`` needs neither the
UCD files nor the network. Property *names* resolve exactly as Python's `regex` module resolves
the text inside ``\\p{...}`` (the query code below is the one the generator runs too).

File layout: one banner line (DO NOT EDIT, generator and Unicode versions, the SHA-256 of the
UCD files it was built from and of the payload), one JSON line (property names, values and the
position of each set in the blob), then the blob: each set's ranges as unsigned LEB128 deltas.
"""
from __future__ import annotations

import hashlib
import json
from bisect import bisect_left, bisect_right
import re
from pathlib import Path
from typing import Iterator

from .charset import CharSet

DATA_DIR = Path(__file__).resolve().parent / "data"
TABLE_FORMAT = "scantok-unicode-1"


class UCDError(Exception):
    """The UCD files or the shipped tables are missing, corrupt, of another version, or unparsable."""


class UnknownProperty(UCDError, KeyError):
    """`\\p{name}` names nothing `regex` would accept (regex raises "unknown property")."""

    def __init__(self, name: str, reason: str = "unknown Unicode property"):
        super().__init__(name)
        self.name = name
        self.reason = reason

    def __str__(self) -> str:  # KeyError's str() would repr() the whole message
        return f"{self.reason}: \\p{{{self.name}}}"


class UnsupportedProperty(UnknownProperty):
    """`regex` accepts the name, but the data it needs is not among the pinned UCD files
    (Block, Script_Extensions, Bidi_Class, emoji properties, ...). Refusing is the only way to
    never emit a class that silently differs from the oracle."""


def loose(name: str) -> str:
    """Loose matching as `regex` applies it (its standardise_name): drop spaces, '_' and '-',
    ignore case. UAX44-LM3 also drops an "is" prefix; `regex` only does that for whole
    unqualified names, in property()."""
    return "".join(ch for ch in name if ch not in " _-").upper()


BINARY_VALUES = {"YES": True, "Y": True, "TRUE": True, "T": True,
                 "NO": False, "N": False, "FALSE": False, "F": False}


class Property:
    """One property as `regex` knows it: its canonical name, its loose value names mapped to a
    value key, and the sets (None if the data is not among the pinned files)."""

    def __init__(self, name: str):
        self.name = name
        self.values: dict[str, str] = {}          # loose value name -> value key
        self.sets = None                          # value key -> CharSet (a Mapping), or None

    @property
    def is_binary(self) -> bool:
        return set(self.values) == set(BINARY_VALUES)


class UnicodeTables:
    """Code-point sets of one Unicode version, and the `\\p{...}` name resolution of `regex`.

    Subclasses fill ``version``, ``_props`` (loose property name/alias -> Property) and
    ``_simple_fold`` (code point -> simple case folding) and ``_full_fold`` (code point ->
    its multi-character full case folding, CaseFolding.txt status F), then call
    ``_index_folds()``.
    """

    version: str
    _props: dict[str, Property]
    _simple_fold: dict[int, int]
    _full_fold: dict[int, tuple[int, ...]]

    def _index_folds(self) -> None:
        by_fold: dict[int, set[int]] = {}
        for cp, folded in self._simple_fold.items():
            by_fold.setdefault(folded, {folded}).add(cp)
        self._fold_class: dict[int, frozenset[int]] = {}
        for members in by_fold.values():
            frozen = frozenset(members)
            for cp in frozen:
                self._fold_class[cp] = frozen

    def _prop(self, name: str) -> Property:
        return self._props[loose(name)]

    def _binary(self, name: str) -> CharSet:
        return self._prop(name).sets["Y"]

    # ------------------------------------------------------------ queries

    def property(self, expr: str) -> CharSet:
        """The code points `\\p{expr}` matches in `regex` (without flags): `L`, `Letter`,
        `gc=Lu`, `L&`, `Han`, `Script=Han`, `sc=Latn`, `White_Space`, `Alpha=No`, `Any`,
        `Assigned`, `^L` (negated), ... Raises UnknownProperty / UnsupportedProperty."""
        text = expr
        negate = text.startswith("^")
        if negate:
            text = text[1:]
        result = self._resolve(expr, text)
        return result.complement() if negate else result

    def _resolve(self, expr: str, text: str) -> CharSet:
        # Same order of attempts as regex's parse_property_name + lookup_property.
        sep = min((i for i in (text.find("="), text.find(":")) if i >= 0), default=-1)
        if sep >= 0:
            if not text[sep + 1:].strip():
                # regex would not even read this as a property (it falls back to a literal
                # "p"); refusing is the only safe reading.
                raise UnknownProperty(expr, "missing Unicode property value")
            return self._qualified(expr, loose(text[:sep]), loose(text[sep + 1:].strip()))
        name = loose(text)

        gc = self._prop("gc")
        if name in gc.values:
            return gc.sets[gc.values[name]]
        sc = self._prop("sc")
        if name in sc.values:
            return sc.sets[sc.values[name]]
        if name in self._prop("blk").values:
            raise UnsupportedProperty(expr, "Unicode blocks are not among the pinned UCD files")
        prop = self._props.get(name)
        if prop is not None:
            if prop.sets is None:
                raise UnsupportedProperty(expr, f"the data for {prop.name} is not among the "
                                          "pinned UCD files")
            if prop.is_binary:
                return prop.sets["Y"]
            # regex: a bare enumerated property name means "not its default value".
            if prop is gc:
                return gc.sets["Assigned"]
            if prop is sc:
                return sc.sets["Zzzz"].complement()
            raise UnsupportedProperty(expr, f"bare {prop.name} (an enumerated property)")
        if name.startswith("IS"):
            prop = self._props.get(name[2:])
            if prop is not None and "YES" in prop.values:   # regex: any property with a Yes
                if prop.sets is None:
                    raise UnsupportedProperty(expr, f"the data for {prop.name} is not among "
                                              "the pinned UCD files")
                return prop.sets[prop.values["YES"]]
            if name[2:] in sc.values:
                return sc.sets[sc.values[name[2:]]]
        if name.startswith("IN") and name[2:] in self._prop("blk").values:
            raise UnsupportedProperty(expr, "Unicode blocks are not among the pinned UCD files")
        raise UnknownProperty(expr)

    def _qualified(self, expr: str, prop_name: str, value_name: str) -> CharSet:
        prop = self._props.get(prop_name)
        if prop is None:
            raise UnknownProperty(expr)
        if prop.name == "Script_Extensions":
            raise UnsupportedProperty(expr, "Script_Extensions (ScriptExtensions.txt is not "
                                      "among the pinned UCD files)")
        if value_name not in prop.values:
            raise UnknownProperty(expr, "unknown Unicode property value")
        if prop.sets is None:
            raise UnsupportedProperty(expr, f"the data for {prop.name} is not among the "
                                      "pinned UCD files")
        return prop.sets[prop.values[value_name]]

    def space(self) -> CharSet:
        """`\\s` in regex: White_Space (U+0085, U+00A0, U+2028 yes; U+001C..1F, U+200B no)."""
        return self._binary("White_Space")

    def digit(self) -> CharSet:
        """`\\d` in regex: General_Category=Decimal_Number (Nd), not just 0-9."""
        return self._prop("gc").sets["Nd"]

    def word(self) -> CharSet:
        """`\\w` in regex: Alphabetic | Mark | Nd | Pc | Join_Control (UTS #18 Annex C)."""
        return self._prop("Word").sets["Y"]

    def simple_casefold(self, cp: int) -> int:
        """Simple case folding (CaseFolding.txt statuses C and S)."""
        return self._simple_fold.get(cp, cp)

    def casefold_closure(self, cp: int, *, regex_dotted_i: bool = False) -> CharSet:
        """Every code point whose simple case folding equals that of `cp`, and `cp` itself:
        's' -> {s, S, U+017F}, 'k' -> {k, K, U+212A}. This is what (?i) means in Rust's regex
        (tiktoken) and, for all but four code points, in Python's `regex`.

        regex_dotted_i=True reproduces Python `regex`'s special case for the Turkic letters
        (its all_cases table): i ~ I ~ U+0131 and i ~ U+0130, which is not an equivalence:
        I -> {I, i, U+0131}, i -> {i, I, U+0130}, U+0130 -> {U+0130, i}, U+0131 -> {U+0131, I}.
        """
        if regex_dotted_i and cp in REGEX_DOTTED_I:
            return CharSet.of(*REGEX_DOTTED_I[cp])
        return CharSet.of(*self._fold_class.get(cp, (cp,)))

    def casefold_closure_set(self, codepoints: CharSet, *, regex_dotted_i: bool = False
                             ) -> CharSet:
        """The union of casefold_closure over a set: what a class matches under (?i)."""
        keys = self.__dict__.get("_fold_keys")
        if keys is None:
            keys = self._fold_keys = sorted(self._fold_class)
        extra = []
        for lo, hi in codepoints.ranges:  # only the code points that have a case folding
            for i in range(bisect_left(keys, lo), bisect_right(keys, hi)):
                extra.extend(self._fold_class[keys[i]])
        if regex_dotted_i:
            extra += [c for cp, cases in REGEX_DOTTED_I.items() if cp in codepoints
                      for c in cases]
        return codepoints | CharSet.of(*extra)

    def multi_char_folds(self) -> dict[int, tuple[int, ...]]:
        """Code points whose full case folding is several characters (U+00DF -> s s, ...)."""
        return self._full_fold

    def property_sets(self) -> Iterator[tuple[str, str, CharSet]]:
        """(property, value key, set) for every set the tables hold."""
        for prop in self._unique_props():
            if prop.sets is not None:
                for key in _stored_keys(prop):
                    yield prop.name, key, prop.sets[key]

    def _unique_props(self) -> list[Property]:
        seen: dict[int, Property] = {}
        for prop in self._props.values():
            seen.setdefault(id(prop), prop)
        return list(seen.values())


# regex's hand-written override of its all_cases table for I/i/U+0130/U+0131
# (tools/build_regex_unicode.py, generate_all_cases). Verified empirically against
# regex==2025.9.18 by tests/test_ucd.py.
REGEX_DOTTED_I = {
    0x49: (0x49, 0x69, 0x131),
    0x69: (0x69, 0x49, 0x130),
    0x130: (0x130, 0x69),
    0x131: (0x131, 0x49),
}


# ---------------------------------------------------------------- the shipped table files

def _varints(values: list[int]) -> bytes:
    out = bytearray()
    for v in values:
        while v >= 0x80:
            out.append((v & 0x7F) | 0x80)
            v >>= 7
        out.append(v)
    return bytes(out)


def _read_varints(blob: bytes, offset: int, count: int) -> tuple[list[int], int]:
    values, pos = [], offset
    for _ in range(count):
        v = shift = 0
        while True:
            b = blob[pos]
            pos += 1
            v |= (b & 0x7F) << shift
            if b < 0x80:
                break
            shift += 7
        values.append(v)
    return values, pos


def _range_deltas(cs: CharSet) -> list[int]:
    out, prev = [], 0
    for lo, hi in cs.ranges:
        out += [lo - prev, hi - lo]
        prev = hi + 1
    return out


def _ranges_of(deltas: list[int]) -> CharSet:
    ranges, prev = [], 0
    for i in range(0, len(deltas), 2):
        lo = prev + deltas[i]
        hi = lo + deltas[i + 1]
        ranges.append((lo, hi))
        prev = hi + 1
    return CharSet(ranges)


def _stored_keys(prop: Property) -> list[str]:
    """A binary property stores Yes only (No is its complement)."""
    return ["Y"] if prop.is_binary else sorted(set(prop.values.values()))


def table_path(version: str) -> Path:
    return DATA_DIR / f"unicode_{version}.bin"


def dump(tables: UnicodeTables, generator_version: str, source_sha256: str) -> bytes:
    """The table file of `tables` (deterministic: `make gen` output is byte-reproducible)."""
    blob = bytearray()
    props = []
    for prop in tables._unique_props():
        entry = {"name": prop.name, "aliases": sorted(k for k, p in tables._props.items() if p is prop),
                 "values": dict(sorted(prop.values.items())), "sets": None}
        if prop.sets is not None:
            entry["sets"] = {}
            for key in _stored_keys(prop):
                deltas = _range_deltas(prop.sets[key])
                entry["sets"][key] = [len(blob), len(deltas)]
                blob += _varints(deltas)
        props.append(entry)
    folds = sorted(tables._simple_fold.items())
    fold_deltas, prev = [], 0
    for cp, target in folds:
        fold_deltas += [cp - prev, target]
        prev = cp
    fold_at = len(blob)
    blob += _varints(fold_deltas)
    full = []
    for cp, target in sorted(tables._full_fold.items()):
        full += [cp, len(target), *target]
    meta = {"format": TABLE_FORMAT, "version": tables.version, "props": props,
            "fold": [fold_at, len(fold_deltas)],
            "full_fold": [len(blob), len(full)]}
    blob += _varints(full)
    payload = json.dumps(meta, sort_keys=True, separators=(",", ":")).encode() + b"\n" + bytes(blob)
    banner = ("# DO NOT EDIT: generated by `make gen` (scantok gen %s, Unicode %s, UCD files sha256 %s, "
              "payload sha256 %s)\n" % (generator_version, tables.version, source_sha256,
                                       hashlib.sha256(payload).hexdigest()))
    return banner.encode() + payload


_BANNER = re.compile(rb"# DO NOT EDIT: .*?, Unicode ([0-9.]+), .*payload sha256 ([0-9a-f]{64})\)\n")


class _LazySets:
    """value key -> CharSet, decoded from the blob on first use (a `\\p{..}` needs one or two)."""

    def __init__(self, blob: bytes, where: dict[str, list[int]], binary: bool):
        self._blob, self._where, self._binary, self._done = blob, where, binary, {}

    def __contains__(self, key) -> bool:
        return key in self._where or (self._binary and key == "N")

    def __getitem__(self, key: str) -> CharSet:
        cs = self._done.get(key)
        if cs is None:
            if self._binary and key == "N":
                cs = self["Y"].complement()
            else:
                offset, count = self._where[key]
                cs = _ranges_of(_read_varints(self._blob, offset, count)[0])
            self._done[key] = cs
        return cs


class PackagedTables(UnicodeTables):
    """The tables of one Unicode version as shipped in scantok/compiler/data/."""

    def __init__(self, data: bytes, where: str = "<bytes>"):
        m = _BANNER.match(data)
        if not m:
            raise UCDError(f"{where}: not a scantok Unicode table file")
        payload = data[m.end():]
        if hashlib.sha256(payload).hexdigest() != m.group(2).decode():
            raise UCDError(f"{where}: checksum mismatch (the file is corrupt)")
        head, _, blob = payload.partition(b"\n")
        meta = json.loads(head)
        if meta.get("format") != TABLE_FORMAT:
            raise UCDError(f"{where}: table format {meta.get('format')!r}, expected {TABLE_FORMAT!r}")
        self.version = meta["version"]
        self._props = {}
        for entry in meta["props"]:
            prop = Property(entry["name"])
            prop.values = entry["values"]
            if entry["sets"] is not None:
                prop.sets = _LazySets(blob, entry["sets"], prop.is_binary)
            for alias in entry["aliases"]:
                self._props[alias] = prop
        deltas, _ = _read_varints(blob, *meta["fold"])
        self._simple_fold, cp = {}, 0
        for i in range(0, len(deltas), 2):
            cp += deltas[i]
            self._simple_fold[cp] = deltas[i + 1]
        values, _ = _read_varints(blob, *meta["full_fold"])
        self._full_fold, i = {}, 0
        while i < len(values):
            n = values[i + 1]
            self._full_fold[values[i]] = tuple(values[i + 2:i + 2 + n])
            i += 2 + n
        self._index_folds()


_loaded: dict[str, PackagedTables] = {}


def available_versions() -> list[str]:
    return sorted(p.name[len("unicode_"):-len(".bin")] for p in DATA_DIR.glob("unicode_*.bin"))


def load(version: str) -> PackagedTables:
    """The shipped tables of Unicode `version` (read once per process)."""
    tables = _loaded.get(version)
    if tables is None:
        path = table_path(version)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise UCDError(f"scantok has no Unicode {version} tables (shipped: "
                           f"{', '.join(available_versions()) or 'none'})") from None
        tables = _loaded[version] = PackagedTables(data, str(path))
    return tables
