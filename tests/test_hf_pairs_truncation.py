"""scantok.Tokenizer's pairs, pre-tokenized input, truncation (with overflowing parts) and padding
against HuggingFace `tokenizers` 0.23.3 (the pinned oracle): every field of every Encoding,
overflowing parts included, for encode, encode_batch and encode_batch_fast, with each
post-processor; the parameters' checks, getters, and their tokenizer.json form."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import scantok
from scantok.hf.errors import HFError

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import Tokenizer as HFTokenizer, decoders, models, pre_tokenizers, processors, trainers  # noqa: E402

SHARED = Path(__file__).resolve().parents[2] / "shared"
if not SHARED.exists():
    SHARED = Path("/work/shared")
DEEPSEEK = SHARED / "hf" / "deepseek_v3" / "tokenizer.json"

TEXTS = ["", " ", "a", "Hello world", "  two  spaces ", "The quick brown fox jumps over the lazy dog.",
         "naïve café, 你好世界! 123 4567", "tab\there\nnew line", "x" * 40, "a b c d e f g h i j k l m n o p",
         "<|endoftext|> between <|endoftext|>", "[CLS] not special [SEP]", "😀 emoji 👩‍👩‍👧 run"]


def fields(e) -> tuple:
    """Every field of an Encoding, its word and sequence ids, the overflowing parts' too
    (recursively)."""
    return (e.ids, e.tokens, e.offsets, e.type_ids, e.special_tokens_mask, e.attention_mask, len(e),
            e.word_ids, e.sequence_ids, e.n_sequences, [fields(o) for o in e.overflowing])


def outcome(fn):
    """fn()'s fields, or the kind of error it raised (tokenizers raises Exception or, where Rust
    panics, PanicException, a BaseException; scantok an HFError for both)."""
    try:
        r = fn()
    except (KeyboardInterrupt, SystemExit):
        raise
    except TypeError:
        return "TypeError"
    except ValueError as e:
        return "ValueError" if not isinstance(e, HFError) else "error"
    except BaseException:  # noqa: BLE001 - tokenizers' errors and panics
        return "error"
    if r is None:
        return None
    return [fields(e) for e in r] if isinstance(r, list) else fields(r)


# -- tokenizers built here, one per post-processor ---------------------------------------------------
@pytest.fixture(scope="module")
def train_text():
    text = (SHARED / "corpus" / "en.txt").read_text(encoding="utf-8")[:200_000]
    return [text[i:i + 2000] for i in range(0, len(text), 2000)] + TEXTS


def _byte_level(train_text, prefix_space=True):
    tok = HFTokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=prefix_space)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(train_text, trainers.BpeTrainer(
        vocab_size=600, special_tokens=["<s>", "<pad>", "</s>", "<|endoftext|>"], show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return tok


@pytest.fixture(scope="module")
def built(train_text):
    base = _byte_level(train_text)
    s, e = base.token_to_id("<s>"), base.token_to_id("</s>")
    out = {}

    def variant(name, post):
        tok = HFTokenizer.from_str(base.to_str())
        tok.post_processor = post
        out[name] = tok

    variant("none", None)
    variant("byte_level_trim", processors.ByteLevel(trim_offsets=True, add_prefix_space=True))
    variant("roberta", processors.RobertaProcessing(("</s>", e), ("<s>", s), trim_offsets=True))
    variant("roberta_untrimmed", processors.RobertaProcessing(("</s>", e), ("<s>", s), trim_offsets=False))
    variant("bert", processors.BertProcessing(("</s>", e), ("<s>", s)))
    template = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s>:1 $A:0 </s> </s>:2 $B:1 </s>:1",
        special_tokens=[("<s>", s), ("</s>", e)])
    variant("template", template)
    variant("template_multi", processors.TemplateProcessing(
        single="$A [X]", pair="[X]:1 $B:0 $A:1 [X]", special_tokens=[{"id": "[X]", "ids": [s, e, s],
                                                                      "tokens": ["<s>", "</s>", "<s>"]}]))
    variant("sequence", processors.Sequence([processors.ByteLevel(trim_offsets=True), template]))
    # without a prefix space the whole text runs as one C call, and encodings are lazy views of
    # its arrays (truncation and padding included) where the post-processor only adds tokens
    base = _byte_level(train_text, prefix_space=False)
    variant("c_none", None)
    variant("c_bert", processors.BertProcessing(("</s>", e), ("<s>", s)))
    variant("c_roberta", processors.RobertaProcessing(("</s>", e), ("<s>", s), trim_offsets=False))
    typed = processors.TemplateProcessing(single="<s>:2 $A:1 </s>:3", pair="<s> $A </s> $B:1 </s>:1",
                                          special_tokens=[("<s>", s), ("</s>", e)])
    variant("c_template_typed", typed)
    variant("c_template_twice", processors.TemplateProcessing(single="$A </s> $A:1", pair="$A $B",
                                                              special_tokens=[("</s>", e)]))
    variant("c_sequence", processors.Sequence([typed, processors.BertProcessing(("</s>", e), ("<s>", s))]))
    variant("c_byte_level_trim", processors.ByteLevel(trim_offsets=True))
    return out


@pytest.fixture(scope="module")
def deepseek():
    return scantok.Tokenizer.from_file(DEEPSEEK), HFTokenizer.from_file(str(DEEPSEEK))


def _twin(hf: HFTokenizer):
    return scantok.Tokenizer.from_str(hf.to_str()), HFTokenizer.from_str(hf.to_str())


def _configure(ours, hf, rng: random.Random) -> None:
    """The same random truncation and padding (or none) on both (each may refuse its
    parameters: then both must)."""
    ours.no_truncation(), hf.no_truncation(), ours.no_padding(), hf.no_padding()
    if rng.random() < 0.8:
        kw = {"stride": rng.choice([0, 0, 1, 2, 5]), "strategy": rng.choice(["longest_first", "only_first",
                                                                            "only_second"]),
              "direction": rng.choice(["right", "left"])}
        ml = rng.choice([0, 1, 2, 3, 4, 5, 6, 8, 12, 20, 64])
        a, b = outcome(lambda: ours.enable_truncation(ml, **kw)), outcome(lambda: hf.enable_truncation(ml, **kw))
        assert a == b, (ml, kw)
        assert ours.truncation == hf.truncation
    if rng.random() < 0.6:
        kw = {"direction": rng.choice(["right", "left"]), "pad_id": rng.choice([0, 1, 7]),
              "pad_type_id": rng.choice([0, 3]), "pad_token": rng.choice(["[PAD]", "<pad>"]),
              "length": rng.choice([None, None, 0, 5, 17, 40]), "pad_to_multiple_of": rng.choice([None, 0, 4, 8])}
        ours.enable_padding(**kw)
        hf.enable_padding(**kw)
        assert ours.padding == hf.padding


def _inputs(rng: random.Random, pretokenized: bool):
    def seq():
        t = rng.choice(TEXTS)
        return t.split() if pretokenized else t
    singles = rng.random() < 0.4  # a batch of str only: the C paths' lazy encodings where they apply
    return [seq() if singles or rng.random() < 0.5 else (seq(), seq()) for _ in range(rng.randint(1, 5))]


def _compare(ours, hf, rng: random.Random) -> None:
    for pretokenized in (False, True):
        items = _inputs(rng, pretokenized)
        for add in (True, False):
            for item in items:
                args = item if isinstance(item, tuple) else (item,)
                a = outcome(lambda: ours.encode(*args, is_pretokenized=pretokenized, add_special_tokens=add))
                b = outcome(lambda: hf.encode(*args, is_pretokenized=pretokenized, add_special_tokens=add))
                assert a == b, (item, add, ours.truncation, ours.padding)
            for method in ("encode_batch", "encode_batch_fast"):
                a = outcome(lambda: getattr(ours, method)(items, is_pretokenized=pretokenized, add_special_tokens=add))
                b = outcome(lambda: getattr(hf, method)(items, is_pretokenized=pretokenized, add_special_tokens=add))
                assert a == b, (method, items, add, ours.truncation, ours.padding)


NAMES = ["none", "byte_level_trim", "roberta", "roberta_untrimmed", "bert", "template", "template_multi",
         "sequence", "c_none", "c_bert", "c_roberta", "c_template_typed", "c_template_twice", "c_sequence",
         "c_byte_level_trim"]


@pytest.mark.parametrize("name", NAMES)
def test_random_settings(built, name):
    ours, hf = _twin(built[name])
    rng = random.Random(name)
    for _ in range(40):
        _configure(ours, hf, rng)
        _compare(ours, hf, rng)


def test_deepseek(deepseek):
    """The C paths (lazy encodings, the batch) give way to the general one with truncation,
    padding or pairs: the same fields as tokenizers on DeepSeek V3's file."""
    ours, hf = deepseek
    rng = random.Random(3)
    try:
        for _ in range(25):
            _configure(ours, hf, rng)
            _compare(ours, hf, rng)
    finally:
        ours.no_truncation(), ours.no_padding(), hf.no_truncation(), hf.no_padding()


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32), st.lists(st.text(max_size=30), min_size=1, max_size=4))
def test_hypothesis(built, seed, texts):
    rng = random.Random(seed)
    ours, hf = _twin(built[rng.choice(NAMES)])
    _configure(ours, hf, rng)
    items = [t if rng.random() < 0.5 else (t, rng.choice(texts)) for t in texts]
    for method in ("encode_batch", "encode_batch_fast"):
        assert outcome(lambda: getattr(ours, method)(items)) == outcome(lambda: getattr(hf, method)(items))


# -- examples ----------------------------------------------------------------------------------------
def test_overflowing_pairs_cross(built):
    """Both sequences truncated: every overflowing part of one with the other and with each of the
    other's, as tokenizers combines them."""
    ours, hf = _twin(built["template"])
    for tok in (ours, hf):
        tok.enable_truncation(9, stride=1)
    a = ours.encode("a b c d e f g h i j", "k l m n o p q")
    b = hf.encode("a b c d e f g h i j", "k l m n o p q")
    assert fields(a) == fields(b)
    assert len(a.overflowing) > 4


def test_padding_batch_longest_and_fixed(built):
    ours, hf = _twin(built["bert"])
    texts = ["a", "a b c d", ("a b", "c")]
    for kw in ({}, {"length": 12, "direction": "left"}, {"pad_to_multiple_of": 8}):
        ours.enable_padding(**kw)
        hf.enable_padding(**kw)
        assert [fields(e) for e in ours.encode_batch(texts)] == [fields(e) for e in hf.encode_batch(texts)]
        assert [fields(e) for e in ours.encode_batch_fast(texts)] == [fields(e) for e in hf.encode_batch_fast(texts)]


def test_params_and_getters(built):
    ours, hf = _twin(built["roberta"])
    assert ours.truncation is None and ours.padding is None
    assert ours.num_special_tokens_to_add(False) == hf.num_special_tokens_to_add(False) == 2
    assert ours.num_special_tokens_to_add(True) == hf.num_special_tokens_to_add(True) == 4
    ours.enable_truncation(10, stride=3, strategy="only_second", direction="left")
    hf.enable_truncation(10, stride=3, strategy="only_second", direction="left")
    assert ours.truncation == hf.truncation
    ours.enable_padding(length=7, pad_token="<pad>", pad_id=1)
    hf.enable_padding(length=7, pad_token="<pad>", pad_id=1)
    assert ours.padding == hf.padding
    # the tokenizer.json form: each loads the other's
    assert json.loads(ours.to_str())["truncation"] == json.loads(hf.to_str())["truncation"]
    assert json.loads(ours.to_str())["padding"] == json.loads(hf.to_str())["padding"]
    again = scantok.Tokenizer.from_str(hf.to_str())
    assert again.truncation == hf.truncation and again.padding == hf.padding
    assert HFTokenizer.from_str(ours.to_str()).truncation == hf.truncation
    ours.no_truncation(), ours.no_padding()
    assert ours.truncation is None and ours.padding is None
    assert json.loads(ours.to_str())["truncation"] is None


@pytest.mark.parametrize("kw", [{"strategy": "longest"}, {"direction": "up"}, {"stride": 9}, {"stride": -1},
                                {"stride": 1.5}])
def test_bad_truncation(built, kw):
    """The same exception type as tokenizers (ValueError, OverflowError, TypeError), and nothing
    half set."""
    ours, hf = _twin(built["bert"])
    with pytest.raises(Exception) as want:  # noqa: B017 - the type is compared below
        hf.enable_truncation(10, **kw)
    with pytest.raises(want.type):
        ours.enable_truncation(10, **kw)
    assert ours.truncation is None


@pytest.mark.parametrize("kw", [{"direction": "middle"}, {"pad_id": -1}, {"pad_id": 2**32}, {"pad_token": 5},
                                {"length": -2}, {"length": "3"}])
def test_bad_padding(built, kw):
    ours, hf = _twin(built["bert"])
    with pytest.raises(Exception) as want:  # noqa: B017 - the type is compared below
        hf.enable_padding(**kw)
    with pytest.raises(want.type):
        ours.enable_padding(**kw)
    assert ours.padding is None


def test_panics_and_errors_are_errors(built):
    """Where tokenizers errs (only_second without a pair, a sequence too short) or panics (stride
    not below the length left for a sequence), scantok raises HFError."""
    ours, hf = _twin(built["bert"])
    for tok in (ours, hf):
        tok.enable_truncation(4, strategy="only_second")
    with pytest.raises(HFError, match="Second sequence not provided"):
        ours.encode("a b c d e f")
    with pytest.raises(Exception, match="Second sequence not provided"):
        hf.encode("a b c d e f")
    with pytest.raises(HFError, match="too short"):
        ours.encode("a b c d e f", "g")
    for tok in (ours, hf):
        tok.enable_truncation(4, stride=1)
    with pytest.raises(HFError, match="stride"):
        ours.encode("a b c d e f g h", "i j k l m n")
    assert ours.encode("a b c").ids == hf.encode("a b c").ids


def test_input_types(built):
    ours, hf = _twin(built["none"])
    for bad in (5, ["a"], None):
        with pytest.raises(TypeError):
            ours.encode(bad)
    with pytest.raises(TypeError):
        ours.encode("a", is_pretokenized=True)
    with pytest.raises(TypeError):
        ours.encode_batch([("a", "b", "c")])
    with pytest.raises(TypeError):
        ours.encode_batch("abc")
    assert fields(ours.encode(("a", "b"), is_pretokenized=True)) == fields(hf.encode(("a", "b"), is_pretokenized=True))
    assert [fields(e) for e in ours.encode_batch([["a", "b"]])] == [fields(e) for e in hf.encode_batch([["a", "b"]])]


def test_file_with_truncation_and_padding(built, tmp_path):
    """A tokenizer.json saved with truncation and padding set loads with them (it was refused)."""
    hf = HFTokenizer.from_str(built["template"].to_str())
    hf.enable_truncation(6)
    hf.enable_padding(length=8)
    path = tmp_path / "t.json"
    hf.save(str(path))
    ours = scantok.Tokenizer.from_file(path)
    for text in TEXTS:
        assert fields(ours.encode(text)) == fields(hf.encode(text))
    assert [fields(e) for e in ours.encode_batch_fast(TEXTS)] == [fields(e) for e in hf.encode_batch_fast(TEXTS)]


@pytest.mark.parametrize("patch", [{"truncation": {"max_length": 5}}, {"truncation": {"max_length": -1, "stride": 0,
                                   "strategy": "LongestFirst"}}, {"truncation": {"max_length": 5, "stride": 0,
                                   "strategy": "Shortest"}}, {"padding": {"strategy": "BatchLongest"}},
                                   {"padding": {"strategy": {"Fixed": "x"}, "direction": "Right",
                                                "pad_to_multiple_of": None, "pad_id": 0, "pad_type_id": 0,
                                                "pad_token": "[PAD]"}}])
def test_bad_file_params(built, patch):
    obj = {**json.loads(built["none"].to_str()), **patch}
    with pytest.raises(Exception):  # noqa: B017 - tokenizers refuses them too
        HFTokenizer.from_str(json.dumps(obj))
    with pytest.raises(HFError):
        scantok.Tokenizer.from_str(json.dumps(obj))


@pytest.mark.parametrize("kw", [{}, {"direction": "left", "pad_to_multiple_of": 8}, {"length": 700, "pad_id": 3}])
def test_padding_of_lazy_encodings(deepseek, built, kw):
    """Padding without truncation keeps the C paths' lazy encodings (the padding is a note on
    them): every field as tokenizers', for encode, encode_batch and encode_batch_fast; and on a
    file whose post-processor trims offsets (materialized encodings)."""
    text = (SHARED / "corpus" / "multi.txt").read_text(encoding="utf-8")[100_000:130_000]
    docs = [text[i:i + 2500] for i in range(0, len(text), 2500)] + ["", "a", "<｜begin▁of▁sentence｜>x"]
    for ours, hf in (deepseek, _twin(built["byte_level_trim"])):
        try:
            ours.enable_padding(**kw)
            hf.enable_padding(**kw)
            assert [fields(e) for e in ours.encode_batch(docs, num_threads=2)] == \
                [fields(e) for e in hf.encode_batch(docs)]
            assert [fields(e) for e in ours.encode_batch_fast(docs, num_threads=1)] == \
                [fields(e) for e in hf.encode_batch_fast(docs)]
            for d in docs[:3] + docs[-3:]:
                assert fields(ours.encode(d)) == fields(hf.encode(d))
        finally:
            ours.no_padding(), hf.no_padding()


def test_settings_changed_while_encoding(built):
    """enable_* / no_* from one thread while another encodes: each call sees one whole setting
    (its result is one of the four a fixed setting gives), never half of one or an error."""
    import threading

    ours, _ = _twin(built["c_template_typed"])
    texts = TEXTS[3:9]
    states = [(None, None), (8, None), (None, 12), (8, 12)]

    def apply(state):
        ml, length = state
        ours.enable_truncation(ml, stride=2) if ml else ours.no_truncation()
        ours.enable_padding(length=length) if length else ours.no_padding()

    want = []
    for state in states:
        apply(state)
        want.append([fields(e) for e in ours.encode_batch(texts)])
    apply(states[0])
    errors, stop = [], threading.Event()

    def toggle():
        rng = random.Random(1)
        while not stop.is_set():
            apply(rng.choice(states))

    th = threading.Thread(target=toggle)
    th.start()
    try:
        for _ in range(300):
            got = [fields(e) for e in ours.encode_batch(texts)]
            # truncation and padding are read together, but the toggler sets them one after the
            # other: every result is one of the four states'
            if got not in want:
                errors.append(got)
    finally:
        stop.set()
        th.join()
    assert not errors


# -- adding tokens ------------------------------------------------------------------------------------
def _added_state(tok) -> tuple:
    obj = json.loads(tok.to_str())
    return obj["added_tokens"], tok.get_vocab(), tok.get_vocab_size()


@pytest.mark.parametrize("name", ["none", "c_bert", "c_none"])
def test_add_tokens_and_special_tokens(built, deepseek, name):
    """add_tokens / add_special_tokens as tokenizers': the count, the ids (a vocabulary token keeps
    its id, a new one the next), options replaced when a content comes again with others, and
    every encode, decode and the file afterwards."""
    from tokenizers import AddedToken

    ours, hf = _twin(built[name])
    calls = [
        ("add_tokens", ["<x>", "<x>", "", "Ġthe", "hello world", {"content": "<y>", "lstrip": True}]),
        ("add_special_tokens", ["<x>", "[SEP]", {"content": "<z>", "rstrip": True}]),
        ("add_tokens", [{"content": "<x>", "single_word": True, "normalized": False}, "ab"]),
        ("add_special_tokens", ["<s>"]),
    ]
    texts = ["a <x> b", "<x><x>hello world", " <y>  <z> x", "[SEP]the", "abab <s>", "hello worlds"]
    for method, args in calls:
        theirs = [AddedToken(t["content"], **{k: v for k, v in t.items() if k != "content"},
                             **({"special": True} if method == "add_special_tokens" else {}))
                  if isinstance(t, dict) else t for t in args]
        assert getattr(ours, method)(args) == getattr(hf, method)(theirs)
        assert _added_state(ours) == _added_state(hf)
        # decode as tokenizers after loading its own file: its object keeps some state of a
        # token added again with other options (special for decode, an earlier normalized form)
        reloaded = HFTokenizer.from_str(hf.to_str())
        for text in texts:
            assert fields(ours.encode(text)) == fields(hf.encode(text)) == fields(reloaded.encode(text))
            ids = hf.encode(text).ids
            for skip in (True, False):
                assert ours.decode(ids, skip_special_tokens=skip) == reloaded.decode(ids, skip_special_tokens=skip)
        assert [fields(e) for e in ours.encode_batch_fast(texts)] == [fields(e) for e in hf.encode_batch_fast(texts)]
    assert HFTokenizer.from_str(ours.to_str()).encode(texts[1]).ids == hf.encode(texts[1]).ids


def test_add_tokens_errors(built):
    from tokenizers import AddedToken

    ours, _ = _twin(built["none"])
    with pytest.raises(TypeError):
        ours.add_tokens(("x",))
    with pytest.raises(TypeError):
        ours.add_tokens([5])
    with pytest.raises(HFError):
        ours.add_tokens([{"content": "x", "lstrip": "yes"}])
    # AddedToken("x") and AddedToken("x", normalized=True) read alike, and add_special_tokens
    # treats them apart in tokenizers: refused, nothing added
    before = ours.to_str()
    with pytest.raises(HFError, match="special=True"):
        ours.add_special_tokens(["ok", AddedToken("x")])
    assert ours.to_str() == before
    assert ours.add_special_tokens([AddedToken("x", special=True)]) == 1
