"""Pathological inputs complete, with the right count, on every scanner and engine path.

Backtracking engines blow up on these (tiktoken panics on ``" " * 10**6 + "x"``). The counts are
checked against a value computed independently: the oracle's count on small instances of the
same shape (sizes congruent to the big one modulo 60), extrapolated by the (verified) affine law
``count(n) = a*n + b``.  No timing is asserted here (speed lives in bench/bench_scan.py); the
scans run in a subprocess with a generous timeout only so that a non-linear scanner fails the
test instead of hanging the suite.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from fractions import Fraction

import pytest

from conftest import REPO, SCANNER_NAMES, available_impls, require_scantok
from strategies import oracle

# name -> (builder of the input of size n, big n)
PATHOLOGICAL = {
    "spaces_then_x": ("lambda n: ' ' * n + 'x'", 10**7),
    "letters": ("lambda n: 'a' * n", 10**7),
    "combining_marks": ("lambda n: 'a' + '\\u0301' * n", 3 * 10**6),
    "contractions": ("lambda n: \"'s\" * n", 5 * 10**6),
    "digits": ("lambda n: ('1234567890' * (n // 10 + 1))[:n]", 10**7),
}
HANG_GUARD_SECONDS = 180

CHILD = textwrap.dedent("""
    import json, sys, time
    import scantok
    from scantok._native import lib
    build = eval(sys.argv[1]); n = int(sys.argv[2])
    names = json.loads(sys.argv[3]); impls = json.loads(sys.argv[4])
    text = build(n)
    out = {}
    for impl in impls:
        assert lib.scantok_force_impl(impl.encode()) == 0
        for name in names:
            t = time.perf_counter()
            c = scantok.scanner(name).count(text)
            out[f"{name}/{impl}"] = [c, time.perf_counter() - t]
    print(json.dumps(out))
""")


def expected_count(pattern: str, build, n_big: int) -> int:
    rx = oracle(pattern)
    n1 = 600 + n_big % 60
    sizes = [n1, n1 + 600, n1 + 1800]
    c = [len(rx.findall(build(n))) for n in sizes]
    slope = Fraction(c[1] - c[0], 600)
    assert c[2] == c[0] + slope * 1800, f"count is not affine in n for this shape: {sizes} -> {c}"
    value = c[0] + slope * (n_big - n1)
    assert value.denominator == 1
    return int(value)


@pytest.mark.parametrize("shape", list(PATHOLOGICAL))
def test_pathological_count(shape):
    scantok = require_scantok()
    src, n_big = PATHOLOGICAL[shape]
    build = eval(src)
    names = list(SCANNER_NAMES)
    impls = available_impls()
    want = {name: expected_count(scantok.scanner(name).pattern, build, n_big) for name in names}
    env = {k: v for k, v in os.environ.items() if k != "SCANTOK_FORCE_IMPL"}
    try:
        r = subprocess.run([sys.executable, "-c", CHILD, src, str(n_big), json.dumps(names),
                            json.dumps(impls)], capture_output=True, text=True, env=env,
                           timeout=HANG_GUARD_SECONDS, cwd=str(REPO / "tests"))
    except subprocess.TimeoutExpired:
        pytest.fail(f"{shape} (n={n_big}): count did not finish in {HANG_GUARD_SECONDS} s "
                    f"(hang guard, not a speed assertion): the scan is not linear", pytrace=False)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(r.stdout)
    timings = ", ".join(f"{k}={v[1] * 1000:.0f}ms" for k, v in got.items())
    print(f"{shape} n={n_big}: {timings}")  # informational (pytest -s); speed is in bench
    for name in names:
        for impl in impls:
            assert got[f"{name}/{impl}"][0] == want[name], (shape, name, impl)
