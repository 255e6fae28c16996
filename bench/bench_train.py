"""BPE training: scantok.train_bpe next to HF tokenizers' BpeTrainer, gigabpe and rustbpe
(each when installed), time and peak RSS, each trainer in a fresh process, runs interleaved.

Corpora (built once into --workdir, reproducibly):
  shared  ../shared/corpus en + code + multi concatenated (12.5 MB);
  py63    the .py files of this Python's standard library directory (sysconfig "stdlib", which
          holds site-packages too), in sorted path order, valid UTF-8 only, up to 50 MB, followed
          by the shared corpora (about 63 MB).  /usr/include is never used.

Merges are checked: scantok's against HF's when HF runs, else against gigabpe's (whose merges
equal HF's; it emits a few more after HF's last, so the common prefix is compared).

    python bench/bench_train.py [--vocab 50000] [--repeat 3] [--corpora shared,py63]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("SCANTOK_CORPUS_DIR", REPO.parent / "shared" / "corpus"))
PY_BYTES = 50 << 20


def build_corpora(workdir: Path) -> dict[str, Path]:
    workdir.mkdir(parents=True, exist_ok=True)
    shared = workdir / "shared.txt"
    parts = [(SHARED / f"{n}.txt").read_bytes() for n in ("en", "code", "multi")]
    if not shared.exists():
        shared.write_bytes(b"".join(parts))
    py = workdir / "py63.txt"
    if not py.exists():
        root = Path(sysconfig.get_paths()["stdlib"])
        out, size = [], 0
        for p in sorted(root.rglob("*.py")):
            if size >= PY_BYTES:
                break
            try:
                data = p.read_bytes()
                data.decode("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if not data.endswith(b"\n"):
                data += b"\n"
            out.append(data)
            size += len(data)
        tmp = py.with_suffix(".tmp")
        tmp.write_bytes(b"".join(out + parts))
        tmp.replace(py)
    return {"shared": shared, "py63": py}


CHILD = r"""
import json, os, resource, sys, time
trainer, path, vocab, threads, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
def bl(s):
    from scantok.bpe.bytelevel import str_to_bytes
    return str_to_bytes(s)
if trainer == "scantok":
    import scantok
    import scantok.bpe
    t = time.perf_counter(); c0 = time.process_time()
    merges = scantok.train_bpe([path], vocab_size=vocab, num_threads=threads).merges
    dt = time.perf_counter() - t; cpu = time.process_time() - c0
elif trainer == "hf":
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tr = trainers.BpeTrainer(vocab_size=vocab, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    t = time.perf_counter(); c0 = time.process_time()
    tok.train([path], tr)
    dt = time.perf_counter() - t; cpu = time.process_time() - c0
    merges = [tuple(bl(x) for x in m) for m in json.loads(tok.to_str())["model"]["merges"]]
elif trainer == "gigabpe":
    import gigabpe
    t = time.perf_counter(); c0 = time.process_time()
    vocab_map, m = gigabpe.train_bpe([path], vocab, pretokenizer="bytelevel", threads=threads)
    dt = time.perf_counter() - t; cpu = time.process_time() - c0
    merges = [(bl(a), bl(b)) for a, b in m]
elif trainer == "rustbpe":
    import rustbpe
    pat = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
    tok = rustbpe.Tokenizer()
    t = time.perf_counter(); c0 = time.process_time()
    with open(path, encoding="utf-8") as f:
        tok.train_from_iterator(f, vocab, pattern=pat)
    dt = time.perf_counter() - t; cpu = time.process_time() - c0
    merges = None
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
if merges is not None:
    import pickle
    with open(out, "wb") as f:
        pickle.dump(merges, f)
print(json.dumps({"seconds": dt, "cpu": cpu, "rss_mb": rss}))
"""


def available() -> list[str]:
    out = ["scantok"]
    for mod, name in (("tokenizers", "hf"), ("gigabpe", "gigabpe"), ("rustbpe", "rustbpe")):
        try:
            __import__(mod)
            out.append(name)
        except ImportError:
            pass
    return out


def run(trainer: str, path: Path, vocab: int, threads: int, out: Path) -> dict:
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads))
    r = subprocess.run([sys.executable, "-c", CHILD, trainer, str(path), str(vocab), str(threads), str(out)],
                       capture_output=True, text=True, env=env, timeout=3600)
    if r.returncode:
        return {"error": (r.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(r.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vocab", type=int, default=50_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--corpora", default="shared,py63")
    ap.add_argument("--trainers", default=",".join(available()))
    ap.add_argument("--threads", default="1,2", help="thread counts for scantok and gigabpe")
    ap.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "scantok-bench-train"))
    args = ap.parse_args(argv)
    corpora = build_corpora(Path(args.workdir))
    trainers = args.trainers.split(",")
    threads = [int(t) for t in args.threads.split(",")]
    configs = []
    for t in trainers:
        for n in (threads if t in ("scantok", "gigabpe") else [1]):
            configs.append((t, n))
    outdir = Path(args.workdir) / "merges"
    outdir.mkdir(exist_ok=True)
    print(f"vocab {args.vocab}; {args.repeat} interleaved runs; fresh process per run; the machine is shared "
          f"(loaded by other jobs): read the ratios")
    for cname in args.corpora.split(","):
        path = corpora[cname]
        mb = path.stat().st_size / 1e6
        sha = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
        results: dict = {c: [] for c in configs}
        for _ in range(args.repeat):
            for c in configs:
                results[c].append(run(c[0], path, args.vocab, c[1], outdir / f"{cname}-{c[0]}-{c[1]}.pkl"))
        print(f"\n## {cname}: {mb:.1f} MB (sha256 {sha})")
        med = {}
        for c, rs in results.items():
            ok = [r for r in rs if "error" not in r]
            if not ok:
                print(f"{c[0]:>8} {c[1]}T  error: {rs[0]['error']}")
                continue
            med[c] = (statistics.median(r["seconds"] for r in ok), max(r["rss_mb"] for r in ok),
                      statistics.median(r["cpu"] for r in ok))
        base = med.get(("scantok", 1))
        print("| trainer | threads | wall s (median) | CPU s | peak RSS MB | wall / scantok 1T | CPU / scantok 1T |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for c, (s, rss, cpu) in med.items():
            ratio = f"{s / base[0]:.2f}x" if base else "-"
            cratio = f"{cpu / base[2]:.2f}x" if base else "-"
            print(f"| {c[0]} | {c[1]} | {s:.2f} | {cpu:.2f} | {rss:.0f} | {ratio} | {cratio} |")
        import pickle

        ours = pickle.loads((outdir / f"{cname}-scantok-1.pkl").read_bytes())
        for c in configs:
            f = outdir / f"{cname}-{c[0]}-{c[1]}.pkl"
            if c == ("scantok", 1) or not f.exists():
                continue
            theirs = pickle.loads(f.read_bytes())
            if c[0] == "gigabpe":
                same = theirs[:len(ours)] == ours
            else:
                same = theirs == ours
            print(f"merges of {c[0]} {c[1]}T vs scantok 1T: {'identical' if same else 'DIFFERENT'}"
                  f" ({len(theirs)} vs {len(ours)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
