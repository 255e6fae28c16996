"""Chooses code50k's pre-tokenizer by measurement: for each candidate pattern, trains a
byte-level BPE of the same size on corpus/out/train.jsonl and reports bytes per token on the
held-out split (code and prose separately) and on the shared corpora (never trained on).

HF ``tokenizers``' BpeTrainer does the training here (the comparison only needs the same
trainer for every candidate; the shipped vocabulary is trained by scantok's own trainer), with
``Split(Regex(P), "isolated")`` + ``ByteLevel(use_regex=False)``, i.e. the pattern as
pre-tokenizer. Usage: ``python corpus/compare_pretokenizers.py [--vocab 50000] [NAME ...]``.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from assemble import read_documents  # noqa: E402

WORD_LOWER = r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
WORD_UPPER = r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
NUMBER = r"0[xX][0-9a-fA-F]+|0[bB][01]+|\p{N}{1,3}"
BRACKETS = r"[()\[\]{}]"

CANDIDATES: dict[str, str] = {
    # tiktoken's o200k_base pattern, the reference point
    "o200k": "|".join([WORD_LOWER, WORD_UPPER, r"\p{N}{1,3}", r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
                       r"\s*[\r\n]+", r"\s+(?!\S)", r"\s+"]),
    # newline run + the next line's indentation as one piece; hex/binary numbers; operator runs
    "nl_indent": "|".join([WORD_LOWER, WORD_UPPER, NUMBER, r" ?[^\s\p{L}\p{N}]+",
                           r"\s*[\r\n]+[ \t]*", r"\s+(?!\S)", r"\s+"]),
    # newlines apart, the indentation run whole (the next word has no space before it)
    "indent_run": "|".join([WORD_LOWER, WORD_UPPER, NUMBER, r" ?[^\s\p{L}\p{N}]+",
                            r"\s*[\r\n]+", r"[ \t]+"]),
    # as punct_nl_indent, numbers only as o200k has them (no 0x/0b pieces)
    "punct_nl_indent_dec": "|".join([WORD_LOWER, WORD_UPPER, r"\p{N}{1,3}", r" ?[^\s\p{L}\p{N}]+(?:[\r\n]+[ \t]*)?",
                                     r"\s*[\r\n]+[ \t]*", r"\s+(?!\S)", r"\s+"]),
    # as nl_indent, with brackets apart from operator runs
    "nl_indent_brackets": "|".join([WORD_LOWER, WORD_UPPER, NUMBER, " ?" + BRACKETS,
                                    r" ?[^\s\p{L}\p{N}()\[\]{}]+", r"\s*[\r\n]+[ \t]*",
                                    r"\s+(?!\S)", r"\s+"]),
    # as nl_indent, words take only a space (not any punctuation) in front
    "nl_indent_space_words": "|".join([
        r" ?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        r" ?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        NUMBER, r" ?[^\s\p{L}\p{N}]+", r"\s*[\r\n]+[ \t]*", r"\s+(?!\S)", r"\s+"]),
    # as nl_indent, and an operator run takes the line end and the next line's indentation
    "punct_nl_indent": "|".join([WORD_LOWER, WORD_UPPER, NUMBER, r" ?[^\s\p{L}\p{N}]+(?:[\r\n]+[ \t]*)?",
                                 r"\s*[\r\n]+[ \t]*", r"\s+(?!\S)", r"\s+"]),
    # o200k's operator runs (with line ends and '/'), line ends then indentation as one piece
    "o200k_nl_indent": "|".join([WORD_LOWER, WORD_UPPER, NUMBER, r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
                                 r"\s*[\r\n]+[ \t]*", r"\s+(?!\S)", r"\s+"]),
}

SPECIALS = ["<PAD>", "<EOS>", "<BOS>", "<FILE>", "</FILE>", "<EDIT_START>", "<EDIT_END>", "<DELETE>"] + [
    f"<|reserved_{i}|>" for i in range(8, 20)]


def eval_sets(out: Path, shared: Path) -> dict[str, list[str]]:
    code_langs = {"python", "c", "cpp", "go", "rust", "js", "ts", "shell"}
    sets = {
        "heldout code": list(read_documents(out / "heldout.jsonl", code_langs)),
        "heldout prose": list(read_documents(out / "heldout.jsonl", {"prose"})),
    }
    for name in ("code", "en"):
        p = shared / f"{name}.txt"
        if p.exists():
            sets[f"shared {name}.txt"] = [p.read_text(encoding="utf-8", errors="surrogateescape")]
    # every 10th C header under /usr/include (evaluation only; never trained on)
    headers = sorted(str(Path(d, f)) for d, _dirs, files in os.walk("/usr/include") for f in files if f.endswith(".h"))
    sets["usr/include 1/10"] = [Path(h).read_text(encoding="utf-8", errors="replace") for h in headers[::10]]
    return sets


def train(pattern: str, vocab_size: int, train_file: Path):
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Split(Regex(pattern), "isolated"), pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIALS, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(read_documents(train_file), trainer=trainer)
    return tok


def bytes_per_token(tok, docs: list[str]) -> float:
    nbytes = sum(len(d.encode("utf-8", "surrogatepass")) for d in docs)
    ntok = sum(len(e.ids) for e in tok.encode_batch(docs, add_special_tokens=False))
    return nbytes / ntok


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", default=list(CANDIDATES))
    ap.add_argument("--vocab", type=int, default=50000)
    ap.add_argument("--out", type=Path, default=HERE / "out")
    ap.add_argument("--shared", type=Path, default=HERE.parent.parent / "shared" / "corpus")
    args = ap.parse_args(argv)
    sets = eval_sets(args.out, args.shared)
    rows = []
    for name in args.names:
        t0 = time.perf_counter()
        tok = train(CANDIDATES[name], args.vocab, args.out / "train.jsonl")
        t1 = time.perf_counter()
        row = {"candidate": name, "train_s": round(t1 - t0, 1)}
        row.update({k: round(bytes_per_token(tok, v), 4) for k, v in sets.items()})
        rows.append(row)
        print(json.dumps(row), flush=True)
    cols = ["candidate"] + list(sets) + ["train_s"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join(str(r[c]) for c in cols) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
