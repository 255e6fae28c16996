"""Bad input to scantok.Tokenizer (found by a probe of ~2,000 calls against tokenizers, session
28): a tokenizer.json field of the wrong JSON type is an error naming it at load, as tokenizers
refuses the file (never coerced into other results, never a tokenizer that fails when used);
arguments of the wrong type or value are TypeError / ValueError before any work; save() writes
the whole file or leaves the old one."""
from __future__ import annotations

import json
import os

import pytest

pytest.importorskip("numpy")
pytest.importorskip("tokenizers")

import scantok  # noqa: E402
from scantok.hf.errors import HFError, UnsupportedComponentError  # noqa: E402
from tokenizers import Tokenizer as HFTokenizer  # noqa: E402

VOCAB = {"[CLS]": 0, "[SEP]": 1, "a": 2, "b": 3, "c": 4, "ab": 5, "abc": 6}
BASE = {
    "model": {"type": "BPE", "vocab": VOCAB, "merges": ["a b", "ab c"]},
    "pre_tokenizer": {"type": "Whitespace"},
    "post_processor": {
        "type": "TemplateProcessing",
        "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                   {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
        "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
        "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [0], "tokens": ["[CLS]"]},
                           "[SEP]": {"id": "[SEP]", "ids": [1], "tokens": ["[SEP]"]}},
    },
}


def patched(path: str, value) -> str:
    """BASE with the field at path ("post_processor.single.1.Sequence.type_id") set to value
    (a key whose value is ... is deleted)."""
    obj = json.loads(json.dumps(BASE))
    *head, last = path.split(".")
    node = obj
    for k in head:
        node = node[int(k)] if isinstance(node, list) else node.setdefault(k, {})
    if value is ...:
        del node[int(last) if isinstance(node, list) else last]
    elif isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return json.dumps(obj)


# (field, value, what scantok's error says); tokenizers refuses each file too
REFUSED = [
    ("model.ignore_merges", "false", "ignore_merges must be true or false"),
    ("model.fuse_unk", 0, "fuse_unk must be true or false"),
    ("model.byte_fallback", [], "byte_fallback must be true or false"),
    ("post_processor.single.1.Sequence.type_id", -1, r"type_id must be an integer in \[0, 2\*\*32\)"),
    ("post_processor.single.1.Sequence.type_id", 2**40, "type_id"),
    ("post_processor.single.1.Sequence.type_id", True, "type_id"),
    ("post_processor.single.1.Sequence.type_id", ..., "type_id"),
    ("post_processor.single.1.Sequence.id", "C", r"Sequence.id must be \"A\" or \"B\""),
    ("post_processor.single.0.SpecialToken.type_id", 1.5, "type_id"),
    ("post_processor.special_tokens.[SEP].ids", [-1], r"ids\[0\] must be an integer"),
    ("post_processor.special_tokens.[SEP].ids", [2**33], r"ids\[0\]"),
    ("post_processor.special_tokens.[SEP].ids", [1.0], r"ids\[0\]"),
    ("post_processor.special_tokens.[SEP].ids", None, "ids must be a list"),
    ("post_processor.special_tokens.[SEP].tokens", [5], r"tokens\[0\] must be a string"),
    ("post_processor.special_tokens.[SEP].tokens", None, "tokens must be a list"),
    ("post_processor", {"type": "BertProcessing", "sep": ["[SEP]", -1], "cls": ["[CLS]", 0]}, r"sep\[1\]"),
    ("post_processor", {"type": "RobertaProcessing", "sep": ["[SEP]", 1], "cls": ["[CLS]", 2**33],
                        "trim_offsets": True, "add_prefix_space": True}, r"cls\[1\]"),
    ("post_processor", {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": "x", "use_regex": True},
     "trim_offsets must be true or false"),
    ("normalizer", {"type": "Sequence", "normalizers": None}, "normalizers must be a list"),
    ("normalizer", {"type": "Sequence", "normalizers": {}}, "normalizers must be a list"),
    ("normalizer", {"type": "BertNormalizer", "clean_text": "x", "handle_chinese_chars": True,
                    "strip_accents": None, "lowercase": True}, "clean_text must be true or false"),
    ("normalizer", {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                    "strip_accents": 1, "lowercase": True}, "strip_accents"),
    ("normalizer", {"type": "Strip", "strip_left": "yes", "strip_right": True}, "strip_left must be true or false"),
    ("decoder", {"type": "WordPiece", "prefix": 5, "cleanup": True}, "prefix must be a string"),
    ("decoder", {"type": "WordPiece", "prefix": "##", "cleanup": "no"}, "cleanup must be true or false"),
    ("decoder", {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "bad", "split": True},
     "prepend_scheme"),
    ("decoder", {"type": "Strip", "content": " ", "start": -1, "stop": 0}, "start'/'stop' >= 0"),
]


@pytest.mark.parametrize("path, value, message", REFUSED)
def test_fields_of_the_wrong_type_are_refused(path, value, message):
    js = patched(path, value)
    with pytest.raises(HFError, match=message):
        scantok.Tokenizer.from_str(js)
    with pytest.raises(Exception):
        HFTokenizer.from_str(js)


def test_base_and_null_flags_load_as_tokenizers():
    for js in (json.dumps(BASE), patched("model.fuse_unk", None), patched("model.ignore_merges", True)):
        ours, hf = scantok.Tokenizer.from_str(js), HFTokenizer.from_str(js)
        for text in ("abc ab a", "c b a"):
            assert ours.encode(text).ids == hf.encode(text).ids
            assert ours.encode(text, "ab").type_ids == hf.encode(text, "ab").type_ids


def test_template_ids_and_tokens_of_other_lengths_are_refused():
    """tokenizers loads them (its SpecialToken::new refuses them) and makes encodings whose ids
    and tokens do not line up; scantok refuses the file."""
    js = patched("post_processor.special_tokens.[SEP].ids", [1, 2])
    with pytest.raises(HFError, match="ids and tokens must be of the same length"):
        scantok.Tokenizer.from_str(js)


def test_replace_of_the_empty_string_is_unsupported():
    """tokenizers puts the content at every character boundary: refused, not ignored."""
    js = patched("normalizer", {"type": "Replace", "pattern": {"String": ""}, "content": "b"})
    with pytest.raises(UnsupportedComponentError, match="empty string"):
        scantok.Tokenizer.from_str(js)


def test_nesting_too_deep_is_an_hferror():
    deep = {"type": "Lowercase"}
    for _ in range(5000):
        deep = {"type": "Sequence", "normalizers": [deep]}
    text = json.dumps({**BASE, "normalizer": "@"}).replace('"@"', '{"type": "Sequence", "normalizers": [' * 5000
                                                          + '{"type": "Lowercase"}' + "]}" * 5000)
    with pytest.raises(HFError, match="nested too deeply"):
        scantok.Tokenizer.from_str(text)
    with pytest.raises(HFError, match="nested too deeply"):
        scantok.Tokenizer({**BASE, "normalizer": deep})


def test_add_tokens_with_a_lone_surrogate_changes_nothing(tmp_path):
    tok = scantok.Tokenizer.from_str(json.dumps(BASE))
    before = tok.to_str()
    for tokens in (["\ud800"], ["x1", "y1", "\udfff"]):
        with pytest.raises(TypeError, match="lone surrogate"):
            tok.add_tokens(tokens)
        with pytest.raises(TypeError, match="lone surrogate"):
            tok.add_special_tokens(tokens)
    assert tok.to_str() == before
    with pytest.raises(TypeError):
        HFTokenizer.from_str(json.dumps(BASE)).add_tokens(["\ud800"])


def test_save_is_whole_or_nothing(tmp_path, monkeypatch):
    tok = scantok.Tokenizer.from_str(json.dumps(BASE))
    path = tmp_path / "tok.json"
    tok.save(path)
    good = path.read_bytes()
    assert json.loads(good) == json.loads(tok.to_str())
    # a failure while writing (here: a tokenizer.json that has no UTF-8) leaves the old file
    monkeypatch.setattr(type(tok), "to_str", lambda self, pretty=False: '{"x": "\ud800"}')
    with pytest.raises(UnicodeEncodeError):
        tok.save(path)
    monkeypatch.undo()
    assert path.read_bytes() == good
    assert sorted(os.listdir(tmp_path)) == ["tok.json"]  # no temporary file left
    tok.save(str(path), pretty=False)
    assert scantok.Tokenizer.from_file(path).encode("abc").ids == tok.encode("abc").ids


def test_from_file_does_not_take_a_descriptor(tmp_path):
    path = tmp_path / "tok.json"
    path.write_text(json.dumps(BASE))
    fd = os.open(path, os.O_RDONLY)
    try:
        with pytest.raises(TypeError):
            scantok.Tokenizer.from_file(fd)
        os.fstat(fd)  # still open: not read, not closed
    finally:
        os.close(fd)


@pytest.mark.parametrize("value, error", [(0, ValueError), (-1, ValueError), ("2", TypeError), (2.7, TypeError),
                                          (True, TypeError), (object(), TypeError)])
def test_num_threads_is_checked(value, error):
    tok = scantok.Tokenizer.from_str(json.dumps(BASE))
    for call in (tok.encode_batch, tok.encode_batch_fast, tok.decode_batch):
        arg = [[2, 3]] if call is tok.decode_batch else ["ab c"]
        with pytest.raises(error, match="num_threads"):
            call(arg, num_threads=value)
    assert [e.ids for e in tok.encode_batch(["ab c"], num_threads=2**64)] == [tok.encode("ab c").ids]


def test_batch_inputs_and_flags_are_checked():
    tok, hf = scantok.Tokenizer.from_str(json.dumps(BASE)), HFTokenizer.from_str(json.dumps(BASE))
    for bad in ({"a": 1}, "abc", b"abc", 5):
        for t in (tok, hf):
            with pytest.raises(TypeError):
                t.encode_batch(bad)
        with pytest.raises(TypeError):
            tok.encode_batch_fast(bad)
    assert [e.ids for e in tok.encode_batch(("ab", "c"))] == [e.ids for e in hf.encode_batch(("ab", "c"))]
    assert [e.ids for e in tok.encode_batch(x for x in ["ab", "c"])] == [e.ids for e in hf.encode_batch(["ab", "c"])]
    for bad in ("x", None, 1):
        with pytest.raises(TypeError):
            tok.get_vocab_size(bad)
        with pytest.raises(TypeError):
            tok.get_vocab(bad)
    assert tok.get_vocab_size(False) == hf.get_vocab_size(False)


def test_token_to_id_of_a_lone_surrogate_raises_as_tokenizers():
    tok, hf = scantok.Tokenizer.from_str(json.dumps(BASE)), HFTokenizer.from_str(json.dumps(BASE))
    for t in (tok, hf):
        with pytest.raises(UnicodeEncodeError):
            t.token_to_id("a\ud800")
    assert tok.token_to_id("ab") == hf.token_to_id("ab") == 5 and tok.token_to_id("é") is None
