"""Encode throughput of scantok next to tiktoken and the fastest peers, in one run.

    python bench/bench_encode.py [--encodings o200k_base,cl100k_base] [--repeat 3] [--quick]

Method (peers with piece caches look several times faster when they re-encode a text):

* every library gets a **fresh instance** per run, is **warmed on one text** (the first
  256 KB of the corpus) and **timed on a different text** (the rest of the corpus);
* figures are **medians** of ``--repeat`` runs, in MB/s of UTF-8 input, with the ratio to
  tiktoken measured in the same run; the runs interleave the libraries (run 1 of each, then
  run 2 of each, ...), so a slow spell of a shared machine falls on all of them alike;
* modes: ``list`` (``encode_ordinary`` returning a Python list), ``numpy`` (uint32 array),
  ``batch1``/``batch2`` (``encode_ordinary_batch`` on the corpus split into ~4 KB documents,
  1 and 2 threads);
* load: a fresh process (``subprocess``) imports the library, then loads the encoding (scantok
  with a warm cache); both times and the peak RSS (``VmHWM``), medians of 3;
* every library's ids are checked against tiktoken's on each timed text (``exact``);
* short texts: µs per ``encode_ordinary`` call on a chat-sized message and a line of code;
* pathological inputs (``" " * 10**6 + "x"``, ``"a" * 10**7``, 10**7 random letters): each
  library in a fresh process with ``--timeout``; a crash or a stall is reported as such.

Peers that are not installed (or cannot load offline) are skipped and the table says so.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # numpy's BLAS threads spin and steal a core
os.environ.setdefault("RAYON_NUM_THREADS", "2")  # peers' thread pools: 2 threads, like ours

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
CORPUS_DIR = Path(os.environ.get("SCANTOK_CORPUS_DIR", SHARED / "corpus"))
VOCAB_DIR = Path(os.environ.get("SCANTOK_VOCAB_DIR", SHARED / "vocab"))
os.environ.setdefault("SCANTOK_VOCAB_DIR", str(VOCAB_DIR))
WARM = 256 * 1024
URLS = {
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
}


def _tiktoken_cache() -> str:
    import hashlib
    import shutil
    import tempfile

    d = os.environ.get("SCANTOK_BENCH_TIKTOKEN_CACHE") or tempfile.mkdtemp(prefix="bench-tiktoken-")
    for name, url in URLS.items():
        dst = Path(d) / hashlib.sha1(url.encode()).hexdigest()
        if not dst.exists():
            shutil.copy(VOCAB_DIR / f"{name}.tiktoken", dst)
    os.environ["TIKTOKEN_CACHE_DIR"] = d
    os.environ["SCANTOK_BENCH_TIKTOKEN_CACHE"] = d
    return d


# --------------------------------------------------------------------------- adapters
# Each factory returns (instance-maker, {mode: fn(instance, text_or_docs)}) or raises
# ImportError / RuntimeError (reported as "skipped: reason").


def lib_scantok(enc):
    import scantok

    def make():
        # a new instance with tables of its own: the per-thread piece and pair caches are
        # keyed by table, so they start cold, like a peer's fresh instance
        from scantok.registry import _load_encoding

        return _load_encoding(enc)

    return make, {
        "list": lambda e, t: e.encode_ordinary(t),
        "numpy": lambda e, t: e.encode_ordinary_to_numpy(t),
        "batch1": lambda e, d: e.encode_ordinary_batch(d, num_threads=1),
        "batch2": lambda e, d: e.encode_ordinary_batch(d, num_threads=2),
    }


def lib_tiktoken(enc):
    import tiktoken
    from tiktoken_ext import openai_public

    def make():
        return tiktoken.Encoding(**openai_public.ENCODING_CONSTRUCTORS[enc]())

    return make, {
        "list": lambda e, t: e.encode_ordinary(t),
        "numpy": lambda e, t: e.encode_to_numpy(t, disallowed_special=()),
        "batch1": lambda e, d: [e.encode_ordinary(x) for x in d],
        "batch2": lambda e, d: e.encode_ordinary_batch(d, num_threads=2),
    }


def lib_gigatoken(enc):
    import gigatoken

    path = str(VOCAB_DIR / f"{enc}.tiktoken")

    def make():
        return gigatoken.Tokenizer.from_tiktoken(path)

    return make, {
        "list": lambda g, t: g.encode_batch_list([t], parallel=False)[0],
        "numpy": lambda g, t: g.encode(t),
        "batch1": lambda g, d: g.encode_batch_list(d, parallel=False),
        "batch2": lambda g, d: g.encode_batch_list(d, parallel=True),
    }


def lib_splintr(enc):
    import splintr

    def make():
        return splintr.Tokenizer.from_pretrained(enc)

    import numpy as np

    return make, {
        "list": lambda s, t: s.encode_ordinary(t),
        "numpy": lambda s, t: np.asarray(s.encode_ordinary(t), dtype=np.uint32),
        "batch2": lambda s, d: s.encode_batch(d),
    }


def lib_rs_bpe(enc):
    import rs_bpe

    def make():
        return getattr(rs_bpe.openai, enc)()

    return make, {
        "list": lambda r, t: r.encode(t),
        "batch1": lambda r, d: r.encode_batch(d)[0],
    }


def lib_tokie(enc):
    import tokie  # noqa: F401

    raise RuntimeError("tokie loads o200k/cl100k only from the HuggingFace Hub (no offline .tiktoken loader)")


LIBS = {
    "scantok": lib_scantok,
    "tiktoken": lib_tiktoken,
    "gigatoken": lib_gigatoken,
    "splintr": lib_splintr,
    "rs-bpe": lib_rs_bpe,
    "tokie": lib_tokie,
}

LOAD_SNIPPETS = {  # (import, load the encoding)
    "scantok": ("import scantok", "e = scantok.get_encoding({enc!r})"),
    "tiktoken": ("import tiktoken", "e = tiktoken.get_encoding({enc!r})"),
    "gigatoken": ("import gigatoken", "e = gigatoken.Tokenizer.from_tiktoken({path!r})"),
    "splintr": ("import splintr", "e = splintr.Tokenizer.from_pretrained({enc!r})"),
    "rs-bpe": ("import rs_bpe", "e = rs_bpe.openai.{enc}()"),
}


# --------------------------------------------------------------------------- measuring


def documents(text: str, size: int = 4096) -> list[str]:
    docs, cur, n = [], [], 0
    for para in text.split("\n\n"):
        cur.append(para)
        n += len(para) + 2
        if n >= size:
            docs.append("\n\n".join(cur) + "\n\n")
            cur, n = [], 0
    if cur:
        docs.append("\n\n".join(cur))
    return docs


def as_list(x):
    if hasattr(x, "tolist"):
        return x.tolist()
    return list(x)


def measure_load(lib: str, enc: str, repeat: int = 3):
    """(import seconds, load seconds, peak RSS MB) in a fresh process, medians."""
    snippet = LOAD_SNIPPETS.get(lib)
    if snippet is None:
        return None
    imp, load = snippet
    code = (
        "import time, json\nt0 = time.perf_counter()\n" + imp + "\nt1 = time.perf_counter()\n"
        + load.format(enc=enc, path=str(VOCAB_DIR / f"{enc}.tiktoken"))
        + "\nt2 = time.perf_counter()\n"
        # VmHWM (peak RSS of this process image; ru_maxrss would carry the parent's over exec)
        "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1]\n"
        "print(json.dumps([t1 - t0, t2 - t1, int(hwm) / 1024]))\n"
    )
    runs = []
    for i in range(repeat + 1):
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ)
        if r.returncode != 0:
            return None
        if i:  # the first run warms caches (scantok's built-table image, the OS page cache)
            runs.append(json.loads(r.stdout))
    return tuple(statistics.median(x[k] for x in runs) for k in range(3))


PATHOLOGICAL = {  # label -> expression (evaluated in the child process)
    '" " * 10**6 + "x"': '" " * 10**6 + "x"',
    '"a" * 10**7': '"a" * 10**7',
    "10**7 random letters": '"".join(random.Random(0).choices(string.ascii_letters, k=10**7))',
}


def measure_pathological(lib: str, enc: str, expr: str, timeout: float):
    """Seconds for one `list`-mode encode of the input in a fresh process (a peer may crash
    or stall on these), or a string saying what happened."""
    code = "\n".join([
        "import random, string, sys, time",
        f"sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})",
        "import bench_encode as b",
        f"make, modes = b.LIBS[{lib!r}]({enc!r})",
        f"e = make(); text = {expr}",
        "t0 = time.perf_counter(); modes['list'](e, text); print(time.perf_counter() - t0)",
    ])
    try:
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"> {timeout:.0f} s"
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["?"])[-1]
        return "crashed" + (" (stack overflow)" if "overflow" in r.stderr.lower() else f" ({last[:60]})")
    return float(r.stdout.strip().splitlines()[-1])


def pathological(args, skipped) -> str:
    lines = ["\n**Pathological inputs** — seconds for `encode_ordinary` (list), fresh process, one run\n"]
    libs = [lib for lib in args.libs if lib not in skipped]
    for enc in args.encodings:
        lines += [f"| {enc} | " + " | ".join(libs) + " |", "|---|" + "---|" * len(libs)]
        for label, expr in PATHOLOGICAL.items():
            cells = []
            for lib in libs:
                v = measure_pathological(lib, enc, expr, args.timeout)
                cells.append(f"{v:.3f}" if isinstance(v, float) else v)
                print(f"  {enc:12s} {lib:10s} {label:24s} {cells[-1]}", file=sys.stderr, flush=True)
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


SHORT_TEXTS = ["hello world", "The quick brown fox jumps over the lazy dog, twice.",
               "def f(x):\n    return x * 2  # double it\n"]


def short_latency(args, skipped) -> str:
    """Per-call cost of encode_ordinary on short texts (a chat message, a line of code), where
    the fixed cost of a call is the cost: µs per call, best of 5 rounds of 2,000 calls."""
    lines = ["\n**Short texts** — µs per `encode_ordinary` call (best of 5 × 2,000), lower is better\n"]
    libs = [lib for lib in args.libs if lib not in skipped]
    for enc in args.encodings:
        lines += [f"| {enc} | " + " | ".join(libs) + " |", "|---|" + "---|" * len(libs)]
        insts = {}
        for lib in libs:
            make, modes = LIBS[lib](enc)
            insts[lib] = (make(), modes["list"])
        for text in SHORT_TEXTS:
            cells = []
            for lib in libs:
                inst, fn = insts[lib]
                best = float("inf")
                for _ in range(5):
                    t0 = time.perf_counter()
                    for _ in range(2000):
                        fn(inst, text)
                    best = min(best, (time.perf_counter() - t0) / 2000)
                cells.append(f"{best * 1e6:.1f}")
            lines.append(f"| {len(text.encode())} bytes | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def bench(args):
    _tiktoken_cache()
    corpora = {}
    for c in args.corpora:
        text = (CORPUS_DIR / f"{c}.txt").read_bytes().decode("utf-8", "replace")
        if args.quick:
            text = text[: 1_200_000]
        corpora[c] = (text[:WARM], text[WARM:])
    results = {}  # (enc, lib, corpus, mode) -> MB/s
    exact = {}
    skipped = {}
    loads = {}
    for enc in args.encodings:
        adapters = {}
        for lib in args.libs:
            try:
                make, modes = LIBS[lib](enc)
                make()
            except Exception as e:  # noqa: BLE001 - a peer that cannot run is reported
                skipped[lib] = f"{type(e).__name__}: {e}"[:160]
                continue
            adapters[lib] = (make, modes)
        oracle = adapters["tiktoken"][0]() if "tiktoken" in adapters else None
        for corpus, (warm, timed) in corpora.items():
            data_mb = len(timed.encode("utf-8")) / 1e6
            docs = documents(timed)
            for mode in args.modes:
                arg = docs if mode.startswith("batch") else timed
                warm_arg = documents(warm) if mode.startswith("batch") else warm
                times: dict[str, list[float]] = {}
                outs = {}
                # repetitions interleave the libraries, so a slow spell of this shared
                # machine falls on all of them alike
                for _ in range(args.repeat):
                    for lib, (make, modes) in adapters.items():
                        fn = modes.get(mode)
                        if fn is None:
                            continue
                        inst = make()
                        fn(inst, warm_arg)
                        t0 = time.perf_counter()
                        outs[lib] = fn(inst, arg)
                        times.setdefault(lib, []).append(time.perf_counter() - t0)
                        del inst
                want = None
                for lib, ts in times.items():
                    key = (enc, lib, corpus, mode)
                    results[key] = data_mb / statistics.median(ts)
                    if oracle is not None:
                        if want is None:
                            want = (oracle.encode_ordinary_batch(docs, num_threads=2) if mode.startswith("batch")
                                    else oracle.encode_ordinary(timed))
                        out = outs.pop(lib)
                        got = [as_list(x) for x in out] if mode.startswith("batch") else as_list(out)
                        exact[key] = got == want
                    print(f"  {enc:12s} {lib:10s} {corpus:6s} {mode:7s} {results[key]:8.1f} MB/s"
                          f"{'' if exact.get(key, True) else '  (ids differ from tiktoken!)'}",
                          file=sys.stderr, flush=True)
        if args.load:
            for lib in adapters:
                loads[(enc, lib)] = measure_load(lib, enc)
    return results, exact, skipped, loads


def table(args, results, exact, skipped, loads) -> str:
    lines = []
    modes_label = {"list": "list", "numpy": "numpy", "batch1": "batch 1 thr", "batch2": "batch 2 thr"}
    for enc in args.encodings:
        lines.append(f"\n**{enc}** — MB/s (× tiktoken), median of {args.repeat} runs, fresh instance warmed on other text\n")
        head = "| library | mode | " + " | ".join(args.corpora) + " | exact |"
        lines += [head, "|" + "---|" * (len(args.corpora) + 3)]
        for lib in args.libs:
            if lib in skipped:
                continue
            for mode in args.modes:
                cells = []
                ok = True
                have = False
                for c in args.corpora:
                    v = results.get((enc, lib, c, mode))
                    if v is None:
                        cells.append("—")
                        continue
                    have = True
                    base = results.get((enc, "tiktoken", c, mode))
                    cells.append(f"{v:.0f}" + (f" ({v / base:.1f}×)" if base and lib != "tiktoken" else ""))
                    ok &= exact.get((enc, lib, c, mode), True)
                if have:
                    lines.append(f"| {lib} | {modes_label[mode]} | " + " | ".join(cells) + f" | {'yes' if ok else 'NO'} |")
        sp = []
        for lib in args.libs:
            one = [results.get((enc, lib, c, "batch1")) for c in args.corpora]
            two = [results.get((enc, lib, c, "batch2")) for c in args.corpora]
            if all(one) and all(two):
                sp.append(f"{lib} " + "/".join(f"{b / a:.2f}" for a, b in zip(one, two)))
        if sp:
            lines.append(f"\n2-thread speed-up over 1 thread ({'/'.join(args.corpora)}): " + "; ".join(sp))
        ld = [(lib, loads.get((enc, lib))) for lib in args.libs if loads.get((enc, lib))]
        if ld:
            lines.append("\n| library | import | load encoding | peak RSS |\n|---|---|---|---|")
            for lib, (ti, tl, rss) in ld:
                lines.append(f"| {lib} | {ti * 1000:.0f} ms | {tl * 1000:.0f} ms | {rss:.0f} MB |")
    if skipped:
        lines.append("\nSkipped: " + "; ".join(f"{k} ({v})" for k, v in skipped.items()))
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--encodings", default="o200k_base,cl100k_base")
    p.add_argument("--corpora", default="en,code,multi")
    p.add_argument("--libs", default=",".join(LIBS))
    p.add_argument("--modes", default="list,numpy,batch1,batch2")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--no-load", dest="load", action="store_false")
    p.add_argument("--quick", action="store_true", help="1.2 MB of each corpus, 1 run")
    p.add_argument("--no-short", dest="short", action="store_false", help="skip the short-text latency")
    p.add_argument("--no-pathological", dest="pathological", action="store_false",
                   help="skip the pathological inputs (each library in a fresh process)")
    p.add_argument("--timeout", type=float, default=60, help="seconds per pathological run")
    p.add_argument("--json", help="also write the raw figures here")
    args = p.parse_args(argv)
    for k in ("encodings", "corpora", "libs", "modes"):
        setattr(args, k, [x for x in getattr(args, k).split(",") if x])
    if args.quick:
        args.repeat = 1
    if "tiktoken" not in args.libs:
        args.libs.insert(0, "tiktoken")
    results, exact, skipped, loads = bench(args)
    md = table(args, results, exact, skipped, loads)
    if args.short:
        md += "\n" + short_latency(args, skipped)
    if args.pathological:
        md += "\n" + pathological(args, skipped)
    print(md)
    if args.json:
        Path(args.json).write_text(json.dumps({
            "results": [[*k, v] for k, v in results.items()],
            "exact": [[*k, v] for k, v in exact.items()],
            "skipped": skipped,
            "loads": [[*k, *(v or (None, None, None))] for k, v in loads.items()],
        }, indent=1))
    return 0 if all(exact.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
