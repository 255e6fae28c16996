"""Shared helpers for the BPE encoder tests (no tests here): tiktoken (the pinned oracle) loaded offline from
the same rank files, and the vocab directory."""
from __future__ import annotations

import functools
import hashlib
import os
import shutil
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
ENCODING_NAMES = ("r50k_base", "gpt2", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base", "o200k_harmony")
TIKTOKEN_VERSION = "0.14.0"


def vocab_dir() -> Path:
    d = os.environ.get("SCANTOK_VOCAB_DIR")
    p = Path(d) if d else REPO.parent / "shared" / "vocab"
    if not (p / "o200k_base.tiktoken").exists():
        pytest.skip(f"rank files not found in {p}; set SCANTOK_VOCAB_DIR")
    return p.resolve()


@functools.lru_cache(maxsize=1)
def _tiktoken_cache() -> str:
    """A TIKTOKEN_CACHE_DIR holding the rank files under tiktoken's names (sha1 of the URL)."""
    from scantok.registry import RANK_FILES

    d = tempfile.mkdtemp(prefix="scantok-tiktoken-cache-")
    for file_name, (url, _sha) in RANK_FILES.items():
        shutil.copy(vocab_dir() / file_name, os.path.join(d, hashlib.sha1(url.encode()).hexdigest()))
    return d


@functools.lru_cache(maxsize=None)
def tiktoken_encoding(name: str):
    """tiktoken's own Encoding for `name`, built offline from the local rank files. gpt2's
    ranks are r50k_base's (tiktoken builds them from vocab.bpe + encoder.json, which are not
    available offline; the table is identical)."""
    import tiktoken
    import tiktoken.load
    from tiktoken_ext import openai_public

    from importlib.metadata import version

    assert version("tiktoken") == TIKTOKEN_VERSION, "the oracle is pinned to tiktoken==0.14.0"
    old = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = _tiktoken_cache()
    try:
        if name == "gpt2":
            spec = openai_public.r50k_base()
            spec["name"] = "gpt2"
        else:
            spec = openai_public.ENCODING_CONSTRUCTORS[name]()
    finally:
        if old is None:
            del os.environ["TIKTOKEN_CACHE_DIR"]
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = old
    return tiktoken.Encoding(**spec)


SPECIAL_FRAGMENTS = [
    "<|endoftext|>", "<|endoftext", "endoftext|>", "<|", "|>", "<|endofprompt|>", "<|fim_prefix|>",
    "<|fim_middle|>", "<|fim_suffix|>", "<|start|>", "<|end|>", "<|message|>", "<|channel|>",
    "<|reserved_200000|>", "<|reserved_201087|>", "<|reserved_200018|>", "<|startoftext|>",
    "<|call|>", "<|return|>", "<|constrain|>", "<<|endoftext|>>", "<|endoftext|><|endoftext|>",
    "<|endoftext|> ", " <|endoftext|>", "<|ENDOFTEXT|>", "<|endoftext |>",
]
