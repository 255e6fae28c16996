"""Scanner throughput next to ``regex.findall``, in one process run.

For each scanner (o200k_base, cl100k_base, r50k_base, whitespace; ``--scanners all`` adds the rest)
and each corpus (en, code, multi): MB/s (UTF-8 bytes) of ``Scanner.count`` on str (includes the
str -> UTF-8 encode), ``Scanner.count`` on pre-encoded bytes (the scan alone),
``Scanner.offsets``, ``Scanner.split`` and ``regex.findall`` with the oracle pattern; medians of
``--repeat`` runs (>= 5) after one warm-up run; ratios to regex.  Then the five pathological
inputs' ``count`` times.  Targets (issue 2): o200k/cl100k ``count`` >= 500 MB/s on en and code,
>= 200 MB/s on multi; (issue 13): ``count`` on bytes >= 800 MB/s on en and code, and on ASCII text
(the corpus without its few non-ASCII characters, read in place) ``count(str)`` within 20 % of
``count(bytes)``.

    python bench/bench_scan.py [--repeat 5] [--clock wall|cpu] [--corpus-dir ../shared/corpus]
                               [--scanners o200k_base,...] [--no-regex] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

import scantok  # noqa: E402
from strategies import oracle  # noqa: E402

PREFERRED = ["o200k_base", "cl100k_base", "r50k_base", "whitespace"]
CORPORA = ["en", "code", "multi"]
BYTES_TARGETS = {(n, c): 800 for n in ("o200k_base", "cl100k_base") for c in ("en", "code")}
TARGETS = {("o200k_base", "en"): 500, ("o200k_base", "code"): 500, ("o200k_base", "multi"): 200,
           ("cl100k_base", "en"): 500, ("cl100k_base", "code"): 500, ("cl100k_base", "multi"): 200}
PATHOLOGICAL = {
    '" " * 10**7 + "x"': lambda: " " * 10**7 + "x",
    '"a" * 10**7': lambda: "a" * 10**7,
    '"a" + "\\u0301" * 3*10**6': lambda: "a" + "\u0301" * (3 * 10**6),
    "\"'s\" * 5*10**6": lambda: "'s" * (5 * 10**6),
    "10**7 digits": lambda: ("1234567890" * 10**6),
}


CLOCK = time.perf_counter


def median_time(fn, repeat: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        t = CLOCK()
        fn()
        times.append(CLOCK() - t)
    return statistics.median(times)


def _row(row: dict) -> str:
    rx = row["regex"]

    def cell(v: float) -> str:
        return f"{v:.0f} ({v / rx:.0f}×)" if rx else f"{v:.0f}"

    return " | ".join([
        "", row["scanner"], row["corpus"], f"{row['mb']:.1f}", cell(row["count"]),
        cell(row["count_bytes"]), f"{row['ascii_str']:.0f} / {row['ascii_bytes']:.0f}", cell(row["offsets"]), cell(row["split"]),
        "—" if rx is None else f"{rx:.1f}",
        "—" if not rx else f"{row['count'] / rx:.0f}×", ""]).strip()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--corpus-dir", default=os.environ.get("SCANTOK_CORPUS_DIR",
                                                           str(REPO.parent / "shared" / "corpus")))
    ap.add_argument("--scanners", default="",
                    help="comma-separated names, or 'all' (default: o200k, cl100k, r50k, whitespace)")
    ap.add_argument("--no-regex", action="store_true", help="skip regex.findall (slow)")
    ap.add_argument("--json", help="write the raw results here")
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                    help="wall: perf_counter; cpu: thread_time (steadier on a shared, loaded machine)")
    args = ap.parse_args()
    global CLOCK
    CLOCK = time.perf_counter if args.clock == "wall" else time.thread_time
    if args.repeat < 5:
        ap.error("--repeat must be >= 5 (medians of at least five runs)")

    shipped = scantok.scanners()
    if args.scanners == "all":
        names = [n for n in PREFERRED if n in shipped] + [n for n in shipped if n not in PREFERRED]
    else:
        names = [n for n in args.scanners.split(",") if n] or [n for n in PREFERRED if n in shipped]
    corpora = {}
    for c in CORPORA:
        p = Path(args.corpus_dir) / f"{c}.txt"
        if not p.exists():
            sys.exit(f"corpus {p} is absent (--corpus-dir or SCANTOK_CORPUS_DIR)")
        corpora[c] = p.read_text(encoding="utf-8")

    impl = scantok.simd_impl() if hasattr(scantok, "simd_impl") else "?"
    print(f"# scantok scanner benchmark  (impl={impl}, python {sys.version.split()[0]}, "
          f"{args.clock} clock, median of {args.repeat} runs, MB/s of UTF-8 input, "
          f"ratio = x regex.findall)\n")
    results = []
    header = ("| scanner | corpus | MB | count (str) | count (bytes) | ASCII text: count (str / bytes) | "
              "offsets | split | regex.findall | count/regex |")
    print(header)
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in names:
        sc = scantok.scanner(name)
        rx = oracle(sc.pattern)
        for c, text in corpora.items():
            data = text.encode("utf-8")
            mb = len(data) / 1e6
            row = {"scanner": name, "corpus": c, "mb": mb}
            row["count"] = mb / median_time(lambda: sc.count(text), args.repeat)
            row["count_bytes"] = mb / median_time(lambda: sc.count(data), args.repeat)
            row["offsets"] = mb / median_time(lambda: sc.offsets(text), args.repeat)
            row["split"] = mb / median_time(lambda: sc.split(text), args.repeat)
            ascii_text = text.encode("ascii", "ignore").decode("ascii")
            ascii_data = ascii_text.encode("ascii")
            row["ascii_str"] = len(ascii_data) / 1e6 / median_time(lambda: sc.count(ascii_text), args.repeat)
            row["ascii_bytes"] = len(ascii_data) / 1e6 / median_time(lambda: sc.count(ascii_data), args.repeat)
            row["regex"] = None if args.no_regex else mb / median_time(lambda: rx.findall(text),
                                                                       args.repeat)
            results.append(row)

            print(_row(row), flush=True)

    print("\n## Pathological inputs: `count` time (ms, median)\n")
    print("| input | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    patho = {}
    for label, build in PATHOLOGICAL.items():
        text = build()
        cells = []
        for name in names:
            sc = scantok.scanner(name)
            t = median_time(lambda: sc.count(text), args.repeat)
            patho[(label, name)] = t
            cells.append(f"{t * 1000:.1f}")
        print(f"| `{label}` | " + " | ".join(cells) + " |", flush=True)
        del text

    print("\n## Targets (count on str)\n")
    ok = True
    for (name, c), target in TARGETS.items():
        got = [r["count"] for r in results if r["scanner"] == name and r["corpus"] == c]
        if not got:
            continue
        status = "PASS" if got[0] >= target else "FAIL"
        ok &= status == "PASS"
        print(f"- {name} {c}: {got[0]:.0f} MB/s (target >= {target}) {status}")
    print("\n## Targets (issue 13: count on bytes; count(str) on ASCII text)\n")
    for (name, c), target in BYTES_TARGETS.items():
        for r in results:
            if r["scanner"] == name and r["corpus"] == c:
                st = "PASS" if r["count_bytes"] >= target else "FAIL"
                ratio = r["ascii_str"] / r["ascii_bytes"]
                sr = "PASS" if ratio >= 0.8 else "FAIL"
                ok &= st == sr == "PASS"
                print(f"- {name} {c}: count(bytes) {r['count_bytes']:.0f} MB/s (target >= {target}) {st}; "
                      f"ASCII text: count(str) {r['ascii_str']:.0f} / count(bytes) {r['ascii_bytes']:.0f} "
                      f"= {ratio:.2f} (target >= 0.80) {sr}")
    for (label, name), t in patho.items():
        if t >= 0.2:
            ok = False
            print(f"- pathological {label} on {name}: {t * 1000:.0f} ms (target well under 200 ms) FAIL")
    if args.json:
        Path(args.json).write_text(json.dumps({
            "impl": impl, "repeat": args.repeat, "clock": args.clock, "corpora": results,
            "pathological_ms": {f"{k[0]} | {k[1]}": v * 1000 for k, v in patho.items()}}, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
