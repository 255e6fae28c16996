"""str -> UTF-8 by ``scantok._pylist.utf8_bytes`` (cpyext/ucs_utf8.c), which the encoders use
for a str that is not ASCII: equal to ``str.encode(s, "utf-8")`` for every PEP 393 kind (Latin-1,
UCS-2, UCS-4), on the SIMD and the scalar path, at every length around the vector blocks and
the bounded stores at the end of the output, across the 16-bit counters' flush; CPython's own
UnicodeEncodeError for a lone surrogate; and ``SCANTOK_FORCE_IMPL`` takes effect.  The UTF-8 a
non-ASCII str keeps (``str_utf8``, made by the same code into the str's own field): equal to
CPython's, read by CPython afterwards, freed with the str."""
from __future__ import annotations

import os
import random
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

import scantok
from scantok import _pylist

IMPLS = ["scalar", "sse41"]
SAMPLES = {  # one character of each UTF-8 length and kind
    "ascii": "a", "latin1": "é", "two": "ж", "three": "日", "bmp_top": "\uffff", "astral": "😀",
}


def _available(impl):
    saved = _pylist.utf8_impl()
    try:
        _pylist.utf8_impl(impl)
        return True
    except ValueError:
        return False
    finally:
        _pylist.utf8_impl(saved)


@pytest.fixture(params=IMPLS)
def impl(request):
    if not _available(request.param):
        pytest.skip(f"this CPU lacks {request.param}")
    saved = _pylist.utf8_impl()
    _pylist.utf8_impl(request.param)
    yield request.param
    _pylist.utf8_impl(saved)


def test_every_length_and_mix(impl):
    # lengths across the 8- and 16-unit blocks and the 32 bytes before the end of the output
    # where the vector loop stops, in each kind, with the odd character at every position
    for fill in SAMPLES.values():
        for odd in SAMPLES.values():
            for n in range(0, 70):
                base = fill * n
                assert _pylist.utf8_bytes(base) == base.encode()
                for at in (0, n // 2, max(n - 1, 0)):
                    s = base[:at] + odd + base[at:]
                    assert _pylist.utf8_bytes(s) == s.encode(), (impl, fill, odd, n, at)


def test_random_texts(impl):
    rng = random.Random(1234)
    pools = [(0, 0x80), (0x80, 0x100), (0x100, 0x800), (0x800, 0xD800), (0xE000, 0x10000), (0x10000, 0x110000)]
    for _ in range(3000):
        use = rng.sample(pools, rng.randrange(1, 4))
        n = rng.choice([rng.randrange(0, 40), rng.randrange(0, 600)])
        s = "".join(chr(rng.randrange(*rng.choice(use))) for _ in range(n))
        assert _pylist.utf8_bytes(s) == s.encode(), (impl, s)


def test_long_texts_cross_the_counters_flush(impl):
    # the UCS-2 length counts in 16-bit lanes emptied every 65,536 units
    for s in ("ж" * 200_001 + "日" * 70_003 + "a" * 5, ("日本" * 40_000 + "a") * 3, "é" * 300_001,
              "x" + "😀" * 70_000, "a" * 300_001 + "😀" + "é" * 5):
        assert _pylist.utf8_bytes(s) == s.encode()


@pytest.mark.parametrize("s", ["\ud800", "a" * 20 + "\udfff", "é" * 9 + "\udc80", "😀" * 3 + "\ud800" + "x" * 10,
                               "ж" * 100_000 + "\udbff", "\udfff" + "日" * 30])
def test_lone_surrogate_raises_cpythons_error(impl, s):
    with pytest.raises(UnicodeEncodeError) as got:
        _pylist.utf8_bytes(s)
    with pytest.raises(UnicodeEncodeError) as want:
        s.encode()
    assert str(got.value) == str(want.value)


def test_not_a_str_is_a_type_error():
    for bad in (b"abc", None, 3, ["a"]):
        with pytest.raises(TypeError, match="expected str"):
            _pylist.utf8_bytes(bad)


def test_str_subclass_gives_its_characters():
    class Loud(str):
        def encode(self, *a, **k):
            return b"not these"

    assert _pylist.utf8_bytes(Loud("héllo 日本")) == "héllo 日本".encode()


def test_unknown_impl_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown implementation"):
        _pylist.utf8_impl("neon")


@given(st.text(max_size=300))
def test_hypothesis(s):
    for impl in IMPLS:
        if _available(impl):
            saved = _pylist.utf8_impl()
            _pylist.utf8_impl(impl)
            try:
                assert _pylist.utf8_bytes(s) == s.encode()
            finally:
                _pylist.utf8_impl(saved)


@pytest.mark.parametrize("forced,want", [("scalar", "scalar"), ("sse2", "scalar"), (None, None)])
def test_force_impl_env_takes_effect(forced, want):
    env = {k: v for k, v in os.environ.items() if k != "SCANTOK_FORCE_IMPL"}
    if forced:
        env["SCANTOK_FORCE_IMPL"] = forced
    code = "from scantok import _pylist; print(_pylist.utf8_impl())"
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    expected = want or ("sse41" if _available("sse41") else "scalar")
    assert r.stdout.strip() == expected


def test_encoders_read_the_same_bytes():
    # the paths that now take utf8_bytes: a batch (each text copied), Scanner.count/offsets of a
    # str, and a str too long to keep its UTF-8 in place
    enc = scantok.get_encoding("cl100k_base")
    texts = ["héllo wörld", "Привет, мир! " * 50, "日本語のテキスト 😀 " * 30, "plain ascii"]
    assert enc.encode_ordinary_batch(texts, num_threads=1) == [enc.encode_ordinary(t) for t in texts]
    sc = scantok.scanner("cl100k_base")
    for t in texts:
        assert sc.count(t) == sc.count(t.encode())
        assert sc.split(t) == [p.decode() for p in sc.split_bytes(t.encode())]


def _fresh(s: str) -> str:
    return (s + "x")[:-1]  # an equal str that is a new object, with no UTF-8 kept yet


@pytest.mark.parametrize("sample", ["é", "ж", "日本", "😀", "a" * 20 + "é"])
def test_kept_utf8_is_cpythons(impl, sample):
    # a non-ASCII str read in place (str_utf8, what encode() and count() use for one of up to
    # 4 Mi characters) gets its UTF-8 made by ucs_utf8 and kept in the str, where CPython's
    # own str.encode and the C API read it afterwards
    import ctypes

    for n in (1, 7, 100, 20_000):
        s = _fresh((sample + " mixed text, ") * n)
        want = _fresh(s).encode()
        addr, length = _pylist.str_utf8(s)
        assert ctypes.string_at(addr, length) == want
        assert _pylist.str_utf8(s) == (addr, length)  # kept: the same memory the second time
        assert s.encode() == want and s.encode("utf-8") == want
        assert _pylist.utf8_contains(_fresh(s), "text".encode())


def test_kept_utf8_lone_surrogate_and_subclass():
    with pytest.raises(UnicodeEncodeError):
        _pylist.str_utf8(_fresh("ab\ud800cd" * 10))

    class S(str):
        pass

    s = S("héllo " * 100)
    addr, length = _pylist.str_utf8(s)
    assert length == len(str.encode(s, "utf-8"))


def test_kept_utf8_is_freed_with_the_str():
    import gc
    import tracemalloc

    text = "日本語のテキスト and some ASCII, ещё и кириллица. " * 200
    tracemalloc.start()
    try:
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(300):
            _pylist.str_utf8(_fresh(text))  # each str freed right after
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 100_000, grown  # 300 leaked copies would be ~4.5 MB


def test_encoder_on_fresh_non_ascii_str():
    enc = scantok.get_encoding("o200k_base")
    base = "Привет, мир! 日本語 😀 é " * 3000
    want = enc.encode_ordinary(_fresh(base).encode().decode())
    for fn in (enc.encode_ordinary, lambda s: enc.encode_ordinary_to_numpy(s).tolist()):
        s = _fresh(base)
        assert fn(s) == want
        assert s.encode() == base.encode()
    assert enc.count(_fresh(base)) == len(want)


def test_kept_utf8_allocator_under_debug_hooks():
    # the kept UTF-8 is freed by CPython's unicode_dealloc with its own allocator; the debug
    # hooks (-X dev, PYTHONMALLOC=debug) abort the process on a mismatch
    code = ("from scantok import _pylist\n"
            "for i in range(300):\n"
            "    s = ('é' * 10 + 'x' * i + '日本😀')[:-1]\n"
            "    _pylist.str_utf8(s)\n"
            "    assert s.encode() == ('é' * 10 + 'x' * i + '日本😀')[:-1].encode()\n"
            "    del s\n"
            "print('ok')\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONMALLOC"}
    for args, extra in ((["-X", "dev"], {}), ([], {"PYTHONMALLOC": "debug"})):
        r = subprocess.run([sys.executable, *args, "-c", code], env={**env, **extra}, capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 0 and r.stdout.strip() == "ok", (args, extra, r.stderr[-2000:])
