"""Trains code50k with scantok's own trainer and writes the bundled vocabulary
(run by `make train-code50k`; needs `make corpus` first).

The corpus is corpus/out/train.jsonl, one training sequence per document (file), in file order;
the pre-tokenizer is the compiled ``code50k`` scanner (gen/patterns/code50k.toml); the 20
special tokens take ids 0..19, the 256 bytes 20..275 and the merges 276..49999, exactly as
``scantok.train_bpe`` numbers them. Training is deterministic, so the written
``runtime/scantok/data/code50k.stkz`` is byte for byte the committed one: the script says so
by comparing with the pinned SHA-256 (exit status 1 if it differs, 0 with ``--update``, which
prints the new pins instead).
"""
from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from assemble import read_documents  # noqa: E402

VOCAB_SIZE = 50_000


def train(train_file: Path, num_threads: int | None = None):
    import scantok
    from scantok.code import CODE_SPECIAL_TOKENS

    specials = list(CODE_SPECIAL_TOKENS)
    trained = scantok.train_bpe(read_documents(train_file), vocab_size=VOCAB_SIZE, pattern="code50k",
                                special_tokens=specials, num_threads=num_threads)
    if trained.special_tokens != CODE_SPECIAL_TOKENS:
        raise SystemExit(f"special tokens came out as {trained.special_tokens}")
    ranks = trained.mergeable_ranks
    if sorted(ranks.values()) != list(range(len(CODE_SPECIAL_TOKENS), VOCAB_SIZE)):
        raise SystemExit("the trained ranks are not 20..49999")
    if sorted(t for t, r in ranks.items() if r < 276) != [bytes([b]) for b in range(256)]:
        raise SystemExit("ids 20..275 are not the 256 bytes")
    # tiktoken's rule must split each token into the pair whose merge made it: then the merge
    # list is recoverable from the ranks (tests/test_code50k.py relies on it)
    sys.path.insert(0, str(HERE.parent / "tests"))
    from merge_bpe_reference import recover_merges

    recovered = recover_merges(ranks)
    differ = sum(a != b for a, b in zip(recovered, trained.merges))
    if differ or len(recovered) != len(trained.merges):
        raise SystemExit(f"{differ} tokens split by rank differently from their merge")
    return trained


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--train", type=Path, default=HERE / "out" / "train.jsonl")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--update", action="store_true", help="accept a different result and print the new pins")
    ap.add_argument("--merges-out", type=Path, default=HERE / "out" / "code50k.merges",
                    help="where the merge list goes (used by the merge-order test; not committed)")
    args = ap.parse_args(argv)
    from scantok import bundled
    from scantok.registry import OWN_RANK_FILES
    from scantok.vocab import dump_tiktoken_bpe

    t0 = time.perf_counter()
    trained = train(args.train, args.threads)
    print(f"trained {len(trained.merges)} merges in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    packed = bundled.pack(trained.mergeable_ranks)
    out = bundled.DATA_DIR / "code50k.stkz"
    out.write_bytes(packed)
    args.merges_out.parent.mkdir(parents=True, exist_ok=True)
    args.merges_out.write_bytes(b"".join(a.hex().encode() + b" " + b.hex().encode() + b"\n" for a, b in trained.merges))
    stkz_sha = hashlib.sha256(packed).hexdigest()
    text_sha = hashlib.sha256(dump_tiktoken_bpe(trained.mergeable_ranks)).hexdigest()
    pinned = (bundled.BUNDLED.get("code50k.tiktoken", (None, None))[1], OWN_RANK_FILES.get("code50k.tiktoken"))
    print(f"{out}: {len(packed)} bytes, SHA-256 {stkz_sha}; .tiktoken text SHA-256 {text_sha}")
    if (stkz_sha, text_sha) == pinned:
        print("identical to the committed, pinned vocabulary")
        return 0
    print(f"DIFFERS from the pins {pinned}" + ("" if args.update else " (use --update to accept)"))
    return 0 if args.update else 1


if __name__ == "__main__":
    raise SystemExit(main())
