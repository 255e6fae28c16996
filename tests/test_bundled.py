"""The vocabularies bundled in the package: exact reconstruction of the pinned rank files,
lookup order, offline use with no SCANTOK_VOCAB_DIR, and corrupt bundles refused."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scantok import bundled, vocab
from scantok.registry import RANK_FILES


@pytest.fixture
def env(tmp_path, monkeypatch):
    """No SCANTOK_VOCAB_DIR, empty tiktoken and scantok caches, no downloads."""
    monkeypatch.delenv("SCANTOK_VOCAB_DIR", raising=False)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tt"))
    monkeypatch.setenv("SCANTOK_CACHE_DIR", str(tmp_path / "st"))
    monkeypatch.setenv("SCANTOK_OFFLINE", "1")
    return tmp_path


def test_every_openai_rank_file_is_bundled():
    assert set(RANK_FILES) <= set(bundled.BUNDLED)


@pytest.mark.parametrize("file_name", sorted(RANK_FILES))
def test_bundle_reconstructs_the_pinned_rank_file(env, file_name):
    url, sha = RANK_FILES[file_name]
    data, where = vocab.find_rank_file(file_name, url=url, sha256=sha, bundled=True)
    assert where == str(bundled.bundled_path(file_name))
    assert hashlib.sha256(data).hexdigest() == sha
    table = vocab.load_table(file_name, url=url, sha256=sha, bundled=True)
    assert table.to_dict() == vocab.parse_tiktoken_bpe(data)


def test_lookup_order_vocab_dir_then_bundled_then_caches(env, monkeypatch):
    file_name = "r50k_base.tiktoken"
    url, sha = RANK_FILES[file_name]
    text, _ = vocab.find_rank_file(file_name, url=url, sha256=sha, bundled=True)
    # a tiktoken cache entry does not win over the bundle
    tt = env / "tt"
    tt.mkdir()
    (tt / hashlib.sha1(url.encode()).hexdigest()).write_bytes(text)
    _, where = vocab.find_rank_file(file_name, url=url, sha256=sha, bundled=True)
    assert where == str(bundled.bundled_path(file_name))
    # SCANTOK_VOCAB_DIR does
    d = env / "vocab"
    d.mkdir()
    (d / file_name).write_bytes(text)
    monkeypatch.setenv("SCANTOK_VOCAB_DIR", str(d))
    _, where = vocab.find_rank_file(file_name, url=url, sha256=sha, bundled=True)
    assert where == str(d / file_name)
    # and a wrong file there is an error, not a fall-back to the bundle
    (d / file_name).write_bytes(text[:-3] + b"9\n")
    with pytest.raises(vocab.VocabError, match="SHA-256"):
        vocab.load_table(file_name, url=url, sha256=sha, bundled=True)


def _corrupt_copy(tmp_path, monkeypatch, file_name, mutate):
    data_dir = tmp_path / "data"
    shutil.copytree(bundled.DATA_DIR, data_dir)
    p = data_dir / bundled.BUNDLED[file_name][0]
    p.write_bytes(mutate(p.read_bytes()))
    monkeypatch.setattr(bundled, "DATA_DIR", data_dir)
    return p


@pytest.mark.parametrize(
    "mutate",
    [lambda b: b[:100] + bytes([b[100] ^ 1]) + b[101:], lambda b: b[:-1], lambda b: b + b"\0"],
    ids=["flipped-bit", "truncated", "extended"],
)
def test_corrupt_bundle_is_an_error_never_used(env, monkeypatch, mutate):
    file_name = "r50k_base.tiktoken"
    url, sha = RANK_FILES[file_name]
    p = _corrupt_copy(env, monkeypatch, file_name, mutate)
    with pytest.raises(vocab.VocabError, match=rf"bundled vocabulary {p}.*expected"):
        bundled.read_bundled(file_name)
    with pytest.raises(vocab.VocabError, match="reinstall"):
        vocab.load_table(file_name, url=url, sha256=sha, bundled=True)
    with pytest.raises(vocab.VocabError, match="reinstall"):
        vocab.find_rank_file(file_name, url=url, sha256=sha, bundled=True)
    from scantok.registry import _load_encoding

    with pytest.raises(vocab.VocabError, match="reinstall"):
        _load_encoding("r50k_base")


@given(st.lists(st.binary(min_size=1, max_size=40), unique=True, max_size=60), st.integers(0, 5))
def test_pack_round_trip_with_rank_gaps(tokens, gap_at):
    ranks = {}
    r = 0
    for i, t in enumerate(tokens):
        if i == gap_at:
            r += 1  # p50k_base skips a rank
        ranks[t] = r
        r += 1
    if not ranks:
        return
    packed = bundled.pack(ranks)
    assert bundled.pack(ranks) == packed
    assert bundled.unpack_table(packed, "x").to_dict() == ranks


def test_malformed_bundles():
    with pytest.raises(vocab.VocabError, match="bad magic"):
        bundled.unpack_table(b"nope", "x")
    with pytest.raises(vocab.VocabError, match="corrupt"):
        bundled.unpack_table(bundled._MAGIC + b"not zlib", "x")
    good = bundled.pack({b"a": 0, b"bc": 1})
    import zlib

    body = zlib.decompress(good[8:])
    with pytest.raises(vocab.VocabError, match="inconsistent|truncated"):
        bundled.unpack_table(bundled._MAGIC + zlib.compress(body[:-1]), "x")


def test_fresh_process_offline_without_vocab_dir(tmp_path):
    """A new process with no SCANTOK_VOCAB_DIR, empty caches and downloads disabled loads every
    OpenAI encoding from the package and gives tiktoken's ids."""
    env = {k: v for k, v in os.environ.items() if k != "SCANTOK_VOCAB_DIR"}
    env.update(SCANTOK_CACHE_DIR=str(tmp_path / "st"), TIKTOKEN_CACHE_DIR=str(tmp_path / "tt"),
               SCANTOK_OFFLINE="1")
    text = "Hello, world!\n    def f(x): return x ** 2  # ünïcode 日本語 <|endoftext|>"
    names = ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"]
    code = ("import json, sys, scantok; t = sys.stdin.read(); "
            f"print(json.dumps([scantok.get_encoding(n).encode_ordinary(t) for n in {names!r}]))")
    out = subprocess.run([sys.executable, "-c", code], env=env, input=text, check=True,
                         capture_output=True, text=True).stdout
    import json

    got = json.loads(out)
    for name, ids in zip(names, got):
        assert ids == _tiktoken_from_bundle(name).encode_ordinary(text), name


def _tiktoken_from_bundle(name):
    """tiktoken (the oracle) over the bundled ranks, whose reconstruction the test above checks
    against the pinned SHA-256: needs no rank file outside the package."""
    import tiktoken

    from scantok.registry import ENCODINGS

    file_name, _scanner, pat_str, specials, n_vocab = ENCODINGS[name]
    return tiktoken.Encoding(name, pat_str=pat_str, mergeable_ranks=bundled.read_bundled(file_name).to_dict(),
                             special_tokens=specials, explicit_n_vocab=n_vocab)
