"""scantok.Tokenizer on BPE models over characters under split pre-tokenizers (tokenizers'
quicktour: ``BPE(unk_token="[UNK]")`` with ``Whitespace``; also WhitespaceSplit, Punctuation,
Digits, BertPreTokenizer and regex Splits of every behaviour, alone or in a Sequence; with
``continuing_subword_prefix`` and ``end_of_word_suffix`` too). These
take the C path whole (``hfb_encode_chars_words``: the Split stages, then each piece merged from
its characters' tokens, the unknown token and byte fallback, through the word cache); before,
they ran the general path piece by piece in Python at ~0.4x tokenizers' speed. Every field
must equal tokenizers', with merges in windows and without, and with tiny windows."""
from __future__ import annotations

import json
import random

import pytest

pytest.importorskip("numpy")
pytest.importorskip("tokenizers")

from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

import scantok  # noqa: E402
from tokenizers import Tokenizer as HFTokenizer, models, pre_tokenizers, processors, trainers  # noqa: E402

from test_hf_char_bpe import BYTE_TOKENS, check, check_text  # noqa: E402
from test_hf_long_pieces import stats, window_size  # noqa: E402
from test_premerge import mixed_text  # noqa: E402

PRE_TOKENIZERS = {
    "whitespace": {"type": "Whitespace"},
    "whitespace_split": {"type": "WhitespaceSplit"},
    "bert": {"type": "BertPreTokenizer"},
    "punct_digits": {"type": "Sequence", "pretokenizers": [
        {"type": "WhitespaceSplit"}, {"type": "Punctuation", "behavior": "Isolated"},
        {"type": "Digits", "individual_digits": True}]},
    "split_removed": {"type": "Split", "pattern": {"Regex": r"\s+"}, "behavior": "Removed", "invert": False},
    "split_next": {"type": "Split", "pattern": {"Regex": r" ?\p{L}+"}, "behavior": "MergedWithNext", "invert": False},
    "split_previous": {"type": "Split", "pattern": {"Regex": r"\p{P}"}, "behavior": "MergedWithPrevious",
                       "invert": False},
    "split_contiguous_invert": {"type": "Split", "pattern": {"Regex": r"\p{L}"}, "behavior": "Contiguous",
                                "invert": True},
    "split_keep_matches": {"type": "Split", "pattern": {"Regex": r"\w+|[^\w\s]+"}, "behavior": "Removed",
                           "invert": True},
    # literal splits: a regex of their characters (the same matches)
    "split_literal_space": {"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithPrevious",
                            "invert": False},
    "split_literal_word": {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"String": "ab"}, "behavior": "Isolated", "invert": True},
        {"type": "Split", "pattern": {"String": "é "}, "behavior": "Contiguous", "invert": False},
        {"type": "WhitespaceSplit"}]},
}


def train(rng: random.Random, pre_tokenizer: dict, *, byte_fallback: bool = False, unk: bool = True,
          fuse_unk: bool = False, limit_alphabet: int = 120, trained_with=None) -> str:
    """BPE over characters trained on mixed scripts with a small alphabet (many characters are
    not tokens), no normalizer, the given pre-tokenizer (trained under Whitespace, or under
    trained_with), and tokenizers' quicktour template."""
    tok = HFTokenizer(models.BPE(unk_token="[UNK]" if unk else None, byte_fallback=byte_fallback, fuse_unk=fuse_unk))
    tok.pre_tokenizer = trained_with or pre_tokenizers.Whitespace()
    special = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"] + (BYTE_TOKENS if byte_fallback else [])
    trainer = trainers.BpeTrainer(vocab_size=len(special) + 1500, special_tokens=special, show_progress=False,
                                  limit_alphabet=limit_alphabet)
    tok.train_from_iterator([mixed_text(rng, rng.randint(1, 600)) for _ in range(400)], trainer)
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))])
    obj = json.loads(tok.to_str())
    obj["pre_tokenizer"] = pre_tokenizer
    return json.dumps(obj)


def texts(rng: random.Random, n: int) -> list[str]:
    out = ["", " ", "a", "hello world", "  two  spaces ", "x1234y 5", "don't stop!", "[CLS] in text [SEP]",
           "é", "😀 ꙮ", "a\u0301b", "tab\there\nnew line"]
    for _ in range(n):
        out.append(" ".join(mixed_text(rng, rng.randint(1, 40)) for _ in range(rng.randint(1, 30))))
    out.append(" ".join(["word"] * 300 + ["x" * 400]))  # a piece long enough for windows
    return out


def takes_c_path(js: str) -> bool:
    tok = scantok.Tokenizer.from_str(js)
    return tok._whole_c and tok._words_c is tok._model._lib.hfb_encode_chars_words


@pytest.mark.parametrize("name", sorted(PRE_TOKENIZERS))
def test_pre_tokenizers_equal_tokenizers(name):
    rng = random.Random("char split " + name)
    js = train(rng, PRE_TOKENIZERS[name])
    assert takes_c_path(js)
    check(js, texts(rng, 30))


@pytest.mark.parametrize("byte_fallback,unk,fuse_unk", [(True, True, True), (True, False, False),
                                                        (False, True, True), (False, False, False)])
def test_unknown_and_fallback(byte_fallback, unk, fuse_unk):
    """Characters outside the alphabet: the unknown token (fused or not), their bytes' tokens,
    or dropped (no unknown token: the offsets of the tokens after them count on as tokenizers'
    do)."""
    rng = random.Random(f"char split unk {byte_fallback} {unk} {fuse_unk}")
    js = train(rng, PRE_TOKENIZERS["whitespace"], byte_fallback=byte_fallback, unk=unk, fuse_unk=fuse_unk,
               limit_alphabet=40)
    assert takes_c_path(js)
    extra = ["".join(rng.choices(["😀", "ꙮ", "∰", "a", " ", "é", "𝔘", "ab"], k=rng.randint(1, 200))) for _ in range(20)]
    check(js, texts(rng, 20) + extra)


def test_dropped_characters_around_added_tokens():
    """No unknown token and no byte fallback: a character that is not a token is dropped, so a
    piece may give no token and the word ids of the segments after an added token count the
    pieces, not the tokens (found by tests/test_hf_tokenizer.py's added-id cases)."""
    js = json.dumps({"pre_tokenizer": {"type": "Whitespace"},
                     "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "c": 3}, "merges": ["a b"]},
                     "added_tokens": [{"id": 4, "content": "<s>", "special": True, "single_word": False,
                                       "lstrip": False, "rstrip": False, "normalized": False}]})
    assert takes_c_path(js)
    check(js, ["<s> ab </s> c x y", "a<s>b", "x y z", "c <s> x ab <s>", "ab ? c", "?"])


def test_unknown_token_not_in_vocabulary_raises_as_tokenizers():
    """unk_token named but missing from the vocabulary: tokenizers fails on a character that is
    not a token; the C path declines the text (HFB_SLOW) and the general path raises."""
    js = json.dumps({"pre_tokenizer": {"type": "Whitespace"},
                     "model": {"type": "BPE", "unk_token": "[UNK]", "vocab": {"a": 0, "b": 1, "ab": 2},
                               "merges": ["a b"]}})
    assert takes_c_path(js)
    ours, hf = scantok.Tokenizer.from_str(js), HFTokenizer.from_str(js)
    assert ours.encode("ab ba").ids == hf.encode("ab ba").ids
    with pytest.raises(Exception):
        hf.encode("abc")
    with pytest.raises(Exception):
        ours.encode("abc")
    with pytest.raises(Exception):
        ours.encode_batch_fast(["ab", "abc"])


def test_tiny_windows_and_the_word_cache():
    """Long pieces merged in windows of a few characters (junctions in most pieces, back-offs),
    and the same texts again (every piece of up to 24 bytes from the word cache): the same as
    tokenizers."""
    rng = random.Random("char split windows")
    js = train(rng, PRE_TOKENIZERS["whitespace_split"], byte_fallback=True)
    ts = texts(rng, 10) + ["".join(rng.choices("abcdeé", k=rng.randint(250, 900))) for _ in range(5)]
    before = stats()[0]
    with window_size(3, 1):
        check(js, ts)
    assert stats()[0] > before
    ours, hf = scantok.Tokenizer.from_str(js), HFTokenizer.from_str(js)
    for _ in range(2):
        assert [e.ids for e in ours.encode_batch(ts, num_threads=1)] == [e.ids for e in hf.encode_batch(ts)]
        assert [e.offsets for e in ours.encode_batch(ts, num_threads=2)] == [e.offsets for e in hf.encode_batch(ts)]


def test_pairs_truncation_padding_added_tokens_and_nfc():
    """The rest of encode() around the C path: pairs, truncation with a stride, padding, added
    tokens in the text (special and not, lstrip/rstrip), and an NFC normalizer (a text it
    changes is normalized first)."""
    rng = random.Random("char split extras")
    obj = json.loads(train(rng, PRE_TOKENIZERS["bert"]))
    vocab = obj["model"]["vocab"]
    nid = max(vocab.values()) + 1
    obj["added_tokens"] = [
        {"id": vocab["[CLS]"], "content": "[CLS]", "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": True},
        {"id": nid, "content": "<tool>", "single_word": False, "lstrip": True, "rstrip": True,
         "normalized": False, "special": True},
        {"id": nid + 1, "content": "ab", "single_word": True, "lstrip": False, "rstrip": False,
         "normalized": True, "special": False}]
    obj["normalizer"] = {"type": "NFC"}
    js = json.dumps(obj)
    assert takes_c_path(js)
    ts = texts(rng, 10) + ["x <tool> y", "[CLS]ab ab cab", "e\u0301 <tool>e\u0301", "ab"]
    check(js, ts)
    ours, hf = scantok.Tokenizer.from_str(js), HFTokenizer.from_str(js)
    for tok in (ours, hf):
        tok.enable_truncation(12, stride=3)
        tok.enable_padding(length=20)
    for a, b in zip(ts, reversed(ts)):
        want, got = hf.encode(a, b), ours.encode(a, b)
        assert (got.ids, got.offsets, got.type_ids, got.attention_mask) == \
            (want.ids, want.offsets, want.type_ids, want.attention_mask)
        assert [o.ids for o in got.overflowing] == [o.ids for o in want.overflowing]


@pytest.mark.parametrize("scheme", ["always", "first", "never"])
@pytest.mark.parametrize("byte_fallback,unk", [(True, True), (False, True), (False, False)])
def test_metaspace_split(scheme, byte_fallback, unk):
    """Metaspace(split=True) alone (tokenizers' default Metaspace, as SentencePiece-like files
    trained with tokenizers have it), no normalizer: the text's spaces replaced by "▁" and the
    prefix put before it in Python (_with_prefix), the split before each "▁" a C stage; the
    prefix of scheme "first" only before the segment that starts the text (added tokens in it).
    Took the general path at ~0.3x tokenizers' speed."""
    rng = random.Random(f"metaspace split {scheme} {byte_fallback} {unk}")
    obj = json.loads(train(rng, {"type": "Metaspace", "replacement": "▁", "prepend_scheme": scheme, "split": True},
                           byte_fallback=byte_fallback, unk=unk, trained_with=pre_tokenizers.Metaspace()))
    vocab = obj["model"]["vocab"]
    vocab.setdefault("▁", max(vocab.values()) + 1)
    obj["added_tokens"] = [{"id": vocab["[CLS]"], "content": "[CLS]", "single_word": False, "lstrip": False,
                            "rstrip": False, "normalized": False, "special": True}]
    js = json.dumps(obj)
    tok = scantok.Tokenizer.from_str(js)
    assert tok._metaspace == "▁" and tok._whole_c
    ts = texts(rng, 15) + ["▁x", "a ▁ b", " ▁", "x  y", "[CLS] hi [CLS]", "hi[CLS]there", "[CLS]", " [CLS] a",
                           "▁▁a▁"]
    check(js, ts)


@pytest.mark.parametrize("scheme", ["always", "first", "never"])
@pytest.mark.parametrize("normalizer", [{"type": "NFKC"},
                                        {"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "Lowercase"}]},
                                        {"type": "Strip", "strip_left": True, "strip_right": True}])
def test_metaspace_split_under_a_normalizer(scheme, normalizer):
    """Metaspace(split=True) behind a normalizer (tokenizers' SentencePieceBPETokenizer: NFKC,
    scheme "always"): the normalized text takes the path above, its offsets mapped back. The
    scheme "first" keeps the general path (a Strip that deletes the text's first spaces makes
    its first piece not first)."""
    rng = random.Random(f"metaspace normalized {scheme} {normalizer}")
    obj = json.loads(train(rng, {"type": "Metaspace", "replacement": "▁", "prepend_scheme": scheme, "split": True},
                           trained_with=pre_tokenizers.Metaspace()))
    obj["normalizer"] = normalizer
    obj["added_tokens"] = [{"id": obj["model"]["vocab"]["[CLS]"], "content": "[CLS]", "single_word": False,
                            "lstrip": False, "rstrip": False, "normalized": False, "special": True}]
    js = json.dumps(obj)
    tok = scantok.Tokenizer.from_str(js)
    assert (tok._metaspace is not None) == (scheme != "first")
    ts = texts(rng, 15) + ["  lead", "ﬁne Ⅻ ｶﾞ", "x  y ", "[CLS] hi [CLS]", " [CLS] a", "\u3000a\u00a0b", "▁▁a▁"]
    check(js, ts)


def test_sentencepiece_bpe_tokenizer():
    """tokenizers' SentencePieceBPETokenizer (NFKC, Metaspace, BPE over characters with "<unk>"):
    the C path; took the general path at 0.2-0.4x tokenizers' speed."""
    from tokenizers import SentencePieceBPETokenizer

    rng = random.Random("sentencepiece bpe")
    sp = SentencePieceBPETokenizer(unk_token="<unk>")
    sp.train_from_iterator([mixed_text(rng, rng.randint(1, 600)) for _ in range(300)], vocab_size=1200,
                           special_tokens=["<unk>"], show_progress=False)
    js = sp._tokenizer.to_str()
    assert takes_c_path(js)
    check(js, texts(rng, 30))


def train_affixed(rng: random.Random, pre_tokenizer, prefix, suffix, *, byte_fallback: bool = False,
                  unk: bool = True, limit_alphabet: int = 80) -> str:
    """BPE over characters with continuing_subword_prefix and/or end_of_word_suffix (tokenizers'
    CharBPETokenizer has "</w>"), trained with them on mixed scripts."""
    affixes = {k: v for k, v in (("continuing_subword_prefix", prefix), ("end_of_word_suffix", suffix)) if v}
    tok = HFTokenizer(models.BPE(unk_token="[UNK]" if unk else None, byte_fallback=byte_fallback, **affixes))
    tok.pre_tokenizer = pre_tokenizer
    special = ["[UNK]"] + (BYTE_TOKENS if byte_fallback else [])
    trainer = trainers.BpeTrainer(vocab_size=len(special) + 1500, special_tokens=special, show_progress=False,
                                  limit_alphabet=limit_alphabet, **affixes)
    tok.train_from_iterator([mixed_text(rng, rng.randint(1, 600)) for _ in range(400)], trainer)
    return tok.to_str()


@pytest.mark.parametrize("prefix,suffix", [("##", None), (None, "</w>"), ("##", "</w>"), ("é", "w")])
@pytest.mark.parametrize("unk", [True, False])
def test_prefix_and_suffix(prefix, suffix, unk):
    """continuing_subword_prefix and end_of_word_suffix over characters: a piece's characters
    after its first take the prefix, its last the suffix; the word cache's hits give the
    tokens' offsets from their strings less the affixes' text ("é" and "w" are letters of the
    text too)."""
    rng = random.Random(f"char split affixes {prefix} {suffix} {unk}")
    js = train_affixed(rng, pre_tokenizers.Whitespace(), prefix, suffix, unk=unk)
    assert takes_c_path(js)
    extra = ["".join(rng.choices(["😀", "ꙮ", "a", " ", "é", "w", "##", "</w>", "ab"], k=rng.randint(1, 120)))
             for _ in range(15)]
    ts = texts(rng, 20) + extra
    check(js, ts)
    ours, hf = scantok.Tokenizer.from_str(js), HFTokenizer.from_str(js)
    want = [(e.ids, e.offsets) for e in hf.encode_batch(ts)]
    for _ in range(2):  # the second time from the word cache
        assert [(e.ids, e.offsets) for e in ours.encode_batch(ts, num_threads=1)] == want
    with window_size(3, 1):
        check(js, ts[-8:])


AFFIX_FALLBACK = json.dumps({"pre_tokenizer": {"type": "Whitespace"}, "model": {
    "type": "BPE", "vocab": {"[UNK]": 0, "h": 1, "##e": 2, "<0x23>": 3, "<0x65>": 4, "<0x6C>": 5, "<0x6F>": 6,
                             "w": 7, "##o": 8},
    "merges": [], "unk_token": "[UNK]", "byte_fallback": True, "continuing_subword_prefix": "##"}})


def test_byte_fallback_of_an_affixed_character_ids():
    """byte_fallback where a character's affixed form ("##l") is no token: tokenizers falls back
    to the bytes of the affixed string ("#", "#", "l"); the C path declines such a piece and
    the general path gives tokenizers' ids."""
    assert takes_c_path(AFFIX_FALLBACK)
    ours, hf = scantok.Tokenizer.from_str(AFFIX_FALLBACK), HFTokenizer.from_str(AFFIX_FALLBACK)
    for t in ["hel", "hello", "hel wol", "ab hel", "é hel", "hel héllo", "he ho"]:
        assert ours.encode(t).ids == hf.encode(t).ids
        assert ours.encode_batch_fast([t], num_threads=1)[0].ids == hf.encode(t).ids


@pytest.mark.xfail(strict=True, reason="known difference, not fixed: the affixed string's fallback bytes count as the "
                   "character's in tokenizers, so they and the tokens after them in the word run past its bytes, and "
                   "tokenizers gives a token past its piece the piece's own byte offsets, read as offsets in the whole "
                   "text; scantok gives the piece's end")
@pytest.mark.parametrize("text", ["hel wol", "ab hel", "hlo"])
def test_byte_fallback_of_an_affixed_character_offsets(text):
    ours, hf = scantok.Tokenizer.from_str(AFFIX_FALLBACK), HFTokenizer.from_str(AFFIX_FALLBACK)
    assert ours.encode(text).offsets == hf.encode(text).offsets


_JS = train(random.Random("char split hypothesis"), PRE_TOKENIZERS["punct_digits"], byte_fallback=True,
            limit_alphabet=60)
_OURS, _HF = scantok.Tokenizer.from_str(_JS), HFTokenizer.from_str(_JS)


_JS_AFFIXED = train_affixed(random.Random("char split affixed hypothesis"), pre_tokenizers.BertPreTokenizer(), "##",
                            "</w>", limit_alphabet=60)
_AFFIXED = (scantok.Tokenizer.from_str(_JS_AFFIXED), HFTokenizer.from_str(_JS_AFFIXED))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.sampled_from(list("ab cdé.,!1 2\t\n😀ꙮ∰xyz#</w>")) | st.characters(), max_size=80))
def test_hypothesis_text(text):
    check_text(_OURS, _HF, text)
    check_text(*_AFFIXED, text)
