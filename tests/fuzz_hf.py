"""Long differential fuzz campaign: scantok.Tokenizer against HuggingFace tokenizers, and the
tiktoken-compatible batch encoder against tiktoken, on text that mixes scripts.

    python tests/fuzz_hf.py --seconds 600
    SCANTOK_FORCE_IMPL=scalar python tests/fuzz_hf.py --seconds 180   # the scalar str -> UTF-8
    python tests/fuzz_hf.py --examples 2000 --seed 3 --repro /tmp/repro.py

Its target is the str -> UTF-8 converter (cpyext/ucs_utf8.c) that every non-ASCII str takes on
these paths, so the texts come in all three CPython kinds (Latin-1, UCS-2, UCS-4; a few ASCII),
about a third each, made exact by one character of the kind: runs of random code points from
ASCII, Latin-1, Latin Extended, Greek/Cyrillic, CJK and kana, Hangul, emoji and other astral
planes, combining marks, digits of several scripts and the code-point edges of each UTF-8
length; whitespace runs (\\r, \\n, \\t, U+00A0, U+3000); ``strategies`` fragments; and slices of
the three corpora, all cut to the kind. Lengths: 0, around 8, 16, 32, 64 and 4096, up to 300,
up to 20,000, and about one text in 300 longer than 65,536 (the converter's 16-bit counters).
One text in 30 holds a lone surrogate (both libraries must raise, or give the same result); one
in 20 is a str subclass whose ``encode`` lies (with a lone surrogate too: tiktoken's fix-up for
those calls the subclass's ``encode``, and scantok's does the same).

Files: DeepSeek V3's tokenizer.json, and a GPT-2-style byte-level BPE trained here with
tokenizers on ~300 KB of the corpora (in a temporary directory); each text goes to one of them
in turn. Checked against ``tokenizers`` 0.23.3 (RAYON_NUM_THREADS=1): ``encode(text)`` ids,
offsets and tokens, ``encode(text, add_special_tokens=False).ids`` and ``decode(ids)``. The texts
are also gathered into batches of 1-40 (any mix of kinds and lengths), checked with
``encode_batch_fast(batch, num_threads=1)`` and ``num_threads=2`` against tokenizers'
``encode_batch_fast`` Encodings (ids, tokens, offsets, masks, type ids); and, on ``get_encoding("o200k_base")`` / ``"cl100k_base"`` in turn,
``encode_ordinary`` of each text and ``encode_ordinary_batch(batch, num_threads=1)`` and ``=2``
against tiktoken 0.14.0 loaded offline (against scantok's ``encode_ordinary`` when tiktoken or
its rank files are not there). Two threads only run for a batch of at least PARALLEL_MIN
characters; the summary counts those batches.

Prints the volume and every mismatch; the first one is minimised (batch items, then characters,
for at most ``--shrink-seconds``) and written as a runnable script to ``--repro``. Exit status 1
on any mismatch.
"""
from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path


TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))
from fuzz_setup import CORPORA, SHARED, Raised, outcome  # noqa: E402 (first: the oracle on one thread before it loads)

import tokenizers  # noqa: E402

import scantok  # noqa: E402
from scantok._pylist import utf8_impl  # noqa: E402
from scantok.threadpool import PARALLEL_MIN  # noqa: E402

from shrinking import ddmin  # noqa: E402
from strategies import random_fragments  # noqa: E402

ENCODINGS = ("o200k_base", "cl100k_base")

# the largest code point of each kind (ascii, latin1, ucs2, ucs4), and the kind's weight
KINDS = {"ascii": (0x7F, 1), "latin1": (0xFF, 3), "ucs2": (0xFFFF, 3), "ucs4": (0x10FFFF, 3)}
POOLS = [  # [start, stop) ranges
    [(0x20, 0x7F)],  # ASCII
    [(0x80, 0x100)],  # Latin-1, C1 controls included
    [(0x100, 0x250), (0x1E00, 0x1F00)],  # Latin Extended
    [(0x370, 0x400), (0x400, 0x530)],  # Greek, Cyrillic
    [(0x3040, 0x3100), (0x4E00, 0xA000)],  # kana, CJK
    [(0xAC00, 0xD7A4), (0x1100, 0x1200)],  # Hangul
    # emoji, mathematical letters, CJK Extension B, tags, anything astral
    [(0x1F300, 0x1FB00), (0x1D400, 0x1D800), (0x20000, 0x2A6E0), (0xE0000, 0xE0080), (0x10000, 0x110000)],
    [(0x300, 0x370), (0x1AB0, 0x1B00), (0x20D0, 0x2100), (0xFE20, 0xFE30)],  # combining marks
    # digits: ASCII, Arabic-Indic, Devanagari, Thai, fullwidth, mathematical
    [(0x30, 0x3A), (0x660, 0x66A), (0x966, 0x970), (0xE50, 0xE5A), (0xFF10, 0xFF1A), (0x1D7CE, 0x1D800)],
    [(0x800, 0xD800), (0xE000, 0x10000)],  # the rest of the BMP
    # the edges of each UTF-8 length and of the surrogates (the last pool: gen() takes it for the kind)
    [(c, c + 1) for c in (0x7F, 0x80, 0x7FF, 0x800, 0xD7FF, 0xE000, 0xFEFF, 0xFFFD, 0xFFFF, 0x10000, 0x10FFFF)],
]
WHITESPACE = [" ", "\n", "\r", "\t", "\r\n", "\u00a0", "\u3000", "  ", "\n\n", " \n"]
# lengths next to the converter's 8- and 16-unit blocks and the 4 KB documents of the benches
AROUND = (8, 16, 32, 64, 4096)
LONG = (65_537, 150_000)
HF_CHECKS = {  # label: (scantok's expression, tokenizers'), on the text x
    "encode ids/offsets/tokens/words": (
        "(lambda e: (e.ids, e.offsets, e.tokens, e.word_ids, e.sequence_ids))(ours.encode(x))",
        "(lambda e: (e.ids, e.offsets, e.tokens, e.word_ids, e.sequence_ids))(ref.encode(x))"),
    "encode(add_special_tokens=False).ids": ("ours.encode(x, add_special_tokens=False).ids",
                                             "ref.encode(x, add_special_tokens=False).ids"),
}


class Sub(str):
    def encode(self, *args, **kwargs):  # the libraries must read the characters
        return b"not these"


def source(x) -> str:
    """x as Python source, keeping str subclasses."""
    if isinstance(x, list):
        return "[" + ", ".join(source(v) for v in x) + "]"
    return f"Sub({str(x)!r})" if isinstance(x, Sub) else repr(x)


def short(v, n: int = 400) -> str:
    s = repr(v)
    return s if len(s) <= n else f"{s[:n]}... ({len(s)} chars of repr)"


def gpt2_style_file(out: str) -> None:
    """A GPT-2-style tokenizer.json (ByteLevel pre-tokenizer, decoder and post-processor,
    byte-level BPE) trained on the first 100 KB of each corpus."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    texts = [(SHARED / "corpus" / f"{c}.txt").read_text(encoding="utf-8")[:100_000] for c in CORPORA]
    trainer = trainers.BpeTrainer(vocab_size=8192, special_tokens=["<|endoftext|>"], show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(texts, trainer)
    tok.save(out)


def tiktoken_oracle(name: str):
    """tiktoken's Encoding for name, offline, or None (then scantok's encode_ordinary is the
    reference for the batches)."""
    try:
        from test_encoding_oracle import tiktoken_encoding, vocab_dir

        vocab_dir()
        return tiktoken_encoding(name)
    except BaseException:  # not installed, another release, no rank files (pytest.skip)
        return None


class Campaign:
    def __init__(self, seed: int, tmp: str):
        self.rng = random.Random(seed)
        self.seed = seed
        self.paths = {"deepseek_v3": str(SHARED / "hf" / "deepseek_v3" / "tokenizer.json"),
                      "gpt2_style": os.path.join(tmp, "gpt2_style.json")}
        gpt2_style_file(self.paths["gpt2_style"])
        self.hf = {n: (scantok.Tokenizer.from_file(p), tokenizers.Tokenizer.from_file(p))
                   for n, p in self.paths.items()}
        self.tik = {}
        for n in ENCODINGS:
            ours = scantok.get_encoding(n)
            ref = tiktoken_oracle(n)
            self.tik[n] = (ours, ref or ours)
        self.tik_ref = "tiktoken 0.14.0" if all(r is not o for o, r in self.tik.values()) else "scantok encode_ordinary"
        corpora = [(SHARED / "corpus" / f"{c}.txt").read_text(encoding="utf-8") for c in CORPORA]
        self.corpora = {  # each corpus cut to each kind
            "ascii": [re.sub(r"[^\x00-\x7f]+", "", t) for t in corpora],
            "latin1": [re.sub(r"[^\x00-\xff]+", "", t) for t in corpora],
            "ucs2": [re.sub("[\U00010000-\U0010ffff]+", "", t) for t in corpora],
            "ucs4": corpora,
        }
        self.pools = {k: [p for p in ([(a, min(b, top + 1)) for a, b in pool if a <= top] for pool in POOLS) if p]
                      for k, (top, _) in KINDS.items()}
        self.texts = 0
        self.shapes: dict[str, int] = {}
        self.calls: dict[str, int] = {}
        self.batches = self.threaded = 0
        self.pending: list[str] = []
        self.batch_size = 1
        self.mismatches: list[str] = []
        self.first: tuple | None = None
        self.compiled: dict[str, object] = {}

    # -- texts --
    def length(self) -> int:
        rng = self.rng
        r = rng.random()
        if r < 1 / 300:
            return rng.randint(*LONG)
        if r < 0.05:
            return 0
        if r < 0.45:
            return max(0, rng.choice(AROUND) + rng.randint(-3, 3))
        if r < 0.75:
            return rng.randint(1, 300)
        return rng.randint(300, 20_000)

    def segment(self, kind: str, room: int) -> str:
        rng = self.rng
        top = KINDS[kind][0]
        r = rng.random()
        if r < 0.3:
            corpus = rng.choice(self.corpora[kind])
            a = rng.randrange(len(corpus))
            return corpus[a:a + rng.randint(1, min(room, 8000))]
        if r < 0.45:
            return "".join(c for c in rng.choices(WHITESPACE, k=rng.randint(1, 30)) if ord(c[0]) <= top)
        if r < 0.55:
            return "".join(c for c in random_fragments(rng, rng.randint(1, 10), surrogates=False)
                           if max(c, default=" ") <= chr(top))
        pool = rng.choice(self.pools[kind])
        n = rng.randint(1, 60) if rng.random() < 0.9 else rng.randint(60, 1500)
        return "".join(chr(rng.randrange(*rng.choice(pool))) for _ in range(n))

    def gen(self) -> str:
        rng = self.rng
        n = self.length()
        kind = rng.choices(list(KINDS), weights=[w for _, w in KINDS.values()])[0]
        parts, size = [], 0
        while size < n:
            parts.append(self.segment(kind, n - size))
            size += len(parts[-1])
        text = "".join(parts)[:n]
        floor = {"ascii": "\0", "latin1": "\x7f", "ucs2": "\xff", "ucs4": "\uffff"}[kind]
        if text and max(text) <= floor:  # make the kind exact
            pool = [r for r in self.pools[kind][-1] if chr(r[0]) > floor] or [(0x41, 0x42)]
            i = rng.randrange(len(text))
            text = text[:i] + chr(rng.choice(pool)[0]) + text[i + 1:]
        shape = kind + (" long" if n >= LONG[0] else "")
        if rng.random() < 1 / 30:
            i = rng.randint(0, len(text))
            text = text[:i] + chr(rng.randrange(0xD800, 0xE000)) + text[i:]
            shape = "surrogate"
        if rng.random() < 1 / 20:  # with a surrogate too: tiktoken's fix-up calls text.encode()
            text = Sub(text)
            shape += " subclass"
        self.shapes[shape] = self.shapes.get(shape, 0) + 1
        return text

    # -- comparing --
    def fn(self, src: str):
        f = self.compiled.get(src)
        if f is None:
            f = self.compiled[src] = eval(f"lambda ours, ref, x: {src}")
        return f

    def differs(self, pair, ours_src: str, ref_src: str, x) -> tuple | None:
        ours, ref = pair
        want = outcome(self.fn(ref_src), ours, ref, x)
        got = outcome(self.fn(ours_src), ours, ref, x)
        return None if got == want else (want, got)

    def diff(self, where: str, label: str, ours_src: str, ref_src: str, x, want) -> None:
        """Compare scantok's outcome with want (the reference's outcome on x)."""
        pair = self.hf[where] if where in self.hf else self.tik[where]
        self.calls[label] = self.calls.get(label, 0) + 1
        got = outcome(self.fn(ours_src), *pair, x)
        if got == want:
            return
        item, shown = "", (x, want, got)
        if isinstance(x, list) and isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
            k = next(k for k, (a, b) in enumerate(zip(want, got)) if a != b)
            item, shown = f" (item {k} of {len(x)})", (x[k], want[k], got[k])
        msg = (f"MISMATCH {where} {label}{item} [{utf8_impl()}] on {short(shown[0], 300)}\n"
               f"  expected {short(shown[1])}\n  got      {short(shown[2])}")
        print(msg, flush=True)
        if self.first is None:
            self.first = (where, label, ours_src, ref_src, x)
        self.mismatches.append(msg)

    def check_text(self, text: str) -> None:
        name = list(self.hf)[self.texts % len(self.hf)]
        pair = self.hf[name]
        for label, (ours_src, ref_src) in HF_CHECKS.items():
            self.diff(name, label, ours_src, ref_src, text, outcome(self.fn(ref_src), *pair, text))
        ids = outcome(lambda t: pair[1].encode(t).ids, text)
        if not isinstance(ids, Raised):
            self.diff(name, "decode(ids)", "ours.decode(x)", "ref.decode(x)", ids, outcome(pair[1].decode, ids))

    def check_batch(self, texts: list[str]) -> None:
        rng = self.rng
        self.batches += 1
        self.threaded += sum(map(len, texts)) >= PARALLEL_MIN and len(texts) > 1
        name = rng.choice(list(self.hf))
        add = rng.random() < 0.7
        # every field of tokenizers' encode_batch_fast Encodings (offsets (0, 0), tokens of the
        # text "", the post-processor's tokens kept)
        fields = "(e.ids, e.tokens, e.offsets, e.special_tokens_mask, e.type_ids, e.attention_mask, e.word_ids)"
        ref_src = f"[{fields} for e in ref.encode_batch_fast(x, add_special_tokens={add})]"
        want = outcome(self.fn(ref_src), *self.hf[name], texts)
        for nt in (1, 2):
            self.diff(name, f"encode_batch_fast(num_threads={nt})",
                      f"[{fields} for e in ours.encode_batch_fast(x, add_special_tokens={add}, num_threads={nt})]",
                      ref_src, texts, want)
        enc = ENCODINGS[self.batches % len(ENCODINGS)]
        ref_src = "[ref.encode_ordinary(t) for t in x]"
        want = outcome(self.fn(ref_src), *self.tik[enc], texts)
        self.diff(enc, "encode_ordinary", "[ours.encode_ordinary(t) for t in x]", ref_src, texts, want)
        for nt in (1, 2):
            self.diff(enc, f"encode_ordinary_batch(num_threads={nt})",
                      f"ours.encode_ordinary_batch(x, num_threads={nt})", ref_src, texts, want)

    def run(self, seconds: float | None, examples: int | None) -> None:
        t_end = time.monotonic() + seconds if seconds else None
        while (examples is None or self.texts < examples) and (t_end is None or time.monotonic() < t_end):
            text = self.gen()
            self.check_text(text)
            self.texts += 1
            self.pending.append(text)
            if len(self.pending) >= self.batch_size:
                self.check_batch(self.pending)
                self.pending = []
                self.batch_size = self.rng.randint(1, 40)

    # -- the first mismatch, minimised --
    def shrink(self, seconds: float) -> tuple:
        """The first mismatch's input, made smaller while it still mismatches: batch items, then
        the characters of each (greedy delta debugging, for at most `seconds`)."""
        where, label, ours_src, ref_src, x = self.first
        pair = self.hf[where] if where in self.hf else self.tik[where]
        deadline = time.monotonic() + seconds

        def fails(cand) -> bool:
            return self.differs(pair, ours_src, ref_src, cand) is not None

        def loop(items: list, make) -> list:
            return ddmin(items, lambda cand: fails(make(cand)), deadline)

        def like(s, chars):  # keep a str subclass
            return type(s)("".join(chars))

        if isinstance(x, list) and all(isinstance(v, str) for v in x):
            x = loop(list(x), list)
            for k in range(len(x)):
                x[k] = like(x[k], loop(list(x[k]), lambda c, k=k: x[:k] + [like(x[k], c)] + x[k + 1:]))
        elif isinstance(x, str):
            x = like(x, loop(list(x), lambda c: like(x, c)))
        else:  # ids
            x = loop(list(x), list)
        return where, label, ours_src, ref_src, x, self.differs(pair, ours_src, ref_src, x)

    def write_repro(self, path: Path, shrunk: tuple) -> None:
        where, label, ours_src, ref_src, x, outcome_pair = shrunk
        if where in self.hf:
            tok = self.paths[where]
            if where == "gpt2_style":
                tok = str(path.with_name(path.stem + "_gpt2_style.json"))
                shutil.copy(self.paths[where], tok)
            load = (f"import tokenizers\nours = scantok.Tokenizer.from_file({tok!r})\n"
                    f"ref = tokenizers.Tokenizer.from_file({tok!r})\n")
        else:
            ref = (f"sys.path.insert(0, {str(TESTS)!r})\nfrom test_encoding_oracle import tiktoken_encoding\n"
                   f"ref = tiktoken_encoding({where!r})\n" if self.tik_ref.startswith("tiktoken") else "ref = ours\n")
            load = f"ours = scantok.get_encoding({where!r})\n" + ref
        want, got = outcome_pair or ("(no longer mismatches)", "")
        path.write_text(
            f'"""fuzz_hf.py --seed {self.seed}: first mismatch, minimised: {where} {label} '
            f'(str -> UTF-8: {utf8_impl()})\n\n'
            f"expected {short(want, 2000)}\ngot      {short(got, 2000)}\n\"\"\"\n"
            "import os\nimport sys\n\nos.environ.setdefault('RAYON_NUM_THREADS', '1')\nimport scantok\n"
            f"{load}\n\nclass Sub(str):\n    def encode(self, *args, **kwargs):\n        return b'not these'\n\n\n"
            f"x = {source(x)}\nwant = {ref_src}\ngot = {ours_src}\n"
            "print('expected', want)\nprint('got     ', got)\nsys.exit(got != want)\n",
            encoding="utf-8")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float)
    ap.add_argument("--examples", type=int)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--repro", type=Path, default=Path("fuzz_hf_repro.py"),
                    help="where the first mismatch's minimal reproducer goes (default: %(default)s)")
    ap.add_argument("--shrink-seconds", type=float, default=300)
    args = ap.parse_args(argv)
    if args.seconds is None and args.examples is None:
        args.seconds = 60
    seed = args.seed if args.seed is not None else random.randrange(2**32)
    with tempfile.TemporaryDirectory() as tmp:
        c = Campaign(seed, tmp)
        t0 = time.monotonic()
        c.run(args.seconds, args.examples)
        took = time.monotonic() - t0
        shapes = ", ".join(f"{k} {v}" for k, v in sorted(c.shapes.items()))
        calls = ", ".join(f"{k} {v}" for k, v in c.calls.items())
        print(f"fuzz_hf: seed {seed}, str -> UTF-8 {utf8_impl()}, {c.texts} texts ({shapes}) in {took:.0f} s; "
              f"{c.batches} batches ({c.threaded} of at least {PARALLEL_MIN} characters); "
              f"{sum(c.calls.values())} calls ({calls}); batches' reference {c.tik_ref}: "
              f"{len(c.mismatches)} mismatches")
        if c.mismatches:
            shrunk = c.shrink(args.shrink_seconds)
            c.write_repro(args.repro, shrunk)
            print(f"first mismatch minimised to {short(shrunk[4], 300)} ({shrunk[0]} {shrunk[1]}); "
                  f"reproducer: {args.repro}")
    return 1 if c.mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
