"""The short-text path of ``Encoding.encode_ordinary`` and ``encode`` (``scantok._pylist.
encode_small``: one C call for an exact str of up to ``BPE_SMALL_MAX`` bytes of UTF-8), against
tiktoken 0.14.0: the same ids, the same errors, and every text the path declines (too long, a
lone surrogate, a str subclass, a special token's prefix, arguments it does not take) handed to
the general path, which gives tiktoken's result."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import scantok
from scantok import _pylist
from scantok._native import lib
from scantok.encoding import _SMALL_FN
from strategies import hard_text
from test_encoding_oracle import SPECIAL_FRAGMENTS, tiktoken_encoding, vocab_dir

SMALL = lib.BPE_SMALL_MAX
NAMES = ["r50k_base", "cl100k_base", "o200k_base", "o200k_harmony"]


@pytest.fixture(scope="module", autouse=True)
def _vocab():
    vocab_dir()


def pair(name):
    return scantok.get_encoding(name), tiktoken_encoding(name)


def small(e, text, screen=None):
    """The C entry point itself: a list, or None where it declines."""
    return _pylist.encode_small(_SMALL_FN, e._small_t, e._small_dfa, text, screen)


class Sub(str):
    pass


# every byte length around the limit, in 1-, 2-, 3- and 4-byte characters
EDGE = [c * (SMALL // len(c.encode()) + d) for c in ("a", "é", "€", "😀") for d in (-1, 0, 1)]
EDGE += ["a" * (SMALL - 1) + "é", "a" * (SMALL - 2) + "é", "é" * (SMALL // 2 - 1) + "€", ""]
TEXTS = ["hello world", " hello", "héllo wörld 你好", "𝄞 music", "  \n\n\t x", "123456789", "don't",
         "line of code: if (x != 0x1F) { return y; }", "\u0301", "ﬁ", "a" * 300]


@pytest.mark.parametrize("name", NAMES)
def test_same_ids_as_tiktoken(name):
    e, t = pair(name)
    for text in TEXTS + EDGE:
        want = t.encode_ordinary(text)
        assert e.encode_ordinary(text) == want, text[:40]
        assert e.encode(text) == t.encode(text) == want
        assert e.encode(text, disallowed_special=()) == want
        assert e.encode(text, allowed_special="all") == t.encode(text, allowed_special="all")


@pytest.mark.parametrize("name", NAMES)
def test_declines_what_it_does_not_take(name):
    e, _ = pair(name)
    nbytes = lambda s: len(s.encode())  # noqa: E731
    for text in EDGE:
        got = small(e, text)
        assert (got is None) == (nbytes(text) > SMALL), (len(text), nbytes(text))
    assert small(e, "a\ud800b") is None  # a lone surrogate: the general path decides
    assert small(e, Sub("hello")) is None
    for not_str in (b"hello", None, 3, ["a"]):
        assert small(e, not_str) is None
    assert small(e, "x <|endoftext|>", b"<|") is None
    assert small(e, "x <| y", b"<|") is None  # the prefix alone is enough to decline
    assert small(e, "x < | y |>", b"<|") == e.encode_ordinary("x < | y |>")
    assert small(e, "anything", b"") is None  # no common prefix: every text takes the full check


def test_bad_arguments_are_typed_errors():
    e = scantok.get_encoding("cl100k_base")
    with pytest.raises(TypeError, match="encode_small"):
        _pylist.encode_small(_SMALL_FN, e._small_t, e._small_dfa, "x")
    with pytest.raises(TypeError, match="screen"):
        small(e, "x", "<|")
    with pytest.raises(ValueError, match="NULL"):
        _pylist.encode_small(_SMALL_FN, 0, e._small_dfa, "x", None)
    with pytest.raises(TypeError):
        _pylist.encode_small("fn", e._small_t, e._small_dfa, "x", None)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_harmony"])
def test_special_tokens_and_arguments(name):
    """Every argument combination gives tiktoken's ids or tiktoken's error, short texts with and
    without special tokens."""
    e, t = pair(name)
    specials = sorted(t.special_tokens_set)
    args = [
        {}, {"disallowed_special": ()}, {"disallowed_special": set()}, {"disallowed_special": frozenset()},
        {"disallowed_special": []}, {"allowed_special": "all"},
        {"allowed_special": "all", "disallowed_special": ()}, {"allowed_special": {specials[0]}},
        {"allowed_special": set(), "disallowed_special": {specials[-1]}},
        {"disallowed_special": "all"}, {"allowed_special": frozenset()},
    ]
    for text in ["hi", "x <|endoftext|> y", f"a{specials[-1]}b", "<|", "<|endoftext", " < |", "é<|return|>"]:
        for kw in args:
            try:
                want = t.encode(text, **kw)
            except ValueError as err:
                with pytest.raises(ValueError) as got:
                    e.encode(text, **kw)
                assert str(got.value) == str(err), (text, kw)
                continue
            assert e.encode(text, **kw) == want, (text, kw)


def test_encodings_without_a_screen():
    """An encoding without special tokens screens nothing; one whose special tokens share no
    prefix screens every text out of the path (the general path checks them)."""
    t = tiktoken_encoding("r50k_base")
    none = scantok.Encoding("no_specials", pat_str=t._pat_str, mergeable_ranks=t._mergeable_ranks, special_tokens={})
    assert none._small_screen is None
    assert none.encode("hi there") == t.encode_ordinary("hi there")
    mixed = scantok.Encoding("mixed", pat_str=t._pat_str, mergeable_ranks=t._mergeable_ranks,
                             special_tokens={"<|endoftext|>": 50256, "[SEP]": 50257})
    assert mixed._small_screen == b""
    assert mixed.encode("hi [SEP]", allowed_special="all") == t.encode_ordinary("hi ") + [50257]
    with pytest.raises(ValueError, match="disallowed special token"):
        mixed.encode("hi [SEP]")
    assert mixed.encode("hi there") == t.encode_ordinary("hi there")
    runtime = scantok.Encoding("runtime", pat_str=r"\w+|\s+|[^\w\s]+", mergeable_ranks=t._mergeable_ranks,
                               special_tokens={"<|endoftext|>": 50256})
    text = "hello, world <|endoftext|>"
    assert runtime.encode_ordinary(text) == [i for p in ("hello", ",", " ", "world", " ", "<|", "endoftext", "|>")
                                             for i in t.encode_ordinary(p)]
    assert runtime.encode(text, allowed_special="all")[-1] == 50256


def test_general_path_errors_unchanged():
    e, t = pair("o200k_base")
    for bad in (None, 3, b"hi"):
        with pytest.raises(TypeError):
            t.encode_ordinary(bad)
        with pytest.raises(TypeError):
            e.encode_ordinary(bad)
    # lone surrogates: tiktoken's replacement, through the general path
    assert e.encode_ordinary("a\ud800b") == t.encode_ordinary("a\ud800b")
    assert e.encode("a\udfffb") == t.encode("a\udfffb")
    assert e.encode_ordinary(Sub("hello")) == t.encode_ordinary("hello")


@settings(max_examples=300, deadline=None)
@given(hard_text(max_fragments=30), st.sampled_from(NAMES), st.sampled_from(SPECIAL_FRAGMENTS + [""]))
def test_hypothesis(text, name, special):
    e, t = pair(name)
    text = text + special if len(text) % 2 else special + text
    assert e.encode_ordinary(text) == t.encode_ordinary(text)
    assert e.encode(text, allowed_special="all") == t.encode(text, allowed_special="all")
    assert e.encode(text, disallowed_special=()) == t.encode(text, disallowed_special=())
    try:
        want = t.encode(text)
    except ValueError:
        with pytest.raises(ValueError):
            e.encode(text)
    else:
        assert e.encode(text) == want


@pytest.mark.parametrize("name", NAMES)
def test_count_takes_the_path_too(name):
    e, t = pair(name)
    for text in TEXTS + EDGE[:4] + ["x <|endoftext|> y", "<|"]:
        for kw in ({}, {"disallowed_special": ()}, {"allowed_special": "all"}):
            try:
                want = len(t.encode(text, **kw))
            except ValueError:
                with pytest.raises(ValueError):
                    e.count(text, **kw)
                continue
            assert e.count(text, **kw) == want, (text, kw)


@pytest.mark.parametrize("name", NAMES)
def test_decode_of_short_lists(name):
    """decode / decode_bytes of a short list of ints in one C call (scantok._pylist.decode_small):
    tiktoken's bytes; other sequences, long lists, ints out of range and unknown tokens take
    the general path (tiktoken's results and errors)."""
    e, t = pair(name)
    ids = t.encode("héllo wörld 你好 <|endoftext|> 😀", allowed_special="all")
    for toks in (ids, [], ids[:1], ids * 500, tuple(ids), [True, 2], list(range(5000))):
        assert e.decode_bytes(toks) == t.decode_bytes(toks)
        assert e.decode(toks) == t.decode(toks)
    split = t.encode("😀")  # a character split over tokens: 'replace' on a part
    assert e.decode(split[:1]) == t.decode(split[:1])
    for bad in ([t.n_vocab + 5], [1, -1], [2**32], [2**64], [1, None], [1.0]):
        with pytest.raises(Exception) as want:
            t.decode_bytes(bad)
        with pytest.raises(type(want.value)):
            e.decode_bytes(bad)
    s = scantok._pylist.decode_small
    assert s(scantok.encoding._DECODE_LEN_FN, scantok.encoding._DECODE_FN, e._small_t, [2**33]) is None
    assert s(scantok.encoding._DECODE_LEN_FN, scantok.encoding._DECODE_FN, e._small_t, [1] * 4097) is None
    with pytest.raises(ValueError, match="NULL"):
        s(0, scantok.encoding._DECODE_FN, e._small_t, [1])
    with pytest.raises(TypeError, match="decode_small"):
        s(1, 2, 3)
