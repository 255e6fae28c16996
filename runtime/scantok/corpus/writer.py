"""The shard directory on disk: atomic per-partition output, the manifest that makes a run
resumable, and the final index and summary.

Layout of ``out_dir`` (all integers little-endian)::

    manifest.json        the inputs (path, size, mtime), the parameters and the plan;
                         written before any work, the key a restarted run must match
    parts/00000/         one directory per partition, renamed into place when complete
        000.bin          token ids, raw dtype (uint16 or uint32), documents back to back;
        001.bin          ... a new shard when the next document would pass shard_bytes
        000.idx          with megatron=True: Megatron-LM's index of 000.bin
        docs.bin         int64 rows (shard in partition, offset, length, segment, line)
        part.json        counts of the partition (documents, tokens, lines, skipped)
    index.bin            int64 rows (shard, offset, length, file, line), one per document
    corpus.json          the summary, written last: shards in order, totals, inputs

A partition is built in ``parts/00000.tmp-*`` and renamed to its final name when complete,
so nothing is under a final name before it is whole; ``corpus.json`` exists only once every
partition and ``index.bin`` are. Writes are not fsync'ed: a killed process loses nothing
finished, a power cut may.
"""
from __future__ import annotations

import json
import os
import shutil
import uuid
from typing import Iterable

import numpy as np

__all__ = ["PartitionWriter", "write_json_atomic", "read_json", "part_dir", "finalize",
           "INDEX_COLUMNS", "clean_tmp", "FORMAT", "VERSION", "write_megatron_idx"]

FORMAT = "scantok-corpus"
VERSION = 1
INDEX_COLUMNS = ("shard", "offset", "length", "file", "line")
_ROW = np.dtype("<i8")


def part_dir(out_dir: str, index: int) -> str:
    return os.path.join(out_dir, "parts", f"{index:05d}")


def write_json_atomic(path: str, obj) -> None:
    tmp = f"{path}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=1, sort_keys=True, ensure_ascii=False)
        f.write("\n")
    os.replace(tmp, path)


def read_json(path: str):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _writer_alive(name: str) -> bool:
    """Whether the process that names a ``*.tmp-<pid>-<hex>`` entry is still running on this
    host: a worker orphaned by a killed parent may still be writing (and then committing) it,
    and removing the files under it would let it commit a partition without them."""
    try:
        pid = int(name.split(".tmp-", 1)[1].split("-", 1)[0])
    except (IndexError, ValueError):
        return False
    if pid == os.getpid() or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    try:  # a killed worker whose parent died too may stay a zombie that nobody reaps
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
        return state not in (b"Z", b"X")
    except (OSError, IndexError):
        return True  # no /proc: the signal said it exists


def clean_tmp(out_dir: str) -> None:
    """Removes what killed runs left half-written (``*.tmp-*`` files and directories), except
    what a process of this host that is still running is writing (an orphaned worker of a
    killed run: it commits atomically, or the next run removes its leftovers)."""
    for d in (out_dir, os.path.join(out_dir, "parts")):
        if not os.path.isdir(d):
            continue
        for name in os.listdir(d):
            if ".tmp-" in name and not _writer_alive(name):
                p = os.path.join(d, name)
                if os.path.isdir(p):
                    shutil.rmtree(p, ignore_errors=True)
                else:
                    try:
                        os.unlink(p)
                    except FileNotFoundError:
                        pass


class PartitionWriter:
    """Writes one partition's shards and document rows into a temporary directory;
    ``commit`` renames it into place."""

    def __init__(self, out_dir: str, index: int, dtype: np.dtype, shard_bytes: int):
        self.final = part_dir(out_dir, index)
        self.tmp = f"{self.final}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        os.makedirs(self.tmp)
        self.dtype = np.dtype(dtype).newbyteorder("<")
        self.capacity = max(1, shard_bytes // self.dtype.itemsize)  # tokens per shard
        self.shard_tokens: list[int] = []
        self.shard_docs: list[int] = []
        self._shard = None
        self._docs = open(os.path.join(self.tmp, "docs.bin"), "wb")
        self.documents = 0
        self.tokens = 0
        self._roll()

    def _roll(self) -> None:
        if self._shard is not None:
            self._shard.close()
        self._shard = open(os.path.join(self.tmp, f"{len(self.shard_tokens):03d}.bin"), "wb")
        self.shard_tokens.append(0)
        self.shard_docs.append(0)

    def write_batch(self, ids: np.ndarray, lengths: np.ndarray, segments: np.ndarray, lines: np.ndarray) -> None:
        """Appends documents given back to back in ``ids`` (their ``lengths``); a document
        never straddles two shards (one longer than a shard gets a shard of its own)."""
        ids = ids.astype(self.dtype, copy=False)
        n = len(lengths)
        ends = np.cumsum(lengths, dtype=np.int64)
        done = 0  # documents written
        pos = 0  # their tokens
        rows = []
        while done < n:
            used = self.shard_tokens[-1]
            fit = int(np.searchsorted(ends[done:] - pos, self.capacity - used, side="right"))
            if fit == 0:
                if used:
                    self._roll()
                    continue
                fit = 1  # a document larger than a shard: alone in its shard
            end = int(ends[done + fit - 1])
            self._shard.write(memoryview(ids[pos:end]).cast("B"))
            offsets = used + np.concatenate(([0], ends[done:done + fit - 1] - pos))
            rows.append(np.column_stack((
                np.full(fit, len(self.shard_tokens) - 1), offsets, lengths[done:done + fit],
                segments[done:done + fit], lines[done:done + fit])))
            self.shard_tokens[-1] += end - pos
            self.shard_docs[-1] += fit
            done += fit
            pos = end
        if rows:
            self._docs.write(np.concatenate(rows).astype(_ROW).tobytes())
        self.documents += n
        self.tokens += pos

    def write_stream(self, chunks: Iterable[np.ndarray], max_tokens: int, segment: int, line: int) -> None:
        """Appends one document given as chunks of ids, at most ``max_tokens`` in all."""
        if self.shard_tokens[-1] and self.shard_tokens[-1] + max_tokens > self.capacity:
            self._roll()
        offset = self.shard_tokens[-1]
        length = 0
        for chunk in chunks:
            chunk = np.asarray(chunk).astype(self.dtype, copy=False)
            self._shard.write(memoryview(chunk).cast("B"))
            length += len(chunk)
        self.shard_tokens[-1] += length
        self.shard_docs[-1] += 1
        row = np.array([[len(self.shard_tokens) - 1, offset, length, segment, line]], dtype=_ROW)
        self._docs.write(row.tobytes())
        self.documents += 1
        self.tokens += length

    def commit(self, meta: dict, *, megatron: bool = False) -> dict:
        self._shard.close()
        self._docs.close()
        if megatron:
            rows = np.fromfile(os.path.join(self.tmp, "docs.bin"), dtype=_ROW).reshape(-1, 5)
            for k in range(len(self.shard_tokens)):
                mine = rows[rows[:, 0] == k]
                write_megatron_idx(os.path.join(self.tmp, f"{k:03d}.idx"), self.dtype, mine[:, 2], mine[:, 1])
        meta = dict(meta, documents=self.documents, tokens=self.tokens,
                    shards=[{"tokens": t, "documents": d} for t, d in zip(self.shard_tokens, self.shard_docs)])
        write_json_atomic(os.path.join(self.tmp, "part.json"), meta)
        try:
            os.rename(self.tmp, self.final)
        except OSError:
            # another attempt of this partition (a Dask retry) finished first: same bytes
            if not os.path.exists(os.path.join(self.final, "part.json")):
                raise
            shutil.rmtree(self.tmp, ignore_errors=True)
        return meta

    def abort(self) -> None:
        for f in (self._shard, self._docs):
            if f is not None:
                f.close()
        shutil.rmtree(self.tmp, ignore_errors=True)


MEGATRON_MAGIC = b"MMIDIDX\x00\x00"
# Megatron-LM's DType codes; it has no uint32: ids below 2**31 are the same bytes as int32
MEGATRON_DTYPE_CODES = {"uint16": 8, "uint32": 4}


def write_megatron_idx(path: str, dtype: np.dtype, lengths: np.ndarray, offsets: np.ndarray) -> None:
    """A Megatron-LM indexed-dataset index (``.idx``) for a shard (``.bin``): one sequence
    per document. Layout: magic, version <Q 1, dtype code <B, sequence count <Q, document
    count <Q (documents + 1), lengths <i4[], byte pointers <i8[], document indices <i8[]."""
    import struct

    n = len(lengths)
    with open(path, "wb") as f:
        f.write(MEGATRON_MAGIC)
        f.write(struct.pack("<QBQQ", 1, MEGATRON_DTYPE_CODES[dtype.name], n, n + 1))
        f.write(np.asarray(lengths, dtype="<i4").tobytes())
        f.write((np.asarray(offsets, dtype="<i8") * dtype.itemsize).tobytes())
        f.write(np.arange(n + 1, dtype="<i8").tobytes())


def finalize(out_dir: str, summary: dict, files: list[dict], plan: list[dict], metas: list[dict],
             max_examples: int = 100) -> dict:
    """Writes index.bin and then corpus.json from the complete partitions."""
    line_base: dict[int, int] = {}  # file -> lines in its earlier segments
    shards = []
    examples = []
    tmp = os.path.join(out_dir, f"index.bin.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    documents = tokens = skipped = 0
    with open(tmp, "wb") as out:
        for part, meta in zip(plan, metas):
            segs = part["segments"]
            seg_file = np.array([s["file"] for s in segs], dtype=np.int64)
            seg_base = []
            for s, sm in zip(segs, meta["segments"]):
                base = line_base.get(s["file"], 0)
                seg_base.append(base)
                line_base[s["file"]] = base + sm["lines"]
            for seg, line, reason in meta["skipped_examples"]:
                if len(examples) < max_examples:
                    examples.append({"path": files[segs[seg]["file"]]["path"], "line": seg_base[seg] + line, "reason": reason})
            d = part_dir(out_dir, part["index"])
            rows = np.fromfile(os.path.join(d, "docs.bin"), dtype=_ROW).reshape(-1, 5)
            if len(rows):
                seg = rows[:, 3].copy()
                rows[:, 0] += len(shards)
                rows[:, 3] = seg_file[seg]
                rows[:, 4] += np.array(seg_base, dtype=np.int64)[seg]
                out.write(rows.tobytes())
            for k, sh in enumerate(meta["shards"]):
                shards.append({"path": f"parts/{part['index']:05d}/{k:03d}.bin", **sh})
            documents += meta["documents"]
            tokens += meta["tokens"]
            skipped += meta["skipped"]
    os.replace(tmp, os.path.join(out_dir, "index.bin"))
    summary = dict(summary, format=FORMAT, version=VERSION, documents=documents, tokens=tokens,
                   skipped=skipped, skipped_examples=examples, shards=shards,
                   index={"path": "index.bin", "dtype": "<i8", "columns": list(INDEX_COLUMNS)})
    write_json_atomic(os.path.join(out_dir, "corpus.json"), summary)
    return summary
