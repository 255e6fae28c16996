"""The encoder's per-thread caches and SIMD merge path never change an id.

The C encoder keeps, per thread and per table, a piece cache (ids of recent short pieces)
and a pair cache (rank of two adjacent tokens' concatenation), and picks its merge loop's
argmin (scalar or AVX2) from the scanner's implementation. These tests compare with
tiktoken (the oracle) where the caches are warm, cold, shared by several tables, evicted,
and where a freed table's memory is reused by a table with other ranks.
"""
from __future__ import annotations

import gc
import random
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import scantok
from conftest import available_impls, current_impl, force_impl, load_corpus
from strategies import describe_mismatch, hard_text
from test_encoding_oracle import ENCODING_NAMES, tiktoken_encoding, vocab_dir


@pytest.fixture(scope="module", autouse=True)
def _vocab():
    vocab_dir()


def same(got, want, text=None):
    assert list(got) == list(want), describe_mismatch(list(got), list(want), text)


def _words(rng: random.Random, n: int, alphabet: str) -> str:
    """Text whose words repeat (cache hits) with rare long ones (cache misses, merges)."""
    vocab = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 14))) for _ in range(300)]
    out = []
    for _ in range(n):
        w = rng.choice(vocab) if rng.random() < 0.9 else "".join(rng.choice(alphabet) for _ in range(rng.randint(10, 40)))
        out.append(w)
        out.append(rng.choice([" ", " ", " ", "\n", ", ", "  "]))
    return "".join(out)


@pytest.mark.parametrize("impl", available_impls())
@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base", "r50k_base"])
def test_every_merge_path_matches_tiktoken(impl, name):
    """Each engine path (and so each argmin of the merge loop) on corpus slices and on
    space-free text whose pieces go through long merges."""
    enc, ref = scantok.get_encoding(name), tiktoken_encoding(name)
    rng = random.Random(f"{impl}-{name}")
    texts = [load_corpus(c)[i : i + 30_000] for c, i in (("en", 50_000), ("code", 70_000), ("multi", 90_000))]
    texts.append("".join(rng.choice("的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年") for _ in range(3000)))
    texts.append("".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(5000)))
    texts.append("".join(rng.choice("0123456789abcdef") for _ in range(3000)))
    original = current_impl()
    try:
        assert force_impl(impl) == 0
        for text in texts:
            want = ref.encode_ordinary(text)
            same(enc.encode_ordinary(text), want, text)
            same(enc.encode_to_numpy(text), want, text)
            assert enc.count(text) == len(want)
    finally:
        force_impl(original)


@pytest.mark.parametrize("seed", range(40))
def test_pieces_of_two_to_four_bytes_match_tiktoken(seed):
    """Pieces of 2 to 4 bytes that are not a token are merged by rule (bpe.c, merge_tiny): every
    such piece over a 3-letter alphabet, under random vocabularies of 2- and 3-byte tokens at
    random ranks (some 4-byte ones too, so that pieces that are tokens are not merged), alone
    (a first sight) and again in one text (cache hits)."""
    import itertools

    import tiktoken

    rng = random.Random(seed)
    ranks = {bytes([b]): b for b in range(256)}
    for n, share in ((2, 0.6), (3, 0.4), (4, 0.1)):
        for t in itertools.product(b"abc", repeat=n):
            if rng.random() < share:
                ranks[bytes(t)] = 0  # ranked below
    longer = [t for t in ranks if len(t) > 1]
    rng.shuffle(longer)
    for r, t in enumerate(longer):
        ranks[t] = 256 + r
    pat = r"[abc]+|[^abc]+"
    enc = scantok.Encoding(f"tiny{seed}", pat_str=pat, mergeable_ranks=ranks, special_tokens={})
    ref = tiktoken.Encoding(f"tiny{seed}", pat_str=pat, mergeable_ranks=ranks, special_tokens={})
    pieces = ["".join(t) for n in (2, 3, 4) for t in itertools.product("abc", repeat=n)]
    for piece in pieces:
        same(enc.encode_ordinary(piece), ref.encode_ordinary(piece), piece)
    text = " ".join(pieces)
    same(enc.encode_ordinary(text), ref.encode_ordinary(text), text)


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
@given(seed=st.integers(0, 2**32 - 1), alphabet=st.sampled_from(["abcdefgh", "abcdefghijklmnopqrstuvwxyz ", "éa日本語ab", "0123456789.,"]))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_warm_cache_is_exact(name, seed, alphabet):
    """The same and related texts encoded repeatedly: later calls are served from the
    caches filled by earlier ones, and must give the oracle's ids every time."""
    enc, ref = scantok.get_encoding(name), tiktoken_encoding(name)
    text = _words(random.Random(seed), 800, alphabet)
    want = ref.encode_ordinary(text)
    for _ in range(3):
        same(enc.encode_ordinary(text), want, text)
    half = text[: len(text) // 2]
    same(enc.encode_ordinary(half), ref.encode_ordinary(half), half)


@given(text=hard_text(max_fragments=40))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_interleaved_tables_share_a_thread(text):
    """More tables than a thread keeps caches for (slots are evicted and reused), used in
    turn on the same text."""
    for name in ENCODING_NAMES + ENCODING_NAMES[::-1]:
        same(scantok.get_encoding(name).encode_ordinary(text), tiktoken_encoding(name).encode_ordinary(text), text)


def _custom_ranks(order: int) -> dict[bytes, int]:
    """A small vocabulary: every byte plus some merges, the merges' ranks permuted by
    `order` so that two such tables give different ids for the same text."""
    merges = [b"ab", b"ba", b"abc", b"bab", b"abab", b"ca", b"cab", b"abcab", b"aa", b"aaa", b"bb", b"bbb", b" a", b" ab"]
    ranks = {bytes([b]): b for b in range(256)}
    rng = random.Random(order)
    perm = list(range(len(merges)))
    rng.shuffle(perm)
    for i, tok in enumerate(merges):
        ranks[tok] = 256 + perm[i]
    return ranks


def test_freed_table_cache_is_never_reused():
    """Tables created and freed in turn (their memory is likely reused at the same address)
    with different merge orders: each one's ids are its own, never a predecessor's."""
    import tiktoken

    pat = scantok.get_encoding("r50k_base")._pat_str
    text = "abcab babab aaabbb cabab abab " * 50 + "".join(random.Random(1).choice("abc ") for _ in range(2000))
    for order in range(12):
        ranks = _custom_ranks(order)
        mine = scantok.Encoding(f"custom{order}", pat_str=pat, mergeable_ranks=ranks, special_tokens={})
        ref = tiktoken.Encoding(f"custom{order}", pat_str=pat, mergeable_ranks=ranks, special_tokens={})
        same(mine.encode_ordinary(text), ref.encode_ordinary(text), text)
        del mine
        gc.collect()


def test_freed_table_cache_memory_is_taken_cleared():
    """A thread's caches of a freed table are the ones the next table takes (no new memory:
    16 MiB mapped anew is faulted in page by page, tens of ms on a VM), cleared: the piece
    cache, the long-piece store and its hints give the new table's ids, never the old one's."""
    import tiktoken
    from scantok._native import lib

    pat = scantok.get_encoding("r50k_base")._pat_str
    rng = random.Random(7)
    # short pieces (the piece cache), long ones (the store) and short pieces of more than three
    # tokens (hints into the store)
    text = " ".join("".join(rng.choice("abc") for _ in range(rng.randint(1, 60))) for _ in range(3000))
    errors: list[BaseException] = []
    allocs: list[int] = []

    def work():
        try:
            for order in range(8):
                ranks = _custom_ranks(order)
                mine = scantok.Encoding(f"custom{order}", pat_str=pat, mergeable_ranks=ranks, special_tokens={})
                ref = tiktoken.Encoding(f"custom{order}", pat_str=pat, mergeable_ranks=ranks, special_tokens={})
                for _ in range(2):  # cold, then every piece from the caches
                    same(mine.encode_ordinary(text), ref.encode_ordinary(text), text)
                allocs.append(lib.bpe_piece_cache_allocs())
                del mine
                gc.collect()
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    t = threading.Thread(target=work)  # a thread of its own: no cache of an earlier test
    t.start()
    t.join()
    assert not errors, errors
    # the first table allocated this thread's caches; the seven after it took them over (the
    # count is process-wide, and no other thread encodes meanwhile)
    assert allocs[-1] == allocs[0], allocs


def test_threads_have_their_own_caches():
    """Threads encoding different texts at once, each with a cold cache, then warm."""
    enc, ref = scantok.get_encoding("o200k_base"), tiktoken_encoding("o200k_base")
    texts = [_words(random.Random(i), 3000, "abcdefghij klmnop日本") for i in range(4)]
    want = [ref.encode_ordinary(t) for t in texts]
    errors: list[BaseException] = []

    def work(i):
        try:
            for _ in range(3):
                assert enc.encode_ordinary(texts[i]) == want[i]
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base", "r50k_base"])
def test_runs_of_one_byte(name):
    """Runs of one byte longer than a short piece are cached by (byte, length): every length
    around the cache's limits, repeated so that the second use is a hit."""
    enc, ref = scantok.get_encoding(name), tiktoken_encoding(name)
    for ch in [" ", "\n", "\t", "=", "-", "a", "0", "é", "日", "\x00"]:
        for n in list(range(14, 40)) + [127, 128, 254, 255, 256, 257, 1000]:
            text = f"x{ch * n}y {ch * n} z{ch * n}"
            for _ in range(2):
                same(enc.encode_ordinary(text), ref.encode_ordinary(text), text)


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base", "r50k_base"])
def test_long_runs_of_one_byte(name):
    """Runs longer than a cached run take encode_run (k copies of a period token, then the
    encoding of the last bytes, each junction checked): every ASCII character, at the lengths
    around its threshold (three times the longest token), alone, after a head and before a
    tail, twice (the second time from the thread's findings)."""
    enc, ref = scantok.get_encoding(name), tiktoken_encoding(name)
    lengths = [255, 383, 384, 385, 400, 511, 1000, 4097]
    for code in range(128):
        ch = chr(code)
        for n in lengths + ([20011, 100_003] if ch in " \n\t=-a0" else []):
            for text in (ch * n, f"x{ch * n}", f"{ch * n}yz", f" {ch * n}\n"):
                for _ in range(2):
                    same(enc.encode_ordinary(text), ref.encode_ordinary(text), text)


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base", "r50k_base"])
def test_long_runs_under_every_guess(name):
    """encode_run's guess (bpe_set_run_guess: the run prefix that names the period token and
    bounds the tail) is only a guess: guesses of a few bytes name wrong periods and tails,
    whose junctions fail their check (removing either check gives other ids than tiktoken's),
    and the run goes on to the windows. Each guess runs on a new thread, whose caches hold no
    findings of an earlier one."""
    from scantok._native import ffi, lib

    enc, ref = scantok.get_encoding(name), tiktoken_encoding(name)
    texts = [ch * n for ch in " \n\t=-a0*.#_~" for n in (255, 256, 300, 513, 1000, 1777)]
    want = [ref.encode_ordinary(t) for t in texts]
    taken, declined = ffi.new("size_t *"), ffi.new("size_t *")
    lib.bpe_run_stats(taken, declined)
    before = (taken[0], declined[0])
    errors: list = []

    def run(guess: int) -> None:
        try:
            lib.bpe_set_run_guess(guess)
            for text, ids in zip(texts, want):
                if enc.encode_ordinary(text) != ids:
                    errors.append((guess, text[:1], len(text)))
        except Exception as e:  # reported below, on the test's thread
            errors.append(e)

    try:
        for guess in (1, 2, 3, 4, 5, 6, 8, 12, 16, 24, 32, 64, 0):
            th = threading.Thread(target=run, args=(guess,))
            th.start()
            th.join()
    finally:
        lib.bpe_set_run_guess(0)
    assert not errors, errors[:5]
    lib.bpe_run_stats(taken, declined)
    assert taken[0] > before[0] and declined[0] > before[1]  # both ways were taken


def test_long_run_under_a_guess_shorter_than_its_period():
    """A test's guess shorter than the period token (maxlen 256, guess 200: the period is 256
    bytes of "a") names merges longer than a 400-byte run: found by a helper under ASan (a read
    112 bytes past the text); encode_run now declines such a period, and the ids stay
    tiktoken's."""
    import tiktoken
    from scantok._native import lib

    ranks = {bytes([b]): b for b in range(256)}
    ranks.update({b"a" * 2**i: 255 + i for i in range(1, 9)})
    pat = r"a+|\s+|[^a\s]+"
    enc = scantok.Encoding("runs-256", pat_str=pat, mergeable_ranks=ranks, special_tokens={})
    ref = tiktoken.Encoding("runs-256", pat_str=pat, mergeable_ranks=ranks, special_tokens={})
    texts = ["b" * 1000 + "a" * 400, "a" * 600, "b" * 7 + "a" * 400, "a" * 255, "a" * 511]
    got: list = []

    def run() -> None:
        try:
            lib.bpe_set_run_guess(200)
            got.extend(enc.encode_ordinary(t) for t in texts)
        except Exception as e:  # reported below, on the test's thread
            got.append(e)
        finally:
            lib.bpe_set_run_guess(0)

    th = threading.Thread(target=run)
    th.start()
    th.join()
    assert got == [ref.encode_ordinary(t) for t in texts]


def _run_vocab(lengths: list[int], order: list[int]) -> dict[bytes, int]:
    """Every byte, then runs of "a" and of " " of the given lengths, ranked in the given order."""
    ranks = {bytes([b]): b for b in range(256)}
    runs = [ch * n for n in lengths for ch in (b"a", b" ")]
    for r, k in enumerate(order):
        ranks.setdefault(runs[k % len(runs)], 256 + r)
    return ranks


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lengths=st.lists(st.integers(2, 12), min_size=1, max_size=8, unique=True),
       order=st.permutations(list(range(16))), runs=st.lists(st.integers(255, 1500), min_size=1, max_size=3))
def test_long_runs_under_random_run_vocabularies(lengths, order, runs):
    """encode_run's guess (a period token, then a tail) is used only where its junctions check
    out: vocabularies of random run tokens with random ranks, whose runs need not encode as a
    period and a tail, give tiktoken's ids."""
    import tiktoken

    ranks = _run_vocab(lengths, order)
    pat = r"a+|\s+|[^a\s]+"
    enc = scantok.Encoding("runs", pat_str=pat, mergeable_ranks=ranks, special_tokens={})
    ref = tiktoken.Encoding("runs", pat_str=pat, mergeable_ranks=ranks, special_tokens={})
    for n in runs:
        for text in ("a" * n, " " * n + "b", "b" + "a" * n):
            same(enc.encode_ordinary(text), ref.encode_ordinary(text), text)


def test_ids_to_list():
    """scantok._pylist builds lists from cached int objects (ids < 2**18) and fresh ones."""
    import array

    from scantok._native import ffi
    from scantok._pylist import ids_to_list

    ids = array.array("I", [0, 1, 255, 256, 199_999, 2**18 - 1, 2**18, 2**32 - 1, 7, 7])
    buf = ffi.from_buffer("uint32_t[]", ids)
    addr = int(ffi.cast("uintptr_t", buf))
    got = ids_to_list(addr, len(ids))
    assert got == ids.tolist() and all(type(x) is int for x in got)
    assert ids_to_list(addr, 0) == [] and ids_to_list(0, 0) == []
    # the cached objects are shared, the list is new each time
    again = ids_to_list(addr, len(ids))
    assert again == got and again is not got and again[1] is got[1]
    with pytest.raises(ValueError, match="negative"):
        ids_to_list(addr, -1)
    with pytest.raises(ValueError, match="NULL"):
        ids_to_list(0, 3)
    with pytest.raises(TypeError):
        ids_to_list("x", 1)


def test_list_and_numpy_agree_on_every_id_range():
    """encode() lists equal encode_to_numpy for ids across the whole vocabulary."""
    import numpy as np

    enc = scantok.get_encoding("o200k_harmony")
    text = enc.decode(list(range(0, 199_998, 97)))
    arr = enc.encode_to_numpy(text)
    lst = enc.encode_ordinary(text)
    assert lst == arr.tolist() and arr.dtype == np.uint32
    assert enc.encode("<|endoftext|> x <|return|>", allowed_special="all") == tiktoken_encoding("o200k_harmony").encode(
        "<|endoftext|> x <|return|>", allowed_special="all")


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base", "r50k_base"])
def test_short_text_path_boundary(name):
    """Texts up to BPE_SMALL_MAX bytes take the no-allocation path (ids in a per-thread
    scratch array): every mode agrees with tiktoken on both sides of the limit, including
    texts of one token per byte (the scratch array's worst case)."""
    import numpy as np

    from scantok._native import lib

    enc, ref = scantok.get_encoding(name), tiktoken_encoding(name)
    limit = lib.BPE_SMALL_MAX
    rng = random.Random(name)
    texts = []
    for n in (0, 1, 2, limit - 2, limit - 1, limit, limit + 1, limit + 2):
        texts.append("".join(rng.choice("ab ,.\n日é") for _ in range(n)).encode()[:n].decode("utf-8", "ignore"))
        texts.append("\x00\x01" * (n // 2))  # one token per byte
        texts.append(" " * n)
    for text in texts:
        want = ref.encode_ordinary(text)
        same(enc.encode_ordinary(text), want, text)
        same(enc.encode(text), ref.encode(text), text)
        arr = enc.encode_to_numpy(text)
        assert arr.dtype == np.uint32 and arr.tolist() == want
        assert enc.count(text) == len(want) and enc.count_until(text, 3) == min(len(want), 4)
    # results do not alias the scratch array
    a = enc.encode_to_numpy("hello world")
    b = enc.encode_to_numpy("other text entirely")
    assert a.tolist() == ref.encode_ordinary("hello world") and b.tolist() == ref.encode_ordinary("other text entirely")


def _long_pieces(rng: random.Random, n: int) -> str:
    """Recurring pieces the short-piece cache cannot hold: words of 17-120 letters, CJK runs,
    and short pieces of more than three tokens (random consonant clusters)."""
    vocab = ["".join(rng.choice("bcdfghjklmnpqrstvwxz") for _ in range(rng.randint(17, 120))) for _ in range(150)]
    vocab += ["".join(rng.choice("的一是不了人我在有他这中大来上") for _ in range(rng.randint(6, 40))) for _ in range(100)]
    vocab += ["".join(rng.choice("qxzjvkw") for _ in range(rng.randint(6, 16))) for _ in range(100)]
    return " ".join(rng.choice(vocab) for _ in range(n))


@pytest.mark.parametrize("cache_bytes", [1 << 15, 1 << 17, None])
def test_piece_store_learns_and_stays_exact(cache_bytes):
    """The long-piece store (pieces over 16 bytes or over three tokens) in steady state and
    through its epochs (a tiny cache empties it again and again): ids equal tiktoken's."""
    from scantok._native import lib
    from scantok.registry import _load_encoding

    default = lib.bpe_piece_cache_bytes()
    try:
        if cache_bytes is not None:
            assert lib.bpe_set_piece_cache_bytes(cache_bytes) == cache_bytes
        for name in ("o200k_base", "cl100k_base"):
            enc, ref = _load_encoding(name), tiktoken_encoding(name)
            rng = random.Random(f"store-{name}-{cache_bytes}")
            docs = [_long_pieces(rng, 400) for _ in range(6)]
            for _ in range(3):
                for d in docs:
                    same(enc.encode_ordinary(d), ref.encode_ordinary(d), d)
            # runs and short texts through the same caches
            for d in ["a" * 300, " " * 17 + "x", "x" * 16 + " " + "y" * 17]:
                same(enc.encode_ordinary(d), ref.encode_ordinary(d), d)
    finally:
        lib.bpe_set_piece_cache_bytes(default)
    assert lib.bpe_piece_cache_bytes() == default

def test_store_hints_go_stale_with_the_store():
    """A short piece of more than three tokens is found in the long-piece store through a hint
    in the piece cache (the entry's offset and the store's epoch). Long pieces fill a tiny
    store again and again (each time a new epoch, the arena reused from its start): a piece
    whose hint is from an older epoch must be encoded again, not read from the reused arena
    (where another piece's entry now is), and a hint of the current epoch read directly."""
    from scantok._native import lib
    from scantok.registry import _load_encoding

    default = lib.bpe_piece_cache_bytes()
    try:
        assert lib.bpe_set_piece_cache_bytes(1 << 15) == 1 << 15  # an 8 KiB store arena
        for name in ("o200k_base", "cl100k_base"):
            enc, ref = _load_encoding(name), tiktoken_encoding(name)
            rng = random.Random(f"hints-{name}")
            hinted = []
            while len(hinted) < 40:
                w = " " + "".join(rng.choice("qxzjvkw") for _ in range(rng.randint(6, 15)))
                if len(w.encode()) <= 16 and len(ref.encode_ordinary(w)) > 3 and w not in hinted:
                    hinted.append(w)
            for rnd in range(4):
                # ~1,000 long pieces of ~100 bytes of entries each: several epochs per round
                filler = [" " + "".join(rng.choice("bcdfghjklmnpqrstvwxz") for _ in range(rng.randint(30, 60)))
                          for _ in range(1000)]
                text = "".join(hinted) + "".join(filler) + "".join(hinted) + "".join(reversed(hinted))
                same(enc.encode_ordinary(text), ref.encode_ordinary(text), text)
                same(enc.encode_to_numpy(text).tolist(), ref.encode_ordinary(text), text)
    finally:
        lib.bpe_set_piece_cache_bytes(default)
    assert lib.bpe_piece_cache_bytes() == default


def test_piece_cache_size_is_bounded_and_rounded():
    from scantok._native import lib

    default = lib.bpe_piece_cache_bytes()
    try:
        assert default == 16 << 20  # documented in the README
        assert lib.bpe_set_piece_cache_bytes(0) == 32 << 10  # the smallest
        assert lib.bpe_set_piece_cache_bytes((3 << 20) + 5) == 2 << 20  # a power of two, rounded down
        assert lib.bpe_set_piece_cache_bytes(1 << 40) == 1 << 30  # the largest
    finally:
        lib.bpe_set_piece_cache_bytes(default)


def test_piece_cache_env_var(tmp_path):
    import os
    import subprocess
    import sys

    code = "from scantok._native import lib; print(lib.bpe_piece_cache_bytes())"
    env = dict(os.environ, SCANTOK_PIECE_CACHE_MB="16")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert int(out.stdout) == 16 << 20


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(hard_text(), min_size=1, max_size=6), st.integers(1, 3))
def test_recurring_hard_text_is_exact(texts, passes):
    """Arbitrary text encoded again and again (pieces come from the caches the second time)."""
    enc, ref = scantok.get_encoding("o200k_base"), tiktoken_encoding("o200k_base")
    for _ in range(passes):
        for t in texts:
            same(enc.encode_ordinary(t), ref.encode_ordinary(t), t)


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_non_ascii_str_keeps_its_utf8_and_stays_exact(name, monkeypatch):
    """A long non-ASCII str is read through CPython's own UTF-8 of it (kept in the str), so a
    document encoded again is not converted again; lone surrogates still get tiktoken's
    fix-up, and a str above _KEEP_UTF8_MAX takes a temporary copy: all give tiktoken's ids."""
    from scantok import encoding as encoding_module

    enc, want = scantok.get_encoding(name), tiktoken_encoding(name)
    base = load_corpus("multi")[:40_000]
    texts = [base, "é" + base, base[:20_000] + "\ud800" + base[20_000:], "🙂 " * 9000]
    for text in texts:
        for _ in range(2):  # the second call reads the UTF-8 kept by the first
            assert enc.encode_ordinary(text) == want.encode_ordinary(text)
            assert enc.encode_ordinary_to_numpy(text).tolist() == want.encode_ordinary(text)
            assert enc.count(text) == len(want.encode_ordinary(text))
    monkeypatch.setattr(encoding_module, "_KEEP_UTF8_MAX", 1 << 14)
    for text in texts:
        assert enc.encode_ordinary(text) == want.encode_ordinary(text)


@pytest.mark.parametrize("limit", [0, 1, 31, 32, 33, 64, 1000])
def test_count_until_stops_inside_and_across_batches(limit):
    """The fused loop takes pieces in batches of 32: count_until must stop at the same
    piece whichever batch the limit falls in, on hits and on misses."""
    enc, want = scantok.get_encoding("o200k_base"), tiktoken_encoding("o200k_base")
    text = load_corpus("en")[:30_000]
    n = len(want.encode_ordinary(text))
    for _ in range(2):  # cold, then every piece a cache hit
        assert enc.count_until(text, limit, disallowed_special=()) == min(n, limit + 1)


def _seed_switch(on: int) -> int:
    from scantok._native import lib

    return lib.bpe_set_piece_seed(on)


def test_piece_seed_switch_reports_previous_and_takes_effect():
    """A thread's new piece cache starts with the vocabulary's tokens of up to 16 bytes
    (seed_pieces), unless turned off: the switch returns the previous setting, and only caches
    made while it is on are seeded, with every such token (270 here: the 256 bytes and 14
    merges, fewer than half the entries)."""
    from scantok._native import lib

    pat = scantok.get_encoding("r50k_base")._pat_str
    text = "abcab babab aaabbb cabab abab"
    assert _seed_switch(0) == 1
    try:
        assert _seed_switch(0) == 0
        before = lib.bpe_piece_seeds()
        scantok.Encoding("unseeded", pat_str=pat, mergeable_ranks=_custom_ranks(1), special_tokens={}).encode_ordinary(text)
        assert lib.bpe_piece_seeds() == before
    finally:
        assert _seed_switch(1) == 0
    before = lib.bpe_piece_seeds()
    scantok.Encoding("seeded", pat_str=pat, mergeable_ranks=_custom_ranks(1), special_tokens={}).encode_ordinary(text)
    assert lib.bpe_piece_seeds() == before + 270


def _random_vocab(rng: random.Random, n: int) -> dict[bytes, int]:
    """Every byte plus n random strings over a few letters, at random ranks: many a token's
    bytes do not merge back into it (its parts are not tokens, or merge another way), and
    tiktoken gives a piece that is a token that token all the same."""
    ranks = {bytes([b]): b for b in range(256)}
    toks = set()
    while len(toks) < n:  # pieces of the test's pattern: a space or not, then letters
        toks.add((rng.choice(["", " "]) + "".join(rng.choice("abc") for _ in range(rng.randint(2, 20)))).encode())
    order = list(toks)
    rng.shuffle(order)
    for r, tok in enumerate(order):
        ranks[tok] = 256 + r
    return ranks


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), n=st.sampled_from([20, 300, 3000]),
       cache_bytes=st.sampled_from([1 << 15, 1 << 17, None]), seeded=st.booleans())
def test_seeded_piece_cache_is_exact(seed, n, cache_bytes, seeded):
    """Vocabularies of random tokens at random ranks (3,000 of them fill more than half of a
    1,024-entry cache, whose seeds are then the lowest ranks only): the ids of text made of
    their tokens and of other words are tiktoken's, with and without the seeds, cold and warm."""
    import tiktoken
    from scantok._native import lib

    rng = random.Random(seed)
    ranks = _random_vocab(rng, n)
    pat = r"\s?[a-c]+|\s+(?!\S)|\s+|[^a-c\s]+"
    toks = [t.decode() for t in ranks if len(t) > 1]
    words = [rng.choice(toks) if rng.random() < 0.6 else "".join(rng.choice("abc") for _ in range(rng.randint(1, 18)))
             for _ in range(400)]
    text = " ".join(words) + " " + "".join(words[:50])
    default = lib.bpe_piece_cache_bytes()
    previous = _seed_switch(int(seeded))
    try:
        if cache_bytes is not None:
            lib.bpe_set_piece_cache_bytes(cache_bytes)
        enc = scantok.Encoding("seeds", pat_str=pat, mergeable_ranks=ranks, special_tokens={})
        ref = tiktoken.Encoding("seeds", pat_str=pat, mergeable_ranks=ranks, special_tokens={})
        want = ref.encode_ordinary(text)
        for _ in range(2):
            same(enc.encode_ordinary(text), want, text)
        for w in words[:40]:
            same(enc.encode_ordinary(w), ref.encode_ordinary(w), w)
    finally:
        _seed_switch(previous)
        lib.bpe_set_piece_cache_bytes(default)


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_unseeded_caches_give_the_same_ids(name):
    """The shipped vocabularies on corpus text: caches made with and without the seeds (each a
    fresh table, so a new cache) give tiktoken's ids, first pass and again."""
    from scantok.registry import _load_encoding

    want_enc = tiktoken_encoding(name)
    texts = [load_corpus(c)[:60_000] for c in ("en", "code", "multi")]
    wants = [want_enc.encode_ordinary(t) for t in texts]
    for on in (0, 1):
        previous = _seed_switch(on)
        try:
            enc = _load_encoding(name)
            for _ in range(2):
                for t, w in zip(texts, wants):
                    same(enc.encode_ordinary(t), w, t)
                    assert enc.encode_ordinary_to_numpy(t).tolist() == w
        finally:
            _seed_switch(previous)
