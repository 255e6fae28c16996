"""pytest configuration shared by the scanner tests.

* hypothesis profiles: ``default`` (the normal suite), ``fuzz`` (long campaigns), ``sanitize``
  (few examples: the ASan/UBSan build is slow), ``ci``.  Pick one with
  ``--hypothesis-profile=NAME`` or ``SCANTOK_HYPOTHESIS_PROFILE=NAME``.
* ``scanner_name`` is parametrized over ``scantok.scanners()`` so every shipped pattern is
  covered automatically; if scantok cannot be imported the contract's names are used and every
  such test fails with the import error (never a silent skip).
* ``engine_impl`` forces each scanner engine path (scalar, sse2, avx2) in turn through
  ``lib.scantok_force_impl`` and restores the original one afterwards.
"""
from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

TESTS_DIR = Path(__file__).resolve().parent
REPO = TESTS_DIR.parent
if str(TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(TESTS_DIR))

from strategies import check_oracle_version  # noqa: E402

# tiktoken's own test suite (vendored, runs against a `tiktoken` shim): collected only by
# tests/test_tiktoken_suite.py, in a subprocess
collect_ignore = ["tiktoken_suite"]

# ---------------------------------------------------------------------------------------------
# hypothesis profiles
# ---------------------------------------------------------------------------------------------
_common = dict(deadline=None, derandomize=False, print_blob=True,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("default", max_examples=150, **_common)
settings.register_profile("ci", max_examples=300, **_common)
settings.register_profile("fuzz", max_examples=2_000, **_common)
settings.register_profile("sanitize", max_examples=40, **_common)
# The landing gate (.ci/run sets CI=true) checks the same 150 examples per test, but a fixed
# set: a red gate is then reproducible from the commit alone, and new examples are found
# where a failure is a lead to follow rather than a lost landing — developers' `make test`
# (random examples on every run) and the long campaigns of `make fuzz`.
settings.register_profile("gate", max_examples=150, **{**_common, "derandomize": True, "database": None})
settings.load_profile(os.environ.get("SCANTOK_HYPOTHESIS_PROFILE") or ("gate" if os.environ.get("CI") else "default"))

# ---------------------------------------------------------------------------------------------
# scantok discovery
# ---------------------------------------------------------------------------------------------
CONTRACT_SCANNERS = ("r50k_base", "cl100k_base", "o200k_base", "whitespace")
# Patterns without gaps: every character belongs to some piece, so the pieces join to the input.
GAPLESS_SCANNERS = frozenset({"r50k_base", "cl100k_base", "o200k_base"})
IMPLS = ("scalar", "sse2", "avx2")

try:
    import scantok  # noqa: F401

    SCANTOK_IMPORT_ERROR: BaseException | None = None
    SCANNER_NAMES: list[str] = list(scantok.scanners())
    _expect = os.environ.get("SCANTOK_EXPECT_NATIVE_DIR")  # set by tests/sanitize/run.py
    if _expect:
        import scantok._native as _nat

        if not str(Path(_nat.__file__).resolve()).startswith(str(Path(_expect).resolve())):
            raise RuntimeError(f"SCANTOK_EXPECT_NATIVE_DIR={_expect} but scantok._native is "
                               f"{_nat.__file__}")
except Exception as exc:  # noqa: BLE001 - reported by every scanner test
    scantok = None
    SCANTOK_IMPORT_ERROR = exc
    SCANNER_NAMES = list(CONTRACT_SCANNERS)


def require_scantok():
    if SCANTOK_IMPORT_ERROR is not None:
        pytest.fail(f"scantok is not importable ({type(SCANTOK_IMPORT_ERROR).__name__}: "
                    f"{SCANTOK_IMPORT_ERROR}); build it with `pip install --no-build-isolation -e .`",
                    pytrace=False)
    return scantok


def native():
    """``(ffi, lib)`` of the compiled module."""
    require_scantok()
    from scantok._native import ffi, lib

    return ffi, lib


@functools.lru_cache(maxsize=None)
def get_scanner(name: str):
    return require_scantok().scanner(name)


def pytest_report_header(config):
    lines = [f"scantok oracle: regex=={check_oracle_version()}"]
    if SCANTOK_IMPORT_ERROR is None:
        _, lib = native()
        lines.append(f"scantok: {Path(scantok.__file__).parent} scanners={SCANNER_NAMES} "
                     f"impl={native()[0].string(lib.scantok_impl_name()).decode()}")
    else:
        lines.append(f"scantok: NOT IMPORTABLE: {SCANTOK_IMPORT_ERROR!r}")
    return lines


def pytest_generate_tests(metafunc):
    if "scanner_name" in metafunc.fixturenames:
        metafunc.parametrize("scanner_name", SCANNER_NAMES)
    if "impl_name" in metafunc.fixturenames:
        metafunc.parametrize("impl_name", IMPLS)


@pytest.fixture(scope="session", autouse=True)
def _oracle_pinned():
    check_oracle_version()


@pytest.fixture
def scanner(scanner_name):
    return get_scanner(scanner_name)


def current_impl() -> str:
    ffi, lib = native()
    return ffi.string(lib.scantok_impl_name()).decode()


def force_impl(name: str) -> int:
    _, lib = native()
    return lib.scantok_force_impl(name.encode())


@pytest.fixture
def engine_impl(impl_name):
    """Force the engine path ``impl_name`` for the test; skip (with the reason) if the CPU lacks it."""
    original = current_impl()
    rc = force_impl(impl_name)
    if rc == -2:
        pytest.skip(f"this CPU lacks {impl_name}")
    assert rc == 0, f"scantok_force_impl({impl_name!r}) returned {rc}"
    assert current_impl() == impl_name
    try:
        yield impl_name
    finally:
        assert force_impl(original) == 0


def available_impls() -> list[str]:
    """Every engine path this CPU can run (restores the current one)."""
    original = current_impl()
    out = []
    try:
        for name in IMPLS:
            rc = force_impl(name)
            if rc == 0:
                out.append(name)
            elif rc != -2:
                raise AssertionError(f"scantok_force_impl({name!r}) returned {rc}")
    finally:
        force_impl(original)
    return out


# ---------------------------------------------------------------------------------------------
# corpora
# ---------------------------------------------------------------------------------------------
CORPORA = ("en", "code", "multi")


def corpus_dir() -> Path:
    return Path(os.environ.get("SCANTOK_CORPUS_DIR", REPO.parent / "shared" / "corpus"))


@functools.lru_cache(maxsize=None)
def load_corpus(name: str) -> str:
    path = corpus_dir() / f"{name}.txt"
    if not path.exists():
        pytest.skip(f"corpus {path} is absent (set SCANTOK_CORPUS_DIR to the folder holding "
                    f"en.txt, code.txt, multi.txt)")
    return path.read_bytes().decode("utf-8", "surrogateescape")


# ---------------------------------------------------------------------------------------------
# direct C calls
# ---------------------------------------------------------------------------------------------
def c_scan(sc, data: bytes, flags: int = 0):
    """``scantok_scan`` on ``data``: returns ``(pieces as (start, end) byte pairs, consumed)``."""
    ffi, lib = native()
    n = len(data)
    starts = ffi.new("uint32_t[]", max(n, 1))
    ends = ffi.new("uint32_t[]", max(n, 1))
    consumed = ffi.new("size_t *", 12345678)
    buf = ffi.from_buffer("uint8_t[]", data)
    k = lib.scantok_scan(sc._dfa, buf, n, flags, starts, ends, consumed)
    assert 0 <= k <= n
    return [(starts[i], ends[i]) for i in range(k)], consumed[0]


def c_scan_np(sc, data: bytes, flags: int = 0):
    """``scantok_scan`` on ``data`` -> ``(starts, ends, consumed)`` as numpy uint32 arrays (fast)."""
    import numpy as np

    ffi, lib = native()
    n = len(data)
    starts = np.empty(max(n, 1), dtype=np.uint32)
    ends = np.empty(max(n, 1), dtype=np.uint32)
    consumed = ffi.new("size_t *", 12345678)
    k = lib.scantok_scan(sc._dfa, ffi.from_buffer("uint8_t[]", data), n, flags,
                         ffi.cast("uint32_t *", starts.ctypes.data),
                         ffi.cast("uint32_t *", ends.ctypes.data), consumed)
    assert 0 <= k <= n
    return starts[:k].copy(), ends[:k].copy(), consumed[0]


# ---------------------------------------------------------------------------------------------
# slow tests (@pytest.mark.slow) run only with SCANTOK_SLOW=1 (make fuzz sets it) or -m slow
# ---------------------------------------------------------------------------------------------
def pytest_collection_modifyitems(config, items):
    if os.environ.get("SCANTOK_SLOW") == "1" or "slow" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="slow test: run with SCANTOK_SLOW=1 or -m slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
