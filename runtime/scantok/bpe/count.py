"""Piece counting for BPE training: the corpus (files or an iterator of ``str``) pre-tokenized
by a compiled scanner into a C hash table of piece -> count, on threads that run without the GIL.

Files are read in binary chunks cut after a line end, validated as UTF-8 in C and counted line
by line (HF's ``Tokenizer.train(files)`` feeds each line, ``\\n`` included, as one sequence), so
a file is never whole in memory and no piece crosses a line end. Each item of an iterator is one
sequence, as in HF's ``train_from_iterator``.
"""
from __future__ import annotations

import os
from collections import deque
from typing import Callable, Iterable, Iterator

from .._native import ffi, lib
from .errors import InvalidUTF8Error, TrainingInputError

__all__ = ["Counter", "count_files", "count_texts", "read_line_chunks", "CHUNK_BYTES"]

CHUNK_BYTES = 1 << 20  # bytes per counting call (a few are in flight per thread)
_TEXT_BATCH = 1 << 20  # bytes of iterator items per counting call


class Counter:
    """Owns a C piece counter (``bt_counter``)."""

    __slots__ = ("ptr",)

    def __init__(self):
        ptr = lib.bt_counter_new()
        if ptr == ffi.NULL:
            raise MemoryError("out of memory creating a piece counter")
        self.ptr = ffi.gc(ptr, lib.bt_counter_free)

    def release(self) -> None:
        """Frees the C counter now (its pieces are no longer needed once training starts)."""
        ffi.release(self.ptr)

    def __len__(self) -> int:
        return lib.bt_counter_size(self.ptr)

    def merge(self, other: "Counter") -> None:
        if lib.bt_counter_merge(self.ptr, other.ptr):
            raise MemoryError("out of memory merging piece counts")

    def add(self, keys: bytes, lens, counts) -> None:
        """Adds pieces given as (concatenated keys, uint32 lengths, uint64 counts)."""
        n = len(lens)
        if n and lib.bt_counter_add(self.ptr, ffi.from_buffer(keys), ffi.from_buffer("uint32_t[]", lens),
                                    ffi.from_buffer("uint64_t[]", counts), n):
            raise MemoryError("out of memory adding piece counts")

    def dump(self) -> tuple[bytes, "array", "array"]:  # noqa: F821
        """(concatenated keys, uint32 lengths, uint64 counts): picklable, for Dask workers."""
        from array import array

        n = len(self)
        kb = lib.bt_counter_keybytes(self.ptr)
        keys = bytearray(kb)
        lens = array("I", bytes(4 * n))
        counts = array("Q", bytes(8 * n))
        if n:
            lib.bt_counter_dump(self.ptr, ffi.from_buffer(keys), ffi.from_buffer("uint32_t[]", lens),
                                ffi.from_buffer("uint64_t[]", counts))
        return bytes(keys), lens, counts

    def items(self) -> dict[bytes, int]:
        """Every piece and its count (for tests and small corpora)."""
        keys, lens, counts = self.dump()
        out, off = {}, 0
        for ln, c in zip(lens, counts):
            out[keys[off:off + ln]] = c
            off += ln
        return out


def read_line_chunks(path: str | os.PathLike, start: int = 0, stop: int | None = None,
                     chunk: int | None = None) -> Iterator[tuple[int, bytes | memoryview]]:
    """(file offset, data) chunks of the lines that start in [start, stop) of a file, each ending
    after a ``\\n`` (or at the end of the file). A line is never split: a line longer than
    `chunk` makes a longer chunk."""
    chunk = chunk or CHUNK_BYTES
    with open(path, "rb") as f:
        if start:
            # a line that begins before start belongs to the previous range
            f.seek(start - 1)
            if f.read(1) != b"\n":
                f.readline()
        pos = f.tell()
        carry = b""
        while True:
            limit = chunk
            if stop is not None:
                remaining = stop - (pos + len(carry))
                if remaining <= 0:
                    # the last line starting before stop may continue past it
                    if carry:
                        yield pos, carry + (f.readline() if carry[-1:] != b"\n" else b"")
                    return
                limit = min(chunk, remaining)
            block = f.read(limit)
            if not block:
                if carry:
                    yield pos, carry
                return
            data = carry + block if carry else block
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                carry = data
                continue
            yield pos, memoryview(data)[:cut]
            pos += cut
            carry = data[cut:]


def _count_chunk(counter: Counter, dfa, data: bytes, lines: bool) -> int:
    return lib.bt_count(counter.ptr, dfa, ffi.from_buffer(data), len(data), 1 if lines else 0, 1)


def _check(rc: int, where: Callable[[int], Exception]) -> int:
    if rc == -1:
        raise MemoryError("out of memory counting pieces")
    if rc < -1:
        raise where(-(rc + 2))
    return rc


def _run_parallel(jobs: Iterable, work: Callable, num_threads: int, on_done: Callable) -> list[Counter]:
    """Runs work(counter, job) for each job on num_threads threads, each with its own counter;
    at most 2 jobs per thread are in flight (bounded memory). on_done(job, result) runs in
    submission order, so the first error in input order is the one raised."""
    counters = [Counter() for _ in range(num_threads)]
    if num_threads == 1:
        for job in jobs:
            on_done(job, work(counters[0], job))
        return counters
    import threading
    from concurrent.futures import ThreadPoolExecutor

    local = threading.local()
    free = list(counters)
    lock = threading.Lock()

    def run(job):
        c = getattr(local, "counter", None)
        if c is None:
            with lock:
                c = local.counter = free.pop()
        return work(c, job)

    pending: deque = deque()
    with ThreadPoolExecutor(num_threads, thread_name_prefix="scantok-train") as pool:
        try:
            for job in jobs:
                pending.append((job, pool.submit(run, job)))
                while len(pending) > 2 * num_threads:
                    j, fut = pending.popleft()
                    on_done(j, fut.result())
            while pending:
                j, fut = pending.popleft()
                on_done(j, fut.result())
        except BaseException:
            for _, fut in pending:
                fut.cancel()
            raise
    return counters


def _merge_all(counters: list[Counter]) -> Counter:
    counters = sorted(counters, key=len, reverse=True)
    total = counters[0]
    for c in counters[1:]:
        if len(c):
            total.merge(c)
    return total


def count_files(paths: list[str], dfa, *, num_threads: int, progress=None,
                ranges: list[tuple[int, int | None]] | None = None) -> Counter:
    """Counts the pieces of files read line by line (optionally only the lines starting in
    a byte range of each file)."""
    def jobs():
        for i, path in enumerate(paths):
            start, stop = ranges[i] if ranges is not None else (0, None)
            for off, data in read_line_chunks(path, start, stop, CHUNK_BYTES):
                yield path, off, data

    def work(counter, job):
        return _count_chunk(counter, dfa, job[2], True)

    def done(job, rc):
        path, off, data = job
        _check(rc, lambda at: InvalidUTF8Error(os.fspath(path), off + at, bytes(data[at:at + 4])))
        if progress is not None:
            progress(len(data))

    return _merge_all(_run_parallel(jobs(), work, num_threads, done))


def count_texts(texts: Iterable, dfa, *, num_threads: int, progress=None) -> Counter:
    """Counts the pieces of an iterable of ``str`` (or of lists of ``str``, as HF's
    ``train_from_iterator`` accepts), each string one sequence."""
    def items():
        for i, item in enumerate(texts):
            if isinstance(item, str):
                yield i, item
            elif isinstance(item, (list, tuple)) and all(isinstance(s, str) for s in item):
                for s in item:
                    yield i, s
            else:
                raise TrainingInputError(f"training item #{i}: expected str (or a list of str), "
                                         f"not {type(item).__name__}")

    def batches():
        parts: list[bytes] = []
        ends: list[int] = []
        size = 0
        for i, s in items():
            try:
                b = s.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise TrainingInputError(f"training item #{i} is not valid Unicode text: a lone "
                                         f"surrogate at character {exc.start}") from None
            parts.append(b)
            size += len(b)
            ends.append(size)
            if size >= _TEXT_BATCH:
                yield b"".join(parts), ends
                parts, ends, size = [], [], 0
        if parts:
            yield b"".join(parts), ends

    def work(counter, job):
        data, ends = job
        e = ffi.new("uint64_t[]", ends)
        return lib.bt_count_seqs(counter.ptr, dfa, ffi.from_buffer(data), e, len(ends), 0)

    def done(job, rc):
        _check(rc, lambda at: TrainingInputError(f"invalid UTF-8 at {at}"))
        if progress is not None:
            progress(len(job[0]))

    return _merge_all(_run_parallel(batches(), work, num_threads, done))
