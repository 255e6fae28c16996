"""scantok.Tokenizer's lazy Encodings are made by scantok._pylist untracked by the cyclic GC
(as tokenizers' own are): a batch of short texts spent a third of its time in collections when
each Encoding and its lazy tuple were tracked.  That is sound only while nothing an encoding
holds can lead back to an encoding, or to an object a caller may store one on (the tokenizer):
checked here by walking everything reachable from encodings of every C path, and by the
tokenizer being freed when an encoding stored on it is the only thing left of it."""
from __future__ import annotations

import gc
import random
import sys
import types
import weakref

import pytest

pytest.importorskip("numpy")
pytest.importorskip("tokenizers")

import scantok  # noqa: E402
from scantok import _pylist  # noqa: E402
from scantok.hf.encoding import Encoding  # noqa: E402
from tokenizers import Tokenizer as HFTokenizer  # noqa: E402

from test_hf_char_bpe import as_shipped, train_char_bpe  # noqa: E402
from test_hf_tokenizer import DEEPSEEK  # noqa: E402

TEXTS = ["Hello world, this is a test.", "", "日本語のテキストと English 123", "x" * 3000,
         "<｜begin▁of▁sentence｜>hi there", " lead", "tabs\tand\nlines\r\n"]


def reachable(root) -> list:
    """Every object reachable from root through the GC's referents, not entering modules,
    their globals (a function's) or classes: those stay reachable from sys.modules anyway, so
    no cycle through them can become garbage."""
    stop = {id(vars(m)) for m in list(sys.modules.values()) if isinstance(m, types.ModuleType)}
    seen, out, stack = set(), [], [root]
    while stack:
        o = stack.pop()
        if id(o) in seen or id(o) in stop or isinstance(o, (type, types.ModuleType)):
            continue
        seen.add(id(o))
        out.append(o)
        stack.extend(gc.get_referents(o))
    return out


def assert_untracked_and_acyclic(enc: Encoding) -> None:
    assert not gc.is_tracked(enc) and not gc.is_tracked(enc._lazy)
    enc.tokens, enc.word_ids, enc.offsets  # noqa: B018  (what reading them keeps)
    found = reachable(enc)
    assert [o for o in found if isinstance(o, Encoding)] == [enc]
    assert not [o for o in found if isinstance(o, scantok.Tokenizer)]


@pytest.fixture(scope="module")
def deepseek():
    return scantok.Tokenizer.from_file(DEEPSEEK), HFTokenizer.from_file(str(DEEPSEEK))


@pytest.fixture(scope="module")
def llama2_style():
    js = as_shipped(train_char_bpe(random.Random("gc llama2"), byte_fallback=True, unk=True, fuse_unk=True))
    return scantok.Tokenizer.from_str(js), HFTokenizer.from_str(js)


@pytest.mark.parametrize("which", ["deepseek", "llama2_style"])
def test_lazy_encodings_are_untracked_and_lead_to_no_encoding(which, request):
    ours, hf = request.getfixturevalue(which)
    single = [ours.encode(t) for t in TEXTS]
    for threads in (1, 2):
        big = TEXTS * 40 + ["word " * 50_000]  # past PARALLEL_MIN: the pool's threads too
        batch, fast = ours.encode_batch(big, num_threads=threads), ours.encode_batch_fast(big, num_threads=threads)
        want, want_fast = hf.encode_batch(big), hf.encode_batch_fast(big)
        assert [e.ids for e in batch] == [e.ids for e in want]
        assert [e.offsets for e in batch] == [e.offsets for e in want]
        assert [e.tokens for e in batch] == [e.tokens for e in want]
        assert [e.ids for e in fast] == [e.ids for e in want_fast]
    lazy = [e for e in single + batch + fast if e._lazy is not None]
    assert len(lazy) > len(TEXTS) * 40  # the C paths took most of them
    for e in lazy[:len(TEXTS)] + lazy[-len(TEXTS):] + [single[i] for i in range(len(TEXTS)) if single[i]._lazy]:
        assert_untracked_and_acyclic(e)


def test_an_encoding_stored_on_its_tokenizer_does_not_keep_it():
    """The cycle tokenizer -> encoding -> ... -> tokenizer would never be collected with an
    untracked encoding in it: there is none (the encoding keeps the model's token table, not
    a method of the tokenizer)."""
    tok = scantok.Tokenizer.from_file(DEEPSEEK)
    tok.kept = tok.encode("Hello world")
    tok.kept_batch = tok.encode_batch(["a b", "c d"]) + tok.encode_batch_fast(["e f"])
    assert not gc.is_tracked(tok.kept)
    ref = weakref.ref(tok)
    del tok
    gc.collect()
    assert ref() is None


def test_truncated_and_padded_lazy_encodings(deepseek):
    ours, hf = deepseek
    ours, hf = scantok.Tokenizer.from_str(ours.to_str()), HFTokenizer.from_str(hf.to_str())
    for t in (ours, hf):
        t.enable_truncation(8, stride=2)
        t.enable_padding(length=10)
    text = "one two three four five six seven eight nine ten eleven"
    x, y = ours.encode(text), hf.encode(text)
    assert (x.ids, x.offsets, x.attention_mask) == (y.ids, y.offsets, y.attention_mask)
    assert [o.ids for o in x.overflowing] == [o.ids for o in y.overflowing]
    assert not [o for o in reachable(x) if isinstance(o, scantok.Tokenizer)]


def test_encoding_class_checks_its_class():
    class WithDict:
        pass

    class NoPad:
        __slots__ = ("_lazy", "_overflowing")

    class WithFinalizer:
        __slots__ = ("_lazy", "_overflowing", "_pad")

        def __del__(self):
            pass

    for cls in (WithDict, NoPad, WithFinalizer, int, 3):
        with pytest.raises(TypeError, match="encoding_class"):
            _pylist.encoding_class(cls)
    _pylist.encoding_class(Encoding)  # as scantok.hf.encoding registers it
    e = _pylist.lazy_encoding(b"", 0, ((), (), 0, None, None), None, None)
    assert type(e) is Encoding and e.ids == [] and not gc.is_tracked(e)
    with pytest.raises(ValueError, match="lazy_encodings"):
        _pylist.lazy_encodings([b""], 4, (), None, ["a", "b"])
    assert _pylist.lazy_encodings([b"\0" * 8, 7, [1, 2]], 4, ((), (), 0, None, None), None, None)[1] is None


def test_batch_of_short_texts_collects_little(deepseek):
    """Not a timing: the objects a batch leaves for the collector.  Each lazy Encoding used to
    add two tracked objects; now the batch's list is the only one (and the texts' list)."""
    ours, _ = deepseek
    texts = [f"text number {i} of the batch" for i in range(5000)]
    for method in (ours.encode_batch, ours.encode_batch_fast):
        method(texts, num_threads=1)
        gc.collect()
        before = len(gc.get_objects())
        out = method(texts, num_threads=1)
        assert len(gc.get_objects()) - before < 50
        assert all(not gc.is_tracked(e) for e in out)
        del out

