"""Long runs that end in no piece or a shorter one: scanning stays exact and linear.

findall skips a character where the pattern does not match and tries the next one (a gap);
a piece whose higher-priority threads ran on and died ends at its last match, where the next
attempt starts (a rewind).  When that run is long (``a+b`` over ``"aaaa..."``, ``.*?[^a\\s]``
over spaces; ``a+b|a`` over ``"aaaa..."``), running it again from every position costs the
square of its length; the engine's ``chain_scan`` stops an attempt where it meets the path of
a run that found no match (same state at the same position).  Checked here:

* pieces equal ``regex.findall`` / ``finditer`` on texts made of long runs, pieces between
  them, and random mixes, on every engine path, whole and streamed (``SCANTOK_PARTIAL``), on
  one lane and two (inputs long enough for the two-lane scan and count), and for generated
  patterns over periodic texts;
* ``flavor="onig"`` keeps the same gaps as HuggingFace's ``Split(..., "isolated")``;
* the work is linear: the characters ``chain_scan`` steps (``scantok_chain_steps``) grow in
  proportion to the input, a few per character, and 2 MB runs scan in a subprocess well
  within a hang guard (before ``chain_scan``, 40,000 characters of ``a+b`` took 0.6 s and
  2 MB would have taken about 25 minutes).  No timing is asserted.
"""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
import zlib
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from conftest import available_impls, c_scan
from strategies import REJECTED_BY_DESIGN, isolated, oracle, oracle_agrees_with_itself, oracle_split_bytes, patterns

import scantok

# pattern -> a unit that, repeated, makes a long run (a gap, or a rewind after each piece),
# and a text with a piece that ends differently
GAPS = {
    "a+b": ("a", "aab"),
    r".*?[^a\s]": (" ", " x"),
    "(?:ab)+c": ("ab", "abc"),
    "(?:ab|ba)+c": ("ab", "bac"),
    "(?:abc|bca|cab)+d": ("abc", "cabd"),  # three tracks of attempts, out of step
    "(?:abcde|bcdea|cdeab|deabc|eabcd)+f": ("abcde", "deabcf"),  # five
    r"\p{L}+\d": ("é", "éé7"),             # two-byte characters
    r"\p{Han}+。": ("中文", "字。"),            # three-byte characters
    r"x[^y]*y|\s": ("xz", " "),
    r"[a-z]+(?=\d)|\d+": ("q", "ab12"),
    # gaps with a piece at a boundary inside them: chain_scan must not hand the run back to
    # the fast loop there (which ran the long failed attempt again from the next a)
    "(?:ab)+c|b": ("ab", "abc"),                 # the piece "b" ends at a boundary
    "(?:ab)+c|b(?:ad)?": ("ab", "abc"),          # "b" with a short run past it
    r"(?:\w+\.)+com|\.": ("ab.", "ab.com"),
    r"\S{1,2}+[^x]*?\S(?=\p{L})|\s": ("k' ", "k'x"),
    # more tracks than chains on the stack: one per position modulo 9, and modulo 40
    "(?:b{9})+d": ("b", "b" * 9 + "d"),
    "(?:b{40})+d": ("b", "b" * 40 + "d"),
}
REWINDS = {
    "a+b|a": ("a", "ab"),
    "(?:b{9})+d|b": ("b", "b" * 18 + "d"),
    "(?:ab)+c|a": ("ab", "abc"),
    r"\w+\.com|\w": ("abc", "x.com"),
    r"\s+(?:\S+\s+)*x|\s": ("  ab", " x"),
    r"\p{L}+\d|\p{L}": ("éa", "é1"),
}
RUNS = {**GAPS, **REWINDS}
SEPARATORS = [" ", "\n", "!", "1", "é", "\U0001F600"]


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("SCANTOK_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "scantok-cache"))


def gap_text(pattern: str, rng: random.Random, size: int, longest: int = 1500) -> str:
    """Gaps of up to `longest` characters, matches and separators, about `size` characters."""
    unit, match = RUNS[pattern]
    parts, n = [], 0
    while n < size:
        r = rng.random()
        if r < 0.5:
            part = unit * rng.randint(1, max(1, longest // len(unit)))
            part = part[rng.randint(0, len(unit) - 1):]  # start out of step, too
        elif r < 0.8:
            part = match
        else:
            part = rng.choice(SEPARATORS)
        parts.append(part)
        n += len(part)
    return "".join(parts)


_expected: dict = {}


def expected_spans(pattern: str, text: str) -> list[tuple[int, int]]:
    key = (pattern, text)
    if key not in _expected:
        _expected[key] = [m.span() for m in oracle(pattern).finditer(text)]
    return _expected[key]


def byte_spans_of(text: str, spans) -> list[tuple[int, int]]:
    data = text.encode()
    offsets = [0]
    for ch in text:
        offsets.append(offsets[-1] + len(ch.encode()))
    assert offsets[-1] == len(data)
    return [(offsets[a], offsets[b]) for a, b in spans]


@pytest.mark.parametrize("pattern", RUNS)
@pytest.mark.parametrize("size", [31, 32, 33, 100, 3000])
def test_one_run_matches_regex(pattern, size, engine_impl):
    """A single run of each length around RUN_MIN, alone and between other pieces."""
    unit, match = RUNS[pattern]
    sc = scantok.compile(pattern)
    gap = (unit * size)[:size] if len(unit) == 1 else unit * (size // len(unit) + 1)
    for text in (gap, gap + match, match + gap, match + gap + match, gap[1:] + match + gap):
        assert sc.spans(text) == expected_spans(pattern, text), (pattern, text[:80])
        assert sc.count(text) == len(expected_spans(pattern, text))


@pytest.mark.parametrize("pattern", RUNS)
def test_mixed_runs_match_regex(pattern, engine_impl):
    """Random mixes, long enough (> 64 KiB of UTF-8 for some) for the two-lane scan and count."""
    sc = scantok.compile(pattern)
    rng = random.Random(zlib.crc32(pattern.encode()))  # the same texts in every process
    for size in (500, 5000, 70_000):
        text = gap_text(pattern, rng, size)
        want = expected_spans(pattern, text)
        assert sc.spans(text) == want, pattern
        assert sc.count(text) == len(want)
        assert sc.byte_spans(text) == byte_spans_of(text, want)


@pytest.mark.parametrize("pattern", RUNS)
def test_invalid_utf8_and_lone_surrogates_in_runs(pattern, engine_impl):
    """Invalid bytes (characters of class Cs, as surrogateescape reads them) and lone
    surrogates (str, SURROGATEPASS) inside and between long runs: pieces as the oracle's."""
    rng = random.Random(zlib.crc32(pattern.encode()) ^ 5)
    sc = scantok.compile(pattern)
    for size in (200, 6000):
        text = gap_text(pattern, rng, size, longest=400)
        data = bytearray(text.encode())
        for _ in range(8):  # invalid bytes at random places (possibly inside a character)
            data.insert(rng.randrange(len(data) + 1), rng.choice([0xFF, 0x80, 0xC3, 0xE2, 0xED, 0xF4]))
        data = bytes(data)
        assert sc.split_bytes(data) == oracle_split_bytes(pattern, data)
        assert sc.count(data) == len(oracle_split_bytes(pattern, data))
        chars = list(text)
        for _ in range(8):
            chars.insert(rng.randrange(len(chars) + 1), rng.choice(["\ud800", "\udfff", "\udc80"]))
        with_surrogates = "".join(chars)
        assert sc.spans(with_surrogates) == expected_spans(pattern, with_surrogates)


@pytest.mark.parametrize("pattern", RUNS)
def test_one_lane_and_two_lanes_agree(pattern):
    from scantok._native import lib

    sc = scantok.compile(pattern)
    text = gap_text(pattern, random.Random(7), 80_000, longest=3000)
    data = text.encode()
    two = c_scan(sc, data)
    count_two = sc.count(data)
    before = lib.scantok_set_two_lanes(0)
    try:
        one = c_scan(sc, data)
    finally:
        lib.scantok_set_two_lanes(before)
    assert two == one
    assert count_two == len(one[0])


@pytest.mark.parametrize("pattern", RUNS)
@pytest.mark.parametrize("chunk", [7, 100, 777])
def test_streamed_equals_whole(pattern, chunk):
    """SCANTOK_PARTIAL: a gap that reaches the end of a chunk is undecided, not skipped."""
    from scantok._native import lib

    sc = scantok.compile(pattern)
    data = gap_text(pattern, random.Random(chunk), 6000).encode()
    pieces, base, size = [], 0, chunk
    while True:
        part = data[base:base + size]
        final = base + len(part) >= len(data)
        got, consumed = c_scan(sc, part, 0 if final else lib.SCANTOK_PARTIAL)
        pieces += [(base + a, base + b) for a, b in got]
        if final:
            break
        if consumed == 0:
            size *= 2
            continue
        base += consumed
        size = chunk
    assert pieces == sc.byte_spans(data)


@pytest.mark.parametrize("pattern", ["a+b", "(?:ab)+c", r"\p{L}+\d", r"x[^y]*y|\s", "a+b|a", r"\w+\.com|\w"])
def test_onig_gaps_match_hf_split(pattern):
    from tokenizers import Regex, pre_tokenizers

    sc = scantok.compile(pattern, flavor="onig")
    split = pre_tokenizers.Split(Regex(pattern), "isolated")
    rng = random.Random(3)
    for _ in range(5):
        text = gap_text(pattern, rng, 600, longest=200)
        assert isolated(sc, text) == split.pre_tokenize_str(text)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
@pytest.mark.parametrize("pattern", list(RUNS))
def test_hypothesis_run_mixes(pattern, data):
    unit, match = RUNS[pattern]
    parts = data.draw(st.lists(st.one_of(
        st.integers(1, 80).map(lambda k: unit * k),
        st.just(match), st.sampled_from(SEPARATORS),
        st.text(alphabet=unit + match + "".join(SEPARATORS), max_size=20)), max_size=12))
    text = "".join(parts)
    sc = scantok.compile(pattern)
    assert sc.spans(text) == expected_spans(pattern, text)
    assert sc.count(text) == len(expected_spans(pattern, text))


# characters the generated patterns' atoms tell apart
PERIODIC_ALPHABET = ["a", "b", "s", "k", "'", " ", "\n", "1", "A", "\u00e9", "\u017f", "!", "\u0301", "\u4e2d"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pattern=patterns(), unit=st.lists(st.sampled_from(PERIODIC_ALPHABET), min_size=1, max_size=5).map("".join),
       reps=st.integers(8, 120), tail=st.sampled_from(["", "b", " ", "1", "!"]))
def test_generated_patterns_on_periodic_text(pattern, unit, reps, tail):
    """Any pattern over a text that repeats a few characters: where attempts fail, they fail
    on and on (long gaps, tracks out of step); pieces and counts as regex's."""
    try:
        sc = scantok.compile(pattern)
    except scantok.PatternError as e:
        assume(not any(reason in str(e) for reason in REJECTED_BY_DESIGN))
        raise
    text = unit * reps + tail
    try:  # the oracle backtracks: some generated patterns take it exponential time here
        want = [m.span() for m in oracle(pattern).finditer(text, timeout=5)]
    except TimeoutError:
        assume(False)
    assume(oracle_agrees_with_itself(pattern, text))
    assert sc.spans(text) == want, (pattern, text)
    assert sc.count(text) == len(want)


def expected_count(pattern: str, unit: str, reps: int) -> int:
    """The oracle's number of pieces in unit * reps for a big reps, from the same text at sizes
    the oracle (a backtracking engine, quadratic on these) takes quickly: affine in reps."""
    rx = oracle(pattern)
    c = [len(rx.findall(unit * k)) for k in (100, 150, 200)]
    assert c[2] - c[1] == c[1] - c[0], (pattern, c)
    value = Fraction(c[0]) + Fraction(c[1] - c[0], 50) * (reps - 100)
    assert value.denominator == 1
    return int(value)


@pytest.mark.parametrize("pattern", RUNS)
def test_run_work_is_linear(pattern):
    """Characters stepped by chain_scan: proportional to the input, a few per character."""
    from scantok._native import lib

    sc = scantok.compile(pattern)
    unit, _ = RUNS[pattern]
    steps = {}
    for n in (20_000, 80_000):
        reps = n // len(unit)
        before = lib.scantok_chain_steps()
        assert sc.count(unit * reps) == expected_count(pattern, unit, reps)
        steps[n] = lib.scantok_chain_steps() - before
    assert steps[20_000] > 0  # the run was taken by chain_scan
    assert steps[80_000] <= 128 * 80_000, steps  # about 2 per character and track
    assert steps[80_000] <= 4.5 * steps[20_000], steps


HANG_GUARD_SECONDS = 120
CHILD = textwrap.dedent("""
    import json, sys
    import scantok
    from scantok._native import lib
    cases = json.loads(sys.argv[1]); impls = json.loads(sys.argv[2])
    out = {}
    for pattern, unit in cases:
        sc = scantok.compile(pattern)
        text = unit * (2_000_000 // len(unit))
        for impl in impls:
            assert lib.scantok_force_impl(impl.encode()) == 0
            out[f"{pattern}/{impl}"] = [sc.count(text), len(sc.byte_spans(text))]
    print(json.dumps(out))
""")


def test_two_megabyte_runs_finish(tmp_path):
    """A hang guard, not a timing: before chain_scan these took tens of minutes each."""
    cases = [(p, u) for p, (u, _) in RUNS.items()]
    env = {**os.environ, "SCANTOK_CACHE_DIR": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(cases), json.dumps(available_impls())],
                          capture_output=True, text=True, timeout=HANG_GUARD_SECONDS, env=env)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    for (pattern, unit) in cases:
        want = expected_count(pattern, unit, 2_000_000 // len(unit))
        for impl in available_impls():
            assert out[f"{pattern}/{impl}"] == [want, want], (pattern, impl)
