"""scantok.Encoding's word ids, sequence ids and mappings (token_to_*, word_to_*, char_to_*) and
its in-place methods (pad, truncate, set_sequence_id, Encoding.merge) against HuggingFace
`tokenizers` 0.23.3 (the pinned oracle): DeepSeek V3's file (the C path's lazy encodings, whose
word ids come from the C stages' pieces), and files built here whose encodings take the general
path (normalizers, added tokens, pairs, pre-tokenized words, each post-processor)."""
from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import scantok
from fuzz_setup import SHARED, mappings, outcome
from scantok.hf.encoding import Encoding
from scantok.hf.errors import HFError

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import Tokenizer as HFTokenizer, normalizers, pre_tokenizers, processors  # noqa: E402

DEEPSEEK = SHARED / "hf" / "deepseek_v3" / "tokenizer.json"

TEXTS = ["", " ", "a", "Hello world", "  two  spaces ", "The quick brown fox, 1234567 jumps.",
         "naïve café, 你好世界! 123 4567", "tab\there\nnew line", "😀 emoji 👩‍👩‍👧 run",
         "<|endoftext|> between <|endoftext|>", "[CLS] not special [SEP] x", "Ünïcödé ДОБРЫЙ день"]


def view(e) -> tuple:
    """What this file compares: the fields, the word and sequence ids, the mappings, and the
    same of each overflowing part (every encoding here has sequence ranges that do not
    overlap: token_to_sequence has one answer)."""
    return (e.ids, e.offsets, e.type_ids, e.special_tokens_mask, e.attention_mask, e.word_ids, e.sequence_ids,
            e.n_sequences, mappings(e, exact_sequence=True), [view(o) for o in e.overflowing])


@pytest.fixture(scope="module")
def deepseek():
    return scantok.Tokenizer.from_file(DEEPSEEK), HFTokenizer.from_file(str(DEEPSEEK))


@pytest.fixture(scope="module")
def corpus_texts():
    out = []
    for c in ("en", "code", "multi"):
        t = (SHARED / "corpus" / f"{c}.txt").read_text(encoding="utf-8")
        out += [t[i:i + 700] for i in range(100_000, 120_000, 2_000)]
    return out


def test_lazy_word_ids_match(deepseek, corpus_texts):
    ours, ref = deepseek
    for text in TEXTS + corpus_texts:
        for add in (True, False):
            a, b = ours.encode(text, add_special_tokens=add), ref.encode(text, add_special_tokens=add)
            assert a._lazy is not None or "<|" in text  # the C path's encodings, not records
            assert view(a) == view(b), text


def test_batch_word_ids_match(deepseek, corpus_texts):
    ours, ref = deepseek
    texts = TEXTS + corpus_texts
    for got, want in zip(ours.encode_batch(texts, num_threads=2), ref.encode_batch(texts)):
        assert view(got) == view(want)
    # encode_batch_fast tracks no offsets, hence no words, in both
    for got, want in zip(ours.encode_batch_fast(texts, num_threads=2), ref.encode_batch_fast(texts)):
        assert got.word_ids == want.word_ids == [None] * len(want)
        assert (got.sequence_ids, got.n_sequences) == (want.sequence_ids, want.n_sequences)


@pytest.mark.parametrize("direction", ["right", "left"])
def test_lazy_truncated_and_padded(deepseek, corpus_texts, direction):
    ours, ref = deepseek
    o, r = scantok.Tokenizer.from_str(ref.to_str()), HFTokenizer.from_str(ref.to_str())
    for tok in (o, r):
        tok.enable_truncation(40, stride=7, direction=direction)
        tok.enable_padding(direction=direction, pad_to_multiple_of=16)
    texts = corpus_texts[:8] + TEXTS
    for text in texts:
        assert view(o.encode(text)) == view(r.encode(text)), text
    for got, want in zip(o.encode_batch(texts), r.encode_batch(texts)):
        assert view(got) == view(want)


@settings(max_examples=150, deadline=None)
@given(st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=60))
def test_word_ids_property(deepseek, text):
    ours, ref = deepseek
    assert view(ours.encode(text)) == view(ref.encode(text))


def _general(post) -> HFTokenizer:
    """A WordPiece-free BERT-style file taking scantok's general path: a normalizer, the BERT
    pre-tokenizer, added tokens of several kinds, the given post-processor."""
    vocab = {c: i for i, c in enumerate(["[UNK]", "[CLS]", "[SEP]", "[PAD]"] + list("abcdefghijklmnopqrstuvwxyz"
                                                                                     "0123456789.,!? éü你好"))}
    merges = [("t", "h"), ("th", "e"), ("a", "n"), ("an", "d"), ("i", "n"), ("in", "g")]
    for a, b in merges:
        vocab[a + b] = len(vocab)
    tok = HFTokenizer(tokenizers.models.BPE(vocab, merges, unk_token="[UNK]"))
    tok.normalizer = normalizers.Sequence([normalizers.NFD(), normalizers.Lowercase()])
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.add_special_tokens(["[CLS]", "[SEP]"])
    tok.add_tokens([tokenizers.AddedToken("hello", single_word=True), tokenizers.AddedToken(" x", lstrip=True)])
    tok.post_processor = post
    return tok


POSTS = {
    "none": None,
    "bert": processors.BertProcessing(("[SEP]", 2), ("[CLS]", 1)),
    "roberta": processors.RobertaProcessing(("[SEP]", 2), ("[CLS]", 1), trim_offsets=True),
    "template": processors.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
                                              special_tokens=[("[CLS]", 1), ("[SEP]", 2)]),
    "template_twice": processors.TemplateProcessing(single="$A [SEP] $A:1", pair="$B [SEP] $A",
                                                    special_tokens=[("[SEP]", 2)]),
    "byte_level": processors.ByteLevel(trim_offsets=False),
    "sequence": processors.Sequence([processors.ByteLevel(trim_offsets=False),
                                     processors.TemplateProcessing(single="[CLS] $A", pair="$A [SEP] $B:1",
                                                                   special_tokens=[("[CLS]", 1), ("[SEP]", 2)])]),
}
PAIR_TEXTS = ["Hello the thing, and THE end!", "ünd  x hello xhello", "你好 is 12.5 [CLS] here", "", "  x  "]


@pytest.mark.parametrize("post", sorted(POSTS))
def test_general_path_pairs_and_words(post):
    hf = _general(POSTS[post])
    ours, ref = scantok.Tokenizer.from_str(hf.to_str()), HFTokenizer.from_str(hf.to_str())
    for a in PAIR_TEXTS:
        assert view(ours.encode(a)) == view(ref.encode(a)), a
        for b in PAIR_TEXTS[:3]:
            assert view(ours.encode(a, b)) == view(ref.encode(a, b)), (a, b)
        words = a.split()
        assert view(ours.encode(words, is_pretokenized=True)) == view(ref.encode(words, is_pretokenized=True))
    for tok in (ours, ref):
        tok.enable_truncation(13, stride=1, strategy="longest_first")
        tok.enable_padding(length=16, direction="left")
    for a in PAIR_TEXTS:
        assert outcome(lambda: view(ours.encode(a, PAIR_TEXTS[0]))) == \
            outcome(lambda: view(ref.encode(a, PAIR_TEXTS[0]))), a
    pairs = [(a, a) for a in PAIR_TEXTS]
    assert outcome(lambda: [view(e) for e in ours.encode_batch(pairs)]) == \
        outcome(lambda: [view(e) for e in ref.encode_batch(pairs)])


# -- in place --------------------------------------------------------------------------------------
def _steps(e, sid: int):
    """A run of in-place calls on an encoding, with a view after each."""
    out = [view(e)]
    e.set_sequence_id(sid)
    out.append(view(e))
    e.pad(len(e) + 3, direction="left", pad_id=7, pad_token="<p>", pad_type_id=2)
    out.append(view(e))
    e.truncate(5, stride=2, direction="left")
    out.append(view(e))
    e.pad(9)
    out.append(view(e))
    e.truncate(0)
    out.append(view(e))
    return out


@pytest.mark.parametrize("post", ["deepseek", "none", "template"])
def test_in_place_methods(deepseek, post):
    """set_sequence_id (of a sequence without ranges, or of the one it has: two overlapping
    ranges make tokenizers' token_to_sequence depend on its hash order), pad, truncate."""
    ours, ref = deepseek
    if post != "deepseek":
        hf = _general(POSTS[post])
        ours, ref = scantok.Tokenizer.from_str(hf.to_str()), HFTokenizer.from_str(hf.to_str())
    sid = 1 if post == "none" else 0
    for text in ("Hello the world and more words here", "ünd 你好 x"):
        assert _steps(ours.encode(text), sid) == _steps(ref.encode(text), sid)
        assert _steps(ours.encode_batch_fast([text])[0], sid) == _steps(ref.encode_batch_fast([text])[0], sid)
        # a pair has two ranges: a third overlaps them (token_to_sequence is tokenizers' hash order)
        a, b = ours.encode(text, text[:9]), ref.encode(text, text[:9])
        a.set_sequence_id(2)
        b.set_sequence_id(2)
        assert (a.sequence_ids, a.n_sequences, a.ids) == (b.sequence_ids, b.n_sequences, b.ids)


def test_merge(deepseek):
    ours, ref = deepseek
    texts = ["Hello world", "and 你好", "", "x y z"]
    for grow in (True, False):
        got = Encoding.merge([ours.encode(t) for t in texts], growing_offsets=grow)
        want = tokenizers.Encoding.merge([ref.encode(t) for t in texts], growing_offsets=grow)
        assert view(got) == view(want)
    assert view(Encoding.merge([ours.encode(t) for t in texts])) == \
        view(tokenizers.Encoding.merge([ref.encode(t) for t in texts]))
    for bad in (lambda m: m.merge([ours.encode("a"), "b"]), lambda m: m.merge(e for e in []),
                lambda m: m.merge([], 1), lambda m: m.merge([], None), lambda m: m([1, 2])):
        with pytest.raises(TypeError):
            bad(Encoding)
        with pytest.raises(TypeError):
            bad(tokenizers.Encoding)
    # Encoding() is empty, as tokenizers.Encoding()
    a, b = Encoding(), tokenizers.Encoding()
    assert view(a) == view(b) and view(Encoding.merge([a, ours.encode("x")])) == \
        view(tokenizers.Encoding.merge([b, ref.encode("x")]))
    a.pad(3, pad_token="<p>")
    b.pad(3, pad_token="<p>")
    assert view(a) == view(b)


def test_bad_arguments(deepseek):
    ours, ref = deepseek
    a, b = ours.encode("Hello world"), ref.encode("Hello world")
    for call in (lambda e: e.token_to_word(-1), lambda e: e.char_to_token(-3), lambda e: e.word_to_tokens(0, -1),
                 lambda e: e.set_sequence_id(-1), lambda e: e.pad(-2), lambda e: e.truncate(-1)):
        with pytest.raises(OverflowError):
            call(a)
        with pytest.raises(OverflowError):
            call(b)
    with pytest.raises(TypeError):
        a.token_to_word("1")
    with pytest.raises(ValueError, match="direction"):
        a.pad(10, direction="up")
    for call in (lambda e: e.pad(10, direction=1), lambda e: e.truncate(1, direction=1),
                 lambda e: e.pad(10, pad_token=3)):
        with pytest.raises(TypeError):
            call(a)
        with pytest.raises(TypeError):
            call(b)
    with pytest.raises(ValueError, match="direction"):
        a.truncate(1, direction="up")
    with pytest.raises(HFError, match="stride"):  # tokenizers panics here
        a.truncate(1, stride=1)
    with pytest.raises(BaseException):
        b.truncate(1, stride=1)
    assert view(a) == view(b)  # a refused call changed nothing


def test_words_is_deprecated(deepseek):
    ours, _ = deepseek
    e = ours.encode("Hello world")
    with pytest.warns(DeprecationWarning, match="^Deprecated in 0.9.4: Encoding.words is deprecated"):
        assert e.words == e.word_ids == [0, 1]


def test_pickle_round_trip(deepseek):
    ours, _ = deepseek
    tok = scantok.Tokenizer.from_file(DEEPSEEK)
    tok.enable_truncation(3, stride=1)
    for e in (ours.encode("Hello world, again"), ours.encode_batch_fast(["Hello world"])[0],
              ours.encode("a b", "c"), tok.encode("Hello world, and more")):
        assert view(pickle.loads(pickle.dumps(e))) == view(e)
