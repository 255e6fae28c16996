"""Encode throughput of scantok next to tiktoken and the fastest peers, in one run.

    python bench/bench_encode.py [--encodings o200k_base,cl100k_base] [--repeat 3] [--quick]

Method (peers with piece caches look several times faster when they re-encode a text):

* every library gets a **fresh instance** per run, is **warmed on one text** (the first
  256 KB of the corpus) and **timed on a different text** (the rest of the corpus);
* ``--unseen prose,c,intl`` adds text that is in none of the shared corpora (nor used to
  tune anything): English prose (vim's help files), C source (headers from /usr/include,
  evaluation only, never training) and international text (vim's tutor in 30 languages,
  its UTF-8 menu translations); libraries are warmed on the first 1 MB of corpus/en.txt;
* two protocols (``--protocols first,steady``): **first pass** (each text encoded once, as
  one string) and **steady state** (the same text cut into 64 KB documents, encoded one call
  per document in three passes, each in a different shuffled order, the same order for every
  library; MB/s over the whole stream and over the third pass): how real corpora behave, the
  same words and identifiers again and again;
* ``--clock cpu`` times by the process's CPU time (all threads) instead of the wall clock:
  on a shared, loaded machine the wall clock also counts time spent waiting for a core (the
  batches are timed by the wall clock whatever the option: the 2-thread one is about elapsed
  time, and its ratio to the 1-thread one needs both on one clock);
* figures are **medians** of ``--repeat`` runs, in MB/s of UTF-8 input, with the ratio to
  tiktoken measured in the same run; the runs interleave the libraries (run 1 of each, then
  run 2 of each, ...), so a slow spell of a shared machine falls on all of them alike, and a
  library's 1-thread and 2-thread batches alternate, so that their ratio compares runs made
  next to each other;
* modes: ``list`` (``encode_ordinary`` returning a Python list), ``numpy`` (uint32 array),
  ``batch1``/``batch2`` (``encode_ordinary_batch`` on the corpus split into ~4 KB documents,
  1 and 2 threads);
* load: a fresh process (``subprocess``) imports the library, then loads the encoding (scantok
  with a warm cache); both times and the peak RSS (``VmHWM``), medians of 3;
* every library's ids are checked against tiktoken's on each timed text (``exact``);
* ``gc.collect()`` runs before each timed call (after the warming), for every library: the
  output lists of the library timed before (kept for the exactness check) are young objects,
  and the cyclic GC's passes over them otherwise fell into the next library's timing (on
  ``batch2`` they took scantok's 2-thread batch on en from ~215 to ~125 MB/s: its calling
  thread, which builds the lists, is on the critical path);
* and, as ``timeit`` does, the cyclic GC is paused while a call is timed, for every library
  and mode: a batch returns one new list per document, and a young-generation pass over
  them (~5 ms per million ids) fell inside a call or just after it depending on how many
  containers it had allocated (700 trigger one): inside the 2-thread batch, after the
  1-thread one, so the 2-thread / 1-thread ratio measured the GC threshold, not the threads.
  Both pay that pass in a program that keeps encoding;
* the output a library's previous run kept for the exactness check is freed after the clock
  stops, not inside the next timed call (freeing a list of a million ids, ~3 ms, had been
  timed with every first-pass run but the first, one more serial step for a 2-thread batch);
* short texts: µs per ``encode_ordinary`` call on a chat-sized message and a line of code;
* pathological inputs (``" " * 10**6 + "x"``, ``"a" * 10**7``, 10**7 random letters): each
  library in a fresh process with ``--timeout``; a crash or a stall is reported as such.

Peers that are not installed (or cannot load offline) are skipped and the table says so.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from heldout import UNSEEN

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


UNSEEN_WARM = 1 << 20  # the unseen texts' libraries are warmed on corpus/en.txt[:1 MB]


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


def documents64(text: str, size: int = 65536) -> list[str]:
    """text cut into documents of `size` bytes of UTF-8 (at character boundaries)."""
    data = text.encode()
    docs, i = [], 0
    while i < len(data):
        j = min(i + size, len(data))
        while j < len(data) and (data[j] & 0xC0) == 0x80:
            j += 1
        docs.append(data[i:j].decode())
        i = j
    return docs


def steady_orders(n: int, passes: int = 3) -> list[list[int]]:
    import random

    rng = random.Random(13)
    orders = []
    for _ in range(passes):
        order = list(range(n))
        rng.shuffle(order)
        orders.append(order)
    return orders


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


def interleaved(adapters, mode, repeat: int):
    """(library, mode, mode function, fresh instance) for each run: the runs interleave the
    libraries (run 1 of each, then run 2 of each, ...), so a slow spell of this shared
    machine falls on all of them alike. `mode` may be a tuple of modes, whose runs then
    interleave too (each library's run of each mode, then the next library's)."""
    modes_wanted = mode if isinstance(mode, tuple) else (mode,)
    for _ in range(repeat):
        for lib, (make, modes) in adapters.items():
            for m in modes_wanted:
                fn = modes.get(m)
                if fn is not None:
                    yield lib, m, fn, make()


def mode_groups(modes: list[str]) -> list[tuple[str, ...]]:
    """The modes in the groups whose runs interleave: the two batches together, so that the
    2-thread / 1-thread ratio compares runs made next to each other (on this VM a slow spell
    of a few seconds had fallen on all the runs of one and none of the other)."""
    groups, batches = [], tuple(m for m in modes if m in ("batch1", "batch2"))
    for m in modes:
        if m in batches:
            if m == batches[0]:
                groups.append(batches)
        else:
            groups.append((m,))
    return groups


def load_corpora(args) -> dict[str, tuple[str, str]]:
    """name -> (warming text, timed text); they never overlap."""
    corpora = {}
    for c in args.corpora:
        text = (CORPUS_DIR / f"{c}.txt").read_bytes().decode("utf-8", "replace")
        if args.quick:
            text = text[: 1_200_000]
        corpora[c] = (text[:WARM], text[WARM:])
    en = (CORPUS_DIR / "en.txt").read_bytes().decode("utf-8", "replace")[:UNSEEN_WARM]
    for c in args.unseen:
        try:
            text = UNSEEN[c]()
        except (OSError, KeyError) as e:
            print(f"  unseen text {c!r} not available: {e}", file=sys.stderr)
            continue
        if args.quick:
            text = text[: 1_200_000]
        corpora[c] = (en, text)
    return corpora


STEADY_MODES = {"list": "list", "numpy": "numpy"}
# wall: elapsed time; cpu: CPU time of this process (all its threads), which a shared, loaded
# machine disturbs less. The batches are always timed on the wall clock: batch2's point is the
# elapsed time, and the 2-thread / 1-thread ratio compares the two on the same clock (batch1 on
# the CPU clock left out of its time whatever the VM took from the process, batch2 not)
CLOCK = {"wall": time.perf_counter, "cpu": time.process_time}


class gc_paused:
    """The cyclic GC off for a timed region, as timeit does (see the module docstring)."""

    def __enter__(self):
        self.was = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc):
        if self.was:
            gc.enable()


def bench_steady(args, adapters_by_enc, corpora):
    """Steady state: (enc, lib, corpus, mode) -> (MB/s over the stream, MB/s in the 3rd pass)."""
    out = {}
    for enc, (adapters, oracle) in adapters_by_enc.items():
        for corpus, (warm, timed) in corpora.items():
            docs = documents64(timed)
            mb = len(timed.encode()) / 1e6
            orders = steady_orders(len(docs))
            warm_docs = documents64(warm)
            for mode in args.modes:
                if mode not in STEADY_MODES:
                    continue
                runs: dict[str, list[tuple[float, float]]] = {}
                for lib, _, fn, inst in interleaved(adapters, mode, args.repeat):
                    for d in warm_docs:
                        fn(inst, d)
                    gc.collect()  # see the module docstring
                    passes = []
                    for order in orders:
                        with gc_paused():
                            t0 = CLOCK[args.clock]()
                            for i in order:
                                fn(inst, docs[i])
                            passes.append(CLOCK[args.clock]() - t0)
                    runs.setdefault(lib, []).append((3 * mb / sum(passes), mb / passes[2]))
                    if oracle is not None and lib != "tiktoken" and len(runs[lib]) == 1:
                        # exactness on the stream (a sample of documents, after the passes)
                        for i in orders[2][:8]:
                            if as_list(fn(inst, docs[i])) != oracle.encode_ordinary(docs[i]):
                                out.setdefault("_inexact", set()).add((enc, lib, corpus, mode))
                    del inst
                for lib, rs in runs.items():
                    whole = statistics.median(r[0] for r in rs)
                    third = statistics.median(r[1] for r in rs)
                    out[(enc, lib, corpus, mode)] = (whole, third)
                    print(f"  steady {enc:12s} {lib:10s} {corpus:6s} {mode:6s} {whole:7.1f} / {third:7.1f} MB/s",
                          file=sys.stderr, flush=True)
    return out


def steady_table(args, steady) -> str:
    inexact = steady.pop("_inexact", set())
    lines = []
    corpora = sorted({k[2] for k in steady}, key=lambda c: (args.corpora + args.unseen).index(c))
    for enc in args.encodings:
        lines.append(f"\n**{enc}, steady state** — 64 KB documents, 3 shuffled passes: MB/s over the whole "
                     f"stream / over the 3rd pass (× gigatoken's whole stream), median of {args.repeat}, {args.clock} clock\n")
        lines += ["| library | mode | " + " | ".join(corpora) + " |", "|" + "---|" * (len(corpora) + 2)]
        for lib in args.libs:
            for mode in STEADY_MODES:
                cells = []
                for c in corpora:
                    v = steady.get((enc, lib, c, mode))
                    if v is None:
                        cells.append("—")
                        continue
                    g = steady.get((enc, "gigatoken", c, mode))
                    ratio = f" ({v[0] / g[0]:.2f}×)" if g and lib != "gigatoken" else ""
                    bad = " **ids differ**" if (enc, lib, c, mode) in inexact else ""
                    cells.append(f"{v[0]:.0f} / {v[1]:.0f}{ratio}{bad}")
                if any(x != "—" for x in cells):
                    lines.append(f"| {lib} | {mode} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def bench(args):
    _tiktoken_cache()
    corpora = load_corpora(args)
    results = {}  # (enc, lib, corpus, mode) -> MB/s
    exact = {}
    skipped = {}
    loads = {}
    args.adapters_by_enc = {}
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
        args.adapters_by_enc[enc] = (adapters, oracle)
        for corpus, (warm, timed) in (corpora.items() if "first" in args.protocols else ()):
            data_mb = len(timed.encode("utf-8")) / 1e6
            docs, warm_docs = documents(timed), documents(warm)
            for group in mode_groups(args.modes):
                times: dict[tuple[str, str], list[float]] = {}
                outs = {}
                for lib, mode, fn, inst in interleaved(adapters, group, args.repeat):
                    batch = mode.startswith("batch")
                    fn(inst, warm_docs if batch else warm)
                    gc.collect()  # see the module docstring
                    clock = CLOCK["wall" if batch else args.clock]
                    with gc_paused():
                        t0 = clock()
                        out = fn(inst, docs if batch else timed)
                        times.setdefault((lib, mode), []).append(clock() - t0)
                    # kept for the exactness check: the run before it of the same library is
                    # freed here, out of the timing (a 1 M-id list of lists takes ms to free)
                    outs[(lib, mode)] = out
                    del out
                    del inst
                wants = {}
                for (lib, mode), ts in times.items():
                    key = (enc, lib, corpus, mode)
                    batch = mode.startswith("batch")
                    results[key] = data_mb / statistics.median(ts)
                    if oracle is not None:
                        if batch not in wants:
                            wants[batch] = (oracle.encode_ordinary_batch(docs, num_threads=2) if batch
                                            else oracle.encode_ordinary(timed))
                        out = outs.pop((lib, mode))
                        got = [as_list(x) for x in out] if batch else as_list(out)
                        exact[key] = got == wants[batch]
                    print(f"  {enc:12s} {lib:10s} {corpus:6s} {mode:7s} {results[key]:8.1f} MB/s"
                          f"{'' if exact.get(key, True) else '  (ids differ from tiktoken!)'}",
                          file=sys.stderr, flush=True)
        if args.load:
            for lib in adapters:
                loads[(enc, lib)] = measure_load(lib, enc)
    args.corpora_loaded = corpora
    return results, exact, skipped, loads


def table(args, results, exact, skipped, loads) -> str:
    lines = []
    modes_label = {"list": "list", "numpy": "numpy", "batch1": "batch 1 thr", "batch2": "batch 2 thr"}
    for enc in args.encodings:
        lines.append(f"\n**{enc}** — MB/s (× tiktoken), median of {args.repeat} runs, fresh instance warmed on other text, {args.clock} clock\n")
        names = [c for c in args.corpora + args.unseen if any(k[0] == enc and k[2] == c for k in results)]
        head = "| library | mode | " + " | ".join(names) + " | exact |"
        lines += [head, "|" + "---|" * (len(names) + 3)]
        for lib in args.libs:
            if lib in skipped:
                continue
            for mode in args.modes:
                cells = []
                ok = True
                have = False
                for c in names:
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
            one = [results.get((enc, lib, c, "batch1")) for c in names]
            two = [results.get((enc, lib, c, "batch2")) for c in names]
            if all(one) and all(two):
                sp.append(f"{lib} " + "/".join(f"{b / a:.2f}" for a, b in zip(one, two)))
        if sp:
            lines.append(f"\n2-thread speed-up over 1 thread ({'/'.join(names)}): " + "; ".join(sp))
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
    p.add_argument("--unseen", default="prose,c,intl", help="texts in no shared corpus: " + ",".join(UNSEEN))
    p.add_argument("--protocols", default="first,steady", help="first (one pass, whole text), steady (64 KB docs, 3 passes)")
    p.add_argument("--libs", default=",".join(LIBS))
    p.add_argument("--modes", default="list,numpy,batch1,batch2")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                   help="time the encoding calls by the wall clock or by the process's CPU time")
    p.add_argument("--no-load", dest="load", action="store_false")
    p.add_argument("--quick", action="store_true", help="1.2 MB of each corpus, 1 run")
    p.add_argument("--no-short", dest="short", action="store_false", help="skip the short-text latency")
    p.add_argument("--no-pathological", dest="pathological", action="store_false",
                   help="skip the pathological inputs (each library in a fresh process)")
    p.add_argument("--timeout", type=float, default=60, help="seconds per pathological run")
    p.add_argument("--json", help="also write the raw figures here")
    args = p.parse_args(argv)
    for k in ("encodings", "corpora", "unseen", "libs", "modes", "protocols"):
        setattr(args, k, [x for x in getattr(args, k).split(",") if x])
    if args.quick:
        args.repeat = 1
    if "tiktoken" not in args.libs:
        args.libs.insert(0, "tiktoken")
    results, exact, skipped, loads = bench(args)
    md = table(args, results, exact, skipped, loads)
    steady = {}
    if "steady" in args.protocols:
        steady = bench_steady(args, args.adapters_by_enc, args.corpora_loaded)
        md += "\n" + steady_table(args, dict(steady))
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
            "steady": [[*k, *v] for k, v in steady.items() if k != "_inexact"],
        }, indent=1))
    return 0 if all(exact.values()) and "_inexact" not in steady else 1


if __name__ == "__main__":
    sys.exit(main())
