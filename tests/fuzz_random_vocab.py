"""Long differential campaign for the BPE encoder on vocabularies no training would make.

    python tests/fuzz_random_vocab.py --seconds 600          # what `make fuzz` runs
    python tests/fuzz_random_vocab.py --examples 500 --seed 3

Each example is a random tiktoken-style vocabulary: every byte, and byte strings cut anywhere
from random text over a few one- to three-byte characters (so that tokens straddle characters
and hold them whole), ranked in random order, so that a token need not merge back into itself.
It is loaded into a scantok.Encoding and a tiktoken.Encoding under one of a few patterns, with
the encoder's switches drawn at random: the seeded piece cache, pre-merged characters, the size
of the piece cache (1 KiB of entries, so that sets are shared and seeds are few, to the
default), tiny windows for long pieces, and a short guess for runs of one byte. Texts: words of
the alphabet with spaces (cache hits and first sights, pieces of 2-4 bytes merged by rule),
long runs without spaces (the windows and their filter), runs of one byte, and every token's
own bytes. Checked: encode_ordinary, encode_ordinary_to_numpy, count, _encode_single_piece and
encode_ordinary_batch on 2 threads. Prints the volume and any mismatch (with the vocabulary's
seed, the switches and the text); exit status 1 if any.
"""
from __future__ import annotations

import random
import sys
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))

import tiktoken  # noqa: E402

import scantok  # noqa: E402
from fuzz_setup import campaign_args  # noqa: E402
from scantok._native import lib  # noqa: E402
from strategies import random_vocabulary  # noqa: E402

ALPHABETS = [
    ["a", "b", "c"],
    ["a", "b", "c", "d", "e", "f", "g", "h"],
    ["a", "b", " ", "é", "ü", "п", "р", "日", "本", "€"],
    ["x", "y", "1", "2", "=", "日"],
]
PATTERNS = [
    r"\S+|\s+",
    r" ?\S+|\s+(?!\S)|\s+",
    r"[^\s\d]+|\d{1,3}|\s+",
]


def texts_for(rng: random.Random, alphabet: list[str], ranks: dict[bytes, int]) -> list[str]:
    words = ["".join(rng.choices(alphabet, k=rng.randint(1, 6))) for _ in range(40)]
    out = [" ".join(rng.choices(words, k=rng.randint(1, 200)))]
    out.append("".join(rng.choices(alphabet, k=rng.randint(100, 3000))))
    out.append(rng.choice(alphabet) * rng.randint(200, 2000) + rng.choice(alphabet))
    toks = [t.decode("utf-8", "ignore") for t in ranks if len(t) > 1]
    out.append(" ".join(rng.sample(toks, min(len(toks), 60))))
    out.append("".join(rng.choices(alphabet, k=rng.randint(1, 5))))
    return out


class Switches:
    """The encoder's knobs for one example, set on entry and restored on exit."""

    def __init__(self, rng: random.Random):
        self.seed = rng.random() < 0.7
        self.premerge = rng.random() < 0.7
        self.cache_bytes = rng.choice([1 << 15, 1 << 17, None])
        self.window = rng.choice([None, (24, 8), (40, 16)])
        self.run_guess = rng.choice([0, 0, 3, 16])

    def __repr__(self):
        return (f"seed={self.seed} premerge={self.premerge} cache_bytes={self.cache_bytes} "
                f"window={self.window} run_guess={self.run_guess}")

    def __enter__(self):
        self.prev_seed = lib.bpe_set_piece_seed(int(self.seed))
        self.prev_premerge = lib.bpe_set_premerge(int(self.premerge))
        self.prev_cache = lib.bpe_piece_cache_bytes()
        if self.cache_bytes is not None:
            lib.bpe_set_piece_cache_bytes(self.cache_bytes)
        if self.window:
            lib.bpe_set_long_window(*self.window)
        lib.bpe_set_run_guess(self.run_guess)
        return self

    def __exit__(self, *exc):
        lib.bpe_set_piece_seed(self.prev_seed)
        lib.bpe_set_premerge(self.prev_premerge)
        lib.bpe_set_piece_cache_bytes(self.prev_cache)
        lib.bpe_set_long_window(0, 0)  # the defaults
        lib.bpe_set_run_guess(0)


def main(argv=None) -> int:
    args = campaign_args(argv)
    rng = random.Random(args.seed)
    counts = {"vocabularies": 0, "texts": 0, "calls": 0}
    mismatches: list[str] = []
    start = time.time()
    while True:
        if args.examples is not None and counts["vocabularies"] >= args.examples:
            break
        if args.seconds is not None and time.time() - start >= args.seconds:
            break
        vseed = rng.getrandbits(32)
        vrng = random.Random(vseed)
        alphabet = vrng.choice(ALPHABETS)
        ranks = random_vocabulary(vrng, alphabet, tokens=(10, 800), max_len=9, cut_from=10)
        pat = vrng.choice(PATTERNS)
        counts["vocabularies"] += 1
        sw = Switches(vrng)
        name = f"v{vseed}"
        with sw:
            ref = tiktoken.Encoding(name, pat_str=pat, mergeable_ranks=ranks, special_tokens={})
            enc = scantok.Encoding(name, pat_str=pat, mergeable_ranks=ranks, special_tokens={})
            texts = texts_for(vrng, alphabet, ranks)
            wants = [ref.encode_ordinary(t) for t in texts]
            for rep in range(2):  # first sights, then cache hits
                for text, want in zip(texts, wants):
                    counts["texts"] += 1
                    where = f"vocabulary seed {vseed}, {sw}, pass {rep}, text {text[:200]!r}"
                    got = {
                        "encode_ordinary": enc.encode_ordinary(text),
                        "numpy": enc.encode_ordinary_to_numpy(text).tolist(),
                    }
                    counts["calls"] += 3
                    for what, ids in got.items():
                        if ids != want:
                            mismatches.append(f"{what}: {where}")
                    if enc.count(text) != len(want):
                        mismatches.append(f"count: {where}")
                    if len(text) < 300:
                        piece = text.encode()
                        counts["calls"] += 1
                        if enc._encode_single_piece(piece) != ref._encode_single_piece(piece):
                            mismatches.append(f"_encode_single_piece: {where}")
            counts["calls"] += 1
            if enc.encode_ordinary_batch(texts * 40, num_threads=2) != wants * 40:
                mismatches.append(f"encode_ordinary_batch: vocabulary seed {vseed}, {sw}")
    took = time.time() - start
    print(f"seed {args.seed}: {counts['vocabularies']} vocabularies, {counts['texts']} texts, "
          f"{counts['calls']} calls in {took:.0f} s; mismatches: {len(mismatches)}")
    for m in mismatches[:50]:
        print("MISMATCH", m)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
