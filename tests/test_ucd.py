"""The UCD reader against its oracle, Python's `regex` (regex==2025.9.18 = Unicode 16.0.0).

Every property the compiler uses is checked on every code point 0..U+10FFFF, lone surrogates
included. The oracle set of a property comes from one `regex.finditer` of `(?:X)+` over a string
holding every code point at its own index, so each match span is a range of code points.

The UCD files come from $UCD_DIR (CI: UCD_DIR=../shared/ucd from the repo root) or <repo>/ucd;
if they are absent the tests that need them skip, naming where they looked.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import io
import os
import shutil
from pathlib import Path

import pytest

from gen import fetch_ucd, ucd
from scantok.compiler.charset import CharSet

regex = pytest.importorskip("regex")

VERSION = "16.0.0"
ORACLE = "2025.9.18"

# Every code point, each at its own index (lone surrogates are fine in a str and `regex` sees
# each one as a single Cs character, as the scanners do).
ALL_CODE_POINTS = "".join(map(chr, range(0x110000)))


@functools.lru_cache(maxsize=None)
def ucd16() -> ucd.UCD:
    try:
        return ucd.load(VERSION)
    except ucd.UCDNotFound as e:
        pytest.skip(f"UCD files unavailable: {e}")


@pytest.fixture(scope="module")
def u() -> ucd.UCD:
    return ucd16()


@pytest.fixture(scope="module", autouse=True)
def _regex_is_the_pinned_oracle():
    installed = importlib.metadata.version("regex")
    if installed != ORACLE:
        pytest.skip(f"the Unicode {VERSION} oracle is regex=={ORACLE}; regex=={installed} "
                    "is installed")


def oracle_set(pattern: str) -> CharSet:
    """The code points one-character pattern `pattern` matches, per regex."""
    return CharSet((m.start(), m.end() - 1)
                   for m in regex.finditer(f"(?:{pattern})+", ALL_CODE_POINTS))


def describe_difference(ours: CharSet, theirs: CharSet) -> str:
    extra, missing = ours - theirs, theirs - ours
    return (f"{len(extra)} code points only in ours {extra!r}, "
            f"{len(missing)} only in regex {missing!r}")


# --------------------------------------------------------------------------- exhaustive sets

# What the compiler uses (DESIGN.md "Regex semantics"), then the spellings it may meet.
COMPILER_PROPERTIES = ["L", "Lu", "Ll", "Lt", "Lm", "Lo", "M", "N", "P", "S", "C", "Z", "L&",
                       "Han", "Hiragana", "Katakana"]
OTHER_PROPERTIES = [
    "LC", "Letter", "Cased_Letter", "Other", "Cn", "Cs", "Co", "Cc", "Cf", "Nd", "Pc", "Zs",
    "gc=Lu", "General_Category=Uppercase_Letter", "gc:Other", "Assigned", "gc=Assigned", "Any",
    "Script=Han", "sc=Latin", "sc=Latn", "Common", "Inherited", "Qaai", "Unknown", "Zzzz",
    "Hrkt", "IsGreek", "Arabic", "Script", "General_Category",
    "White_Space", "space", "Alphabetic", "IsAlpha", "Join_Control", "Uppercase", "Lowercase",
    "Cased", "Math", "Hex_Digit", "Noncharacter_Code_Point", "ID_Start", "XID_Continue",
    "Default_Ignorable_Code_Point", "Alpha=No", "WSpace=F", "InCB=Linker", "InCB=None",
    "Word", "Alnum", "Blank", "Graph", "Print", "XDigit", "Posix_Punct", "Posix_AlNum",
    "Horiz_Space", "V", "^L", "^White_Space",
]


@pytest.mark.parametrize("name", COMPILER_PROPERTIES + OTHER_PROPERTIES)
def test_property_matches_regex_on_every_code_point(u, name):
    ours, theirs = u.property(name), oracle_set(rf"\p{{{name}}}")
    assert ours == theirs, f"\\p{{{name}}}: {describe_difference(ours, theirs)}"


@pytest.mark.parametrize("escape,method", [(r"\s", "space"), (r"\d", "digit"), (r"\w", "word")])
def test_escape_matches_regex_on_every_code_point(u, escape, method):
    ours, theirs = getattr(u, method)(), oracle_set(escape)
    assert ours == theirs, f"{escape}: {describe_difference(ours, theirs)}"


def test_design_examples(u):
    # DESIGN.md: U+0085, U+00A0, U+2028 are whitespace; U+001C..U+001F and U+200B are not.
    assert all(cp in u.space() for cp in (0x85, 0xA0, 0x2028))
    assert not any(cp in u.space() for cp in (0x1C, 0x1D, 0x1E, 0x1F, 0x200B))
    # C includes unassigned and surrogates; L& is L in regex (not LC).
    assert 0x378 in u.property("C") and 0xD800 in u.property("C") and 0x10FFFF in u.property("C")
    assert u.property("L&") == u.property("L") != u.property("LC")
    assert u.digit() != CharSet([(0x30, 0x39)]) and 0x0660 in u.digit()


def test_general_categories_partition_and_agree_with_unicode_data(u):
    twos = ["Cc", "Cf", "Cs", "Co", "Cn", "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd",
            "Nl", "No", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs",
            "Zl", "Zp"]
    sets = {gc: u.property(gc) for gc in twos}
    assert sum(len(s) for s in sets.values()) == 0x110000
    assert CharSet().union(*sets.values()) == CharSet.full()
    from_unicode_data: dict[str, list[tuple[int, int]]] = {}
    for lo, hi, gc in u.unicode_data_categories():
        from_unicode_data.setdefault(gc, []).append((lo, hi))
    for gc in twos:
        if gc != "Cn":  # UnicodeData.txt does not list unassigned code points
            assert CharSet(from_unicode_data.get(gc, [])) == sets[gc], gc


# --------------------------------------------------------------------------- names

@pytest.mark.parametrize("spelling,canonical", [
    ("uppercase letter", "Lu"), ("Upper-Case_Letter", "Lu"), ("lu", "Lu"), ("LU", "Lu"),
    ("gc = lu", "Lu"), ("General Category=Uppercase Letter", "Lu"), ("g_c:L u", "Lu"),
    ("l&", "L"), ("lc", "LC"), ("cased-letter", "LC"), ("letter", "L"), ("combining mark", "M"),
    ("digit", "Nd"), ("punct", "P"), ("cntrl", "Cc"),
    ("han", "Han"), ("HANI", "Han"), ("script=hani", "Han"), ("SC : Han", "Han"),
    ("is_han", "Han"), ("hira", "Hiragana"), ("katakana", "Katakana"),
    ("white space", "White_Space"), ("wspace", "White_Space"), ("Is White-Space", "White_Space"),
    ("white_space=yes", "White_Space"), ("WSpace:T", "White_Space"), ("join_c", "Join_Control"),
    ("ANY", "Any"), ("assigned", "Assigned"),
])
def test_loose_names(u, spelling, canonical):
    assert u.property(spelling) == u.property(canonical)
    assert u.property(spelling) == oracle_set(rf"\p{{{spelling}}}")


@pytest.mark.parametrize("name", ["Foo", "gc=Foo", "Foo=Lu", "IsL", "Lx", "Script=Lu",
                                  "White_Space=Maybe", "Hanx", ""])
def test_unknown_property(u, name):
    with pytest.raises(ucd.UnknownProperty) as info:
        u.property(name)
    assert not isinstance(info.value, ucd.UnsupportedProperty)
    assert isinstance(info.value, KeyError) and info.value.name == name
    assert name in str(info.value)
    with pytest.raises(regex.error):  # and regex rejects it too
        regex.compile(rf"\p{{{name}}}")


@pytest.mark.parametrize("name", ["scx=Han", "Script_Extensions=Hira", "InGreek",
                                  "Block=Basic_Latin", "Latin_1_Supplement", "bc=L", "Emoji",
                                  "Bidi_Mirrored", "ea=W"])
def test_unsupported_property(u, name):
    regex.compile(rf"\p{{{name}}}")  # regex knows it...
    with pytest.raises(ucd.UnsupportedProperty) as info:  # ...but its data is not pinned here
        u.property(name)
    assert isinstance(info.value, ucd.UnknownProperty) and info.value.name == name


def test_bare_han_is_script_not_script_extensions(u):
    # U+3001 IDEOGRAPHIC COMMA: sc=Common, scx includes Han. regex's \p{Han} is Script.
    assert 0x3001 not in u.property("Han") and not regex.match(r"\p{Han}", "\u3001")
    assert regex.match(r"\p{scx=Han}", "\u3001")


# --------------------------------------------------------------------------- case folding

@functools.lru_cache(maxsize=None)
def case_folding_code_points() -> tuple[int, ...]:
    """Every code point on either side of any line of CaseFolding.txt (all statuses)."""
    path = ucd.ucd_root() / VERSION / "CaseFolding.txt"
    cps = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.partition("#")[0].strip()
        if line:
            code, _, mapping = (f.strip() for f in line.split(";")[:3])
            cps.add(int(code, 16))
            cps.update(int(c, 16) for c in mapping.split())
    return tuple(sorted(cps))


def test_casefold_examples(u):
    assert u.casefold_closure(ord("s")) == CharSet.of(0x53, 0x73, 0x17F)
    assert u.casefold_closure(0x17F) == CharSet.of(0x53, 0x73, 0x17F)
    assert u.casefold_closure(ord("k")) == CharSet.of(0x4B, 0x6B, 0x212A)
    assert u.casefold_closure(ord("1")) == CharSet.of(ord("1"))
    assert u.casefold_closure(0xDF) == CharSet.of(0xDF, 0x1E9E)  # ß ~ ẞ (S), not "ss" (F)
    assert u.casefold_closure(0x130) == CharSet.of(0x130)  # only F and T lines
    assert u.casefold_closure(ord("i")) == CharSet.of(0x49, 0x69)
    assert u.casefold_closure(ord("i"), regex_dotted_i=True) == CharSet.of(0x49, 0x69, 0x130)
    assert u.casefold_closure_set(CharSet.of(ord("s"), ord("K"))) == \
        CharSet.of(0x53, 0x73, 0x17F, 0x4B, 0x6B, 0x212A)


def test_casefold_closure_matches_regex_ignorecase(u):
    cps = case_folding_code_points()
    text = "".join(map(chr, cps))
    mismatches = []
    for cp in cps:
        pattern = regex.compile("(?i)" + regex.escape(chr(cp)))
        theirs = CharSet.of(*(ord(m.group()) for m in pattern.finditer(text)))
        ours = u.casefold_closure(cp, regex_dotted_i=True)
        if ours != theirs:
            mismatches.append((hex(cp), ours, theirs))
        plain = u.casefold_closure(cp)
        # Without regex's dotted/dotless-I special case this is pure C+S simple case folding
        # (what Rust's regex, i.e. tiktoken, does); it differs from regex on exactly these four.
        if cp in (0x49, 0x69, 0x130, 0x131):
            assert plain != theirs
        elif plain != theirs:
            mismatches.append((hex(cp), plain, theirs))
    assert not mismatches, f"{len(mismatches)} of {len(cps)} differ: {mismatches[:10]}"


def test_casefold_closure_has_nothing_outside_case_folding(u):
    # A sample scanned over the whole code space: regex finds no case variant that
    # CaseFolding.txt does not list.
    sample = case_folding_code_points()[::25] + (0x49, 0x69, 0x130, 0x131, 0x3A3, 0x1E9E)
    for cp in sample:
        theirs = oracle_set("(?i)" + regex.escape(chr(cp)))
        assert u.casefold_closure(cp, regex_dotted_i=True) == theirs, hex(cp)


def test_casefold_closure_set_matches_regex_class(u):
    for members in ("sK", "a-z", "\u0391-\u03a9", "0-9", "\u00c0-\u024f", "\u10a0-\u10ff",
                    "\U00010400-\U0001044f", "i"):
        theirs = oracle_set(f"(?i)[{members}]")
        ours = u.casefold_closure_set(oracle_set(f"[{members}]"), regex_dotted_i=True)
        assert ours == theirs, f"[{members}]: {describe_difference(ours, theirs)}"


# --------------------------------------------------------------------------- load() errors

def test_load_is_cached(u):
    assert ucd.load(VERSION) is u
    assert ucd.load() is u and u.version == ucd.UNICODE_VERSION == VERSION


def copy_of_ucd(tmp_path: Path) -> Path:
    source = ucd.ucd_root() / VERSION
    if not source.is_dir():
        pytest.skip(f"UCD files unavailable in {source}")
    target = tmp_path / VERSION
    target.mkdir()
    for f in ucd.version_spec(VERSION).files:
        shutil.copyfile(source / f.name, target / f.name)
    return tmp_path


def test_load_from_ucd_dir_argument_and_env(tmp_path, monkeypatch):
    root = copy_of_ucd(tmp_path)
    assert ucd.load(VERSION, root).version == VERSION
    monkeypatch.setenv("UCD_DIR", str(root))
    assert ucd.ucd_root() == root.resolve()
    monkeypatch.chdir(root.parent)
    monkeypatch.setenv("UCD_DIR", root.name)  # relative to the current directory
    assert ucd.ucd_root() == root.resolve()


def test_load_rejects_bad_hash(tmp_path):
    root = copy_of_ucd(tmp_path)
    with open(root / VERSION / "PropList.txt", "a") as f:
        f.write("0041 ; White_Space\n")
    with pytest.raises(ucd.UCDError) as info:
        ucd.load(VERSION, root)
    assert not isinstance(info.value, ucd.UCDNotFound)
    message = str(info.value)
    assert "PropList.txt" in message and "SHA-256" in message
    assert "make ucd" in message and "UCD_DIR" in message


def test_load_reports_missing_file(tmp_path):
    root = copy_of_ucd(tmp_path)
    (root / VERSION / "Scripts.txt").unlink()
    with pytest.raises(ucd.UCDNotFound) as info:
        ucd.load(VERSION, root)
    message = str(info.value)
    assert "Scripts.txt" in message and "make ucd" in message and "UCD_DIR" in message


def test_load_rejects_unpinned_version(tmp_path):
    with pytest.raises(ucd.UCDError, match="not pinned"):
        ucd.load("15.1.0", tmp_path)


def test_manifest_pins_both_versions():
    specs = ucd.read_manifest()
    assert set(specs) == {"16.0.0", "17.0.0"}
    assert specs["16.0.0"].regex_oracle == "regex==2025.9.18"
    assert specs["17.0.0"].regex_oracle == "regex==2025.10.22"
    for spec in specs.values():
        assert spec.base_url == f"https://www.unicode.org/Public/{spec.version}/ucd/"
        paths = {f.name: f.url_path for f in spec.files}
        assert paths["DerivedGeneralCategory.txt"] == "extracted/DerivedGeneralCategory.txt"
        assert len(paths) == 8 and all(len(f.sha256) == 64 for f in spec.files)


# --------------------------------------------------------------------------- fetch_ucd

def fake_spec(contents: dict[str, bytes]) -> ucd.VersionSpec:
    files = tuple(ucd.UCDFile(name, f"sub/{name}", hashlib.sha256(data).hexdigest())
                  for name, data in contents.items())
    return ucd.VersionSpec("0.0.0", "https://example.invalid/ucd/", "regex==0", files)


def fake_opener(served: dict[str, bytes]):
    def urlopen(url, timeout=None):
        return io.BytesIO(served[url])
    return urlopen


def test_fetch_downloads_and_verifies(tmp_path):
    contents = {"A.txt": b"alpha\n", "B.txt": b"beta\n"}
    spec = fake_spec(contents)
    served = {spec.base_url + f.url_path: contents[f.name] for f in spec.files}
    dest = tmp_path / "0.0.0"
    fetch_ucd.fetch(spec, dest, urlopen=fake_opener(served))
    assert {p.name: p.read_bytes() for p in dest.iterdir()} == contents
    # Present and valid: nothing is downloaded again.
    fetch_ucd.fetch(spec, dest, urlopen=fake_opener({}))


def test_fetch_rejects_mismatch_atomically(tmp_path):
    contents = {"A.txt": b"alpha\n", "B.txt": b"beta\n"}
    spec = fake_spec(contents)
    served = {spec.base_url + f.url_path: contents[f.name] for f in spec.files}
    served[spec.base_url + "sub/B.txt"] = b"tampered\n"
    dest = tmp_path / "0.0.0"
    with pytest.raises(fetch_ucd.FetchError) as info:
        fetch_ucd.fetch(spec, dest, urlopen=fake_opener(served))
    message = str(info.value)
    assert "B.txt" in message and "SHA-256" in message and "sub/B.txt" in message
    # No partial or corrupt file is left under the final name, nor any temporary file.
    assert sorted(p.name for p in dest.iterdir()) == ["A.txt"]


def test_fetch_replaces_a_corrupt_local_file(tmp_path):
    contents = {"A.txt": b"alpha\n"}
    spec = fake_spec(contents)
    dest = tmp_path / "0.0.0"
    dest.mkdir()
    (dest / "A.txt").write_bytes(b"stale\n")
    fetch_ucd.fetch(spec, dest, urlopen=fake_opener({spec.base_url + "sub/A.txt": b"alpha\n"}))
    assert (dest / "A.txt").read_bytes() == b"alpha\n"


def test_fetch_real_manifest_over_file_url(tmp_path):
    source = ucd.ucd_root() / VERSION
    if not source.is_dir():
        pytest.skip(f"UCD files unavailable in {source}")
    spec = ucd.version_spec(VERSION)
    mirror = tmp_path / "mirror"
    for f in spec.files:
        (mirror / f.url_path).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(source / f.name, mirror / f.url_path)
    dest = tmp_path / "out"
    assert fetch_ucd.main(["--version", VERSION, "--dest", str(dest),
                           "--base-url", mirror.as_uri() + "/"]) == 0
    assert ucd.load(VERSION, dest).version == VERSION


# --------------------------------------------------------------------------- other versions

ORACLE_17_SCRIPT = r'''
import json, sys
sys.path.insert(0, sys.argv[1])
import importlib.metadata, regex
version = [d.version for d in importlib.metadata.distributions(path=[sys.argv[1]])
           if d.metadata["Name"] == "regex"]
names = json.loads(sys.argv[2])
text = "".join(map(chr, range(0x110000)))
out = {"version": version}
for name in names:
    out[name] = [(m.start(), m.end() - 1) for m in regex.finditer(f"(?:{name})+", text)]
print(json.dumps(out))
'''


def test_unicode_17_against_its_oracle():
    """Opt-in: REGEX_ORACLE_17_PATH is a directory holding regex==2025.10.22 (e.g. made with
    `pip install --no-deps --target DIR regex==2025.10.22`); it runs in a subprocess because
    one process can import only one `regex`."""
    import json
    import subprocess
    import sys

    site = os.environ.get("REGEX_ORACLE_17_PATH")
    if not site:
        pytest.skip("set REGEX_ORACLE_17_PATH to a directory holding regex==2025.10.22")
    try:
        u17 = ucd.load("17.0.0")
    except ucd.UCDNotFound as e:
        pytest.skip(f"UCD files unavailable: {e}")
    patterns = {rf"\p{{{n}}}": n for n in COMPILER_PROPERTIES + ["Assigned", "Alphabetic"]}
    patterns.update({r"\s": "space", r"\d": "digit", r"\w": "word"})
    result = json.loads(subprocess.run(
        [sys.executable, "-c", ORACLE_17_SCRIPT, site, json.dumps(list(patterns))],
        check=True, capture_output=True, text=True).stdout)
    assert result["version"] == [ucd.version_spec("17.0.0").regex_oracle.split("==")[1]]
    for pattern, name in patterns.items():
        ours = getattr(u17, name)() if name in ("space", "digit", "word") else u17.property(name)
        theirs = CharSet(map(tuple, result[pattern]))
        assert ours == theirs, f"{pattern}: {describe_difference(ours, theirs)}"
