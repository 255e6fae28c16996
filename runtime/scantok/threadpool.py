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

__all__ = ["PARALLEL_MIN", "thread_pool", "usable_cpus"]

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


def thread_pool(n: int) -> ThreadPoolExecutor:
    """The process-wide pool of n threads (made on first use)."""
    pool = _pools.get(n)
    if pool is None:
        with _pools_lock:
            pool = _pools.get(n)
            if pool is None:
                pool = _pools[n] = ThreadPoolExecutor(n, thread_name_prefix=f"scantok-batch{n}")
    return pool
