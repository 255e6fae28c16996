"""scantok.threadpool: how a batch is cut into the chunks its threads take, and that a batch
returns or raises only once every chunk is done."""
from __future__ import annotations

import json
import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scantok.threadpool import map_all, size_chunks, usable_cpus


@pytest.mark.parametrize("sizes, n, want", [
    ([], 2, []),
    ([5], 3, [(0, 1)]),
    ([1, 1, 1, 1, 4], 2, [(0, 4), (4, 5)]),
    ([1, 1, 1, 100], 2, [(0, 3), (3, 4)]),    # a large last item: its own chunk
    ([100, 1, 1, 1], 2, [(0, 1), (1, 4)]),
    ([3, 3], 4, [(0, 1), (1, 2)]),             # fewer items than chunks
    ([0, 0, 0], 2, [(0, 1), (1, 3)]),          # no characters: still every item, none empty
    ([1] * 10, 1, [(0, 10)]),
])
def test_size_chunks_examples(sizes, n, want):
    assert size_chunks(sizes, n) == want


@settings(max_examples=500, deadline=None)
@given(st.lists(st.integers(0, 20_000), max_size=60), st.integers(1, 9))
def test_size_chunks_cover_in_order_and_balance(sizes, n):
    """Contiguous, non-empty chunks covering every item in order, at most n, and none holding
    more than its share of the characters by more than two items' worth (count-based chunks
    of a batch sorted by length put most of it in the last one)."""
    chunks = size_chunks(sizes, n)
    if not sizes:
        assert chunks == []
        return
    assert 1 <= len(chunks) <= n
    assert chunks[0][0] == 0 and chunks[-1][1] == len(sizes)
    assert all(a < b for a, b in chunks)
    assert all(chunks[i][1] == chunks[i + 1][0] for i in range(len(chunks) - 1))
    total, big = sum(sizes), max(sizes)
    assert max(sum(sizes[a:b]) for a, b in chunks) <= total / n + 2 * big


def test_size_chunks_sorted_batch_halves():
    """A batch sorted by length (200 to ~16,000 characters) on two threads: each chunk holds
    about half the characters (by count, the second held 94 %)."""
    sizes, size = [], 200
    while sum(sizes) < 2_000_000:
        sizes.append(size)
        size = min(int(size * 1.03) + 1, 16_000)
    (a0, b0), (a1, b1) = size_chunks(sizes, 2)
    first, second = sum(sizes[a0:b0]), sum(sizes[a1:b1])
    assert abs(first - second) <= max(sizes)


def test_map_all_raises_only_once_every_call_is_done():
    """Executor.map raised at the first failed result while the others ran on: their C code
    read the caller's tables, which the caller could free next."""
    done = threading.Event()

    def work(i):
        if i == 0:
            raise ValueError("first")
        time.sleep(0.3)
        done.set()
        return i

    with pytest.raises(ValueError, match="first"):
        map_all(2, work, [0, 1])
    assert done.is_set()
    assert map_all(2, lambda x: -x, range(5)) == [0, -1, -2, -3, -4]


@pytest.mark.skipif(usable_cpus() < 2, reason="one CPU: batches run on the calling thread")
def test_batch_that_raises_waits_for_its_other_chunks():
    """A batch whose first chunk fails at once (a lone surrogate) and whose second is still
    encoding: encode_batch raises only after the second is done (a fuzz campaign crashed when
    add_tokens, right after such a batch, freed the model's per-thread caches under it)."""
    pytest.importorskip("numpy")
    import scantok

    tok = scantok.Tokenizer.from_str(json.dumps({
        "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "x": 3, "y": 4}, "merges": ["a b"]},
        "pre_tokenizer": {"type": "Whitespace"}}))
    finished = []
    encode_many = tok._encode_many

    def slow_many(texts, add):
        if texts and texts[0].startswith("SLOW"):
            time.sleep(0.3)
            out = encode_many(texts, add)
            finished.append(len(texts))
            return out
        return encode_many(texts, add)

    tok._encode_many = slow_many
    with pytest.raises(UnicodeEncodeError):
        tok.encode_batch(["\ud800" + "ab " * 70_000, "SLOW " + "ab " * 70_000], num_threads=2)
    assert finished == [1]
    tok.add_tokens(["zz"])  # the swap the crash followed
    assert tok.encode_batch(["ab zz"], num_threads=2)[0].tokens == ["ab", "zz"]
