"""Piece counting on a Dask cluster (``train_bpe(..., scheduler=client)``): files are split into
byte ranges at line boundaries, each worker counts the lines that start in its range and
returns the piece counts (concatenated keys, lengths, counts), and the driver adds them up and
runs the merge loop. The counts, hence the merges, equal the local trainer's.

Needs ``dask.distributed`` (``pip install scantok[dask]``) on the driver and the workers, and
the files at the same paths on every worker (a shared file system).
"""
from __future__ import annotations

import os
from typing import Any, Iterable

from .count import Counter, count_files, count_texts
from .errors import TrainingInputError

__all__ = ["count_on_cluster", "split_ranges", "RANGE_BYTES"]

RANGE_BYTES = 64 << 20  # target bytes per task


def split_ranges(paths: list[str], n_workers: int) -> list[tuple[str, int, int]]:
    """(path, start, stop) tasks: about RANGE_BYTES each, and at least a few per worker.
    Each task counts the lines that start in [start, stop)."""
    total = sum(os.path.getsize(p) for p in paths)
    size = max(1 << 16, min(RANGE_BYTES, total // max(1, 4 * n_workers) + 1))
    tasks = []
    for p in paths:
        n = os.path.getsize(p)
        for start in range(0, max(n, 1), size):
            tasks.append((p, start, min(start + size, n)))
    return tasks


def _count_range(task: tuple[str, int, int], scanner_name: str):
    from ..scanner import scanner

    path, start, stop = task
    c = count_files([path], scanner(scanner_name)._dfa, num_threads=1, ranges=[(start, stop)])
    return c.dump()


def _count_texts(texts: list[str], scanner_name: str):
    from ..scanner import scanner

    return count_texts(texts, scanner(scanner_name)._dfa, num_threads=1).dump()


def _text_batches(texts: Iterable, batch_bytes: int) -> Iterable[list]:
    batch: list = []
    size = 0
    for i, t in enumerate(texts):
        if isinstance(t, str):
            size += len(t)
        elif isinstance(t, (list, tuple)) and all(isinstance(s, str) for s in t):
            size += sum(map(len, t))
        else:
            raise TrainingInputError(f"training item #{i}: expected str (or a list of str), "
                                     f"not {type(t).__name__}")
        batch.append(t)
        if size >= batch_bytes:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def count_on_cluster(client: Any, files: list[str] | None, texts: Any, scanner_name: str,
                     *, progress=None) -> Counter:
    """Counts pieces on the cluster behind `client` (a ``dask.distributed.Client``)."""
    try:
        from distributed import as_completed
    except ImportError as exc:  # pragma: no cover - scheduler given without dask installed
        raise ImportError("scheduler= needs dask.distributed: pip install 'scantok[dask]'") from exc
    n_workers = max(1, len(client.scheduler_info().get("workers", {})))
    if files is not None:
        tasks = split_ranges(files, n_workers)
        futures = client.map(_count_range, tasks, scanner_name=scanner_name, pure=False)
        sizes = {f.key: t[2] - t[1] for f, t in zip(futures, tasks)}
    else:
        futures, sizes = [], {}
        for batch in _text_batches(texts, 8 << 20):
            f = client.submit(_count_texts, batch, scanner_name, pure=False)
            futures.append(f)
            sizes[f.key] = sum(len(s) for s in batch if isinstance(s, str))
    total = Counter()
    try:
        for fut in as_completed(futures):
            total.add(*fut.result())
            if progress is not None:
                progress(sizes.get(fut.key, 0))
            fut.release()
    except BaseException:
        for f in futures:
            f.cancel()
        raise
    return total
