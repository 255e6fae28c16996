"""code50k against the OpenAI encodings: bytes per token on text code50k never saw, encode speed
next to o200k_base in the same run, and get_encoding("code50k") in a fresh process.

Text sets: the held-out split of code50k's corpus (corpus/out/heldout.jsonl, by language and
together; `make corpus` builds it), ../shared/corpus/{code,en}.txt (not in the training corpus)
and the C headers under /usr/include (evaluation only, never trained on).

Usage: python bench/bench_code50k.py [--repeat 5] [--markdown]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "corpus"))

ENCODINGS = ["code50k", "r50k_base", "p50k_base", "cl100k_base", "o200k_base"]
CODE_LANGS = ["python", "c", "cpp", "go", "rust", "js", "ts", "shell"]


def text_sets(shared: Path) -> dict[str, list[str]]:
    from assemble import read_documents

    heldout = ROOT / "corpus" / "out" / "heldout.jsonl"
    sets: dict[str, list[str]] = {}
    if heldout.exists():
        sets["held-out code (all)"] = list(read_documents(heldout, set(CODE_LANGS)))
        sets["held-out prose"] = list(read_documents(heldout, {"prose"}))
        for lang in CODE_LANGS:
            sets[f"held-out {lang}"] = list(read_documents(heldout, {lang}))
    else:
        print(f"# {heldout} is absent: run `make corpus` for the held-out rows", file=sys.stderr)
    for name in ("code", "en", "multi"):
        p = shared / f"{name}.txt"
        if p.exists():
            sets[f"shared {name}.txt"] = [p.read_text(encoding="utf-8", errors="surrogateescape")]
    headers = []
    for dirpath, dirs, files in os.walk("/usr/include"):
        dirs.sort()
        for f in sorted(files):
            if f.endswith((".h", ".hpp", ".hh")) or "/c++/" in dirpath:
                try:
                    headers.append(Path(dirpath, f).read_text(encoding="utf-8", errors="surrogateescape"))
                except OSError:
                    pass
    if headers:
        sets["/usr/include headers"] = headers
    return sets


def nbytes(docs: list[str]) -> int:
    return sum(len(d.encode("utf-8", "surrogatepass")) for d in docs)


def compression(sets, encodings) -> dict[str, dict[str, float]]:
    out = {}
    for set_name, docs in sets.items():
        b = nbytes(docs)
        out[set_name] = {n: b / sum(map(len, e.encode_ordinary_batch(docs, num_threads=1))) for n, e in encodings.items()}
    return out


def speed(docs: list[str], repeat: int) -> dict[str, float]:
    """MB/s of encode_ordinary for code50k and o200k_base, fresh instances, warmed on the first
    tenth of the text and timed on the rest, runs interleaved; median of `repeat`."""
    from scantok.registry import _load_encoding

    text = "".join(docs)
    cut = len(text) // 10
    warm, timed = text[:cut], text[cut:]
    mb = len(timed.encode("utf-8", "surrogatepass")) / 1e6
    runs: dict[str, list[float]] = {"code50k": [], "o200k_base": []}
    for _ in range(repeat):
        for name in runs:
            enc = _load_encoding(name)
            enc.encode_ordinary(warm)
            t0 = time.perf_counter()
            enc.encode_ordinary(timed)
            runs[name].append(mb / (time.perf_counter() - t0))
    return {n: statistics.median(v) for n, v in runs.items()}


def fresh_load_ms(name: str, repeat: int) -> dict[str, float]:
    """get_encoding(name) in new processes (after `import scantok`): the first (empty scantok
    cache: the bundle is read and the tables built) and later ones (the built-table image is
    mmap'ed); wall and CPU time, since CPU time is less disturbed by a loaded machine."""
    code = ("import time, scantok; t = time.perf_counter(); c = time.process_time(); scantok.get_encoding(%r); "
            "print((time.perf_counter() - t) * 1e3, (time.process_time() - c) * 1e3)" % name)
    with tempfile.TemporaryDirectory() as cache:
        env = {k: v for k, v in os.environ.items() if k != "SCANTOK_VOCAB_DIR"}
        env.update(SCANTOK_CACHE_DIR=cache, SCANTOK_OFFLINE="1")
        run = lambda: [float(x) for x in subprocess.run(  # noqa: E731
            [sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True).stdout.split()]
        first = run()
        warm = [run() for _ in range(repeat)]
    return {"first wall": first[0], "first cpu": first[1],
            "warm wall median": statistics.median(w for w, _c in warm), "warm wall min": min(w for w, _c in warm),
            "warm cpu median": statistics.median(c for _w, c in warm)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "corpus")
    args = ap.parse_args(argv)
    import scantok

    encodings = {n: scantok.get_encoding(n) for n in ENCODINGS}
    sets = text_sets(args.shared)
    table = compression(sets, encodings)
    print("## bytes per token (higher is better)\n")
    print("| text | MB | " + " | ".join(ENCODINGS) + " | code50k / r50k | code50k / cl100k |")
    print("|---|---:|" + "---:|" * (len(ENCODINGS) + 2))
    for set_name, row in table.items():
        cells = " | ".join(f"{row[n]:.3f}" for n in ENCODINGS)
        print(f"| {set_name} | {nbytes(sets[set_name]) / 1e6:.2f} | {cells} | "
              f"{row['code50k'] / row['r50k_base']:.2f}x | {row['code50k'] / row['cl100k_base']:.2f}x |")
    print("\n## encode_ordinary speed, MB/s (median of %d, interleaved, machine shared)\n" % args.repeat)
    print("| text | code50k | o200k_base | ratio |")
    print("|---|---:|---:|---:|")
    for set_name in ("held-out code (all)", "held-out prose", "shared code.txt", "shared en.txt"):
        if set_name in sets:
            s = speed(sets[set_name], args.repeat)
            print(f"| {set_name} | {s['code50k']:.1f} | {s['o200k_base']:.1f} | {s['code50k'] / s['o200k_base']:.2f}x |")
    print("\n## get_encoding in a fresh process, ms\n")
    for name in ("code50k", "o200k_base"):
        print(f"- {name}: {json.dumps({k: round(v, 1) for k, v in fresh_load_ms(name, args.repeat).items()})}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
