"""The scalar, SSE2 and AVX2 engine paths give identical results.

* ``SCANTOK_FORCE_IMPL=scalar|sse2|avx2`` forces a path at import (checked in a subprocess);
  an unknown value is a clear error.
* ``lib.scantok_force_impl`` switches paths in process.
* Identical spans/offsets on every path for hypothesis text, for text made of long runs
  (letters, spaces, digits, >= 64 bytes, crossing 16/32-byte boundaries, at the very end of the
  buffer), for every start alignment, and for the corpora; and no read outside ``data[0:n]``
  (guard pages, in a subprocess).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import (CORPORA, IMPLS, REPO, available_impls, c_scan, current_impl, force_impl,
                      get_scanner, load_corpus, require_scantok)
from strategies import describe_mismatch, hard_bytes, hard_text, oracle_split, oracle_split_bytes

IMPL_QUERY = ("import scantok; from scantok._native import ffi, lib; "
              "print(ffi.string(lib.scantok_impl_name()).decode())")


def _run(code: str, env_extra: dict, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("SCANTOK_FORCE_IMPL", None)
    env.update(env_extra)
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=timeout, cwd=str(REPO / "tests"))


# ---------------------------------------------------------------------------------------------
# forcing a path
# ---------------------------------------------------------------------------------------------
def test_default_impl_is_best_available():
    require_scantok()
    avail = available_impls()
    assert "scalar" in avail
    r = _run(IMPL_QUERY, {})
    assert r.returncode == 0, r.stderr
    best = [i for i in ("avx2", "sse2", "scalar") if i in avail][0]
    assert r.stdout.strip() == best


def test_env_forces_impl(impl_name):
    require_scantok()
    if impl_name not in available_impls():
        pytest.skip(f"this CPU lacks {impl_name}")
    r = _run(IMPL_QUERY, {"SCANTOK_FORCE_IMPL": impl_name})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == impl_name


def test_env_unknown_impl_is_a_clear_error():
    require_scantok()
    r = _run(IMPL_QUERY, {"SCANTOK_FORCE_IMPL": "neon512"})
    assert r.returncode != 0, f"an unknown SCANTOK_FORCE_IMPL was accepted: {r.stdout!r}"
    err = r.stderr
    assert "SCANTOK_FORCE_IMPL" in err and "neon512" in err, err
    assert all(name in err for name in IMPLS), f"the error should list the valid values: {err}"


def test_force_impl_in_process(impl_name):
    require_scantok()
    original = current_impl()
    try:
        rc = force_impl(impl_name)
        if rc == -2:
            pytest.skip(f"this CPU lacks {impl_name}")
        assert rc == 0
        assert current_impl() == impl_name
        assert force_impl("bogus") == -1
        assert current_impl() == impl_name, "a rejected name must not change the path"
    finally:
        force_impl(original)


# ---------------------------------------------------------------------------------------------
# identical results on every path
# ---------------------------------------------------------------------------------------------
def _per_impl(fn):
    """``{impl: fn()}`` for every available path (restores the current one)."""
    original = current_impl()
    out = {}
    try:
        for name in available_impls():
            assert force_impl(name) == 0
            out[name] = fn()
    finally:
        force_impl(original)
    return out


def _assert_all_equal(results: dict, what: str):
    base = results["scalar"]
    for name, r in results.items():
        if isinstance(base, np.ndarray):
            ok = np.array_equal(r, base)
        else:
            ok = r == base
        assert ok, f"{what}: {name} differs from scalar: " + str(
            describe_mismatch(list(r), list(base)))


RUN_CHARS = ["a", "z", "Q", " ", "0", "7", "\t", "\n", "\r\n", "-", ".", "'", "/", "\u00e9",
             "\u4e2d", "\u00a0", "\U0001f600", "\u0301", "_"]


@st.composite
def run_text(draw):
    """Long runs of one character, at random alignments, often at the very end of the text."""
    pad = draw(st.integers(0, 40))
    runs = draw(st.lists(st.tuples(st.sampled_from(RUN_CHARS), st.integers(1, 200)),
                         min_size=1, max_size=8))
    sep = draw(st.lists(st.sampled_from(["", " ", "x", "1", "\n", "'s", "A"]),
                        min_size=len(runs), max_size=len(runs)))
    return "b" * pad + "".join(c * k + s for (c, k), s in zip(runs, sep))


def _check_paths_text(sc, text):
    want = oracle_split(sc.pattern, text)
    res = _per_impl(lambda: (sc.split(text), [tuple(s) for s in sc.spans(text)],
                             sc.offsets(text).tolist(), sc.count(text)))
    for name, (pieces, spans, offs, count) in res.items():
        assert pieces == want, f"[{name}] " + describe_mismatch(pieces, want, text)
        assert count == len(want), name
    _assert_all_equal({k: v[1] for k, v in res.items()}, "spans")
    _assert_all_equal({k: v[2] for k, v in res.items()}, "offsets")


@given(text=hard_text())
def test_paths_agree_hard_text(scanner_name, text):
    _check_paths_text(get_scanner(scanner_name), text)


@given(text=run_text())
def test_paths_agree_runs(scanner_name, text):
    _check_paths_text(get_scanner(scanner_name), text)


@given(data=hard_bytes())
def test_paths_agree_bytes(scanner_name, data):
    sc = get_scanner(scanner_name)
    want = oracle_split_bytes(sc.pattern, data)
    res = _per_impl(lambda: sc.split_bytes(data))
    for name, got in res.items():
        assert got == want, f"[{name}] " + describe_mismatch(got, want)


def test_paths_agree_every_run_length_and_alignment(scanner_name):
    """Runs of 1..130 chars ending exactly at the end of the buffer, at 0..33 bytes of offset."""
    sc = get_scanner(scanner_name)
    texts = []
    for c in ["a", " ", "1", "A", "\n", "-", "\u00e9"]:
        for k in list(range(1, 70)) + [95, 96, 97, 127, 128, 129, 130]:
            texts.append(c * k)
            texts.append("x" + c * k + " ")
    for shift in range(0, 34):
        texts.append("q" * shift + "a" * 64 + " " * 64 + "1" * 64 + " b")
    for text in texts:
        data = text.encode()
        want = oracle_split(sc.pattern, text)
        res = _per_impl(lambda: sc.split(text))
        for name, got in res.items():
            assert got == want, f"[{name}] {text!r}: " + describe_mismatch(got, want, text)
        # the same bytes scanned at several start alignments
        wantb = [p.encode() for p in want]
        for name in available_impls():
            original = current_impl()
            try:
                assert force_impl(name) == 0
                for k in (1, 3, 15, 16, 17, 31, 32, 33):
                    src = memoryview(b"\x00" * k + data)[k:]  # data at misalignment k
                    pieces, consumed = c_scan(sc, src, 0)
                    assert [data[a:b] for a, b in pieces] == wantb, (name, k, text)
                    assert consumed == len(data)
            finally:
                force_impl(original)


@pytest.mark.parametrize("corpus", CORPORA)
def test_paths_agree_corpus(scanner_name, corpus):
    text = load_corpus(corpus)
    sc = get_scanner(scanner_name)
    for shift in (0, 1):  # different alignments of the same content
        t = text[shift:]
        res = _per_impl(lambda: sc.offsets(t))
        _assert_all_equal(res, f"{scanner_name}/{corpus}[{shift}:] offsets")


# ---------------------------------------------------------------------------------------------
# no read outside data[0:n]: data placed against PROT_NONE guard pages
# ---------------------------------------------------------------------------------------------
GUARD_SCRIPT = textwrap.dedent(r"""
    import ctypes, json, mmap, sys
    import scantok
    from scantok._native import ffi, lib
    PAGE = mmap.PAGESIZE
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    mm = mmap.mmap(-1, 3 * PAGE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
    base = ctypes.addressof(ctypes.c_char.from_buffer(mm))
    assert base % PAGE == 0
    # page 0 and page 2 are guards, page 1 holds the data
    assert libc.mprotect(base, PAGE, 0) == 0
    assert libc.mprotect(base + 2 * PAGE, PAGE, 0) == 0
    texts = [b"a" * 100, b" " * 100, b"1" * 100, b"a" * 31 + b" " * 33 + b"9" * 20,
             "\u00e9".encode() * 40, b"x" + b" " * 77, b"\n" * 50, b"\xe2\x82", b"\xf0\x9f\x98",
             b"'", b"'s", b"a", b" ", b"", b"ab cd 12 ", b"\xed\xa0\x80"]
    names = json.loads(sys.argv[1])
    impls = json.loads(sys.argv[2])
    checked = 0
    for impl in impls:
        assert lib.scantok_force_impl(impl.encode()) == 0
        for name in names:
            dfa = scantok.scanner(name)._dfa
            for t in texts:
                n = len(t)
                for where in ("end", "start"):
                    off = PAGE + (PAGE - n if where == "end" else 0)
                    ctypes.memmove(base + off, t, n)
                    ptr = ffi.cast("uint8_t *", base + off)
                    starts = ffi.new("uint32_t[]", max(n, 1))
                    ends = ffi.new("uint32_t[]", max(n, 1))
                    for flags in (0, 1, 2, 3):
                        k = lib.scantok_scan(dfa, ptr, n, flags, starts, ends, ffi.NULL)
                        assert k <= max(n, 0)
                        checked += 1
    print(checked)
""")


def test_no_read_outside_buffer_guard_pages():
    require_scantok()
    scanner_names = list(require_scantok().scanners())
    r = subprocess.run(
        [sys.executable, "-c", GUARD_SCRIPT, json.dumps(scanner_names), json.dumps(available_impls())],
        capture_output=True, text=True, timeout=300, cwd=str(REPO / "tests"),
        env={k: v for k, v in os.environ.items() if k != "SCANTOK_FORCE_IMPL"})
    assert r.returncode == 0, (f"scan next to a guard page crashed (rc={r.returncode}: "
                               f"{'SIGSEGV: read outside data[0:n]' if r.returncode == -11 else ''})\n"
                               f"{r.stderr[-3000:]}")
    assert int(r.stdout.strip()) > 0
