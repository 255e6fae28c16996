"""train_bpe(scheduler=client): counting on a Dask LocalCluster of 2 worker processes gives the
local trainer's merges (files split into byte ranges at line boundaries, and iterators)."""
from __future__ import annotations

import pytest

import scantok
from scantok.bpe import InvalidUTF8Error
from scantok.bpe.distributed import split_ranges

distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed "
                                  "(pip install 'scantok[dask]'); it is part of the test extra")


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=50)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    from conftest import corpus_dir

    d = tmp_path_factory.mktemp("dask")
    out = []
    for name in ("en", "code"):
        src = corpus_dir() / f"{name}.txt"
        if not src.exists():
            pytest.skip(f"shared corpus {src} is absent")
        with open(src, "rb") as f:
            data = f.read(300_000)
        p = d / f"{name}.txt"
        p.write_bytes(data[:data.rfind(b"\n") + 1] + b"no final newline")
        out.append(p)
    return out


def test_files_on_cluster_equal_local(client, files, monkeypatch):
    monkeypatch.setattr("scantok.bpe.distributed.RANGE_BYTES", 50_000)  # many ranges per file
    assert len(split_ranges([str(f) for f in files], 2)) > 8
    kw = dict(vocab_size=1500, special_tokens=["<s>"], pattern="cl100k_base")
    assert scantok.train_bpe(files, scheduler=client, **kw) == scantok.train_bpe(files, **kw)


def test_iterator_on_cluster_equal_local(client, files):
    lines = files[0].read_text(encoding="utf-8").splitlines(keepends=True)
    kw = dict(vocab_size=800)
    assert scantok.train_bpe(lines, scheduler=client, **kw) == scantok.train_bpe(lines, **kw)


def test_invalid_utf8_on_cluster(client, tmp_path):
    p = tmp_path / "bad.txt"
    p.write_bytes(b"fine\n" * 100 + b"\xff bad\n")
    with pytest.raises(InvalidUTF8Error) as e:
        scantok.train_bpe([p], vocab_size=300, scheduler=client)
    assert e.value.path == str(p) and e.value.offset == 500
