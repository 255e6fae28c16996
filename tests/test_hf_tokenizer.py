"""scantok.Tokenizer: ids, tokens, offsets, masks and decode identical to HuggingFace
`tokenizers` 0.23.3 (the pinned oracle) on DeepSeek V3's tokenizer.json and on tokenizer.json
files built here with `tokenizers` for each component combination; corpus slices and
hypothesis text."""
from __future__ import annotations

import json
import random
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import scantok
from scantok.hf.errors import HFError, UnsupportedComponentError

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import Tokenizer as HFTokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers  # noqa: E402,E501
from tokenizers import AddedToken, Regex  # noqa: E402

from strategies import hard_text  # noqa: E402

SHARED = Path(__file__).resolve().parents[2] / "shared"
if not SHARED.exists():
    SHARED = Path("/work/shared")
DEEPSEEK = SHARED / "hf" / "deepseek_v3" / "tokenizer.json"
CORPORA = ("en", "code", "multi")

LLAMA3_PAT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
              r"|\s*[\r\n]+|\s+(?!\S)|\s+")
SPICE = ["<|endoftext|>", " <|endoftext|> ", "[MASK]", " [MASK]x", "x[MASK] ", "hello", "Hello", "HELLO",
         "  ", "\n\n", "\t", "é", "e\u0301", "😀", "👩‍👩‍👧", "你好", "ﬁ", "Ⅻ", "İ", "ß", "123456", "'s", "'LL",
         "\u00a0", "\u3000", "\r\n", "  x", "<s>", "</s>", "a_b", "<0x41>", "▁"]


@pytest.fixture(scope="module")
def corpora():
    return {c: (SHARED / "corpus" / f"{c}.txt").read_text(encoding="utf-8") for c in CORPORA}


def _docs(corpora, size=60_000, doc=2_000):
    out = []
    for c in CORPORA:
        t = corpora[c]
        mid = len(t) // 2
        out += [t[i:i + doc] for i in range(mid, mid + size, doc)]
    return out


def assert_same(ours, hf, text, *, add_special_tokens=True):
    a = ours.encode(text, add_special_tokens=add_special_tokens)
    b = hf.encode(text, add_special_tokens=add_special_tokens)
    assert a.ids == b.ids, text
    assert a.tokens == b.tokens, text
    assert a.offsets == b.offsets, text
    assert a.special_tokens_mask == b.special_tokens_mask, text
    assert a.type_ids == b.type_ids, text
    assert a.attention_mask == b.attention_mask
    assert a.word_ids == b.word_ids, text
    assert (a.sequence_ids, a.n_sequences) == (b.sequence_ids, b.n_sequences), text
    for skip in (True, False):
        assert ours.decode(a.ids, skip_special_tokens=skip) == hf.decode(b.ids, skip_special_tokens=skip), text


def fast_ids(tok, texts, *args, **kw) -> list[list[int]]:
    """The ids of scantok's encode_batch_fast (which returns Encodings, as tokenizers)."""
    return [e.ids for e in tok.encode_batch_fast(texts, *args, **kw)]


def assert_fast_same(ours, hf, texts, *, num_threads=1, adds=(True, False)):
    """encode_batch_fast's Encodings field by field: tokenizers' have offsets (0, 0) and an
    empty string for each token of the text (the post-processor's tokens keep theirs)."""
    for add in adds:
        got = ours.encode_batch_fast(texts, add_special_tokens=add, num_threads=num_threads)
        want = hf.encode_batch_fast(texts, add_special_tokens=add)
        assert len(got) == len(want)
        for text, a, b in zip(texts, got, want):
            assert a.ids == b.ids, text
            assert a.tokens == b.tokens, text
            assert a.offsets == b.offsets, text
            assert a.special_tokens_mask == b.special_tokens_mask, text
            assert a.type_ids == b.type_ids, text
            assert a.attention_mask == b.attention_mask, text
            assert a.word_ids == b.word_ids, text
            assert (a.sequence_ids, a.n_sequences) == (b.sequence_ids, b.n_sequences), text
            assert len(a) == len(b), text


def assert_every_path(ours, hf, texts):
    """encode_batch_fast's ids (with and without special tokens), its Encodings field by field,
    and encode of each text: the same as tokenizers'."""
    for add in (True, False):
        assert fast_ids(ours, texts, add_special_tokens=add) == \
            [e.ids for e in hf.encode_batch_fast(texts, add_special_tokens=add)]
    assert_fast_same(ours, hf, texts)
    for text in texts:
        assert_same(ours, hf, text)


def pair(hf: HFTokenizer):
    return scantok.Tokenizer.from_str(hf.to_str()), hf


# -- tokenizer.json files built with tokenizers ------------------------------------------------
@pytest.fixture(scope="module")
def train_text(corpora):
    return [corpora[c][i:i + 2000] for c in CORPORA for i in range(0, 120_000, 2000)]


def _bpe_trained(train_text, pre, *, normalizer=None, vocab_size=1500, specials=(), model_kw=None, **tk):
    tok = HFTokenizer(models.BPE(**(model_kw or {})))
    if normalizer is not None:
        tok.normalizer = normalizer
    tok.pre_tokenizer = pre
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(specials), show_progress=False, **tk)
    tok.train_from_iterator(train_text, trainer)
    return tok


@pytest.fixture(scope="module")
def gpt2_style(train_text):
    tok = _bpe_trained(train_text, pre_tokenizers.ByteLevel(add_prefix_space=False),
                       specials=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    return tok


@pytest.fixture(scope="module")
def prefix_space_style(gpt2_style):
    """GPT-2's layout with ByteLevel's add_prefix_space (as transformers saves a tokenizer made
    with add_prefix_space=True) and added tokens between which each segment gets its space."""
    obj = json.loads(gpt2_style.to_str())
    obj["pre_tokenizer"]["add_prefix_space"] = True
    hf = HFTokenizer.from_str(json.dumps(obj))
    hf.add_special_tokens([AddedToken("[MASK]", lstrip=True)])
    hf.add_tokens([AddedToken("hello", normalized=False), AddedToken(" x", rstrip=True)])
    return hf


@pytest.fixture(scope="module")
def roberta_style(gpt2_style):
    obj = json.loads(gpt2_style.to_str())
    obj["pre_tokenizer"]["add_prefix_space"] = True
    obj["post_processor"] = {"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 0],
                             "trim_offsets": True, "add_prefix_space": True}
    obj["added_tokens"] += [
        {"id": 0, "content": "<s>", "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
         "special": True},
        {"id": 2, "content": "</s>", "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
         "special": True},
        {"id": 1500, "content": "[MASK]", "single_word": False, "lstrip": True, "rstrip": False, "normalized": False,
         "special": True},
    ]
    return HFTokenizer.from_str(json.dumps(obj))


@pytest.fixture(scope="module")
def llama3_style(train_text):
    pre = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(LLAMA3_PAT), "isolated"),
                                   pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok = _bpe_trained(train_text, pre, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                       model_kw={"ignore_merges": True})
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens(["<|begin_of_text|>", "<|end_of_text|>"])
    tok.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=False),
        processors.TemplateProcessing(single="<|begin_of_text|> $A", special_tokens=[
            ("<|begin_of_text|>", tok.token_to_id("<|begin_of_text|>"))])])
    return tok


QWEN_PAT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
            r"|\s+(?!\S)|\s+")


@pytest.fixture(scope="module")
def qwen_style(train_text):
    """Qwen 2's layout: the NFC normalizer, its Split regex, ByteLevel without its regex, and
    added tokens, one of them normalized."""
    pre = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(QWEN_PAT), "isolated"),
                                   pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok = _bpe_trained(train_text, pre, normalizer=normalizers.NFC(), initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens(["<|endoftext|>", "<|im_start|>"])
    tok.add_tokens([AddedToken("Å", normalized=True)])
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    return tok


@pytest.fixture(scope="module")
def deepseek():
    return scantok.Tokenizer.from_file(DEEPSEEK), HFTokenizer.from_file(str(DEEPSEEK))


@pytest.fixture(scope="module")
def added_kinds(gpt2_style):
    """Added tokens of every kind: special or not, lstrip, rstrip, single_word, normalized."""
    hf = HFTokenizer.from_str(gpt2_style.to_str())
    hf.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
    hf.add_special_tokens([AddedToken("[MASK]", lstrip=True, rstrip=True), AddedToken("<s>", single_word=True)])
    hf.add_tokens([AddedToken("hello", normalized=True), AddedToken("Ⅻ", normalized=True),
                   AddedToken(" x", normalized=False, rstrip=True), AddedToken("a_b", single_word=True),
                   AddedToken("<0x41>", normalized=False, special=False)])
    return hf


@pytest.fixture(scope="module")
def metaspace_fallback(train_text):
    """Llama-2 style: Metaspace, char-level BPE with byte_fallback and unk, decoders chain."""
    tok = _bpe_trained(train_text, pre_tokenizers.Metaspace(), vocab_size=800, specials=["<unk>"],
                       model_kw={"byte_fallback": True, "unk_token": "<unk>", "fuse_unk": True})
    obj = json.loads(tok.to_str())
    vocab = obj["model"]["vocab"]
    for b in range(256):
        vocab.setdefault(f"<0x{b:02X}>", len(vocab))
    obj["decoder"] = {"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"},
        {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
    obj["normalizer"] = {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"},
                                                             {"type": "Replace", "pattern": {"String": " "},
                                                              "content": "▁"}]}
    obj["pre_tokenizer"] = None
    return HFTokenizer.from_str(json.dumps(obj))


@pytest.fixture(scope="module")
def wordpiece_like(train_text):
    """BPE with continuing_subword_prefix and end_of_word_suffix, Bert pieces, WordPiece decoder."""
    tok = _bpe_trained(train_text, pre_tokenizers.BertPreTokenizer(), normalizer=normalizers.BertNormalizer(),
                       vocab_size=1200, specials=["[UNK]", "[CLS]", "[SEP]"],
                       model_kw={"unk_token": "[UNK]", "continuing_subword_prefix": "##", "end_of_word_suffix": "</w>"},
                       continuing_subword_prefix="##", end_of_word_suffix="</w>")
    tok.decoder = decoders.WordPiece()
    tok.post_processor = processors.BertProcessing(("[SEP]", tok.token_to_id("[SEP]")),
                                                   ("[CLS]", tok.token_to_id("[CLS]")))
    return tok


@pytest.fixture(scope="module")
def wordlevel_tok(train_text):
    tok = HFTokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Whitespace(), pre_tokenizers.Digits()])
    tok.normalizer = normalizers.NFD()
    tok.train_from_iterator(train_text, trainers.WordLevelTrainer(vocab_size=3000, special_tokens=["[UNK]"],
                                                                  show_progress=False))
    tok.post_processor = processors.TemplateProcessing(single="[UNK]:1 $A:0 [UNK]:1",
                                                       special_tokens=[("[UNK]", 0)])
    return tok


BUILT = ["gpt2_style", "roberta_style", "prefix_space_style", "llama3_style", "qwen_style", "added_kinds",
         "metaspace_fallback", "wordpiece_like", "wordlevel_tok"]


@pytest.mark.parametrize("name", BUILT)
def test_built_on_corpora(name, request, corpora):
    ours, hf = pair(request.getfixturevalue(name))
    texts = _docs(corpora, size=16_000) + SPICE + ["".join(SPICE), ""]
    for text in texts:
        for add in (True, False):
            assert_same(ours, hf, text, add_special_tokens=add)
    for add in (True, False):
        assert fast_ids(ours, texts, add_special_tokens=add, num_threads=1) == [e.ids for e in hf.encode_batch(texts, add_special_tokens=add)]
    assert_fast_same(ours, hf, texts)
    assert_fast_same(ours, hf, texts * 40, num_threads=2)


@pytest.mark.parametrize("pattern", ["a+b|a", "a+b", r"x[^y]*y|\s", r"\w+\.com|\w"])
@pytest.mark.parametrize("behavior", ["isolated", "removed", "merged_with_next"])
def test_split_stages_over_long_runs(gpt2_style, pattern, behavior):
    """A Split stage whose pattern makes long runs (gaps, rewinds: the engine's chain_scan),
    in encode and in encode_batch_fast's C path, as HF's Split gives them."""
    hf = HFTokenizer.from_str(gpt2_style.to_str())
    hf.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(pattern), behavior),
                                                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    ours, hf = pair(hf)
    texts = ["a" * 3000, "a" * 3000 + "b c", "xz" * 1500 + " y", "abc" * 1000 + " x.com ",
             ("a" * 700 + " hello " + "xzz" * 200 + "\n") * 3, ""]
    for text in texts:
        assert_same(ours, hf, text)
    assert fast_ids(ours, texts, add_special_tokens=True, num_threads=1) == [e.ids for e in hf.encode_batch(texts)]


def test_prefix_space_batches_run_in_c(roberta_style):
    """ByteLevel(add_prefix_space=True) alone: encode_batch_fast takes the one-call C path."""
    ours, _ = pair(roberta_style)
    assert ours._stages is not None and ours._prefix_space and ours._lazy is None


@pytest.mark.parametrize("name", BUILT)
def test_built_on_hypothesis_text(name, request):
    ours, hf = pair(request.getfixturevalue(name))

    @settings(max_examples=80, deadline=None)
    @given(hard_text(surrogates=False))
    def check(text):
        assert_same(ours, hf, text)

    check()


SURROGATE_TEXTS = ["\udc80", "ab\udc80c", "\ud800 hello", "hello \udfff", "é\ud83d", "ﬁ\udc80Ⅻ",
                   "<s>\udc80</s>", " [MASK]x\ud800", "你好\udbff", "123\udc00456", "😀\ud800😀"]


def _assert_lone_surrogates_raise(ours, hf):
    """Where tokenizers raises TypeError (a str with a lone surrogate cannot become a Rust
    string), scantok raises TextEncodeError, a TypeError and a UnicodeEncodeError saying where
    the surrogate is, on every path: the C paths and the general one (normalizers, added tokens)."""
    from scantok.hf.errors import TextEncodeError

    long_clean = "hello world " * 20_000  # a batch past PARALLEL_MIN: two threads
    for text in SURROGATE_TEXTS:
        at = next(i for i, c in enumerate(text) if 0xD800 <= ord(c) <= 0xDFFF)
        calls = [(lambda t: t.encode(text), None),
                 (lambda t: t.encode(text, add_special_tokens=False), None),
                 (lambda t: t.encode_batch(["ok", text]), 1),
                 (lambda t: t.encode_batch_fast(["ok", text]), 1),
                 (lambda t: t.encode_batch_fast([long_clean, long_clean, text]), 2),
                 (lambda t: t.encode_batch([long_clean, text], num_threads=2), 1)]
        for call, index in calls:
            with pytest.raises(TypeError):
                call(hf)
            with pytest.raises(TextEncodeError) as info:
                call(ours)
            err = info.value
            assert isinstance(err, TypeError) and isinstance(err, UnicodeEncodeError)
            assert (err.object, err.start, err.end) == (text, at, at + 1)
            assert (f"inputs[{index}]" in str(err)) if index is not None else "inputs" not in str(err)
            import pickle

            again = pickle.loads(pickle.dumps(err))
            assert type(again) is TextEncodeError and str(again) == str(err)


@pytest.mark.parametrize("name", BUILT)
def test_lone_surrogates_raise_as_tokenizers(name, request):
    _assert_lone_surrogates_raise(*pair(request.getfixturevalue(name)))


def test_lone_surrogates_raise_as_tokenizers_deepseek(deepseek):
    _assert_lone_surrogates_raise(*deepseek)


@pytest.mark.parametrize("name", ["added_kinds", "wordpiece_like"])
def test_surrogate_hypothesis_both_raise_or_agree(name, request):
    """Text that may hold lone surrogates: both raise, or neither and the results agree."""
    ours, hf = pair(request.getfixturevalue(name))

    @settings(max_examples=60, deadline=None)
    @given(hard_text(surrogates=True))
    def check(text):
        try:
            want = hf.encode(text)
        except TypeError:
            with pytest.raises(TypeError):
                ours.encode(text)
            return
        got = ours.encode(text)
        assert (got.ids, got.offsets) == (want.ids, want.offsets)

    check()


BAD_IDS = [[1, -1], [-(2 ** 70)], [2 ** 32], [3, 2 ** 40], [1.0], ["a"], [None], [0.5, 1]]
GOOD_EDGE_IDS = [[2 ** 32 - 1], [True, 2], [10 ** 9, 3], []]


@pytest.mark.parametrize("name", ["gpt2_style", "wordpiece_like", "metaspace_fallback", "wordlevel_tok"])
def test_ids_checked_as_tokenizers(name, request):
    """decode / id_to_token take ids as tokenizers does (u32): a float or a str is a TypeError,
    a negative id or one of 2**32 or more an OverflowError, on the byte-level path and the
    decoder chain alike; ids with no token are skipped (None from id_to_token)."""
    import numpy as np

    ours, hf = pair(request.getfixturevalue(name))
    for ids in BAD_IDS + GOOD_EDGE_IDS + [np.array([1, 2, 3], dtype=np.int64), np.array([-1], dtype=np.int64)]:
        for skip in (True, False):
            try:
                want = hf.decode(ids, skip_special_tokens=skip)
            except (TypeError, OverflowError) as e:
                with pytest.raises(type(e)):
                    ours.decode(ids, skip_special_tokens=skip)
                with pytest.raises(type(e)):
                    ours.decode_batch([[0], ids], skip_special_tokens=skip)
                continue
            assert ours.decode(ids, skip_special_tokens=skip) == want
    for i in (-1, 2 ** 32, 2 ** 32 - 1, 0, 10 ** 9, 1.0, True):
        try:
            want = hf.id_to_token(i)
        except (TypeError, OverflowError) as e:
            with pytest.raises(type(e)):
                ours.id_to_token(i)
            continue
        assert ours.id_to_token(i) == want
    for token in (5, None, b"a"):
        with pytest.raises(TypeError):
            hf.token_to_id(token)
        with pytest.raises(TypeError):
            ours.token_to_id(token)


FIELDS = ("ids", "tokens", "offsets", "attention_mask", "special_tokens_mask", "type_ids")


@pytest.mark.parametrize("name", ["gpt2_style", "llama3_style", "added_kinds", "roberta_style"])
def test_encoding_fields_are_new_lists(name, request):
    """Each access to an Encoding's field returns a new list, as tokenizers': a caller that
    changes one (ids.append(eos)) does not change the Encoding; on the C paths (lazy) and the
    general one, from encode, encode_batch and encode_batch_fast."""
    ours, hf = pair(request.getfixturevalue(name))
    texts = ["Hello world [MASK] 123", "x", ""]
    encodings = [ours.encode(t) for t in texts] + ours.encode_batch(texts) + ours.encode_batch_fast(texts)
    for e in encodings:
        for field in FIELDS:
            first = getattr(e, field)
            assert getattr(e, field) is not first
            want = list(first)
            first.append(None)
            first.insert(0, None)
            assert getattr(e, field) == want
    h = hf.encode(texts[0])
    for field in FIELDS:  # the oracle does the same
        getattr(h, field).append(None)
        assert None not in getattr(h, field)


def test_flags_are_bools_as_tokenizers(deepseek, gpt2_style):
    """add_special_tokens and skip_special_tokens are bools (numpy's too), as tokenizers reads
    them: 2, None, "yes", 1.0 and even 1 are TypeErrors there (2 was an IndexError here)."""
    import numpy as np

    for ours, hf in (deepseek, pair(gpt2_style)):
        calls = [lambda t, v: t.encode("hi there", add_special_tokens=v).ids,
                 lambda t, v: [e.ids for e in t.encode_batch(["hi"], add_special_tokens=v)],
                 lambda t, v: [e.ids for e in t.encode_batch_fast(["hi"], add_special_tokens=v)],
                 lambda t, v: t.decode([0, 5, 6], skip_special_tokens=v),
                 lambda t, v: t.decode_batch([[0, 5]], skip_special_tokens=v)]
        for v in (True, False, np.bool_(True), np.bool_(False), 2, None, "yes", 1, 0, 1.0):
            for call in calls:
                try:
                    want = call(hf, v)
                except TypeError:
                    with pytest.raises(TypeError):
                        call(ours, v)
                    continue
                assert call(ours, v) == want


def test_runs_without_the_regex_module(request, tmp_path):
    """The `regex` module is a test dependency (the oracle), not scantok's: every HF component
    (normalizers on non-ASCII text, String splits, added tokens with single_word, WordLevel's
    added tokens) runs in a process where it cannot be imported, with tokenizers' results."""
    import subprocess
    import sys

    hf_string_split = HFTokenizer.from_str(request.getfixturevalue("gpt2_style").to_str())
    hf_string_split.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Split(" ", "isolated"),
                                                             pre_tokenizers.ByteLevel(use_regex=False)])
    hfs = [request.getfixturevalue(n) for n in BUILT] + [hf_string_split]
    texts = SPICE + ["".join(SPICE), "Ⅻ a_b x<s>y <s> é\u0301 Ǆ ﬁ"]
    want = []
    for k, hf in enumerate(hfs):
        (tmp_path / f"{k}.json").write_text(hf.to_str(), encoding="utf-8")
        want.append([[e.ids, [list(o) for o in e.offsets]] for e in hf.encode_batch(texts)])
    vocab = {"[UNK]": 0, "hello": 1, "x": 2, "é": 3}
    added = [{"id": 9, "content": "<s>", "special": True}, {"id": 10, "content": "hel", "special": False}]
    wl_want = scantok.WordLevel(vocab, "[UNK]", "nfkc", "whitespace", added_tokens=added).encode_batch(texts)
    child = f"""
import json, sys
sys.modules["regex"] = None  # import regex raises ImportError
import scantok
texts = json.loads({json.dumps(json.dumps(texts))})
out = [[[e.ids, [list(o) for o in e.offsets]] for e in scantok.Tokenizer.from_file(f"{tmp_path}/{{k}}.json").encode_batch(texts)]
       for k in range({len(hfs)})]
wl = scantok.WordLevel({vocab!r}, "[UNK]", "nfkc", "whitespace", added_tokens={added!r}).encode_batch(texts)
print(json.dumps([out, wl]))
"""
    run = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    got, wl = json.loads(run.stdout)
    assert got == want
    assert wl == [list(x) for x in wl_want]


def test_added_token_normalized_to_nothing_is_refused(gpt2_style):
    """A normalized added token whose content the normalizer empties (" " under Strip):
    tokenizers matches the empty string between every two characters (it cuts "--" into two
    tokens where the model merges them) and panics on some texts; scantok refuses the file with
    a clear error instead of giving other ids."""
    hf = HFTokenizer.from_str(gpt2_style.to_str())
    hf.normalizer = normalizers.Strip(left=True, right=False)
    hf.add_tokens([AddedToken(" ", normalized=True)])
    assert [len(hf.encode("--").ids), len(HFTokenizer.from_str(gpt2_style.to_str()).encode("--").ids)] == [2, 1]
    with pytest.raises(UnsupportedComponentError, match="normalizes to the empty string"):
        scantok.Tokenizer.from_str(hf.to_str())


def test_single_template_naming_b(gpt2_style):
    """A single template naming sequence B: tokenizers panics on every text; scantok raises
    HFError (was a bare IndexError), on encode and the batch paths."""
    hf = HFTokenizer.from_str(gpt2_style.to_str())
    hf.post_processor = processors.TemplateProcessing(single="<|endoftext|> $B", special_tokens=[
        ("<|endoftext|>", hf.token_to_id("<|endoftext|>"))])
    ours = scantok.Tokenizer.from_str(hf.to_str())
    with pytest.raises(BaseException):  # pyo3's PanicException
        hf.encode("ab")
    for call in (lambda: ours.encode("ab"), lambda: ours.encode_batch(["ab"]), lambda: ours.encode_batch_fast(["ab"])):
        with pytest.raises(HFError, match="sequence B"):
            call()


def test_without_numpy_a_clear_error():
    """numpy is optional for scantok (the tiktoken-compatible encoder, WordLevel run without it);
    scantok.Tokenizer needs it and says so."""
    import subprocess
    import sys

    child = """
import sys
sys.modules["numpy"] = None
import scantok
try:
    scantok.Tokenizer.from_str('{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}')
except ImportError as e:
    print(e)
"""
    run = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "scantok.Tokenizer needs numpy" in run.stdout


ADDED_ID_CASES = [  # the file's added tokens (id, content[, special]), over vocab a b ab c (or another)
    ([(4, "<s>")], None), ([(10, "<s>")], None), ([(10, "<s>"), (7, "</s>")], None), ([(0, "<s>")], None),
    ([(2, "a")], None), ([(9, "ab")], None), ([(4, "<s>"), (4, "</s>")], None), ([(5, "<s>"), (4, "<s>")], None),
    ([(5, ""), (4, "<s>")], None), ([(5, "<s>"), (9, "x", False)], {"a": 0, "b": 7, "ab": 2, "c": 3}),
    ([(1, "x", False), (0, "<s>"), (3, "y", False)], None),
    # a vocabulary token with an id past the vocabulary's size does not move the next new id
    # (found by a helper's campaign: x was 11, tokenizers gives 3)
    ([(10, "c", False), (11, "x", False), (12, "y", False)], {"a": 0, "b": 1, "ab": 2, "c": 10}),
    ([(11, "x", False), (10, "c"), (12, "y", False)], {"a": 0, "b": 1, "ab": 2, "c": 10}),
]


@pytest.mark.parametrize("added,vocab", ADDED_ID_CASES)
def test_added_token_ids_as_tokenizers_gives_them(added, vocab):
    """tokenizers does not keep the ids a file gives its added tokens: it adds them again in
    order (a token in the vocabulary keeps its id, a new one takes the vocabulary's size or one
    past the largest added id), ignores empty and repeated ones, and saves them so; scantok had
    trusted the file's ids (hand-edited files gave other ids)."""
    obj = {"model": {"type": "BPE", "vocab": vocab or {"a": 0, "b": 1, "ab": 2, "c": 3}, "merges": ["a b"]},
           "pre_tokenizer": {"type": "Whitespace"},
           "added_tokens": [{"id": a[0], "content": a[1], "special": a[2] if len(a) > 2 else True, "single_word": False,
                             "lstrip": False, "rstrip": False, "normalized": False} for a in added]}
    hf = HFTokenizer.from_str(json.dumps(obj))
    ours = scantok.Tokenizer.from_str(json.dumps(obj))
    for text in ("<s> ab </s> c x y", "a<s>b", ""):
        assert_same(ours, hf, text)
    assert [ours.id_to_token(i) for i in range(12)] == [hf.id_to_token(i) for i in range(12)]
    assert [ours.token_to_id(t) for t in ("<s>", "</s>", "a", "ab", "x", "y")] == \
        [hf.token_to_id(t) for t in ("<s>", "</s>", "a", "ab", "x", "y")]
    for w in (True, False):
        assert ours.get_vocab(w) == hf.get_vocab(w) and ours.get_vocab_size(w) == hf.get_vocab_size(w)
    assert json.loads(ours.to_str())["added_tokens"] == json.loads(hf.to_str())["added_tokens"]


def test_added_token_twice_with_other_options_is_refused():
    obj = {"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []},
           "added_tokens": [{"id": 1, "content": "<s>", "special": special, "single_word": False, "lstrip": False,
                             "rstrip": False, "normalized": False} for special in (True, False)]}
    HFTokenizer.from_str(json.dumps(obj))  # loads there
    with pytest.raises(UnsupportedComponentError, match="added twice"):
        scantok.Tokenizer.from_str(json.dumps(obj))


def test_added_tokens_normalizing_alike_are_refused():
    """Two normalized added tokens whose contents normalize to the same string: tokenizers
    matches either (which one changes from process to process), so scantok refuses the file."""
    vocab = {c: i for i, c in enumerate("abcdefghijklmnopqrstuvwxyz")}
    obj = {"model": {"type": "BPE", "vocab": vocab, "merges": []}, "normalizer": {"type": "Lowercase"},
           "added_tokens": [{"id": 26 + k, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
                             "normalized": True, "special": False} for k, c in enumerate(["hello", "HELLO"])]}
    HFTokenizer.from_str(json.dumps(obj))  # loads there
    with pytest.raises(UnsupportedComponentError, match="both normalize to 'hello'"):
        scantok.Tokenizer.from_str(json.dumps(obj))


def test_deepseek_corpora(deepseek, corpora):
    ours, hf = deepseek
    docs = _docs(corpora, size=40_000, doc=4_000)
    for text in docs + SPICE + ["".join(SPICE)]:
        assert_same(ours, hf, text)
    assert fast_ids(ours, docs, num_threads=1) == [e.ids for e in hf.encode_batch(docs)]
    assert fast_ids(ours, docs, num_threads=2) == [e.ids for e in hf.encode_batch(docs)]
    assert_fast_same(ours, hf, docs + SPICE + ["".join(SPICE), ""])
    batch = ours.encode_batch(docs[:6], num_threads=2)
    assert [e.offsets for e in batch] == [e.offsets for e in hf.encode_batch(docs[:6])]
    assert ours.decode_batch([e.ids for e in batch]) == hf.decode_batch([e.ids for e in batch])


def test_deepseek_hypothesis(deepseek):
    ours, hf = deepseek

    @settings(max_examples=150, deadline=None)
    @given(hard_text(surrogates=False, max_fragments=60))
    def check(text):
        assert_same(ours, hf, text)
        assert fast_ids(ours, [text, text + "x"], num_threads=1) == [
            e.ids for e in hf.encode_batch([text, text + "x"])]

    check()


def test_offsets_at_every_byte_alignment(deepseek):
    """Code point offsets are counted eight bytes at a time (hf_bpe.c char_index): characters of
    2, 3 and 4 bytes at every position of an 8-byte word, rare ones that byte-level BPE splits
    into tokens ending inside them, and texts ending in every position of one, give HF's
    offsets."""
    ours, hf = deepseek
    for ch in ("é", "€", "你", "😀", "ё", "𠜎", "ꙮ", "𝄞", "ᄀ"):
        for pad in range(17):
            for tail in range(9):
                text = "a" * pad + ch + " x" + ch * 3 + "1" * tail + ch
                assert_same(ours, hf, text)
                assert_same(ours, hf, text[:-1])


def test_batches_reuse_the_process_pool(deepseek, monkeypatch):
    """The batch methods run on scantok's process-wide pool (scantok.threadpool), not on
    threads started per call: a thread keeps its piece caches for the next call."""
    from scantok import threadpool

    ours, hf = deepseek
    monkeypatch.setattr(scantok.hf.tokenizer, "usable_cpus", lambda: 2)
    monkeypatch.setattr(scantok.hf.tokenizer, "PARALLEL_MIN", 0)  # these small batches too
    docs = [f"doc {i}: héllo wörld, 你好 {i * 37}" for i in range(40)]
    want = [e.ids for e in hf.encode_batch(docs)]
    assert fast_ids(ours, docs, num_threads=2) == want
    assert [e.ids for e in ours.encode_batch(docs, num_threads=2)] == want
    started = {t.ident for t in threading.enumerate()}
    assert any(t.name.startswith("scantok-batch2") for t in threading.enumerate())
    for _ in range(3):
        assert fast_ids(ours, docs, num_threads=2) == want
        assert [e.ids for e in ours.encode_batch(docs, num_threads=2)] == want
    assert {t.ident for t in threading.enumerate()} == started
    assert threadpool.thread_pool(2) is threadpool.thread_pool(2)
    assert ours._threads(64) == 2 and ours._threads(None) == 2 and ours._threads(1) == 1


def test_freed_tokenizers_caches_are_taken_cleared(gpt2_style, llama3_style):
    """The piece cache of a freed tokenizer (8 MiB a thread) is kept and taken by the next one
    (memory already mapped), cleared: tokenizers with other merges, made and freed in turn on
    one thread, give their own ids, and after the first no cache is allocated."""
    import gc

    from scantok._native import lib

    files = [gpt2_style.to_str(), llama3_style.to_str()] * 3
    texts = ["héllo wörld, 你好 1234 " * 20 + " ".join(_letters(i, 9) for i in range(300))]
    errors: list[BaseException] = []
    allocs: list[int] = []

    def work():
        try:
            for s in files:
                ours, hf = scantok.Tokenizer.from_str(s), HFTokenizer.from_str(s)
                for _ in range(2):  # cold, then from the cache
                    assert fast_ids(ours, texts, num_threads=1) == [e.ids for e in hf.encode_batch(texts)]
                allocs.append(lib.hfb_cache_allocs())
                del ours
                gc.collect()
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert not errors, errors
    assert allocs[-1] == allocs[0], allocs


def test_add_tokens_while_another_thread_encodes(gpt2_style):
    """add_tokens replaces the whole state while encode calls on other threads may be running
    C code on the old one's handles with the GIL released: the old state is kept until the last
    of them returns (before, the stages were freed under them: a use-after-free under ASan,
    found by a helper's review), then let go."""
    ours = scantok.Tokenizer.from_str(gpt2_style.to_str())
    text = (SHARED / "corpus" / "en.txt").read_text(encoding="utf-8")[:300_000]
    want, want_fast = ours.encode(text).ids, fast_ids(ours, [text], num_threads=1)
    errors: list[BaseException] = []
    stop = threading.Event()

    def encode():
        try:
            while not stop.is_set():
                assert ours.encode(text).ids == want
                assert fast_ids(ours, [text], num_threads=1) == want_fast
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    t = threading.Thread(target=encode)
    t.start()
    try:
        for k in range(12):
            ours.add_tokens([f"zzq{k}zzq"])  # not in the text: the same ids
    finally:
        stop.set()
        t.join()
    assert not errors, errors
    assert ours._in_flight.calls == 0 and ours._in_flight.retired == []
    assert ours.encode("a zzq3zzq b").ids == HFTokenizer.from_str(ours.to_str()).encode("a zzq3zzq b").ids


def test_word_ids_after_add_tokens(deepseek):
    """A lazy encoding's word ids come from the C path when asked for: its handles stay alive
    with it after add_tokens has replaced the tokenizer's (a use-after-free under ASan before)."""
    import gc

    _, hf = deepseek
    ours = scantok.Tokenizer.from_file(DEEPSEEK)
    texts = [f"héllo wörld 123 {i} " * 5 + "你好" for i in range(30)]
    encs = [ours.encode(t) for t in texts]
    ours.add_tokens(["zzqzzq"])
    gc.collect()
    others = [scantok.Tokenizer.from_file(DEEPSEEK) for _ in range(2)]  # memory to reuse
    assert [e.word_ids for e in encs] == [hf.encode(t).word_ids for t in texts]
    del others


def test_byte_level_decode_kept_per_id(deepseek, gpt2_style):
    """With a ByteLevel decoder alone, decode joins each id's bytes, made once per id and kept:
    HF's text for special and unknown ids (skipped or not), numpy ints, a character split
    between tokens (replaced), added tokens outside the byte alphabet, and again from the
    kept bytes."""
    import numpy as np

    for ours, hf in (deepseek, pair(gpt2_style)):
        assert ours._id_bytes is not None
        ids = hf.encode("héllo 😀 wörld 你好 <|endoftext|> x", add_special_tokens=True).ids
        specials = sorted({t.id for t in ours._added.tokens})
        cases = [ids, ids[:3], [], specials + ids + specials, ids + [10**9, -5 % 10**9], ids[1:2],
                 [i for i in ids if i not in specials][::-1]]
        split = hf.encode("😀", add_special_tokens=False).ids
        cases.append(split[:1] + split)
        for case in cases:
            for skip in (True, False):
                want = hf.decode(case, skip_special_tokens=skip)
                assert ours.decode(case, skip_special_tokens=skip) == want, case
                assert ours.decode(np.array(case, dtype=np.int64), skip_special_tokens=skip) == want
                assert ours.decode(case, skip_special_tokens=skip) == want  # from the kept bytes
        assert 10**9 not in ours._id_bytes  # an id without a token is not kept


def test_small_batches_stay_on_the_calling_thread(deepseek, monkeypatch):
    """A batch of fewer than threadpool.PARALLEL_MIN characters is not handed to a pool (the
    hand-off cost more than the work); a larger one is. Same ids either way."""
    ours, hf = deepseek
    monkeypatch.setattr(scantok.hf.tokenizer, "usable_cpus", lambda: 2)
    used = []
    real = scantok.hf.tokenizer.map_all
    monkeypatch.setattr(scantok.hf.tokenizer, "map_all", lambda n, fn, items: used.append(n) or real(n, fn, items))
    docs = [f"doc {i}: héllo wörld {i}" for i in range(50)]
    want = [e.ids for e in hf.encode_batch(docs)]
    assert fast_ids(ours, docs, num_threads=2) == want
    assert [e.ids for e in ours.encode_batch(docs, num_threads=2)] == want
    assert used == []
    big = docs * (scantok.threadpool.PARALLEL_MIN // sum(map(len, docs)) + 1)
    assert fast_ids(ours, big, num_threads=2) == want * (len(big) // len(docs))
    assert used == [2]


def test_encode_screens_for_added_tokens_in_its_c_call(deepseek):
    """encode() of a text read as it is asks the C call to screen it for the first bytes of an
    added token (hf_encode_offsets' screen): a text without them is encoded in that call; one
    with them, an added token or only its first two bytes, gets the exact test and its path.
    Every field as tokenizers'."""
    ours, hf = deepseek
    assert ours._screen_whole is not None
    lt = "<\uff5c"  # "<｜": the first two characters of DeepSeek V3's special tokens
    texts = ["plain text, 你好 123", "x <Esc> and <CR>: a < b", f"half {lt} token", f"{lt}end▁of▁sentence",
             "a<\uff5cend\u2581of\u2581sentence\uff5c>b", "<", lt, "", " <｜" * 50 + "<think>",
             "héllo <\uff5cbegin\u2581of\u2581sentence\uff5c> wörld <|EOT|>"]
    for text in texts:
        for add in (True, False):
            got, want = ours.encode(text, add_special_tokens=add), hf.encode(text, add_special_tokens=add)
            for f in FIELDS:
                assert getattr(got, f) == getattr(want, f), (text, add, f)


def test_deepseek_fast_path_is_taken(deepseek):
    ours, _ = deepseek
    if not hasattr(scantok, "compile"):
        pytest.skip("no scantok.compile: the Split regexes run on the regex module")
    assert ours._stages is not None and len(ours._stage_spec[0]) == 3
    # \p{N}{1,3} and the CJK split start no match at most characters: they jump over those
    assert ours._model._lib.hfb_stages_skipping(ours._stages) == 2


def _pieces(tok, text: str, skip: int) -> list[tuple[int, int]]:
    ffi, lib = tok._model._ffi, tok._model._lib
    dfas, codes = tok._stage_spec
    st = ffi.gc(lib.hfb_stages_new(ffi.new("const scantok_dfa *[]", dfas), ffi.new("int32_t[]", codes),
                                   len(dfas), skip), lib.hfb_stages_free)
    data = text.encode("utf-8")
    a, b = ffi.new("uint32_t[]", len(data) + 1), ffi.new("uint32_t[]", len(data) + 1)
    k = lib.hfb_pretokenize(st, data, len(data), a, b)
    return list(zip(a[0:k], b[0:k]))


SKIP_EDGE = ["1" * 1000, "1" * 5 + "a" + "2" * 40 + "x", "你" * 3000 + "a", "a" * 2000 + "7", "٣" * 50 + " 1",
             "é1è2ê" * 100, "x" + "ぁ" * 17 + "1" * 33, "\xff1\x80", ""]


def test_skipping_stages_find_the_same_pieces(deepseek, corpora):
    """Stages that jump over characters starting no match give the pieces of a full scan."""
    ours, _ = deepseek
    texts = _docs(corpora, size=200_000, doc=20_000) + SPICE + SKIP_EDGE
    for text in texts:
        assert _pieces(ours, text, 1) == _pieces(ours, text, 0), text[:80]

    @settings(max_examples=300, deadline=None)
    @given(hard_text(surrogates=False, max_fragments=60))
    def check(text):
        assert _pieces(ours, text, 1) == _pieces(ours, text, 0)

    check()


def _byte_pieces(tok, data: bytes, skip: int) -> list[tuple[int, int]]:
    ffi, lib = tok._model._ffi, tok._model._lib
    dfas, codes = tok._stage_spec
    st = ffi.gc(lib.hfb_stages_new(ffi.new("const scantok_dfa *[]", dfas), ffi.new("int32_t[]", codes),
                                   len(dfas), skip), lib.hfb_stages_free)
    a, b = ffi.new("uint32_t[]", len(data) + 1), ffi.new("uint32_t[]", len(data) + 1)
    k = lib.hfb_pretokenize(st, data, len(data), a, b)
    return list(zip(a[0:k], b[0:k]))


def test_skipping_stages_over_other_scripts(deepseek):
    """The SIMD skip jumps over non-ASCII characters by their lead byte: a live character
    behind a lead byte whose other characters are dead (digits of other scripts, fullwidth
    digits, CJK next to kana), runs longer than the 32-byte window, and ill-formed bytes
    (lone continuations, overlong and truncated leads, surrogates) give the pieces of a full
    scan."""
    ours, _ = deepseek
    live = ["\u0663", "\u0967", "\u0e51", "\uff11", "\u3007", "\u4e00", "\u3041", "\u30a2", "\U0001d7ce", "1"]
    dead = ["\u0436", "\u00e9", "\u05d0", "\u2014", "\uac00", "\u3000", "\uffe5", "\U0001f600", " ", "a"]
    texts = []
    for lv in live:
        for dd in dead:
            for n in (1, 17, 40):
                texts.append(dd * n + lv + dd * n)
                texts.append(lv * 3 + dd * n + lv)
    for text in texts:
        assert _pieces(ours, text, 1) == _pieces(ours, text, 0), text[:80]
    bad = [b"\x80", b"\xbf", b"\xc0\xaf", b"\xc1", b"\xc2", b"\xe0\x80\x80", b"\xe4\xb8", b"\xed\xa0\x80",
           b"\xf0\x9f", b"\xf5", b"\xff", b"\xe3\x80"]
    for x in bad:
        for dd in ("\u0436", "\u4e2d", "a"):
            for n in (5, 40):
                for lv in ("", "1", "\u3007"):
                    data = (dd * n).encode() + x + lv.encode() + (dd * n).encode() + x
                    assert _byte_pieces(ours, data, 1) == _byte_pieces(ours, data, 0), data[:80]

    @settings(max_examples=300, deadline=None)
    @given(st.lists(st.sampled_from([c.encode() for c in live + dead] + bad), max_size=120))
    def check(parts):
        data = b"".join(parts)
        assert _byte_pieces(ours, data, 1) == _byte_pieces(ours, data, 0)

    check()


def test_long_pieces_use_heap_merge(gpt2_style, llama3_style):
    """Pieces longer than the linear merge's limit (64 symbols) take the heap path."""
    for tok in (gpt2_style, llama3_style):
        ours, hf = pair(tok)
        for text in ["a" * 1000, "the" * 300, "ab" * 700 + " " * 500 + "x", "é" * 333, "1" * 999,
                     "=" * 130 + "\n" + "-" * 65]:
            assert_same(ours, hf, text)


@pytest.mark.parametrize("contents", [
    ["x"],                                  # a one-byte token: any x flags the text
    ["<|eot|>", "</w>"],                    # one first byte: the memchr screen
    ["<a>", "[b]", "{c}", "(d)", "é!", "你好"],  # more than four first bytes: the table screen
])
def test_batch_screen_of_added_tokens(gpt2_style, contents):
    """encode_batch_fast screens texts for the first two bytes of added tokens in C: texts
    holding a token, only its first bytes, or its first character elsewhere all equal HF, in
    batches that mix them with plain texts."""
    hf = HFTokenizer.from_str(gpt2_style.to_str())
    hf.add_tokens([AddedToken(c, normalized=False) for c in contents])
    ours, hf = pair(hf)
    parts = contents + [c[:2] for c in contents] + [c[:1] for c in contents] + [c[1:] for c in contents]
    parts += [" the", " word", "\n", "  ", "1", "é"]

    @settings(max_examples=80, deadline=None)
    @given(st.lists(st.lists(st.sampled_from(parts), max_size=10).map("".join), min_size=1, max_size=8))
    def check(texts):
        for add in (True, False):
            want = [e.ids for e in hf.encode_batch(texts, add_special_tokens=add)]
            assert fast_ids(ours, texts, add_special_tokens=add, num_threads=1) == want
            assert [e.ids for e in ours.encode_batch(texts, add_special_tokens=add, num_threads=1)] == want

    check()


def test_scratch_kept_across_calls(deepseek):
    """The per-thread work arrays kept between calls: a text longer than the kept size, then
    short ones, with and without offsets, in both orders."""
    ours, hf = deepseek
    big = "word 12 你好 " * 30_000  # > 256 KiB of UTF-8
    for texts in ([big, "short", "x" * 5000], ["short", big, "", "y"]):
        assert fast_ids(ours, texts, num_threads=1) == [e.ids for e in hf.encode_batch(texts)]
        for t in texts:
            a, b = ours.encode(t), hf.encode(t)
            assert a.ids == b.ids and a.offsets == b.offsets


def test_linear_merge_sizes(gpt2_style, llama3_style):
    """Pieces of 2..70 symbols around the linear merge's limit (64) and its 8-wide scans, with
    repeats (ties broken leftmost)."""
    for tok in (gpt2_style, llama3_style):
        ours, hf = pair(tok)
        for n in list(range(2, 20)) + [31, 32, 33, 55, 56, 57, 63, 64, 65, 70]:
            for unit in ("ab", "the", "e", "xé", "zq"):
                word = " " + (unit * n)[:n]
                assert_same(ours, hf, word)
                assert fast_ids(ours, [word, word * 2], num_threads=1) == [
                    e.ids for e in hf.encode_batch([word, word * 2])]


def test_ids_past_the_small_pair_table(gpt2_style, corpora):
    """Ids of 2^20 and more (the small table of frequent merges packs ids in 20 bits: such a
    model merges through the large table alone), and ids just below that limit: the same
    encodings as tokenizers."""
    for shift in (1 << 20, (1 << 20) - 1 - 40_000):
        obj = json.loads(gpt2_style.to_str())
        obj["model"]["vocab"] = {t: i + shift for t, i in obj["model"]["vocab"].items()}
        for a in obj["added_tokens"]:
            a["id"] += shift
        hf = HFTokenizer.from_str(json.dumps(obj))
        ours = scantok.Tokenizer.from_str(json.dumps(obj))
        assert ours._stages is not None  # the C path
        texts = [t[:3000] for t in (corpora["en"][:3000], corpora["multi"][200_000:203_000])]
        for t in texts + SPICE:
            assert_same(ours, hf, t)
        assert fast_ids(ours, texts, num_threads=1) == [e.ids for e in hf.encode_batch(texts)]


def _letters(i: int, width: int) -> str:
    return "".join(chr(ord("a") + (i // 26 ** k) % 26) for k in range(width))


LONG_EDGE = [" " * n for n in (23, 24, 25, 26, 63, 64, 65, 511, 512, 513, 600)] + [
    "-" * 25, "=" * 512 + "\n", "你好世界" * 7, "你好世界" * 43, "ぁ" * 171, "ぁ" * 172,
    " Konfigurationsparametern", " Donaudampfschifffahrtsgesellschaft" * 3]


def test_long_piece_store_hits_equal_misses(deepseek):
    """Pieces of 25..512 bytes come from the long-piece store once seen: the same ids as a first
    (merged) sight, as HF, on repeats within a text, across a batch, and after many distinct long
    pieces have replaced each other in the store's slots."""
    ours, hf = deepseek
    fresh = scantok.Tokenizer.from_file(DEEPSEEK)
    distinct = [" " + _letters(i, 30) for i in range(6000)]  # more than the store's slots
    docs = [" ".join(LONG_EDGE * 3)] + ["".join(distinct[i:i + 100]) for i in range(0, 6000, 100)]
    docs += docs[:20]
    want = [e.ids for e in hf.encode_batch(docs)]
    assert fast_ids(fresh, docs, num_threads=1) == want
    assert fast_ids(fresh, docs[::-1], num_threads=1) == want[::-1]
    for text in LONG_EDGE + docs[:3]:
        assert_same(fresh, hf, text)
        assert_same(ours, hf, text)

    @settings(max_examples=60, deadline=None)
    @given(st.lists(st.sampled_from(LONG_EDGE + distinct[:50] + ["\n", "1", " a", "你"]), min_size=1,
                    max_size=30), st.integers(1, 3))
    def check(parts, reps):
        text = "".join(parts) * reps
        ids = hf.encode(text).ids
        assert fast_ids(fresh, [text, text], num_threads=1) == [ids, ids]
        assert fresh.encode(text).offsets == hf.encode(text).offsets

    check()


def test_vocab_api(deepseek):
    ours, hf = deepseek
    assert ours.get_vocab() == hf.get_vocab()
    assert ours.get_vocab_size() == hf.get_vocab_size()
    assert ours.get_vocab_size(with_added_tokens=False) == hf.get_vocab_size(with_added_tokens=False)
    for t in ["Ġthe", "<｜begin▁of▁sentence｜>", "nope-not-a-token"]:
        assert ours.token_to_id(t) == hf.token_to_id(t)
    for i in [0, 1, 100, 127999, 128000, 128815, 129279, 10**6]:
        assert ours.id_to_token(i) == hf.id_to_token(i)


def test_round_trip_to_str_and_save(gpt2_style, tmp_path):
    ours, hf = pair(gpt2_style)
    path = tmp_path / "tok.json"
    ours.save(path)
    again = scantok.Tokenizer.from_file(path)
    hf_again = HFTokenizer.from_file(str(path))
    for text in SPICE:
        assert again.encode(text).ids == hf_again.encode(text).ids == hf.encode(text).ids
    assert scantok.Tokenizer.from_str(ours.to_str()).get_vocab() == hf.get_vocab()


# -- errors ---------------------------------------------------------------------------------------
MINIMAL = {"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}}


@pytest.mark.parametrize("patch, message", [
    ({"model": {"type": "Unigram", "vocab": []}}, "unsupported model type 'Unigram'"),
    ({"model": {"type": "WordPiece", "vocab": {}}}, "unsupported model type 'WordPiece'"),
    ({"normalizer": {"type": "Precompiled", "precompiled_charsmap": ""}}, "unsupported normalizer type 'Precompiled'"),
    ({"pre_tokenizer": {"type": "UnicodeScripts"}}, "unsupported pre-tokenizer type 'UnicodeScripts'"),
    ({"post_processor": {"type": "Nope"}}, "unsupported post-processor type 'Nope'"),
    ({"decoder": {"type": "CTC"}}, "unsupported decoder type 'CTC'"),
    ({"truncation": {"max_length": 5}}, "truncation"),
    ({"padding": {"strategy": "BatchLongest"}}, "padding"),
    ({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a b"]}}, "not in the vocabulary"),
    ({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a"]}}, "expected 'a b'"),
    ({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [], "dropout": 0.1}}, "dropout"),
    ({"model": {"type": "BPE", "vocab": {"a": "x"}, "merges": []}}, "must be an integer"),
    ({"added_tokens": [{"id": 5}]}, "content"),
    ({"model": None}, "missing 'model'"),
    ({"model": {"type": "WordLevel", "vocab": {"a": 0}}}, "missing field 'unk_token'"),
    ({"model": {"type": "BPE", "vocab": {"a": 0, "\ud800": 1}, "merges": []}}, "lone surrogate in model.vocab"),
    ({"added_tokens": [{"id": 5, "content": "\udc00", "special": True}]}, "lone surrogate in added_tokens"),
])
def test_bad_files(patch, message):
    obj = {**MINIMAL, **patch}
    with pytest.raises(HFError, match=message):
        scantok.Tokenizer.from_str(json.dumps(obj))


def test_unsupported_is_typed():
    with pytest.raises(UnsupportedComponentError):
        scantok.Tokenizer.from_str(json.dumps({**MINIMAL, "decoder": {"type": "CTC"}}))
    assert scantok.UnsupportedComponentError is UnsupportedComponentError


@pytest.mark.parametrize("data", ["", "{", "[]", "null", b"\xff\xfe", '{"model": 1}',
                                  json.dumps(MINIMAL, ensure_ascii=False).replace('"a"', '"\ud800"').encode(
                                      "utf-8", "surrogatepass")])
def test_not_json(data):
    """As tokenizers refuses them (json.loads would take a lone surrogate's escape, and the
    bytes of one: it decodes bytes with surrogatepass)."""
    with pytest.raises(HFError):
        scantok.Tokenizer.from_str(data)
    with pytest.raises(Exception):
        HFTokenizer.from_str(data.decode("utf-8", "surrogatepass") if isinstance(data, bytes) else data)


def test_bad_path_names_file(tmp_path):
    p = tmp_path / "t.json"
    p.write_text("{nope")
    with pytest.raises(HFError, match="t.json"):
        scantok.Tokenizer.from_file(p)


def test_type_errors(gpt2_style):
    ours, _ = pair(gpt2_style)
    with pytest.raises(TypeError):
        ours.encode(b"bytes")
    with pytest.raises(TypeError):
        ours.encode_batch_fast("a string")
    with pytest.raises(TypeError):
        ours.encode_batch_fast(["ok", 3])


def test_merge_ids_loaded_in_c_equal_python(deepseek, gpt2_style, llama3_style, wordpiece_like):
    """Merges -> (a, b, merged) ids and byte lengths: the C loader equals the checked Python loop."""
    import numpy as np

    from scantok.hf.bpe import _merge_ids_c

    for tok in (deepseek[0], pair(gpt2_style)[0], pair(llama3_style)[0], pair(wordpiece_like)[0]):
        model = tok._model
        spec = tok._obj["model"]
        plen = len(model.prefix) if model.prefix else 0
        c = _merge_ids_c(model.vocab, spec["merges"], plen)
        py = model._merge_ids_py(spec["merges"], plen, "model")
        assert c is not None and [list(x) for x in c] == [list(x) for x in py]
        for t, i in list(model.vocab.items())[:5000]:
            try:
                want = len(bytes(scantok.hf.pre_tokenizers.CHAR_BYTES[ch] for ch in t))
            except KeyError:
                want = len(t.encode("utf-8", "surrogatepass"))
            assert int(np.asarray(model._keep[1])[i]) == want, t
    # list-form merges, a prefix, tokens holding NUL or a newline (another separator), a bad merge
    vocab = {"a": 0, "b": 1, "##b": 2, "ab": 3, "\n": 4, "a\n": 5}
    assert [list(x) for x in _merge_ids_c(vocab, [["a", "##b"]], 2)] == [[0], [2], [3]]
    assert [list(x) for x in _merge_ids_c(vocab, [["a", "b"], ["a", "\n"]], 0)] == [[0, 0], [1, 4], [3, 5]]
    assert [list(x) for x in _merge_ids_c({"a": 0, "b": 1, "ab": 3, "\x00": 6}, ["a b"], 0)] == [[0], [1], [3]]
    assert _merge_ids_c({**vocab, "\x00": 6}, ["a b"], 0) is None  # no separator: the Python loop
    assert _merge_ids_c(vocab, ["a b", "a c"], 0) is None
    assert _merge_ids_c(vocab, ["a  b"], 0) is None


def test_deepseek_added_tokens_in_batches(deepseek):
    """Texts holding added tokens (special ones, and DeepSeek's normalized ones such as
    <｜User｜>) leave the one-call C batch path: encode_batch_fast and encode equal HF."""
    ours, hf = deepseek
    texts = ["hello <｜User｜> world", "x<|EOT|>y", "<｜begin▁of▁sentence｜>hi", "a <｜fim▁hole｜>", "plain",
             "<｜Assistant｜><｜end▁of▁sentence｜>", "<", "<｜User"]
    assert fast_ids(ours, texts, num_threads=1) == [e.ids for e in hf.encode_batch(texts)]
    for t in texts:
        assert_same(ours, hf, t)


@pytest.mark.parametrize("name", ["deepseek", "gpt2_style", "prefix_space_style", "llama3_style", "qwen_style",
                                  "added_kinds", "prefix_space_alone"])
def test_encode_batch_in_one_call_a_chunk(name, request, monkeypatch):
    """encode_batch takes the texts the byte-level stages take whole in one C call a chunk
    (_encode_many, hf_encode_offsets_batch; with ByteLevel's add_prefix_space each text's
    prefix folded back), the others (added tokens, declined texts) one by one: every field as
    tokenizers' encode_batch, on one thread and two, empty texts included; a lone surrogate
    raises the error encode() raises, naming its input."""
    if name == "prefix_space_alone":  # no added token, no post-processor: each text's prefix folded
        obj = json.loads(request.getfixturevalue("gpt2_style").to_str())
        obj["pre_tokenizer"]["add_prefix_space"] = True
        obj["added_tokens"], obj["post_processor"] = [], None
        ours, hf = pair(HFTokenizer.from_str(json.dumps(obj)))
        assert ours._lazy is not None and ours._prefix_space and not ours._has_added
    else:
        fixture = request.getfixturevalue(name)
        ours, hf = fixture if name == "deepseek" else pair(fixture)
    monkeypatch.setattr(scantok.hf.tokenizer, "usable_cpus", lambda: 2)
    monkeypatch.setattr(scantok.hf.tokenizer, "PARALLEL_MIN", 0)
    texts = ["hello world", "", " leading space", "héllo wörld, 你好 123", "x<|EOT|>y", "<｜User｜> hi",
             "<|endoftext|>a", "tabs\tand\nlines  ", "😀" * 20, "a" * 3000] * 4

    from test_hf_char_bpe import encode_batch_singles

    singles = encode_batch_singles(ours, hf, texts, monkeypatch)
    if ours._lazy is not None and (ours._screen_whole is not None or not ours._has_added):
        # one by one: only texts the added tokens' screen flags (their first byte, "<")
        assert all("<" in t for t in singles), {t for t in singles if "<" not in t}
    bad = texts[:3] + ["ok \ud800 no"] + texts[3:6]
    with pytest.raises(UnicodeEncodeError, match="inputs\\[3\\]|position|surrogate"):
        ours.encode_batch(bad, num_threads=2)


def test_batch_groups(deepseek, corpora):
    """The batch calls encode a chunk's texts in groups (pylist.c: up to 256 texts or ~64 KB a
    group, the GIL released once a group): 900 texts of 0 to 3,000 characters and four of
    ~200 KB, with texts the added tokens' screen sends to the general path among them, every
    field as tokenizers' (encode_batch and encode_batch_fast, one thread: one call)."""
    ours, hf = deepseek
    rng = random.Random(27)
    text = corpora["multi"]
    texts = []
    for _ in range(900):
        a = rng.randrange(len(text) - 3_000)
        texts.append(text[a:a + rng.choice([0, 1, 2, 40, 300, 3_000])])
    for i in (3, 255, 256, 700):
        texts[i] = text[i * 100:i * 100 + 200_000]
    for i in (10, 257, 511, 512):
        texts[i] = "x<|EOT|>y <think> z"
    got = ours.encode_batch(texts, num_threads=1)
    want = hf.encode_batch(texts)
    assert [(e.ids, e.offsets, e.tokens) for e in got] == [(e.ids, e.offsets, e.tokens) for e in want]
    assert [e.ids for e in ours.encode_batch_fast(texts, num_threads=1)] == [e.ids for e in want]


def test_batch_chunks_by_characters(deepseek, corpora, monkeypatch):
    """encode_batch and encode_batch_fast cut a batch into one chunk a thread by characters,
    not by count: on a batch sorted by length each of two threads gets about half the text (by
    count the second got most of it, and two threads ran 1.1x one); ids and offsets as
    tokenizers'."""
    ours, hf = deepseek
    monkeypatch.setattr(scantok.hf.tokenizer, "usable_cpus", lambda: 2)
    monkeypatch.setattr(scantok.hf.tokenizer, "PARALLEL_MIN", 0)
    words = corpora["en"][100_000:400_000]
    texts, size, pos = [], 10, 0
    while pos + size < len(words) and len(texts) < 120:
        texts.append(words[pos:pos + size])
        pos += size
        size = int(size * 1.06) + 1
    assert len(texts) > 40
    seen = []
    for method, inner in (("encode_batch", "_encode_many"), ("encode_batch_fast", "_fast_encodings")):
        real = getattr(ours, inner)
        seen.clear()
        monkeypatch.setattr(ours, inner, lambda c, add, _r=real: (seen.append(sum(map(len, c))), _r(c, add))[1])
        got = getattr(ours, method)(texts, num_threads=2)
        want = getattr(hf, method)(texts)
        assert [e.ids for e in got] == [e.ids for e in want]
        if method == "encode_batch":
            assert [e.offsets for e in got] == [e.offsets for e in want]
        assert len(seen) == 2 and abs(seen[0] - seen[1]) <= max(map(len, texts)), (method, seen)


@pytest.mark.parametrize("contents", [["<｜User｜>", "<|EOT|>", "｜x"], ["a", "<s>"], ["ab", "cd", "ef", "gh", "ij"]])
def test_added_token_prefilter_never_misses(contents):
    """AddedVocabulary.matches (first-character prefilter, then the trie regex) is True
    whenever splitting would cut the text."""
    from hypothesis import strategies as st

    from scantok.hf.added_tokens import AddedVocabulary

    voc = AddedVocabulary([{"id": i, "content": c, "normalized": i % 2 == 1} for i, c in enumerate(contents)], None)
    pieces = st.sampled_from(contents + [c[:1] for c in contents] + [c[1:] for c in contents] + [" ", "x", "<", "｜"])

    @settings(max_examples=300, deadline=None)
    @given(st.lists(pieces, max_size=12).map("".join))
    def check(text):
        cut = any(voc.split(text, n) not in ([(0, len(text), None)], []) for n in (False, True))
        assert voc.matches(text) or not cut

    check()


def test_batch_lists_stored_directly(llama3_style):
    """hf_encode_batch writes the items of each id list in place: the lists equal
    tokenizers', with the template's tokens before the ids, and hold one reference to each
    cached int (freed with the lists)."""
    import sys

    ours, hf = pair(llama3_style)
    texts = ["Hello world, 123 times", "", "x", "a" * 300 + " b", "émigré 你好 😀\n\n"]
    sample = fast_ids(ours, texts[:1], num_threads=1)[0][1]
    before = sys.getrefcount(sample)
    for add in (True, False):
        out = fast_ids(ours, texts * 3, add_special_tokens=add, num_threads=1)
        assert out == [e.ids for e in hf.encode_batch(texts * 3, add_special_tokens=add)]
        assert sys.getrefcount(sample) > before
        del out
        assert sys.getrefcount(sample) == before

    @settings(max_examples=60, deadline=None)
    @given(st.lists(hard_text(surrogates=False), max_size=5), st.booleans())
    def check(batch, add):
        assert fast_ids(ours, batch, add_special_tokens=add, num_threads=1) == [e.ids for e in hf.encode_batch(batch, add_special_tokens=add)]
        assert_fast_same(ours, hf, batch)

    check()


def _model_ids(ours, raw: bytes, cache=None) -> list[int]:
    """The BPE of raw as one piece (no pre-tokenizer stage), through a fresh piece cache (or
    the one given)."""
    ffi, lib = ours._model._ffi, ours._model._lib
    if cache is None:
        cache = ffi.gc(lib.hfb_cache_new(), lib.hfb_cache_free)
    out = ffi.new("uint32_t[]", max(len(raw), 8) + 8)
    r = lib.hfb_encode(ours._model._model, cache, ffi.NULL, raw, len(raw), out, ffi.NULL, ffi.NULL)
    assert r >= 0
    return list(out[0:r])


def _raw(token: str) -> bytes | None:
    from scantok.hf.pre_tokenizers import CHAR_BYTES

    try:
        return bytes(CHAR_BYTES[c] for c in token)
    except KeyError:
        return None


@pytest.mark.parametrize("name", ["deepseek", "gpt2_style", "llama3_style"])
def test_first_sight_vocabulary_pieces(name, request):
    """A first-sight piece that is a vocabulary token is looked up in the table of tokens that
    merge back into themselves (hfb_build_selfs) instead of being merged, and a cache made for
    the model starts with the lowest-id half of them (seed_cache): every token's bytes (those
    that merge into other tokens too) and their prefixes and suffixes give the ids of
    tokenizers' BPE model, through fresh unseeded caches (the table) and through one seeded
    cache (the seeds, then what it learns).  ignore_merges files (llama3_style) build no table."""
    from test_premerge import switched

    fix = request.getfixturevalue(name)
    ours, hf = fix if name == "deepseek" else pair(fix)
    ffi, lib = ours._model._ffi, ours._model._lib
    vocab = hf.get_vocab()
    if name == "llama3_style":
        assert lib.hfb_selfs_size(ours._model._model) == 0
    else:
        assert lib.hfb_selfs_size(ours._model._model) > len(vocab) // 2
    tokens = sorted(vocab, key=vocab.get)
    if name == "deepseek":
        tokens = tokens[::7]  # every 7th of 128K (and their neighbours below)
    model = hf._tokenizer.model if hasattr(hf, "_tokenizer") else hf.model
    seeded = ffi.gc(lib.hfb_cache_new(), lib.hfb_cache_free)
    seeds = lib.hfb_seeds()
    checked = 0
    for t in tokens:
        raw = _raw(t)
        if raw is None or not 3 <= len(raw) <= 24:
            continue
        for piece in (t, t[1:], t[:-1], t + t[:2]):
            want = [x.id for x in model.tokenize(piece)]
            with switched(lib.hfb_set_seed, False):
                assert _model_ids(ours, _raw(piece)) == want, piece
            assert _model_ids(ours, _raw(piece), seeded) == want, piece
        checked += 1
    assert checked > len(tokens) // 2
    made = lib.hfb_seeds() - seeds
    assert made == min(lib.hfb_selfs_size(ours._model._model), (1 << 17) // 2)


def test_first_sight_pieces_hypothesis(deepseek):
    """Random byte strings of 1-30 bytes made of token fragments: the same ids as tokenizers'
    BPE model, through a fresh cache (every piece first-sight)."""
    from scantok.hf.pre_tokenizers import BYTE_CHARS

    ours, hf = deepseek
    vocab = hf.get_vocab()
    toks = [t for t in sorted(vocab, key=vocab.get)[:20000] if _raw(t) is not None]

    @settings(max_examples=300, deadline=None)
    @given(st.lists(st.sampled_from(toks), min_size=1, max_size=4), st.binary(max_size=3))
    def check(parts, extra):
        raw = b"".join(_raw(t) for t in parts)[:27] + extra
        piece = "".join(BYTE_CHARS[b] for b in raw)
        assert _model_ids(ours, raw) == [x.id for x in hf.model.tokenize(piece)], raw

    check()


# -- found by tests/fuzz_hf_components.py (random pipelines) ------------------------------------
def _wordlevel_hf(normalizer=None, pre=None):
    hf = HFTokenizer(models.WordLevel({"a": 0, "[UNK]": 1, "fi": 2, "q": 3, "hello": 4, "x": 5}, unk_token="[UNK]"))
    if normalizer is not None:
        hf.normalizer = normalizer
    hf.pre_tokenizer = pre or pre_tokenizers.WhitespaceSplit()
    return hf


@pytest.mark.parametrize("contents", [["x" * 1200], ["a" * i for i in range(1, 1200)], ["ab" * 700, "ab" * 300 + "c"]])
def test_long_added_tokens_load(contents):
    """An added token thousands of characters long (a WordLevel vocabulary word without a
    pre-tokenizer is a whole training line) made the trie regex recurse per character."""
    hf = _wordlevel_hf()
    hf.add_tokens([AddedToken(c) for c in contents])
    ours, hf = pair(hf)
    for text in ["y" + "x" * 1200 + "z", "a" * 2500, "ab" * 800 + "c", "ab" * 300 + "c abab", "a x"]:
        assert_same(ours, hf, text)


def test_lone_surrogate_raises_on_the_python_path(metaspace_fallback, wordlevel_tok, added_kinds):
    """tokenizers cannot take such a str; the Python pipeline (char-level models, normalizers)
    carried it through with surrogatepass."""
    for hf in (metaspace_fallback, wordlevel_tok, added_kinds):
        ours = scantok.Tokenizer.from_str(hf.to_str())
        for text in ["\udbd1", "ab\ud800 c", "<s>\udc00"]:
            with pytest.raises(TypeError):
                hf.encode(text)
            for call in (ours.encode, lambda t: ours.encode_batch([t, "x"]), lambda t: ours.encode_batch_fast([t])):
                with pytest.raises(UnicodeEncodeError):
                    call(text)


@pytest.mark.parametrize("normalizer", [None, normalizers.Lowercase()])
def test_lone_surrogate_in_batch_beats_an_earlier_inputs_error(normalizer):
    """tokenizers converts every input of a batch before it encodes any, so a lone surrogate in
    a later input raises its TypeError even when an earlier input fails to encode (here WordLevel
    with its unk token missing from the vocabulary); scantok raised the earlier input's
    WordLevelError (found by fuzz_hf_components, seed 101)."""
    hf = HFTokenizer(models.WordLevel({"a": 0, "b": 1}, unk_token="[UNK]"))
    hf.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    if normalizer is not None:
        hf.normalizer = normalizer
    ours = scantok.Tokenizer.from_str(hf.to_str())
    long_clean = "a b " * 50_000  # past PARALLEL_MIN: two threads
    for batch in (["zz", "a\ud800"], ["a", "zz", "b\udc00 a"], [long_clean, "zz " + long_clean, "\ud800"]):
        for method in ("encode_batch", "encode_batch_fast"):
            with pytest.raises(Exception) as want:
                getattr(hf, method)(batch)
            for threads in (1, 2):
                with pytest.raises(Exception) as got:
                    getattr(ours, method)(batch, num_threads=threads)
                assert isinstance(want.value, TypeError) and isinstance(got.value, TypeError), (batch, got.value)
                assert f"inputs[{len(batch) - 1}]" in str(got.value)
    with pytest.raises(Exception) as want:  # no surrogate: both raise the model's error
        hf.encode_batch(["a", "zz"])
    with pytest.raises(Exception) as got:
        ours.encode_batch(["a", "zz"])
    assert not isinstance(want.value, TypeError) and not isinstance(got.value, TypeError)


@pytest.mark.parametrize("scheme", ["always", "first", "never"])
@pytest.mark.parametrize("rep", ["_", "\u2581"])
def test_metaspace_decoder_first_token(scheme, rep):
    """The Metaspace decoder drops every replacement character of the first token (not only a
    leading one) and keeps the spaces a token already holds."""
    dec = decoders.Metaspace(replacement=rep, prepend_scheme=scheme)
    hf = _wordlevel_hf()
    for toks in ([" can"], ["a_b"], ["_a_b", "_c"], ["__x", "_y"], [" ", " "], ["\u2581\u2581a\u2581", "b"], []):
        hf.decoder = dec
        vocab = {t: i for i, t in enumerate(dict.fromkeys(toks + ["[UNK]"]))}
        hf.model = models.WordLevel(vocab, unk_token="[UNK]")
        ours = scantok.Tokenizer.from_str(hf.to_str())
        ids = [vocab[t] for t in toks]
        assert ours.decode(ids) == hf.decode(ids), toks


def test_normalized_added_tokens_vocab_and_decode():
    """A normalized added token keeps its content in token_to_id and get_vocab, id_to_token gives
    its normalized content, and decode(skip_special_tokens=True) drops the tokens whose string is
    a special token's content (so not a normalized special token whose content normalizes to
    another string, but a vocabulary token spelt as a special one) — all as tokenizers."""
    hf = _wordlevel_hf(normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase(), normalizers.Strip()]))
    hf.add_tokens([AddedToken("ﬁ", normalized=True), AddedToken("Hello", normalized=True),
                   AddedToken(" q ", normalized=True)])
    hf.add_special_tokens([AddedToken("XY", normalized=True), AddedToken("AB", normalized=False),
                           AddedToken("x", normalized=False)])
    ours, hf = pair(hf)
    for q in ["ﬁ", "fi", "Hello", "hello", "XY", "xy", "AB", "x", " q ", "q"]:
        assert ours.token_to_id(q) == hf.token_to_id(q), q
    assert ours.get_vocab() == hf.get_vocab()
    assert ours.get_vocab_size() == hf.get_vocab_size()
    n = hf.get_vocab_size() + 2
    assert [ours.id_to_token(i) for i in range(n)] == [hf.id_to_token(i) for i in range(n)]
    for skip in (True, False):
        assert ours.decode(list(range(n)), skip_special_tokens=skip) == hf.decode(list(range(n)), skip_special_tokens=skip)
    for text in ["ﬁ HELLO xy AB x q", "fi hello XY ab"]:
        assert_same(ours, hf, text)


def _template(single, pair=None):
    return processors.TemplateProcessing(single=single, pair=pair or "$A $B:1",
                                         special_tokens=[("[CLS]", 0), ("[SEP]", 1)])


@pytest.mark.parametrize("steps", [
    [_template("[CLS]:1 $A:0"), processors.BertProcessing(("[SEP]", 1), ("[CLS]", 0))],
    [_template("$A:1"), processors.BertProcessing(("[SEP]", 1), ("[CLS]", 0))],
    [_template("$A:1 [SEP]:2"), processors.RobertaProcessing(("[SEP]", 1), ("[CLS]", 0))],
    [_template("[CLS] $A", "[CLS] $A $B:1"), processors.ByteLevel(trim_offsets=True), _template("$A [SEP]", "$B:1 $A")],
    [_template("[CLS]:1 $A:2 [SEP]"), processors.ByteLevel(trim_offsets=True, add_prefix_space=False)],
    [_template("[CLS] $A [SEP]"), _template("$A", "$B $A")],  # three encodings: tokenizers panics
])
def test_post_processor_sequence_passes_encodings(gpt2_style, steps):
    """In a Sequence, TemplateProcessing hands the next steps one encoding per template piece:
    two make them take their pair forms (BertProcessing keeps the type ids it is given,
    RobertaProcessing zeroes them), ByteLevel trims each apart; more fail."""
    hf = HFTokenizer.from_str(gpt2_style.to_str())
    hf.post_processor = processors.Sequence(steps)
    ours = scantok.Tokenizer.from_str(hf.to_str())
    for text in ["hello world", "  the  quick ", "", " x"]:
        for add in (True, False):
            try:
                hf.encode(text, add_special_tokens=add)
            except BaseException:  # noqa: BLE001 - pyo3's PanicException
                with pytest.raises(HFError):
                    ours.encode(text, add_special_tokens=add)
                with pytest.raises(HFError):
                    ours.encode_batch_fast([text], add_special_tokens=add)
                continue
            assert_same(ours, hf, text, add_special_tokens=add)
            assert fast_ids(ours, [text], add_special_tokens=add) == \
                [e.ids for e in hf.encode_batch_fast([text], add_special_tokens=add)]
            assert_fast_same(ours, hf, [text], adds=(add,))


@pytest.mark.parametrize("normalized", [True, False])
@pytest.mark.parametrize("opts", [{"lstrip": True, "rstrip": True}, {"rstrip": True}, {"lstrip": True}])
def test_added_token_emptied_by_lstrip(opts, normalized):
    """A match whose whitespace the previous match's rstrip took: lstrip moves its start to its
    end and tokenizers drops the empty split, token and all (scantok emitted an empty token)."""
    hf = _wordlevel_hf(normalizers.Lowercase())
    hf.add_tokens([AddedToken("\n", normalized=normalized, **opts), AddedToken(" ", normalized=normalized, **opts)])
    ours, hf = pair(hf)
    for text in ["\r\n\r\nⅠa", "\n\n", "a\n \n a", " \n\n ", "\n"]:
        assert_same(ours, hf, text)


def test_byte_fallback_with_subword_prefix_ids(train_text):
    """byte_fallback with continuing_subword_prefix / end_of_word_suffix: tokenizers falls back to
    the bytes of the prefixed character, counts them all as the character's, and its offsets run
    past the text (not compared); scantok raised IndexError there. Ids and tokens as tokenizers."""
    tok = _bpe_trained(train_text[:20], pre_tokenizers.Whitespace(), vocab_size=400,
                       model_kw={"byte_fallback": True, "continuing_subword_prefix": "##", "end_of_word_suffix": "_"},
                       continuing_subword_prefix="##", end_of_word_suffix="_", limit_alphabet=40)
    obj = json.loads(tok.to_str())
    vocab = obj["model"]["vocab"]
    for b in range(256):
        vocab.setdefault(f"<0x{b:02X}>", max(vocab.values()) + 1)
    for norm in (None, {"type": "NFD"}):  # NFD: offsets through an alignment list
        obj["normalizer"] = norm
        ours, hf = pair(HFTokenizer.from_str(json.dumps(obj)))
        for text in ["\n ộ ", "ộ", "aộb", "你好 world", "ﬁx"]:
            a, b = ours.encode(text), hf.encode(text)
            assert (a.ids, a.tokens) == (b.ids, b.tokens), text
            assert all(0 <= x <= y <= len(text) for x, y in a.offsets), text


def test_single_word_uses_rust_word_characters():
    """single_word tests the characters beside a match with Rust regex's \\w (letters, marks,
    decimal digits, connector punctuation, joiners), not Python's (no marks, but "²")."""
    hf = _wordlevel_hf()
    hf.add_tokens([AddedToken("XQ", single_word=True, normalized=False)])
    ours, hf = pair(hf)
    cps = [c for c in list(range(0x3000)) + list(range(0x3000, 0x110000, 7)) if not 0xD800 <= c < 0xE000]
    for texts in ([chr(c) + "XQ" for c in cps], ["XQ" + chr(c) for c in cps]):
        assert fast_ids(ours, texts, num_threads=1) == [e.ids for e in hf.encode_batch(texts)]


def test_lstrip_rstrip_use_rust_whitespace():
    """lstrip / rstrip take Rust regex's \\s (White_Space): not U+001C..U+001F, which Python's \\s
    takes (an added token ' ' with rstrip swallowed a following '\\x1f')."""
    hf = _wordlevel_hf()
    hf.add_tokens([AddedToken("XQ", lstrip=True, rstrip=True, normalized=False)])
    ours, hf = pair(hf)
    cps = list(range(0x21)) + [0x7F, 0x85, 0xA0, 0x1680, 0x180E, 0x200B, 0x2028, 0x202F, 0x205F, 0x3000, 0xFEFF]
    cps += list(range(0x2000, 0x2010))
    texts = ["a" + chr(c) * 2 + "XQ" + chr(c) + "b" for c in cps]
    assert [e.offsets for e in ours.encode_batch(texts, num_threads=1)] == \
        [[tuple(o) for o in e.offsets] for e in hf.encode_batch(texts)]


@pytest.mark.parametrize("norm", [normalizers.Replace(Regex(r"\p{P}"), ""),
                                  normalizers.BertNormalizer(strip_accents=True, lowercase=True),
                                  normalizers.Strip()])
def test_metaspace_first_after_a_normalizer_removes_the_start(train_text, norm):
    """Metaspace prepend_scheme "first" prepends only to the piece that starts the original text;
    when the normalizer removed the first characters no piece does. encode knew (it tracks the
    alignments); the ids-only paths (encode_batch_fast) did not."""
    tok = _bpe_trained(train_text[:30], pre_tokenizers.Metaspace(prepend_scheme="first"), normalizer=norm,
                       vocab_size=500)
    assert_every_path(*pair(tok), ["\\u", "\u0301x", "  hello world", ",hello", "hello", "", " "])


@pytest.mark.parametrize("norm", [normalizers.Prepend("\u2581\u2581"), normalizers.NFKC(), normalizers.NFC(),
                                  normalizers.NFD(), normalizers.Lowercase(),
                                  normalizers.Sequence([normalizers.Prepend("_"), normalizers.NFKD()])])
def test_metaspace_first_after_a_normalizer_expands_the_start(train_text, norm):
    """The other way round: characters a normalizer makes of the text's first character (Prepend's,
    a decomposition, NFC's singletons as U+0344, Lowercase's "İ") all start at 0 in the original
    text, so a piece a Split cuts from inside them gets Metaspace's prepend too.  The ids-only
    paths tracked the alignments only after a normalizer that can delete characters, and took
    the piece's normalized position for its original one (found by fuzz_hf_components, seed 102:
    Prepend("▁▁") then Split(\\p{Lu}+, invert) and Metaspace("first") on "F")."""
    pre = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(r"[\p{Lu}i\p{M}]"), "isolated"),
                                   pre_tokenizers.Metaspace(prepend_scheme="first")])
    tok = _bpe_trained(train_text[:30], pre, normalizer=norm, vocab_size=500)
    assert_every_path(*pair(tok), ["F", "Fx", "F G", "\ufb01x", "\u0130x", "\u0344a", "e\u0301x", "\u00e9x",
                                   "x\u00e9", " F", "", "hello"])


@pytest.mark.parametrize("norm, pres, texts", [
    (normalizers.Prepend("▁▁"), [pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=True),
                                 pre_tokenizers.Metaspace(replacement="Ġ", prepend_scheme="first", split=True)],
     ["ab c", "a", "", " b"]),
    (normalizers.Lowercase(), [pre_tokenizers.Split("\u0307", "isolated"),
                               pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=True)],
     ["İab", "İ", "aİ"]),
])
def test_metaspace_first_after_prepend_or_an_expanded_first_character(norm, pres, texts):
    """As above, with two Metaspaces after Prepend (each piece Prepend's characters start gets
    both prepends) and with a Split inside Lowercase's expansion of İ (i + U+0307); found again
    by fuzz_hf_components, seed 202, in the same session."""
    vocab = {c: i for i, c in enumerate(["a", "b", "▁", "Ġ", "c", "i", "\u0307", " "])}
    hf = HFTokenizer(models.BPE(vocab=vocab, merges=[]))
    hf.normalizer = norm
    hf.pre_tokenizer = pre_tokenizers.Sequence(pres)
    ours = scantok.Tokenizer.from_str(hf.to_str())
    assert_fast_same(ours, hf, texts)
    for text in texts:
        assert_same(ours, hf, text)


# texts NFC changes (a decomposed é, the Angstrom sign, U+0344, Hangul jamo, a reordering of
# combining marks) and texts it leaves alone
NF_CHANGED = ["e\u0301", "caf" + "e\u0301 au lait", "\u212b ngstr\u00f6m", "x\u0344y", "\u1100\u1161\u11a8 han",
              "a\u0323\u0302b " * 40, "Ⅻ ﬁ \u32ff \ua7f2 " + "e\u0301" * 3, "the A\u030a token", "\u212b<|im_start|>x",
              "e\u0301" * 300 + " end", "\u0301 leading mark", "trailing mark e\u0301", "xﬁ e\u0301", "ﬁ\u212b",
              "xﬁy"]
NF_SAME = ["café au lait", "你好，世界", "Ⅻ ﬁ \u32ff", "plain ascii", "", "ÅÅ Å", "Ω ω " * 50]


@pytest.mark.parametrize("normalizer", [{"type": "NFC"}, {"type": "NFKC"}, {"type": "NFD"},
                                        {"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "NFC"}]}])
def test_unicode_form_normalizers_take_unchanged_texts_whole(qwen_style, corpora, normalizer):
    """A normalizer of Unicode forms only (Qwen's NFC) leaves most text as it is: such a text
    runs the C path whole (a lazy Encoding); one it changes is normalized first (nf_aligned)
    and runs the C path over the normalized text, its offsets mapped back, unless a normalized
    added token occurs in it (the general path); all equal tokenizers', alone and mixed in
    batches on one and two threads."""
    obj = json.loads(qwen_style.to_str())
    obj["normalizer"] = normalizer
    hf = HFTokenizer.from_str(json.dumps(obj))
    # a token matched in the original text, which the forms may change (found by a review: NFD's
    # "xÅ" lost such a "Å" in encode_batch_fast)
    hf.add_tokens([AddedToken("ﬁ", normalized=False)])
    ours = scantok.Tokenizer.from_str(hf.to_str())
    docs = _docs(corpora, size=12_000)
    mixed = [d + c for d, c in zip(docs, NF_CHANGED * 10)] + docs + NF_CHANGED + NF_SAME + SPICE
    for text in NF_CHANGED + NF_SAME + SPICE + docs[:6]:
        for add in (True, False):
            assert_same(ours, hf, text, add_special_tokens=add)
    assert_fast_same(ours, hf, mixed)
    assert_fast_same(ours, hf, mixed * 3, num_threads=2, adds=(True,))
    got = ours.encode_batch(mixed, num_threads=2)
    want = hf.encode_batch(mixed)
    assert [(e.ids, e.offsets, e.word_ids) for e in got] == [(e.ids, e.offsets, e.word_ids) for e in want]
    # the path each took: whole in C, the normalized text where the form changes it (U+0344:
    # every form does), the general path for a normalized added token (the Angstrom sign
    # normalizes to the added "Å")
    assert ours.encode(docs[0])._lazy is not None
    assert ours.encode("x\u0344")._lazy is not None
    assert ours.encode("x\u212b")._lazy is None


def _random_decoder(rng, depth: int = 0):
    """A decoder of any kind tokenizers has that scantok supports, or a Sequence of them."""
    kind = rng.choice(["Replace", "Replace", "Metaspace", "WordPiece", "ByteFallback", "Fuse", "Strip", "ByteLevel"]
                      + ([] if depth else ["Sequence"] * 4))
    if kind == "Replace":
        pat = rng.choice(["▁", " ", "##", "a", "", "aa"]) if rng.random() < 0.7 else Regex(rng.choice(["▁+", "[ab]", r"\s"]))
        return decoders.Replace(pat, rng.choice([" ", "", "▁", "xy"]))
    if kind == "Metaspace":
        return decoders.Metaspace(replacement=rng.choice(["▁", "_"]), prepend_scheme=rng.choice(["always", "first", "never"]))
    if kind == "WordPiece":
        return decoders.WordPiece(prefix=rng.choice(["##", "▁"]), cleanup=rng.random() < 0.5)
    if kind == "ByteFallback":
        return decoders.ByteFallback()
    if kind == "Fuse":
        return decoders.Fuse()
    if kind == "Strip":
        return decoders.Strip(content=rng.choice([" ", "▁", "_"]), left=rng.randint(0, 2), right=rng.randint(0, 2))
    if kind == "ByteLevel":
        return decoders.ByteLevel()
    return decoders.Sequence([_random_decoder(rng, 1) for _ in range(rng.randint(1, 5))])


def test_decoder_chains_kept_per_id():
    """A chain that starts with steps mapping each token by itself (Replace, Strip, Metaspace and
    WordPiece, whose first token maps apart) keeps their result per id and runs the rest on it
    (Llama 2's Replace + ByteFallback + Fuse + Strip took 4x tokenizers' time through the whole
    chain): random chains of every decoder, random ids (special, unknown, repeated, none),
    skipped or not, decoded twice (the second from the kept texts), equal to tokenizers'."""
    import random

    import numpy as np

    rng = random.Random("decoder chains")
    vocab = {t: i for i, t in enumerate(["[UNK]", "▁a", "a", "##b", "b", "<0x41>", "<0xE4>", "<0xBD>", "<0xA0>",
                                         "<0xFF>", " x", "_y", "▁", "▁▁", "__", "▁hello", "##", "<0x4", "Ġa", "é"])}
    seen_head = 0
    for _ in range(150):
        hf = HFTokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
        hf.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
        hf.add_special_tokens(["<s>"])
        hf.add_tokens([AddedToken("▁plus", normalized=False)])
        hf.decoder = _random_decoder(rng)
        ours = scantok.Tokenizer.from_str(hf.to_str())
        seen_head += ours._id_text is not None
        n_ids = len(vocab) + 2
        for _ in range(12):
            ids = [rng.randrange(n_ids + 3) for _ in range(rng.randint(0, 12))]
            for skip in (True, False):
                try:
                    want = hf.decode(ids, skip_special_tokens=skip)
                except BaseException as e:  # tokenizers panics in Strip on a token shorter than it
                    if type(e).__name__ != "PanicException":
                        raise
                    ours.decode(ids, skip_special_tokens=skip)  # scantok decodes (no crash)
                    continue
                assert ours.decode(ids, skip_special_tokens=skip) == want, (hf.to_str(), ids)
                assert ours.decode(np.array(ids, dtype=np.int64), skip_special_tokens=skip) == want
        try:
            want_batch = hf.decode_batch([[1, 2], [5, 6, 7, 8]])
        except BaseException as e:
            if type(e).__name__ != "PanicException":
                raise
            continue
        assert ours.decode_batch([[1, 2], [5, 6, 7, 8]]) == want_batch
    assert seen_head > 50  # the per-id path ran for most chains


def test_nf_aligned_equals_the_general_alignments():
    """nf_aligned's arrays equal the alignments the general path tracks (transform_regions), for
    every form and sequences of them, on random mixes of characters the forms change."""
    import random

    from scantok.hf.normalizers import _NS, _norm_steps, nf_aligned

    rng = random.Random("nf aligned")
    alpha = ["a", "e\u0301", "\u212b", "x\u0344", "\u1100\u1161\u11a8", "a\u0323\u0302", "é", "ﬁ", "\u32ff", " ", "中",
             "Ω", "\u0301", "\u0300\u0316", "\uf900", "\U0002f800", "ǅ", "\u0958", "😀\ufe0f"]
    for forms in [("NFC",), ("NFD",), ("NFKC",), ("NFKD",), ("NFD", "NFC"), ("NFKC", "NFD"), ("NFC", "NFKD", "NFC")]:
        steps = _norm_steps({"type": "Sequence", "normalizers": [{"type": f} for f in forms]}, extended=True)
        for _ in range(300):
            text = "".join(rng.choice(alpha) for _ in range(rng.randint(0, 24)))
            ns = _NS(text, track=True)
            for step in steps:
                step(ns)
            got, starts, ends = nf_aligned(text, forms)
            assert got == ns.text, (text, forms)
            assert list(zip(starts.tolist(), ends.tolist())) == [tuple(x) for x in ns.materialize()], (text, forms)


def test_prefix_space_encode_in_one_c_call(prefix_space_style, corpora):
    """ByteLevel's add_prefix_space: encode() of a text is one C call over " " + the text (the
    space folded back onto its first character), where it went piece by piece through the general
    path at a sixth of tokenizers' speed; with a normalizer of Unicode forms too, and texts that
    start with a space, are empty, or hold added tokens (each segment gets its own space)."""
    ours, hf = pair(prefix_space_style)
    assert ours._lazy is not None and ours.encode("ab")._lazy is not None  # the path under test
    texts = _docs(corpora, size=8_000) + ["", " ", "a", " a", "  a", "hello", "ahello b", "[MASK] a", "a [MASK]",
                                          " x y", "é", "\n a", "e\u0301 x"]
    for text in texts:
        assert_same(ours, hf, text)
    assert_fast_same(ours, hf, texts)
    assert [(e.ids, e.offsets, e.word_ids) for e in ours.encode_batch(texts, num_threads=2)] == \
        [(e.ids, e.offsets, e.word_ids) for e in hf.encode_batch(texts)]
    obj = json.loads(hf.to_str())
    obj["normalizer"] = {"type": "NFC"}
    ours, hf = scantok.Tokenizer.from_str(json.dumps(obj)), HFTokenizer.from_str(json.dumps(obj))
    for text in texts:
        assert_same(ours, hf, text)


@pytest.mark.parametrize("name", ["gpt2_style", "prefix_space_style", "llama3_style"])
def test_texts_with_added_tokens_in_one_c_call_per_segment(name, request, corpora):
    """A text holding added tokens (chat templates put them in most texts) is one C call per
    segment between them and a lazy Encoding carrying the word ids and the added tokens'
    strings, where it took the general path at 1.7x tokenizers' speed (encode_batch_fast: the
    segments of a batch's texts in one call): every field equals
    tokenizers', truncated (stride, both directions: the overflowing parts keep the strings and
    words), padded, in pairs and batches on two threads; added tokens of every kind."""
    import random

    hf = HFTokenizer.from_str(request.getfixturevalue(name).to_str())
    hf.add_special_tokens(["<|im_start|>", "<|im_end|>", AddedToken("[MASK]", lstrip=True, rstrip=True)])
    hf.add_tokens([AddedToken("hello", normalized=True), AddedToken("a_b", single_word=True),
                   AddedToken(" x", normalized=False, rstrip=True)])
    ours = scantok.Tokenizer.from_str(hf.to_str())
    rng = random.Random("segments " + name)
    docs = _docs(corpora, size=6_000, doc=500)
    marks = ["<|im_start|>", "<|im_end|>", " [MASK] ", "hello", "a_b", " a_b ", " x", "\n", "<|im_start|>user\n"]
    texts = ["".join(rng.choice(marks) if rng.random() < 0.4 else d[:rng.randint(0, 120)] for _ in range(rng.randint(1, 8)))
             for d in docs] + ["<|im_start|>", "<|im_start|><|im_end|>", "hello hello", " [MASK]", "x<|im_end|>y"]
    assert ours.encode("a<|im_end|>b")._lazy is not None  # the path under test
    for text in texts:
        assert_same(ours, hf, text)
    # encode_batch_fast: each text's segments in one batch call (_batch_segment_ids)
    assert_fast_same(ours, hf, texts)
    assert_fast_same(ours, hf, texts * 4, num_threads=2, adds=(True,))
    assert [(e.ids, e.tokens, e.offsets, e.word_ids) for e in ours.encode_batch(texts, num_threads=2)] == \
        [(e.ids, e.tokens, e.offsets, e.word_ids) for e in hf.encode_batch(texts)]
    for side in ("right", "left"):
        for t in (ours, hf):
            t.enable_truncation(24, stride=5, direction=side)
            t.enable_padding(length=30)
        for text in texts[:40]:
            a, b = ours.encode(text), hf.encode(text)
            assert (a.ids, a.tokens, a.offsets, a.word_ids, a.attention_mask) == \
                (b.ids, b.tokens, b.offsets, b.word_ids, b.attention_mask), text
            assert [(o.ids, o.tokens, o.offsets, o.word_ids) for o in a.overflowing] == \
                [(o.ids, o.tokens, o.offsets, o.word_ids) for o in b.overflowing], text
    for t in (ours, hf):
        t.no_truncation()
        t.no_padding()
    for x, y in zip(texts[:20], texts[1:21]):
        a, b = ours.encode(x, y), hf.encode(x, y)
        assert (a.ids, a.tokens, a.offsets, a.word_ids, a.type_ids) == (b.ids, b.tokens, b.offsets, b.word_ids, b.type_ids)


def test_texts_of_many_added_tokens(deepseek):
    """A text of tens of thousands of added tokens joins its parts in one vectorised pass (numpy
    per part took twice the general path's time): the same fields as tokenizers', truncated too."""
    ours, hf = deepseek
    for text in ["<｜begin▁of▁sentence｜>" * 3000, "<｜begin▁of▁sentence｜>a " * 3000, "x<｜end▁of▁sentence｜>" * 7 + "y"]:
        assert_same(ours, hf, text)
        assert ours.encode(text)._lazy is not None
    for t in (ours, hf):
        t.enable_truncation(50, stride=7)
    try:
        a, b = ours.encode("<｜begin▁of▁sentence｜>ab " * 40), hf.encode("<｜begin▁of▁sentence｜>ab " * 40)
        assert [(o.ids, o.tokens, o.offsets, o.word_ids) for o in [a] + a.overflowing] == \
            [(o.ids, o.tokens, o.offsets, o.word_ids) for o in [b] + b.overflowing]
    finally:
        for t in (ours, hf):
            t.no_truncation()


@pytest.mark.parametrize("form", ["NFC", "NFD", "NFKC", "NFKD"])
def test_marks_tokenizers_takes_for_starters(form, qwen_style):
    """Marks Python's unicodedata gives a combining class that tokenizers' older tables take
    for starters (class 0) neither reorder nor let a composition across them, as in tokenizers
    ("a\\u0898\\u0316" was reordered; found by a helper's scan): normalized text and offsets of
    every such mark beside marks of class 230, 220 and 1, and through a byte-level file's C
    paths (encode, encode_batch_fast)."""
    from scantok.hf.unicode_tables import _HF_CCC0

    js = json.dumps({"normalizer": {"type": form}, "pre_tokenizer": None,
                     "model": {"type": "WordLevel", "vocab": {"[UNK]": 0}, "unk_token": "[UNK]"}})
    hf, ours = HFTokenizer.from_str(js), scantok.Tokenizer.from_str(js)
    contexts = ["a{}\u0316", "a{}\u0301", "a\u0301{}", "a\u0316{}", "e{}\u0301", "a{}\u0334", "a\u0334{}", "x {} y"]
    texts = [c.format(chr(m)) for m in sorted(_HF_CCC0) for c in contexts]
    for text in texts:
        assert ours._normalize_str(text) == hf.normalizer.normalize_str(text), ascii(text)
        assert ours.encode(text).offsets == hf.encode(text).offsets, ascii(text)
    obj = json.loads(qwen_style.to_str())
    obj["normalizer"] = {"type": form}
    hf, ours = HFTokenizer.from_str(json.dumps(obj)), scantok.Tokenizer.from_str(json.dumps(obj))
    joined = [" ".join(texts[i:i + 40]) for i in range(0, len(texts), 40)]
    for text in joined:
        assert_same(ours, hf, text)
    assert_fast_same(ours, hf, joined, adds=(True,))


def test_byte_fallback_reads_bytes_as_tokenizers():
    """ByteFallback takes "<0xHH>" as a byte where Rust's u8::from_str_radix reads HH (two hex
    digits, or "+" and one): not " 1", "-0", "1\\n" or other digits, which Python's int() took
    (found by a helper's campaign), nor a token of six characters but more bytes."""
    toks = ["<0x+A>", "<0x0 >", "<0x 1>", "<0x-0>", "<0x1\n>", "<0x0A>", "<0x0a>", "<0x\u00e9>", "<0xe9>", "<0x+>",
            "<0x++>", "<0x\u0661\u0661>", "<0x+ >", "<0xC3>", "<0xA9>"]
    vocab = {t: i for i, t in enumerate(toks)}
    js = json.dumps({"model": {"type": "WordLevel", "vocab": vocab, "unk_token": "<0x0A>"},
                     "decoder": {"type": "Sequence", "decoders": [{"type": "ByteFallback"}, {"type": "Fuse"}]}})
    hf, ours = HFTokenizer.from_str(js), scantok.Tokenizer.from_str(js)
    for i in range(len(toks)):
        assert ours.decode([i]) == hf.decode([i]), toks[i]
    assert ours.decode([13, 14, 1, 13, 14]) == hf.decode([13, 14, 1, 13, 14])


def test_loaded_tokenizer_keeps_no_large_container_the_gc_walks():
    """A loaded tokenizer holds no large container that the cyclic GC keeps tracking: the file's
    merges (127,741 strs in DeepSeek V3's) as a list made every full collection visit each of
    them (11-19 ms a collection for one tokenizer, against 1 ms without it), and so did the
    frozenset of the 137,681 code points BertNormalizer removes (now range pairs). The
    tokenizer still saves the file it read, and a tokenizer made from it (add_tokens) still
    loads."""
    import gc
    import types

    from scantok.hf import unicode_tables

    tok = scantok.Tokenizer.from_file(str(DEEPSEEK))
    gc.collect()
    skip = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, types.MethodType)
    seen, stack, big = set(), [tok], []
    while stack:
        o = stack.pop()
        if id(o) in seen or isinstance(o, skip):
            continue
        seen.add(id(o))
        if not gc.is_tracked(o):
            continue
        if isinstance(o, (list, tuple, dict, set, frozenset)) and len(o) > 10_000:
            big.append((type(o).__name__, len(o)))
        stack.extend(gc.get_referents(o))
    assert not big
    assert not gc.is_tracked(unicode_tables._BERT_REMOVED)
    assert json.loads(tok.to_str()) == json.loads(DEEPSEEK.read_text(encoding="utf-8"))
    tok.add_tokens(["<new token>"])
    assert tok.encode("a <new token> b").tokens == ["a", "Ġ", "<new token>", "Ġb"]
