"""scantok.compile: compile time, load from the disk cache, and scan speed of the compiled tables.

1. Compile time of tiktoken-sized patterns (o200k, cl100k, Llama 3, Qwen2, DeepSeek V3's three
   Split regexes in the onig flavor), each in a fresh process with an empty cache: "first"
   is ``scantok.compile`` including the compiler's import and the Unicode tables' load, "warm"
   the same pattern compiled again in that process with the in-process and disk caches bypassed.
   Target <= 200 ms.
2. Load from the disk cache in a fresh process: ``scantok.compile`` after ``import scantok``,
   with the stdlib modules a tokenizer.json loader has anyway imported ("cache load", target
   <= 5 ms), and as the very first call, stdlib imports included ("cold load").
3. Scan speed (``count`` on UTF-8 bytes, MB/s) of the compiled tables next to the shipped
   ahead-of-time scanner of the same pattern, interleaved in one run, on the corpora and on
   held-out text (the corpora's second halves; nothing is warmed or tuned on them).
Medians of --repeat fresh processes / runs; the machine is shared, so read ratios.

    python bench/bench_compile.py [--repeat 5] [--clock cpu|wall] [--corpus-dir ../shared/corpus] [--json out.json]

``--clock cpu`` (the default) times with ``time.process_time``: on a shared machine a process
waiting for a core does not count.
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

REPO = Path(__file__).resolve().parent.parent
LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
          r"|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
         r"|\s*[\r\n]+|\s+(?!\S)|\s+")


CLOCK_NAME = "cpu"
CLOCK = time.process_time


def patterns(shared: Path) -> dict[str, tuple[str, str]]:
    import scantok

    out = {"o200k_base": (scantok.scanner("o200k_base").pattern, "regex"),
           "cl100k_base": (scantok.scanner("cl100k_base").pattern, "regex"),
           "Llama 3": (LLAMA3, "regex"), "Qwen2": (QWEN2, "regex")}
    path = shared / "hf" / "deepseek_v3" / "tokenizer.json"
    if path.exists():
        pre = json.loads(path.read_text())["pre_tokenizer"]["pretokenizers"]
        splits = [p["pattern"]["Regex"] for p in pre if p["type"] == "Split"]
        for i, p in enumerate(splits, 1):
            out[f"DeepSeek V3 Split {i} (onig)"] = (p, "onig")
    return out


CHILD_COMPILE = """
import json, os, sys, time
time.perf_counter = time.process_time if os.environ.get("BENCH_CLOCK") == "cpu" else time.perf_counter
t0 = time.perf_counter()
import scantok
t1 = time.perf_counter()
pattern, flavor = json.loads(sys.argv[1])
sc = scantok.compile(pattern, flavor=flavor)
t2 = time.perf_counter()
from scantok.compiler import runtime
t3 = time.perf_counter()
runtime.build_image(pattern, flavor, sc.unicode_version)
runtime.CompiledScanner(pattern, flavor, sc.unicode_version, runtime.build_image(pattern, flavor, sc.unicode_version))
t4 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "first": t2 - t1, "warm": (t4 - t3) / 2}))
"""

# "cold": the first scantok.compile call after `import scantok`, stdlib imports included;
# "load": the same once the stdlib modules any tokenizer.json loader has imported (json,
# hashlib, pathlib, struct, array) are there: the cache read, checksum, key check, C validation.
CHILD_LOAD = """
import json, os, sys, time
time.perf_counter = time.process_time if os.environ.get("BENCH_CLOCK") == "cpu" else time.perf_counter
t0 = time.perf_counter()
if sys.argv[2] == "warm-stdlib":
    import hashlib, pathlib, struct, array
import scantok
pattern, flavor = json.loads(sys.argv[1])
t0 = time.perf_counter()
sc = scantok.compile(pattern, flavor=flavor)
t1 = time.perf_counter()
sc.count("hello world 123")
print(json.dumps({"load": t1 - t0}))
"""


def child(code: str, pattern: str, flavor: str, cache: str, mode: str = "") -> dict:
    env = dict(os.environ, SCANTOK_CACHE_DIR=cache, BENCH_CLOCK=CLOCK_NAME)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its .pyc files
    r = subprocess.run([sys.executable, "-c", code, json.dumps([pattern, flavor]), mode], env=env,
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def compile_times(pats: dict, repeat: int) -> list[dict]:
    rows = []
    for name, (pattern, flavor) in pats.items():
        first, warm, load, cold = [], [], [], []
        for _ in range(repeat):
            with tempfile.TemporaryDirectory() as cache:
                r = child(CHILD_COMPILE, pattern, flavor, cache)
                first.append(r["first"])
                warm.append(r["warm"])
                load.append(child(CHILD_LOAD, pattern, flavor, cache, "warm-stdlib")["load"])
                cold.append(child(CHILD_LOAD, pattern, flavor, cache, "cold")["load"])
        rows.append({"pattern": name, "first_ms": 1000 * statistics.median(first),
                     "warm_ms": 1000 * statistics.median(warm), "load_ms": 1000 * statistics.median(load),
                     "cold_load_ms": 1000 * statistics.median(cold)})
    return rows


def scan_speed(corpus_dir: Path, repeat: int) -> list[dict]:
    import scantok

    rows = []
    for name in ("o200k_base", "cl100k_base"):
        aot = scantok.scanner(name)
        rt = scantok.compile(aot.pattern)
        for corpus in ("en", "code", "multi"):
            data = (corpus_dir / f"{corpus}.txt").read_bytes()
            half = len(data) // 2
            while half < len(data) and (data[half] & 0xC0) == 0x80:
                half += 1
            for part, chunk in (("whole", data), ("held-out half", data[half:])):
                times = {"aot": [], "compiled": []}
                assert aot.count(chunk) == rt.count(chunk)
                for _ in range(repeat):  # interleaved: both see the same machine load
                    for key, sc in (("aot", aot), ("compiled", rt)):
                        t = CLOCK()
                        sc.count(chunk)
                        times[key].append(CLOCK() - t)
                mb = len(chunk) / 1e6
                a, c = mb / statistics.median(times["aot"]), mb / statistics.median(times["compiled"])
                rows.append({"pattern": name, "corpus": f"{corpus} ({part})", "aot_MBps": a,
                             "compiled_MBps": c, "ratio": c / a})
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--corpus-dir", default=str(REPO.parent / "shared" / "corpus"))
    ap.add_argument("--json", default=None)
    ap.add_argument("--clock", choices=["cpu", "wall"], default="cpu")
    args = ap.parse_args(argv)
    global CLOCK, CLOCK_NAME
    CLOCK_NAME, CLOCK = args.clock, (time.process_time if args.clock == "cpu" else time.perf_counter)
    shared = Path(args.corpus_dir).resolve().parent

    rows = compile_times(patterns(shared), args.repeat)
    print(f"compile (fresh process, empty cache) and load from the disk cache; median of {args.repeat}, "
          f"{args.clock} clock")
    print(f"{'pattern':32} {'first compile':>14} {'warm compile':>13} {'cache load':>11} {'cold load':>10}")
    for r in rows:
        print(f"{r['pattern']:32} {r['first_ms']:11.1f} ms {r['warm_ms']:10.1f} ms {r['load_ms']:8.2f} ms "
              f"{r['cold_load_ms']:7.1f} ms")
    worst_compile = max(r["first_ms"] for r in rows)
    worst_load = max(r["load_ms"] for r in rows)
    print(f"targets: compile <= 200 ms: {'met' if worst_compile <= 200 else 'MISSED'} (worst {worst_compile:.0f} ms); "
          f"cache load <= 5 ms: {'met' if worst_load <= 5 else 'MISSED'} (worst {worst_load:.2f} ms)")

    speed = []
    corpus_dir = Path(args.corpus_dir)
    if corpus_dir.exists():
        speed = scan_speed(corpus_dir, args.repeat)
        print("\nscan speed, count() on UTF-8 bytes, MB/s: compiled at run time vs shipped (same tables)")
        print(f"{'pattern':12} {'corpus':24} {'shipped':>8} {'compiled':>9} {'ratio':>6}")
        for r in speed:
            print(f"{r['pattern']:12} {r['corpus']:24} {r['aot_MBps']:8.0f} {r['compiled_MBps']:9.0f} {r['ratio']:6.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"compile": rows, "scan": speed}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
