"""Pieces (starts and ends) of long inputs on two lanes equal the one-lane scan.

From 4 KiB on, a scan that wants both the starts and the ends of the pieces (the encoder's
scan) runs two lanes when the input is nearly all ASCII: lane a from the start to the middle,
lane b from the middle into arrays of its own; lane a scans on past the middle until it
starts a piece where lane b started one, and lane b's pieces from there on are copied over
(else lane b's work is dropped and lane a scans on alone).  Here, on every engine path, for
shipped scanners and one compiled at run time: the pieces, the count and ``consumed`` (with
and without ``SCANTOK_PARTIAL``) equal those of the one-lane scan (``scantok_set_two_lanes(0)``)
and of the starts-only and ends-only modes, which never take two lanes; on the hard inputs
of the two-lane count, on the corpora cut at many lengths around the thresholds, and on
hypothesis text; the oracle (``regex.finditer``) where it is cheap.  And the switch itself
is checked to take effect.
"""
from __future__ import annotations

import random
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import load_corpus
from strategies import hard_bytes, hard_text, oracle_split_bytes
from test_scanner_count_lanes import _hard_cases, _resplit_cases, _scanners, _tile

STORE_MIN = 1 << 12  # the engine's DUAL_STORE_MIN
PARTIAL = 2  # SCANTOK_PARTIAL


@contextmanager
def one_lane():
    from scantok._native import lib

    before = lib.scantok_set_two_lanes(0)
    try:
        yield
    finally:
        lib.scantok_set_two_lanes(before)


def _scan(sc, data: bytes, flags: int, starts: bool = True, ends: bool = True):
    """(starts, ends, consumed) from one scantok_scan call: each array as the bytes of its
    uint32 entries (None if not asked for)."""
    from scantok._native import ffi, lib

    n = len(data)
    # room for n entries exactly, as the API asks (ASan checks the engine stays inside it)
    s = ffi.new("uint32_t[]", max(n, 1)) if starts else ffi.NULL
    e = ffi.new("uint32_t[]", max(n, 1)) if ends else ffi.NULL
    consumed = ffi.new("size_t *")
    k = lib.scantok_scan(sc._dfa, ffi.from_buffer(data), n, flags, s, e, consumed)
    return (ffi.buffer(s, 4 * k)[:] if starts else None, ffi.buffer(e, 4 * k)[:] if ends else None, consumed[0])


def _pieces(starts: bytes, ends: bytes) -> list[tuple[int, int]]:
    import array

    return list(zip(array.array("I", starts), array.array("I", ends)))


def _check(sc, data: bytes) -> list[tuple[int, int]]:
    """The two-lane scan against the others, with and without SCANTOK_PARTIAL: its pieces."""
    for flags in (0, PARTIAL):
        s2, e2, c2 = _scan(sc, data, flags)
        with one_lane():
            s1, e1, c1 = _scan(sc, data, flags)
        only_starts, _, cs = _scan(sc, data, flags, ends=False)
        _, only_ends, ce = _scan(sc, data, flags, starts=False)
        where = (sc.pattern[:40], len(data), flags)
        assert (s2, e2) == (s1, e1), where
        assert c2 == c1 == cs == ce, where
        assert s2 == only_starts and e2 == only_ends, where
        if flags == 0:
            assert c2 == len(data)
            whole = (s2, e2)
    return _pieces(*whole)


def test_the_switch_takes_effect():
    """scantok_set_two_lanes returns the previous setting, and one_lane() restores it."""
    from scantok._native import lib

    assert lib.scantok_set_two_lanes(1) == 1  # the default
    with one_lane():
        assert lib.scantok_set_two_lanes(0) == 0
    assert lib.scantok_set_two_lanes(1) == 1


def test_two_lanes_are_taken_and_joined():
    """On ASCII text the two-lane path runs and joins its lanes (else the comparisons here
    would compare the one-lane scan with itself); with the switch off it does not."""
    from scantok._native import lib

    sc = _scanners()[0]
    data = _tile(b"alpha beta gamma\n    x = 1234567;\n\t", 40_000)
    before = lib.scantok_two_lane_joins()
    pieces = _check(sc, data)
    joined = lib.scantok_two_lane_joins()
    assert joined > before
    with one_lane():
        _scan(sc, data, 0)
    assert lib.scantok_two_lane_joins() == joined
    assert pieces[-1][1] == len(data)
    assert all(a[1] <= b[0] for a, b in zip(pieces, pieces[1:]))


@pytest.mark.parametrize("case", sorted(_hard_cases()))
def test_store_two_lanes_equal_one_lane_hard_inputs(engine_impl, case):
    data = _hard_cases()[case]
    for sc in _scanners():
        _check(sc, data)
        for cut in (STORE_MIN - 1, STORE_MIN, STORE_MIN + 1, 16_384, 16_391):
            _check(sc, data[:cut])
            _check(sc, data[len(data) // 2 - cut // 2:][:cut])


@pytest.mark.parametrize("case", sorted(_resplit_cases()))
def test_store_two_lanes_split_again(engine_impl, case):
    data = _resplit_cases()[case]
    for sc in _scanners():
        for cut in (0, 3, 70_001):
            _check(sc, data[cut:])


@pytest.mark.parametrize("corpus", ["en", "code", "multi"])
def test_store_two_lanes_on_corpora(engine_impl, corpus):
    data = load_corpus(corpus).encode("utf-8")
    rng = random.Random(corpus)
    for sc in _scanners():
        _check(sc, data[:1_500_000])
        for _ in range(40):
            n = rng.choice([STORE_MIN, STORE_MIN + rng.randrange(64), 16_384, rng.randrange(STORE_MIN, 70_000)])
            off = rng.randrange(len(data) - n)
            _check(sc, data[off:off + n])


def test_store_two_lanes_match_the_oracle():
    sc = _scanners()[0]
    for corpus in ("en", "code"):
        data = load_corpus(corpus).encode("utf-8")[:200_000]
        pieces = _check(sc, data)
        assert [data[a:b] for a, b in pieces] == oracle_split_bytes(sc.pattern, data)


def test_store_two_lanes_random_ascii():
    """Mostly ASCII text built from the fragments where pieces end in unusual ways (runs of
    spaces before a newline, contractions, digit groups, control characters), with a few
    non-ASCII and invalid bytes dropped in."""
    rng = random.Random(11)
    fragments = [b"a", b"B", b" ", b"  ", b"\n", b"\r\n", b"1", b"'s", b"'", b"\t", b"!", b".", b"_", b"   \n",
                 b"   ", b"\n\n", b"'LL", b"x'", b"12345", b" \t\n", b"\r", b"word", b" Word", b"?!", b"\x00"]
    rare = ["é".encode(), "中".encode(), "😀".encode(), b"\xff", b"\x80", "’".encode()]
    scanners = _scanners()
    for _ in range(200):
        sub = rng.sample(fragments, rng.randint(2, len(fragments)))
        parts = [rng.choice(sub) for _ in range(rng.randint(1500, 12_000))]
        for _ in range(rng.choice([0, 0, 1, 3])):
            parts.insert(rng.randrange(len(parts)), rng.choice(rare))
        data = b"".join(parts)
        for sc in scanners:
            _check(sc, data)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=hard_text(min_fragments=1), middle=hard_text(max_fragments=8), cut=st.integers(0, 3000))
def test_store_two_lanes_property_text(engine_impl, text, middle, cut):
    tiled = _tile(text.encode("utf-8", "surrogatepass"), STORE_MIN // 2 + cut)
    whole = tiled + middle.encode("utf-8", "surrogatepass") + tiled
    for sc in _scanners():
        _check(sc, whole)


@settings(max_examples=15, deadline=None)
@given(data=hard_bytes(), cut=st.integers(0, 3000))
def test_store_two_lanes_property_bytes_oracle(data, cut):
    whole = _tile(data, STORE_MIN + cut)
    sc = _scanners()[0]
    pieces = _check(sc, whole)
    assert [whole[a:b] for a, b in pieces] == oracle_split_bytes(sc.pattern, whole)
