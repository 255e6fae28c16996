"""scantok.Tokenizer on WordLevel models and on BERT's normalizer.

A WordLevel tokenizer.json took the general path (a Python step per piece) whatever its
pre-tokenizer: 0.3-0.7x tokenizers' speed.  Now its pieces come from the C split stages and each
is looked up whole in C (``hfb_set_word_level``, ``hfb_encode_wl``); a piece outside the
vocabulary is the unknown token, or, without one, the general path's error (tokenizers fails
there).  ``BertNormalizer`` runs on numpy alignments (``aligned_chain``) before the one C call,
for WordLevel and BPE models alike.  Every field must equal tokenizers'."""
from __future__ import annotations

import json
import random

import pytest

pytest.importorskip("numpy")
pytest.importorskip("tokenizers")

from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

import scantok  # noqa: E402
from scantok.hf.errors import WordLevelError  # noqa: E402
from tokenizers import Regex, Tokenizer as HFTokenizer, models, normalizers, pre_tokenizers  # noqa: E402
from tokenizers import processors, trainers  # noqa: E402

from test_hf_char_bpe import check, check_text  # noqa: E402
from test_premerge import mixed_text  # noqa: E402

# BertNormalizer's cases: control characters it removes (\x00, \ufffd, \x7f, a format char),
# whitespace it makes spaces (tab, newline, NBSP, ideographic space), CJK it spaces out,
# accents it strips, "İ" that Lowercase lengthens
EDGE = ["", " ", "Hello, World!", "a\x00b\ufffdc\x7fd\u200de", "tab\there\nnew\r\nline", "\u00a0x\u3000y\u2028z",
        "中文字符和English混合", "Crème Brûlée à la mode", "İstanbul ΣΑΣ", "e\u0301 \u212b A\u030a",
        "don't STOP!!! ...", "x" * 700, "\t\n", "ﾃｽﾄ ｶﾀｶﾅ", "𠀀𪜀 漢字", "١٢٣ ½ Ⅻ"]


def texts(rng: random.Random, n: int) -> list[str]:
    out = list(EDGE)
    for _ in range(n):
        out.append(rng.choice(["  ", " ", "\n", "\t ", " 中 "]).join(
            mixed_text(rng, rng.randint(1, 30)) for _ in range(rng.randint(1, 25))))
    return out


PRE_TOKENIZERS = {
    "WhitespaceSplit": lambda: pre_tokenizers.WhitespaceSplit(),
    "Whitespace": lambda: pre_tokenizers.Whitespace(),
    "BertPreTokenizer": lambda: pre_tokenizers.BertPreTokenizer(),
    "Punctuation+Whitespace": lambda: pre_tokenizers.Sequence([pre_tokenizers.Whitespace(),
                                                              pre_tokenizers.Punctuation()]),
    "Digits+WhitespaceSplit": lambda: pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(),
                                                              pre_tokenizers.Digits(individual_digits=True)]),
    "Split": lambda: pre_tokenizers.Split(Regex(r"\p{L}+|\p{N}+| ?[^\s\p{L}\p{N}]+"), "isolated"),
    "none": lambda: None,
}


def wordlevel_file(rng: random.Random, pre_tokenizer, *, normalizer=None, unk: bool = True, vocab: int = 600) -> str:
    tok = HFTokenizer(models.WordLevel(unk_token="[UNK]"))
    if pre_tokenizer is not None:
        tok.pre_tokenizer = pre_tokenizer
    if normalizer is not None:
        tok.normalizer = normalizer
    trainer = trainers.WordLevelTrainer(vocab_size=vocab, special_tokens=["[UNK]", "[CLS]", "[SEP]"] if unk else [],
                                        show_progress=False)
    tok.train_from_iterator(texts(rng, 300), trainer)
    return tok.to_str()


@pytest.mark.parametrize("name", list(PRE_TOKENIZERS))
def test_wordlevel_under_each_pre_tokenizer(name):
    rng = random.Random(f"wordlevel {name}")
    js = wordlevel_file(rng, PRE_TOKENIZERS[name]())
    tok = scantok.Tokenizer.from_str(js)
    assert tok._whole_c and tok._words_c == tok._model._lib.hfb_encode_wl_words
    # WhitespaceSplit alone: the fused scan and lookup (hfb_set_word_wsplit; reading it sets it again)
    fused = name == "WhitespaceSplit"
    assert tok._model._lib.hfb_set_word_wsplit(tok._model._model, int(fused)) == int(fused)
    check(js, texts(rng, 40) + ["\x85a\u2029b\x1cc\u200bd", "\u180e x \ufeff"])


def test_without_an_unknown_token():
    """No "[UNK]" in the vocabulary: a text whose pieces are all words encodes; one with a piece
    outside the vocabulary raises tokenizers' error (the C path declines it, the general path
    raises), in encode and in the batch calls."""
    rng = random.Random("wordlevel no unk")
    js = wordlevel_file(rng, pre_tokenizers.WhitespaceSplit(), unk=False)
    hf, ours = HFTokenizer.from_str(js), scantok.Tokenizer.from_str(js)
    assert ours._whole_c
    vocab = ours.get_vocab()
    known = " ".join(list(vocab)[:50])
    assert ours.encode(known).ids == hf.encode(known).ids
    assert ours.encode_batch_fast([known], num_threads=1)[0].ids == hf.encode(known).ids
    unknown = known + " qqqqzzzzxxxx"
    with pytest.raises(Exception):
        hf.encode(unknown)
    for call in (lambda: ours.encode(unknown), lambda: ours.encode_batch([known, unknown], num_threads=1),
                 lambda: ours.encode_batch_fast([known, unknown], num_threads=1)):
        with pytest.raises(WordLevelError, match="Missing \\[UNK\\] token"):
            call()


def added(i: int, content: str, special: bool = True, **flags) -> dict:
    return {"id": i, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": special, **flags}


def test_added_tokens_and_template():
    """Added tokens of every kind in the text (the segments between them each one C call) and
    BERT's template."""
    rng = random.Random("wordlevel added")
    obj = json.loads(wordlevel_file(rng, pre_tokenizers.WhitespaceSplit()))
    obj["added_tokens"] = [added(0, "[UNK]"), added(1, "[CLS]"), added(2, "[SEP]", lstrip=True, rstrip=True),
                           added(600, "<x>", special=False, single_word=True, normalized=True),
                           added(601, "ab", special=False)]
    obj["post_processor"] = {"type": "BertProcessing", "sep": ["[SEP]", 2], "cls": ["[CLS]", 1]}
    js = json.dumps(obj)
    ts = texts(rng, 20)
    ts = [t[:len(t) // 2] + rng.choice([" [SEP] ", "[CLS]", " <x> ", "x<x>y", "ab", " [UNK]"]) + t[len(t) // 2:]
          for t in ts] + ["[SEP]", "[CLS] [SEP] <x> ab", "abab ab"]
    check(js, ts)


def test_vocabulary_records_and_ids():
    """Tokens holding "\\0" (the records take another control character as separator), tokens
    holding every ASCII control character (no separator: the general path), two strings with
    one id, sparse ids, an empty vocabulary."""
    base = {"a": 0, "b": 1, "[UNK]": 2, "a\0b": 3, "x\ny": 4}
    controls = {f"<{chr(c)}>": 10 + c for c in [*range(32), 127]}
    for vocab in (base, {**base, **controls}, {"[UNK]": 0}):
        js = json.dumps({"pre_tokenizer": {"type": "WhitespaceSplit"},
                         "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "[UNK]"}})
        assert (scantok.Tokenizer.from_str(js)._model._model is None) == ("<\x7f>" in vocab)
        check(js, ["a b c a\0b d", "a\0b x\ny", "", "\0 \n", "<\x01> <\x7f> <\x1f>"])
    # tokenizers' id_to_token (and decode) of a shared id is any of its strings (a HashMap's
    # order); its tokens are the pieces
    js = json.dumps({"pre_tokenizer": {"type": "WhitespaceSplit"},
                     "model": {"type": "WordLevel", "vocab": {"a": 0, "b": 1, "[UNK]": 2, "c": 1, "d": 2},
                               "unk_token": "[UNK]"}})
    assert scantok.Tokenizer.from_str(js)._model._model is None
    hf, ours = HFTokenizer.from_str(js), scantok.Tokenizer.from_str(js)
    for t in ["a b c d e", "c", "x d b"]:
        want, got = hf.encode(t), ours.encode(t)
        assert (got.ids, got.tokens, got.offsets, got.word_ids) == (want.ids, want.tokens, want.offsets, want.word_ids)
    # sparse ids: the general path (the C path's token table is as long as the largest id)
    js = json.dumps({"pre_tokenizer": {"type": "WhitespaceSplit"},
                     "model": {"type": "WordLevel", "vocab": {"[UNK]": 0, "a": 2**31 - 1, "b": 5}, "unk_token": "[UNK]"}})
    assert scantok.Tokenizer.from_str(js)._model._model is None
    check(js, ["a b c", "b a"])
    js = json.dumps({"pre_tokenizer": {"type": "WhitespaceSplit"},
                     "model": {"type": "WordLevel", "vocab": {}, "unk_token": "[UNK]"}})
    ours = scantok.Tokenizer.from_str(js)
    assert ours.encode("").ids == []
    with pytest.raises(WordLevelError):
        ours.encode("a")


@pytest.mark.parametrize("clean_text", [True, False])
@pytest.mark.parametrize("chinese", [True, False])
@pytest.mark.parametrize("strip_accents", [None, True, False])
@pytest.mark.parametrize("lowercase", [True, False])
def test_bert_normalizer_options(clean_text, chinese, strip_accents, lowercase):
    norm = normalizers.BertNormalizer(clean_text=clean_text, handle_chinese_chars=chinese,
                                      strip_accents=strip_accents, lowercase=lowercase)
    rng = random.Random(f"bert {clean_text} {chinese} {strip_accents} {lowercase}")
    js = wordlevel_file(rng, pre_tokenizers.BertPreTokenizer(), normalizer=norm)
    assert scantok.Tokenizer.from_str(js)._chain is not None
    check(js, texts(rng, 15))


def bert_bpe_file(rng: random.Random, normalizer) -> str:
    tok = HFTokenizer(models.BPE(unk_token="[UNK]"))
    tok.normalizer = normalizer
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.BpeTrainer(vocab_size=800, special_tokens=["[UNK]", "[CLS]", "[SEP]"], show_progress=False)
    tok.train_from_iterator(texts(rng, 300), trainer)
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))])
    return tok.to_str()


@pytest.mark.parametrize("chain", ["bert", "bert+nfc", "nfd+bert+replace"])
def test_bert_normalizer_in_chains_over_bpe(chain):
    steps = {"bert": [normalizers.BertNormalizer()],
             "bert+nfc": [normalizers.BertNormalizer(lowercase=False), normalizers.NFC()],
             "nfd+bert+replace": [normalizers.NFD(), normalizers.BertNormalizer(strip_accents=False),
                                  normalizers.Replace("a", "ä")]}[chain]
    rng = random.Random(f"bert bpe {chain}")
    js = bert_bpe_file(rng, normalizers.Sequence(steps))
    tok = scantok.Tokenizer.from_str(js)
    assert tok._chain is not None and tok._whole_c
    check(js, texts(rng, 30))


@pytest.mark.parametrize("lowercase", [True, False])
def test_char_bpe_tokenizer(lowercase):
    """tokenizers' CharBPETokenizer (GPT-1's layout): BertNormalizer, BertPreTokenizer, BPE over
    characters with end_of_word_suffix "</w>" and BPEDecoder."""
    from tokenizers import CharBPETokenizer

    rng = random.Random(f"char bpe {lowercase}")
    cb = CharBPETokenizer(unk_token="<unk>", lowercase=lowercase)
    cb.train_from_iterator(texts(rng, 300), vocab_size=900, special_tokens=["<unk>"], show_progress=False)
    js = cb._tokenizer.to_str()
    tok = scantok.Tokenizer.from_str(js)
    assert tok._whole_c and tok._words_c == tok._model._lib.hfb_encode_chars_words
    check(js, texts(rng, 30))


_WL = wordlevel_file(random.Random("wordlevel hypothesis"), pre_tokenizers.BertPreTokenizer(),
                     normalizer=normalizers.BertNormalizer())
_BPE = bert_bpe_file(random.Random("bert bpe hypothesis"), normalizers.BertNormalizer())
_PAIRS = [(scantok.Tokenizer.from_str(js), HFTokenizer.from_str(js)) for js in (_WL, _BPE)]
_ALPHABET = list("aB éü\u0301ΣİI\n\t  \u00a0xyz1'.,中文\x00\x7f\ufffd\u200d\u3000")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.sampled_from(_ALPHABET) | st.characters(), max_size=60))
def test_hypothesis_text(text):
    for ours, hf in _PAIRS:
        check_text(ours, hf, text)
