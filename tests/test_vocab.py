"""Rank-file lookup order, hash checks, clear errors, and the binary cache."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys

import pytest

from test_encoding_oracle import vocab_dir
from scantok import vocab
from scantok.registry import RANK_FILES

FILE = "r50k_base.tiktoken"
URL, SHA = RANK_FILES[FILE]


@pytest.fixture
def env(tmp_path, monkeypatch):
    """No SCANTOK_VOCAB_DIR, empty tiktoken and scantok caches, no downloads."""
    src()  # read the reference file before the environment changes
    monkeypatch.delenv("SCANTOK_VOCAB_DIR", raising=False)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tt"))
    monkeypatch.setenv("SCANTOK_CACHE_DIR", str(tmp_path / "st"))
    monkeypatch.setenv("SCANTOK_OFFLINE", "1")
    return tmp_path


_SRC: list[bytes] = []


def src() -> bytes:
    if not _SRC:
        _SRC.append((vocab_dir() / FILE).read_bytes())
    return _SRC[0]


def test_sha256sums_match_registry():
    sums = dict(reversed(line.split()) for line in (vocab_dir() / "SHA256SUMS").read_text().splitlines() if line.strip())
    for name, (_url, sha) in RANK_FILES.items():
        assert sums[name] == sha


def test_not_found_offline(env):
    with pytest.raises(vocab.VocabError, match="SCANTOK_VOCAB_DIR"):
        vocab.find_rank_file(FILE, url=URL, sha256=SHA)


def test_lookup_order(env, monkeypatch):
    d = env / "vocab"
    d.mkdir()
    (d / FILE).write_bytes(src())
    monkeypatch.setenv("SCANTOK_VOCAB_DIR", str(d))
    data, where = vocab.find_rank_file(FILE, url=URL, sha256=SHA)
    assert where == str(d / FILE) and data == src()
    # tiktoken's cache, by sha1 of the URL
    monkeypatch.delenv("SCANTOK_VOCAB_DIR")
    tt = env / "tt"
    tt.mkdir()
    (tt / hashlib.sha1(URL.encode()).hexdigest()).write_bytes(src())
    _, where = vocab.find_rank_file(FILE, url=URL, sha256=SHA)
    assert where.startswith(str(tt))
    # a wrong-hash tiktoken cache entry is skipped (tiktoken discards it too) ...
    (tt / hashlib.sha1(URL.encode()).hexdigest()).write_bytes(b"garbage")
    with pytest.raises(vocab.VocabError, match="not found"):
        vocab.find_rank_file(FILE, url=URL, sha256=SHA)
    # ... and scantok's own cache comes next
    st = env / "st"
    st.mkdir()
    (st / FILE).write_bytes(src())
    _, where = vocab.find_rank_file(FILE, url=URL, sha256=SHA)
    assert where == str(st / FILE)
    # an explicit path wins over everything
    other = env / "explicit.tiktoken"
    other.write_bytes(src())
    _, where = vocab.find_rank_file(FILE, url=URL, sha256=SHA, path=other)
    assert where == str(other)


def test_corrupt_file_is_an_error(env, monkeypatch):
    d = env / "vocab"
    d.mkdir()
    (d / FILE).write_bytes(src()[:-10] + b"AAAA 1\n")
    monkeypatch.setenv("SCANTOK_VOCAB_DIR", str(d))
    with pytest.raises(vocab.VocabError, match="SHA-256"):
        vocab.load_table(FILE, url=URL, sha256=SHA)
    with pytest.raises(vocab.VocabError, match="does not exist"):
        vocab.find_rank_file(FILE, path=env / "nope.tiktoken")


def test_parse_errors():
    with pytest.raises(vocab.VocabError, match=":2:"):
        vocab.parse_tiktoken_bpe(b"YQ== 0\nnot-base64!! x\n")
    with pytest.raises(vocab.VocabError, match="no tokens"):
        vocab.parse_tiktoken_bpe(b"\n\n")
    ranks = {b"a": 0, b"b": 1, b"ab": 2}
    assert vocab.parse_tiktoken_bpe(vocab.dump_tiktoken_bpe(ranks)) == ranks


def test_download_checked_and_atomic(env, monkeypatch):
    monkeypatch.delenv("SCANTOK_OFFLINE")
    monkeypatch.setattr(vocab, "_download", lambda url, timeout=60.0: src())
    data, where = vocab.find_rank_file(FILE, url=URL, sha256=SHA)
    assert where == URL and data == src()
    assert (env / "st" / FILE).read_bytes() == src()
    assert not [p for p in (env / "st").iterdir() if p.name.endswith(".tmp")]
    (env / "st" / FILE).unlink()
    monkeypatch.setattr(vocab, "_download", lambda url, timeout=60.0: b"tampered")
    with pytest.raises(vocab.VocabError, match="expected"):
        vocab.find_rank_file(FILE, url=URL, sha256=SHA)
    assert not (env / "st" / FILE).exists()

    def fail(url, timeout=60.0):
        raise OSError("network is unreachable")

    monkeypatch.setattr(vocab, "_download", fail)
    with pytest.raises(vocab.VocabError, match="SCANTOK_VOCAB_DIR"):
        vocab.find_rank_file(FILE, url=URL, sha256=SHA)


def test_binary_cache(env, monkeypatch):
    d = env / "vocab"
    d.mkdir()
    (d / FILE).write_bytes(src())
    monkeypatch.setenv("SCANTOK_VOCAB_DIR", str(d))
    t1 = vocab.load_table(FILE, url=URL, sha256=SHA)
    cache = env / "st" / f"{SHA}.stkb"
    assert cache.exists()
    assert t1.to_dict() == vocab.parse_tiktoken_bpe(src())
    # the cache alone is enough (keyed by the content hash)
    shutil.rmtree(d)
    t2 = vocab.load_table(FILE, url=URL, sha256=SHA)
    assert t2.raw == t1.raw
    # a truncated cache is rebuilt, never used
    cache.write_bytes(cache.read_bytes()[:-5])
    with pytest.raises(vocab.VocabError):
        vocab.load_table(FILE, url=URL, sha256=SHA)  # no source any more: clear error
    d.mkdir()
    (d / FILE).write_bytes(src())
    assert vocab.load_table(FILE, url=URL, sha256=SHA).raw == t1.raw


def test_fresh_process_load_uses_cached_image(tmp_path):
    """get_encoding("o200k_base") in a new process with a warm cache loads the built-table
    image and stays within 60 MB peak RSS (VmHWM, which execve resets); its load time is
    measured by bench/bench_encode.py, not asserted here."""
    env = dict(os.environ, SCANTOK_VOCAB_DIR=str(vocab_dir()), SCANTOK_CACHE_DIR=str(tmp_path / "st"))
    code = (
        "import time, json, scantok; t=time.perf_counter(); e=scantok.get_encoding('o200k_base'); "
        "t1=time.perf_counter(); assert e.encode('hello world')==[24912, 2375]; "
        "hwm=[l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1]; "
        "print(json.dumps([t1-t, int(hwm)]))"
    )
    subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True)  # warms the cache
    assert list((tmp_path / "st").glob("*.stki")), "the built-table image was not cached"
    runs = [json.loads(subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True).stdout) for _ in range(5)]
    rss_mb = min(r[1] for r in runs) / 1024
    assert rss_mb <= 60, f"{rss_mb:.0f} MB"


def test_image_from_other_build_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("SCANTOK_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("SCANTOK_VOCAB_DIR", str(vocab_dir()))
    code = "import scantok; print(scantok.get_encoding('r50k_base').encode('hello world'))"
    env = dict(os.environ)
    subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True)
    (img,) = tmp_path.glob("*.stki")
    data = bytearray(img.read_bytes())
    data[8] ^= 0xFF  # the ABI tag
    img.write_bytes(bytes(data))
    r = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True)
    assert r.stdout.strip() == "[31373, 995]"
    assert img.read_bytes()[8] != data[8]  # rewritten
