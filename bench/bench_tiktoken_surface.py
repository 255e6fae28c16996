"""scantok next to tiktoken on the rest of tiktoken's API, in one run.

    python bench/bench_tiktoken_surface.py [--repeat 3] [--encoding o200k_base]

* ``encode_with_unstable`` on 40 corpus windows (200-400 characters, half of them ending in
  whitespace, the expensive case), and ``_encode_bytes`` on 200 corpus slices of 4 KB with
  invalid UTF-8 at the end; each library warmed on other windows of the same corpora first;
* ``load_tiktoken_bpe`` of the encoding's rank file from a local path (caching disabled);
* medians of ``--repeat`` interleaved runs (scantok, tiktoken, scantok, ...), with the ratio
  tiktoken time / scantok time (> 1: scantok faster); outputs are checked equal.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
CORPUS_DIR = Path(os.environ.get("SCANTOK_CORPUS_DIR", SHARED / "corpus"))
VOCAB_DIR = Path(os.environ.get("SCANTOK_VOCAB_DIR", SHARED / "vocab"))
os.environ.setdefault("SCANTOK_VOCAB_DIR", str(VOCAB_DIR))


def tiktoken_encoding(name: str):
    """tiktoken's encoding, offline: its cache directory filled from the local rank files."""
    import tiktoken
    from tiktoken_ext import openai_public

    from scantok.registry import RANK_FILES

    d = tempfile.mkdtemp(prefix="bench-tiktoken-")
    for file_name, (url, _sha) in RANK_FILES.items():
        shutil.copy(VOCAB_DIR / file_name, Path(d) / hashlib.sha1(url.encode()).hexdigest())
    os.environ["TIKTOKEN_CACHE_DIR"] = d
    try:
        return tiktoken.Encoding(**openai_public.ENCODING_CONSTRUCTORS[name]())
    finally:
        del os.environ["TIKTOKEN_CACHE_DIR"]


def windows(rng: random.Random, corpora: list[str], n: int) -> list[str]:
    out = []
    for i in range(n):
        text = rng.choice(corpora)
        a = rng.randrange(len(text) - 400)
        w = text[a : a + rng.randint(200, 400)].rstrip()
        out.append(w + " " if i % 2 else w)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--encoding", default="o200k_base")
    args = ap.parse_args()

    import scantok
    import scantok.load
    import tiktoken.load

    corpora = [(CORPUS_DIR / f"{c}.txt").read_text(encoding="utf-8") for c in ("en", "code", "multi")]
    rng = random.Random(12)
    s, t = scantok.get_encoding(args.encoding), tiktoken_encoding(args.encoding)
    warm_texts, texts = windows(rng, corpora, 4), windows(rng, corpora, 40)
    raw = [c.encode() for c in corpora]
    slices = []
    for _ in range(200):
        data = rng.choice(raw)
        a = rng.randrange(len(data) - 4096)
        slices.append(data[a : a + 4096] + b"\xe4\xb8")
    rank_file = str(VOCAB_DIR / f"{args.encoding}.tiktoken")

    for enc in (s, t):
        for w in warm_texts:
            enc.encode_with_unstable(w)
        enc._encode_bytes(raw[0][:100_000] + b"\xff")

    def unstable(enc):
        return [enc.encode_with_unstable(w) for w in texts]

    def by_bytes(enc):
        return [enc._encode_bytes(d) for d in slices]

    def unstable_key(results):  # completions compared as sets: tiktoken's order is random
        return [(a, set(map(tuple, b))) for a, b in results]

    cases = {
        "encode_with_unstable (40 windows)": (lambda: unstable(s), lambda: unstable(t), unstable_key),
        "_encode_bytes (200 x 4 KB)": (lambda: by_bytes(s), lambda: by_bytes(t), None),
        "load_tiktoken_bpe (local file)": (lambda: scantok.load.load_tiktoken_bpe(rank_file),
                                           lambda: tiktoken.load.load_tiktoken_bpe(rank_file), None),
    }
    os.environ["TIKTOKEN_CACHE_DIR"] = ""  # both: no cache copy of the local file
    print(f"{args.encoding}, medians of {args.repeat} interleaved runs (shared machine: noisy)")
    print("| case | scantok s | tiktoken s | tiktoken/scantok | same output |")
    print("|---|---|---|---|---|")
    for label, (fs, ft, key) in cases.items():
        ts, tt = [], []
        same = True
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            a = fs()
            t1 = time.perf_counter()
            b = ft()
            t2 = time.perf_counter()
            ts.append(t1 - t0)
            tt.append(t2 - t1)
            same = same and (key(a) == key(b) if key else a == b)
        ms, mt = statistics.median(ts), statistics.median(tt)
        print(f"| {label} | {ms:.3f} | {mt:.3f} | {mt / ms:.2f} | {'yes' if same else 'NO'} |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
