"""scantok.Tokenizer's encode_special_tokens, post_process, get_added_tokens_decoder and
from_buffer, and scantok.AddedToken, against HuggingFace `tokenizers` 0.23.3 (the pinned
oracle)."""
from __future__ import annotations

import json
import pickle

import pytest

import scantok
from fuzz_setup import SHARED, mappings, outcome

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import Tokenizer as HFTokenizer, normalizers, pre_tokenizers, processors  # noqa: E402

DEEPSEEK = SHARED / "hf" / "deepseek_v3" / "tokenizer.json"
BOS, EOS = "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"


def view(e, exact_sequence: bool = True) -> tuple:
    return (e.ids, e.tokens, e.offsets, e.type_ids, e.special_tokens_mask, e.attention_mask, e.word_ids,
            e.sequence_ids, mappings(e, exact_sequence=exact_sequence),
            [view(o, exact_sequence) for o in e.overflowing])


@pytest.fixture(scope="module")
def deepseek_file():
    return DEEPSEEK.read_text(encoding="utf-8")


def _general() -> HFTokenizer:
    """A file on scantok's general path: a normalizer, normalized and raw special tokens."""
    vocab = {c: i for i, c in enumerate(["[UNK]", "[CLS]", "[SEP]"] + list("abcdefghijklmnopqrstuvwxyz<>/|.!? "))}
    tok = HFTokenizer(tokenizers.models.BPE(vocab, [], unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.add_special_tokens(["[CLS]", "[SEP]", tokenizers.AddedToken("<Mask>", normalized=True, special=True)])
    tok.add_tokens(["hello"])
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
                                                       special_tokens=[("[CLS]", 1), ("[SEP]", 2)])
    return tok


SPECIAL_TEXTS = [f"{BOS}Hi{EOS} there", f"a{EOS}{EOS}b", "no special here", f"{EOS}", "",
                 "[CLS] x [SEP] <mask> <MASK> hello [cls]", "Hello<mask>World"]


@pytest.mark.parametrize("which", ["deepseek", "general"])
def test_encode_special_tokens(deepseek_file, which):
    text = deepseek_file if which == "deepseek" else _general().to_str()
    ours, ref = scantok.Tokenizer.from_str(text), HFTokenizer.from_str(text)
    assert ours.encode_special_tokens is ref.encode_special_tokens is False
    for flag in (True, False, True):
        ours.encode_special_tokens = ref.encode_special_tokens = flag
        assert ours.encode_special_tokens is flag
        for t in SPECIAL_TEXTS:
            assert view(ours.encode(t)) == view(ref.encode(t)), (flag, t)
            assert view(ours.encode(t, t)) == view(ref.encode(t, t)), (flag, t)
        assert [view(e) for e in ours.encode_batch(SPECIAL_TEXTS * 3)] == \
            [view(e) for e in ref.encode_batch(SPECIAL_TEXTS * 3)]
        assert [e.ids for e in ours.encode_batch_fast(SPECIAL_TEXTS * 3, num_threads=2)] == \
            [e.ids for e in ref.encode_batch_fast(SPECIAL_TEXTS * 3)]
        ids = ref.encode(SPECIAL_TEXTS[0]).ids + [0, 1]
        assert ours.decode(ids) == ref.decode(ids)  # decode still skips them
    # kept across add_tokens, as tokenizers keeps it; not written to the file
    assert ours.add_tokens(["zzq"]) == ref.add_tokens(["zzq"])
    assert ours.encode_special_tokens is ref.encode_special_tokens is True
    assert view(ours.encode(SPECIAL_TEXTS[0] + " zzq")) == view(ref.encode(SPECIAL_TEXTS[0] + " zzq"))
    assert scantok.Tokenizer.from_str(ours.to_str()).encode_special_tokens is False
    with pytest.raises(TypeError, match="bool"):
        ours.encode_special_tokens = 1
    with pytest.raises(TypeError):
        ref.encode_special_tokens = 1


def test_added_token():
    a = scantok.AddedToken("x")
    assert repr(a) == repr(tokenizers.AddedToken("x"))
    assert str(a) == "x" and a.normalized and not a.special
    for kw in ({"special": True}, {"special": True, "normalized": True}, {"lstrip": True, "single_word": True},
               {"rstrip": True, "normalized": False}):
        assert repr(scantok.AddedToken("<t>", **kw)) == repr(tokenizers.AddedToken("<t>", **kw)), kw
    assert a == scantok.AddedToken("x") and hash(a) == hash(scantok.AddedToken("x"))
    assert a != scantok.AddedToken("x", special=True) and a != "x"
    assert pickle.loads(pickle.dumps(scantok.AddedToken("y", lstrip=True))) == scantok.AddedToken("y", lstrip=True)
    assert repr(scantok.AddedToken(None)) == repr(tokenizers.AddedToken(None)) == repr(scantok.AddedToken())
    assert not (a < scantok.AddedToken("y")) and not (a >= a)
    import numpy as np

    assert scantok.AddedToken("x", lstrip=np.bool_(True)).lstrip is True
    for bad in (lambda m: m.AddedToken(3), lambda m: m.AddedToken("x", lstrip=1), lambda m: m.AddedToken("x", True)):
        for mod in (scantok, tokenizers):
            with pytest.raises(TypeError):
                bad(mod)
    with pytest.warns(UserWarning, match="Ignored unknown kwarg option foo"):
        scantok.AddedToken("x", foo=1)
    # content and special can be set, the other options not (as tokenizers')
    for mod in (scantok, tokenizers):
        t = mod.AddedToken("x")
        t.content, t.special = "y", True
        assert repr(t).startswith('AddedToken("y"') and not t.normalized
        with pytest.raises(AttributeError):
            t.lstrip = True


def test_added_token_pickled_keeps_normalized():
    """Pickled (or copied), an AddedToken keeps normalized as it read then, as tokenizers':
    add_special_tokens afterwards does not change it."""
    import copy

    hf = HFTokenizer(tokenizers.models.WordLevel({"[UNK]": 0, "abc": 1}, unk_token="[UNK]"))
    hf.normalizer = normalizers.Lowercase()
    hf.pre_tokenizer = pre_tokenizers.Whitespace()
    for how in (lambda t: pickle.loads(pickle.dumps(t)), copy.copy, copy.deepcopy):
        ours, ref = scantok.Tokenizer.from_str(hf.to_str()), HFTokenizer.from_str(hf.to_str())
        mine, theirs = how(scantok.AddedToken("ABC")), how(tokenizers.AddedToken("ABC"))
        assert repr(mine) == repr(theirs)
        ours.add_special_tokens([mine])
        ref.add_special_tokens([theirs])
        assert view(ours.encode("abc ABC")) == view(ref.encode("abc ABC"))
        assert ours.to_str() == ref.to_str() or \
            [t["normalized"] for t in json.loads(ours.to_str())["added_tokens"]] == \
            [t["normalized"] for t in json.loads(ref.to_str())["added_tokens"]]


def test_add_special_tokens_with_added_token(deepseek_file):
    """scantok.AddedToken knows whether normalized was given: add_special_tokens(AddedToken("x"))
    is tokenizers' add_special_tokens of that token (normalized False), and marks the caller's
    token special, as tokenizers' binding does."""
    hf = _general()
    ours, ref = scantok.Tokenizer.from_str(hf.to_str()), HFTokenizer.from_str(hf.to_str())
    mine = [scantok.AddedToken("Zed"), scantok.AddedToken("yy", normalized=True), scantok.AddedToken("q", lstrip=True)]
    theirs = [tokenizers.AddedToken("Zed", special=True), tokenizers.AddedToken("yy", normalized=True, special=True),
              tokenizers.AddedToken("q", lstrip=True)]
    assert ours.add_special_tokens(mine) == ref.add_special_tokens(theirs)
    assert all(t.special for t in mine) and all(t.special for t in theirs)
    assert repr(ours.get_added_tokens_decoder()) == repr(ref.get_added_tokens_decoder())
    for t in ("zed ZED Zed yy YY a q b", "xq q"):
        assert view(ours.encode(t)) == view(ref.encode(t)), t
    assert ours.add_tokens([scantok.AddedToken("Ww", special=True)]) == \
        ref.add_tokens([tokenizers.AddedToken("Ww", special=True)])
    assert repr(ours.get_added_tokens_decoder()) == repr(ref.get_added_tokens_decoder())


def test_get_added_tokens_decoder(deepseek_file):
    ours, ref = scantok.Tokenizer.from_str(deepseek_file), HFTokenizer.from_str(deepseek_file)
    got, want = ours.get_added_tokens_decoder(), ref.get_added_tokens_decoder()
    assert len(got) == len(want) > 1000
    assert sorted(got) == sorted(want)
    assert all(repr(got[i]) == repr(want[i]) for i in want)


@pytest.mark.parametrize("which", ["deepseek", "general"])
def test_post_process(deepseek_file, which):
    text = deepseek_file if which == "deepseek" else _general().to_str()
    ours, ref = scantok.Tokenizer.from_str(text), HFTokenizer.from_str(text)
    texts = ["Hello there, world", "a b c d e f g h", "[CLS] x", ""]
    for setting in (None, "truncation", "padding"):
        if setting == "truncation":
            for tok in (ours, ref):
                tok.enable_truncation(6, stride=1)
        elif setting == "padding":
            for tok in (ours, ref):
                tok.enable_padding(length=12, direction="left")
        for a in texts:
            for b in (None, texts[1]):
                ea, eb = ours.encode(a, add_special_tokens=False), ref.encode(a, add_special_tokens=False)
                pa = None if b is None else ours.encode(b, add_special_tokens=False)
                pb = None if b is None else ref.encode(b, add_special_tokens=False)
                for add in (True, False):
                    # encodings made by encode carry sequence ranges: the pair's then overlap
                    # (tokenizers' token_to_sequence is then its hash map's order)
                    got = outcome(lambda: view(ours.post_process(ea, pa, add), False))
                    want = outcome(lambda: view(ref.post_process(eb, pb, add), False))
                    assert got == want, (setting, a, b, add)
                assert view(ea) == view(eb)  # the arguments are left as they were
    with pytest.raises(TypeError):
        ours.post_process(None)
    with pytest.raises(TypeError):
        ours.post_process(ours.encode("x"), "y")


def test_from_buffer(deepseek_file):
    data = deepseek_file.encode("utf-8")
    ours, ref = scantok.Tokenizer.from_buffer(data), HFTokenizer.from_buffer(data)
    assert ours.encode("Hello world").ids == ref.encode("Hello world").ids
    with pytest.raises(TypeError):
        scantok.Tokenizer.from_buffer(deepseek_file)
    with pytest.raises(scantok.HFError):
        scantok.Tokenizer.from_buffer(b"{not json")


def test_pickle(deepseek_file):
    """A Tokenizer pickles as its file (settings in the file kept, encode_special_tokens not),
    as tokenizers'."""
    import copy

    ours, ref = scantok.Tokenizer.from_str(deepseek_file), HFTokenizer.from_str(deepseek_file)
    for tok in (ours, ref):
        tok.enable_truncation(7, stride=2)
        tok.add_special_tokens(["<my>"])
        tok.encode_special_tokens = True
    a, b = pickle.loads(pickle.dumps(ours)), pickle.loads(pickle.dumps(ref))
    assert a.encode_special_tokens is b.encode_special_tokens is False
    text = "Hello <my> world, and more words here"
    assert view(a.encode(text)) == view(b.encode(text))
    assert view(copy.deepcopy(ours).encode(text)) == view(copy.deepcopy(ref).encode(text))


def test_async_methods(deepseek_file):
    import asyncio

    ours, ref = scantok.Tokenizer.from_str(deepseek_file), HFTokenizer.from_str(deepseek_file)

    async def calls(tok):
        one = await tok.async_encode("Hello world", "and a pair")
        batch = await tok.async_encode_batch(["a b", ("c", "d"), SPECIAL_TEXTS[0]])
        fast = await tok.async_encode_batch_fast(["a b", "x y z"], add_special_tokens=False)
        both = await asyncio.gather(tok.async_encode("one"), tok.async_encode("two"))
        text = await tok.async_decode_batch([[1, 2, 19923], [3]], skip_special_tokens=False)
        return view(one), [view(e) for e in batch], [e.ids for e in fast], [view(e) for e in both], text

    assert asyncio.run(calls(ours)) == asyncio.run(calls(ref))
    with pytest.raises(RuntimeError, match="event loop"):
        ours.async_encode("no loop running")
    with pytest.raises(RuntimeError):
        ref.async_encode("no loop running")

    async def read_at_the_call(tok):
        """The inputs and the tokenizer as they are at the call: changes made before the
        future runs do not reach it; bad arguments raise at the call."""
        errors = []
        for bad in (lambda: tok.async_encode(5), lambda: tok.async_encode_batch([5]),
                    lambda: tok.async_encode_batch("text"), lambda: tok.async_decode_batch([[-1]])):
            try:
                bad()
            except (TypeError, OverflowError) as e:
                errors.append(type(e).__name__)
        batch = ["Hello there world", ("a pair", "of texts")]
        fut = tok.async_encode_batch(batch)
        one = tok.async_encode("Hello there world")
        batch.append("more")
        tok.enable_truncation(2)
        tok.encode_special_tokens = not tok.encode_special_tokens
        got = [view(e) for e in await fut], view(await one)
        tok.no_truncation()
        return errors, got

    ours, ref = scantok.Tokenizer.from_str(deepseek_file), HFTokenizer.from_str(deepseek_file)
    assert asyncio.run(read_at_the_call(ours)) == asyncio.run(read_at_the_call(ref))


def test_split_on_the_empty_string_is_refused():
    """tokenizers cuts the text into characters for a Split on "" whatever the behavior (the
    empty match at every position); scantok refuses it at load, as a regex that matches the
    empty string (it had ignored the split)."""
    hf = HFTokenizer(tokenizers.models.BPE({"a": 0, "b": 1, "ab": 2}, [("a", "b")]))
    hf.pre_tokenizer = pre_tokenizers.Split("", "isolated")
    assert hf.encode("abab").ids == [0, 1, 0, 1]
    with pytest.raises(scantok.UnsupportedComponentError, match="empty string"):
        scantok.Tokenizer.from_str(hf.to_str())
