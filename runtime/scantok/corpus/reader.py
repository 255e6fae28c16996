"""``scantok.corpus.open``: a shard directory read back, documents as numpy arrays over
memory-mapped shards, in input order, with random access and each document's source."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterator

import numpy as np

from . import writer
from .errors import CorpusStateError

__all__ = ["Corpus", "DocumentSource", "open"]


@dataclass(frozen=True)
class DocumentSource:
    """Where a document came from: the input file and its line (JSON Lines, 1-based), row
    (Parquet, 0-based) or 1 (a text file is one document)."""

    path: str
    line: int
    kind: str  # "jsonl" | "parquet" | "text"


def _memmap(path: str, dtype: np.dtype, count: int) -> np.ndarray:
    if count == 0:
        return np.empty(0, dtype=dtype)
    size = os.path.getsize(path)
    if size != count * dtype.itemsize:
        raise CorpusStateError(f"{path}: {size} bytes, expected {count * dtype.itemsize}: the directory is damaged")
    return np.memmap(path, dtype=dtype, mode="r")


class Corpus:
    """The documents of a shard directory.

    >>> import json, os, pathlib, tempfile, scantok.corpus
    >>> d = tempfile.mkdtemp()
    >>> _ = pathlib.Path(d, "a.jsonl").write_text('{"text": "hello world"}\\n{"text": "bye"}\\n')
    >>> _ = scantok.corpus.encode_files([os.path.join(d, "a.jsonl")], os.path.join(d, "out"),
    ...                                 encoding="o200k_base", num_workers=1)
    >>> corpus = scantok.corpus.open(os.path.join(d, "out"))
    >>> len(corpus), corpus.total_tokens, corpus[0].tolist(), corpus.source(1).line
    (2, 3, [24912, 2375], 2)
    >>> [ids.tolist() for ids in corpus]
    [[24912, 2375], [43571]]
    """

    def __init__(self, out_dir):
        self.path = os.path.abspath(os.fspath(out_dir))
        meta_path = os.path.join(self.path, "corpus.json")
        if not os.path.exists(meta_path):
            if os.path.exists(os.path.join(self.path, "manifest.json")):
                raise CorpusStateError(f"{self.path}: the run that writes it has not finished (run it again to resume)")
            raise CorpusStateError(f"{self.path}: not a scantok shard directory (no corpus.json)")
        self.info = writer.read_json(meta_path)
        if self.info.get("format") != writer.FORMAT or self.info.get("version") != writer.VERSION:
            raise CorpusStateError(f"{self.path}: unknown shard format {self.info.get('format')!r} "
                                   f"version {self.info.get('version')!r}")
        self.dtype = np.dtype(self.info["dtype"]).newbyteorder("<")
        self.index = _memmap(os.path.join(self.path, "index.bin"), np.dtype("<i8"),
                             5 * self.info["documents"]).reshape(-1, 5)
        self._shards: dict[int, np.ndarray] = {}

    # ------------------------------------------------------------------ summary

    def __len__(self) -> int:
        return self.info["documents"]

    def __repr__(self) -> str:
        return f"<scantok.corpus.Corpus {self.path!r}: {len(self)} documents, {self.total_tokens} tokens>"

    @property
    def total_tokens(self) -> int:
        return self.info["tokens"]

    @property
    def encoding_name(self) -> str:
        return self.info["encoding"]

    @property
    def num_shards(self) -> int:
        return len(self.info["shards"])

    @property
    def skipped(self) -> int:
        return self.info["skipped"]

    def shard(self, k: int) -> np.ndarray:
        """The k-th token shard, memory-mapped (documents back to back)."""
        arr = self._shards.get(k)
        if arr is None:
            sh = self.info["shards"][k]
            arr = self._shards[k] = _memmap(os.path.join(self.path, sh["path"]), self.dtype, sh["tokens"])
        return arr

    # ------------------------------------------------------------------ documents

    def _doc(self, row) -> np.ndarray:
        shard, offset, length = int(row[0]), int(row[1]), int(row[2])
        return self.shard(shard)[offset:offset + length]

    def __getitem__(self, i: int) -> np.ndarray:
        """The ids of document i (a read-only view into its shard)."""
        n = len(self)
        if not isinstance(i, (int, np.integer)):
            raise TypeError(f"document indices must be integers, not {type(i).__name__}")
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"document index out of range (the corpus has {n} documents)")
        return self._doc(self.index[i])

    def __iter__(self) -> Iterator[np.ndarray]:
        for row in self.index:
            yield self._doc(row)

    def source(self, i: int) -> DocumentSource:
        """The input file and line (or row) of document i."""
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(f"document index out of range (the corpus has {len(self)} documents)")
        f = self.info["inputs"][int(self.index[i, 3])]
        return DocumentSource(f["path"], int(self.index[i, 4]), f["kind"])

    def lengths(self) -> np.ndarray:
        """Every document's number of tokens."""
        return np.asarray(self.index[:, 2])

    def summary(self) -> str:
        """A human-readable description (``scantok shard --info``)."""
        info = self.info
        total_bytes = sum(f["size"] for f in info["inputs"])
        lines = [
            f"{self.path}",
            f"  encoding     {info['encoding']} (n_vocab {info['n_vocab']}), dtype {info['dtype']}"
            + (f", end-of-text id {info['append_eot']} after each document" if info["append_eot"] is not None else ""),
            f"  documents    {info['documents']:,}" + (f" ({info['skipped']:,} skipped)" if info["skipped"] else ""),
            f"  tokens       {info['tokens']:,}"
            + (f" ({info['tokens'] / info['documents']:.1f} per document)" if info["documents"] else ""),
            f"  shards       {len(info['shards'])} ({sum(s['tokens'] for s in info['shards']) * self.dtype.itemsize / 1e6:,.1f} MB)",
            f"  inputs       {len(info['inputs'])} files, {total_bytes / 1e6:,.1f} MB, field {info['field']!r}",
        ]
        for ex in info["skipped_examples"][:5]:
            lines.append(f"  skipped      {ex['path']}:{ex['line']}: {ex['reason']}")
        return "\n".join(lines)


def open(out_dir) -> Corpus:  # noqa: A001 - the package's reader, like gzip.open
    """Opens a shard directory written by ``encode_files``."""
    return Corpus(out_dir)
