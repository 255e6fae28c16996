"""Long differential campaign for tiktoken's byte and unstable-tail APIs against the pinned oracle.

    python tests/fuzz_tiktoken_surface.py --seconds 300       # what `make fuzz` runs
    python tests/fuzz_tiktoken_surface.py --examples 5000 --seed 3

``_encode_bytes``: random bytes (hard UTF-8 fragments mixed with invalid sequences, invalid
bytes at the end in half of them) and corpus windows cut at any byte. ``encode_with_unstable``
(about one example in eight: its completions take tens of milliseconds in both libraries):
hard text and corpus windows ending anywhere, with special tokens spliced in, under
``allowed_special="all"`` and the default. Rotates over every BPE encoding; prints the volume
and any mismatch (with the input's repr); exit status 1 if any.
"""
from __future__ import annotations

import random
import sys
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))

import scantok  # noqa: E402
from fuzz_setup import campaign_args  # noqa: E402

from strategies import INVALID_UTF8, random_bytes, random_text  # noqa: E402
from test_encoding_oracle import ENCODING_NAMES, SPECIAL_FRAGMENTS, tiktoken_encoding, vocab_dir  # noqa: E402


def main() -> int:
    args = campaign_args()
    vocab_dir()
    rng = random.Random(args.seed)
    encs = {n: (scantok.get_encoding(n), tiktoken_encoding(n)) for n in ENCODING_NAMES}
    corpus_dir = Path(__import__("os").environ.get("SCANTOK_CORPUS_DIR", TESTS.parent.parent / "shared" / "corpus"))
    corpora = [p.read_bytes() for c in ("en", "code", "multi") if (p := corpus_dir / f"{c}.txt").exists()]
    counts = {"encode_bytes": 0, "encode_with_unstable": 0}
    mismatches: list[str] = []
    start = time.time()
    i = 0
    while True:
        if args.examples is not None and i >= args.examples:
            break
        if args.seconds is not None and time.time() - start >= args.seconds:
            break
        name = ENCODING_NAMES[i % len(ENCODING_NAMES)]
        e, t = encs[name]
        i += 1
        if i % 8:
            if corpora and rng.random() < 0.4:
                data = rng.choice(corpora)
                a = rng.randrange(len(data))
                data = data[a : a + rng.randint(1, 4000)]
            else:
                data = random_bytes(rng, 40)
            if rng.random() < 0.5:
                data += b"".join(rng.choices(INVALID_UTF8, k=rng.randint(1, 3)))
            counts["encode_bytes"] += 1
            if e._encode_bytes(data) != t._encode_bytes(data):
                mismatches.append(f"{name} _encode_bytes({data!r})")
            continue
        if corpora and rng.random() < 0.5:
            text = rng.choice(corpora).decode("utf-8", "replace")
            a = rng.randrange(len(text))
            text = text[a : a + rng.randint(1, 300)]
        else:
            text = random_text(rng, 12, surrogates=False)
        if rng.random() < 0.3:
            k = rng.randint(0, len(text))
            text = text[:k] + rng.choice(SPECIAL_FRAGMENTS) + text[k:]
        for kw in ({"allowed_special": "all"}, {}):
            counts["encode_with_unstable"] += 1
            try:
                want = t.encode_with_unstable(text, **kw)
            except ValueError as exc:
                try:
                    e.encode_with_unstable(text, **kw)
                    mismatches.append(f"{name} encode_with_unstable({text!r}, {kw}) did not raise {exc}")
                except ValueError as got:
                    if str(got) != str(exc):
                        mismatches.append(f"{name} encode_with_unstable({text!r}, {kw}): message differs")
                continue
            got = e.encode_with_unstable(text, **kw)
            if got[0] != want[0] or {tuple(c) for c in got[1]} != {tuple(c) for c in want[1]}:
                mismatches.append(f"{name} encode_with_unstable({text!r}, {kw})")
    took = time.time() - start
    print(f"seed {args.seed}: {i} examples in {took:.0f} s; checks: {counts}; mismatches: {len(mismatches)}")
    for m in mismatches[:50]:
        print("MISMATCH", m)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
