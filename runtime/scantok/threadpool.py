"""The threads of scantok's batch calls: how many CPUs this process may use, and one
process-wide pool per thread count, shared by every front-end (tiktoken-compatible
``Encoding``, ``scantok.Tokenizer``).

The pools are kept, not made per call: the C encoders keep their piece caches per thread (see
``csrc/bpe.c`` and ``csrc/hf_bpe.c``), so a thread that lives on keeps what it learnt for the
next call, and starting threads costs more than a small batch."""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from bisect import bisect_left
from itertools import accumulate
from typing import Sequence

__all__ = ["PARALLEL_MIN", "map_all", "size_chunks", "thread_pool", "usable_cpus", "wait_all"]

# A batch of fewer characters than this (tokens, for decode) runs on the calling thread: handing
# work to a pool and waiting for it cost ~60 us here, and 2 threads on 4 KB documents (every
# piece cached, o200k_base) only won from ~256 K characters on: 128 K took 250 us on one
# thread and 322 on two, 256 K 462 and 332; 8 texts of 100 characters 8 and 64 us.
PARALLEL_MIN = 192 << 10

_pools: dict[int, ThreadPoolExecutor] = {}
_pools_lock = threading.Lock()
if hasattr(os, "register_at_fork"):
    # a forked child has none of the parent's threads: it must not wait on their pools
    os.register_at_fork(after_in_child=_pools.clear)


def usable_cpus() -> int:
    """CPUs this process may run on: more threads than that only add per-thread caches (each
    thread learns the pieces again, in caches of its own: ~21 MiB per thread and encoding) and
    switches between them."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def size_chunks(sizes: Sequence[int], n: int) -> list[tuple[int, int]]:
    """(start, stop) of at most n contiguous, non-empty chunks of a batch whose items have
    these sizes (characters), each chunk's total as near total / n as whole items allow.

    Why by size, not by count: a batch sorted by length (as padding-minded callers make them)
    cut into n equal counts gave the last chunk most of the text, and two threads ran
    1.09-1.10x one (DeepSeek V3, 238 texts of 200-16,000 characters).

    >>> size_chunks([1, 1, 1, 1, 4], 2)
    [(0, 4), (4, 5)]
    >>> size_chunks([5], 3)
    [(0, 1)]
    """
    cum = list(accumulate(sizes))
    total = cum[-1] if cum else 0
    stops: list[int] = []
    for j in range(1, n):
        target = total * j / n
        b = bisect_left(cum, target)  # cum[b] is the first running total at or past it
        # the cut before item b or after it, whichever total is nearer its share
        stop = b if b > 0 and target - cum[b - 1] <= (cum[b] if b < len(cum) else total) - target else b + 1
        stop = max(stop, stops[-1] + 1 if stops else 1)
        if stop >= len(sizes):
            break
        stops.append(stop)
    starts = [0] + stops
    return [(a, b) for a, b in zip(starts, stops + [len(sizes)])] if sizes else []


def thread_pool(n: int) -> ThreadPoolExecutor:
    """The process-wide pool of n threads (made on first use)."""
    pool = _pools.get(n)
    if pool is None:
        with _pools_lock:
            pool = _pools.get(n)
            if pool is None:
                pool = _pools[n] = ThreadPoolExecutor(n, thread_name_prefix=f"scantok-batch{n}")
    return pool


def wait_all(futures) -> None:
    """Waits until every future is done, even through an exception raised while waiting (a
    KeyboardInterrupt): the workers read memory the caller frees afterwards. The first such
    exception is raised once they are done; then a worker's own, the first in order."""
    pending = None
    for f in futures:
        while True:
            try:
                f.exception()
                break
            except BaseException as e:  # noqa: BLE001 - re-raised below, after the workers
                if pending is None:
                    pending = e
    if pending is not None:
        raise pending
    for f in futures:
        f.result()  # a worker's error, if any


def map_all(n: int, fn, items) -> list:
    """[fn(x) for x in items] on the pool of n threads, returned (or the first failed item's
    exception raised) only once every call has finished.

    Why not ``Executor.map``: it raises at the first failed result while the other calls still
    run, and their C code reads the tables and per-thread caches of the caller's tokenizer,
    which the caller may then drop or swap (a fuzz campaign crashed in a worker: a batch with a
    lone surrogate in its first chunk raised at once, ``add_tokens`` replaced the model, and the
    model's per-thread caches were freed under the worker still encoding the second chunk).

    >>> map_all(2, lambda x: x * x, [1, 2, 3])
    [1, 4, 9]
    """
    pool = thread_pool(n)
    futures = []
    try:
        for x in items:
            futures.append(pool.submit(fn, x))
    finally:
        wait_all(futures)
    return [f.result() for f in futures]
