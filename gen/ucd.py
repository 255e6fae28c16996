"""The Unicode Character Database reader: property names -> code-point sets.

Every character class the compiler emits comes from here, so the one rule is parity with the
reference engines. Property *names* are resolved exactly as Python's `regex` module resolves the
text inside `\\p{...}` (the differential oracle, `regex==2025.9.18` for Unicode 16.0.0), and the
sets are built from the pinned UCD files listed in ucd/manifest.toml, each checked against its
SHA-256 before it is read.

    ucd = load()                      # UNICODE_VERSION, from $UCD_DIR or <repo>/ucd
    ucd.property("L")                 # \\p{L}
    ucd.property("Script=Han")        # \\p{Script=Han}
    ucd.space(), ucd.digit(), ucd.word()   # \\s \\d \\w
    ucd.casefold_closure(ord("k"))    # {k, K, U+212A}

Files are looked up in `<ucd_dir or $UCD_DIR or <repo>/ucd>/<version>/`; `make ucd`
(python -m gen.fetch_ucd) downloads them.
"""
from __future__ import annotations

import hashlib
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from . import compiler

CharSet = compiler.charset.CharSet
_uni = compiler.unicode
UCDError, UnknownProperty, UnsupportedProperty = _uni.UCDError, _uni.UnknownProperty, _uni.UnsupportedProperty
loose, _BINARY_VALUES, _Property = _uni.loose, _uni.BINARY_VALUES, _uni.Property

# The Unicode version tiktoken 0.14.0 classifies characters by (see DESIGN.md, "Unicode
# version"). The only place the default is written down.
UNICODE_VERSION = "16.0.0"

REPO_ROOT = Path(__file__).resolve().parent.parent
MANIFEST_PATH = REPO_ROOT / "ucd" / "manifest.toml"
DEFAULT_UCD_DIR = REPO_ROOT / "ucd"


class UCDNotFound(UCDError):
    """The UCD files for a version are not where they were looked for (tests skip on this)."""


# ---------------------------------------------------------------- manifest and file checks


@dataclass(frozen=True)
class UCDFile:
    name: str        # local file name, flat in ucd/<version>/
    url_path: str    # relative to VersionSpec.base_url
    sha256: str


@dataclass(frozen=True)
class VersionSpec:
    version: str
    base_url: str
    regex_oracle: str          # e.g. "regex==2025.9.18"
    files: tuple[UCDFile, ...]


def read_manifest(path: str | Path = MANIFEST_PATH) -> dict[str, VersionSpec]:
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise UCDError(f"cannot read the UCD manifest {path}: {e}") from e
    specs = {}
    for version, entry in data.get("versions", {}).items():
        files = tuple(UCDFile(name, f["url_path"], f["sha256"].lower())
                      for name, f in entry["files"].items())
        specs[version] = VersionSpec(version, entry["base_url"], entry["regex_oracle"], files)
    return specs


def version_spec(version: str, manifest_path: str | Path = MANIFEST_PATH) -> VersionSpec:
    specs = read_manifest(manifest_path)
    if version not in specs:
        raise UCDError(f"Unicode {version} is not pinned in {manifest_path} "
                       f"(pinned: {', '.join(sorted(specs))})")
    return specs[version]


def sha256_of(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def ucd_root(ucd_dir: str | Path | None = None) -> Path:
    """The directory holding <version>/ subdirectories. A relative UCD_DIR is relative to the
    current directory (CI runs from the repo root with UCD_DIR=../shared/ucd)."""
    if ucd_dir is not None:
        return Path(ucd_dir).resolve()
    env = os.environ.get("UCD_DIR")
    if env:
        return Path(env).resolve()
    return DEFAULT_UCD_DIR


def verified_files(spec: VersionSpec, directory: Path) -> dict[str, Path]:
    """Paths of every manifest file in `directory`, each checked against its SHA-256."""
    hint = "run `make ucd` to download them, or set UCD_DIR to a directory holding " \
           f"{spec.version}/"
    missing = [f.name for f in spec.files if not (directory / f.name).is_file()]
    if missing:
        raise UCDNotFound(f"Unicode {spec.version} UCD files missing from {directory}: "
                          f"{', '.join(missing)}; {hint}")
    paths = {}
    for f in spec.files:
        path = directory / f.name
        actual = sha256_of(path)
        if actual != f.sha256:
            raise UCDError(f"{path}: SHA-256 mismatch (expected {f.sha256}, got {actual}); the "
                           f"file is corrupt or not from Unicode {spec.version}; {hint}")
        paths[f.name] = path
    return paths


# ---------------------------------------------------------------- loading

_cache: dict[tuple[str, Path], "UCD"] = {}


def load(version: str | None = None, ucd_dir: str | Path | None = None) -> "UCD":
    """The UCD for `version` (default UNICODE_VERSION), verified and parsed once per process."""
    version = version or UNICODE_VERSION
    directory = ucd_root(ucd_dir) / version
    key = (version, directory)
    if key not in _cache:
        spec = version_spec(version)
        _cache[key] = UCD(spec, verified_files(spec, directory))
    return _cache[key]


def _data_lines(path: Path):
    """(first, last, fields) per data line of a semicolon-separated UCD file."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.partition("#")[0].strip()
            if not line:
                continue
            fields = [field.strip() for field in line.split(";")]
            first, _, last = fields[0].partition("..")
            yield int(first, 16), int(last or first, 16), fields[1:]


# General categories: the two-letter ones partition the code space; the groups are unions.
_GC_GROUPS = {
    "C": ("Cc", "Cf", "Cs", "Co", "Cn"),
    "L": ("Lu", "Ll", "Lt", "Lm", "Lo"),
    "LC": ("Lu", "Ll", "Lt"),
    "M": ("Mn", "Mc", "Me"),
    "N": ("Nd", "Nl", "No"),
    "P": ("Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po"),
    "S": ("Sm", "Sc", "Sk", "So"),
    "Z": ("Zs", "Zl", "Zp"),
}


class UCD(_uni.UnicodeTables):
    """Code-point sets of one pinned Unicode version. Build with load()."""

    def __init__(self, spec: VersionSpec, paths: dict[str, Path]):
        self.version = spec.version
        self.regex_oracle = spec.regex_oracle
        self._props: dict[str, _Property] = {}    # loose property name/alias -> property
        self._read_aliases(paths["PropertyAliases.txt"], paths["PropertyValueAliases.txt"])
        self._read_general_category(paths["DerivedGeneralCategory.txt"])
        self._read_scripts(paths["Scripts.txt"])
        self._read_binary_and_enumerated(paths["PropList.txt"])
        self._read_binary_and_enumerated(paths["DerivedCoreProperties.txt"])
        self._add_regex_properties()
        self._read_case_folding(paths["CaseFolding.txt"])
        self._unicode_data_path = paths["UnicodeData.txt"]

    # ------------------------------------------------------------ parsing

    def _read_aliases(self, property_aliases: Path, value_aliases: Path) -> None:
        with open(property_aliases, encoding="utf-8") as f:
            for line in f:
                line = line.partition("#")[0].strip()
                if not line:
                    continue
                names = [n.strip() for n in line.split(";")]
                prop = _Property(names[1])            # long name is canonical
                for n in names:
                    self._props[loose(n)] = prop
        with open(value_aliases, encoding="utf-8") as f:
            for line in f:
                line = line.partition("#")[0].strip()
                if not line:
                    continue
                fields = [n.strip() for n in line.split(";")]
                prop = self._props[loose(fields[0])]
                # ccc lines carry the numeric value first, then the names.
                names = fields[2:] if prop.name == "Canonical_Combining_Class" else fields[1:]
                key = fields[1]
                for n in names:
                    prop.values.setdefault(loose(n), key)

    def _read_general_category(self, path: Path) -> None:
        gc = self._prop("gc")
        ranges: dict[str, list[tuple[int, int]]] = {}
        for lo, hi, fields in _data_lines(path):
            ranges.setdefault(fields[0], []).append((lo, hi))
        sets = {cat: CharSet(r) for cat, r in ranges.items()}
        listed = CharSet([r for rs in ranges.values() for r in rs])
        # Cn is the default for anything not listed (the file lists it too, but be exact).
        sets["Cn"] = sets.get("Cn", CharSet()) | listed.complement()
        for group, members in _GC_GROUPS.items():
            sets[group] = CharSet().union(*(sets.get(m, CharSet()) for m in members))
        # `regex` adds "X&" for every one-letter group (so \p{L&} is \p{L}, NOT \p{LC}), and a
        # compound value "Assigned" = everything but Cn (surrogates and private use included).
        for group in ("C", "L", "M", "N", "P", "S", "Z"):
            gc.values[loose(group + "&")] = group
        gc.values["ASSIGNED"] = "Assigned"
        sets["Assigned"] = sets["Cn"].complement()
        gc.sets = sets

    def _read_scripts(self, path: Path) -> None:
        sc = self._prop("sc")
        ranges: dict[str, list[tuple[int, int]]] = {}
        for lo, hi, fields in _data_lines(path):
            ranges.setdefault(sc.values[loose(fields[0])], []).append((lo, hi))
        sets = {key: CharSet(r) for key, r in ranges.items()}
        listed = CharSet([r for rs in ranges.values() for r in rs])
        sets["Zzzz"] = sets.get("Zzzz", CharSet()) | listed.complement()   # @missing: Unknown
        # Values with no code points of their own (Hrkt, Katakana_Or_Hiragana) match nothing.
        sc.sets = {key: sets.get(key, CharSet()) for key in set(sc.values.values())}

    def _read_binary_and_enumerated(self, path: Path) -> None:
        ranges: dict[tuple[str, str], list[tuple[int, int]]] = {}
        for lo, hi, fields in _data_lines(path):
            prop = self._prop(fields[0])
            value = "Y" if len(fields) == 1 else prop.values[loose(fields[1])]
            ranges.setdefault((prop.name, value), []).append((lo, hi))
        by_prop: dict[str, dict[str, CharSet]] = {}
        for (name, value), r in ranges.items():
            by_prop.setdefault(name, {})[value] = CharSet(r)
        for name, sets in by_prop.items():
            prop = self._prop(name)
            listed = CharSet().union(*sets.values())
            if prop.is_binary:
                prop.sets = {"Y": sets["Y"], "N": sets["Y"].complement()}
            else:
                # Enumerated (InCB): the unlisted rest has the default value, which is the one
                # PropertyValueAliases calls None for InCB; find it as the value with no data.
                defaults = set(prop.values.values()) - set(sets)
                if len(defaults) != 1:
                    raise UCDError(f"{path}: cannot tell the default value of {name}")
                sets[defaults.pop()] = listed.complement()
                prop.sets = sets

    def _add_regex_properties(self) -> None:
        """Properties `regex` defines itself (tools/build_regex_unicode.py,
        make_additional_properties); Word is what \\w means."""
        gc = self._prop("gc").sets
        alphabetic = self._binary("Alphabetic")
        decimal = gc["Nd"]
        blank = CharSet.of(0x09) | gc["Zs"]
        graph = gc["Assigned"] - (self._binary("White_Space") | gc["Cc"] | gc["Cs"])
        punct_or_symbol = gc["P"] | gc["S"]
        posix_digit = CharSet([(0x30, 0x39)])
        defined = {
            ("Alphanumeric", "AlNum"): alphabetic | decimal,
            ("Any",): CharSet.full(),
            ("Blank",): blank,
            ("Graph",): graph,
            ("Print",): (graph | blank) - gc["Cc"],
            # UTS #18 Annex C: Alphabetic, Mark, Decimal_Number, Connector_Punctuation,
            # Join_Control.
            ("Word",): alphabetic | gc["M"] | decimal | gc["Pc"] | self._binary("Join_Control"),
            ("XDigit",): decimal | self._binary("Hex_Digit"),
            ("Posix_Digit",): posix_digit,
            ("Posix_AlNum",): alphabetic | posix_digit,
            ("Posix_Punct",): punct_or_symbol - alphabetic,
            ("Posix_XDigit",): CharSet([(0x30, 0x39), (0x41, 0x46), (0x61, 0x66)]),
            ("Horiz_Space", "H"): CharSet.of(0x09, 0x20, 0xA0, 0x1680, 0x180E, 0x202F, 0x205F,
                                             0x3000) | CharSet([(0x2000, 0x200A)]),
            ("Vert_Space", "V"): CharSet([(0x0A, 0x0D)]) | CharSet.of(0x85, 0x2028, 0x2029),
        }
        for names, codepoints in defined.items():
            prop = _Property(names[0])
            prop.values = {name: ("Y" if yes else "N") for name, yes in _BINARY_VALUES.items()}
            prop.sets = {"Y": codepoints, "N": codepoints.complement()}
            for name in names:
                self._props[loose(name)] = prop

    def _read_case_folding(self, path: Path) -> None:
        # Simple case folding = statuses C and S (T is the Turkic alternative, F the full one).
        self._simple_fold: dict[int, int] = {}
        self._turkic_fold: dict[int, int] = {}
        self._full_fold: dict[int, tuple[int, ...]] = {}
        for cp, _, fields in _data_lines(path):
            status, target = fields[0], fields[1].split()
            if status in ("C", "S"):
                self._simple_fold[cp] = int(target[0], 16)
            elif status == "T":
                self._turkic_fold[cp] = int(target[0], 16)
            elif status == "F":
                self._full_fold[cp] = tuple(int(t, 16) for t in target)
        self._index_folds()

    # ------------------------------------------------------------ queries (file-only)

    def general_category(self, cp: int) -> str:
        """The two-letter General_Category of one code point (Cn if unassigned)."""
        for key, codepoints in self._prop("gc").sets.items():
            if len(key) == 2 and key != "LC" and cp in codepoints:
                return key
        raise AssertionError(f"U+{cp:04X} has no general category")

    def unicode_data_categories(self):
        """(first, last, gc) from UnicodeData.txt, First>/Last> ranges joined: a second source
        for the general categories, read only by the consistency test."""
        start = None
        for lo, _, fields in _data_lines(self._unicode_data_path):
            name, gc = fields[0], fields[1]
            if name.endswith(", First>"):
                start = lo
            elif name.endswith(", Last>"):
                yield start, lo, gc
            else:
                yield lo, lo, gc


_REGEX_DOTTED_I = _uni.REGEX_DOTTED_I
