"""CharTokenizer: the exact specification of issue 4, examples and properties."""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from scantok.char import ALLOWED_CHARS, CharTokenizer, CharVocabError

TOK = CharTokenizer()
ALLOWED = set(ALLOWED_CHARS)


# -- vocabulary order -------------------------------------------------------------------------
def test_vocab_order_exact():
    v = TOK.get_vocab()
    assert len(v) == 99 == TOK.vocab_size
    assert v["<PAD>"] == 0 and v["<UNK>"] == 1
    assert v["\t"] == 2 and v["\n"] == 3 and v[" "] == 4 and v["!"] == 5
    assert v["A"] == ord("A") - 28 and v["~"] == 98
    expected = ["<PAD>", "<UNK>", "\t", "\n"] + [chr(c) for c in range(32, 127)]
    assert sorted(v, key=v.get) == expected
    assert sorted(v.values()) == list(range(99))
    for c in range(32, 127):
        assert v[chr(c)] == c - 28


def test_token_id_lookups():
    assert TOK.token_to_id("a") == ord("a") - 28
    assert TOK.token_to_id("é") is None
    assert TOK.id_to_token(1) == "<UNK>" and TOK.id_to_token(0) == "<PAD>"
    assert TOK.id_to_token(99) is None
    assert TOK.pad_id == 0 and TOK.unk_id == 1


# -- normalize --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text,expected",
    [
        ("", ""),
        ("Hello, world!", "Hello, world!"),
        ("a\tb\nc", "a\tb\nc"),
        ("a\rb", "a<UNK>b"),
        ("\x00\x1f\x7f", "<UNK><UNK><UNK>"),
        ("café", "caf<UNK>"),
        ("日本", "<UNK><UNK>"),
        ("😀", "<UNK>"),  # one code point, one placeholder
        ("e\u0301", "e<UNK>"),  # combining mark is its own character
        ("\ud800", "<UNK>"),  # lone surrogate
        ("\x85\xa0", "<UNK><UNK>"),
        ("~ ", "~ "),
    ],
)
def test_normalize_examples(text, expected):
    assert CharTokenizer.normalize(text) == expected
    assert TOK.normalize(text) == expected


def test_normalize_type_error():
    with pytest.raises(TypeError):
        CharTokenizer.normalize(b"abc")  # type: ignore[arg-type]


# -- encode / decode --------------------------------------------------------------------------
def test_encode_examples():
    assert TOK.encode("") == []
    assert TOK.encode("Hi!") == [ord("H") - 28, ord("i") - 28, 5]
    assert TOK.encode("\t\n ") == [2, 3, 4]
    assert TOK.encode("é") == [1]  # a single id, not the five characters of <UNK>
    assert TOK.encode("aé😀b") == [69, 1, 1, 70]
    # the placeholder in already-normalized text is also one id
    assert TOK.encode("<UNK>") == [1]
    assert TOK.encode("x<UNK>y") == [ord("x") - 28, 1, ord("y") - 28]
    assert TOK.encode("<UNK") == [ord(c) - 28 for c in "<UNK"]
    assert TOK.encode("<UN\x00K>") == TOK.encode("<UN<UNK>K>")


def test_encode_long_matches_short_path():
    text = "Grüße, 世界!\tnew\nline <UNK> \ud800 end " * 50
    ids = TOK.encode(text)
    assert ids == [i for chunk in text.split(" ") for i in TOK.encode(chunk) + [4]][:-1]
    assert TOK.decode(ids) == TOK.normalize(text)
    assert TOK.encode_numpy(text).tolist() == ids


def test_decode_examples():
    assert TOK.decode([]) == ""
    assert TOK.decode([0, 0]) == ""
    assert TOK.decode([69, 1, 0, 70]) == "a<UNK>b"
    assert TOK.decode(np.array([69, 70])) == "ab"
    with pytest.raises(ValueError, match="99"):
        TOK.decode([99])
    with pytest.raises(ValueError):
        TOK.decode([-1])


def test_encode_type_error():
    with pytest.raises(TypeError):
        TOK.encode(b"abc")  # type: ignore[arg-type]


# -- properties -------------------------------------------------------------------------------
ANY_TEXT = st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=200)
MOSTLY_ASCII = st.lists(
    st.sampled_from(list(ALLOWED_CHARS) + ["é", "\r", "<UNK>", "<UN", "K>", "\x00", "😀"]), max_size=100
).map("".join)


@settings(max_examples=400)
@given(st.one_of(ANY_TEXT, MOSTLY_ASCII))
def test_prop_round_trip_normalized(text):
    ids = TOK.encode(text)
    assert TOK.decode(ids) == TOK.normalize(text)
    assert TOK.encode(TOK.normalize(text)) == ids
    assert TOK.normalize(TOK.normalize(text)) == TOK.normalize(text)


@settings(max_examples=400)
@given(st.one_of(ANY_TEXT, MOSTLY_ASCII))
def test_prop_encode_definition(text):
    # Reference: one id per character; each unknown character and each literal <UNK> is id 1.
    ids = TOK.encode(text)
    expected = []
    i = 0
    while i < len(text):
        if text.startswith("<UNK>", i):
            expected.append(1)
            i += 5
            continue
        ch = text[i]
        expected.append(TOK.get_vocab()[ch] if ch in ALLOWED else 1)
        i += 1
    assert ids == expected
    assert all(0 < i < 99 for i in ids)
    assert TOK.encode_numpy(text).tolist() == ids


@settings(max_examples=200)
@given(st.text(alphabet=st.sampled_from(ALLOWED_CHARS), max_size=100))
def test_prop_allowed_text_is_unchanged(text):
    assume_no_placeholder = "<UNK>" not in text
    assert TOK.normalize(text) == text
    if assume_no_placeholder:
        assert len(TOK.encode(text)) == len(text)
        assert TOK.decode(TOK.encode(text)) == text


@settings(max_examples=100)
@given(st.lists(st.one_of(ANY_TEXT, MOSTLY_ASCII), max_size=8), st.one_of(st.none(), st.integers(0, 300)))
def test_prop_encode_batch(texts, pad_to):
    encs = [TOK.encode(t) for t in texts]
    longest = max((len(e) for e in encs), default=0)
    if pad_to is not None and pad_to < longest:
        with pytest.raises(ValueError, match="pad_to"):
            TOK.encode_batch(texts, pad_to=pad_to)
        ids, mask = TOK.encode_batch(texts, pad_to=pad_to, truncate=True)
        width = pad_to
    else:
        ids, mask = TOK.encode_batch(texts, pad_to=pad_to)
        width = longest if pad_to is None else pad_to
    assert ids.shape == mask.shape == (len(texts), width)
    for row, e in enumerate(encs):
        n = min(len(e), width)
        assert ids[row, :n].tolist() == e[:n]
        assert (ids[row, n:] == 0).all()
        assert mask[row].tolist() == [1] * n + [0] * (width - n)


def test_encode_batch_examples():
    ids, mask = TOK.encode_batch(["ab", "", "é"])
    assert ids.dtype == np.int64 and mask.dtype == np.int64
    assert ids.tolist() == [[69, 70], [0, 0], [1, 0]]
    assert mask.tolist() == [[1, 1], [0, 0], [1, 0]]
    ids, mask = TOK.encode_batch(["ab"], pad_to=4)
    assert ids.tolist() == [[69, 70, 0, 0]] and mask.tolist() == [[1, 1, 0, 0]]
    ids, mask = TOK.encode_batch([])
    assert ids.shape == (0, 0)
    with pytest.raises(TypeError):
        TOK.encode_batch("abc")
    with pytest.raises(ValueError):
        TOK.encode_batch(["a"], pad_to=-1)


# -- save / load ------------------------------------------------------------------------------
def test_save_load_round_trip(tmp_path):
    p = tmp_path / "vocab.json"
    TOK.save_vocab(p)
    text = p.read_text()
    assert text.startswith("{\n  ")  # indented, human-readable
    data = json.loads(text)
    assert data["vocab"]["<PAD>"] == 0 and data["vocab"]["~"] == 98
    loaded = CharTokenizer.load_vocab(p)
    assert loaded == TOK
    sample = "Hello\tWörld\n<UNK>日本 ~"
    assert loaded.encode(sample) == TOK.encode(sample)


def test_load_permuted_ids(tmp_path):
    data = json.loads(TOK.to_json())
    v = data["vocab"]
    v["<PAD>"], v["~"] = v["~"], v["<PAD>"]
    p = tmp_path / "v.json"
    p.write_text(json.dumps(data))
    t = CharTokenizer.load_vocab(p)
    assert t.pad_id == 98 and t.encode("~") == [0]
    ids, mask = t.encode_batch(["a", ""])
    assert ids.tolist() == [[69], [98]] and mask.tolist() == [[1], [0]]
    assert t.decode([98, 0]) == "~"


def _good():
    return json.loads(TOK.to_json())


def _mutate(fn):
    d = _good()
    fn(d)
    return json.dumps(d)


BAD_FILES = {
    "not json": ("{not json", "not valid JSON"),
    "empty file": ("", "not valid JSON"),
    "binary": (b"\xff\xfe\x00", "not valid JSON"),
    "top-level list": ("[1, 2]", "JSON object"),
    "no format": (json.dumps({"vocab": _good()["vocab"]}), "format"),
    "wrong version": (_mutate(lambda d: d.update(version=2)), "version"),
    "no vocab": (_mutate(lambda d: d.pop("vocab")), "vocab"),
    "vocab is a list": (_mutate(lambda d: d.update(vocab=[1])), "JSON object"),
    "duplicate ids": (_mutate(lambda d: d["vocab"].update({"a": 5})), "duplicate id 5"),
    "missing PAD": (_mutate(lambda d: d["vocab"].pop("<PAD>")), "<PAD>"),
    "missing UNK": (_mutate(lambda d: d["vocab"].pop("<UNK>")), "<UNK>"),
    "string id": (_mutate(lambda d: d["vocab"].update({"a": "5"})), "not an integer"),
    "float id": (_mutate(lambda d: d["vocab"].update({"a": 200.0})), "not an integer"),
    "bool id": (_mutate(lambda d: d["vocab"].update({"a": True})), "not an integer"),
    "null id": (_mutate(lambda d: d["vocab"].update({"a": None})), "not an integer"),
    "negative id": (_mutate(lambda d: d["vocab"].update({"a": -3})), "out of range"),
    "missing char": (_mutate(lambda d: d["vocab"].pop("q")), "missing characters"),
    "extra token": (_mutate(lambda d: d["vocab"].update({"ab": 500})), "single character"),
    "non-alphabet char": (_mutate(lambda d: d["vocab"].update({"é": 500})), "alphabet"),
    "duplicate key": (
        '{"format": "scantok.CharTokenizer", "version": 1, "vocab": {"<PAD>": 0, "<PAD>": 1}}',
        "duplicate key",
    ),
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_load_malformed(tmp_path, name):
    content, message = BAD_FILES[name]
    p = tmp_path / "bad.json"
    if isinstance(content, bytes):
        p.write_bytes(content)
    else:
        p.write_text(content, encoding="utf-8")
    with pytest.raises(CharVocabError, match=message) as info:
        CharTokenizer.load_vocab(p)
    assert isinstance(info.value, ValueError)
    assert str(p) in str(info.value)


def test_load_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        CharTokenizer.load_vocab(tmp_path / "nope.json")


def test_decode_takes_ints_only():
    """decode("12") read the digits as ids and 5.9 as 5 (int()); a probe found it (session 28)."""
    tok = CharTokenizer()
    with pytest.raises(TypeError):
        tok.decode("12")
    with pytest.raises(TypeError):
        tok.decode([5.9])
    assert tok.decode(np.array(tok.encode("hi"))) == "hi"
