"""scantok.corpus on a Dask LocalCluster (2 worker processes): the same bytes as the local
process pool, and the same typed errors."""
from __future__ import annotations

import pytest

import scantok
import scantok.corpus as sc
from corpus_helpers import check_corpus, corpus_docs, same_tree, write_jsonl, write_parquet

distributed = pytest.importorskip("dask.distributed")


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  worker_dashboard_address=None) as cluster, distributed.Client(cluster) as c:
        yield c


def test_dask_equals_local(tmp_path, client):
    docs = {name: corpus_docs(name, 80_000, seed=i) for i, name in enumerate(["en", "code", "multi"])}
    paths = [write_jsonl(tmp_path / "en.jsonl", docs["en"]),
             write_jsonl(tmp_path / "code.jsonl.gz", docs["code"], compression="gzip"),
             write_parquet(tmp_path / "multi.parquet", docs["multi"], row_group_size=40)]
    kw = dict(encoding="o200k_base", partition_bytes=30_000, append_eot=True)
    report = sc.encode_files(paths, tmp_path / "dask", scheduler=client, **kw)
    assert report.partitions > 4
    check_corpus(tmp_path / "dask", scantok.get_encoding("o200k_base"), docs["en"] + docs["code"] + docs["multi"],
                 eot=199999)
    sc.encode_files(paths, tmp_path / "local", num_workers=2, **kw)
    same_tree(tmp_path / "dask", tmp_path / "local")


def test_dask_custom_encoding_and_errors(tmp_path, client):
    base = scantok.get_encoding("r50k_base")
    enc = scantok.Encoding("my_r50k", pat_str=base._pat_str, mergeable_ranks=base._mergeable_ranks,
                           special_tokens={"<|endoftext|>": 50256})
    docs = corpus_docs("code", 40_000)
    p = write_jsonl(tmp_path / "a.jsonl", docs)
    sc.encode_files([p], tmp_path / "out", encoding=enc, scheduler=client, partition_bytes=10_000)
    check_corpus(tmp_path / "out", enc, docs)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "a"}\n' * 500 + '{"text": [1]}\n')
    with pytest.raises(sc.CorpusInputError, match=r"bad\.jsonl, line 501: field 'text' is an array"):
        sc.encode_files([bad], tmp_path / "out2", encoding="o200k_base", scheduler=client, partition_bytes=1000)
    assert not (tmp_path / "out2" / "corpus.json").exists()
