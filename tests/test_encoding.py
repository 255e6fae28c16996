"""scantok's BPE encodings give exactly tiktoken 0.14.0's ids (the pinned oracle), with
tiktoken's special-token semantics, decoding, pickling and threading behaviour."""
from __future__ import annotations

import os
import pickle
import random
import string
import time

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import scantok
from conftest import load_corpus
from test_encoding_oracle import ENCODING_NAMES, SPECIAL_FRAGMENTS, tiktoken_encoding, vocab_dir
from strategies import describe_mismatch, fragment, hard_text

pytestmark = pytest.mark.usefixtures("_vocab")


_REAL_USABLE_CPUS = scantok.encoding._usable_cpus


@pytest.fixture(autouse=True)
def _threads_as_asked(monkeypatch):
    # batch calls use at most as many threads as the process has CPUs; the tests here ask for
    # 2, 3 or 8 threads to exercise the shared batch, whatever machine they run on
    import scantok.encoding

    monkeypatch.setattr(scantok.encoding, "_usable_cpus", lambda: 64)


@pytest.fixture(scope="module", autouse=True)
def _vocab():
    vocab_dir()


def enc(name):
    return scantok.get_encoding(name)


def same(got, want, text=None):
    assert got == want, describe_mismatch(list(got), list(want), text)


# --------------------------------------------------------------------------- corpora

SLICE = 120_000


@pytest.mark.parametrize("corpus", ["en", "code", "multi"])
@pytest.mark.parametrize("name", ENCODING_NAMES)
def test_corpus_slices(name, corpus):
    text = load_corpus(corpus)
    e, t = enc(name), tiktoken_encoding(name)
    rng = random.Random(hash((name, corpus)) & 0xFFFF)
    for _ in range(2):
        a = rng.randrange(0, max(1, len(text) - SLICE))
        piece = text[a : a + SLICE]
        same(e.encode_ordinary(piece), t.encode_ordinary(piece), piece)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_whole_corpus_numpy(name):
    import numpy as np

    e, t = enc(name), tiktoken_encoding(name)
    text = load_corpus("multi")[:1_500_000]
    got = e.encode_to_numpy(text)
    assert got.dtype == np.uint32
    assert np.array_equal(got, t.encode_to_numpy(text))


# --------------------------------------------------------------------------- hypothesis

SPECIALISH = st.sampled_from(SPECIAL_FRAGMENTS)
text_with_specials = st.lists(st.one_of(fragment(), fragment(), fragment(), SPECIALISH), max_size=40).map("".join)


@pytest.mark.parametrize("name", ENCODING_NAMES)
@given(text=hard_text())
@example(text="\ud800")
@example(text="a" + " " * 300 + "b")
@example(text="'s 'S 'ſ 'T 'RE 've 'M 'LL 'D it\u017f K\u212a")
@example(text="\r\n\u0085\u2028\u00a0  \n x")
@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
def test_hypothesis_ordinary(name, text):
    e, t = enc(name), tiktoken_encoding(name)
    same(e.encode_ordinary(text), t.encode_ordinary(text), text)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_harmony", "p50k_edit", "r50k_base"])
@given(text=text_with_specials, mode=st.sampled_from(["all", "none", "some"]))
@settings(suppress_health_check=[HealthCheck.too_slow])
def test_hypothesis_specials(name, text, mode):
    e, t = enc(name), tiktoken_encoding(name)
    specials = sorted(t.special_tokens_set)
    if mode == "all":
        kw = dict(allowed_special="all")
    elif mode == "none":
        kw = dict(disallowed_special=())
    else:
        allowed = set(specials[::2])
        kw = dict(allowed_special=allowed, disallowed_special=())
    same(e.encode(text, **kw), t.encode(text, **kw), text)
    assert e.count(text, **kw) == len(t.encode(text, **kw))
    # default: disallowed -> the same error message (the message names the token)
    try:
        want = t.encode(text)
    except ValueError as exc:
        with pytest.raises(ValueError) as got:
            e.encode(text)
        assert str(got.value) == str(exc)
        assert "disallowed special token" in str(got.value)
    else:
        same(e.encode(text), want, text)


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base", "r50k_base"])
@given(text=hard_text(max_fragments=60))
@settings(suppress_health_check=[HealthCheck.too_slow])
def test_hypothesis_numpy_count_roundtrip(name, text):
    e, t = enc(name), tiktoken_encoding(name)
    want = t.encode_ordinary(text)
    try:  # tiktoken's encode_to_numpy takes the str as it is: a lone surrogate raises there
        want_np = t.encode_to_numpy(text, disallowed_special=()).tolist()
    except UnicodeEncodeError:
        with pytest.raises(UnicodeEncodeError):
            e.encode_to_numpy(text, disallowed_special=())
    else:
        assert e.encode_to_numpy(text, disallowed_special=()).tolist() == want_np == want
    assert e.count(text, disallowed_special=()) == len(want)
    limit = len(want) // 2
    assert e.count_until(text, limit, disallowed_special=()) == min(len(want), limit + 1)
    assert e.decode(want) == t.decode(want)
    assert e.decode_bytes(want) == t.decode_bytes(want)


# --------------------------------------------------------------------------- special tokens


@pytest.mark.parametrize("name", ENCODING_NAMES)
def test_special_token_semantics(name):
    e, t = enc(name), tiktoken_encoding(name)
    eot = "<|endoftext|>"
    text = f"hello {eot} world{eot}{eot}x <|endoftext"
    for kw in [
        dict(allowed_special="all"),
        dict(allowed_special={eot}),
        dict(disallowed_special=()),
        dict(allowed_special=set(), disallowed_special=()),
        dict(allowed_special={eot}, disallowed_special="all"),
    ]:
        same(e.encode(text, **kw), t.encode(text, **kw), text)
        same(e.encode_to_numpy(text, **kw).tolist(), t.encode_to_numpy(text, **kw).tolist(), text)
        assert e.encode_batch([text, "a", ""], **kw) == t.encode_batch([text, "a", ""], **kw)
    with pytest.raises(ValueError) as got:
        e.encode(text)
    with pytest.raises(ValueError) as want:
        t.encode(text)
    assert str(got.value) == str(want.value)
    with pytest.raises(ValueError):
        e.encode_to_numpy(text)
    with pytest.raises(ValueError):
        e.encode_batch(["ok", text])
    # disallowed given as text collection
    with pytest.raises(ValueError) as got:
        e.encode(text, disallowed_special=[eot])
    with pytest.raises(ValueError) as want:
        t.encode(text, disallowed_special=[eot])
    assert str(got.value) == str(want.value)
    assert e.encode_ordinary(text) == t.encode_ordinary(text)
    assert e.eot_token == t.eot_token
    assert e.special_tokens_set == t.special_tokens_set
    assert e.n_vocab == t.n_vocab
    assert e.max_token_value == t.max_token_value
    assert e.name == t.name
    for s in t.special_tokens_set:
        assert e.encode_single_token(s) == t.encode_single_token(s)
        assert e.is_special_token(t.encode_single_token(s))
    assert not e.is_special_token(0)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_disallowed_specials_in_long_text(name):
    """Long texts (read in place: ASCII, and non-ASCII up to the kept-UTF-8 bound) are searched
    for the specials' common prefix in their UTF-8; raise or not, and the ids, as tiktoken's."""
    e, t = enc(name), tiktoken_encoding(name)
    eot = "<|endoftext|>"
    n = 20_000
    for filler in ("x", "\u00e9", "\u6f22", "\U0001F600", "a\u00e9 "):
        body = (filler * n)[:n]
        for text in (body + eot, eot + body, body[: n // 2] + eot + body[n // 2:], body + "<|endoftext",
                     body + "<|", body + "<", body + "|>" + body, body + "<\u00e9|"):
            for kw in ({}, dict(disallowed_special=[eot]), dict(allowed_special={eot})):
                try:
                    want = t.encode(text, **kw)
                except ValueError as err:
                    with pytest.raises(ValueError) as got:
                        e.encode(text, **kw)
                    assert str(got.value) == str(err)
                    with pytest.raises(ValueError):
                        e.encode_to_numpy(text, **kw)
                    continue
                assert e.encode(text, **kw) == want, (filler, len(text), kw)
                assert e.encode_to_numpy(text, **kw).tolist() == want


def test_harmony_specials():
    e, t = enc("o200k_harmony"), tiktoken_encoding("o200k_harmony")
    text = "<|start|>user<|message|>hi<|end|><|endofprompt|><|reserved_200018|><|reserved_201087|>"
    same(e.encode(text, allowed_special="all"), t.encode(text, allowed_special="all"))
    ids = list(range(199990, 201088))
    assert e.decode_tokens_bytes(ids) == t.decode_tokens_bytes(ids)
    assert e.decode(ids) == t.decode(ids)


# --------------------------------------------------------------------------- decoding


@pytest.mark.parametrize("name", ENCODING_NAMES)
def test_decode_variants(name):
    e, t = enc(name), tiktoken_encoding(name)
    text = "Hello wörld 中文 \U0001f468\u200d\U0001f469 <|endoftext|>"
    ids = t.encode(text, allowed_special="all")
    assert e.decode(ids) == t.decode(ids) == text
    assert e.decode_bytes(ids) == t.decode_bytes(ids)
    assert e.decode_tokens_bytes(ids) == t.decode_tokens_bytes(ids)
    assert e.decode_with_offsets(ids) == t.decode_with_offsets(ids)
    assert e.decode_batch([ids, ids[:3], []]) == t.decode_batch([ids, ids[:3], []])
    assert e.decode_bytes_batch([ids, []]) == t.decode_bytes_batch([ids, []])
    # partial UTF-8: errors= is passed through
    part = [i for i in ids if len(t.decode_single_token_bytes(i)) == 1 and t.decode_single_token_bytes(i)[0] >= 0x80]
    for errors in ["replace", "ignore", "surrogateescape"]:
        assert e.decode(part, errors=errors) == t.decode(part, errors=errors)
    for i in [0, 1, 255, 256, e.max_token_value, e.eot_token]:
        assert e.decode_single_token_bytes(i) == t.decode_single_token_bytes(i)
        assert e.encode_single_token(t.decode_single_token_bytes(i)) == t.encode_single_token(t.decode_single_token_bytes(i))
    import numpy as np

    assert e.decode(np.array(ids, dtype=np.uint32)) == text
    assert e.decode(np.array(ids, dtype=np.int64)) == text


@pytest.mark.parametrize("name", ["r50k_base", "o200k_harmony", "cl100k_base"])
def test_decode_errors(name):
    e, t = enc(name), tiktoken_encoding(name)
    bad = t.max_token_value + 1
    for ids in ([bad], [1, 2, bad], [2**32 - 1]):
        with pytest.raises(KeyError) as got:
            e.decode(ids)
        with pytest.raises(KeyError) as want:
            t.decode(ids)
        assert str(got.value) == str(want.value)
    with pytest.raises(KeyError) as got:
        e.decode_single_token_bytes(bad)
    with pytest.raises(KeyError) as want:
        t.decode_single_token_bytes(bad)
    assert str(got.value) == str(want.value)
    for ids in ([-1], [2**32], [2**64]):
        with pytest.raises(OverflowError):
            e.decode(ids)
        with pytest.raises(OverflowError):
            t.decode(ids)
    with pytest.raises(KeyError) as got:
        e.encode_single_token("qwertyuiopasdfgh")
    with pytest.raises(KeyError) as want:
        t.encode_single_token("qwertyuiopasdfgh")
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_argument_types_as_tiktoken(name):
    """Ids and token texts of the wrong type raise what tiktoken raises (int() and bytes() had
    turned 1.0 and "7" into ids, and 5 into b"\\x00" * 5); numpy ints are ids."""
    import numpy as np

    e, t = enc(name), tiktoken_encoding(name)
    calls = [lambda x, a: x.decode_single_token_bytes(a), lambda x, a: x.decode_with_offsets([5, a]),
             lambda x, a: x.decode_tokens_bytes([a]), lambda x, a: x.decode([a]), lambda x, a: x.decode_bytes([a])]
    for arg in (1.0, "7", None, np.int64(5), np.uint32(7), True, 12):
        for call in calls:
            try:
                want = call(t, arg)
            except (TypeError, OverflowError) as err:
                with pytest.raises(type(err)):
                    call(e, arg)
                continue
            assert call(e, arg) == want
    for arg in (5, None, bytearray(b"hello"), memoryview(b"hello"), 1.5):
        with pytest.raises(TypeError):
            t.encode_single_token(arg)
        with pytest.raises(TypeError):
            e.encode_single_token(arg)
    for arg in ("hello", b"hello", b" the"):
        assert e.encode_single_token(arg) == t.encode_single_token(arg)


def test_token_byte_values_and_ranks():
    e, t = enc("r50k_base"), tiktoken_encoding("r50k_base")
    assert e.token_byte_values() == t.token_byte_values()
    assert e._mergeable_ranks == t._mergeable_ranks
    assert e._pat_str == t._pat_str
    assert e._special_tokens == t._special_tokens


# --------------------------------------------------------------------------- surrogates, bytes


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base", "r50k_base"])
def test_surrogates(name):
    e, t = enc(name), tiktoken_encoding(name)
    for text in ["\ud800", "a\udc00b", "\ud83d\ude00", "x \udfff\n", "\ud800" * 50, "<|endoftext|>\ud800"]:
        same(e.encode_ordinary(text), t.encode_ordinary(text), text)
        same(e.encode(text, allowed_special="all"), t.encode(text, allowed_special="all"), text)
        # tiktoken's encode_to_numpy takes the str as it is (no fix-up): a lone surrogate raises
        with pytest.raises(UnicodeEncodeError):
            t.encode_to_numpy(text, allowed_special="all")
        with pytest.raises(UnicodeEncodeError):
            e.encode_to_numpy(text, allowed_special="all")


@given(data=st.binary(max_size=300))
def test_bytes_never_crash(data):
    e = enc("o200k_base")
    ids = e._encode_bytes(data)
    assert e.decode_bytes(ids) == data
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return
    assert ids == e.encode_ordinary(text)


# --------------------------------------------------------------------------- long pieces


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base", "r50k_base"])
def test_long_pieces_exact(name):
    """Pieces longer than the windowed encoder's window, including tiny windows that force
    many back-offs, match tiktoken's single-piece merge."""
    from scantok._native import lib

    e, t = enc(name), tiktoken_encoding(name)
    rng = random.Random(7)
    alphabets = ["ab", "aab" + string.ascii_lowercase, string.ascii_letters, " ", " \n", "01", "ее", "的是", "abcabcx", "é"]
    try:
        # (100, 60) and (200, 40): windows of 160 and 240 bytes, the largest that merge_small and
        # encode_long's window merge take
        for chunk, margin in [(1, 0), (3, 0), (8, 4), (64, 48), (100, 60), (200, 40), (384, 256)]:
            lib.bpe_set_long_window(chunk, margin)
            for _ in range(25):
                s = "".join(rng.choices(rng.choice(alphabets), k=rng.randint(161, 4000)))
                same(e._encode_single_piece(s), t._encode_single_piece(s), s)
    finally:
        lib.bpe_set_long_window(0, 0)  # the defaults


@pytest.mark.parametrize(
    "make",
    [
        lambda: " " * 10**6 + "x",
        lambda: "a" * 10**7,
        lambda: "".join(random.Random(1).choices(string.ascii_letters, k=10**7)),
    ],
    ids=["spaces_1e6_x", "a_1e7", "random_letters_1e7"],
)
def test_pathological_inputs(make):
    # Inputs that crash or stall tiktoken complete and round-trip; their speed is measured
    # in bench/bench_encode.py, not asserted here.
    e = enc("o200k_base")
    text = make()
    ids = e.encode_to_numpy(text)
    assert e.decode_bytes(ids) == text.encode()
    assert e.count(text) == len(ids)


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_large_outputs_exact(name):
    # Texts of a few MB take the large-output paths: the ids buffer reserved at once for half
    # as many ids as bytes (random letters need more: it grows past the reservation), and lists
    # of millions of ids written in place. Ids, list and array, equal tiktoken's.
    e, t = enc(name), tiktoken_encoding(name)
    rng = random.Random(11)
    en = load_corpus("en")
    letters = "".join(rng.choices(string.ascii_letters, k=3 * 10**6))
    mixed = en + " " + letters[: 2 * 10**6] + "\n\n" + en
    for text in (letters, mixed):
        want = t.encode_ordinary(text)
        assert len(text) >= 2 << 20 and len(want) * 8 >= 4 << 20
        got = e.encode_ordinary(text)
        assert got == want
        assert e.encode_ordinary_to_numpy(text).tolist() == want
    assert len(e.encode_ordinary(letters)) > len(letters) // 2  # past the reservation


def test_batch_threads_capped_at_usable_cpus(monkeypatch):
    import scantok.encoding

    e, t = enc("o200k_base"), tiktoken_encoding("o200k_base")
    docs = [f"doc {i}: " + "word " * (i % 50) for i in range(300)]
    want = t.encode_ordinary_batch(docs, num_threads=1)
    started = []
    real_pool = scantok.encoding._thread_pool
    monkeypatch.setattr(scantok.encoding, "_thread_pool", lambda n: started.append(n) or real_pool(n))
    monkeypatch.setattr(scantok.encoding, "_PARALLEL_MIN", 0)  # a batch this small too
    for cpus, pools in ((1, []), (2, [1]), (3, [2])):
        monkeypatch.setattr(scantok.encoding, "_usable_cpus", lambda c=cpus: c)
        started.clear()
        assert e.encode_ordinary_batch(docs, num_threads=8) == want
        assert started == pools  # the shared batch starts cpus - 1 workers; one CPU: no pool
    assert 1 <= _REAL_USABLE_CPUS() <= (os.cpu_count() or 1)


def test_str_subclass_is_encoded_as_tiktoken_does():
    # tiktoken reads a str's characters, so a subclass's own encode() does not change the ids;
    # but its fix-up for a lone surrogate calls text.encode("utf-16", "surrogatepass"), the
    # subclass's own, and scantok's does the same
    class Lying(str):
        def encode(self, *args, **kwargs):
            return b"LIE!"

    e, t = enc("o200k_base"), tiktoken_encoding("o200k_base")
    texts = [Lying("hello world"), Lying("h\u00e9llo \ud800 x" * 50), Lying("plain ascii " * 2000),
             Lying("\udac8"), Lying("\u65e5\u672c \ud800")]
    want = [t.encode_ordinary(x) for x in texts]
    assert want[1] != t.encode_ordinary(str(texts[1]))  # the subclass's encode() did take part
    assert [e.encode_ordinary(x) for x in texts] == want
    assert [e.encode(x, disallowed_special=()) for x in texts] == [t.encode(x, disallowed_special=()) for x in texts]
    assert [e.encode(x, allowed_special="all") for x in texts] == [t.encode(x, allowed_special="all") for x in texts]
    assert [e.count(x) for x in texts] == [len(w) for w in want]
    assert e.encode_ordinary_batch(texts, num_threads=1) == want
    assert e.encode_ordinary_batch(texts * 50, num_threads=2) == want * 50


def test_str_subclass_disallowed_special_is_searched_in_its_characters():
    # the lone-surrogate fix-up goes through the subclass's encode(), which may drop the special
    # token's prefix from the bytes: the check for disallowed specials searches the text itself,
    # as tiktoken does
    class Loud(str):
        def encode(self, *args, **kwargs):
            return "zz\ud800zz".encode(*args, **kwargs) if args and args[0] == "utf-16" else b"nope"

    e, t = enc("cl100k_base"), tiktoken_encoding("cl100k_base")
    text = Loud("h\u00e9llo \udfff<|endoftext|> \u65e5\u672c")
    with pytest.raises(ValueError) as want:
        t.encode(text)
    for call in (e.encode, e.encode_to_numpy, e.count):
        with pytest.raises(ValueError) as got:
            call(text)
        assert str(got.value) == str(want.value)
    assert e.encode(text, disallowed_special=()) == t.encode(text, disallowed_special=())
    assert e.encode(text, allowed_special="all") == t.encode(text, allowed_special="all")


def test_batch_waits_for_workers_through_an_interrupt():
    # the workers read memory the caller frees after the wait: an interrupt while waiting is
    # raised only once every worker is done
    import scantok.encoding as mod

    class Worker:
        def __init__(self, interrupts):
            self.interrupts, self.waits = interrupts, 0

        def exception(self):
            self.waits += 1
            if self.interrupts:
                self.interrupts -= 1
                raise KeyboardInterrupt
            return None

        def result(self):
            return None

    workers = [Worker(2), Worker(0), Worker(1)]
    with pytest.raises(KeyboardInterrupt):
        mod._wait_all(workers)
    assert [w.waits for w in workers] == [3, 1, 2]  # each waited for until it was done
    mod._wait_all([Worker(0)])


def test_batch_list_helpers():
    # the C helpers of encode_ordinary_batch: texts in place when ASCII, the rest left to the
    # caller; ids cut into lists straight into the output list; bad arguments are errors
    from scantok import _pylist
    from scantok._native import ffi

    texts = ["abc", "é", "", "x" * 5000, str.__new__(type("S", (str,), {}), "sub"), 7]
    ptrs, lens = ffi.new("const uint8_t *[]", len(texts)), ffi.new("size_t[]", len(texts))
    at = lambda c: int(ffi.cast("uintptr_t", c))  # noqa: E731
    assert list(_pylist.ascii_views(texts, 0, len(texts), at(ptrs), at(lens))) == [1, 4, 5]
    assert ffi.buffer(ptrs[0], lens[0])[:] == b"abc" and lens[2] == 0 and lens[3] == 5000
    assert list(_pylist.ascii_views(texts, 0, 1, at(ptrs), at(lens))) == []
    with pytest.raises(ValueError):
        _pylist.ascii_views(texts, 2, 1, at(ptrs), at(lens))
    with pytest.raises(ValueError):
        _pylist.ascii_views(texts, 0, 99, at(ptrs), at(lens))
    ids = ffi.new("uint32_t[]", [5, 6, 7, 300000, 9])
    ends = ffi.new("size_t[]", [2, 2, 5])
    out = ["keep", None, None, None]
    _pylist.split_ids_into(out, 1, at(ids), at(ends), 3)
    assert out == ["keep", [5, 6], [], [7, 300000, 9]]
    with pytest.raises(ValueError):
        _pylist.split_ids_into(out, 2, at(ids), at(ends), 3)  # past the end of out
    backwards = ffi.new("size_t[]", [3, 1])  # alive during the call
    with pytest.raises(ValueError):
        _pylist.split_ids_into(out, 0, at(ids), at(backwards), 2)  # ends out of order


def test_list_helpers_read_bytes_in_place():
    # scantok.Tokenizer's Encoding hands the ids, starts and ends of hf_encode_offsets (one bytes
    # object, 3n uint32) to the list helpers as (bytes, index): read in place, bounds checked
    import struct

    from scantok import _pylist

    raw = struct.pack("<9I", 5, 6, 300000, 0, 2, 4, 2, 4, 9)
    assert _pylist.ids_to_list((raw, 0), 3) == [5, 6, 300000]
    assert _pylist.ids_to_list((raw, 9), 0) == []
    assert _pylist.spans_to_list((raw, 3), (raw, 6), 3, 0) == [(0, 2), (2, 4), (4, 9)]
    assert _pylist.tokens_to_list((raw, 0), 2, ["a"] * 6) == ["a", None]
    for bad in ((raw, 8), (raw, -1), (raw,), (b"", 0), ("str", 0), (raw, 0, 1)):
        with pytest.raises(ValueError, match="out of range"):
            _pylist.ids_to_list(bad, 2)
    with pytest.raises(ValueError, match="out of range"):
        _pylist.spans_to_list((raw, 3), (raw, 7), 3, 0)
    with pytest.raises(TypeError):
        _pylist.ids_to_list((raw, "0"), 1)


def test_pathological_exact_medium():
    # tiktoken is slow on these (quadratic-ish) but fine at this size
    e, t = enc("o200k_base"), tiktoken_encoding("o200k_base")
    rng = random.Random(3)
    for text in [" " * 20000 + "x", "a" * 50000, "".join(rng.choices(string.ascii_letters, k=50000)), "\n" * 30000 + "y"]:
        same(e.encode_ordinary(text), t.encode_ordinary(text), text)


# --------------------------------------------------------------------------- API


def test_registry_and_models():
    import tiktoken.model as tm

    # tiktoken's encodings, plus scantok's own code50k (tests/test_code50k.py)
    assert sorted(scantok.list_encoding_names()) == sorted(ENCODING_NAMES + ("code50k",))
    from scantok import registry

    assert registry.MODEL_TO_ENCODING == tm.MODEL_TO_ENCODING
    assert registry.MODEL_PREFIX_TO_ENCODING == tm.MODEL_PREFIX_TO_ENCODING
    for m in ["gpt-4o", "gpt-4", "gpt-4o-2024-05-13", "gpt-oss-120b", "text-davinci-003", "gpt2", "ft:gpt-4o:x"]:
        assert scantok.encoding_name_for_model(m) == tm.encoding_name_for_model(m)
        assert scantok.encoding_for_model(m).name == tm.encoding_name_for_model(m)
    with pytest.raises(KeyError):
        scantok.encoding_for_model("no-such-model")
    with pytest.raises(ValueError, match="Unknown encoding"):
        scantok.get_encoding("nope")
    assert scantok.get_encoding("o200k_base") is scantok.get_encoding("o200k_base")
    assert repr(enc("o200k_base")) == "<Encoding 'o200k_base'>"


def test_pickle():
    e = enc("cl100k_base")
    assert pickle.loads(pickle.dumps(e)) is e
    t = tiktoken_encoding("r50k_base")
    custom = scantok.Encoding(
        "custom_r50k",
        pat_str=t._pat_str,
        mergeable_ranks=t._mergeable_ranks,
        special_tokens={"<|endoftext|>": 50256, "<|x|>": 50257},
    )
    c2 = pickle.loads(pickle.dumps(custom))
    assert c2 is not custom and c2.name == "custom_r50k"
    text = "hello <|x|> world<|endoftext|>"
    assert c2.encode(text, allowed_special="all") == custom.encode(text, allowed_special="all")
    assert custom.encode_ordinary(text) == t.encode_ordinary(text)


def test_pickle_multiprocessing():
    import multiprocessing as mp

    e = enc("o200k_base")
    ctx = mp.get_context("spawn")
    with ctx.Pool(1) as pool:
        got = pool.map(e.encode_ordinary, ["hello world", "foo bar"])
    assert got == [e.encode_ordinary("hello world"), e.encode_ordinary("foo bar")]


def test_custom_encoding_errors():
    t = tiktoken_encoding("r50k_base")
    # a pat_str without a shipped scanner is compiled at run time; outside the subset: PatternError
    custom = scantok.Encoding("x", pat_str=r"\w+|\s+", mergeable_ranks=t._mergeable_ranks, special_tokens={})
    assert custom.encode_ordinary("hi there") == t.encode_ordinary("hi") + t.encode_ordinary(" ") + t.encode_ordinary("there")
    with pytest.raises(scantok.PatternError, match="backreference"):
        scantok.Encoding("x", pat_str=r"(a)\1|\s+", mergeable_ranks=t._mergeable_ranks, special_tokens={})
    with pytest.raises(AssertionError):
        scantok.Encoding("x", pat_str=t._pat_str, mergeable_ranks=t._mergeable_ranks, special_tokens={}, explicit_n_vocab=5)
    # a vocabulary without every byte cannot encode arbitrary text: a clear error, no crash
    small = {bytes([b]): b for b in range(97, 123)}
    e = scantok.Encoding("tiny", pat_str=t._pat_str, mergeable_ranks=small, special_tokens={})
    assert e.encode_ordinary("abc") == [0 + 97, 98, 99]
    with pytest.raises(ValueError, match="no token"):
        e.encode_ordinary("ABC")


def test_threads_parallel_and_exact():
    e = enc("o200k_base")
    docs = [load_corpus("en")[i : i + 20000] for i in range(0, 1_000_000, 20000)]
    want = [e.encode_ordinary(d) for d in docs]
    assert e.encode_ordinary_batch(docs, num_threads=2) == want
    assert e.encode_batch(docs, num_threads=3, disallowed_special=()) == want
    assert e.encode_ordinary_batch([]) == []
    assert e.decode_batch(want, num_threads=2) == [e.decode(w) for w in want]


@pytest.mark.parametrize("name", ENCODING_NAMES)
def test_encode_batch_takes_the_ordinary_batch_when_no_text_holds_a_special(name, monkeypatch):
    """encode_batch of texts that hold no special token (nor a string the caller disallows) is
    encode_ordinary_batch, in its one shared C batch; a batch where one text holds one, a
    disallowed string outside the specials, a str subclass or a non-str takes the text by text
    path. Ids and errors as tiktoken's, on one thread and two (large batches included)."""
    import scantok.encoding

    e, t = enc(name), tiktoken_encoding(name)
    monkeypatch.setattr(scantok.encoding, "_usable_cpus", lambda: 2)
    routed = []
    real = type(e).encode_ordinary_batch
    monkeypatch.setattr(type(e), "encode_ordinary_batch",
                        lambda self, items, **kw: routed.append(len(items)) or real(self, items, **kw))
    eot = "<|endoftext|>"
    plain = [f"message {i}: hello <|endof there \x00 {i}" for i in range(50)] + ["", "\ud800 lone", "é 中 😀"]
    big = [load_corpus("en")[i:i + 3000] for i in range(0, 600_000, 3000)]

    class Sub(str):
        pass

    cases = [
        (plain, {}, True), (big, {}, True), (plain, {"allowed_special": "all"}, True),
        (plain, {"disallowed_special": ()}, True), ([], {}, True),
        (plain + [f"x {eot} y"], {"allowed_special": "all"}, False),
        (plain + [f"x {eot} y"], {"disallowed_special": ()}, False),
        (["<|endof", "text|>"], {}, True),  # a token across two texts is in neither
        (plain, {"disallowed_special": {"nowhere"}}, True),
        (plain[:3] + [Sub("hello")], {"disallowed_special": ()}, False),
    ]
    for threads in (1, 2):
        for texts, kw, ordinary in cases:
            routed.clear()
            assert e.encode_batch(texts, num_threads=threads, **kw) == t.encode_batch(texts, num_threads=threads, **kw)
            assert bool(routed) == ordinary, (texts[:2], kw)
        for texts, kw in ((plain + [f"x {eot}"], {}), (plain, {"disallowed_special": {"hello"}})):
            with pytest.raises(ValueError) as got:
                e.encode_batch(texts, num_threads=threads, **kw)
            with pytest.raises(ValueError) as want:
                t.encode_batch(texts, num_threads=threads, **kw)
            assert str(got.value) == str(want.value)
        with pytest.raises(TypeError):
            e.encode_batch(["a", 5], num_threads=threads)


def test_small_batches_stay_on_the_calling_thread(monkeypatch):
    """Batches of fewer than PARALLEL_MIN characters (tokens, for decode_batch) are not handed
    to a pool, whatever num_threads says (the hand-off cost more than the work); larger ones
    are. The ids are the same either way."""
    import scantok.encoding

    e, t = enc("o200k_base"), tiktoken_encoding("o200k_base")
    monkeypatch.setattr(scantok.encoding, "_usable_cpus", lambda: 2)
    used = []
    real_pool = scantok.encoding._thread_pool
    monkeypatch.setattr(scantok.encoding, "_thread_pool", lambda n: used.append(n) or real_pool(n))
    docs = [f"message {i}: hello there, how are you?" for i in range(64)]
    want = [t.encode_ordinary(d) for d in docs]
    assert e.encode_ordinary_batch(docs, num_threads=2) == want
    assert e.encode_batch(docs, num_threads=2) == want
    assert e.decode_batch(want, num_threads=2) == docs
    assert used == []
    big = docs * (scantok.threadpool.PARALLEL_MIN // sum(map(len, docs)) + 1)
    assert e.encode_ordinary_batch(big, num_threads=2) == want * (len(big) // len(docs))
    assert used == [1]  # the shared batch: this thread and one worker


@pytest.mark.parametrize("threads", [2, 3, 8])
def test_batch_threads_share_chunks_exactly(threads, monkeypatch):
    """encode_ordinary_batch on several threads (the shared C batch: workers take chunks, the
    caller converts texts and builds lists in order) gives tiktoken's ids for every kind of
    text: ASCII (read in place), non-ASCII (converted), empty, lone surrogates (tiktoken's
    fix-up), a str subclass, one text far larger than a chunk; and for fewer texts than
    threads."""
    name = "o200k_base"
    e, ref = enc(name), tiktoken_encoding(name)
    monkeypatch.setattr(scantok.encoding, "_PARALLEL_MIN", 0)  # the small batches below too

    class S(str):
        pass

    rng = random.Random(threads)
    en, multi = load_corpus("en"), load_corpus("multi")
    docs = []
    for i in range(300):
        a = rng.randrange(0, 500_000)
        docs.append((en if i % 3 else multi)[a : a + rng.choice([0, 1, 50, 3000, 9000])])
    docs[7] = "lone \ud800 surrogate \udfff" * 40
    docs[8] = S("a str subclass  with  spaces\n\n")
    docs[150] = en[:600_000]  # larger than a chunk: a chunk of its own
    want = [ref.encode_ordinary(d) for d in docs]
    for _ in range(2):  # cold caches, then warm
        assert e.encode_ordinary_batch(docs, num_threads=threads) == want
    assert e.encode_ordinary_batch(docs[:2], num_threads=threads) == want[:2]
    assert e.encode_ordinary_batch(docs[:1], num_threads=threads) == want[:1]
    assert e.encode_ordinary_batch(iter(docs[:5]), num_threads=threads) == want[:5]


def test_batch_threads_errors_stop_cleanly(monkeypatch):
    """An item that is not a str (found while the workers already run), and a chunk the
    vocabulary cannot encode: a clear error, no hang, and the next batch works."""
    monkeypatch.setattr(scantok.encoding, "_PARALLEL_MIN", 0)  # these batches run threaded
    e = enc("cl100k_base")
    docs = ["some text %d " % i * 50 for i in range(200)]
    want = [e.encode_ordinary(d) for d in docs]
    with pytest.raises(TypeError, match=r"text\[150\] is int"):
        e.encode_ordinary_batch(docs[:150] + [12] + docs[150:], num_threads=2)
    with pytest.raises(TypeError, match=r"text\[1\] is NoneType"):
        e.encode_ordinary_batch(docs[:1] + [None], num_threads=1)
    assert e.encode_ordinary_batch(docs, num_threads=2) == want
    t = tiktoken_encoding("cl100k_base")
    small = {bytes([b]): b for b in range(97, 123)}
    tiny = scantok.Encoding("tiny", pat_str=t._pat_str, mergeable_ranks=small, special_tokens={})
    texts = ["abc" * 300] * 100
    texts[60] = "ABC"
    with pytest.raises(ValueError, match="no token"):
        tiny.encode_ordinary_batch(texts, num_threads=3)
    texts[60] = "abc" * 300
    assert tiny.encode_ordinary_batch(texts, num_threads=3) == [[97, 98, 99] * 300] * 100


def test_batch_c_api():
    """bpe_batch_new checks its arguments (every chunk has a text, the last ends at ndocs, 1 to
    4096 threads); chunks are taken region by region and handed out as they finish."""
    from scantok._native import ffi, lib

    e = enc("o200k_base")
    data = [ffi.new("uint8_t[]", b"ab")] * 3
    ptrs, lens = ffi.new("const uint8_t *[]", data), ffi.new("size_t[]", [2, 2, 2])
    for bounds, nt in (([1, 1, 3], 2), ([2, 4], 2), ([3, 2], 2), ([2], 2), ([1, 3], 0), ([1, 3], 4097)):
        assert lib.bpe_batch_new(e._t, e._dfa, ptrs, lens, 3, ffi.new("size_t[]", bounds), len(bounds), nt, 0) == ffi.NULL
    b = lib.bpe_batch_new(e._t, e._dfa, ptrs, lens, 3, ffi.new("size_t[]", [1, 2, 3]), 3, 2, 0)
    assert b != ffi.NULL
    lo, hi = ffi.new("size_t *"), ffi.new("size_t *")
    lib.bpe_batch_region(b, 1, lo, hi)
    assert (lo[0], hi[0]) == (1, 3)
    assert lib.bpe_batch_next(b, 0) == -1 and lib.bpe_batch_rc(b, 0) == -3
    for k in range(3):
        lib.bpe_batch_set_ready(b, k)
    assert lib.bpe_batch_work(b, 1, 1) == 1  # thread 1: the front of its region, chunk 1
    assert lib.bpe_batch_next(b, 0) == 1 and lib.bpe_batch_rc(b, 1) == 0
    assert lib.bpe_batch_work(b, 0, 1) == 2  # then its chunk 2, then the last of region 0
    assert [lib.bpe_batch_next(b, 1) for _ in range(3)] == [2, 0, -3]
    n, ends = ffi.new("size_t *"), ffi.new("const size_t **")
    ids = lib.bpe_batch_ids(b, 2, n, ends)
    assert [ids[i] for i in range(n[0])] == e.encode_ordinary("ab") and ends[0][0] == 1
    lib.bpe_batch_free(b)
    b = lib.bpe_batch_new(e._t, e._dfa, ptrs, lens, 3, ffi.new("size_t[]", [1, 3]), 2, 1, 0)
    lib.bpe_batch_stop(b)  # stopped before anything was taken: nothing will finish
    assert lib.bpe_batch_work(b, 0, 0) == 0 and lib.bpe_batch_next(b, 1) == -5
    lib.bpe_batch_free(b)


def test_c_calls_release_the_gil():
    """While one thread is inside the C encoder, another thread keeps running Python code
    (so encode_batch's threads really run in parallel): the main thread's longest pause
    during the worker's long C call is much shorter than the call."""
    import threading

    e = enc("o200k_base")
    data = (load_corpus("en") * 3).encode()
    span = []

    def worker():
        t0 = time.perf_counter()
        e._count_bytes(data)  # one long C call (~100 ms or more)
        span.extend([t0, time.perf_counter()])

    stamps = []
    th = threading.Thread(target=worker)
    th.start()
    while th.is_alive():
        stamps.append(time.perf_counter())
    th.join()
    t0, t1 = span
    inside = [t for t in stamps if t0 <= t <= t1]
    gaps = [b - a for a, b in zip([t0] + inside, inside + [t1])]
    assert max(gaps) < 0.5 * (t1 - t0), (max(gaps), t1 - t0)


def test_count_until():
    e = enc("o200k_base")
    text = "hello world " * 1000
    n = len(e.encode_ordinary(text))
    assert e.count(text) == n
    assert e.count_until(text, 10) == 11
    assert e.count_until(text, n) == n
    assert e.count_until(text, n - 1) == n
    assert e.count_until("", 0) == 0
    assert e.count("<|endoftext|>x", allowed_special="all") == 2
    with pytest.raises(ValueError):
        e.count("<|endoftext|>")


def test_empty_and_types():
    e = enc("o200k_base")
    assert e.encode("") == [] and e.encode_ordinary("") == []
    assert e.encode_to_numpy("").tolist() == []
    assert e.decode([]) == "" and e.decode_bytes([]) == b""
    with pytest.raises(TypeError):
        e.encode_ordinary(b"bytes")  # type: ignore[arg-type]


def test_long_ascii_str_read_in_place():
    """A long ASCII str is encoded and counted from CPython's own bytes (no UTF-8 copy):
    every entry point gives tiktoken's ids at and around the threshold, for ASCII and
    non-ASCII str and for a str subclass, and the scanner's count equals the bytes count."""
    from scantok.scanner import _IN_PLACE_MIN

    enc, ref = scantok.get_encoding("o200k_base"), tiktoken_encoding("o200k_base")
    base = load_corpus("code")[:200_000].encode("ascii", "ignore").decode()
    sc = scantok.scanner("o200k_base")

    class S(str):
        pass

    for n in (_IN_PLACE_MIN - 1, _IN_PLACE_MIN, _IN_PLACE_MIN + 1, 150_000):
        for text in (base[:n], base[: n - 1] + "é", S(base[:n])):
            want = ref.encode_ordinary(text)
            assert enc.encode_ordinary(text) == want
            assert enc.encode(text) == want
            assert enc.encode_to_numpy(text).tolist() == want
            assert enc.encode_ordinary_to_numpy(text).tolist() == want
            assert enc.count(text) == len(want)
            assert enc.count_until(text, 100) == 101
            assert sc.count(text) == sc.count(text.encode())
    # disallowed specials are still found in a long ASCII str
    with pytest.raises(ValueError, match="disallowed special token"):
        enc.encode(base[:50_000] + "<|endoftext|>")
    assert enc.encode(base[:50_000] + "<|endoftext|>", allowed_special="all")[-1] == 199999
