"""scantok.Tokenizer against HuggingFace tokenizers on tokenizer.json files, one thread.

    python bench/bench_hf.py [--corpus-dir DIR] [--mb 1.0] [--repeats 3]

Files: DeepSeek V3's tokenizer.json (three Split regexes + ByteLevel, byte-level BPE), a
GPT-2-style file (ByteLevel with its regex, 32K byte-level BPE), the same layout with
``add_prefix_space`` (``prefix_style``), a Qwen 2 style one (the NFC
normalizer, Qwen's Split regex, ByteLevel without its regex) and a Llama 2 style one (BPE
over characters with byte fallback, Prepend + Replace normalizer, no pre-tokenizer: a document
is one piece), all trained here with tokenizers on the first 1 MB of each corpus; and the Llama
2 style file trained as SentencePiece trains (``sp_style``: on words that start with "▁", so
that no token joins two words, as in Llama 2's vocabulary), also saved as Gemma's files are
(``gemma_style``: Replace alone) and as Mistral's (``mistral_style``: Metaspace, no split), and
with "\n" and "\t" in no token (``sp_bytes_style``: byte fallback's <0x0A> and <0x09>, as in
Llama 2's and Mistral's vocabularies, so a word runs across each line break); and
tokenizers' quicktour file (``quicktour_style``: BPE over characters with "[UNK]", Whitespace) and
Falcon's layout (``falcon_style``: Punctuation, ByteLevel, Digits, Split, byte-level BPE), and a
file trained with tokenizers' default Metaspace (``metaspace_style``: split before each "▁"),
and CLIP's layout (``clip_style``: NFC, Replace, Lowercase; a Split's matches; ``</w>`` suffix);
a WordLevel file (``wordlevel_style``: WhitespaceSplit) and BERT's normalizer and pre-tokenizer
over WordLevel (``bert_wordlevel``) and over BPE (``bert_bpe``), and tokenizers' CharBPETokenizer
(``charbpe_style``: the same with end_of_word_suffix "</w>", GPT-1's layout) and
SentencePieceBPETokenizer (``spbpe_style``: NFKC, Metaspace, BPE over characters).  Timed text:
``--mb`` MB from the middle of each corpus (held out from training and from warming), and of
each ``--unseen`` text (``bench/heldout.py``:
vim's help files, the C headers, vim's tutors in 30 languages; in no corpus, used to tune
nothing; warmed on English), cut into 4 KB documents.  HF runs in a subprocess
with RAYON_NUM_THREADS=1; scantok with num_threads=1; CPU time of the process (the machine is
shared: wall time is noise).  Each library times ``encode_batch_fast`` (which returns
Encodings in both: tokenizers' hold their ids in Rust, scantok's in a C buffer, each converted to a
list on access), the same call followed by reading every ``.ids`` (``+ .ids``), and then ``encode``
on a fresh tokenizer warmed on other text: neither has the timed documents in its caches.  Runs interleave; medians; every id list
and offset list is compared with HF's.  MB/s of UTF-8.

Then ``--long``: inputs that are one long piece (a million ``a``, a million spaces, a million
random letters or base64 characters, 200K random CJK ideographs), ``encode`` of each by a fresh
tokenizer in both libraries, milliseconds of CPU time, ids and offsets compared.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import string
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


# One long piece each (no space in a run of letters; the pre-tokenizers keep a run of spaces,
# of CJK, of base64 letters whole): `encode` of each, a fresh tokenizer per call in both
# libraries (no cache has seen it), CPU time.
LONG = {
    "a*1e6": lambda: "a" * 10**6,
    "spaces*1e6+x": lambda: " " * 10**6 + "x",
    "letters 1e6": lambda: "".join(random.Random(1).choices(string.ascii_lowercase, k=10**6)),
    "base64 1e6": lambda: "".join(random.Random(2).choices(string.ascii_letters + string.digits + "+/", k=10**6)),
    "CJK 2e5": lambda: "".join(random.Random(3).choices("的一是不了人我在有他这为之大来以个中上们", k=2 * 10**5)),
}

LONG_CHILD = r"""
import json, sys, time
from tokenizers import Tokenizer
path, text_path = sys.argv[1:3]
text = open(text_path, encoding="utf-8").read()
tok = Tokenizer.from_file(path)
t = time.process_time(); enc = tok.encode(text); dt = time.process_time() - t
print(json.dumps({"time": dt, "ids": enc.ids, "offsets": enc.offsets}))
"""


def run_long(path: str, text: str, text_path: str, repeats: int) -> tuple[float, float, bool]:
    """Median CPU seconds of one ``encode`` of text: scantok, HF (a subprocess with
    RAYON_NUM_THREADS=1); and whether the ids and offsets are equal."""
    import scantok

    env = {**os.environ, "RAYON_NUM_THREADS": "1"}
    ours, theirs, same = [], [], True
    for _ in range(repeats):
        out = subprocess.run([sys.executable, "-c", LONG_CHILD, path, text_path], env=env,
                             capture_output=True, text=True, check=True)
        hf = json.loads(out.stdout.strip().splitlines()[-1])
        theirs.append(hf["time"])
        tok = scantok.Tokenizer.from_file(path)
        t = time.process_time()
        enc = tok.encode(text)
        ours.append(time.process_time() - t)
        same = same and enc.ids == hf["ids"] and [list(o) for o in enc.offsets] == hf["offsets"]
    return statistics.median(ours), statistics.median(theirs), same


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


def training_texts(shared: Path) -> list[str]:
    """The text the bench's files are trained on: the first 1 MB of each corpus (the timed
    text comes from their middles)."""
    return [(shared / "corpus" / f"{c}.txt").read_text(encoding="utf-8")[:1_000_000] for c in CORPORA]


def bert_template(tok):
    """BERT's template ([CLS] $A [SEP], pairs with type 1), as tokenizers' quicktour sets it."""
    from tokenizers import processors

    return processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))])


def byte_level_file(shared: Path, out: str, pre_tokenizer, normalizer=None) -> None:
    """A byte-level BPE file (ByteLevel decoder and post-processor) with the pre-tokenizer and
    normalizer given, 32K tokens trained here with tokenizers on the first 1 MB of each corpus."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE())
    if normalizer is not None:
        tok.normalizer = normalizer
    tok.pre_tokenizer = pre_tokenizer
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    texts = training_texts(shared)
    trainer = trainers.BpeTrainer(vocab_size=32_000, special_tokens=["<|endoftext|>"], show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(texts, trainer)
    tok.save(out)


def gpt2_style_file(shared: Path, out: str) -> None:
    """GPT-2's layout: ByteLevel with its regex."""
    from tokenizers import pre_tokenizers

    byte_level_file(shared, out, pre_tokenizers.ByteLevel(add_prefix_space=False))


QWEN_PAT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
            r"|\s+(?!\S)|\s+")


def prefix_style_file(shared: Path, out: str) -> None:
    """GPT-2's layout with ByteLevel's add_prefix_space (a tokenizer transformers saved with
    add_prefix_space=True)."""
    from tokenizers import pre_tokenizers

    byte_level_file(shared, out, pre_tokenizers.ByteLevel(add_prefix_space=True))


def qwen_style_file(shared: Path, out: str) -> None:
    """Qwen 2's layout: the NFC normalizer, Qwen's Split regex, then ByteLevel without its regex."""
    from tokenizers import Regex, normalizers, pre_tokenizers

    byte_level_file(shared, out, pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN_PAT), "isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]), normalizers.NFC())


def falcon_style_file(shared: Path, out: str) -> None:
    """Falcon's layout: Punctuation, ByteLevel with its regex, Digits and a Split of three digits
    (the last two over ByteLevel's characters)."""
    from tokenizers import Regex, pre_tokenizers

    byte_level_file(shared, out, pre_tokenizers.Sequence([
        pre_tokenizers.Punctuation("contiguous"), pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        pre_tokenizers.Digits(individual_digits=False), pre_tokenizers.Split(Regex("[0-9][0-9][0-9]"), "isolated")]))


def metaspace_style_file(shared: Path, out: str) -> None:
    """A SentencePiece-like file trained with tokenizers' default Metaspace (split before each
    "▁", prefix "always"): BPE over characters with byte fallback, 32K tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True))
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    texts = training_texts(shared)
    special = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    trainer = trainers.BpeTrainer(vocab_size=32_000, special_tokens=special, show_progress=False, limit_alphabet=1000)
    tok.train_from_iterator(texts, trainer)
    tok.save(out)


CLIP_PAT = r"'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+"


def clip_style_file(shared: Path, out: str) -> None:
    """CLIP's layout (Stable Diffusion's text encoder): NFC, Replace(\\s+, " ") and Lowercase;
    the matches of CLIP's Split regex, ByteLevel without its regex; BPE with
    end_of_word_suffix "</w>" (32K tokens) and RobertaProcessing."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE(end_of_word_suffix="</w>", unk_token="<|endoftext|>"))
    tok.normalizer = normalizers.Sequence([normalizers.NFC(), normalizers.Replace(Regex(r"\s+"), " "),
                                           normalizers.Lowercase()])
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(CLIP_PAT), "removed", invert=True),
                                                 pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    texts = training_texts(shared)
    trainer = trainers.BpeTrainer(vocab_size=32_000, special_tokens=["<|startoftext|>", "<|endoftext|>"],
                                  show_progress=False, end_of_word_suffix="</w>",
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(texts, trainer)
    tok.post_processor = processors.RobertaProcessing(("<|endoftext|>", tok.token_to_id("<|endoftext|>")),
                                                      ("<|startoftext|>", tok.token_to_id("<|startoftext|>")),
                                                      trim_offsets=False, add_prefix_space=False)
    tok.save(out)


def quicktour_style_file(shared: Path, out: str) -> None:
    """tokenizers' quicktour: BPE over characters with an unknown token ("[UNK]"), the
    Whitespace pre-tokenizer and a BERT-like template, 30K tokens trained here with tokenizers on
    the first 1 MB of each corpus."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    texts = training_texts(shared)
    trainer = trainers.BpeTrainer(vocab_size=30_000, special_tokens=["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"],
                                  show_progress=False)
    tok.train_from_iterator(texts, trainer)
    tok.post_processor = bert_template(tok)
    tok.save(out)


def wordlevel_style_file(shared: Path, out: str) -> None:
    """A WordLevel file: WhitespaceSplit, 50K words and "[UNK]", trained here with tokenizers'
    WordLevelTrainer on the first 1 MB of each corpus."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    texts = training_texts(shared)
    trainer = trainers.WordLevelTrainer(vocab_size=50_000, special_tokens=["[UNK]"], show_progress=False)
    tok.train_from_iterator(texts, trainer)
    tok.save(out)


def bert_style_file(shared: Path, out: str, model: str = "WordLevel") -> None:
    """BERT's normalizer and pre-tokenizer (BertNormalizer: clean text, CJK spaced, accents
    stripped, lowercase; BertPreTokenizer) and its template, over a WordLevel model (30K words)
    or (``model="BPE"``) a BPE over characters with "[UNK]" (30K tokens)."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    special = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]
    if model == "BPE":
        tok = Tokenizer(models.BPE(unk_token="[UNK]"))
        trainer = trainers.BpeTrainer(vocab_size=30_000, special_tokens=special, show_progress=False)
    else:
        tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
        trainer = trainers.WordLevelTrainer(vocab_size=30_000, special_tokens=special, show_progress=False)
    tok.normalizer = normalizers.BertNormalizer()
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    texts = training_texts(shared)
    tok.train_from_iterator(texts, trainer)
    tok.post_processor = bert_template(tok)
    tok.save(out)


def charbpe_style_file(shared: Path, out: str) -> None:
    """tokenizers' CharBPETokenizer (GPT-1's layout): BertNormalizer (lowercase), BertPreTokenizer,
    BPE over characters with end_of_word_suffix "</w>" and "<unk>", BPEDecoder; 30K tokens."""
    from tokenizers import CharBPETokenizer

    tok = CharBPETokenizer(unk_token="<unk>", lowercase=True)
    texts = training_texts(shared)
    tok.train_from_iterator(texts, vocab_size=30_000, special_tokens=["<unk>"], show_progress=False)
    tok.save(out)


def spbpe_style_file(shared: Path, out: str) -> None:
    """tokenizers' SentencePieceBPETokenizer: NFKC, Metaspace (split, prefix "always"), BPE over
    characters with "<unk>"; 32K tokens."""
    from tokenizers import SentencePieceBPETokenizer

    tok = SentencePieceBPETokenizer(unk_token="<unk>")
    texts = training_texts(shared)
    tok.train_from_iterator(texts, vocab_size=32_000, special_tokens=["<unk>"], show_progress=False)
    tok.save(out)


def llama2_style_file(shared: Path, out: str) -> None:
    """A Llama 2 / Mistral style file: BPE over characters with byte fallback, the normalizer
    Prepend("▁") + Replace(" ", "▁") and no pre-tokenizer (a document is one piece), 32K
    tokens trained here with tokenizers on the first 1 MB of each corpus."""
    from tokenizers import Tokenizer, decoders, models, normalizers, trainers

    tok = Tokenizer(models.BPE(byte_fallback=True, unk_token="<unk>", fuse_unk=True))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                     decoders.Strip(" ", 1, 0)])
    texts = training_texts(shared)
    special = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    trainer = trainers.BpeTrainer(vocab_size=32_000, special_tokens=special, show_progress=False, limit_alphabet=1000)
    tok.train_from_iterator([t[i:i + DOC] for t in texts for i in range(0, len(t), DOC)], trainer)
    tok.save(out)


def sentencepiece_style_file(shared: Path, out: str, layout: str = "legacy") -> None:
    """The same, trained as SentencePiece trains (on words that start with "▁": Metaspace with
    split) and saved as Llama 2's conversion is (Prepend + Replace, no pre-tokenizer): no token
    holds "▁" after another character, so scantok merges a document word by word.  layout
    "replace": saved as Gemma's files are (Replace alone); "metaspace": as transformers'
    non-legacy conversions (Mistral's files: Metaspace, prepend_scheme "first", no split);
    "bytes": the legacy layout without the tokens that hold "\n" or "\t" (nor their merges),
    which byte fallback gives as <0x0A> and <0x09>, as Llama 2's and Mistral's files do."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(byte_fallback=True, unk_token="<unk>", fuse_unk=True))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    texts = training_texts(shared)
    special = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    trainer = trainers.BpeTrainer(vocab_size=32_000, special_tokens=special, show_progress=False, limit_alphabet=1000)
    tok.train_from_iterator([t[i:i + DOC] for t in texts for i in range(0, len(t), DOC)], trainer)
    js = json.loads(tok.to_str())
    js["pre_tokenizer"] = None
    js["normalizer"] = {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"},
                                                            {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]}
    if layout == "replace":
        js["normalizer"] = js["normalizer"]["normalizers"][1]
    elif layout == "metaspace":
        js["normalizer"] = None
        js["pre_tokenizer"] = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": False}
    elif layout == "bytes":
        model = js["model"]
        keep = sorted((i, t) for t, i in model["vocab"].items() if "\n" not in t and "\t" not in t)
        model["vocab"] = {t: k for k, (_, t) in enumerate(keep)}
        model["merges"] = [m for m in model["merges"] if "\n" not in "".join(m) and "\t" not in "".join(m)]
        for added in js["added_tokens"]:
            added["id"] = model["vocab"][added["content"]]
    js["decoder"] = {"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"}, {"type": "Fuse"},
        {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
    Path(out).write_text(json.dumps(js, ensure_ascii=False), encoding="utf-8")


def _c_path(tok) -> str:
    """Which of scantok's whole-text C paths the tokenizer takes: the pre-tokenizer's Split and
    ByteLevel stages (with the Unicode forms' test when the normalizer is one), BPE over
    characters (Llama 2 style), or none (the general path)."""
    if tok._whole_c:
        nf = getattr(tok, "_nf_unchanged", None) is not None  # (absent before session 18)
        chain = getattr(tok, "_chain", None) is not None  # (absent before session 19)
        return "stages" + (" (texts the normalizer leaves alone)" if nf else
                           " (normalized on numpy alignments)" if chain else "")
    if tok._stages is not None:
        return "stages (batches)"
    return "characters" if getattr(tok, "_chars_c", None) is not None else "none"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", type=Path, default=Path(os.environ.get("SCANTOK_SHARED_DIR", DEFAULT_SHARED)))
    ap.add_argument("--mb", type=float, default=1.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--corpora", default=",".join(CORPORA), help="shared corpora to time")
    ap.add_argument("--unseen", default="prose,c,intl", help="held-out texts to time: " + ",".join(UNSEEN))
    ap.add_argument("--files", default="deepseek_v3,gpt2_style,prefix_style,qwen_style,llama2_style,sp_style,"
                    "gemma_style,mistral_style,sp_bytes_style,quicktour_style,falcon_style,metaspace_style,clip_style,"
                    "wordlevel_style,bert_wordlevel,bert_bpe,charbpe_style,spbpe_style",
                    help="tokenizer files to time: deepseek_v3,gpt2_style,prefix_style,qwen_style,llama2_style,"
                    "sp_style,gemma_style,mistral_style,sp_bytes_style,quicktour_style,falcon_style,metaspace_style,clip_style,"
                    "wordlevel_style,bert_wordlevel,bert_bpe,charbpe_style,spbpe_style")
    ap.add_argument("--long", default=",".join(LONG), help="long single pieces to time ('' for none): "
                    + ",".join(LONG))
    args = ap.parse_args(argv)

    import scantok

    with tempfile.TemporaryDirectory() as tmp:
        gpt2 = os.path.join(tmp, "gpt2_style.json")
        gpt2_style_file(args.shared, gpt2)
        wanted = args.files.split(",")
        files = {"deepseek_v3": str(args.shared / "hf" / "deepseek_v3" / "tokenizer.json"), "gpt2_style": gpt2,
                 "prefix_style": os.path.join(tmp, "prefix_style.json"),
                 "qwen_style": os.path.join(tmp, "qwen_style.json"),
                 "llama2_style": os.path.join(tmp, "llama2_style.json"),
                 "sp_style": os.path.join(tmp, "sp_style.json"),
                 "gemma_style": os.path.join(tmp, "gemma_style.json"),
                 "mistral_style": os.path.join(tmp, "mistral_style.json"),
                 "sp_bytes_style": os.path.join(tmp, "sp_bytes_style.json"),
                 "quicktour_style": os.path.join(tmp, "quicktour_style.json"),
                 "falcon_style": os.path.join(tmp, "falcon_style.json"),
                 "metaspace_style": os.path.join(tmp, "metaspace_style.json"),
                 "clip_style": os.path.join(tmp, "clip_style.json"),
                 "wordlevel_style": os.path.join(tmp, "wordlevel_style.json"),
                 "bert_wordlevel": os.path.join(tmp, "bert_wordlevel.json"),
                 "bert_bpe": os.path.join(tmp, "bert_bpe.json"),
                 "charbpe_style": os.path.join(tmp, "charbpe_style.json"),
                 "spbpe_style": os.path.join(tmp, "spbpe_style.json")}
        builders = {"prefix_style": prefix_style_file, "qwen_style": qwen_style_file,
                    "llama2_style": llama2_style_file, "sp_style": sentencepiece_style_file,
                    "gemma_style": lambda sh, out: sentencepiece_style_file(sh, out, "replace"),
                    "mistral_style": lambda sh, out: sentencepiece_style_file(sh, out, "metaspace"),
                    "sp_bytes_style": lambda sh, out: sentencepiece_style_file(sh, out, "bytes"),
                    "quicktour_style": quicktour_style_file, "falcon_style": falcon_style_file,
                    "metaspace_style": metaspace_style_file, "clip_style": clip_style_file,
                    "wordlevel_style": wordlevel_style_file, "bert_wordlevel": bert_style_file,
                    "bert_bpe": lambda sh, out: bert_style_file(sh, out, "BPE"),
                    "charbpe_style": charbpe_style_file, "spbpe_style": spbpe_style_file}
        for name, build in builders.items():
            if name in wanted:
                build(args.shared, files[name])
        files = {k: v for k, v in files.items() if k in wanted}
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
            print(f"  ({name}: scantok load {load:.2f} s; C path: {_c_path(tok)})")
        longs = [k for k in args.long.split(",") if k]
        if longs:
            print(f"\n{'file':12} {'long piece':14} | {'encode ms: scantok':>18} {'HF':>8} {'ratio':>7} | same")
        for name, path in files.items():
            for k in longs:
                text = LONG[k]()
                tp = os.path.join(tmp, "long.txt")
                with open(tp, "w", encoding="utf-8") as f:
                    f.write(text)
                t_s, t_h, same = run_long(path, text, tp, args.repeats)
                print(f"{name:12} {k:14} | {t_s * 1e3:18.1f} {t_h * 1e3:8.1f} {t_h / t_s:6.1f}x | {same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
