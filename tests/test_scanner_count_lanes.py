"""``Scanner.count`` on long inputs: the two-lane count equals the one-lane scan.

From 64 KiB on, counting (no starts, no ends) runs two lanes in one loop, the second from the
middle of the input, and joins them at the first position where both started a piece (else
the first lane scans on alone).  Here, on every engine path (scalar, SSE2, AVX2), for shipped
scanners and one compiled at run time: ``count`` equals the number of pieces ``offsets`` finds
(one lane, no join) on the corpora, on inputs built so that the join is hard (one long piece
across the middle, a lane boundary inside a multi-byte character or invalid UTF-8, non-ASCII
text that keeps one lane), and on hypothesis text tiled past the threshold.  The oracle's own
piece count (``regex.findall``) is checked too where it is cheap.
"""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import get_scanner, load_corpus, require_scantok
from strategies import hard_bytes, hard_text, oracle_split, oracle_split_bytes

DUAL_MIN = 1 << 16  # the engine's DUAL_MIN
SCANNERS = ["o200k_base", "cl100k_base", "r50k_base", "whitespace"]
LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
          r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")


def _scanners():
    scantok = require_scantok()
    out = [get_scanner(n) for n in SCANNERS if n in scantok.scanners()]
    out.append(scantok.compile(LLAMA3))
    return out


def _check(sc, data: bytes) -> int:
    one_lane = len(sc.offsets(data))
    assert sc.count(data) == one_lane, (sc.pattern[:40], len(data))
    return one_lane


def _tile(data, n: int = DUAL_MIN + 4099):
    """``data`` (bytes or str) repeated to length n."""
    if not data:
        data = b"x" if isinstance(data, bytes) else "x"
    return (data * (n // len(data) + 1))[:n]


def _hard_cases() -> dict[str, bytes]:
    words = b"alpha Beta gamma's  delta\n    if x == 1:\n        return y  # done\n"
    half = DUAL_MIN // 2 + 1000
    pre = _tile(words, half)
    cases = {
        "words": _tile(words),
        "spaces across the middle": pre[: half - 3000] + b" " * 9000 + pre,
        "letters across the middle": pre[: half - 3000] + b"x" * 9000 + b" " + pre,
        "newlines and indentation at the middle": pre + b"\n" * 700 + b" " * 3000 + pre,
        "digits at the middle": pre + b"1234567" * 600 + pre,
        "multi-byte characters at the middle": pre + "éß漢字😀 ".encode() * 500 + pre,
        "invalid UTF-8 at the middle": pre + b"\x80\xbf\xc3\xff\xed\xa0\x80" * 300 + pre,
        "non-ASCII throughout": _tile("Привет, мир! 漢字かな 'S ".encode()),
        "one long word": b"a" * (3 * DUAL_MIN),
        "one long run of spaces then a word": b" " * (3 * DUAL_MIN) + b"x",
        "ends with spaces": _tile(words) + b"   ",
        "ends inside a character": _tile(words) + "漢".encode()[:2],
        # the piece lane a is in at the middle started far before it: lane a scans on alone
        "a word from before the middle to just after it": _tile(words, 40000) + b"x" * 5000 + _tile(words, 44400),
        # ... from the very start, with pieces after the middle: lane a cannot join lane b and
        # scans the rest alone (it once started over from its piece's start, for ever)
        "one run of spaces from the start to the middle": b" " * (DUAL_MIN // 2 + 192) + b"@" + b" " * (DUAL_MIN // 2 + 192),
        "one piece from the start across the middle": b"-+" * DUAL_MIN + _tile(words, DUAL_MIN),
        # a letter that is two characters of one pair step with the newline after it: the join
        # scans (piece starts only) once put the start of the pair's first piece a character
        # late, so the lanes joined where they should not (found by hypothesis under ASan)
        "a 3-byte letter before newlines, tiled": _tile("\u1000".encode() + b"\n" * 46, DUAL_MIN),
    }
    for shift in range(3):
        # groups of three digits seen from lane b's start never meet lane a's (two of three shifts)
        cases[f"a run of digits around the middle, shift {shift}"] = pre + b"7" * (8000 + shift) + pre
    return cases


@pytest.mark.parametrize("case", sorted(_hard_cases()))
def test_count_two_lanes_equals_one_lane_hard_inputs(engine_impl, case):
    data = _hard_cases()[case]
    assert len(data) >= DUAL_MIN
    for sc in _scanners():
        _check(sc, data)


@pytest.mark.parametrize("corpus", ["en", "code", "multi"])
def test_count_two_lanes_on_corpora(engine_impl, corpus):
    data = load_corpus(corpus).encode("utf-8")
    for sc in _scanners():
        _check(sc, data)
        for cut in (DUAL_MIN - 1, DUAL_MIN, DUAL_MIN + 1, 100_003, 1_000_001):
            for off in (0, 7, 333_333):
                _check(sc, data[off:off + cut])


def _resplit_cases() -> dict[str, bytes]:
    """Inputs where lane a reaches the middle long before lane b reaches the end (a fast first
    half: long words, few pieces; a slow second half: code, rewinds, replays), so that what is
    left is split again, several times, with hard text at every scale around the new middles."""
    fast = _tile(b"abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ ", 5 * DUAL_MIN)
    slow = _tile(b"x\n  y\n\n   z = 1234567 'll\n\t\t# \n    w\r\n", 6 * DUAL_MIN)
    hard = [b" " * 1500, b"7" * 2001, b"q" * 1300, b"\n" * 40 + b" " * 900, "\u00e9\u6f22 \u3000\n".encode() * 60,
            b"\x80\xbf\xc3\xff\xed\xa0\x80" * 20]
    spiked = bytearray(slow)
    for j, pos in enumerate(range(1000, len(spiked) - 5000, 9001)):
        h = hard[j % len(hard)]
        spiked[pos:pos + len(h)] = h
    return {
        "fast then slow": fast + slow,
        "fast then slow with hard text throughout": fast + bytes(spiked),
        "slow then fast": slow + fast,
    }


@pytest.mark.parametrize("case", sorted(_resplit_cases()))
def test_count_two_lanes_split_again(engine_impl, case):
    data = _resplit_cases()[case]
    for sc in _scanners():
        for cut in (0, 1, 2, 3, 5_001, 70_001):
            _check(sc, data[cut:])


def test_count_str_two_lanes_matches_oracle():
    """The str path (ASCII read in place, else encoded) against regex.findall."""
    sc = get_scanner("o200k_base")
    for corpus in ("en", "code"):
        text = load_corpus(corpus)[:300_000]
        assert sc.count(text) == len(oracle_split(sc.pattern, text))
        ascii_text = text.encode("ascii", "ignore").decode()
        assert sc.count(ascii_text) == len(oracle_split(sc.pattern, ascii_text))


@settings(max_examples=25, deadline=None)
@given(text=hard_text(min_fragments=1), middle=hard_text(max_fragments=8), cut=st.integers(0, 5000))
def test_count_two_lanes_property_text(text, middle, cut):
    tiled = _tile(text, DUAL_MIN // 2 + cut)
    whole = tiled + middle + tiled  # str: lone surrogates go through the surrogatepass flag
    for sc in _scanners():
        _check(sc, whole)


@settings(max_examples=15, deadline=None)
@given(data=hard_bytes(), cut=st.integers(0, 3000))
def test_count_two_lanes_property_bytes_oracle(data, cut):
    whole = _tile(data, DUAL_MIN + cut)
    sc = get_scanner("o200k_base")
    assert sc.count(whole) == len(oracle_split_bytes(sc.pattern, whole)) == len(sc.offsets(whole))


def _starts_only(sc, data: bytes) -> list[int]:
    """Piece starts from the engine's starts-only mode (what the join scans use)."""
    from scantok._native import ffi, lib

    starts = ffi.new("uint32_t[]", len(data) + 8)
    consumed = ffi.new("size_t *")
    k = lib.scantok_scan(sc._dfa, ffi.from_buffer(data), len(data), 0, starts, ffi.NULL, consumed)
    return list(starts[0:k])


# engine_impl only forces the engine path, the same for every example
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=hard_bytes())
def test_piece_starts_alone_equal_the_spans(engine_impl, data):
    """The starts-only mode gives the starts of ``byte_spans`` (starts and ends), on every path."""
    for sc in _scanners():
        assert _starts_only(sc, data) == [s for s, _ in sc.byte_spans(data)], sc.pattern[:40]


def test_piece_starts_alone_non_ascii_pairs(engine_impl):
    """Pairs of 2- and 3-byte characters (stepped two at a time) between ASCII, starts only."""
    import random

    rng = random.Random(7)
    alphabet = ["a", "B", " ", "\n", "\u00e9", "\u0436", "\u0416", "\u1000", "\u8a9e", "1", "'", ".", "  ",
                "\u0301", "\U0001F600", "\t", "\u3000"]
    for sc in _scanners():
        for _ in range(400):
            data = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 60))).encode()
            assert _starts_only(sc, data) == [s for s, _ in sc.byte_spans(data)], (sc.pattern[:40], data)
