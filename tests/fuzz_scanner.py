"""Long differential fuzz campaign: every shipped scanner against the pinned regex oracle.

    python tests/fuzz_scanner.py --seconds 600            # what `make fuzz` runs
    python tests/fuzz_scanner.py --examples 100000 --seed 7 --jobs 2

Inputs come from the same fragment pools as ``strategies.hard_text``/``hard_bytes`` (a plain
``random`` generator: ~50x faster than hypothesis), in three shapes: hard text (with lone
surrogates), bytes with invalid UTF-8, and windows of the corpora with hard fragments spliced in.
Each example is checked on every scanner, on an engine path that rotates over the available ones
(scalar/sse2/avx2), for ``split``/``split_bytes`` == oracle, ``count``, the ``offsets``, the
piece starts alone (the mode the count lanes join with) and, at a random cut, the SCANTOK_PARTIAL
contract.  A mismatch is shrunk (fragments, then characters) and
printed as a minimal repro.  Prints the number of examples and mismatches; exit status 1 if any.
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import random
import sys
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))

import scantok  # noqa: E402
from scantok._native import ffi, lib  # noqa: E402

from shrinking import ddmin  # noqa: E402
from strategies import (SNIPPETS, check_oracle_version, oracle, oracle_cannot_judge, oracle_split_bytes,  # noqa: E402
                        random_byte_fragments, random_fragments, utf8_ends)

SURROGATEPASS, PARTIAL = 1, 2
IMPLS = ("scalar", "sse2", "avx2")


def available_impls() -> list[str]:
    orig = ffi.string(lib.scantok_impl_name())
    out = [i for i in IMPLS if lib.scantok_force_impl(i.encode()) == 0]
    lib.scantok_force_impl(orig)
    return out


def c_scan(dfa, data: bytes, flags: int):
    n = len(data)
    starts = ffi.new("uint32_t[]", max(n, 1))
    ends = ffi.new("uint32_t[]", max(n, 1))
    consumed = ffi.new("size_t *")
    k = lib.scantok_scan(dfa, ffi.from_buffer(data), n, flags, starts, ends, consumed)
    return [(starts[i], ends[i]) for i in range(k)], consumed[0]


def c_starts(dfa, data: bytes, flags: int) -> list[int]:
    """Piece starts from the engine's starts-only mode (the count lanes' join scans)."""
    starts = ffi.new("uint32_t[]", len(data) + 8)
    consumed = ffi.new("size_t *")
    k = lib.scantok_scan(dfa, ffi.from_buffer(data), len(data), flags, starts, ffi.NULL, consumed)
    return list(starts[0:k])


def check_text(sc, text: str, cut: float) -> str | None:
    """None if the scanner agrees with the oracle on `text`, else a description."""
    if oracle_cannot_judge(sc, text):
        return None
    want_spans = [m.span() for m in oracle(sc.pattern).finditer(text)]
    want = [text[a:b] for a, b in want_spans]
    got = sc.split(text)
    if got != want:
        return f"split: got {got!r}\n        want {want!r}"
    if sc.count(text) != len(want):
        return f"count: got {sc.count(text)} want {len(want)}"
    offs = sc.offsets(text).tolist()
    if offs != utf8_ends(text, want_spans):
        return f"offsets: got {offs} want {utf8_ends(text, want_spans)}"
    data = text.encode("utf-8", "surrogatepass")
    return check_partial(sc, data, SURROGATEPASS, cut)


def check_bytes(sc, data: bytes, cut: float) -> str | None:
    if oracle_cannot_judge(sc, data.decode("utf-8", "surrogateescape")):
        return None
    want = oracle_split_bytes(sc.pattern, data)
    got = sc.split_bytes(data)
    if got != want:
        return f"split_bytes: got {got!r}\n              want {want!r}"
    starts = c_starts(sc._dfa, data, 0)
    if starts != [a for a, _ in sc.byte_spans(data)]:
        return f"starts only: got {starts} want {[a for a, _ in sc.byte_spans(data)]}"
    return check_partial(sc, data, 0, cut)


def check_partial(sc, data: bytes, flags: int, cut: float) -> str | None:
    full, _ = c_scan(sc._dfa, data, flags)
    k = int(cut * (len(data) + 1))
    part, consumed = c_scan(sc._dfa, data[:k], flags | PARTIAL)
    expect = [p for p in full if p[0] < consumed]
    if consumed > k or part != expect or any(b > consumed for _, b in part):
        return (f"PARTIAL cut at byte {k}: consumed={consumed} pieces={part} "
                f"but the full-text pieces before it are {expect}")
    return None


def shrink(frags: list, fails) -> list:
    """Greedy delta debugging: drop fragments, then split fragments into characters and drop."""
    frags = ddmin(frags, fails)
    if frags and isinstance(frags[0], bytes):
        units = [bytes([b]) for f in frags for b in f]
    else:
        units = [c for f in frags for c in f]
    return ddmin(units, fails)


class Campaign:
    def __init__(self, seed: int, scanners: list[str], corpus_dir: Path):
        self.rng = random.Random(seed)
        self.scanners = [scantok.scanner(n) for n in scanners]
        self.impls = available_impls()
        self.corpora = []
        for c in ("en", "code", "multi"):
            p = corpus_dir / f"{c}.txt"
            if p.exists():
                self.corpora.append(p.read_text(encoding="utf-8"))
        self.examples = {"text": 0, "bytes": 0, "corpus": 0}
        self.checks = 0
        self.mismatches: list[str] = []
        self.seen: set = set()

    def gen(self):
        r = self.rng.random()
        if r < 0.5 or (r >= 0.8 and not self.corpora):
            return "text", random_fragments(self.rng, self.rng.randint(0, 60))
        if r < 0.8:
            return "bytes", random_byte_fragments(self.rng, self.rng.randint(0, 60))
        corpus = self.rng.choice(self.corpora)
        a = self.rng.randrange(len(corpus))
        window = corpus[a:a + self.rng.randint(1, 1500)]
        frags = []
        pos = 0
        for cut in sorted(self.rng.sample(range(len(window) + 1), min(len(window) + 1, 4))):
            frags.append(window[pos:cut])
            frags.extend(random_fragments(self.rng, self.rng.randint(0, 3)) +
                         ([self.rng.choice(SNIPPETS)] if self.rng.random() < 0.3 else []))
            pos = cut
        frags.append(window[pos:])
        return "corpus", frags

    def one(self):
        kind, frags = self.gen()
        self.examples[kind] += 1
        impl = self.impls[sum(self.examples.values()) % len(self.impls)]
        assert lib.scantok_force_impl(impl.encode()) == 0
        cut = self.rng.random()
        is_bytes = kind == "bytes"
        joiner = b"".join if is_bytes else "".join
        check = check_bytes if is_bytes else check_text
        for sc in self.scanners:
            self.checks += 1
            err = check(sc, joiner(frags), cut)
            if err is None:
                continue
            small = shrink(frags, lambda fs: check(sc, joiner(fs), cut) is not None)
            x = joiner(small)
            key = (sc.name, x)
            if key in self.seen:
                continue
            self.seen.add(key)
            msg = (f"MISMATCH scanner={sc.name} impl={impl} kind={kind} cut={cut:.3f}\n"
                   f"  minimal input: {x!r}\n  {check(sc, x, cut)}")
            self.mismatches.append(msg)
            print(msg, flush=True)


def worker(args) -> tuple[dict, int, list[str]]:
    seed, scanners, corpus_dir, deadline, max_examples = args
    c = Campaign(seed, scanners, Path(corpus_dir))
    n = 0
    while time.time() < deadline and n < max_examples and len(c.mismatches) < 50:
        c.one()
        n += 1
    return c.examples, c.checks, c.mismatches


def main() -> int:
    ap = argparse.ArgumentParser(description="scanner differential fuzz campaign")
    ap.add_argument("--seconds", type=float, default=float(os.environ.get("FUZZ_SECONDS", 600)))
    ap.add_argument("--examples", type=int, default=10**12, help="stop after this many per job")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("FUZZ_JOBS", 1)))
    ap.add_argument("--scanners", default="", help="comma-separated (default: all shipped)")
    ap.add_argument("--corpus-dir", default=os.environ.get(
        "SCANTOK_CORPUS_DIR", str(TESTS.parent.parent / "shared" / "corpus")))
    args = ap.parse_args()
    check_oracle_version()
    seed = args.seed if args.seed is not None else random.randrange(2**32)
    names = [n for n in args.scanners.split(",") if n] or scantok.scanners()
    deadline = time.time() + args.seconds
    print(f"fuzz: seed={seed} jobs={args.jobs} scanners={names} impls={available_impls()} "
          f"for {args.seconds:.0f}s", flush=True)
    t0 = time.time()
    jobs = [(seed + i, names, args.corpus_dir, deadline, args.examples) for i in range(args.jobs)]
    if args.jobs == 1:
        results = [worker(jobs[0])]
    else:
        with mp.get_context("fork").Pool(args.jobs) as pool:
            results = pool.map(worker, jobs)
    examples = {k: sum(r[0][k] for r in results) for k in results[0][0]}
    checks = sum(r[1] for r in results)
    mismatches = [m for r in results for m in r[2]]
    total = sum(examples.values())
    print(f"fuzz: {total} examples ({', '.join(f'{k}: {v}' for k, v in examples.items())}) "
          f"x {len(names)} scanners = {checks} checks in {time.time() - t0:.0f}s; "
          f"mismatches: {len(mismatches)}", flush=True)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
