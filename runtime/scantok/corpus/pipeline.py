"""``encode_files``: plan the partitions, run them on a local process pool or a Dask
cluster, resume what a killed run left, and finalize the index.

The unit of work is ``encode_partition`` (a top-level function, so a process pool and Dask
run the same code): it reads a partition's documents, encodes them in batches with one C
call per batch (``bpe_encode_many``: GIL released, ids straight into one uint32 buffer that
numpy wraps without a copy), and writes them through a ``PartitionWriter``.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
import time
from dataclasses import asdict, dataclass, field as dc_field
from typing import Any, Callable

import numpy as np

from .. import Encoding
from ..encoding import _check_rc, _utf8
from .._native import ffi, lib
from . import readers, writer
from .errors import CorpusError, CorpusInputError, CorpusStateError
from .partition import plan_partitions, scan_inputs
from .progress import Progress, ProgressBar

__all__ = ["encode_files", "encode_partition", "EncodeReport"]

DEFAULT_SHARD_BYTES = 1 << 28  # 256 MiB of tokens per shard file at most
DEFAULT_PARTITION_BYTES = 1 << 25  # 32 MiB of input per partition
BATCH_BYTES = 1 << 22  # UTF-8 per bpe_encode_many call
MAX_EXAMPLES = 20  # skipped documents named per partition


@dataclass
class EncodeReport:
    """What ``encode_files`` did: totals of the corpus, and how much of it this run made."""

    out_dir: str
    documents: int
    tokens: int
    skipped: int
    skipped_examples: list = dc_field(default_factory=list)
    input_bytes: int = 0
    partitions: int = 0
    partitions_resumed: int = 0  # complete before this run started
    seconds: float = 0.0


# --------------------------------------------------------------------------- encoding


def _resolve_encoding(encoding) -> tuple[Encoding, Any, str]:
    """(the Encoding, what to send workers, fingerprint). Registered encodings travel by
    name; a custom one travels pickled (its table)."""
    from .. import registry

    if isinstance(encoding, str):
        enc = registry.get_encoding(encoding)
    elif isinstance(encoding, Encoding):
        enc = encoding
    else:
        raise TypeError(f"encoding must be an encoding name or a scantok.Encoding, got {type(encoding).__name__}")
    if registry._is_registered(enc):
        # a registered encoding's rank file is SHA-256 pinned: its name says everything
        return enc, enc.name, f"registered:{enc.name}"
    cached = _fingerprints.get(id(enc))
    if cached is None or cached[0] is not enc:
        h = hashlib.sha256()
        h.update(enc._pat_str.encode("utf-8", "surrogatepass"))
        h.update(enc._rank_table.raw)
        h.update(json.dumps(sorted(enc._special_tokens.items())).encode())
        cached = _fingerprints[id(enc)] = (enc, h.hexdigest()[:32])
    return enc, enc, cached[1]


_fingerprints: dict[int, tuple[Encoding, str]] = {}  # id -> (the encoding, kept alive; its hash)


_worker_encodings: dict[str, Encoding] = {}


def _job_encoding(job: dict) -> Encoding:
    enc = _worker_encodings.get(job["fingerprint"])
    if enc is None:
        spec = job["encoding"]
        if isinstance(spec, str):
            from .. import registry

            spec = registry.get_encoding(spec)
        enc = _worker_encodings[job["fingerprint"]] = spec
    return enc


def _encode_batch(enc: Encoding, data, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(ids, lengths) of the documents data[ends[i-1]:ends[i]] (UTF-8), each as
    encode_ordinary gives them, in one C call."""
    n = len(ends)
    cdata = ffi.from_buffer(data)  # alive until the call returns
    starts = np.concatenate(([0], ends[:-1])).astype(np.uint64)
    ptrs = starts + np.uint64(int(ffi.cast("uintptr_t", cdata)))
    lens = (ends.astype(np.uint64) - starts).astype(f"u{ffi.sizeof('size_t')}")
    out_ends = ffi.new("size_t[]", n)
    buf = ffi.new("bpe_buf *")
    rc = lib.bpe_encode_many(enc._t, enc._dfa, ffi.cast("const uint8_t *const *", ffi.from_buffer(ptrs)),
                             ffi.cast("size_t *", ffi.from_buffer(lens)), n, 0, buf, out_ends, ffi.NULL)
    if rc:
        lib.bpe_buf_free(buf)
        _check_rc(rc)
    total = buf.len
    if total:
        owner = ffi.gc(buf.ids, lib.bpe_free)  # the array owns the C buffer
        ids = np.frombuffer(ffi.buffer(owner, 4 * total), dtype=np.uint32)
    else:
        lib.bpe_buf_free(buf)
        ids = np.empty(0, dtype=np.uint32)
    ends_np = np.frombuffer(ffi.buffer(out_ends, ffi.sizeof("size_t") * n), dtype=f"u{ffi.sizeof('size_t')}")
    return ids, np.diff(ends_np.astype(np.int64), prepend=0)


# --------------------------------------------------------------------------- one partition

_tick: Callable | None = None  # set in pool workers (a queue) and for in-process runs


_busy = threading.Lock()  # held by a pool worker while it encodes a partition


def _exit_when_orphaned(parent: int) -> None:
    """A pool worker whose parent died (killed) finishes the partition in hand, which commits
    atomically, and exits: nothing will send it more work, and it used to wait for ever."""
    while os.getppid() == parent:
        time.sleep(0.5)
    with _busy:
        os._exit(0)


def _init_worker(queue, lock_fd: int | None = None) -> None:
    global _tick
    _tick = queue.put
    if lock_fd is not None:
        # a forked worker must not hold the directory's lock: once the run is killed, a
        # restarted one may begin at once (workers that outlive it only ever finish a
        # partition atomically, with the bytes the restarted run would write)
        os.close(lock_fd)
    threading.Thread(target=_exit_when_orphaned, args=(os.getppid(),), daemon=True,
                     name="scantok-orphan-watch").start()


def _encode_partition_in_worker(out_dir: str, part: dict, job: dict) -> dict:
    with _busy:
        return encode_partition(out_dir, part, job)


def encode_partition(out_dir: str, part: dict, job: dict) -> dict:
    """Encodes one partition of the plan into ``parts/<index>/`` and returns its counts.
    Idempotent: a partition already complete is not redone."""
    final = writer.part_dir(out_dir, part["index"])
    if os.path.exists(os.path.join(final, "part.json")):
        return writer.read_json(os.path.join(final, "part.json"))
    enc = _job_encoding(job)
    files = job["files"]
    strict = job["errors"] == "strict"
    eot = job["append_eot"]
    w = writer.PartitionWriter(out_dir, part["index"], np.dtype(job["dtype"]), job["shard_bytes"])
    skipped = [0]
    examples: list = []
    seg_meta: list = []
    pending = _Pending()

    def flush():
        if not pending.count:
            return
        data, ends, segs, lines = pending.take()
        ids, lengths = _encode_batch(enc, data, ends)
        if eot is not None:
            ids = np.insert(ids, np.cumsum(lengths), np.uint32(eot))
            lengths = lengths + 1
        w.write_batch(ids, lengths, segs, lines)
        if _tick is not None:
            _tick((part["index"], len(lengths), int(lengths.sum()), len(data)))

    try:
        for k, seg in enumerate(part["segments"]):
            f = files[seg["file"]]
            kind = f["kind"]

            def bad(line, reason, f=f, seg=seg, kind=kind, k=k):
                if strict:
                    raise CorpusInputError(f["path"], _global_line(f, seg, line), reason,
                                           kind="row" if kind == "parquet" else "line")
                skipped[0] += 1
                if len(examples) < MAX_EXAMPLES:
                    examples.append([k, line, reason])

            counter = [0]
            if kind == "jsonl":
                for batch in readers.jsonl_batches(f["path"], f["compression"], seg["start"], seg["end"],
                                                   job["field"], bad, counter):
                    pending.add_batch(batch, k)
                    if pending.nbytes >= BATCH_BYTES:
                        flush()
                seg_meta.append({"lines": counter[0]})
                continue
            if kind == "parquet":
                docs = readers.parquet_documents(f["path"], seg["row_group"], seg["first_row"], job["field"], bad)
            else:
                docs = readers.text_document(f["path"], f["compression"], f["size"], bad)
            for line, text in docs:
                if isinstance(text, readers.LargeText):
                    flush()
                    chunks = (np.asarray(c, dtype=np.uint32) for c in
                              enc.encode_ordinary_stream(text.chunks(), errors="strict"))
                    if eot is not None:
                        chunks = _then(chunks, np.array([eot], dtype=np.uint32))
                    w.write_stream(chunks, f["size"] + (eot is not None), k, line)
                    continue
                pending.add_text(_utf8(text), k, line)
                if pending.nbytes >= BATCH_BYTES:
                    flush()
            seg_meta.append({"lines": 0})
        flush()
        return w.commit({"segments": seg_meta, "skipped": skipped[0], "skipped_examples": examples,
                         "nbytes": sum(s["nbytes"] for s in part["segments"])}, megatron=job["megatron"])
    except BaseException:
        w.abort()
        raise


class _Pending:
    """Documents waiting for the next encoder call: whole batches (JSON Lines blocks) and
    single texts, kept in order."""

    def __init__(self):
        self.parts: list = []  # (data, ends, segment, lines)
        self.texts: list[bytes] = []
        self.text_segs: list[int] = []
        self.text_lines: list[int] = []
        self.nbytes = 0
        self.count = 0

    def _close_texts(self) -> None:
        if self.texts:
            ends = np.cumsum([len(t) for t in self.texts], dtype=np.int64)
            self.parts.append((b"".join(self.texts), ends, np.asarray(self.text_segs, dtype=np.int64),
                               np.asarray(self.text_lines, dtype=np.int64)))
            self.texts, self.text_segs, self.text_lines = [], [], []

    def add_text(self, data: bytes, seg: int, line: int) -> None:
        self.texts.append(data)
        self.text_segs.append(seg)
        self.text_lines.append(line)
        self.nbytes += len(data)
        self.count += 1

    def add_batch(self, batch, seg: int) -> None:
        if not len(batch.ends):
            return
        self._close_texts()
        self.parts.append((batch.data, batch.ends, np.full(len(batch.ends), seg, dtype=np.int64), batch.lines))
        self.nbytes += len(batch.data)
        self.count += len(batch.ends)

    def take(self):
        """(data, ends, segments, lines) of everything pending, emptied."""
        self._close_texts()
        parts, self.parts = self.parts, []
        self.nbytes = self.count = 0
        if len(parts) == 1:
            return parts[0]
        offsets = np.cumsum([0] + [len(p[0]) for p in parts[:-1]], dtype=np.int64)
        return (b"".join(p[0] for p in parts), np.concatenate([p[1] + o for p, o in zip(parts, offsets)]),
                np.concatenate([p[2] for p in parts]), np.concatenate([p[3] for p in parts]))


def _then(chunks, last):
    yield from chunks
    yield last


def _global_line(f: dict, seg: dict, line: int) -> int:
    """The line number in the file of a line counted from the segment's start."""
    if f["kind"] == "jsonl" and seg["start"]:
        return readers.count_lines_before(f["path"], seg["start"], f["compression"]) + line
    return line


# --------------------------------------------------------------------------- the run


def _lock(out_dir: str):
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock
        return None
    fd = os.open(os.path.join(out_dir, ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise CorpusStateError(f"{out_dir}: another run is writing this shard directory") from None
    return fd


_OURS = {".lock", "manifest.json", "corpus.json", "index.bin", "parts"}


def _clear(out_dir: str) -> None:
    import shutil

    for name in ("corpus.json", "index.bin", "manifest.json"):
        p = os.path.join(out_dir, name)
        if os.path.exists(p):
            os.unlink(p)
    shutil.rmtree(os.path.join(out_dir, "parts"), ignore_errors=True)


def _differences(old: dict, new: dict) -> str:
    diffs = []
    if old.get("params") != new["params"]:
        for k in sorted(set(old.get("params", {})) | set(new["params"])):
            if old.get("params", {}).get(k) != new["params"].get(k):
                diffs.append(f"{k}: {old.get('params', {}).get(k)!r} -> {new['params'].get(k)!r}")
    if old.get("inputs") != new["inputs"]:
        diffs.append("the input files (paths, sizes or modification times) differ")
    return "; ".join(diffs) or "format version"


def encode_files(
    paths,
    out_dir,
    *,
    encoding,
    field: str = "text",
    scheduler=None,
    num_workers: int | None = None,
    append_eot: bool | int = False,
    dtype=None,
    shard_bytes: int = DEFAULT_SHARD_BYTES,
    partition_bytes: int = DEFAULT_PARTITION_BYTES,
    errors: str = "strict",
    progress=None,
    megatron: bool = False,
    overwrite: bool = False,
) -> EncodeReport:
    """Encodes documents from files into token shards in ``out_dir`` (see the README's
    "Corpus pipeline" for the format), resuming a run that was interrupted.

    ``paths``: JSON Lines (text in ``field``), Parquet (column ``field``) or text files
    (one document each), possibly ``.gz``/``.zst``. ``encoding``: a name or an Encoding;
    documents are encoded as ``encode_ordinary`` does (special-token text is text), plus the
    end-of-text id (``append_eot=True``, or the id given) after each. ``dtype``: uint16 when
    every id fits, else uint32. ``scheduler``: None for a process pool of ``num_workers``
    (default: every core), or a ``dask.distributed.Client`` (or its address); the output is
    the same. ``errors``: "strict" raises CorpusInputError at the first bad document,
    "skip" leaves bad documents out and counts them. ``megatron=True`` also writes a
    Megatron-LM ``.idx`` beside each shard, so every shard is an indexed dataset.

    >>> import json, os, tempfile, scantok.corpus
    >>> d = tempfile.mkdtemp()
    >>> with open(os.path.join(d, "a.jsonl"), "w") as f:
    ...     _ = f.write(json.dumps({"text": "hello world"}) + "\\n" + json.dumps({"text": "bye"}) + "\\n")
    >>> report = scantok.corpus.encode_files([os.path.join(d, "a.jsonl")], os.path.join(d, "out"),
    ...                                      encoding="o200k_base", num_workers=1)
    >>> report.documents, report.tokens
    (2, 3)
    """
    t0 = time.monotonic()
    if errors not in ("strict", "skip"):
        raise ValueError(f"errors must be 'strict' or 'skip', got {errors!r}")
    if shard_bytes < 1:
        raise ValueError("shard_bytes must be >= 1")
    if not isinstance(field, str):  # (it had been an AttributeError deep in a reader)
        raise TypeError(f"field must be a str, not {type(field).__name__}")
    if num_workers is not None and (isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 1):
        raise ValueError(f"num_workers must be None or an int >= 1, got {num_workers!r}")
    enc, spec, fingerprint = _resolve_encoding(encoding)
    eot = _eot_id(enc, append_eot)
    dtype = _dtype(enc, dtype, eot)
    files = scan_inputs(paths)
    out_dir = os.path.abspath(os.fspath(out_dir))
    os.makedirs(out_dir, exist_ok=True)
    lock = _lock(out_dir)
    try:
        key = json.loads(json.dumps({
            "format": writer.FORMAT, "version": writer.VERSION,
            "inputs": [asdict(f) for f in files],
            "params": {"encoding": enc.name, "encoding_fingerprint": fingerprint, "n_vocab": enc.n_vocab,
                       "field": field, "dtype": dtype, "append_eot": eot, "shard_bytes": shard_bytes,
                       "partition_bytes": partition_bytes, "errors": errors, "megatron": bool(megatron)},
        }))
        manifest_path = os.path.join(out_dir, "manifest.json")
        writer.clean_tmp(out_dir)
        plan = None
        if os.path.exists(manifest_path):
            old = writer.read_json(manifest_path)
            if old.get("key") == key:
                plan = old["plan"]
            elif overwrite:
                _clear(out_dir)
            else:
                raise CorpusStateError(f"{out_dir} holds shards of another run ({_differences(old.get('key', {}), key)}): "
                                       "use another directory, or overwrite=True (--overwrite)")
        else:
            foreign = sorted(set(os.listdir(out_dir)) - _OURS)
            if foreign and not overwrite:
                raise CorpusStateError(f"{out_dir} is not empty and not a scantok shard directory ({', '.join(foreign[:3])}...)")
            _clear(out_dir)
        if plan is None:
            plan = [p.to_json() for p in plan_partitions(files, partition_bytes, field)]
            writer.write_json_atomic(manifest_path, {"key": key, "plan": plan})
        job = {"files": key["inputs"], "field": field, "errors": errors, "dtype": dtype, "append_eot": eot,
               "shard_bytes": shard_bytes, "encoding": spec, "fingerprint": fingerprint, "megatron": bool(megatron)}
        done = {p["index"] for p in plan if os.path.exists(os.path.join(writer.part_dir(out_dir, p["index"]), "part.json"))}
        pending = [p for p in plan if p["index"] not in done]
        tracker = _Tracker(plan, done, progress, t0)
        try:
            if pending:
                if scheduler is None:
                    _run_local(out_dir, pending, job, num_workers, tracker, lock)
                else:
                    _run_dask(scheduler, out_dir, pending, job, tracker)
        finally:
            tracker.close()
        # what writers that were still alive at the start (killed, not yet gone) left behind
        writer.clean_tmp(out_dir)
        corpus_path = os.path.join(out_dir, "corpus.json")
        if pending or not os.path.exists(corpus_path) or not os.path.exists(os.path.join(out_dir, "index.bin")):
            metas = [writer.read_json(os.path.join(writer.part_dir(out_dir, p["index"]), "part.json")) for p in plan]
            summary = {"encoding": enc.name, "encoding_fingerprint": fingerprint, "n_vocab": enc.n_vocab,
                       "dtype": dtype, "append_eot": eot, "field": field, "errors": errors,
                       "megatron": bool(megatron), "inputs": key["inputs"]}
            corpus = writer.finalize(out_dir, summary, key["inputs"], plan, metas)
        else:
            corpus = writer.read_json(corpus_path)
    finally:
        if lock is not None:
            os.close(lock)
    return EncodeReport(out_dir=out_dir, documents=corpus["documents"], tokens=corpus["tokens"],
                        skipped=corpus["skipped"], skipped_examples=corpus["skipped_examples"],
                        input_bytes=sum(f.size for f in files), partitions=len(plan),
                        partitions_resumed=len(done), seconds=time.monotonic() - t0)


def _eot_id(enc: Encoding, append_eot) -> int | None:
    if append_eot is False or append_eot is None:
        return None
    if append_eot is True:
        try:
            return enc.eot_token
        except KeyError:
            raise ValueError(f"encoding {enc.name!r} has no <|endoftext|>: give the id to append (append_eot=ID)") from None
    if isinstance(append_eot, int) and 0 <= append_eot < 2**32:
        return append_eot
    raise ValueError(f"append_eot must be a bool or a token id, got {append_eot!r}")


def _dtype(enc: Encoding, dtype, eot: int | None) -> str:
    top = max(enc.n_vocab - 1, eot if eot is not None else 0)
    if dtype is None:
        return "uint16" if top < 2**16 else "uint32"
    name = np.dtype(dtype).name
    if name not in ("uint16", "uint32"):
        raise ValueError(f"dtype must be uint16 or uint32, got {name}")
    if name == "uint16" and top >= 2**16:
        raise ValueError(f"dtype uint16 cannot hold the ids of {enc.name!r} (up to {top})")
    return name


class _Tracker:
    """Counts progress from worker ticks and finished partitions; calls ``progress``."""

    def __init__(self, plan: list[dict], done: set, progress, t0: float):
        self.nbytes = {p["index"]: sum(s["nbytes"] for s in p["segments"]) for p in plan}
        self.total = sum(self.nbytes.values())
        self.parts = len(plan)
        self.finished = len(done)
        self.bytes_finished = sum(self.nbytes[i] for i in done)
        self.in_flight: dict[int, int] = {}
        self.documents = self.tokens = 0
        self.t0 = time.monotonic()
        self.bar = None
        if progress is True:
            self.bar = progress = ProgressBar()
        self.callback = progress or None
        self.lock = threading.Lock()

    def tick(self, item) -> None:
        index, docs, tokens, chars = item
        with self.lock:
            self.documents += docs
            self.tokens += tokens
            self.in_flight[index] = min(self.nbytes[index], self.in_flight.get(index, 0) + chars)
        self._report()

    def partition_done(self, index: int, meta: dict, ticked: bool) -> None:
        with self.lock:
            self.in_flight.pop(index, None)
            self.finished += 1
            self.bytes_finished += self.nbytes[index]
            if not ticked:
                self.documents += meta["documents"]
                self.tokens += meta["tokens"]
        self._report()

    def _report(self) -> None:
        if self.callback is None:
            return
        with self.lock:
            p = Progress(self.bytes_finished + sum(self.in_flight.values()), self.total, self.documents,
                         self.tokens, self.finished, self.parts, time.monotonic() - self.t0)
        self.callback(p)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _run_local(out_dir: str, pending: list[dict], job: dict, num_workers: int | None, tracker: _Tracker,
               lock_fd: int | None = None) -> None:
    global _tick
    n = num_workers or os.cpu_count() or 1
    n = max(1, min(n, len(pending)))
    if n == 1:
        _tick = tracker.tick
        try:
            for p in pending:
                tracker.partition_done(p["index"], encode_partition(out_dir, p, job), True)
        finally:
            _tick = None
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    # fork where it is safe (Linux): workers start in milliseconds and a script that calls
    # encode_files needs no `if __name__ == "__main__"` guard; spawn elsewhere
    ctx = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    queue = ctx.Queue()
    drain = threading.Thread(target=_drain, args=(queue, tracker), daemon=True)
    forked = ctx.get_start_method() == "fork"
    pool = ProcessPoolExecutor(max_workers=n, mp_context=ctx, initializer=_init_worker,
                               initargs=(queue, lock_fd if forked else None))
    try:
        # with fork every worker starts at the first submit, before this process starts the
        # thread that reads their progress (no fork of a process running extra threads)
        futures = {pool.submit(_encode_partition_in_worker, out_dir, p, job): p["index"] for p in pending}
        drain.start()
        for fut in as_completed(futures):
            try:
                meta = fut.result()
            except BrokenProcessPool:
                raise CorpusError("a worker process died (out of memory or killed?); run again to resume") from None
            tracker.partition_done(futures[fut], meta, True)
    except BaseException:
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    else:
        pool.shutdown(wait=True)
    finally:
        queue.put(None)
        if drain.is_alive():
            drain.join()
        queue.close()


def _drain(queue, tracker: _Tracker) -> None:
    while True:
        item = queue.get()
        if item is None:
            return
        tracker.tick(item)


def _run_dask(scheduler, out_dir: str, pending: list[dict], job: dict, tracker: _Tracker) -> None:
    try:
        from dask.distributed import Client, as_completed
    except ImportError:
        raise CorpusError("scheduler= needs dask.distributed: pip install 'scantok[dask]'") from None
    own = None
    client = scheduler
    if isinstance(scheduler, str):
        client = own = Client(scheduler)
    try:
        key = f"scantok-corpus-{job['fingerprint'][:8]}-{os.getpid()}-{time.monotonic_ns()}"
        futures = [client.submit(encode_partition, out_dir, p, job, key=f"{key}-{p['index']:05d}", pure=False)
                   for p in pending]
        index_of = {f.key: p["index"] for f, p in zip(futures, pending)}
        try:
            for fut in as_completed(futures):
                tracker.partition_done(index_of[fut.key], fut.result(), False)
        except BaseException:
            client.cancel(futures)
            raise
    finally:
        if own is not None:
            own.close()
