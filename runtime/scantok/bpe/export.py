"""Exports of a trained byte-level BPE: tiktoken's ``.tiktoken`` rank file (rank = id; tiktoken
merges by the rank of the concatenation) and HuggingFace's ``tokenizer.json`` (merges by merge
rank, the pre-tokenizer the training used, ids as BpeTrainer assigns them).
"""
from __future__ import annotations

import base64
import json
import os
from typing import TYPE_CHECKING

from .bytelevel import bytes_to_str

if TYPE_CHECKING:
    from .train import TrainedBPE

__all__ = ["tiktoken_text", "hf_json", "hf_pre_tokenizer", "write_atomic"]


def tiktoken_text(mergeable_ranks: dict[bytes, int]) -> str:
    """The ``.tiktoken`` file: ``base64(token) rank`` per line, by rank."""
    return "".join(f"{base64.b64encode(tok).decode('ascii')} {rank}\n"
                   for tok, rank in sorted(mergeable_ranks.items(), key=lambda kv: kv[1]))


def hf_pre_tokenizer(scanner_name: str, pattern: str) -> dict:
    """The HF pre-tokenizer whose pieces the training reproduced."""
    if scanner_name == "gpt2":
        return {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    return {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
    ]}


def hf_json(trained: "TrainedBPE") -> dict:
    """The tokenizer.json of `trained`, as HF's ``Tokenizer.train`` would save it, with a
    ByteLevel decoder so that decoding gives the text back."""
    vocab: dict[str, int] = {tok: i for tok, i in trained.special_tokens.items()}
    for tok, i in trained.mergeable_ranks.items():
        vocab.setdefault(bytes_to_str(tok), i)
    added = [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for t, i in trained.special_tokens.items()]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": hf_pre_tokenizer(trained.scanner_name, trained.pattern),
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {
            "type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
            "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
            "ignore_merges": False,
            "vocab": dict(sorted(vocab.items(), key=lambda kv: kv[1])),
            "merges": [[bytes_to_str(a), bytes_to_str(b)] for a, b in trained.merges],
        },
    }


def write_atomic(path: str | os.PathLike, text: str) -> None:
    """Writes text (UTF-8) to path through a temporary file and a rename."""
    path = os.fspath(path)
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def hf_text(trained: "TrainedBPE") -> str:
    return json.dumps(hf_json(trained), ensure_ascii=False, indent=2)
