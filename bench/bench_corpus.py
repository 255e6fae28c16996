"""The corpus pipeline (scantok.corpus.encode_files) against the encoder alone, in one run.

    python bench/bench_corpus.py [--repeat 3] [--gb 1.0] [--quick] [--no-memory] [--no-dask]

Figures (o200k_base; MB/s of the documents' UTF-8 text, the same numerator for every row):

1. **one worker vs encode_to_numpy**: each corpus (en, code, multi) minus its first 256 KB,
   cut into ~4 KB documents written as JSON Lines. Each mode runs in a fresh process, warmed
   on the first 256 KB (a text it is not timed on), then timed: ``encode_to_numpy`` on the
   documents joined into one string, ``encode_to_numpy`` per document, and ``encode_files``
   with ``num_workers=1`` (reading, parsing, encoding, writing shards and index). CPU seconds
   of the process (robust on a loaded machine) and wall seconds; the modes interleave;
   medians of ``--repeat``. Target: pipeline >= 90% of ``encode_to_numpy``.
2. **2 workers vs 1**: the three corpora's JSON Lines, 4 times over, with 4 MB partitions;
   wall time, interleaved, medians. Target >= 1.8x. On a shared machine the kernel's autogroup
   scheduler gives each session one share of the CPU, so each run and each of its workers
   gets a session of its own (``BENCH_WORKER_SESSIONS``); and the CPU seconds of 1 and 2
   workers (parallel efficiency), which the other sessions' load does not change.
3. **memory**: a generated JSON Lines file of ``--gb`` GB in /tmp (documents sampled from the
   corpora, deleted afterwards), default partitions, 2 workers: peak RSS of the parent and of
   the largest worker (``ru_maxrss``), and throughput.
4. **Dask**: the same input as 2. on a ``LocalCluster(n_workers=2, threads_per_worker=1)``
   against the local pool of 2 (cluster start-up not timed).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
CORPUS_DIR = Path(os.environ.get("SCANTOK_CORPUS_DIR", SHARED / "corpus"))
os.environ.setdefault("SCANTOK_VOCAB_DIR", str(SHARED / "vocab"))
WARM = 262_144
DOC = 4000

ONE = r"""
import json, os, shutil, sys, time, resource
import scantok, scantok.corpus
mode, corpus, jsonl, out = sys.argv[1:5]
text = open(corpus, encoding="utf-8").read()
warm, rest = text[:WARM], text[WARM:]
docs = [rest[i:i + DOC] for i in range(0, len(rest), DOC)]
enc = scantok.get_encoding("o200k_base")
enc.encode_to_numpy(warm)
joined = "".join(docs)
c0, w0 = time.process_time(), time.perf_counter()
if mode == "numpy":
    enc.encode_to_numpy(joined)
elif mode == "numpy_docs":
    for d in docs:
        enc.encode_to_numpy(d)
else:
    scantok.corpus.encode_files([jsonl], out, encoding=enc, num_workers=1, partition_bytes=1 << 30)
c1, w1 = time.process_time(), time.perf_counter()
print(json.dumps({"cpu": c1 - c0, "wall": w1 - w0, "bytes": len(joined.encode())}))
""".replace("WARM", str(WARM)).replace("DOC", str(DOC))

RUN = r"""
import json, os, resource, sys, time
import scantok.corpus
out, workers, partition, files = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
if os.environ.get("BENCH_WORKER_SESSIONS"):
    # each pool worker in a session of its own: the kernel's autogroup scheduler shares the
    # CPU between sessions, so on a shared machine the workers of one session share one
    # session's slice whatever their number (a dedicated machine needs nothing of the kind)
    from scantok.corpus import pipeline
    _init = pipeline._init_worker
    def _init_worker(queue):
        os.setsid()
        _init(queue)
    pipeline._init_worker = _init_worker
def hwm():
    return int(next(l for l in open("/proc/self/status") if l.startswith("VmHWM")).split()[1]) / 1024
hwm0 = hwm()
t = time.perf_counter()
r = scantok.corpus.encode_files(files, out, encoding="o200k_base", num_workers=workers, partition_bytes=partition)
wall = time.perf_counter() - t
print(json.dumps({"wall": wall, "tokens": r.tokens, "documents": r.documents,
                  # VmHWM, not ru_maxrss: Linux carries ru_maxrss across exec (the benchmark's own RSS)
                  "rss_parent_mb": hwm(), "rss_parent_start_mb": hwm0,
                  "rss_worker_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
                  "cpu": sum(resource.getrusage(who).ru_utime + resource.getrusage(who).ru_stime
                             for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))}))
"""


def corpus_texts() -> dict[str, str]:
    return {name: (CORPUS_DIR / f"{name}.txt").read_text(encoding="utf-8") for name in ("en", "code", "multi")}


def write_docs_jsonl(path: Path, text: str) -> int:
    docs = [text[i:i + DOC] for i in range(0, len(text), DOC)]
    with open(path, "w", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps({"text": d}) + "\n")
    return sum(len(d.encode()) for d in docs)


def run_json(code: str, *args, env=None) -> dict:
    out = subprocess.run([sys.executable, "-c", code, *map(str, args)], check=True, capture_output=True, text=True,
                         env=env, start_new_session=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def bench_one_worker(tmp: Path, texts: dict, repeat: int) -> list[dict]:
    rows = []
    for name, text in texts.items():
        jsonl = tmp / f"{name}.jsonl"
        write_docs_jsonl(jsonl, text[WARM:])
        modes = ["numpy", "numpy_docs", "pipeline"]
        res = {m: [] for m in modes}
        for _ in range(repeat):
            for m in modes:  # interleaved
                shutil.rmtree(tmp / "out1", ignore_errors=True)
                res[m].append(run_json(ONE, m, CORPUS_DIR / f"{name}.txt", jsonl, tmp / "out1"))
        nbytes = res["numpy"][0]["bytes"]
        row = {"corpus": name, "MB": nbytes / 1e6}
        for m in modes:
            row[f"{m}_cpu"] = nbytes / statistics.median(r["cpu"] for r in res[m]) / 1e6
            row[f"{m}_wall"] = nbytes / statistics.median(r["wall"] for r in res[m]) / 1e6
        row["ratio_cpu"] = row["pipeline_cpu"] / row["numpy_cpu"]
        row["ratio_wall"] = row["pipeline_wall"] / row["numpy_wall"]
        # best of the runs too: on a loaded machine the neighbours' cache traffic inflates
        # CPU time, more for the pipeline (which touches more memory) than for one call
        row["ratio_cpu_best"] = min(r["cpu"] for r in res["numpy"]) / min(r["cpu"] for r in res["pipeline"])
        rows.append(row)
        print(f"  {name}: numpy {row['numpy_cpu']:.1f} MB/s (cpu) / {row['numpy_wall']:.1f} (wall); "
              f"numpy per doc {row['numpy_docs_cpu']:.1f} / {row['numpy_docs_wall']:.1f}; "
              f"pipeline 1 worker {row['pipeline_cpu']:.1f} / {row['pipeline_wall']:.1f}; "
              f"ratio {row['ratio_cpu']:.2f} (cpu) / {row['ratio_wall']:.2f} (wall), best cpu {row['ratio_cpu_best']:.2f}", flush=True)
    return rows


def parallel_inputs(tmp: Path, texts: dict, times: int) -> tuple[list[Path], int]:
    files, nbytes = [], 0
    for k in range(times):
        for name, text in texts.items():
            p = tmp / f"par-{k}-{name}.jsonl"
            nbytes += write_docs_jsonl(p, text[k * 1000:])
            files.append(p)
    return files, nbytes


def bench_workers(tmp: Path, files: list[Path], nbytes: int, repeat: int) -> dict:
    """Wall time of 1 and 2 workers, each run (and each of its workers) in a session of its
    own; and the CPU seconds of all processes, whose ratio is the parallel efficiency (what
    the split, the extra processes and the finalisation cost)."""
    env = dict(os.environ, BENCH_WORKER_SESSIONS="1")
    res = {1: [], 2: []}
    for _ in range(repeat):
        for n in (1, 2):
            shutil.rmtree(tmp / "outp", ignore_errors=True)
            res[n].append(run_json(RUN, tmp / "outp", n, 4 << 20, *files, env=env))
    wall = {n: statistics.median(r["wall"] for r in res[n]) for n in res}
    cpu = {n: statistics.median(r["cpu"] for r in res[n]) for n in res}
    row = {"MB": nbytes / 1e6, "one_MBps": nbytes / wall[1] / 1e6, "two_MBps": nbytes / wall[2] / 1e6,
           "speedup": wall[1] / wall[2], "cpu_one": cpu[1], "cpu_two": cpu[2], "efficiency": cpu[1] / cpu[2],
           "runs": {n: [r["wall"] for r in res[n]] for n in res}}
    print(f"  {nbytes / 1e6:.0f} MB: 1 worker {row['one_MBps']:.1f} MB/s, 2 workers {row['two_MBps']:.1f} MB/s, "
          f"x{row['speedup']:.2f} wall (runs: {', '.join(f'{x:.1f}' for x in row['runs'][1])} / "
          f"{', '.join(f'{x:.1f}' for x in row['runs'][2])} s); CPU {cpu[1]:.2f} s vs {cpu[2]:.2f} s "
          f"(efficiency {row['efficiency']:.2f}, 2 free cores would give x{2 * row['efficiency']:.2f} at best)",
          flush=True)
    return row


def bench_memory(tmp: Path, texts: dict, gb: float) -> dict:
    path = Path(tempfile.gettempdir()) / f"scantok-bench-{os.getpid()}.jsonl"
    rng = random.Random(0)
    pool = list(texts.values())
    target = int(gb * 1e9)
    size = 0
    try:
        with open(path, "w", encoding="utf-8") as f:
            while size < target:
                lines = []
                for _ in range(1000):
                    t = rng.choice(pool)
                    i = rng.randrange(0, len(t) - 8000)
                    lines.append(json.dumps({"id": size, "text": t[i:i + rng.randrange(200, 8000)]}) + "\n")
                chunk = "".join(lines)
                f.write(chunk)
                size += len(chunk.encode())
        shutil.rmtree(tmp / "outm", ignore_errors=True)
        r = run_json(RUN, tmp / "outm", 2, 1 << 25, path)
        r["GB"] = size / 1e9
        r["MBps"] = size / r["wall"] / 1e6
        print(f"  {size / 1e9:.2f} GB JSONL, 2 workers: {r['wall']:.0f} s, {r['MBps']:.1f} MB/s of JSONL, "
              f"{r['documents']:,} documents, {r['tokens']:,} tokens; peak RSS parent {r['rss_parent_mb']:.0f} MB "
              f"({r['rss_parent_start_mb']:.0f} MB before the run), "
              f"largest worker {r['rss_worker_mb']:.0f} MB", flush=True)
        return r
    finally:
        path.unlink(missing_ok=True)
        shutil.rmtree(tmp / "outm", ignore_errors=True)


def bench_dask(tmp: Path, files: list[Path], nbytes: int, repeat: int) -> dict:
    from dask.distributed import Client, LocalCluster

    import scantok.corpus

    walls = {"dask": [], "local": []}
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        client.run(lambda: __import__("scantok").get_encoding("o200k_base"))
        for _ in range(repeat):
            for mode in ("dask", "local"):
                shutil.rmtree(tmp / "outd", ignore_errors=True)
                t = time.perf_counter()
                scantok.corpus.encode_files(files, tmp / "outd", encoding="o200k_base", partition_bytes=4 << 20,
                                            scheduler=client if mode == "dask" else None, num_workers=2)
                walls[mode].append(time.perf_counter() - t)
    row = {m: nbytes / statistics.median(w) / 1e6 for m, w in walls.items()}
    print(f"  {nbytes / 1e6:.0f} MB: Dask LocalCluster (2 processes) {row['dask']:.1f} MB/s, "
          f"local pool (2) {row['local']:.1f} MB/s", flush=True)
    return row


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--gb", type=float, default=1.0, help="size of the generated JSON Lines file for the memory run")
    p.add_argument("--times", type=int, default=4, help="copies of the corpora for the parallel runs")
    p.add_argument("--quick", action="store_true", help="1 run, 0.1 GB, corpora once")
    p.add_argument("--no-memory", dest="memory", action="store_false")
    p.add_argument("--no-dask", dest="dask", action="store_false")
    p.add_argument("--no-one", dest="one", action="store_false", help="skip the one-worker comparison")
    p.add_argument("--json", help="also write the raw figures here")
    args = p.parse_args()
    if args.quick:
        args.repeat, args.gb, args.times = 1, 0.1, 1
    texts = corpus_texts()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"scantok.corpus benchmark, o200k_base, {os.cpu_count()} cores, load average {load:.1f}")
    report = {}
    with tempfile.TemporaryDirectory(prefix="scantok-bench-corpus-") as d:
        tmp = Path(d)
        if args.one:
            print("1. one worker vs encode_to_numpy (MB/s of text):")
            report["one_worker"] = bench_one_worker(tmp, texts, args.repeat)
        files, nbytes = parallel_inputs(tmp, texts, args.times)
        print("2. two workers vs one (wall):")
        report["workers"] = bench_workers(tmp, files, nbytes, args.repeat)
        if args.dask:
            print("4. Dask LocalCluster vs local pool (wall):")
            report["dask"] = bench_dask(tmp, files, nbytes, args.repeat)
        if args.memory:
            print("3. memory on a generated file:")
            report["memory"] = bench_memory(tmp, texts, args.gb)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
