"""WordLevel throughput: scantok vs HuggingFace `tokenizers`, side by side in one run.

    python bench/bench_wordlevel.py [--corpus-dir DIR] [--repeats N] [--vocab-size 50000]

A 50K WordLevel vocabulary is trained on the three corpora with WhitespaceSplit (scantok's
trainer; HF's gives the same vocabulary, checked), saved as tokenizer.json and loaded by both
libraries.  HF runs in subprocesses with RAYON_NUM_THREADS=1 and =2 (rayon reads it once, at
first use).  Each mode is warmed on one corpus slice and timed on the whole corpus; the figure
is the median of --repeats runs, in MB/s of UTF-8 input.  Every mode's ids are checked equal to
HF's (a digest of the id stream).  Prints a markdown table.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpus"
CORPORA = ("en", "code", "multi")


def chunks_of(text: str, size: int = 4096) -> list[str]:
    """The text cut at line ends into pieces of about `size` characters (a batch)."""
    out, pos, n = [], 0, len(text)
    while pos < n:
        j = text.find("\n", pos + size)
        j = n if j < 0 else j + 1
        out.append(text[pos:j])
        pos = j
    return out


def digest(ids_iter) -> str:
    h = hashlib.sha256()
    for ids in ids_iter:
        h.update(json.dumps(list(ids) if not isinstance(ids, list) else ids).encode())
    return h.hexdigest()[:16]


def timed(fn, repeats: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


# -- HF side (runs in a subprocess: RAYON_NUM_THREADS must be set before rayon starts) ----------
HF_SCRIPT = r"""
import json, sys, time, statistics, hashlib
from tokenizers import Tokenizer
tok_path, corpus_dir, repeats = sys.argv[1], sys.argv[2], int(sys.argv[3])
sys.path.insert(0, sys.argv[4])
from bench_wordlevel import chunks_of, digest, timed, CORPORA
tok = Tokenizer.from_file(tok_path)
res = {}
for name in CORPORA:
    text = open(f"{corpus_dir}/{name}.txt", encoding="utf-8").read()
    mb = len(text.encode("utf-8")) / 1e6
    batch = chunks_of(text)
    warm = text[: len(text) // 8]
    tok.encode(warm); tok.encode_batch_fast(chunks_of(warm))
    t_enc, e = timed(lambda: tok.encode(text), repeats)
    t_fast, eb = timed(lambda: tok.encode_batch_fast(batch), repeats)
    res[name] = {"encode": mb / t_enc, "encode_batch_fast": mb / t_fast,
                 "digest": digest([e.ids]), "digest_batch": digest([x.ids for x in eb])}
print(json.dumps(res))
"""


def run_hf(tok_path: str, corpus_dir: Path, repeats: int, threads: int) -> dict:
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads), TOKENIZERS_PARALLELISM="true")
    out = subprocess.run(
        [sys.executable, "-c", HF_SCRIPT, tok_path, str(corpus_dir), str(repeats), str(Path(__file__).parent)],
        env=env, check=True, capture_output=True, text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus-dir", type=Path, default=Path(os.environ.get("SCANTOK_CORPUS_DIR", DEFAULT_CORPUS)))
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--vocab-size", type=int, default=50_000)
    args = ap.parse_args(argv)

    from scantok import WordLevel, train_wordlevel
    from scantok import wordlevel as W

    files = [str(args.corpus_dir / f"{c}.txt") for c in CORPORA]
    t0 = time.perf_counter()
    trained = train_wordlevel(files, vocab_size=args.vocab_size, special_tokens=["[UNK]"], unk_token="[UNK]")
    t_train = time.perf_counter() - t0
    # the benchmark tokenizer: the trained vocabulary, no added tokens (HF then splits nothing out)
    wl = WordLevel({t: i for t, i in trained.get_vocab().items()}, "[UNK]", None, "whitespace_split")
    with tempfile.TemporaryDirectory() as tmp:
        tok_path = os.path.join(tmp, "tokenizer.json")
        wl.save(tok_path)
        hf1 = run_hf(tok_path, args.corpus_dir, max(3, args.repeats // 2), 1)
        hf2 = run_hf(tok_path, args.corpus_dir, max(3, args.repeats // 2), 2)

    native = W._native() is not None and wl._table is not None
    rows = []
    for name in CORPORA:
        text = (args.corpus_dir / f"{name}.txt").read_text(encoding="utf-8")
        mb = len(text.encode("utf-8")) / 1e6
        batch = chunks_of(text)
        warm = text[: len(text) // 8]
        wl.encode(warm), wl.encode(warm, as_numpy=True), wl.encode_batch(chunks_of(warm), num_threads=2)
        t_list, ids = timed(lambda: wl.encode(text), args.repeats)
        t_np, arr = timed(lambda: wl.encode(text, as_numpy=True), args.repeats)
        t_b1, b1 = timed(lambda: wl.encode_batch(batch, num_threads=1), args.repeats)
        t_b2, b2 = timed(lambda: wl.encode_batch(batch, num_threads=2), args.repeats)
        t_b2np, b2np = timed(lambda: wl.encode_batch(batch, num_threads=2, as_numpy=True), args.repeats)
        ok = (digest([ids]) == hf1[name]["digest"] == hf2[name]["digest"]
              and digest([arr.tolist()]) == hf1[name]["digest"]
              and digest(b1) == digest(b2) == digest([a.tolist() for a in b2np]) == hf1[name]["digest_batch"])
        h1, h2 = hf1[name], hf2[name]
        hf_best1 = max(h1["encode"], h1["encode_batch_fast"])
        rows.append({
            "corpus": name, "MB": mb, "ids_equal": ok,
            "scantok encode (list)": mb / t_list, "scantok encode (numpy)": mb / t_np,
            "scantok batch 1 thread": mb / t_b1, "scantok batch 2 threads": mb / t_b2,
            "scantok batch 2 threads (numpy)": mb / t_b2np,
            "HF encode 1T": h1["encode"], "HF encode_batch_fast 1T": h1["encode_batch_fast"],
            "HF encode 2T": h2["encode"], "HF encode_batch_fast 2T": h2["encode_batch_fast"],
            "ratio list / HF best 1T": (mb / t_list) / hf_best1,
            "ratio numpy / HF best 1T": (mb / t_np) / hf_best1,
            "ratio batch 2T / HF batch_fast 2T": (mb / t_b2) / h2["encode_batch_fast"],
        })

    print(f"\nWordLevel, WhitespaceSplit, {len(wl.get_vocab())} vocabulary trained on the corpora "
          f"(scantok train_wordlevel: {t_train:.1f} s); native C path: {native}; "
          f"median of {args.repeats} runs (HF: {max(3, args.repeats // 2)}); MB/s of UTF-8; "
          f"{os.cpu_count()} CPUs, load average at the end {os.getloadavg()[0]:.1f}\n")
    cols = [k for k in rows[0] if k not in ("corpus", "MB", "ids_equal")]
    print("| mode | " + " | ".join(r["corpus"] for r in rows) + " |")
    print("|---|" + "---:|" * len(rows))
    for c in cols:
        fmt = (lambda v: f"{v:.1f}×") if c.startswith("ratio") else (lambda v: f"{v:.0f}" if v >= 10 else f"{v:.1f}")
        print(f"| {c} | " + " | ".join(fmt(r[c]) for r in rows) + " |")
    print("| ids identical to HF | " + " | ".join("yes" if r["ids_equal"] else "**NO**" for r in rows) + " |")
    return 0 if all(r["ids_equal"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
