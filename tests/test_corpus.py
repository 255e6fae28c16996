"""scantok.corpus on the local scheduler: every document's ids equal encode_ordinary's, in
every input format, whatever the number of workers; bad input; the reader; the CLI."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import scantok
import scantok.corpus as sc
from corpus_helpers import check_corpus, corpus_docs, same_tree, write_jsonl, write_parquet
from strategies import hard_text

O200K = scantok.get_encoding("o200k_base")


@pytest.fixture(scope="module")
def docs():
    return {name: corpus_docs(name, seed=i) for i, name in enumerate(["en", "code", "multi"])}


@pytest.fixture
def jsonl_inputs(tmp_path, docs):
    return [write_jsonl(tmp_path / f"{name}.jsonl", d) for name, d in docs.items()]


def all_docs(docs):
    return docs["en"] + docs["code"] + docs["multi"]


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base", "r50k_base"])
def test_local_two_workers_equal_encode_ordinary(tmp_path, docs, jsonl_inputs, name):
    enc = scantok.get_encoding(name)
    report = sc.encode_files(jsonl_inputs, tmp_path / "out", encoding=name, num_workers=2, partition_bytes=40_000)
    assert report.partitions > 6 and report.documents == len(all_docs(docs)) and report.skipped == 0
    check_corpus(tmp_path / "out", enc, all_docs(docs))
    corpus = sc.open(tmp_path / "out")
    assert corpus.info["dtype"] == ("uint16" if enc.n_vocab <= 2**16 else "uint32")
    # sources: file and 1-based line of each document
    k = len(docs["en"]) + 3
    assert corpus.source(k) == sc.DocumentSource(str(jsonl_inputs[1]), 4, "jsonl")
    lines = [corpus.source(i).line for i in range(len(docs["en"]))]
    assert lines == list(range(1, len(docs["en"]) + 1))


def test_output_independent_of_workers(tmp_path, jsonl_inputs):
    kw = dict(encoding="o200k_base", partition_bytes=30_000, shard_bytes=20_000)
    sc.encode_files(jsonl_inputs, tmp_path / "one", num_workers=1, **kw)
    sc.encode_files(jsonl_inputs, tmp_path / "two", num_workers=2, **kw)
    same_tree(tmp_path / "one", tmp_path / "two")


def test_append_eot_and_dtype(tmp_path, docs, jsonl_inputs):
    enc = scantok.get_encoding("r50k_base")
    sc.encode_files(jsonl_inputs[:1], tmp_path / "a", encoding=enc, num_workers=1, append_eot=True)
    check_corpus(tmp_path / "a", enc, docs["en"], eot=50256)
    assert sc.open(tmp_path / "a").info["dtype"] == "uint16"
    sc.encode_files(jsonl_inputs[:1], tmp_path / "b", encoding="r50k_base", num_workers=1, append_eot=7, dtype="uint32")
    check_corpus(tmp_path / "b", enc, docs["en"], eot=7)
    assert sc.open(tmp_path / "b").info["dtype"] == "uint32"
    with pytest.raises(ValueError, match="uint16"):
        sc.encode_files(jsonl_inputs[:1], tmp_path / "c", encoding="o200k_base", dtype="uint16")


def test_custom_encoding_travels_to_workers(tmp_path, docs, jsonl_inputs):
    base = scantok.get_encoding("r50k_base")
    enc = scantok.Encoding("my_r50k", pat_str=base._pat_str, mergeable_ranks=base._mergeable_ranks,
                           special_tokens={"<|endoftext|>": 50256})
    sc.encode_files(jsonl_inputs[:2], tmp_path / "out", encoding=enc, num_workers=2, partition_bytes=50_000)
    check_corpus(tmp_path / "out", enc, docs["en"] + docs["code"])


@pytest.mark.parametrize("fmt", ["jsonl", "jsonl.gz", "jsonl.zst", "parquet", "txt", "txt.gz", "txt.zst"])
def test_input_formats(tmp_path, docs, fmt):
    d = docs["multi"][:150]
    if fmt.startswith("jsonl"):
        comp = {"jsonl": None, "jsonl.gz": "gzip", "jsonl.zst": "zstd"}[fmt]
        paths = [write_jsonl(tmp_path / f"a.{fmt}", d[:100], compression=comp),
                 write_jsonl(tmp_path / f"b.{fmt}", d[100:], compression=comp)]
    elif fmt == "parquet":
        pytest.importorskip("pyarrow")
        paths = [write_parquet(tmp_path / "a.parquet", d[:100], row_group_size=30),
                 write_parquet(tmp_path / "b.parquet", d[100:], row_group_size=1000)]
    else:
        paths = []
        for k, doc in enumerate(d):
            p = tmp_path / f"{k:04d}.{fmt}"
            data = doc.encode()
            if fmt.endswith(".gz"):
                data = gzip.compress(data)
            elif fmt.endswith(".zst"):
                import zstandard

                data = zstandard.ZstdCompressor().compress(data)
            p.write_bytes(data)
            paths.append(p)
    sc.encode_files(paths, tmp_path / "out", encoding="o200k_base", num_workers=2, partition_bytes=20_000)
    check_corpus(tmp_path / "out", O200K, d)
    corpus = sc.open(tmp_path / "out")
    if fmt == "parquet":
        assert corpus.source(35) == sc.DocumentSource(str(paths[0]), 35, "parquet")
        assert corpus.source(101).line == 1
    elif fmt.startswith("txt"):
        assert corpus.source(3) == sc.DocumentSource(str(paths[3]), 1, "text")


def test_large_text_file_streams(tmp_path, monkeypatch):
    from scantok.corpus import readers

    monkeypatch.setattr(readers, "LARGE_TEXT", 1000)
    monkeypatch.setattr(readers, "BLOCK", 777)  # chunks cut everywhere, even inside characters
    text = scantok_corpus_text = corpus_docs("multi", 20_000)
    doc = "".join(scantok_corpus_text)
    (tmp_path / "big.txt").write_text(doc, encoding="utf-8")
    (tmp_path / "small.txt").write_text("tail", encoding="utf-8")
    sc.encode_files([tmp_path / "big.txt", tmp_path / "small.txt"], tmp_path / "out", encoding="o200k_base",
                    num_workers=1, append_eot=True, shard_bytes=64)
    check_corpus(tmp_path / "out", O200K, [doc, "tail"], eot=199999)
    assert text


def test_shards_roll_over_at_document_boundaries(tmp_path, docs):
    d = docs["en"][:200]
    p = write_jsonl(tmp_path / "a.jsonl", d)
    sc.encode_files([p], tmp_path / "out", encoding="r50k_base", num_workers=1, shard_bytes=1000)
    corpus = sc.open(tmp_path / "out")
    check_corpus(tmp_path / "out", scantok.get_encoding("r50k_base"), d)
    assert corpus.num_shards > 5
    for s in corpus.info["shards"]:
        # a shard passes 1000 bytes only when it holds one document longer than that
        assert s["tokens"] * 2 <= 1000 or s["documents"] == 1


def test_blank_lines_and_lone_surrogates(tmp_path):
    p = tmp_path / "a.jsonl"
    p.write_text('{"text": "a\\ud800b"}\n\n   \n{"text": "\\ud83d\\ude00 x \\udfff"}\n{"text": ""}', encoding="utf-8")
    sc.encode_files([p], tmp_path / "out", encoding="o200k_base", num_workers=1)
    corpus = sc.open(tmp_path / "out")
    # tiktoken replaces lone surrogates with U+FFFD; a JSON surrogate pair is one character
    assert [ids.tolist() for ids in corpus] == [O200K.encode_ordinary("a\ufffdb"),
                                                O200K.encode_ordinary("\U0001F600 x \ufffd"), []]
    assert [corpus.source(i).line for i in range(3)] == [1, 4, 5]


# --------------------------------------------------------------------------- bad input

BAD_LINES = [
    ('{"text": "ok"', "invalid JSON"),
    ('{"txt": "no field"}', "no field 'text'"),
    ('{"text": 12}', "field 'text' is a number, expected a string"),
    ('{"text": null}', "field 'text' is null"),
    ('["text"]', "expected a JSON object, got an array"),
]


@pytest.mark.parametrize("line,reason", BAD_LINES + [(b'{"text": "caf\xe9"}', "invalid UTF-8")])
def test_bad_jsonl_line_names_file_and_line(tmp_path, line, reason):
    good = [json.dumps({"text": f"document {k}"}) for k in range(300)]
    raw = [g.encode() for g in good]
    raw.insert(250, line if isinstance(line, bytes) else line.encode())
    p = tmp_path / "in.jsonl"
    p.write_bytes(b"\n".join(raw) + b"\n")
    out = tmp_path / "out"
    with pytest.raises(sc.CorpusInputError) as ei:
        sc.encode_files([p], out, encoding="o200k_base", num_workers=2, partition_bytes=2000)
    e = ei.value
    assert (e.path, e.line) == (str(p), 251) and reason in e.reason
    assert f"{p}, line 251: " in str(e)
    # nothing under a final name for the failing partition, no index, no summary
    assert not (out / "corpus.json").exists() and not (out / "index.bin").exists()
    # errors="skip" leaves it out and says where
    report = sc.encode_files([p], out, encoding="o200k_base", num_workers=2, partition_bytes=2000,
                             errors="skip", overwrite=True)
    assert report.skipped == 1 and report.documents == 300
    assert report.skipped_examples[0]["line"] == 251 and reason in report.skipped_examples[0]["reason"]
    check_corpus(out, O200K, [f"document {k}" for k in range(300)])
    assert sc.open(out).source(250).line == 252


def test_bad_text_file(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"fine\n")
    (tmp_path / "b.txt").write_bytes(b"line one\nline two \xff\xfe\n")
    paths = [tmp_path / "a.txt", tmp_path / "b.txt"]
    with pytest.raises(sc.CorpusInputError, match=r"b\.txt, line 2: invalid UTF-8"):
        sc.encode_files(paths, tmp_path / "out", encoding="o200k_base", num_workers=1)
    report = sc.encode_files(paths, tmp_path / "out", encoding="o200k_base", num_workers=1, errors="skip",
                             overwrite=True)
    assert (report.documents, report.skipped) == (1, 1)


def test_unreadable_inputs(tmp_path):
    with pytest.raises(sc.CorpusInputError, match="missing.jsonl: cannot open"):
        sc.encode_files([tmp_path / "missing.jsonl"], tmp_path / "out", encoding="o200k_base")
    with pytest.raises(sc.CorpusInputError, match="not a regular file"):
        sc.encode_files([tmp_path], tmp_path / "out", encoding="o200k_base")
    (tmp_path / "bad.jsonl.gz").write_bytes(b"\x1f\x8b\x08\x00garbage")
    with pytest.raises(sc.CorpusInputError, match=r"bad\.jsonl\.gz: cannot read"):
        sc.encode_files([tmp_path / "bad.jsonl.gz"], tmp_path / "out", encoding="o200k_base", num_workers=1)
    (tmp_path / "bad.parquet").write_bytes(b"not parquet")
    with pytest.raises(sc.CorpusInputError, match="not a readable Parquet file"):
        sc.encode_files([tmp_path / "bad.parquet"], tmp_path / "out2", encoding="o200k_base")
    write_parquet(tmp_path / "p.parquet", ["a"], field="body")
    with pytest.raises(sc.CorpusInputError, match="no column 'text'"):
        sc.encode_files([tmp_path / "p.parquet"], tmp_path / "out3", encoding="o200k_base")


def test_errors_are_picklable():
    import pickle

    e = sc.CorpusInputError("a.jsonl", 3, "invalid JSON")
    assert str(pickle.loads(pickle.dumps(e))) == str(e)


# --------------------------------------------------------------------------- directory state


def test_rerun_resumes_and_other_parameters_refused(tmp_path, jsonl_inputs):
    kw = dict(encoding="o200k_base", partition_bytes=50_000, num_workers=2)
    first = sc.encode_files(jsonl_inputs, tmp_path / "out", **kw)
    again = sc.encode_files(jsonl_inputs, tmp_path / "out", **kw)
    assert again.partitions_resumed == again.partitions == first.partitions
    with pytest.raises(sc.CorpusStateError, match="field: 'text' -> 'body'"):
        sc.encode_files(jsonl_inputs, tmp_path / "out", field="body", **kw)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(sc.CorpusStateError, match="not empty"):
        sc.encode_files(jsonl_inputs, tmp_path / "other", **kw)
    with pytest.raises(sc.CorpusStateError, match="no corpus.json"):
        sc.open(tmp_path / "other")


# --------------------------------------------------------------------------- reader


def test_reader_api(tmp_path, docs, jsonl_inputs):
    sc.encode_files(jsonl_inputs, tmp_path / "out", encoding="o200k_base", num_workers=1, partition_bytes=60_000)
    corpus = sc.open(tmp_path / "out")
    d = all_docs(docs)
    assert len(corpus) == len(d)
    assert corpus[-1].tolist() == O200K.encode_ordinary(d[-1])
    assert corpus[np.int64(5)].tolist() == O200K.encode_ordinary(d[5])
    assert corpus[5].dtype == np.uint32 and not corpus[5].flags.writeable
    with pytest.raises(IndexError):
        corpus[len(d)]
    with pytest.raises(TypeError):
        corpus["0"]
    assert corpus.lengths().tolist() == [len(O200K.encode_ordinary(t)) for t in d]
    assert corpus.total_tokens == int(corpus.lengths().sum())
    assert corpus.source(-1) == sc.DocumentSource(str(jsonl_inputs[2]), len(docs["multi"]), "jsonl")
    assert "documents" in corpus.summary() and repr(corpus).startswith("<scantok.corpus.Corpus")


@settings(max_examples=25)
@given(texts=st.lists(hard_text(max_fragments=12), max_size=12), eot=st.booleans())
def test_any_documents(tmp_path_factory, texts, eot):
    d = tmp_path_factory.mktemp("h")
    p = d / "in.jsonl"
    # ensure_ascii JSON: lone surrogates travel as \\udXXX escapes, as in real JSONL dumps
    p.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))
    sc.encode_files([p], d / "out", encoding="o200k_base", num_workers=1, append_eot=eot, partition_bytes=64)
    check_corpus(d / "out", O200K, texts, eot=199999 if eot else None)


# --------------------------------------------------------------------------- CLI


def test_cli_shard_and_info(tmp_path, docs, jsonl_inputs, capsys):
    from scantok.cli import main

    out = tmp_path / "out"
    assert main(["shard", "-e", "cl100k_base", "-o", str(out), *map(str, jsonl_inputs), "--workers", "2",
                 "--append-eot", "--partition-mb", "0.05", "--progress", "always"]) == 0
    err = capsys.readouterr().err
    assert "shard" in err and "tokens" in err
    check_corpus(out, scantok.get_encoding("cl100k_base"), all_docs(docs), eot=100257)
    assert main(["shard", "--info", str(out)]) == 0
    info = capsys.readouterr().out
    assert f"documents    {len(all_docs(docs)):,}" in info and "cl100k_base" in info
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "a"}\n{"text": 1}\n')
    with pytest.raises(SystemExit, match=r"bad\.jsonl, line 2"):
        main(["shard", "-o", str(tmp_path / "o2"), str(bad), "--progress", "never"])


def _read_megatron(prefix: Path):
    """Megatron-LM's MMIDIDX index read by its documented layout (no Megatron import)."""
    import struct

    raw = prefix.with_suffix(".idx").read_bytes()
    assert raw[:9] == b"MMIDIDX\x00\x00"
    version, code, nseq, ndoc = struct.unpack_from("<QBQQ", raw, 9)
    assert version == 1
    pos = 9 + struct.calcsize("<QBQQ")
    lengths = np.frombuffer(raw, "<i4", nseq, pos)
    pointers = np.frombuffer(raw, "<i8", nseq, pos + 4 * nseq)
    doc_idx = np.frombuffer(raw, "<i8", ndoc, pos + 12 * nseq)
    assert pos + 12 * nseq + 8 * ndoc == len(raw)
    dtype = {8: np.uint16, 4: np.int32}[code]
    data = np.fromfile(prefix.with_suffix(".bin"), dtype=dtype)
    return [data[p // data.itemsize: p // data.itemsize + n].tolist() for p, n in zip(pointers, lengths)], doc_idx


@pytest.mark.parametrize("name", ["r50k_base", "o200k_base"])
def test_megatron_idx(tmp_path, docs, name):
    p = write_jsonl(tmp_path / "a.jsonl", docs["code"][:300])
    sc.encode_files([p], tmp_path / "out", encoding=name, num_workers=1, append_eot=True, megatron=True,
                    shard_bytes=20_000, partition_bytes=50_000)
    corpus = sc.open(tmp_path / "out")
    got = []
    for s in corpus.info["shards"]:
        seqs, doc_idx = _read_megatron(tmp_path / "out" / s["path"][:-4])
        assert doc_idx.tolist() == list(range(len(seqs) + 1))
        got += seqs
    assert got == [ids.tolist() for ids in corpus]


def test_small_blocks_and_batches(tmp_path, docs, monkeypatch):
    """Lines cut across read blocks, several blocks per encoder call, blank and Python-only
    lines (NaN) in between: the same documents."""
    from scantok.corpus import pipeline, readers

    monkeypatch.setattr(readers, "BLOCK", 999)
    monkeypatch.setattr(pipeline, "BATCH_BYTES", 5000)
    d = docs["multi"][:120]
    lines = []
    for k, t in enumerate(d):
        lines.append(json.dumps({"text": t, "n": float("nan") if k % 7 == 0 else k}, ensure_ascii=k % 2 == 0))
        if k % 5 == 0:
            lines.append("  ")
    p = tmp_path / "a.jsonl"
    p.write_text("\n".join(lines), encoding="utf-8")  # no final newline
    sc.encode_files([p], tmp_path / "out", encoding="o200k_base", num_workers=1, partition_bytes=7000)
    check_corpus(tmp_path / "out", O200K, d)
    corpus = sc.open(tmp_path / "out")
    assert [corpus.source(i).line for i in range(len(d))] == [i + 1 for i, l in enumerate(lines) if l.strip()]


def test_one_run_per_directory(tmp_path, jsonl_inputs):
    import fcntl

    out = tmp_path / "out"
    out.mkdir()
    with open(out / ".lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(sc.CorpusStateError, match="another run"):
            sc.encode_files(jsonl_inputs, out, encoding="o200k_base", num_workers=1)
    sc.encode_files(jsonl_inputs[:1], out, encoding="o200k_base", num_workers=1)


@pytest.mark.parametrize("module", ["scantok.corpus", "scantok.corpus.pipeline", "scantok.corpus.reader",
                                    "scantok.corpus.readers", "scantok.corpus.errors"])
def test_docstring_examples(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


def test_damaged_zst_input_is_a_corpus_input_error(tmp_path):
    """A damaged .zst stream raised zstandard's own error, without the file's name (a probe,
    session 28); a damaged .gz was a CorpusInputError already."""
    pytest.importorskip("zstandard")
    bad = tmp_path / "bad.jsonl.zst"
    bad.write_bytes(b"\x28\xb5\x2f\xfd" + bytes(range(256)) * 2)
    with pytest.raises(sc.CorpusInputError, match="bad.jsonl.zst"):
        sc.encode_files([str(bad)], str(tmp_path / "out"), encoding="cl100k_base")


def test_arguments_checked(tmp_path):
    """field=None was an AttributeError deep in a reader, num_workers=0 or -1 was taken (a probe,
    session 28)."""
    src = tmp_path / "a.jsonl"
    src.write_text('{"text": "hi"}\n')
    with pytest.raises(TypeError, match="field"):
        sc.encode_files([str(src)], str(tmp_path / "o1"), encoding="cl100k_base", field=None)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="num_workers"):
            sc.encode_files([str(src)], str(tmp_path / "o2"), encoding="cl100k_base", num_workers=bad)
    assert not (tmp_path / "o1").exists() and not (tmp_path / "o2").exists()
