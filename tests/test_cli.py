"""The ``scantok`` CLI, and streaming (chunked) encoding == whole-text encoding."""
from __future__ import annotations

import io
import os
import random
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import scantok
from conftest import load_corpus
from test_encoding_oracle import tiktoken_encoding, vocab_dir
from strategies import hard_text

from scantok import cli


@pytest.fixture(scope="module", autouse=True)
def _vocab():
    vocab_dir()


def run_cli(args, stdin: bytes = b""):
    """Runs scantok.cli.main in-process with byte stdin/stdout."""
    out = io.BytesIO()
    err = io.StringIO()
    old = sys.stdin, sys.stdout, sys.stderr
    fake_in = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    fake_out = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    sys.stdin, sys.stdout, sys.stderr = fake_in, fake_out, err
    try:
        rc = cli.main(args)
        fake_out.flush()
        value = out.getvalue()
    finally:
        sys.stdin, sys.stdout, sys.stderr = old
        fake_out.detach()
        fake_in.detach()
    return rc, value, err.getvalue()


def test_encode_decode_count(tmp_path):
    text = load_corpus("multi")[:200_000]
    f = tmp_path / "in.txt"
    f.write_bytes(text.encode())
    for name in ["o200k_base", "cl100k_base", "r50k_base"]:
        want = tiktoken_encoding(name).encode_ordinary(text)
        rc, out, _ = run_cli(["encode", "-e", name, str(f)])
        assert rc == 0 and [int(x) for x in out.split()] == want
        rc, out, _ = run_cli(["count", "-e", name, str(f)])
        assert int(out) == len(want)
        ids = tmp_path / "ids.txt"
        ids.write_text(" ".join(map(str, want)))
        rc, out, _ = run_cli(["decode", "-e", name, str(ids)])
        assert out == text.encode()


def test_formats_npy_bin(tmp_path):
    import numpy as np

    text = load_corpus("code")[:100_000]
    f = tmp_path / "in.txt"
    f.write_bytes(text.encode())
    want = tiktoken_encoding("o200k_base").encode_ordinary(text)
    npy = tmp_path / "out.npy"
    assert run_cli(["encode", str(f), "--format", "npy", "-o", str(npy)])[0] == 0
    arr = np.load(npy)
    assert arr.dtype == np.uint32 and arr.tolist() == want
    binf = tmp_path / "out.bin"
    assert run_cli(["encode", str(f), "--format", "bin", "-o", str(binf)])[0] == 0
    assert np.fromfile(binf, dtype="<u4").tolist() == want
    assert run_cli(["decode", str(npy)])[1] == text.encode()
    assert run_cli(["decode", "--format", "bin", str(binf)])[1] == text.encode()
    # stdin
    rc, out, _ = run_cli(["encode", "-"], stdin=text.encode())
    assert [int(x) for x in out.split()] == want


@pytest.mark.parametrize("chunk", [1, 3, 7, 64, 4096])
@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base", "r50k_base"])
def test_streaming_equals_whole(name, chunk, tmp_path):
    rng = random.Random(chunk)
    parts = [load_corpus(c)[rng.randrange(0, 3_000_000):][: 20_000 if chunk < 64 else 200_000] for c in ("en", "code", "multi")]
    text = "\n".join(parts) + "  \r\n\n   x\u00a0\u2028 's  " + " " * 5000 + "y's" + "\n" * 7
    f = tmp_path / "in.txt"
    f.write_bytes(text.encode())
    want = tiktoken_encoding(name).encode_ordinary(text)
    rc, out, _ = run_cli(["encode", "-e", name, str(f), "--chunk-size", str(chunk)])
    assert [int(x) for x in out.split()] == want


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base", "r50k_base"])
@given(text=hard_text(surrogates=False), cuts=st.lists(st.integers(0, 400), max_size=8))
@settings(max_examples=60)
def test_stream_api_hypothesis(name, text, cuts):
    e = scantok.get_encoding(name)
    data = text.encode()
    pos = sorted({min(c, len(data)) for c in cuts} | {0, len(data)})
    chunks = [data[a:b] for a, b in zip(pos, pos[1:])]  # cuts may split UTF-8 characters
    got = [i for part in e.encode_ordinary_stream(chunks) for i in part]
    assert got == tiktoken_encoding(name).encode_ordinary(text)


def test_stream_huge_piece_linear():
    e = scantok.get_encoding("o200k_base")
    text = " " * 3_000_000 + "x"
    chunks = [text[i : i + 1000].encode() for i in range(0, len(text), 1000)]
    import time

    t0 = time.perf_counter()
    got = [i for part in e.encode_ordinary_stream(chunks) for i in part]
    assert time.perf_counter() - t0 < 5
    assert got == e.encode_ordinary(text)


def test_allow_special(tmp_path):
    text = "a<|endoftext|>b"
    rc, out, _ = run_cli(["encode", "-e", "cl100k_base", "--allow-special", "-"], stdin=text.encode())
    assert [int(x) for x in out.split()] == tiktoken_encoding("cl100k_base").encode(text, allowed_special="all")
    rc, out, _ = run_cli(["encode", "-e", "cl100k_base", "-"], stdin=text.encode())
    assert [int(x) for x in out.split()] == tiktoken_encoding("cl100k_base").encode_ordinary(text)


def test_show():
    rc, out, err = run_cli(["show", "Hello  world's 中文", "--ids", "--color", "never"])
    assert rc == 0
    e = tiktoken_encoding("o200k_base")
    ids = e.encode_ordinary("Hello  world's 中文")
    assert out.decode().strip() == "|".join(f"{e.decode([i])}[{i}]" for i in ids)
    assert f"{len(ids)} tokens" in err
    rc, out, _ = run_cli(["show", "ab\U0001f600", "--color", "always"])
    assert b"\x1b[" in out and "\U0001f600".encode() in out


def test_progress_and_errors(tmp_path):
    f = tmp_path / "in.txt"
    f.write_bytes(b"hello " * 1000)
    rc, out, err = run_cli(["count", str(f), "--progress", "always"])
    assert int(out) == len(tiktoken_encoding("o200k_base").encode_ordinary("hello " * 1000))
    assert "MB/s" in err
    with pytest.raises(SystemExit, match="Unknown encoding"):
        run_cli(["count", "-e", "nope", str(f)])
    with pytest.raises(SystemExit):
        run_cli(["count", str(tmp_path / "missing.txt")])
    bad = tmp_path / "bad.txt"
    bad.write_text("1 2 999999999")
    with pytest.raises(SystemExit, match="Invalid token"):
        run_cli(["decode", str(bad)])


def test_entry_point_subprocess(tmp_path):
    env = dict(os.environ, SCANTOK_VOCAB_DIR=str(vocab_dir()))
    r = subprocess.run([sys.executable, "-m", "scantok.cli", "encode", "-e", "cl100k_base", "-"],
                       input=b"hello world", capture_output=True, env=env, check=True)
    assert [int(x) for x in r.stdout.split()] == tiktoken_encoding("cl100k_base").encode("hello world")


def test_user_errors_are_messages(tmp_path):
    """Found by a probe (session 28): these printed tracebacks, trained on a file name, or
    replaced bytes that are not UTF-8 without a word."""
    good = tmp_path / "ok.txt"
    good.write_bytes(b"hello world")
    for args, message in [
        (["encode", str(tmp_path)], "Is a directory"),
        (["count", str(tmp_path)], "Is a directory"),
        (["encode", str(good), "-o", str(tmp_path), "--format", "bin"], "Is a directory"),
        (["train", str(tmp_path / "missing.txt"), "--vocab-size", "300", "-o", str(tmp_path / "x.tiktoken")],
         "missing.txt: no such file"),
        (["train", str(tmp_path), "--vocab-size", "300", "-o", str(tmp_path / "x.tiktoken")], "not a file"),
    ]:
        with pytest.raises(SystemExit, match=message):
            run_cli(args)
    assert not (tmp_path / "x.tiktoken").exists()
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"hello " * 3000 + b"\xff world")
    for cmd in (["encode"], ["count"], ["encode", "--allow-special"]):
        with pytest.raises(SystemExit, match=r"not valid UTF-8 .* near byte 18000"):
            run_cli(cmd + [str(bad), "-e", "cl100k_base"])
    rc, out, _ = run_cli(["encode", str(bad), "-e", "cl100k_base", "--errors", "replace"])
    text = ("hello " * 3000 + "\ufffd world")
    assert [int(x) for x in out.split()] == tiktoken_encoding("cl100k_base").encode_ordinary(text)
    ids = tmp_path / "ids.txt"
    ids.write_text("1 2 -1")
    with pytest.raises(SystemExit, match=r"token id -1 \(the 3th\)"):
        run_cli(["decode", str(ids)])
