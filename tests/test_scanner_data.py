"""Data-driven scanner cases (``tests/data/*.toml``).

Each case: ``name``, ``pattern`` (a scanner name), ``text`` (or ``text_repr``: a Python literal,
``str`` with lone surrogates or ``bytes``), ``expected`` pieces (or ``expected_repr``), ``why``.
The expected pieces were produced by the oracle when the case was written.  Every case runs
once through the regex oracle (with tiktoken's own pattern string, independent of scantok) and
once per engine path (scalar, sse2, avx2).
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from conftest import get_scanner, require_scantok
from strategies import oracle_split, oracle_split_bytes, reference_patterns

DATA = Path(__file__).resolve().parent / "data"


def _load_cases():
    cases = []
    for f in sorted(DATA.glob("*.toml")):
        for c in tomllib.loads(f.read_text(encoding="utf-8"))["case"]:
            text = ast.literal_eval(c["text_repr"]) if "text_repr" in c else c["text"]
            expected = ast.literal_eval(c["expected_repr"]) if "expected_repr" in c else c["expected"]
            assert isinstance(expected, list), c["name"]
            assert all(type(p) is type(text) for p in expected), c["name"]
            assert c.get("why"), f"{f.name}:{c['name']} needs a `why`"
            cases.append(pytest.param(c["pattern"], text, expected, id=f"{f.stem}:{c['name']}"))
    return cases


CASES = _load_cases()


def test_case_names_unique():
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))
    assert len(CASES) >= 100


@pytest.mark.parametrize("pattern_name,text,expected", CASES)
def test_case_oracle(pattern_name, text, expected):
    """The recorded expectation is what the pinned regex oracle gives with tiktoken's pattern."""
    pat = reference_patterns()[pattern_name]
    if isinstance(text, bytes):
        assert oracle_split_bytes(pat, text) == expected
    else:
        assert oracle_split(pat, text) == expected


@pytest.mark.parametrize("pattern_name,text,expected", CASES)
def test_case_engine(pattern_name, text, expected, engine_impl):
    sc = get_scanner(pattern_name)
    if isinstance(text, bytes):
        assert sc.split_bytes(text) == expected
        return
    assert sc.split(text) == expected
    spans = sc.spans(text)
    assert [text[a:b] for a, b in spans] == expected
    assert sc.count(text) == len(expected)
    ends, pos, i = [], 0, 0
    enc = lambda s: len(s.encode("utf-8", "surrogatepass"))  # noqa: E731
    for a, b in spans:
        pos += enc(text[i:b])
        i = b
        ends.append(pos)
    assert list(sc.offsets(text)) == ends


def test_shipped_patterns_are_the_reference_strings(scanner_name):
    """A shipped scanner named like a reference encoding carries exactly that pattern string."""
    require_scantok()
    ref = reference_patterns()
    if scanner_name not in ref:
        pytest.skip(f"{scanner_name}: no reference pattern string to compare with (not a tiktoken/HF name)")
    assert get_scanner(scanner_name).pattern == ref[scanner_name]
