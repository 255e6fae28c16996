"""The rest of tiktoken 0.14.0's public surface, against tiktoken itself: ``_encode_bytes`` on
bytes that are not UTF-8, ``encode_with_unstable``, ``scantok.load`` / ``model`` / ``core`` /
``registry`` (same values, errors and messages) and ``tiktoken_ext`` plugins."""
from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
import textwrap

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import scantok
from conftest import load_corpus
from strategies import INVALID_UTF8, describe_mismatch, hard_bytes, hard_text
from test_encoding_oracle import tiktoken_encoding, vocab_dir

pytestmark = pytest.mark.usefixtures("_vocab")

BPE_NAMES = ["r50k_base", "p50k_edit", "cl100k_base", "o200k_base", "o200k_harmony"]


@pytest.fixture(scope="module", autouse=True)
def _vocab():
    vocab_dir()


def pair(name):
    return scantok.get_encoding(name), tiktoken_encoding(name)


def same(got, want, what=None):
    assert got == want, describe_mismatch(list(got), list(want), what)


# --------------------------------------------------------------------------- _encode_bytes


def test_encode_bytes_issue_example():
    e, t = pair("cl100k_base")
    assert e._encode_bytes(b" \xec\x8b\xa4\xed") == t._encode_bytes(b" \xec\x8b\xa4\xed") == [62085]


def test_encode_bytes_takes_bytes_only():
    e, t = pair("cl100k_base")
    assert e._encode_bytes(type("B", (bytes,), {})(b"ab")) == t._encode_bytes(b"ab")
    for bad in [bytearray(b"ab"), memoryview(b"ab"), "ab", None, 3]:
        with pytest.raises(TypeError) as want:
            t._encode_bytes(bad)
        with pytest.raises(TypeError) as got:
            e._encode_bytes(bad)
        assert str(got.value) == str(want.value)


@pytest.mark.parametrize("name", BPE_NAMES)
@given(data=hard_bytes(max_fragments=30))
@example(data=b"")
@example(data=b"\xff")
@example(data=b"hello \xe4\xb8")
@example(data=b"a   \n\n  \t\xed")
@example(data=b"<|endoftext|>\x80")
@example(data=b"\xe4\xb8\xad\xe6\x96\x87\xe6")
def test_encode_bytes_vs_tiktoken(name, data):
    e, t = pair(name)
    same(e._encode_bytes(data), t._encode_bytes(data), data)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
@given(text=hard_text(surrogates=False, max_fragments=25), tail=st.lists(st.sampled_from(INVALID_UTF8), min_size=1, max_size=3))
def test_encode_bytes_invalid_at_the_end(name, text, tail):
    e, t = pair(name)
    data = text.encode("utf-8") + b"".join(tail)
    same(e._encode_bytes(data), t._encode_bytes(data), data)


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base", "o200k_base"])
@pytest.mark.parametrize("corpus", ["en", "code", "multi"])
def test_encode_bytes_corpus_slices(name, corpus):
    """Corpus slices cut at any byte (mid-character in multi), with invalid bytes put in
    and at the end."""
    e, t = pair(name)
    data = load_corpus(corpus).encode("utf-8", "surrogateescape")
    rng = random.Random(f"{name}/{corpus}")
    for _ in range(40):
        a = rng.randrange(len(data) - 3000)
        piece = data[a : a + rng.randint(1, 3000)]
        if rng.random() < 0.5:
            k = rng.randrange(len(piece) + 1)
            piece = piece[:k] + rng.choice(INVALID_UTF8) + piece[k:]
        if rng.random() < 0.5:
            piece += rng.choice(INVALID_UTF8)
        same(e._encode_bytes(piece), t._encode_bytes(piece), piece)


# --------------------------------------------------------------------------- encode_with_unstable


def check_unstable(e, t, text, **kw):
    got_stable, got_completions = e.encode_with_unstable(text, **kw)
    want_stable, want_completions = t.encode_with_unstable(text, **kw)
    same(got_stable, want_stable, text)
    assert isinstance(got_completions, list) and all(isinstance(c, list) for c in got_completions)
    got = [tuple(c) for c in got_completions]
    assert len(got) == len(set(got))
    assert set(got) == {tuple(c) for c in want_completions}, text
    assert e.encode_with_unstable(text, **kw) == (got_stable, got_completions)  # a fixed order


def _short_ending(text: str) -> bool:
    # texts ending in whitespace have tens of thousands of completions (every token that starts
    # with a space): a few fixed examples cover them, hypothesis keeps to the rest
    return not text[-1:].isspace()


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base", "o200k_base"])
@pytest.mark.parametrize(
    "text",
    ["", "hello fanta", "a\n\n", "<|endoftext|>", "abc<|endoftext|>de", "I'", "don't", "12345", "中文字",
     "naïve café", "emoji 😀", "a  !", "x<|endoftext|>\n", "\u3000\u3000", "a\u00a0"],
)
def test_unstable_examples(name, text):
    e, t = pair(name)
    check_unstable(e, t, text, allowed_special="all")
    if "<|" not in text:
        check_unstable(e, t, text)


# ending in whitespace: every token starting with a space is a completion (~10^5 in o200k)
@pytest.mark.parametrize(
    "name,text",
    [(n, x) for n in ["cl100k_base", "o200k_base"] for x in ["x  ", "hello\n", "<|endoftext|> ", "a\n\n "]]
    + [("r50k_base", "hello "), ("r50k_base", "tab\t"), ("cl100k_base", " "), ("o200k_base", "a\u3000")],
)
def test_unstable_whitespace_end(name, text):
    e, t = pair(name)
    check_unstable(e, t, text, allowed_special="all")


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
@settings(max_examples=60)
@given(text=hard_text(surrogates=False, max_fragments=12).filter(_short_ending),
       special=st.sampled_from(["", "<|endoftext|>", "<|endofprompt|>"]), where=st.integers(0, 100))
def test_unstable_hypothesis(name, text, special, where):
    e, t = pair(name)
    k = where % (len(text) + 1)
    text = text[:k] + special + text[k:]
    check_unstable(e, t, text, allowed_special="all")
    check_unstable(e, t, text, disallowed_special=())


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base", "o200k_base"])
def test_unstable_corpus_slices(name):
    """Windows of the corpora ending anywhere (mid-word, after a space, mid-line)."""
    e, t = pair(name)
    rng = random.Random(name)
    for corpus in ["en", "code", "multi"]:
        text = load_corpus(corpus)
        for i in range(6):
            a = rng.randrange(len(text) - 400)
            piece = text[a : a + rng.randint(1, 400)]
            if i and piece[-1:].isspace():  # one window may end in whitespace (slow: see above)
                piece = piece.rstrip()
            check_unstable(e, t, piece)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_harmony"])
def test_unstable_errors(name):
    e, t = pair(name)
    for text in ["x <|endoftext|> y", "<|endofprompt|>"]:
        with pytest.raises(ValueError) as want:
            t.encode_with_unstable(text)
        with pytest.raises(ValueError) as got:
            e.encode_with_unstable(text)
        assert str(got.value) == str(want.value)
    with pytest.raises(UnicodeEncodeError) as want:
        t.encode_with_unstable("ab\ud800")
    with pytest.raises(UnicodeEncodeError) as got:
        e.encode_with_unstable("ab\ud800")
    assert str(got.value) == str(want.value)


# --------------------------------------------------------------------------- scantok.load


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(d))
    return d


def test_load_tiktoken_bpe_same_as_tiktoken(cache_dir):
    import tiktoken.load as tl

    from scantok import load

    for file_name in ["r50k_base.tiktoken", "cl100k_base.tiktoken"]:
        path = str(vocab_dir() / file_name)
        sha = hashlib.sha256(open(path, "rb").read()).hexdigest()
        got = load.load_tiktoken_bpe(path, expected_hash=sha)
        assert got == tl.load_tiktoken_bpe(path, expected_hash=sha)
        assert list(got) == list(tl.load_tiktoken_bpe(path))  # same order too
    # both cache a local path under the SHA-1 of the path, with the same contents
    key = hashlib.sha1(path.encode()).hexdigest()
    assert (cache_dir / key).read_bytes() == open(path, "rb").read()


@settings(max_examples=40)
@given(ranks=st.dictionaries(st.binary(min_size=1, max_size=8), st.integers(0, 10**6), min_size=1, max_size=30),
       junk=st.sampled_from([b"", b"\n", b"\n\n", b"bad line\n", b"YQ== notanint\n", b"YQ==\n", b"!!! 3\n", b"YQ== 1 2\n"]))
def test_load_dump_roundtrip_and_errors(tmp_path_factory, ranks, junk):
    import tiktoken.load as tl

    from scantok import load

    d = tmp_path_factory.mktemp("bpe")
    os.environ["TIKTOKEN_CACHE_DIR"] = ""  # no caching: the file changes between examples
    try:
        path = str(d / "x.tiktoken")
        load.dump_tiktoken_bpe(ranks, path)
        body = open(path, "rb").read()
        assert body == b"".join(__import__("base64").b64encode(k) + b" %d\n" % v
                                for k, v in sorted(ranks.items(), key=lambda kv: kv[1]))
        with open(path, "ab") as f:
            f.write(junk)
        try:
            want = tl.load_tiktoken_bpe(path)
        except ValueError as e:
            with pytest.raises(ValueError) as got:
                load.load_tiktoken_bpe(path)
            assert str(got.value) == str(e)
            assert type(got.value.__cause__) is type(e.__cause__)
        else:
            assert load.load_tiktoken_bpe(path) == want
    finally:
        del os.environ["TIKTOKEN_CACHE_DIR"]


def test_read_file_cached_hash_rules(tmp_path, cache_dir):
    import tiktoken.load as tl

    from scantok import load

    path = tmp_path / "f.bin"
    path.write_bytes(b"contents")
    good = hashlib.sha256(b"contents").hexdigest()
    bad = "0" * 64
    for mod in (tl, load):
        msgs = []
        with pytest.raises(ValueError) as e:
            mod.read_file_cached(str(path), bad)
        msgs.append(str(e.value))
        assert mod.read_file_cached(str(path), good) == b"contents"
        cached = cache_dir / hashlib.sha1(str(path).encode()).hexdigest()
        assert cached.read_bytes() == b"contents"
        cached.write_bytes(b"stale")  # a cached copy with the wrong hash is read again
        assert mod.read_file_cached(str(path), good) == b"contents"
        assert cached.read_bytes() == b"contents"
        cached.write_bytes(b"stale")  # ... but without an expected hash it is used as is
        assert mod.read_file_cached(str(path)) == b"stale"
        cached.unlink()
    assert msgs[0].startswith("Hash mismatch for data downloaded from")
    with pytest.raises(ValueError) as want:
        tl.read_file_cached(str(path), bad)
    with pytest.raises(ValueError) as got:
        load.read_file_cached(str(path), bad)
    assert str(got.value) == str(want.value)
    with pytest.raises(FileNotFoundError):
        load.read_file_cached(str(tmp_path / "missing"))
    assert load.check_hash(b"contents", good) and not load.check_hash(b"contents", bad)


def test_known_rank_file_urls_offline(cache_dir, monkeypatch):
    """OpenAI's rank-file URLs are served from scantok's copies, without the network."""
    from scantok import load
    from scantok.registry import RANK_FILES

    monkeypatch.setenv("SCANTOK_OFFLINE", "1")
    monkeypatch.setattr(load, "read_file", lambda p: pytest.fail(f"read_file({p!r}) called"))
    url, sha = RANK_FILES["r50k_base.tiktoken"]
    ranks = load.load_tiktoken_bpe(url, sha)
    assert ranks == tiktoken_encoding("r50k_base")._mergeable_ranks
    assert load.load_tiktoken_bpe(url) == ranks


def test_blob_urls_need_blobfile(monkeypatch):
    from scantok import load

    monkeypatch.setitem(sys.modules, "blobfile", None)
    for call in (lambda: load.read_file("gs://bucket/x"), lambda: load.dump_tiktoken_bpe({b"a": 0}, "az://c/x")):
        with pytest.raises(ImportError, match="blobfile is not installed. Please install it by running"):
            call()


def _data_gym_files(tmp_path, merges, *, corrupt=False):
    """vocab.bpe and encoder.json for 256 bytes plus `merges` (pairs of byte strings)."""
    printable = [b for b in range(256) if chr(b).isprintable() and chr(b) != " "]
    others = [b for b in range(256) if b not in printable]
    to_char = {b: chr(b) for b in printable} | {b: chr(256 + i) for i, b in enumerate(others)}

    def enc(bs):
        return "".join(to_char[b] for b in bs)

    encoder = {enc(bytes([b])): i for i, b in enumerate(printable + others)}
    for a, b in merges:
        encoder[enc(a + b)] = len(encoder)
    encoder["<|endoftext|>"] = len(encoder)
    if corrupt:
        encoder[enc(merges[-1][0] + merges[-1][1])] += 1000
    vocab = "#version: 0.2\n" + "".join(f"{enc(a)} {enc(b)}\n" for a, b in merges)
    (tmp_path / "vocab.bpe").write_text(vocab, encoding="utf-8")
    (tmp_path / "encoder.json").write_text(json.dumps(encoder), encoding="utf-8")
    return str(tmp_path / "vocab.bpe"), str(tmp_path / "encoder.json")


def test_data_gym_to_mergeable_bpe_ranks(tmp_path, cache_dir):
    import tiktoken.load as tl

    from scantok import load

    merges = [(b"h", b"e"), (b" ", b"t"), (b" t", b"he"), (b"\xc3", b"\xa9"), (b"\n", b"\n"), (b"l", b"l")]
    vocab, encoder = _data_gym_files(tmp_path, merges)
    got = load.data_gym_to_mergeable_bpe_ranks(vocab, encoder)
    assert got == tl.data_gym_to_mergeable_bpe_ranks(vocab, encoder)
    assert got[b" the"] == 258 and len(got) == 262
    assert load.data_gym_to_mergeable_bpe_ranks(vocab, encoder, clobber_one_byte_tokens=True) == got
    bad = tmp_path / "bad"
    bad.mkdir()
    vocab, encoder = _data_gym_files(bad, merges, corrupt=True)
    for mod in (tl, load):
        with pytest.raises(AssertionError):
            mod.data_gym_to_mergeable_bpe_ranks(vocab, encoder)


# --------------------------------------------------------------------------- model, core, registry


def test_model_module():
    import tiktoken.model as tm

    from scantok import model, registry

    assert model.MODEL_TO_ENCODING == tm.MODEL_TO_ENCODING
    assert list(model.MODEL_PREFIX_TO_ENCODING.items()) == list(tm.MODEL_PREFIX_TO_ENCODING.items())
    assert registry.MODEL_TO_ENCODING is model.MODEL_TO_ENCODING  # the old location still works
    assert scantok.encoding_for_model is model.encoding_for_model
    for m in list(tm.MODEL_TO_ENCODING) + ["gpt-4o-2024-05-13", "o1-preview", "gpt-5-mini", "ft:gpt-3.5-turbo:x"]:
        assert model.encoding_name_for_model(m) == tm.encoding_name_for_model(m)
    assert model.encoding_for_model("gpt-oss-20b") is scantok.get_encoding("o200k_harmony")
    with pytest.raises(KeyError) as want:
        tm.encoding_name_for_model("no-such-model")
    with pytest.raises(KeyError) as got:
        model.encoding_for_model("no-such-model")
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("module", ["scantok.model", "scantok.load", "scantok.core", "scantok.registry"])
def test_docstring_examples(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


def test_core_and_registry_modules(monkeypatch):
    import tiktoken.registry as tr

    from scantok import core, registry

    assert core.Encoding is scantok.Encoding
    assert registry.get_encoding is scantok.get_encoding
    # tiktoken's names in tiktoken's order, then scantok's own code50k (tests/test_code50k.py)
    assert registry.list_encoding_names() == tr.list_encoding_names() + ["code50k"]
    assert registry._available_plugin_modules() == tr._available_plugin_modules()
    for bad in ["nope", "O200K_BASE", ""]:
        with pytest.raises(ValueError) as want:
            tr.get_encoding(bad)
        with pytest.raises(ValueError) as got:
            registry.get_encoding(bad)
        assert str(got.value) == str(want.value)
    # the built-in constructors give what tiktoken_ext.openai_public's give
    from tiktoken_ext import openai_public

    registry.list_encoding_names()
    from test_encoding_oracle import _tiktoken_cache

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", _tiktoken_cache())
    for name in ["p50k_edit", "cl100k_base"]:
        got = registry.ENCODING_CONSTRUCTORS[name]()
        assert got == openai_public.ENCODING_CONSTRUCTORS[name]()
    with pytest.raises(ValueError) as want:
        tr.get_encoding(3)
    with pytest.raises(ValueError) as got:
        registry.get_encoding(3)
    assert str(got.value) == str(want.value)


# --------------------------------------------------------------------------- tiktoken_ext plugins

_PLUGIN = r'''
R50K = {r50k!r}
RANKS = {{bytes([i]): i for i in range(256)}} | {{b"ab": 256, b"abc": 257, b" a": 258, b"ca": 259}}


def fake_enc():
    return {{"name": "fake_enc", "pat_str": R50K, "mergeable_ranks": dict(RANKS),
             "special_tokens": {{"<|fake|>": 260}}}}


def fake_nopattern():
    return {{"name": "fake_nopattern", "pat_str": r"\w+|\s+", "mergeable_ranks": dict(RANKS),
             "special_tokens": {{}}}}


def fake_lookbehind():
    return {{"name": "fake_lookbehind", "pat_str": r"(?<=a)b|\w+|\s+", "mergeable_ranks": dict(RANKS),
             "special_tokens": {{}}}}


ENCODING_CONSTRUCTORS = {{"fake_enc": fake_enc, "fake_nopattern": fake_nopattern, "fake_lookbehind": fake_lookbehind}}
'''

_PROBE = textwrap.dedent('''
    import json, sys
    import scantok, tiktoken

    def run(fn):
        try:
            return ["ok", fn()]
        except Exception as e:
            return [type(e).__name__, str(e)]

    out = {}
    for lib in (scantok, tiktoken):
        r = out[lib.__name__] = {}
        r["names"] = run(lambda: lib.list_encoding_names())
        r["fake"] = run(lambda: lib.get_encoding("fake_enc").encode("abc abca <|fake|>", allowed_special="all"))
        r["nopattern"] = run(lambda: lib.get_encoding("fake_nopattern").encode("ab abc  x"))
        r["lookbehind"] = run(lambda: lib.get_encoding("fake_lookbehind").encode("ab abc  x"))
    r = out["scantok"]
    r["builtin"] = run(lambda: scantok.get_encoding("cl100k_base").encode("hello world"))
    r["has_compile"] = hasattr(scantok, "compile")
    r["pickle"] = run(lambda: __import__("pickle").loads(__import__("pickle").dumps(scantok.get_encoding("fake_enc"))).name)
    print(json.dumps(out))
''')


def _plugin_run(tmp_path, modules: dict[str, str]):
    from scantok.registry import R50K_PAT_STR

    ns = tmp_path / "plugins" / "tiktoken_ext"
    ns.mkdir(parents=True)
    for name, body in modules.items():
        (ns / f"{name}.py").write_text(body.format(r50k=R50K_PAT_STR) if "{r50k" in body else body)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path / "plugins")] + sys.path),
               TIKTOKEN_CACHE_DIR=_oracle_cache())
    proc = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _oracle_cache():
    from test_encoding_oracle import _tiktoken_cache

    return _tiktoken_cache()


def test_plugin_encodings_found_like_tiktoken(tmp_path):
    out = _plugin_run(tmp_path, {"fakeplug": _PLUGIN})
    s, t = out["scantok"], out["tiktoken"]
    # the same names in the same order, plus scantok's own code50k once
    assert s["names"][0] == t["names"][0] == "ok"
    assert [n for n in s["names"][1] if n != "code50k"] == t["names"][1] and s["names"][1].count("code50k") == 1
    assert {"fake_enc", "fake_nopattern", "fake_lookbehind", "o200k_harmony"} <= set(s["names"][1])
    assert s["fake"] == t["fake"] and s["fake"][0] == "ok"
    assert s["builtin"] == ["ok", [15339, 1917]]
    # a pat_str without a shipped scanner: compiled at run time where scantok can, else the
    # clear error; one outside the compilable subset is an error either way (never wrong ids)
    assert t["nopattern"][0] == "ok" and t["lookbehind"][0] == "ok"
    if s["has_compile"]:
        assert s["nopattern"] == t["nopattern"]
    else:
        assert s["nopattern"][0] == "ValueError" and "no compiled scanner for this pat_str" in s["nopattern"][1]
    assert s["lookbehind"][0] != "ok"
    assert s["pickle"] == ["ok", "fake_enc"]


@pytest.mark.parametrize(
    "modules",
    [
        {"broken": "X = 1\n"},
        {"dup": "ENCODING_CONSTRUCTORS = {'cl100k_base': lambda: {}}\n"},
        {"aaa": "ENCODING_CONSTRUCTORS = {'twice': lambda: {}}\n", "bbb": "ENCODING_CONSTRUCTORS = {'twice': lambda: {}}\n"},
    ],
    ids=["no_constructors", "builtin_name", "two_plugins"],
)
def test_plugin_errors_like_tiktoken(tmp_path, modules):
    out = _plugin_run(tmp_path, modules)
    s, t = out["scantok"], out["tiktoken"]
    assert s["names"] == t["names"] and s["names"][0] == "ValueError"
    assert s["fake"] == t["fake"]
    # the built-in encodings do not depend on plugins being well-formed
    assert s["builtin"] == ["ok", [15339, 1917]]


@pytest.mark.parametrize("num_threads", [0, -1, "2", 2.5, True, None, 10**6])
def test_batch_num_threads_as_tiktoken(num_threads):
    """tiktoken hands num_threads to ThreadPoolExecutor: None is its default, one below 1 its
    ValueError, a str its TypeError (scantok had run 0 and -1 on one thread and refused None)."""
    ours, theirs = pair("cl100k_base")
    texts, ids = ["ab c", "hello <|endoftext|> world", ""] * 40, [[1, 2], [], [100257, 5]] * 40
    calls = {"encode_ordinary_batch": (texts, {}), "encode_batch": (texts, {"allowed_special": "all"}),
             "decode_batch": (ids, {}), "decode_bytes_batch": (ids, {})}
    for method, (arg, kw) in calls.items():
        try:
            want = getattr(theirs, method)(arg, num_threads=num_threads, **kw)
        except Exception as e:
            with pytest.raises(type(e), match=str(e) if isinstance(e, ValueError) else None):
                getattr(ours, method)(arg, num_threads=num_threads, **kw)
        else:
            assert getattr(ours, method)(arg, num_threads=num_threads, **kw) == want


def test_encode_to_numpy_refuses_lone_surrogates_as_tiktoken():
    """tiktoken's encode() replaces a lone surrogate, its encode_to_numpy raises (scantok had
    replaced it there too: other ids, where tiktoken gives none)."""
    ours, theirs = pair("cl100k_base")
    for text in ("a\udc00b", "x" * 20_000 + "\ud800", "\ud800" + "é" * 20_000):
        with pytest.raises(UnicodeEncodeError):
            theirs.encode_to_numpy(text)
        with pytest.raises(UnicodeEncodeError):
            ours.encode_to_numpy(text)
        assert ours.encode(text) == theirs.encode(text)
    assert ours.encode_to_numpy("ab c").tolist() == theirs.encode_to_numpy("ab c").tolist()
    text = "a\udc00 <|endoftext|>"  # tiktoken checks for disallowed specials first
    with pytest.raises(ValueError) as want:
        theirs.encode_to_numpy(text)
    with pytest.raises(ValueError) as got:
        ours.encode_to_numpy(text)
    assert type(got.value) is type(want.value) and str(got.value) == str(want.value)


def test_allowed_special_none_is_a_type_error_as_tiktoken():
    ours, theirs = pair("cl100k_base")
    for method, arg in (("encode", "ab"), ("encode_to_numpy", "ab"), ("encode_batch", ["ab"]),
                        ("encode_with_unstable", "ab"), ("encode", "x" * 50_000)):
        with pytest.raises(TypeError):
            getattr(theirs, method)(arg, allowed_special=None)
        with pytest.raises(TypeError):
            getattr(ours, method)(arg, allowed_special=None)
    assert ours.encode("ab", disallowed_special=None) == theirs.encode("ab", disallowed_special=None)


@pytest.mark.parametrize("special, error", [
    ({b"x": 256}, TypeError), ({"x": -1}, OverflowError), ({"x": 2**32}, OverflowError), ({"x": 1.5}, TypeError),
    ({"": 256}, ValueError),        # tiktoken takes it, then encode(allowed_special="all") never returns
    ({"x": 2**32 - 1}, ValueError),  # tiktoken takes it; scantok's tables keep that rank for "none"
])
def test_constructor_special_tokens(special, error):
    import tiktoken

    base = {bytes([i]): i for i in range(256)}
    with pytest.raises(error):
        scantok.Encoding("t", pat_str=r"\S+|\s+", mergeable_ranks=base, special_tokens=special)
    if error is not ValueError:
        with pytest.raises(error):
            tiktoken.Encoding("t", pat_str=r"\S+|\s+", mergeable_ranks=base, special_tokens=special)


def test_sparse_ranks_are_refused_not_allocated():
    """A rank of 2**30 among 257 tokens made scantok's rank-indexed tables take 24 GB (a probe,
    session 28); tiktoken's hash map takes it.  A ValueError saying why; ranks as sparse as
    a vocabulary has (a gap for the special tokens) still load."""
    base = {bytes([i]): i for i in range(256)}
    for top in (2**30, 2**31, 2**32 - 3):
        with pytest.raises(ValueError, match="far above the number of tokens"):
            scantok.Encoding("t", pat_str=r"\S+|\s+", mergeable_ranks={**base, b"ab": top}, special_tokens={})
    enc = scantok.Encoding("t", pat_str=r"\S+|\s+", mergeable_ranks={**base, b"ab": 100_000}, special_tokens={})
    assert enc.encode("abab") == [100_000, 100_000]
