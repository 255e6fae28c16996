"""Shared helpers of the corpus pipeline tests: documents cut from the shared corpora,
input files in each format, and the check that a shard directory holds exactly
``encode_ordinary`` of each document."""
from __future__ import annotations

import filecmp
import gzip
import json
import os
import random
from pathlib import Path

import numpy as np

from conftest import load_corpus


def corpus_docs(name: str, nbytes: int = 120_000, seed: int = 0) -> list[str]:
    """A slice of a shared corpus cut into documents of 0..4000 characters (some empty)."""
    text = load_corpus(name)[:nbytes]
    rng = random.Random(seed)
    docs, i = [], 0
    while i < len(text):
        n = rng.choice([0, 1, 7, 60, 500, 1500, 4000])
        docs.append(text[i:i + n])
        i += n
    return docs


def write_jsonl(path: Path, docs: list[str], field: str = "text", compression: str | None = None) -> Path:
    data = "".join(json.dumps({"id": k, field: d}) + "\n" for k, d in enumerate(docs)).encode()
    if compression == "gzip":
        data = gzip.compress(data)
    elif compression == "zstd":
        import zstandard

        data = zstandard.ZstdCompressor().compress(data)
    path.write_bytes(data)
    return path


def write_parquet(path: Path, docs: list[str], field: str = "text", row_group_size: int = 100) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({field: docs, "n": list(range(len(docs)))}), path, row_group_size=row_group_size)
    return path


def check_corpus(out_dir, enc, docs: list[str], *, eot: int | None = None) -> None:
    """Every document's ids equal encode_ordinary's (plus the end-of-text id), in order."""
    import scantok.corpus

    corpus = scantok.corpus.open(out_dir)
    assert len(corpus) == len(docs)
    total = 0
    for k, (ids, doc) in enumerate(zip(corpus, docs)):
        want = enc.encode_ordinary(doc) + ([eot] if eot is not None else [])
        assert ids.tolist() == want, f"document {k} differs"
        total += len(want)
    assert corpus.total_tokens == total
    # the documented layout, read with numpy alone
    info = json.loads((Path(out_dir) / "corpus.json").read_text())
    index = np.fromfile(Path(out_dir) / "index.bin", dtype="<i8").reshape(-1, 5)
    shards = [np.memmap(Path(out_dir) / s["path"], dtype=np.dtype(info["dtype"]).newbyteorder("<"), mode="r")
              if s["tokens"] else np.empty(0, info["dtype"]) for s in info["shards"]]
    for k in range(0, len(docs), max(1, len(docs) // 50)):
        shard, offset, length = index[k, :3]
        assert shards[shard][offset:offset + length].tolist() == corpus[k].tolist()


def same_tree(a, b) -> None:
    """Both directories hold the same files with the same bytes (the lock file aside)."""
    def files(root):
        out = []
        for dirpath, _, names in os.walk(root):
            out += [os.path.relpath(os.path.join(dirpath, n), root) for n in names if n != ".lock"]
        return sorted(out)

    fa, fb = files(a), files(b)
    assert fa == fb
    match, mismatch, errors = filecmp.cmpfiles(a, b, fa, shallow=False)
    assert not mismatch and not errors, (mismatch, errors)
