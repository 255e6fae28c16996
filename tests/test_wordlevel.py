"""WordLevel: ids and offsets identical to HuggingFace `tokenizers` (the pinned oracle) for every
supported normalizer / pre-tokenizer combination, on the corpora and on hypothesis text."""
from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from scantok import wordlevel as W
from scantok.wordlevel import UnsupportedComponentError, WordLevel, WordLevelError

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import Tokenizer  # noqa: E402

from strategies import hard_text  # noqa: E402

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
if not CORPUS.exists():
    CORPUS = Path("/work/shared/corpus")
CORPORA = ("en", "code", "multi")

O200K = "|".join([
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"\p{N}{1,3}", r" ?[^\s\p{L}\p{N}]+[\r\n/]*", r"\s*[\r\n]+", r"\s+(?!\S)", r"\s+"])
R50K = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
BEHAVIORS = ["Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"]
PRE_TOKENIZERS = {
    "none": None,
    "whitespace": {"type": "Whitespace"},
    "whitespace_split": {"type": "WhitespaceSplit"},
    "bert": {"type": "BertPreTokenizer"},
    **{f"punct_{b}": {"type": "Punctuation", "behavior": b} for b in BEHAVIORS},
    "digits": {"type": "Digits", "individual_digits": False},
    "digits_individual": {"type": "Digits", "individual_digits": True},
    **{f"split_str_{b}_{inv}": {"type": "Split", "pattern": {"String": "-"}, "behavior": b, "invert": inv}
       for b in BEHAVIORS for inv in (False, True)},
    "split_regex_ws": {"type": "Split", "pattern": {"Regex": r"\s+"}, "behavior": "Isolated", "invert": False},
    "split_regex_words": {"type": "Split", "pattern": {"Regex": r"\w+|[^\w\s]+"}, "behavior": "Removed",
                          "invert": True},
    "split_regex_nonword": {"type": "Split", "pattern": {"Regex": r"[^\w\u200d]|\W+"}, "behavior": "MergedWithNext",
                            "invert": False},
    "split_regex_o200k": {"type": "Split", "pattern": {"Regex": O200K}, "behavior": "Isolated", "invert": False},
    "split_regex_r50k": {"type": "Split", "pattern": {"Regex": R50K}, "behavior": "Isolated", "invert": False},
    "sequence": {"type": "Sequence", "pretokenizers": [
        {"type": "WhitespaceSplit"}, {"type": "Punctuation", "behavior": "Isolated"},
        {"type": "Digits", "individual_digits": True}]},
    "sequence2": {"type": "Sequence", "pretokenizers": [
        {"type": "Whitespace"}, {"type": "Split", "pattern": {"String": "_"}, "behavior": "MergedWithNext",
                                 "invert": False}]},
}
NORMALIZERS = {
    "none": None,
    "lowercase": {"type": "Lowercase"},
    "nfc": {"type": "NFC"},
    "nfd": {"type": "NFD"},
    "nfkc": {"type": "NFKC"},
    "nfkd": {"type": "NFKD"},
    "strip": {"type": "Strip", "strip_left": True, "strip_right": True},
    "strip_left": {"type": "Strip", "strip_left": True, "strip_right": False},
    "bert": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True, "strip_accents": None,
             "lowercase": True},
    "bert_cased_accents": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                           "strip_accents": True, "lowercase": False},
    "sequence": {"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "Lowercase"},
                                                      {"type": "Strip", "strip_left": True, "strip_right": True}]},
}

# Hand-made text that exercises every normalizer and pre-tokenizer corner.
SPICE = [
    "e\u0301", "A\u0301\u0323", "x\u0323\u0301", "\u0301", "\u0345", "İ", "ΣΑΣ", "ς", "ﬁ", "Ǆ", "ẞ", "\u1100\u1161\u11a8",
    "\uac00\u11a8", "中", "国", "\U00020000", "\u3000", "\u00a0", "\u2028", "\x85", "\x1c", "\x00", "\ufffd", "\u200b",
    "\t", "\n", "\r\n", " ", "  ", "-", "--", "_", ".", ",", "!?", "$", "+", "^", "`", "|", "~", "«»", "¿", "、", "。",
    "0", "12", "٣", "²", "½", "Ⅻ", "\U00011de0", "\u166d", "\U000111c9", "\u0e3f", "a", "word", "Hello", "WORLD",
    "don't", "l'été", "naïve", "Ærø", "ß", "straße", "Straße", "\ua7cb", "\U00010d50", "\u32ff", "\U00011938",
    "\U0001f600", "\U0001f469\u200d\U0001f4bb", "K", "\u212a", "ǅ",
]
spicy_text = st.lists(st.sampled_from(SPICE), max_size=24).map("".join)
any_text = hard_text(surrogates=False)
mixed_text = st.one_of(spicy_text, any_text, st.text(max_size=40))


def _words(n_chars: int = 60_000) -> list[str]:
    words = set()
    for c in CORPORA:
        words.update((CORPUS / f"{c}.txt").read_text(encoding="utf-8")[:n_chars].split())
    return sorted(words)


@pytest.fixture(scope="module")
def vocab() -> dict[str, int]:
    v = {"[UNK]": 0}
    for w in _words():
        v.setdefault(w, len(v))
        v.setdefault(w.lower(), len(v))
    for s in SPICE:
        v.setdefault(s, len(v))
        v.setdefault(s.lower(), len(v))
    for p in "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~0123456789":
        v.setdefault(p, len(v))
    return v


@pytest.fixture(scope="module")
def samples() -> list[str]:
    rnd = random.Random(4)
    out = []
    for c in CORPORA:
        t = (CORPUS / f"{c}.txt").read_text(encoding="utf-8")
        i = rnd.randrange(len(t) - 3000)
        out.append(t[i:i + 3000])
    out += ["", " ", "   a  ", "a-b--c-", "-", "\n", "".join(SPICE), " ".join(SPICE)]
    return out


def hf_of(w: WordLevel) -> Tokenizer:
    return Tokenizer.from_str(w.to_str())


def assert_same(w: WordLevel, hf: Tokenizer, text: str) -> None:
    enc = hf.encode(text)
    ids, offs = w.encode_with_offsets(text)
    assert ids == enc.ids, (text, [w.id_to_token(i) for i in ids], enc.tokens)
    assert offs == enc.offsets, (text, offs, enc.offsets)
    assert w.encode(text) == enc.ids


# -- every combination on corpus slices and hand-made text --------------------------------------
@pytest.mark.parametrize("norm", sorted(NORMALIZERS))
@pytest.mark.parametrize("pre", sorted(PRE_TOKENIZERS))
def test_parity_combinations(vocab, samples, pre, norm):
    w = WordLevel(vocab, "[UNK]", NORMALIZERS[norm], PRE_TOKENIZERS[pre])
    hf = hf_of(w)
    for text in samples:
        assert_same(w, hf, text)
    assert w.normalize("".join(SPICE)) == (hf.normalizer.normalize_str("".join(SPICE)) if hf.normalizer
                                           else "".join(SPICE))


# -- hypothesis text, every pre-tokenizer x a few normalizers, and every normalizer --------------
_PAIRS = sorted({(p, n) for p in PRE_TOKENIZERS for n in ("none", "bert", "nfkc")}
                | {(p, n) for p in ("whitespace_split", "bert", "punct_Contiguous", "split_regex_ws")
                   for n in NORMALIZERS})


@pytest.mark.parametrize("pre,norm", _PAIRS)
def test_parity_hypothesis(vocab, pre, norm):
    w = WordLevel(vocab, "[UNK]", NORMALIZERS[norm], PRE_TOKENIZERS[pre])
    hf = hf_of(w)

    @settings(max_examples=30, deadline=None)
    @given(mixed_text)
    def check(text):
        assert_same(w, hf, text)

    check()


# -- whole corpora on the fast (C) paths ---------------------------------------------------------
@pytest.fixture(scope="module")
def corpora() -> dict[str, str]:
    return {c: (CORPUS / f"{c}.txt").read_text(encoding="utf-8") for c in CORPORA}


@pytest.mark.parametrize("pre", ["whitespace_split", "whitespace", "bert"])
def test_parity_whole_corpora(vocab, corpora, pre):
    norm = {"whitespace_split": "none", "whitespace": "lowercase", "bert": "none"}[pre]
    w = WordLevel(vocab, "[UNK]", NORMALIZERS[norm], PRE_TOKENIZERS[pre])
    hf = hf_of(w)
    for name, text in corpora.items():
        text = text[:1_500_000]
        enc = hf.encode(text)
        ids, offs = w.encode_with_offsets(text)
        assert ids == enc.ids, name
        assert offs == enc.offsets, name
        assert w.encode(text) == enc.ids
        assert w.encode(text, as_numpy=True).tolist() == enc.ids


def test_fast_paths_agree(vocab, corpora):
    """The fused WhitespaceSplit loop, the compiled scanner + C lookup and the pure-Python path
    give the same ids and offsets."""
    w = WordLevel(vocab, "[UNK]")
    text = corpora["multi"][:300_000] + "".join(SPICE) + " \u3000x\u2029y\x85z\u00a0 "
    ref = w.encode_with_offsets(text)
    w._fused = False
    assert w.encode_with_offsets(text) == ref
    w._table = None
    assert w.encode_with_offsets(text) == ref


@pytest.mark.skipif(W._native() is None, reason="scantok._native has no vocab_table (not built)")
def test_compiled_scanners_present():
    """The pre-tokenizer patterns of gen/patterns/ (whitespace_split, hf_bert, hf_punctuation,
    hf_digits, hf_digit) are compiled into the package: `make gen` was run after adding them."""
    for kind in ("whitespace", "whitespace_split", "bert", "punct", "digits", "digit"):
        m = W._builtin_matcher(kind)
        assert m.dfa is not None, f"scanner {m.scanner!r} is not compiled in; run `make gen`"
    # Split regexes equal to a shipped scanner's pattern run on that scanner when the pattern
    # means the same in Oniguruma; r50k's `\s++$` has Oniguruma's end-of-line `$`, so it is
    # compiled with flavor "onig", into the very tables of r50k_base (after `\s++` both `$`s agree)
    from scantok.compiler import runtime

    assert W._regex_matcher(O200K).scanner == "o200k_base"
    m = W._regex_matcher(R50K)
    assert m._compiled.flavor == "onig"
    assert runtime.build_image(R50K, "onig", "16.0.0") == runtime.build_image(R50K, "regex", "16.0.0")


@pytest.mark.parametrize("kind", ["whitespace", "whitespace_split", "bert", "punct", "digits", "digit"])
def test_matchers_equal_regex(kind):
    """Each compiled pre-tokenizer scanner equals its `regex` pattern (the stand-in)."""
    import regex

    m = W._builtin_matcher(kind)
    rx = regex.compile(m.pattern, regex.V0)

    @settings(max_examples=60, deadline=None)
    @given(st.one_of(spicy_text, hard_text(surrogates=True)))
    def check(text):
        assert m.spans(text) == [x.span() for x in rx.finditer(text)]

    check()


def test_char_tables_against_hf():
    """The measured character tables still match the installed tokenizers (spot check)."""
    from tokenizers import normalizers as nm, pre_tokenizers as pt

    rnd = random.Random(7)
    cps = [c for c in rnd.sample(range(0x30000), 4000) if not 0xD800 <= c <= 0xDFFF]
    cps += sorted(W._BERT_PUNCT)[:50] + sorted(W._NUMERIC)[-30:] + list(W._LOWER_TABLE)
    bert = pt.BertPreTokenizer()
    digits = pt.Digits(individual_digits=False)
    low = nm.Lowercase()
    for c in cps:
        ch = chr(c)
        assert (len(bert.pre_tokenize_str("a" + ch + "a")) == 3) == (c in W._BERT_PUNCT) or ch.isspace(), hex(c)
        assert (len(digits.pre_tokenize_str("a" + ch + "a")) == 3) == (c in W._NUMERIC), hex(c)
        assert low.normalize_str(ch) == W._lower_char(ch), hex(c)


# -- unk ---------------------------------------------------------------------------------------
def test_unknown_words_get_unk():
    w = WordLevel({"[UNK]": 7, "a": 1}, "[UNK]")
    assert w.encode("a b a") == [1, 7, 1]
    assert w.encode("a b a") == hf_of(w).encode("a b a").ids


@pytest.mark.parametrize("native", [True, False])
def test_vocab_without_unk_token_errors_like_hf(native):
    w = WordLevel({"a": 0, "b": 1}, "[UNK]")
    if not native:
        w._table = None
    hf = hf_of(w)
    assert w.encode("a b") == hf.encode("a b").ids == [0, 1]
    with pytest.raises(Exception, match="Missing \\[UNK\\] token from the vocabulary") as hf_err:
        hf.encode("a c")
    with pytest.raises(WordLevelError, match="Missing \\[UNK\\] token from the vocabulary") as err:
        w.encode("a c")
    assert str(err.value) == str(hf_err.value)
    with pytest.raises(WordLevelError):
        w.encode_with_offsets("c")
    with pytest.raises(WordLevelError):
        w.encode("c", as_numpy=True)
    with pytest.raises(WordLevelError):
        w.encode_batch(["a", "b c", "a"], num_threads=2)
    assert w.encode_batch(["a", "b a"], num_threads=2) == [[0], [1, 0]]


# -- vocabulary accessors and decode -------------------------------------------------------------
def test_vocab_accessors(vocab):
    w = WordLevel(vocab, "[UNK]", added_tokens=[{"id": 0, "content": "[UNK]", "special": True}])
    hf = hf_of(w)
    assert w.get_vocab() == hf.get_vocab()
    assert w.get_vocab_size() == hf.get_vocab_size()
    for tok in ["[UNK]", "the", "nope-not-there", "中"]:
        assert w.token_to_id(tok) == hf.token_to_id(tok)
    for i in [0, 1, 5, len(vocab) - 1, len(vocab), 10**6]:
        assert w.id_to_token(i) == hf.id_to_token(i)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 120), max_size=20), st.booleans())
def test_decode_like_hf(ids, skip):
    vocab = {f"w{i}": i for i in range(100)}
    vocab["[UNK]"] = 100
    w = WordLevel(vocab, "[UNK]", added_tokens=[{"id": 100, "content": "[UNK]", "special": True},
                                                 {"id": 3, "content": "w3", "special": False}])
    assert w.decode(ids, skip_special_tokens=skip) == _HF_DECODE(w).decode(ids, skip_special_tokens=skip)


_HF_CACHE: dict = {}


def _HF_DECODE(w):
    key = w.to_str()
    if key not in _HF_CACHE:
        _HF_CACHE[key] = hf_of(w)
    return _HF_CACHE[key]


@pytest.mark.parametrize("text", ["\udc80", "a \udc80 b", "é\ud800", "hello \udfff"])
def test_lone_surrogates_raise_as_hf(text):
    """tokenizers refuses a str holding a lone surrogate (TypeError when encoding, UnicodeEncodeError
    when training); WordLevel raises TextEncodeError, which is both, saying where (it had encoded
    the surrogate as a character of its own)."""
    from tokenizers import models, pre_tokenizers, trainers

    from scantok.hf.errors import TextEncodeError

    vocab = {"[UNK]": 0, "a": 1, "b": 2, "hello": 3}
    hf = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    hf.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    at = next(i for i, c in enumerate(text) if 0xD800 <= ord(c) <= 0xDFFF)
    with pytest.raises(TypeError):
        hf.encode(text)
    added = [{"id": 9, "content": "<s>", "special": True}]
    for name, w in (("whitespace_split", WordLevel(vocab, "[UNK]", None, "whitespace_split")),
                    ("bert", WordLevel(vocab, "[UNK]", None, "bert")),
                    ("added tokens", WordLevel(vocab, "[UNK]", None, "whitespace_split", added_tokens=added)),
                    ("normalizer", WordLevel(vocab, "[UNK]", "nfkc", "whitespace_split"))):
        for call in (lambda: w.encode(text), lambda: w.encode_with_offsets(text), lambda: w.encode_batch(["a", text]),
                     lambda: w.encode_batch(["a", text], with_offsets=True)):
            with pytest.raises(TextEncodeError) as info:
                call()
            assert (info.value.start, info.value.object) == (at, text), name
    with pytest.raises(UnicodeEncodeError):
        hf.train_from_iterator(["a b", text], trainers.WordLevelTrainer(vocab_size=10, show_progress=False))
    with pytest.raises(UnicodeEncodeError, match="sequence 1"):
        W.train_wordlevel(["a b", text], vocab_size=10)


def test_added_tokens_split_like_hf(vocab):
    added = [{"id": 0, "content": "[UNK]", "special": True}, {"id": len(vocab), "content": "<sep>", "special": True},
             {"id": len(vocab) + 1, "content": "<s", "special": False}]
    for norm in ("none", "bert", "lowercase"):
        w = WordLevel(vocab, "[UNK]", NORMALIZERS[norm], "whitespace", added_tokens=added)
        hf = hf_of(w)
        for text in ["a<sep>b", "x [UNK] y", "<s<sep>>", "A<SEP>b<sep>", "<sep><sep>", "  İ<sep>é\u0301 "]:
            assert_same(w, hf, text)


# -- batches, threads, numpy ---------------------------------------------------------------------
def test_encode_batch_threads_numpy(vocab, corpora):
    w = WordLevel(vocab, "[UNK]")
    texts = [corpora[c][i:i + 20_000] for c in CORPORA for i in range(0, 200_000, 20_000)]
    ref = [w.encode(t) for t in texts]
    assert w.encode_batch(texts, num_threads=1) == ref
    assert w.encode_batch(texts, num_threads=2) == ref
    assert w.encode_batch(texts) == ref
    arrs = w.encode_batch(texts, num_threads=2, as_numpy=True)
    assert all(isinstance(a, np.ndarray) and a.dtype == np.int32 for a in arrs)
    assert [a.tolist() for a in arrs] == ref
    hf = hf_of(w)
    assert [e.ids for e in hf.encode_batch(texts)] == ref
    w._fused = False  # the compiled-scanner path in the C batch
    assert w.encode_batch(texts, num_threads=2) == ref
    w._fused = True
    wb = WordLevel(vocab, "[UNK]", "lowercase", "bert")
    assert wb.encode_batch(texts, num_threads=2) == [wb.encode(t) for t in texts] == [
        e.ids for e in hf_of(wb).encode_batch(texts)]
    with_offs = w.encode_batch(texts[:5], num_threads=2, with_offsets=True)
    assert with_offs == [w.encode_with_offsets(t) for t in texts[:5]]
    assert w.encode_batch([]) == []
    with pytest.raises(TypeError):
        w.encode_batch("abc")


# -- keyword options -------------------------------------------------------------------------------
def test_keyword_options(vocab):
    w = WordLevel(vocab, "[UNK]", lowercase=True, split_on_cjk=True, split_on_punctuation=True)
    hf = hf_of(w)
    for text in ["Hello, WORLD! 中国人 don't", "ΣΑΣ.中-国", "abc中def"]:
        assert_same(w, hf, text)
    words = [t for t, _ in w.pre_tokenize("Hello,中国人 x")]
    assert words == ["hello", ",", "中", "国", "人", "x"]
    assert json.loads(w.to_str())["pre_tokenizer"]["type"] == "Sequence"


# -- files -------------------------------------------------------------------------------------------
def test_save_load_round_trip(tmp_path, vocab, samples):
    w = WordLevel(vocab, "[UNK]", NORMALIZERS["sequence"], PRE_TOKENIZERS["sequence"],
                  added_tokens=[{"id": 0, "content": "[UNK]", "special": True}])
    p = tmp_path / "tokenizer.json"
    w.save(p)
    hf = Tokenizer.from_file(str(p))
    w2 = WordLevel.from_file(p)
    assert w2.get_vocab() == w.get_vocab() == hf.get_vocab()
    for text in samples:
        assert_same(w2, hf, text)
    # a file written by HF loads too
    p2 = tmp_path / "hf.json"
    hf.save(str(p2))
    w3 = WordLevel.from_file(p2)
    for text in samples:
        assert_same(w3, hf, text)


def _hf_json(**over):
    base = json.loads(WordLevel({"[UNK]": 0, "a": 1}, "[UNK]").to_str())
    base.update(over)
    return json.dumps(base)


@pytest.mark.parametrize("over,message", [
    ({"model": {"type": "BPE", "vocab": {}, "merges": []}}, "unsupported model type 'BPE'"),
    ({"pre_tokenizer": {"type": "Metaspace", "replacement": "▁"}}, "unsupported pre-tokenizer type 'Metaspace'"),
    ({"pre_tokenizer": {"type": "ByteLevel"}}, "unsupported pre-tokenizer type 'ByteLevel'"),
    ({"pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"}, {"type": "UnicodeScripts"}]}},
     "pre_tokenizer.pretokenizers\\[1\\]: unsupported pre-tokenizer type 'UnicodeScripts'"),
    ({"normalizer": {"type": "Replace", "pattern": {"String": "a"}, "content": "b"}}, "unsupported normalizer type 'Replace'"),
    ({"normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "x"}]}}, "Prepend"),
    ({"post_processor": {"type": "TemplateProcessing"}}, "post_processor.*TemplateProcessing"),
    ({"decoder": {"type": "WordPiece"}}, "decoder.*WordPiece"),
    ({"truncation": {"max_length": 5}}, "truncation"),
    ({"added_tokens": [{"id": 0, "content": "[UNK]", "normalized": True}]}, "normalized=true"),
    ({"added_tokens": [{"id": 0, "content": "[UNK]", "lstrip": True}]}, "lstrip"),
])
def test_unsupported_components(tmp_path, over, message):
    p = tmp_path / "t.json"
    p.write_text(_hf_json(**over))
    with pytest.raises(UnsupportedComponentError, match=message):
        WordLevel.from_file(p)


@pytest.mark.parametrize("content,message", [
    ("{oops", "not valid JSON"),
    ("[]", "JSON object"),
    ('{"model": 3}', "model"),
    ('{"model": {"type": "WordLevel", "vocab": [1]}}', "vocab"),
    ('{"model": {"type": "WordLevel", "vocab": {"a": "x"}, "unk_token": "a"}}', "integer"),
    ('{"model": {"type": "WordLevel", "vocab": {"a": 1}, "unk_token": 5}}', "unk_token"),
    ('{"model": {"type": "WordLevel", "vocab": {}}, "pre_tokenizer": {"type": "Split", "pattern": {"Regex": "x"},'
     ' "behavior": "Sideways", "invert": false}}', "behavior"),
])
def test_malformed_files(tmp_path, content, message):
    p = tmp_path / "t.json"
    p.write_text(content)
    with pytest.raises(WordLevelError, match=message):
        WordLevel.from_file(p)


def test_hf_object_components(vocab):
    from tokenizers import normalizers as nm, pre_tokenizers as pt

    w = WordLevel(vocab, "[UNK]", nm.Sequence([nm.NFD(), nm.Lowercase()]),
                  pt.Sequence([pt.WhitespaceSplit(), pt.Digits(individual_digits=True)]))
    hf = hf_of(w)
    for text in ["Héllo 123 Wörld", "ÀB12c"]:
        assert_same(w, hf, text)


def test_decode_reads_ids_as_tokenizers():
    """int() had read "1" and 2.7 as ids and skipped -1 (a probe, session 28); tokenizers raises
    TypeError and OverflowError."""
    wl = WordLevel({"[UNK]": 0, "hello": 1, "world": 2}, "[UNK]")
    hf = Tokenizer.from_str(wl.to_str())
    for bad, error in ((["1"], TypeError), ([2.7], TypeError), ([-1], OverflowError), ([2**32], OverflowError)):
        with pytest.raises(error):
            wl.decode(bad)
        with pytest.raises(error):
            hf.decode(bad)
    assert wl.decode([1, np.int64(2)]) == "hello world"
    with pytest.raises(ValueError, match="num_threads"):
        wl.encode_batch(["hello"], num_threads=0)
    with pytest.raises(TypeError, match="num_threads"):
        wl.encode_batch(["hello"], num_threads="2")
