"""Long differential fuzz campaign: every BPE encoding against the pinned tiktoken oracle.

    python tests/fuzz_encoder.py --seconds 600            # what `make fuzz` runs
    python tests/fuzz_encoder.py --examples 20000 --seed 3

Inputs (a plain ``random`` generator over the ``strategies`` fragment pools): hard text with
lone surrogates and special-token fragments, corpus windows with hard fragments spliced in,
long space-free runs over small alphabets (long merges and the windowed encoder), and texts
that repeat a small vocabulary of words (piece- and pair-cache hits, evictions). Each example
goes to one encoding and one engine path, rotating over all of them, and is checked for
``encode_ordinary``, ``encode_to_numpy``, ``count``, ``encode(allowed_special="all")`` and,
every few examples, ``encode_ordinary_batch`` on 2 threads. Prints the volume and any
mismatch (with the text's repr); exit status 1 if any.
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))

import scantok  # noqa: E402
from scantok._native import lib  # noqa: E402

from fuzz_scanner import available_impls  # noqa: E402
from strategies import random_fragments  # noqa: E402
from test_encoding_oracle import ENCODING_NAMES, SPECIAL_FRAGMENTS, tiktoken_encoding, vocab_dir  # noqa: E402

ALPHABETS = ["ab", "abc ", "abcdefghijklmnopqrstuvwxyz", "aAbB", "0123456789", "日本語の文字", "éèêa", " \n\t",
             "=-*#", "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"]



def _numpy_or_error(encoding, text: str):
    """encode_to_numpy's ids as a list, or "UnicodeEncodeError" (tiktoken's for a lone
    surrogate: its encode_to_numpy, unlike encode, takes the str as it is)."""
    try:
        return encoding.encode_to_numpy(text, disallowed_special=()).tolist()
    except UnicodeEncodeError:
        return "UnicodeEncodeError"

class Campaign:
    def __init__(self, seed: int, corpus_dir: Path):
        self.rng = random.Random(seed)
        self.impls = available_impls()
        self.encs = {n: (scantok.get_encoding(n), tiktoken_encoding(n)) for n in ENCODING_NAMES}
        self.corpora = [p.read_text(encoding="utf-8") for c in ("en", "code", "multi")
                        if (p := corpus_dir / f"{c}.txt").exists()]
        self.examples = 0
        self.checks = 0
        self.shapes: dict[str, int] = {}
        self.mismatches: list[str] = []

    def gen(self) -> tuple[str, str]:
        rng = self.rng
        r = rng.random()
        if r < 0.35:
            frags = random_fragments(rng, rng.randint(0, 60))
            for _ in range(rng.randint(0, 3)):
                frags.insert(rng.randint(0, len(frags)), rng.choice(SPECIAL_FRAGMENTS))
            return "hard", "".join(frags)
        if r < 0.6 and self.corpora:
            corpus = rng.choice(self.corpora)
            a = rng.randrange(len(corpus))
            w = corpus[a:a + rng.randint(1, 6000)]
            cut = rng.randint(0, len(w))
            return "corpus", w[:cut] + "".join(random_fragments(rng, rng.randint(0, 3))) + w[cut:]
        if r < 0.8:
            alphabet = rng.choice(ALPHABETS)
            return "run", "".join(rng.choice(alphabet) for _ in range(rng.choice([50, 300, 2000, 20000])))
        alphabet = rng.choice(ALPHABETS)
        words = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 20))) for _ in range(rng.randint(1, 200))]
        seps = [" ", "  ", "\n", ", ", " " * rng.randint(1, 40)]
        return "words", "".join(rng.choice(words) + rng.choice(seps) for _ in range(rng.randint(1, 3000)))

    def check(self, name: str, text: str) -> str | None:
        enc, ref = self.encs[name]
        want = ref.encode_ordinary(text)
        got = enc.encode_ordinary(text)
        self.checks += 1
        if got != want:
            return "encode_ordinary"
        if _numpy_or_error(enc, text) != _numpy_or_error(ref, text):  # (a lone surrogate raises in both)
            return "encode_to_numpy"
        if enc.count(text, disallowed_special=()) != len(want):
            return "count"
        if enc.encode(text, allowed_special="all") != ref.encode(text, allowed_special="all"):
            return "encode(allowed_special='all')"
        self.checks += 3
        if self.examples % 7 == 0:
            texts = [text[: len(text) // 3], text, "", text[len(text) // 2:]]
            if enc.encode_ordinary_batch(texts, num_threads=2) != [ref.encode_ordinary(t) for t in texts]:
                return "encode_ordinary_batch"
            self.checks += 1
        return None

    def run(self, seconds: float | None, examples: int | None) -> None:
        names = list(self.encs)
        t_end = time.monotonic() + seconds if seconds else None
        while (examples is None or self.examples < examples) and (t_end is None or time.monotonic() < t_end):
            shape, text = self.gen()
            name = names[self.examples % len(names)]
            impl = self.impls[(self.examples // len(names)) % len(self.impls)]
            lib.scantok_force_impl(impl.encode())
            self.examples += 1
            self.shapes[shape] = self.shapes.get(shape, 0) + 1
            what = self.check(name, text)
            if what:
                self.mismatches.append(f"{name} [{impl}] {what} on {text[:300]!r}{'...' if len(text) > 300 else ''}")
                print("MISMATCH:", self.mismatches[-1], flush=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seconds", type=float)
    p.add_argument("--examples", type=int)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--corpus-dir", type=Path, default=TESTS.parent.parent / "shared" / "corpus")
    args = p.parse_args(argv)
    if args.seconds is None and args.examples is None:
        args.seconds = 60
    vocab_dir()
    seed = args.seed if args.seed is not None else random.randrange(2**32)
    c = Campaign(seed, args.corpus_dir)
    t0 = time.monotonic()
    c.run(args.seconds, args.examples)
    shapes = ", ".join(f"{k} {v}" for k, v in sorted(c.shapes.items()))
    print(f"fuzz_encoder: seed {seed}, {c.examples} examples ({shapes}), {c.checks} checks over "
          f"{len(c.encs)} encodings and paths {'/'.join(c.impls)} in {time.monotonic() - t0:.0f} s: "
          f"{len(c.mismatches)} mismatches")
    return 1 if c.mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
