"""CodeTokenizer: file/edit framing on ids, exact round trips of text that spells the markers,
clear errors for missing or out-of-order framing, batch variants."""
from __future__ import annotations

import functools

import pytest
from hypothesis import given
from hypothesis import strategies as st

import scantok
from scantok.code import CODE_SPECIAL_TOKENS, CodeTokenizer, FramingError

MARKERS = [name for name in CODE_SPECIAL_TOKENS] + ["<FILE", "EDIT_END>", "</", "<|endoftext|>"]


@functools.lru_cache(maxsize=None)
def tokenizer(name: str) -> CodeTokenizer:
    if name == "code50k":
        return CodeTokenizer()
    # a small vocabulary laid out as code50k is (20 specials, then the byte-level BPE), made
    # from r50k_base's first 3,000 ranks, so the framing is tested independently of code50k
    from scantok.registry import R50K_PAT_STR

    r50k = scantok.get_encoding("r50k_base")
    ranks = {r50k.decode_single_token_bytes(i): i + 20 for i in range(3000)}
    enc = scantok.Encoding("code_fixture", pat_str=R50K_PAT_STR, mergeable_ranks=ranks,
                           special_tokens=CODE_SPECIAL_TOKENS)
    return CodeTokenizer(enc)


TOKENIZERS = ["fixture"] + (["code50k"] if "code50k" in scantok.list_encoding_names() else [])


@pytest.fixture(params=TOKENIZERS)
def tok(request):
    return tokenizer(request.param)


def test_layout(tok):
    assert (tok.PAD, tok.EOS, tok.BOS, tok.FILE, tok.FILE_END, tok.EDIT_START, tok.EDIT_END, tok.DELETE) == tuple(range(8))
    assert tok.decode([tok.FILE]) == "<FILE>"


def test_encode_file_and_edit(tok):
    ids = tok.encode_file("src/a.py", "def f():\n    return 1\n")
    assert ids[0] == tok.FILE
    fe = ids.index(tok.FILE_END)
    assert tok.decode(ids[1:fe]) == "src/a.py"
    assert tok.decode(ids[fe + 1 :]) == "def f():\n    return 1\n"
    assert tok.parse_file(ids) == {"file_path": "src/a.py", "content": "def f():\n    return 1\n"}
    e = tok.encode_edit("src/a.py", "x = 1\n", "x = 2\n")
    assert e[: len(ids)] != ids  # different content
    assert e == tok.encode_file("src/a.py", "x = 1\n") + [tok.EDIT_START] + tok.encode("x = 2\n") + [tok.EDIT_END]
    assert tok.parse_edit(e) == {"file_path": "src/a.py", "old_content": "x = 1\n", "new_content": "x = 2\n",
                                 "edit_type": "replace"}


def test_edit_types(tok):
    assert tok.parse_edit(tok.encode_edit("a", "", "new"))["edit_type"] == "insert"
    assert tok.parse_edit(tok.encode_edit("a", " \n\t", "new"))["edit_type"] == "insert"
    assert tok.parse_edit(tok.encode_edit("a", "old", "new"))["edit_type"] == "replace"
    d = tok.encode_edit("a", "old", "", delete=True)
    assert tok.DELETE in d
    assert tok.parse_edit(d) == {"file_path": "a", "old_content": "old", "new_content": "", "edit_type": "delete"}
    # <DELETE> anywhere in the edit region, even with empty old content
    ids = tok.encode_file("a", "") + [tok.EDIT_START] + tok.encode("x") + [tok.DELETE, tok.EDIT_END]
    assert tok.parse_edit(ids)["edit_type"] == "delete"


def test_marker_text_stays_text(tok):
    content = "s = '<EDIT_END>'  # <FILE> </FILE> <DELETE> <EDIT_START> <PAD> <|reserved_9|>\n"
    ids = tok.encode_edit("<FILE>.py", content, "<EDIT_END><DELETE>")
    specials = [t for t in ids if t < 20]
    assert specials == [tok.FILE, tok.FILE_END, tok.EDIT_START, tok.EDIT_END]
    parsed = tok.parse_edit(ids)
    assert parsed == {"file_path": "<FILE>.py", "old_content": content, "new_content": "<EDIT_END><DELETE>",
                      "edit_type": "replace"}
    # the text spelling of the framing decodes to the same string, so text search would be fooled
    assert tok.decode(ids).count("<EDIT_END>") == 3


text_with_markers = st.lists(st.one_of(st.sampled_from(MARKERS), st.text(max_size=12)), max_size=8).map("".join)


@given(path=text_with_markers, content=text_with_markers, new=text_with_markers, delete=st.booleans())
def test_round_trip_property(path, content, new, delete):
    tok = tokenizer("fixture")
    ids = tok.encode_edit(path, content, new, delete=delete)
    got = tok.parse_edit(ids)
    fixed = [s.encode("utf-8", "surrogatepass").decode("utf-8", "replace") for s in (path, content, new)]
    assert (got["file_path"], got["old_content"], got["new_content"]) == tuple(fixed)
    assert got["edit_type"] == ("delete" if delete else "insert" if not fixed[1].strip() else "replace")
    assert tok.parse_file(tok.encode_file(path, content)) == {"file_path": fixed[0], "content": fixed[1]}
    # BOS before, EOS and padding after are accepted
    assert tok.parse_edit([tok.BOS, *ids, tok.EOS, tok.PAD, tok.PAD]) == got


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda t: t.encode("a") + [t.FILE_END] + t.encode("c") + [t.EDIT_START, t.EDIT_END], "missing <FILE>"),
        (lambda t: [t.FILE] + t.encode("a") + t.encode("c") + [t.EDIT_START, t.EDIT_END], "missing </FILE>"),
        (lambda t: [t.FILE, t.FILE_END] + t.encode("c") + t.encode("n") + [t.EDIT_END], "missing <EDIT_START>"),
        (lambda t: [t.FILE, t.FILE_END] + t.encode("c") + [t.EDIT_START] + t.encode("n"), "missing <EDIT_END>"),
        (lambda t: [t.FILE, t.FILE_END, t.EDIT_END, t.EDIT_START], "before <EDIT_START>"),
        (lambda t: [t.FILE, t.EDIT_START, t.FILE_END, t.EDIT_END], r"</FILE> \(at 2\) comes after <EDIT_START>"),
        (lambda t: [t.FILE, t.FILE_END, t.FILE, t.EDIT_START, t.EDIT_END], "more than one <FILE>"),
        (lambda t: [t.FILE, t.FILE_END, t.EDIT_START, t.EDIT_END, t.EDIT_START, t.EDIT_END], "more than one <EDIT_START>"),
        (lambda t: [t.FILE, t.FILE_END, t.DELETE, t.EDIT_START, t.EDIT_END], "<DELETE> at 2 is outside"),
        (lambda t: [t.FILE, t.FILE_END, t.EDIT_START, t.EDIT_END, 100], "after <EDIT_END>"),
        (lambda t: [t.FILE, t.FILE_END, t.PAD, t.EDIT_START, t.EDIT_END], "unexpected <PAD> at 2"),
        (lambda t: [t.FILE, 9, t.FILE_END, t.EDIT_START, t.EDIT_END], r"unexpected <\|reserved_9\|> at 1"),
        (lambda t: [t.FILE, t.FILE_END, 10**9, t.EDIT_START, t.EDIT_END], "not in the vocabulary"),
        (lambda t: [], "missing <FILE>.*no tokens"),
    ],
)
def test_framing_errors(tok, build, message):
    with pytest.raises(FramingError, match=message):
        tok.parse_edit(build(tok))


def test_parse_file_errors(tok):
    with pytest.raises(FramingError, match="unexpected <EDIT_START>"):
        tok.parse_file(tok.encode_edit("a", "b", "c"))
    with pytest.raises(FramingError, match="missing </FILE>"):
        tok.parse_file([tok.FILE] + tok.encode("a"))


def test_type_errors(tok):
    with pytest.raises(TypeError, match="content must be str"):
        tok.encode_file("a", b"bytes")
    with pytest.raises(TypeError, match=r"ids\[1\] is str"):
        tok.parse_edit([tok.FILE, "x"])
    with pytest.raises(TypeError, match=r"contents\[1\] must be str"):
        tok.encode_file_batch(["a", "b"], ["x", None])
    with pytest.raises(ValueError, match="differ in length"):
        tok.encode_file_batch(["a", "b"], ["x"])
    with pytest.raises(ValueError, match="lacks the framing tokens <PAD>"):
        CodeTokenizer(scantok.get_encoding("r50k_base"))


def test_numpy_ids(tok):
    np = pytest.importorskip("numpy")
    ids = tok.encode_edit("a.py", "old", "new")
    assert tok.parse_edit(np.array(ids, dtype=np.uint32)) == tok.parse_edit(ids)


def test_batches_equal_single_calls(tok):
    paths = [f"dir/f{i}.py" for i in range(40)]
    contents = [f"def f{i}():\n    return {i} <EDIT_END>\n" * (i % 4) for i in range(40)]
    news = [f"x{i} = '<FILE>'\n" for i in range(40)]
    deletes = [i % 5 == 0 for i in range(40)]
    for threads in (1, 2):
        assert tok.encode_batch(contents, num_threads=threads) == [tok.encode(c) for c in contents]
        assert tok.encode_file_batch(paths, contents, num_threads=threads) == [
            tok.encode_file(p, c) for p, c in zip(paths, contents)]
        edits = tok.encode_edit_batch(paths, contents, news, delete=deletes, num_threads=threads)
        assert edits == [tok.encode_edit(p, c, n, delete=d) for p, c, n, d in zip(paths, contents, news, deletes)]
        assert tok.parse_edit_batch(edits, num_threads=threads) == [tok.parse_edit(e) for e in edits]
        assert tok.decode_batch(edits, num_threads=threads) == [tok.decode(e) for e in edits]
