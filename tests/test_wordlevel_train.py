"""train_wordlevel gives the same vocabulary (tokens and ids) as HF's WordLevelTrainer."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from scantok import wordlevel as W
from scantok.wordlevel import WordLevel, train_wordlevel

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import Tokenizer, trainers  # noqa: E402

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
if not CORPUS.exists():
    CORPUS = Path("/work/shared/corpus")
FILES = [str(CORPUS / f"{c}.txt") for c in ("en", "code", "multi")]


def hf_train(files=None, iterator=None, *, vocab_size, min_frequency=0, special_tokens=(), normalizer=None,
             pre_tokenizer="whitespace_split", unk_token="<unk>"):
    hf = Tokenizer.from_str(WordLevel({}, unk_token, normalizer, pre_tokenizer).to_str())
    tr = trainers.WordLevelTrainer(vocab_size=vocab_size, min_frequency=min_frequency,
                                   special_tokens=list(special_tokens), show_progress=False)
    if files is not None:
        hf.train(files, tr)
    else:
        hf.train_from_iterator(iterator, tr)
    return hf


def test_train_50k_whitespace_split_corpora():
    kw = dict(vocab_size=50_000, special_tokens=["[UNK]", "[PAD]"], unk_token="[UNK]")
    w = train_wordlevel(FILES, **kw)
    hf = hf_train(FILES, **kw)
    assert w.get_vocab() == hf.get_vocab()
    assert len(w.get_vocab()) == 50_000
    # the whole tokenizer (added special tokens included) is what HF saves
    assert json.loads(w.to_str())["added_tokens"] == json.loads(hf.to_str())["added_tokens"]
    text = Path(FILES[0]).read_text(encoding="utf-8")[:200_000] + " [UNK] x[PAD]y"
    assert w.encode(text) == hf.encode(text).ids


@pytest.mark.parametrize("normalizer,pre_tokenizer,min_frequency", [
    ("lowercase", "bert", 2),
    (None, "whitespace", 5),
    ("bert", "bert", 0),
    ("nfkc", "digits", 3),
    (None, {"type": "Split", "pattern": {"Regex": r"\s+"}, "behavior": "Isolated", "invert": False}, 0),
])
def test_train_configs_like_hf(normalizer, pre_tokenizer, min_frequency):
    files = FILES if (normalizer, pre_tokenizer) == (None, "whitespace") else None
    if files is None:  # slower Python paths: slices of the corpora, line endings and all
        texts = [Path(f).read_text(encoding="utf-8")[:150_000] for f in FILES]
        kw = dict(vocab_size=8_000, min_frequency=min_frequency, special_tokens=["<unk>"],
                  normalizer=normalizer, pre_tokenizer=pre_tokenizer)
        w = train_wordlevel(texts, **kw)
        hf = hf_train(iterator=texts, **kw)
    else:
        kw = dict(vocab_size=30_000, min_frequency=min_frequency, special_tokens=["<unk>"],
                  normalizer=normalizer, pre_tokenizer=pre_tokenizer)
        w = train_wordlevel(files, **kw)
        hf = hf_train(files, **kw)
    assert w.get_vocab() == hf.get_vocab()


def test_train_files_line_by_line(tmp_path):
    """Files are read line by line with their endings (matters for pre-tokenizers that keep
    whitespace)."""
    p = tmp_path / "c.txt"
    p.write_text("a b\n\nb  c\r\nc\n  \n", encoding="utf-8", newline="")
    pre = {"type": "Split", "pattern": {"Regex": r"\s+"}, "behavior": "Isolated", "invert": False}
    w = train_wordlevel([str(p)], vocab_size=100, pre_tokenizer=pre)
    hf = hf_train([str(p)], vocab_size=100, pre_tokenizer=pre)
    assert w.get_vocab() == hf.get_vocab()


def test_train_ties_and_special_tokens_overlap():
    # equal counts are ordered by the words' bytes; a special token that is also a word gets the
    # later id (HF builds a HashMap from the enumerated list)
    texts = ["b a c é Z [UNK] [UNK] [UNK] aa a b", "x y z 1 2 10"]
    for vs in (3, 5, 8, 100):
        kw = dict(vocab_size=vs, special_tokens=["[UNK]", "[PAD]"])
        assert train_wordlevel(texts, **kw).get_vocab() == hf_train(iterator=texts, **kw).get_vocab()


@settings(max_examples=25, deadline=None)
@given(st.lists(st.text(alphabet="ab cé\n中1-.", max_size=30), max_size=8),
       st.integers(0, 20), st.integers(0, 3), st.sampled_from(["whitespace_split", "bert", "whitespace"]))
def test_train_hypothesis(texts, vocab_size, min_frequency, pre):
    kw = dict(vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=["[S]"], pre_tokenizer=pre)
    assert train_wordlevel(iter(texts), **kw).get_vocab() == hf_train(iterator=texts, **kw).get_vocab()


def test_train_keyword_options():
    texts = ["Hello, WORLD! 中国人 hello world", "HELLO 中"]
    w = train_wordlevel(texts, vocab_size=50, lowercase=True, split_on_cjk=True, split_on_punctuation=True)
    hf = Tokenizer.from_str(WordLevel({}, "<unk>", w.normalizer, w.pre_tokenizer).to_str())
    hf.train_from_iterator(texts, trainers.WordLevelTrainer(vocab_size=50, show_progress=False))
    assert w.get_vocab() == hf.get_vocab()
    assert {"中", "国", "人", "hello", ",", "!"} <= set(w.get_vocab())


def test_train_arguments_checked(tmp_path):
    """Found by a probe (session 28): special_tokens="[UNK]" became five one-character tokens,
    min_frequency=-1 was taken, a file that is not UTF-8 gave a bare UnicodeDecodeError."""
    with pytest.raises(TypeError, match="special_tokens"):
        train_wordlevel(["a b"], vocab_size=10, special_tokens="[UNK]")
    with pytest.raises(TypeError):
        trainers.WordLevelTrainer(vocab_size=10, special_tokens="[UNK]")
    with pytest.raises(OverflowError, match="min_frequency"):
        train_wordlevel(["a b"], vocab_size=10, min_frequency=-1)
    with pytest.raises(OverflowError):
        trainers.WordLevelTrainer(vocab_size=10, min_frequency=-1)
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"good words\nbad \xff byte\n")
    with pytest.raises(W.WordLevelError, match=r"bad.txt: not valid UTF-8 .* at byte 15"):
        train_wordlevel([str(bad)], vocab_size=10)
