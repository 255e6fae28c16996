"""Differential fuzz campaign over random *pipelines*: each iteration builds a tokenizer.json with
HuggingFace ``tokenizers`` from randomly drawn components, loads it in scantok
(``scantok.Tokenizer.from_str(hf.to_str())``) and compares the two on many random texts.

    python tests/fuzz_hf_components.py --seconds 600
    python tests/fuzz_hf_components.py --pipelines 20 --seed 3 --repro /tmp/repro.py

Components (those scantok supports, see README "HuggingFace tokenizer.json"):

* model: BPE trained with ``BpeTrainer`` (vocab 300-2000) on 50-200 KB of the corpora, byte-level
  (a ByteLevel pre-tokenizer somewhere, ``initial_alphabet=ByteLevel.alphabet()``) or char-level,
  with ``byte_fallback`` (``<0xXX>`` tokens added to the vocabulary), ``unk_token``, ``fuse_unk``,
  ``continuing_subword_prefix``, ``end_of_word_suffix``, ``ignore_merges``; or WordLevel
  (``WordLevelTrainer``); or (``--sentencepiece``, 15 % by default) a SentencePiece-style BPE
  over characters saved with a layout of Llama 2's, Gemma's or Mistral's
  (``sentencepiece_model``), sometimes with "\n" and "\t" in no token.
* normalizers: NFC/NFD/NFKC/NFKD, Lowercase, Strip, Replace (string, regex), Prepend,
  BertNormalizer, Sequence, none.
* pre-tokenizers: ByteLevel, Split (string, regex; every behavior; invert), Digits, Whitespace,
  WhitespaceSplit, Punctuation, Metaspace, BertPreTokenizer, Sequence, none.
* added tokens: special or not, lstrip, rstrip, single_word, normalized; contents that are
  vocabulary words, whitespace, punctuation, non-ASCII.
* post-processors: ByteLevel, TemplateProcessing (single and pair templates, type ids),
  RobertaProcessing, BertProcessing, Sequence, none.
* decoders: ByteLevel, Metaspace, WordPiece, ByteFallback, Fuse, Strip, Replace, Sequence, none.
* truncation (max_length, stride, strategy, direction) and padding (fixed or batch longest, a
  multiple, left or right), in the file, on about one pipeline in three.

About one pipeline in 25 also gets a component scantok does not support (it must raise
``UnsupportedComponentError``); any load error of another type on a file tokenizers loads is a
mismatch, and so is any exception type other than ``UnsupportedComponentError``/``HFError``.

Checked against tokenizers 0.23.3 (RAYON_NUM_THREADS=1), per text: ``encode(text)`` and
``encode(text, add_special_tokens=False)`` (ids, tokens, offsets, attention_mask,
special_tokens_mask, type_ids), ``decode(ids, skip_special_tokens=True/False)`` of tokenizers'
ids; per batch: ``encode_batch`` and ``encode_batch_fast`` (every field of each) with
num_threads=1 and 2, ``decode_batch``; per pipeline: ``get_vocab_size`` (with and without added
tokens), ``get_vocab``, ``token_to_id``/``id_to_token`` on a sample, and the ``to_str()`` round
trip (scantok's ``from_str(ours.to_str())`` encodes as tokenizers; tokenizers loads it too).
When both libraries raise, the outcome is equal (the pairs of types are counted and printed).
Pairs: ``encode(text, other)`` per text and batches of pairs; pre-tokenized input: the text's
words (``is_pretokenized=True``). Every field includes the overflowing parts, recursively, and
the word ids, sequence ids, ``n_sequences`` and the mapping methods (``token_to_*``,
``word_to_*``, ``char_to_*``) at the first positions of each encoding. Last,
per pipeline: ``add_tokens`` and ``add_special_tokens`` of random contents, then encode and
decode, then ``encode_special_tokens = True`` and encode (texts holding special tokens).

Prints the volume (pipelines, texts, calls, unsupported skips) and every mismatch; the first one
is minimised (pipeline components, then the text or batch, then the merges) and written as a
runnable script to ``--repro``. Exit status 1 on any mismatch.
"""
from __future__ import annotations

import argparse
import inspect
import json
import os
import random
import sys
import time
import traceback
from pathlib import Path

os.environ["RUST_BACKTRACE"] = "0"  # tokenizers' panics (counted, see Raised) without stack dumps

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))
from fuzz_setup import CORPORA, SHARED, Raised, mappings, outcome  # noqa: E402 (first: the oracle on one thread before it loads)

import tokenizers  # noqa: E402
from tokenizers import AddedToken, Regex, decoders, models, normalizers, pre_tokenizers, processors, trainers  # noqa: E402,E501

import scantok  # noqa: E402
from scantok.hf.errors import UnsupportedComponentError  # noqa: E402
from scantok.threadpool import PARALLEL_MIN  # noqa: E402

from shrinking import ddmin  # noqa: E402
from strategies import random_fragments  # noqa: E402


# -- text pools -----------------------------------------------------------------------------------
WORDS = ["the", "The", "THE", "hello", "Hello", "HELLO", "world", "don't", "it's", "we'll", "I'm", "a", "I", "x",
         "foo_bar", "camelCase", "URL", "http://example.com/a?b=1", "e-mail", "self.x", "def", "return", "__init__",
         "a1b2", "o'clock", "'s", "'LL"]
PUNCT = list(".,;:!?'\"()[]{}<>-/\\@#$%^&*+=~`|_") + ["...", "--", "–", "—", "…", "«", "»", "¿", "¡", "“", "”", "·",
                                                      "、", "。", "！", "？", "§", "¶"]
DIGITS = ["0", "7", "42", "123456", "3.14", "1,000", "2026-11-26", "٣٤٥", "१२", "１２３", "𝟙𝟚", "½", "²", "Ⅻ", "ⅷ"]
WHITESPACE = [" ", "  ", "   ", "\t", "\n", "\r\n", "\r", "\u00a0", "\u3000", "\n\n", " \t ", "\u2028", "\u200b",
              "\ufeff", "\x0b", "\x0c", "\u2003", "\u1680", "\u0085"]
ACCENTED = ["café", "naïve", "Ångström", "e\u0301", "a\u0308\u0301", "ñ", "Øre", "Crème Brûlée", "ǅemal", "Ǆ",
            "o\u0323\u0302", "\u0301x", "ά", "ᾼ", "Ω", "Å", "K"]
COMBINING = ["\u0300", "\u0301", "\u0308", "\u0323", "\u0327", "\u034f", "\u0345", "\u20d7", "\u1ab0", "\ufe20",
             "\u093f", "\u0e31", "\u05b0"]
SCRIPTS = ["αβγ", "Σίσυφος", "ΣΑΣ", "ς", "Привет", "ЁЖИК", "мир", "你好", "世界", "日本語", "ひらがな", "カタカナ",
           "한국어", "ﾊﾝｶｸ", "שלום", "مرحبا", "नमस्ते", "ไทย", "𠀀𠀁", "가"]
EMOJI = ["😀", "👩‍👩‍👧", "👍🏽", "🇫🇷", "❤️", "🧑‍💻", "#️⃣", "🏳️‍🌈", "\U0001f600\U0001f600"]
COMPAT = ["ﬁ", "ﬂ", "ﬀ", "ﬃ", "Ⅻ", "ⅷ", "½", "²", "㎏", "ｱ", "Ａ", "™", "℡", "㍿", "ǈ", "ﬅ", "ſ"]
CASE = ["İ", "ß", "ẞ", "ǅ", "ΐ", "İstanbul", "STRASSE", "Σ", "ΌΣΟΣ", "I\u0307", "ŉ", "ǰ", "ᾳ", "ﬓ", "K", "Ω", "Ⓐ"]
CONTROL = ["\x00", "\x01", "\x7f", "\u00ad", "\u200d", "\u2060", "\ue000", "\U000e0041", "\ufffd", "\x1f"]
POOLS = [(8, WORDS), (5, PUNCT), (3, DIGITS), (6, WHITESPACE), (3, ACCENTED), (2, COMBINING), (3, SCRIPTS),
         (2, EMOJI), (2, COMPAT), (2, CASE), (1, CONTROL)]

# -- component pools ------------------------------------------------------------------------------
SPLIT_REGEXES = [
    r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+",
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    r"\s+", r"\d+", r"\p{N}{1,3}", r"[aeiou]", r"\p{L}+", r"\w+", r"[^\w\s]+", r" ?\w+", r"\p{P}", r"[A-Z][a-z]*",
    r"[\u4e00-\u9fff]+", r"\s", r"x|yz", r"(?i:the)", r"[,.!?]", r"\S+", r"[\p{Han}\p{Hiragana}\p{Katakana}]+",
    r" ?[^\s\p{L}\p{N}]+", r"\p{Lu}+", r"[\r\n]+", r".",
]
SPLIT_STRINGS = [" ", "a", "the", ",", "\n", "é", "▁", "  ", "ab", "你"]
BEHAVIORS = ["removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous"]
REPLACE_PATTERNS = [(" ", "▁"), ("a", "A"), ("  ", " "), ("\n", " "), ("é", "e"), ("'", ""), ("th", "TH"),
                    (Regex(r"\s+"), " "), (Regex(r"\d"), "0"), (Regex(r"[aeiou]+"), "_"), (Regex(r"\p{P}"), ""),
                    (Regex(r" {2,}"), "▁"), (Regex(r"[A-Z]"), "xy"), (Regex(r"(?i:hello)"), "hi"), ("ß", "ss")]
METASPACE_CHARS = ["▁", "_", "Ġ", "#"]
ADDED_CONTENTS = ["[MASK]", "<s>", "</s>", "<|endoftext|>", "<pad>", "hello", "Hello", "the", " x", "x ", "\n",
                  " ", "  ", "\t", "é", "你好", "😀", "İ", "ß", "ﬁ", "Ⅻ", "...", "!", "'s", "a_b", "<0x41>", "▁",
                  "[CLS]", "[SEP]", "ab", "e\u0301", "HELLO", "<unk>", "\u00a0", "ΣΑΣ"]

ENC_FIELDS = "(e.ids, e.tokens, e.offsets, e.attention_mask, e.special_tokens_mask, e.type_ids)"


def short(v, n: int = 400) -> str:
    s = repr(v)
    return s if len(s) <= n else f"{s[:n]}... ({len(s)} chars of repr)"


def F(e):
    """The fields of an encoding (its overflowing parts' too), its word and sequence ids and
    mappings, as one comparable tuple."""
    return (e.ids, e.tokens, [tuple(o) for o in e.offsets], e.attention_mask, e.special_tokens_mask, e.type_ids,
            e.word_ids, e.sequence_ids, e.n_sequences, mappings(e), [F(o) for o in e.overflowing])


# checks: label -> (scantok's expression, tokenizers'), on ``ours``, ``ref`` and the input ``x``
CHECKS = {
    "encode": ("F(ours.encode(x))", "F(ref.encode(x))"),
    "encode(add_special_tokens=False)": ("F(ours.encode(x, add_special_tokens=False))",
                                         "F(ref.encode(x, add_special_tokens=False))"),
    "decode(skip_special_tokens=True)": ("ours.decode(x, skip_special_tokens=True)",
                                         "ref.decode(x, skip_special_tokens=True)"),
    "decode(skip_special_tokens=False)": ("ours.decode(x, skip_special_tokens=False)",
                                          "ref.decode(x, skip_special_tokens=False)"),
    "decode_batch": ("ours.decode_batch(x[1], skip_special_tokens=x[0])",
                     "ref.decode_batch(x[1], skip_special_tokens=x[0])"),
    "encode(pair)": ("F(ours.encode(x, x[::-1]))", "F(ref.encode(x, x[::-1]))"),
    "encode(words, is_pretokenized=True)": ("F(ours.encode(x.split(), is_pretokenized=True))",
                                            "F(ref.encode(x.split(), is_pretokenized=True))"),
    "encode_batch(pairs)": ("[F(e) for e in ours.encode_batch([(t, t[:9]) for t in x])]",
                            "[F(e) for e in ref.encode_batch([(t, t[:9]) for t in x])]"),
    "encode_batch_fast(pairs)": ("[F(e) for e in ours.encode_batch_fast([(t, t[:9]) for t in x])]",
                                 "[F(e) for e in ref.encode_batch_fast([(t, t[:9]) for t in x])]"),
    # decode compared with tokenizers after it loads its own file: its object keeps some state of
    # a token added again with other options (see Tokenizer.add_tokens)
    "add_tokens then encode": (
        "(ours.add_tokens(x[0]), [F(ours.encode(t)) for t in x[1]], ours.decode(x[2]))",
        "(ref.add_tokens(x[0]), [F(ref.encode(t)) for t in x[1]], "
        "tokenizers.Tokenizer.from_str(ref.to_str()).decode(x[2]))"),
    "add_special_tokens then encode": (
        "(ours.add_special_tokens(x[0]), [F(ours.encode(t)) for t in x[1]], ours.decode(x[2]))",
        "(ref.add_special_tokens(x[0]), [F(ref.encode(t)) for t in x[1]], "
        "tokenizers.Tokenizer.from_str(ref.to_str()).decode(x[2]))"),
    # special added tokens encoded as text (not saved in the file; set last, left set); compared
    # with tokenizers after it loads its own file, as decode after add_tokens: its object keeps a
    # token added again as not special in its special set, which this setting reads
    "encode_special_tokens then encode": (
        "(lambda t: (setattr(t, 'encode_special_tokens', True), [F(t.encode(s)) for s in x], "
        "[F(e) for e in t.encode_batch(x)], [F(e) for e in t.encode_batch_fast(x)]))(ours)",
        "(lambda t: (setattr(t, 'encode_special_tokens', True), [F(t.encode(s)) for s in x], "
        "[F(e) for e in t.encode_batch(x)], [F(e) for e in t.encode_batch_fast(x)]))"
        "(tokenizers.Tokenizer.from_str(ref.to_str()))"),
    "token_to_id": ("[ours.token_to_id(t) for t in x]", "[ref.token_to_id(t) for t in x]"),
    "id_to_token": ("[ours.id_to_token(i) for i in x]", "[ref.id_to_token(i) for i in x]"),
    "get_vocab_size": ("(ours.get_vocab_size(True), ours.get_vocab_size(False))",
                       "(ref.get_vocab_size(True), ref.get_vocab_size(False))"),
    "get_vocab": ("(ours.get_vocab(True), ours.get_vocab(False))",
                  "(ref.get_vocab(True), ref.get_vocab(False))"),
    "to_str round trip encode": ("F(scantok.Tokenizer.from_str(ours.to_str()).encode(x))", "F(ref.encode(x))"),
    "to_str loads in tokenizers": ("F(tokenizers.Tokenizer.from_str(ours.to_str()).encode(x))", "F(ref.encode(x))"),
}
for _add in (True, False):
    for _nt in (1, 2):
        CHECKS[f"encode_batch(add_special_tokens={_add}, num_threads={_nt})"] = (
            f"[F(e) for e in ours.encode_batch(x, add_special_tokens={_add}, num_threads={_nt})]",
            f"[F(e) for e in ref.encode_batch(x, add_special_tokens={_add})]")
        CHECKS[f"encode_batch_fast(add_special_tokens={_add}, num_threads={_nt})"] = (
            f"[F(e) for e in ours.encode_batch_fast(x, add_special_tokens={_add}, num_threads={_nt})]",
            f"[F(e) for e in ref.encode_batch_fast(x, add_special_tokens={_add})]")

_COMPILED: dict[str, object] = {}


def run_src(src: str, ours, ref, x):
    f = _COMPILED.get(src)
    if f is None:
        f = _COMPILED[src] = eval(f"lambda ours, ref, x: {src}", {"F": F, "scantok": scantok,
                                                                   "tokenizers": tokenizers})
    return f(ours, ref, x)


def load_pair(obj: dict):
    """(scantok's Tokenizer or the exception it raised, tokenizers' Tokenizer) of a JSON object."""
    s = json.dumps(obj, ensure_ascii=False)
    ref = tokenizers.Tokenizer.from_str(s)
    try:
        ours = scantok.Tokenizer.from_str(ref.to_str())
    except Exception as exc:  # noqa: BLE001
        return exc, ref
    return ours, ref


def byte_text(token: str) -> str:
    """A vocabulary token as text (byte-level tokens decoded, subword markers dropped)."""
    from scantok.hf.pre_tokenizers import CHAR_BYTES

    for m in ("##", "</w>", "▁"):
        token = token.replace(m, " " if m == "▁" else "")
    if token and all(c in CHAR_BYTES for c in token) and any(ord(c) > 0xFF or c == "Ġ" for c in token):
        return bytes(CHAR_BYTES[c] for c in token).decode("utf-8", "replace")
    return token


class Campaign:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.seed = seed
        self.corpora = [(SHARED / "corpus" / f"{c}.txt").read_text(encoding="utf-8") for c in CORPORA]
        self.pipelines = self.built = self.texts = self.batches = self.threaded = 0
        self.unsupported: dict[str, int] = {}
        self.calls: dict[str, int] = {}
        self.both_raised: dict[tuple, int] = {}
        self.kinds: dict[str, int] = {}
        self.mismatches: list[str] = []
        self.first: tuple | None = None  # (obj, label, x)
        self.panics: dict[tuple, int] = {}  # (check, tokenizers' panic message): count
        self.save: Path | None = None  # a directory for the JSON of every mismatching pipeline
        self.per_case: dict[tuple, int] = {}  # (pipeline, check): mismatches (3 printed)
        self.build_seconds = 0.0
        self.big_batches = True  # one batch per pipeline long enough for two threads (PARALLEL_MIN)
        self.sentencepiece = 0.15  # the share of SentencePiece-style pipelines (sentencepiece_model)

    # -- components --
    def regex_or_string(self):
        rng = self.rng
        if rng.random() < 0.6:
            return Regex(rng.choice(SPLIT_REGEXES))
        return rng.choice(SPLIT_STRINGS)

    def normalizer(self, depth: int = 0):
        rng = self.rng
        kinds = ["NFC", "NFD", "NFKC", "NFKD", "Lowercase", "Strip", "Replace", "Prepend", "Bert", "StripAccents"]
        if depth == 0:
            kinds += ["Sequence"] * 3
        k = rng.choice(kinds)
        if k in ("NFC", "NFD", "NFKC", "NFKD"):
            return getattr(normalizers, k)()
        if k == "Lowercase":
            return normalizers.Lowercase()
        if k == "StripAccents":
            return normalizers.StripAccents()
        if k == "Strip":
            return normalizers.Strip(left=rng.random() < 0.7, right=rng.random() < 0.7)
        if k == "Replace":
            pat, content = rng.choice(REPLACE_PATTERNS)
            return normalizers.Replace(pat, rng.choice([content, content, "", " ", "▁▁"]))
        if k == "Prepend":
            return normalizers.Prepend(rng.choice(["▁", " ", "x", "é", "▁▁"]))
        if k == "Bert":
            return normalizers.BertNormalizer(clean_text=rng.random() < 0.7, handle_chinese_chars=rng.random() < 0.7,
                                              strip_accents=rng.choice([None, True, False]),
                                              lowercase=rng.random() < 0.6)
        return normalizers.Sequence([self.normalizer(1) for _ in range(rng.randint(1, 4))])

    def pre_tokenizer(self, byte_level: bool, depth: int = 0):
        """A pre-tokenizer; byte_level: a ByteLevel goes in (last, mostly)."""
        rng = self.rng
        if byte_level:
            bl = pre_tokenizers.ByteLevel(add_prefix_space=rng.random() < 0.3, use_regex=rng.random() < 0.6,
                                          trim_offsets=rng.random() < 0.5)
            r = rng.random()
            if r < 0.35:
                return bl
            others = [self.pre_tokenizer(False, 1) for _ in range(rng.randint(1, 3))]
            others = [o for o in others if o is not None]
            pos = len(others) if rng.random() < 0.8 else rng.randint(0, len(others))
            return pre_tokenizers.Sequence(others[:pos] + [bl] + others[pos:])
        kinds = ["Split", "Split", "Digits", "Whitespace", "WhitespaceSplit", "Punctuation", "Metaspace", "Bert"]
        if depth == 0:
            kinds += ["Sequence", "Sequence", "None"]
        k = rng.choice(kinds)
        if k == "None":
            return None
        if k == "Split":
            return pre_tokenizers.Split(self.regex_or_string(), rng.choice(BEHAVIORS), invert=rng.random() < 0.25)
        if k == "Digits":
            return pre_tokenizers.Digits(individual_digits=rng.random() < 0.5)
        if k == "Whitespace":
            return pre_tokenizers.Whitespace()
        if k == "WhitespaceSplit":
            return pre_tokenizers.WhitespaceSplit()
        if k == "Punctuation":
            return pre_tokenizers.Punctuation(rng.choice(BEHAVIORS))
        if k == "Metaspace":
            return pre_tokenizers.Metaspace(replacement=rng.choice(METASPACE_CHARS),
                                            prepend_scheme=rng.choice(["first", "always", "never"]),
                                            split=rng.random() < 0.6)
        if k == "Bert":
            return pre_tokenizers.BertPreTokenizer()
        subs = [self.pre_tokenizer(False, 1) for _ in range(rng.randint(1, 4))]
        return pre_tokenizers.Sequence([s for s in subs if s is not None] or [pre_tokenizers.Whitespace()])

    def training_text(self) -> list[str]:
        rng = self.rng
        total = rng.randint(50_000, 200_000)
        out = []
        while total > 0:
            c = rng.choice(self.corpora)
            n = min(total, rng.randint(5_000, 40_000))
            a = rng.randrange(max(1, len(c) - n))
            chunk = c[a:a + n]
            out += [chunk[i:i + 2000] for i in range(0, len(chunk), 2000)]
            total -= n
        return out

    def model(self, desc: list):
        """A trained tokenizers.Tokenizer with its normalizer and pre-tokenizer set."""
        rng = self.rng
        if rng.random() < self.sentencepiece:
            return self.sentencepiece_model(desc)
        norm = self.normalizer() if rng.random() < 0.55 else None
        wordlevel = rng.random() < 0.15
        byte_level = not wordlevel and rng.random() < 0.5
        pre = self.pre_tokenizer(byte_level)
        specials = rng.sample(["<unk>", "[UNK]", "<s>", "</s>", "[CLS]", "[SEP]", "<pad>", "<|endoftext|>"],
                              rng.randint(0, 4))
        opts: dict = {}
        train_kw: dict = {}
        if wordlevel:
            unk = rng.choice(["[UNK]", "<unk>"])
            if rng.random() < 0.9 and unk not in specials:
                specials.append(unk)
            tok = tokenizers.Tokenizer(models.WordLevel(unk_token=unk))
            trainer = trainers.WordLevelTrainer(vocab_size=rng.randint(300, 2000), special_tokens=specials,
                                                show_progress=False)
            desc.append(f"WordLevel(unk={unk!r})")
        else:
            if rng.random() < 0.5:
                opts["unk_token"] = rng.choice(["<unk>", "[UNK]"])
                if rng.random() < 0.9 and opts["unk_token"] not in specials:
                    specials.append(opts["unk_token"])
                opts["fuse_unk"] = rng.random() < 0.5
            if rng.random() < 0.25:
                opts["continuing_subword_prefix"] = train_kw["continuing_subword_prefix"] = rng.choice(["##", "@@", "▁"])
            if rng.random() < 0.2:
                opts["end_of_word_suffix"] = train_kw["end_of_word_suffix"] = rng.choice(["</w>", "_"])
            # not with a prefix or suffix: tokenizers' byte_fallback then counts the prefix's bytes
            # as the character's and its offsets run past the text (scantok gives the same ids and
            # tokens, see test_byte_fallback_with_subword_prefix_ids)
            if not byte_level and rng.random() < 0.4 and "continuing_subword_prefix" not in opts \
                    and "end_of_word_suffix" not in opts:
                opts["byte_fallback"] = True
            if rng.random() < 0.3:
                opts["ignore_merges"] = True
            tok = tokenizers.Tokenizer(models.BPE(**opts))
            if byte_level:
                train_kw["initial_alphabet"] = pre_tokenizers.ByteLevel.alphabet()
            elif rng.random() < 0.3:
                train_kw["initial_alphabet"] = list("abcdefghijklmnopqrstuvwxyzé你")
            if rng.random() < 0.3:
                train_kw["limit_alphabet"] = rng.choice([60, 150])
            trainer = trainers.BpeTrainer(vocab_size=rng.randint(300, 2000), special_tokens=specials,
                                          show_progress=False, **train_kw)
            desc.append(f"BPE({'byte' if byte_level else 'char'}, {opts})")
        if norm is not None:
            tok.normalizer = norm
        if pre is not None:
            tok.pre_tokenizer = pre
        tok.train_from_iterator(self.training_text(), trainer)
        if opts.get("byte_fallback"):
            # the 256 byte tokens, as the metaspace_fallback fixture adds them (before any added
            # token: tokenizers gives an added token already in the vocabulary its vocabulary id,
            # whatever id the file says, see the report of this campaign)
            obj = json.loads(tok.to_str())
            vocab = obj["model"]["vocab"]
            for b in range(256):
                vocab.setdefault(f"<0x{b:02X}>", max(vocab.values(), default=-1) + 1)
            tok = tokenizers.Tokenizer.from_str(json.dumps(obj))
        return tok

    def sentencepiece_model(self, desc: list):
        """A SentencePiece-style BPE over characters (Llama 2, Mistral and Gemma as transformers
        converts them): trained on words that start with the replacement (Metaspace, split), with
        byte fallback and/or an unknown token, then saved with one of the layouts whose piece
        scantok makes in C (_CharPiece: Prepend + Replace, Replace alone, Metaspace without
        split), and sometimes with "\n" and "\t" in no token (Llama 2's vocabulary: <0x0A>), so
        that its words hold fallback bytes."""
        rng = self.rng
        rep = rng.choice(METASPACE_CHARS)
        opts: dict = {"byte_fallback": rng.random() < 0.8}
        if not opts["byte_fallback"] or rng.random() < 0.7:
            opts["unk_token"] = "<unk>"
            opts["fuse_unk"] = rng.random() < 0.5
        specials = ["<unk>", "<s>", "</s>"]
        tok = tokenizers.Tokenizer(models.BPE(**opts))
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=rep, prepend_scheme="always", split=True)
        trainer = trainers.BpeTrainer(vocab_size=rng.randint(300, 2000), special_tokens=specials, show_progress=False,
                                      limit_alphabet=rng.choice([60, 150, 1000]))
        tok.train_from_iterator(self.training_text(), trainer)
        obj = json.loads(tok.to_str())
        model = obj["model"]
        vocab = model["vocab"]
        if opts["byte_fallback"]:
            for b in range(256):
                vocab.setdefault(f"<0x{b:02X}>", max(vocab.values(), default=-1) + 1)
        lines = rng.random() < 0.5
        if lines:  # ids made contiguous again, the added tokens' with them
            keep = sorted((i, t) for t, i in vocab.items() if "\n" not in t and "\t" not in t)
            model["vocab"] = vocab = {t: k for k, (_, t) in enumerate(keep)}
            model["merges"] = [m for m in model["merges"] if "\n" not in "".join(m) and "\t" not in "".join(m)]
            for added in obj["added_tokens"]:
                added["id"] = vocab[added["content"]]
        layout = rng.choice(["prepend", "replace", "always", "first", "never"])
        replace = {"type": "Replace", "pattern": {"String": " "}, "content": rep}
        obj["normalizer"], obj["pre_tokenizer"] = {
            "prepend": ({"type": "Sequence", "normalizers": [
                {"type": "Prepend", "prepend": rng.choice([rep, rep, " ", rep + rep, "x"])}, replace]}, None),
            "replace": (replace, None),
        }.get(layout) or (None, {"type": "Metaspace", "replacement": rep, "prepend_scheme": layout, "split": False})
        desc.append(f"SentencePiece-style BPE({opts}, replacement={rep!r}, layout={layout}, no line tokens={lines})")
        return tokenizers.Tokenizer.from_str(json.dumps(obj))

    def added_tokens(self, tok, desc: list) -> None:
        rng = self.rng
        vocab = list(tok.get_vocab(with_added_tokens=False))
        specials, plain = [], []
        for _ in range(rng.choice([0, 0, 1, 2, 3, 5, 8])):
            r = rng.random()
            if r < 0.2 and vocab:
                content = rng.choice(vocab)
            elif r < 0.3 and vocab:
                content = byte_text(rng.choice(vocab)) or "x"
            else:
                content = rng.choice(ADDED_CONTENTS)
            t = AddedToken(content, single_word=rng.random() < 0.25, lstrip=rng.random() < 0.25,
                           rstrip=rng.random() < 0.25, normalized=rng.random() < 0.5, special=rng.random() < 0.5)
            (specials if rng.random() < 0.5 else plain).append(t)
        if specials:
            tok.add_special_tokens(specials)
        if plain:
            tok.add_tokens(plain)
        if specials or plain:
            desc.append(f"added({len(specials)} special, {len(plain)} plain)")

    def special_pair(self, tok) -> tuple[str, int]:
        rng = self.rng
        added = [t.content for t in tok.get_added_tokens_decoder().values()]
        name = rng.choice(added + ["[CLS]", "[SEP]", "<s>", "</s>"]) if added and rng.random() < 0.7 else \
            rng.choice(["[CLS]", "[SEP]", "<s>", "</s>", "<|endoftext|>"])
        i = tok.token_to_id(name)
        if i is None:
            i = rng.randrange(tok.get_vocab_size() + 3)
        return name, i

    def post_processor(self, tok, depth: int = 0):
        rng = self.rng
        kinds = ["ByteLevel", "Template", "Template", "Roberta", "Bert"]
        if depth == 0:
            kinds += ["Sequence"]
        k = rng.choice(kinds)
        if k == "ByteLevel":
            return processors.ByteLevel(trim_offsets=rng.random() < 0.6, add_prefix_space=rng.random() < 0.5)
        if k == "Template":
            a, b = self.special_pair(tok), self.special_pair(tok)
            ta, tb = rng.randint(0, 2), rng.randint(0, 2)
            single = rng.choice([f"{a[0]} $A {b[0]}", f"$A:{ta} {b[0]}:{tb}", f"{a[0]}:{ta} $A:{tb}", "$A",
                                 f"{a[0]} {a[0]}:{tb} $A:{ta} {b[0]}", f"$A:{ta}"])
            pair = f"{a[0]} $A:{ta} {b[0]} $B:{tb} {b[0]}:{tb}"
            sp = {a[0]: a[1], b[0]: b[1]}
            return processors.TemplateProcessing(single=single, pair=pair, special_tokens=list(sp.items()))
        if k in ("Roberta", "Bert"):
            sep, cls = self.special_pair(tok), self.special_pair(tok)
            if k == "Bert":
                return processors.BertProcessing(sep, cls)
            return processors.RobertaProcessing(sep, cls, trim_offsets=rng.random() < 0.6,
                                                add_prefix_space=rng.random() < 0.5)
        return processors.Sequence([self.post_processor(tok, 1) for _ in range(rng.randint(1, 3))])

    def lengths(self, tok, desc: list) -> None:
        """Truncation and/or padding on tok (so in its file)."""
        rng = self.rng
        if rng.random() < 0.7:
            kw = {"stride": rng.choice([0, 0, 1, 3]), "strategy": rng.choice(["longest_first", "only_first",
                                                                            "only_second"]),
                  "direction": rng.choice(["right", "left"])}
            ml = rng.choice([0, 1, 3, 5, 8, 16, 64, 512])
            try:
                tok.enable_truncation(ml, **kw)
                desc.append(f"truncation={tok.truncation}")
            except ValueError:  # stride too large for the special tokens: tokenizers refuses it
                pass
        if rng.random() < 0.6:
            tok.enable_padding(direction=rng.choice(["right", "left"]), pad_id=rng.choice([0, 1, 5]),
                               pad_type_id=rng.choice([0, 2]), pad_token=rng.choice(["[PAD]", "<pad>"]),
                               length=rng.choice([None, None, 4, 32]), pad_to_multiple_of=rng.choice([None, 8]))
            desc.append(f"padding={tok.padding}")

    def decoder(self, depth: int = 0):
        rng = self.rng
        kinds = ["ByteLevel", "Metaspace", "WordPiece", "ByteFallback", "Fuse", "Strip", "Replace", "BPEDecoder"]
        if depth == 0:
            kinds += ["Sequence", "Sequence"]
        k = rng.choice(kinds)
        if k == "ByteLevel":
            return decoders.ByteLevel()
        if k == "Metaspace":
            return decoders.Metaspace(replacement=rng.choice(METASPACE_CHARS),
                                      prepend_scheme=rng.choice(["first", "always", "never"]), split=rng.random() < 0.5)
        if k == "WordPiece":
            return decoders.WordPiece(prefix=rng.choice(["##", "@@", "▁"]), cleanup=rng.random() < 0.5)
        if k == "ByteFallback":
            return decoders.ByteFallback()
        if k == "Fuse":
            return decoders.Fuse()
        if k == "BPEDecoder":
            return decoders.BPEDecoder(suffix=rng.choice(["</w>", "w", "@@"]))
        if k == "Strip":
            return decoders.Strip(content=rng.choice([" ", "▁", "_"]), left=rng.randint(0, 2), right=rng.randint(0, 2))
        if k == "Replace":
            pat, content = rng.choice([("▁", " "), ("_", " "), ("Ġ", " "), (Regex(r"\s+"), " "), ("##", ""),
                                       (Regex("[a-c]"), "X"), ("</w>", " ")])
            return decoders.Replace(pat, content)
        return decoders.Sequence([self.decoder(1) for _ in range(rng.randint(1, 4))])

    def unsupported_patch(self, obj: dict) -> str:
        """Puts one component scantok does not support into obj; returns its description."""
        rng = self.rng
        kind, comp = rng.choice([
            ("normalizer", {"type": "ByteLevel"}),
            ("normalizer", {"type": "Nmt"}),
            ("pre_tokenizer", {"type": "UnicodeScripts"}),
            ("pre_tokenizer", {"type": "CharDelimiterSplit", "delimiter": "x"}),
            ("decoder", {"type": "CTC", "pad_token": "<pad>", "word_delimiter_token": "|", "cleanup": True}),
            ("decoder", {"type": "CTC", "pad_token": "[PAD]", "word_delimiter_token": "_", "cleanup": False}),
        ])
        obj[kind] = comp
        return f"{kind}={comp['type']}"

    def build(self):
        """A random pipeline: (JSON object, description) or None when tokenizers refused it."""
        rng = self.rng
        desc: list = []
        tok = self.model(desc)
        desc.append(f"normalizer={_j(tok.normalizer)}")
        desc.append(f"pre_tokenizer={_j(tok.pre_tokenizer)}")
        self.added_tokens(tok, desc)
        if rng.random() < 0.75:
            tok.post_processor = self.post_processor(tok)
        if rng.random() < 0.8:
            tok.decoder = self.decoder()
        if rng.random() < 0.35:
            self.lengths(tok, desc)
        obj = json.loads(tok.to_str())
        if rng.random() < 0.04:
            desc.append("UNSUPPORTED " + self.unsupported_patch(obj))
        desc.append(f"post_processor={_j(obj.get('post_processor'))}")
        desc.append(f"decoder={_j(obj.get('decoder'))}")
        return obj, desc

    # -- texts --
    def fragment(self, extras: list[str]) -> str:
        rng = self.rng
        r = rng.random()
        if r < 0.12 and extras:
            return rng.choice(extras)
        if r < 0.2:
            return "".join(random_fragments(rng, rng.randint(1, 3), surrogates=False))
        if r < 0.25:
            return rng.choice(WORDS) + "".join(rng.choices(COMBINING, k=rng.randint(1, 3)))
        pool = rng.choices([p for _, p in POOLS], weights=[w for w, _ in POOLS])[0]
        return rng.choice(pool)

    def text(self, extras: list[str]) -> str:
        rng = self.rng
        r = rng.random()
        if r < 0.04:
            return ""
        if r < 0.14:
            c = rng.choice(self.corpora)
            a = rng.randrange(len(c))
            return c[a:a + rng.choice([rng.randint(1, 200), rng.randint(200, 3000)])]
        n = rng.choice([1, 2, 3, rng.randint(1, 12), rng.randint(5, 60)])
        parts = []
        for _ in range(n):
            parts.append(self.fragment(extras))
            if rng.random() < 0.4:
                parts.append(" ")
        t = "".join(parts)
        if rng.random() < 0.02:  # a lone surrogate: both must raise or agree
            i = rng.randint(0, len(t))
            t = t[:i] + chr(rng.randrange(0xD800, 0xE000)) + t[i:]
        return t

    # -- comparing --
    def compare(self, ours, ref, obj: dict, desc: list, label: str, x) -> None:
        self.calls[label] = self.calls.get(label, 0) + 1
        ours_src, ref_src = CHECKS[label]
        want = outcome(run_src, ref_src, ours, ref, x)
        got = outcome(run_src, ours_src, ours, ref, x)
        if isinstance(want, Raised) and isinstance(got, Raised):
            key = (label.split("(")[0], want.name, got.name)
            self.both_raised[key] = self.both_raised.get(key, 0) + 1
        if got == want:
            return
        if isinstance(want, Raised) and want.name == "PanicException":
            # tokenizers crashed where scantok gives a result: not a mismatch, but shown
            key = (label.split("(")[0], want.msg)
            self.panics[key] = self.panics.get(key, 0) + 1
            if self.panics[key] == 1:
                print(f"TOKENIZERS PANIC {label} on {short(x, 200)}: {want.msg}\n  pipeline: {'; '.join(desc)}\n"
                      f"  scantok: {short(got, 300)}", flush=True)
            return
        self.mismatch(obj, desc, label, x, want, got)

    def mismatch(self, obj, desc, label, x, want, got) -> None:
        shown = (x, want, got)
        if isinstance(want, list) and isinstance(got, list) and len(want) == len(got) and isinstance(x, list):
            k = next((k for k, (a, b) in enumerate(zip(want, got)) if a != b), None)
            if k is not None and k < len(x):
                shown = (x[k], want[k], got[k])
        key = (self.pipelines, label)
        self.per_case[key] = self.per_case.get(key, 0) + 1
        self.mismatches.append(key)
        if self.first is None:
            self.first = (json.loads(json.dumps(obj)), label, x)
        if self.per_case[key] > 3:  # counted, not printed again: the same pipeline and check
            return
        if self.save is not None:
            self.save.mkdir(parents=True, exist_ok=True)
            (self.save / f"pipeline_{self.pipelines}.json").write_text(json.dumps(obj, ensure_ascii=False),
                                                                       encoding="utf-8")
        msg = (f"MISMATCH [pipeline {self.pipelines}] {label} on {short(shown[0], 300)}\n"
               f"  pipeline: {'; '.join(desc)}\n"
               f"  expected {short(shown[1], 600)}\n  got      {short(shown[2], 600)}")
        print(msg, flush=True)

    def run_pipeline(self, texts_per: int) -> None:
        rng = self.rng
        t0 = time.monotonic()
        try:
            built = self.build()
        except Exception as exc:  # noqa: BLE001 - tokenizers refused the combination while building
            self.unsupported[f"tokenizers build: {type(exc).__name__}"] = \
                self.unsupported.get(f"tokenizers build: {type(exc).__name__}", 0) + 1
            return
        obj, desc = built
        try:
            ours, ref = load_pair(obj)
        except Exception as exc:  # noqa: BLE001 - tokenizers does not load it: scantok may do as it likes
            key = f"tokenizers load: {type(exc).__name__}"
            self.unsupported[key] = self.unsupported.get(key, 0) + 1
            return
        self.build_seconds += time.monotonic() - t0
        self.pipelines += 1
        kind = "WordLevel" if desc[0].startswith("WordLevel") else "SentencePiece-style" \
            if desc[0].startswith("SentencePiece") else desc[0][:9] + ")"
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        if isinstance(ours, UnsupportedComponentError):
            key = str(ours).split(":")[0]
            self.unsupported[key] = self.unsupported.get(key, 0) + 1
            return
        if isinstance(ours, Exception):
            self.mismatch(obj, desc, "load", None, "a Tokenizer (tokenizers loads it)",
                          "".join(traceback.format_exception_only(type(ours), ours)).strip())
            return
        if any(d.startswith("UNSUPPORTED") for d in desc):
            self.mismatch(obj, desc, "load", None, "UnsupportedComponentError", "a Tokenizer")
            return
        self.built += 1
        # extras: the added tokens' contents and some vocabulary words, glued into texts
        vocab = list(ref.get_vocab(with_added_tokens=False))
        extras = [t.content for t in ref.get_added_tokens_decoder().values()]
        extras += [byte_text(rng.choice(vocab)) for _ in range(min(10, len(vocab)))]
        extras += [a + b for a, b in zip(extras, reversed(extras))][:4]
        size = ref.get_vocab_size()
        # per pipeline
        self.compare(ours, ref, obj, desc, "get_vocab_size", None)
        self.compare(ours, ref, obj, desc, "get_vocab", None)
        sample = rng.sample(vocab, min(30, len(vocab))) + extras + ["", " ", "\x00", "not a token at all"]
        self.compare(ours, ref, obj, desc, "token_to_id", sample)
        self.compare(ours, ref, obj, desc, "id_to_token", [rng.randrange(size + 10) for _ in range(40)] + [size, 0])
        texts = [self.text(extras) for _ in range(texts_per)]
        for i, t in enumerate(texts):
            self.texts += 1
            self.compare(ours, ref, obj, desc, "encode", t)
            self.compare(ours, ref, obj, desc, "encode(add_special_tokens=False)", t)
            if i < 4:
                # a pair's overflowing parts are every window of one sequence with every window
                # of the other (tokenizers' rule): under a max_length of a few tokens, two texts
                # of ~600 tokens make ~360,000 encodings, which F() then holds twice (seed 2802
                # ran out of 24 GB here): the pair is cut short then
                tr = ref.truncation
                self.compare(ours, ref, obj, desc, "encode(pair)", t[:64] if tr and tr["max_length"] <= 16 else t)
                self.compare(ours, ref, obj, desc, "encode(words, is_pretokenized=True)", t)
            ids = outcome(lambda s: ref.encode(s).ids, t)
            if isinstance(ids, Raised):
                ids = [rng.randrange(size + 3) for _ in range(rng.randint(0, 20))]
            for skip in (True, False):
                self.compare(ours, ref, obj, desc, f"decode(skip_special_tokens={skip})", ids)
            if i < 3:
                self.compare(ours, ref, obj, desc, "to_str round trip encode", t)
            if i == 0:
                self.compare(ours, ref, obj, desc, "to_str loads in tokenizers", t)
        # batches: a few, one of them large enough for two threads
        for b in range(3):
            k = rng.randint(2, 12)
            batch = rng.sample(texts, min(k, len(texts)))
            if b == 2 and self.big_batches:
                c = rng.choice(self.corpora)
                a = rng.randrange(len(c) - 3000)
                batch = batch + [c[a + j:a + j + 700] for j in range(0, PARALLEL_MIN + 1400, 700)]
                rng.shuffle(batch)
            self.batches += 1
            self.threaded += sum(map(len, batch)) >= PARALLEL_MIN
            add = rng.random() < 0.6
            for nt in (1, 2):
                self.compare(ours, ref, obj, desc, f"encode_batch(add_special_tokens={add}, num_threads={nt})", batch)
                self.compare(ours, ref, obj, desc, f"encode_batch_fast(add_special_tokens={add}, num_threads={nt})",
                             batch)
            if b == 0:
                self.compare(ours, ref, obj, desc, "encode_batch(pairs)", batch)
                self.compare(ours, ref, obj, desc, "encode_batch_fast(pairs)", batch)
            seqs = [outcome(lambda s: ref.encode(s).ids, t) for t in batch]
            seqs = [s for s in seqs if not isinstance(s, Raised)]
            self.compare(ours, ref, obj, desc, "decode_batch", (rng.random() < 0.5, seqs))
        # tokens added afterwards (str contents: both read them alike), then encode and decode;
        # a token scantok refuses at load (see UnsupportedComponentError) it refuses here too:
        # tried on a copy first, counted as unsupported
        for label in ("add_tokens then encode", "add_special_tokens then encode"):
            contents = [rng.choice(ADDED_CONTENTS + extras) for _ in range(rng.randint(1, 4))]
            method = label.split()[0]
            try:
                getattr(scantok.Tokenizer.from_str(ours.to_str()), method)(contents)
            except scantok.UnsupportedComponentError as exc:
                key = f"{method}: {str(exc).split(':')[0]}"
                self.unsupported[key] = self.unsupported.get(key, 0) + 1
                break
            except Exception:  # noqa: BLE001 - compared below
                pass
            some = rng.sample(texts, min(3, len(texts))) + ["".join(contents)]
            self.compare(ours, ref, obj, desc, label,
                         (contents, some, [rng.randrange(size + 8) for _ in range(12)]))
        specials = [t["content"] for t in json.loads(ref.to_str())["added_tokens"] if t["special"]]
        if specials:
            some = rng.sample(texts, min(3, len(texts)))
            some.append(" ".join(rng.choice(specials) + rng.choice(texts)[:30] for _ in range(3)))
            self.compare(ours, ref, obj, desc, "encode_special_tokens then encode", some)

    def run(self, seconds: float | None, pipelines: int | None, texts_per: int) -> None:
        t_end = time.monotonic() + seconds if seconds else None
        while (pipelines is None or self.pipelines < pipelines) and (t_end is None or time.monotonic() < t_end):
            self.run_pipeline(texts_per)

    # -- the first mismatch, minimised --
    def shrink(self, seconds: float) -> tuple:
        obj, label, x = self.first
        deadline = time.monotonic() + seconds
        return shrink_case(obj, label, x, deadline)


def _j(comp) -> str:
    if comp is None:
        return "None"
    if isinstance(comp, dict):
        return json.dumps(comp, ensure_ascii=False)
    try:
        return json.dumps(json.loads(comp.__getstate__()), ensure_ascii=False)
    except Exception:  # noqa: BLE001
        return repr(comp)


# -- shrinking ------------------------------------------------------------------------------------
def still_fails(obj: dict, label: str, x) -> bool:
    try:
        ours, ref = load_pair(obj)
    except Exception:  # noqa: BLE001 - tokenizers refuses the reduced file
        return False
    if label == "load":
        return isinstance(ours, Exception) and not isinstance(ours, UnsupportedComponentError)
    if isinstance(ours, Exception):
        return False
    ours_src, ref_src = CHECKS[label]
    return outcome(run_src, ours_src, ours, ref, x) != outcome(run_src, ref_src, ours, ref, x)


def _reductions(obj: dict):
    """Smaller variants of a tokenizer.json object, one component simpler each."""
    def variant(path, value):
        o = json.loads(json.dumps(obj))
        node = o
        for k in path[:-1]:
            node = node[k]
        if value is _DROP:
            del node[path[-1]]
        else:
            node[path[-1]] = value
        return o

    for key, sub in (("normalizer", "normalizers"), ("pre_tokenizer", "pretokenizers"),
                     ("post_processor", "processors"), ("decoder", "decoders")):
        comp = obj.get(key)
        if comp is None:
            continue
        yield variant([key], None)
        if comp.get("type") == "Sequence":
            items = comp.get(sub, [])
            if len(items) == 1:
                yield variant([key], items[0])
            for i in range(len(items)):
                yield variant([key, sub, i], _DROP)
    for i in range(len(obj.get("added_tokens") or [])):
        yield variant(["added_tokens", i], _DROP)
    model = obj["model"]
    for k, default in (("fuse_unk", False), ("byte_fallback", False), ("ignore_merges", False), ("unk_token", None),
                       ("continuing_subword_prefix", None), ("end_of_word_suffix", None)):
        if model.get(k, default) != default:
            yield variant(["model", k], default)
    for key in ("added_tokens",):
        for i, t in enumerate(obj.get(key) or []):
            for opt in ("lstrip", "rstrip", "single_word", "special", "normalized"):
                if t.get(opt):
                    yield variant([key, i, opt], False)


_DROP = object()


def shrink_case(obj: dict, label: str, x, deadline: float) -> tuple:
    """(obj, x) made smaller while the check still mismatches: components, then the input, then
    the merges and the vocabulary."""
    def in_time():
        return time.monotonic() < deadline

    changed = True
    while changed and in_time():
        changed = False
        for cand in _reductions(obj):
            if not in_time():
                break
            if still_fails(cand, label, x):
                obj, changed = cand, True
                break
    # the input
    if isinstance(x, list) and x and all(isinstance(v, str) for v in x):
        x = ddmin(x, lambda c: still_fails(obj, label, c), deadline)
        for k in range(len(x)):
            x[k] = "".join(ddmin(list(x[k]), lambda c, k=k: still_fails(obj, label, x[:k] + ["".join(c)] + x[k + 1:]),
                                 deadline))
    elif isinstance(x, str):
        x = "".join(ddmin(list(x), lambda c: still_fails(obj, label, "".join(c)), deadline))
    elif isinstance(x, list) and all(isinstance(v, int) for v in x):
        x = ddmin(x, lambda c: still_fails(obj, label, c), deadline)
    elif isinstance(x, tuple) and len(x) == 2 and isinstance(x[1], list):
        seqs = ddmin(x[1], lambda c: still_fails(obj, label, (x[0], c)), deadline)
        x = (x[0], seqs)

    # the merges (any subset of the merges is a valid file), then vocabulary tokens no merge uses
    def with_model(**kw):
        o = json.loads(json.dumps(obj))
        o["model"].update(kw)
        return o

    model = obj["model"]
    if model.get("type") == "BPE" and model.get("merges") and in_time():
        merges = ddmin(model["merges"], lambda m: still_fails(with_model(merges=m), label, x), deadline)
        obj = with_model(merges=merges)
    vocab = obj["model"].get("vocab") or {}
    if vocab and in_time() and label.startswith(("encode", "decode", "to_str")):
        used = set()
        for m in obj["model"].get("merges") or []:
            parts = m.split(" ") if isinstance(m, str) else m
            used.update(parts)
            plen = len(obj["model"].get("continuing_subword_prefix") or "")
            if len(parts) == 2:
                used.add(parts[0] + parts[1][plen:])
        keep_always = {t["content"] for t in obj.get("added_tokens") or []}
        keep_always.add(obj["model"].get("unk_token"))
        optional = [t for t in vocab if t not in used and t not in keep_always]
        fixed = {t: i for t, i in vocab.items() if t not in optional}

        def vocab_of(tokens):
            v = dict(fixed)
            v.update({t: vocab[t] for t in tokens})
            return with_model(vocab=dict(sorted(v.items(), key=lambda kv: kv[1])))

        kept = ddmin(optional, lambda ts: still_fails(vocab_of(ts), label, x), deadline)
        if still_fails(vocab_of(kept), label, x):
            obj = vocab_of(kept)
    return obj, label, x


def write_repro(path: Path, seed: int, obj: dict, label: str, x) -> None:
    ours_src, ref_src = CHECKS[label] if label != "load" else ("None", "None")
    ours, ref = load_pair(obj)
    if label == "load":
        want, got = "a Tokenizer", repr(ours)
        body = ("try:\n    scantok.Tokenizer.from_str(ref.to_str())\nexcept Exception as e:\n"
                "    print('scantok raised', type(e).__name__, e)\n    sys.exit(1)\nsys.exit(0)\n")
    else:
        want = outcome(run_src, ref_src, ours, ref, x)
        got = outcome(run_src, ours_src, ours, ref, x)
        body = (f"x = {x!r}\n\ndef run(src):\n    try:\n        return eval(src)\n"
                f"    except Exception as e:\n        return f'<raised {{type(e).__name__}}>'\n\n\n"
                f"want = run({ref_src!r})\ngot = run({ours_src!r})\n"
                "print('tokenizers', want)\nprint('scantok   ', got)\nboth = all(isinstance(v, str) and v.startswith('<raised') for v in (want, got))\n"
                "sys.exit(0 if want == got or both else 1)\n")
    path.write_text(
        f'"""fuzz_hf_components.py --seed {seed}: first mismatch, minimised: {label}\n\n'
        f"tokenizers {short(want, 1500)}\nscantok    {short(got, 1500)}\n\"\"\"\n"
        "import json\nimport os\nimport sys\n\nos.environ.setdefault('RAYON_NUM_THREADS', '1')\n"
        "import tokenizers\nimport scantok\n\n\n"
        + inspect.getsource(F) + "\n\n" + inspect.getsource(mappings) + "\n\n"
        f"OBJ = json.loads({json.dumps(obj, ensure_ascii=False)!r})\n"
        "ref = tokenizers.Tokenizer.from_str(json.dumps(OBJ))\n" +
        ("" if label == "load" else "ours = scantok.Tokenizer.from_str(ref.to_str())\n") + body,
        encoding="utf-8")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float)
    ap.add_argument("--pipelines", type=int)
    ap.add_argument("--texts", type=int, default=40, help="texts per pipeline (default: %(default)s)")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--repro", type=Path, default=Path("fuzz_hf_components_repro.py"),
                    help="where the first mismatch's minimal reproducer goes (default: %(default)s)")
    ap.add_argument("--shrink-seconds", type=float, default=300)
    ap.add_argument("--save", type=Path, default=None, help="a directory for every mismatching pipeline's JSON")
    ap.add_argument("--sentencepiece", type=float, default=0.15,
                    help="the share of SentencePiece-style pipelines (default: %(default)s)")
    args = ap.parse_args(argv)
    if args.seconds is None and args.pipelines is None:
        args.seconds = 60
    seed = args.seed if args.seed is not None else random.randrange(2**32)
    c = Campaign(seed)
    c.save = args.save
    c.sentencepiece = args.sentencepiece
    t0 = time.monotonic()
    c.run(args.seconds, args.pipelines, args.texts)
    took = time.monotonic() - t0
    print(summary(c, took))
    if c.mismatches:
        obj, label, x = c.shrink(args.shrink_seconds)
        write_repro(args.repro, seed, obj, label, x)
        print(f"first mismatch minimised ({label}): {args.repro}")
        return 1
    return 0


def summary(c: Campaign, took: float) -> str:
    calls = ", ".join(f"{k} {v}" for k, v in sorted(c.calls.items()))
    skips = ", ".join(f"{k} {v}" for k, v in sorted(c.unsupported.items())) or "none"
    raised = ", ".join(f"{k[0]}: tokenizers {k[1]} / scantok {k[2]} x{v}" for k, v in sorted(c.both_raised.items()))
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(c.kinds.items()))
    panics = ", ".join(f"{k[0]} ({k[1][:60]}) x{v}" for k, v in sorted(c.panics.items())) or "none"
    return (f"fuzz_hf_components: seed {c.seed}, {c.pipelines} pipelines ({kinds}; {c.built} compared, "
            f"{c.build_seconds:.0f} s building) in {took:.0f} s; {c.texts} texts, {c.batches} batches ({c.threaded} "
            f"of at least {PARALLEL_MIN} characters); {sum(c.calls.values())} calls ({calls}); skipped: {skips}; "
            f"both raised: {raised or 'never'}; tokenizers panicked where scantok did not: {panics}; {len(c.mismatches)} mismatches "
            f"({len(c.per_case)} pipeline/check pairs, {len({p for p, _ in c.per_case})} pipelines)")


if __name__ == "__main__":
    sys.exit(main())
