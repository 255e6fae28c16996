"""scantok.Tokenizer against HuggingFace tokenizers on tokenizer.json files, one thread.

    python bench/bench_hf.py [--corpus-dir DIR] [--mb 1.0] [--repeats 3]

Files: DeepSeek V3's tokenizer.json (three Split regexes + ByteLevel, byte-level BPE), and a
GPT-2-style file (ByteLevel with its regex, 32K byte-level BPE) trained here with tokenizers
on the first 1 MB of each corpus.  Timed text: ``--mb`` MB from the middle of each corpus
(held out from training and from warming), and of each ``--unseen`` text (``bench/heldout.py``:
vim's help files, the C headers, vim's tutors in 30 languages; in no corpus, used to tune
nothing; warmed on English), cut into 4 KB documents.  HF runs in a subprocess
with RAYON_NUM_THREADS=1; scantok with num_threads=1; CPU time of the process (the machine is
shared: wall time is noise).  Each library times ``encode_batch_fast`` (which returns
Encodings in both: tokenizers' hold their ids in Rust, scantok's in a C buffer, each converted to a
list on access), the same call followed by reading every ``.ids`` (``+ .ids``), and then ``encode``
on a fresh tokenizer warmed on other text: neither has the timed documents in its caches.  Runs interleave; medians; every id list
and offset list is compared with HF's.  MB/s of UTF-8.
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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from heldout import UNSEEN  # noqa: E402
DEFAULT_SHARED = HERE.parent.parent / "shared"
CORPORA = ("en", "code", "multi")
DOC = 4096

HF_CHILD = r"""
import json, sys, time, hashlib
from tokenizers import Tokenizer
path, docs_path, warm_path = sys.argv[1:4]
tok = Tokenizer.from_file(path)
docs = json.load(open(docs_path)); warm = json.load(open(warm_path))
tok.encode_batch_fast(warm)
t = time.process_time(); out = tok.encode_batch_fast(docs); fast = time.process_time() - t
ids = [e.ids for e in out]; fast_ids = time.process_time() - t
tok = Tokenizer.from_file(path); [tok.encode(w) for w in warm]  # a cache that has not seen docs
t = time.process_time(); encs = [tok.encode(d) for d in docs]; enc = time.process_time() - t
h = hashlib.sha256(json.dumps([ids, [e.offsets for e in encs]]).encode()).hexdigest()
print(json.dumps({"fast": fast, "fast_ids": fast_ids, "encode": enc, "digest": h}))
"""


def docs_of(text: str) -> list[str]:
    return [text[i:i + DOC] for i in range(0, len(text), DOC)]


def run_hf(path: str, docs_path: str, warm_path: str) -> dict:
    env = {**os.environ, "RAYON_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", HF_CHILD, path, docs_path, warm_path], env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_scantok(path: str, docs: list[str], warm: list[str]) -> dict:
    import hashlib

    import scantok

    tok = scantok.Tokenizer.from_file(path)
    tok.encode_batch_fast(warm, num_threads=1)
    t = time.process_time()
    out = tok.encode_batch_fast(docs, num_threads=1)
    fast = time.process_time() - t
    ids = [e.ids for e in out]
    fast_ids = time.process_time() - t
    tok = scantok.Tokenizer.from_file(path)  # a piece cache that has not seen docs
    for w in warm:
        tok.encode(w)
    t = time.process_time()
    encs = [tok.encode(d) for d in docs]
    enc = time.process_time() - t
    h = hashlib.sha256(json.dumps([ids, [[list(o) for o in e.offsets] for e in encs]]).encode()).hexdigest()
    return {"fast": fast, "fast_ids": fast_ids, "encode": enc, "digest": h}


def gpt2_style_file(shared: Path, out: str) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    texts = [(shared / "corpus" / f"{c}.txt").read_text(encoding="utf-8")[:1_000_000] for c in CORPORA]
    trainer = trainers.BpeTrainer(vocab_size=32_000, special_tokens=["<|endoftext|>"], show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(texts, trainer)
    tok.save(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", type=Path, default=Path(os.environ.get("SCANTOK_SHARED_DIR", DEFAULT_SHARED)))
    ap.add_argument("--mb", type=float, default=1.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--corpora", default=",".join(CORPORA), help="shared corpora to time")
    ap.add_argument("--unseen", default="prose,c,intl", help="held-out texts to time: " + ",".join(UNSEEN))
    args = ap.parse_args(argv)

    import scantok

    with tempfile.TemporaryDirectory() as tmp:
        gpt2 = os.path.join(tmp, "gpt2_style.json")
        gpt2_style_file(args.shared, gpt2)
        files = {"deepseek_v3": str(args.shared / "hf" / "deepseek_v3" / "tokenizer.json"), "gpt2_style": gpt2}
        print(f"{'file':12} {'corpus':6} | {'fast MB/s: scantok':>18} {'HF':>6} {'ratio':>7} | "
              f"{'+ .ids':>7} {'HF':>6} {'ratio':>7} | "
              f"{'encode MB/s: scantok':>20} {'HF':>6} {'ratio':>7} | same")
        for name, path in files.items():
            t = time.process_time()
            tok = scantok.Tokenizer.from_file(path)
            load = time.process_time() - t
            en = (args.shared / "corpus" / "en.txt").read_text(encoding="utf-8")
            texts = [c for c in args.corpora.split(",") if c] + [u for u in args.unseen.split(",") if u]
            for c in texts:
                held_out = c in UNSEEN and c not in CORPORA
                try:
                    text = UNSEEN[c]() if held_out else (args.shared / "corpus" / f"{c}.txt").read_text(encoding="utf-8")
                except FileNotFoundError:
                    print(f"{name:12} {c:6} | skipped: not on this machine")
                    continue
                mid = len(text) // 2
                n = int(args.mb * 1_000_000)
                timed = docs_of(text[mid:mid + n])
                # warmed on other text: the corpus's own (past the training slice), English for held-out text
                warm = docs_of((en if held_out else text)[1_100_000:1_100_000 + 200_000])
                mb = sum(len(d.encode("utf-8")) for d in timed) / 1e6
                dp, wp = os.path.join(tmp, "docs.json"), os.path.join(tmp, "warm.json")
                json.dump(timed, open(dp, "w"))
                json.dump(warm, open(wp, "w"))
                ours, theirs = [], []
                for _ in range(args.repeats):
                    theirs.append(run_hf(path, dp, wp))
                    ours.append(run_scantok(path, timed, warm))
                med = {k: (statistics.median(r[k] for r in ours), statistics.median(r[k] for r in theirs))
                       for k in ("fast", "fast_ids", "encode")}
                same = all(r["digest"] == theirs[0]["digest"] for r in ours + theirs)
                f_s, f_h = mb / med["fast"][0], mb / med["fast"][1]
                i_s, i_h = mb / med["fast_ids"][0], mb / med["fast_ids"][1]
                e_s, e_h = mb / med["encode"][0], mb / med["encode"][1]
                print(f"{name:12} {c:6} | {f_s:18.1f} {f_h:6.2f} {f_s / f_h:6.1f}x | "
                      f"{i_s:7.1f} {i_h:6.2f} {i_s / i_h:6.1f}x | "
                      f"{e_s:20.1f} {e_h:6.2f} {e_s / e_h:6.1f}x | {same}")
            print(f"  ({name}: scantok load {load:.2f} s; C path: {tok._stages is not None})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
