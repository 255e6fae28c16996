"""The C JSON Lines extractor (csrc/jsonl.c) against Python's json: on every line it
accepts it gives exactly json.loads(line)[field] as tiktoken encodes it (lone surrogates ->
U+FFFD); whatever it leaves undecided goes to Python, so errors and skips are Python's."""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from scantok._native import ffi, lib
from scantok.corpus.readers import extract_jsonl, parse_jsonl_line
from scantok.encoding import _utf8
from strategies import hard_text


def c_extract(block: bytes, field: str = "text"):
    """[(status, bytes)] per line, straight from the C function."""
    cap = block.count(b"\n") + 1
    out = bytearray(len(block))
    ends = np.zeros(cap, dtype=np.uintp)
    status = np.full(cap, 9, dtype=np.uint8)
    f = field.encode()
    k = lib.scantok_jsonl_extract(ffi.from_buffer(block), len(block), f, len(f), ffi.from_buffer(out),
                                  ffi.cast("size_t *", ends.ctypes.data), ffi.cast("uint8_t *", status.ctypes.data))
    res, prev = [], 0
    for i in range(k):
        res.append((int(status[i]), bytes(out[prev:int(ends[i])])))
        prev = int(ends[i])
    return res


def check_line(raw: bytes, field: str = "text") -> int:
    """Checks one line against Python; returns the C status."""
    assert b"\n" not in raw
    [(status, got)] = c_extract(raw, field)
    text, reason = parse_jsonl_line(raw, field)
    if status == 0:
        assert text is not None, (raw, reason)
        assert got == _utf8(text), raw
    elif status == 1:
        assert text is None and reason is None, raw
    else:
        assert status == 2
    return status


FAST = [
    b'{"text": "hello"}',
    b'{"id": 1, "text": "a\\nb\\t\\"c\\" \\\\ \\/ \\b\\f\\r", "meta": {"text": 5, "x": [1, 2.5e-3, -0, true, null]}}',
    b'{"text": "\\u00e9\\u4e2d\\ud83d\\ude00 caf\xc3\xa9 \xf0\x9f\x98\x80"}',
    b'{"text": "lone \\ud800 and \\udfff and \\ud83d\\u0041 and \\ud83d\\ud83d\\ude00"}',
    b'{"te\\u0078t": "escaped key"}',
    b'{"text": "first", "text": "last wins"}',
    b'{"text": 1, "text": "string last"}',
    b' \t{ "text" : "spaces" } \r',
    b'{"text": ""}',
    b'{"a": {}, "b": [], "text": "x", "c": [[[]]], "d": {"e": {"f": "g"}}}',
]
BLANK = [b"", b"   ", b"\t\r", b"\r"]
UNDECIDED = [
    b'{"text": "x"', b'{"text": "x"}}', b'{"text": "x",}', b'["text"]', b'"text"', b'{"t": "x"}',
    b'{"text": 5}', b'{"text": "x", "text": null}', b'{"text": "\x01"}', b'{"text": "\\x"}',
    b'{"text": "\\u12"}', b'{"text": "\\ud800\\u12zz"}', b'{"text": "x", "n": NaN}', b'{"text": "x", "n": -Infinity}',
    b'{"text": "x", "n": 01}', b'{"text": "x", "n": 1.}', b'{"text": "x", "n": .5}', b'{"text": "x", "n": 1e}',
    b'{"text": "\xc3"}', b'{"text": "\xc0\x80"}', b'{"text": "\xe0\x80\x80"}', b'{"text": "\xed\xa0\x80"}',
    b'{"text": "\xf4\x90\x80\x80"}', b'{"text": "\xff"}', b'\xef\xbb\xbf{"text": "bom"}', b'{"text": "x"} x',
    b'{"text": "x" "y": 1}', b'{text: "x"}', b'{"text": tru}', b'\x0c', b'{"n": ' + b'[' * 300 + b']' * 300 + b', "text": "deep"}',
]


@pytest.mark.parametrize("raw", FAST)
def test_fast_path_lines(raw):
    assert check_line(raw) == 0


@pytest.mark.parametrize("raw", BLANK)
def test_blank_lines(raw):
    assert check_line(raw) == 1


@pytest.mark.parametrize("raw", UNDECIDED)
def test_undecided_lines_go_to_python(raw):
    assert check_line(raw) == 2


def test_block_of_lines_with_fallbacks():
    lines = FAST + BLANK + UNDECIDED + [b'{"text": "x", "n": NaN}']
    block = b"\n".join(lines)
    seen = []
    batch = extract_jsonl(block, "text", b"text", 10, lambda line, reason: seen.append((line, reason)))
    want, want_bad = [], []
    for i, raw in enumerate(lines):
        text, reason = parse_jsonl_line(raw, "text")
        if text is not None:
            want.append((11 + i, _utf8(text)))
        elif reason is not None:
            want_bad.append((11 + i, reason))
    data = bytes(batch.data)
    starts = np.concatenate(([0], batch.ends[:-1]))
    got = [(int(l), data[s:e]) for l, s, e in zip(batch.lines, starts, batch.ends)]
    assert got == want and seen == want_bad
    # NaN is Python's extension: that document is kept, through Python
    assert want[-1] == (11 + len(lines) - 1, b"x")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.floats(allow_nan=False, allow_infinity=False) | hard_text(max_fragments=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["text", "t", "x", "é"]) | st.text(max_size=3),
                                                                 inner, max_size=3),
    max_leaves=8,
)
MUTATION_BYTES = b'"\\{}[],: \t\r\nu0dD8aN\x00\x1f\xff\xed\xa0\xc3'


@settings(max_examples=400)
@given(obj=st.dictionaries(st.sampled_from(["text", "id", "meta", "t"]), json_values, max_size=4),
       text=hard_text(max_fragments=10), ascii=st.booleans(),
       mutations=st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(list(MUTATION_BYTES)), st.sampled_from("idr")),
                          max_size=3))
def test_matches_python_json(obj, text, ascii, mutations):
    if "text" not in obj:
        obj["text"] = text
    raw = json.dumps(obj, ensure_ascii=ascii).encode("utf-8", "surrogatepass")
    status = check_line(raw.replace(b"\n", b" "))
    if ascii and not mutations and isinstance(obj["text"], str):
        # json.dumps output is what real files hold: the fast path takes it
        assert status == 0
    data = bytearray(raw)
    for pos, byte, op in mutations:
        pos = pos % (len(data) + 1)
        if op == "i":
            data.insert(pos, byte)
        elif op == "d" and pos < len(data):
            del data[pos]
        elif pos < len(data):
            data[pos] = byte
    check_line(bytes(data).replace(b"\n", b" "))
