"""scantok.Tokenizer on BPE models whose symbols are characters (SentencePiece-style files:
Llama 2, Mistral; no ByteLevel): byte_fallback, unk_token, fuse_unk. With no pre-tokenizer a
document is one piece, tokenized in C (``hfb_tokenize_chars``: tokenizers' merge_word, the
pending unknown token after the fallback bytes that follow it included) and merged in windows
when it is long (``tests/test_hf_long_pieces.py``). Ids and offsets must be tokenizers', with
windows and without, and with tiny windows that force back-offs."""
from __future__ import annotations

import json
import random

import pytest

pytest.importorskip("numpy")
pytest.importorskip("tokenizers")

import scantok  # noqa: E402
from scantok.hf import bpe as hf_bpe  # noqa: E402
from tokenizers import Tokenizer as HFTokenizer, decoders, models, normalizers, pre_tokenizers, trainers  # noqa: E402

from test_hf_long_pieces import stats, window_size, windows  # noqa: E402
from test_premerge import mixed_text  # noqa: E402

BYTE_TOKENS = [f"<0x{b:02X}>" for b in range(256)]


def train_char_bpe(rng: random.Random, *, byte_fallback: bool, unk: bool, fuse_unk: bool,
                   pre_tokenizer=None, limit_alphabet: int = 120) -> str:
    """A Llama 2 style file: Prepend("▁") and Replace(" ", "▁"), no pre-tokenizer (or the one
    given), BPE over characters trained on mixed scripts with a small alphabet, so that many
    characters are not tokens (byte fallback or the unknown token)."""
    tok = HFTokenizer(models.BPE(byte_fallback=byte_fallback, unk_token="<unk>" if unk else None,
                                 fuse_unk=fuse_unk))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    if pre_tokenizer is not None:
        tok.pre_tokenizer = pre_tokenizer
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                     decoders.Strip(" ", 1, 0)])
    special = ["<unk>", "<s>", "</s>"] + (BYTE_TOKENS if byte_fallback else [])
    trainer = trainers.BpeTrainer(vocab_size=len(special) + 1500, special_tokens=special, show_progress=False,
                                  limit_alphabet=limit_alphabet)
    tok.train_from_iterator([mixed_text(rng, rng.randint(1, 600)) for _ in range(400)], trainer)
    return tok.to_str()


def train_sp_style(rng: random.Random, *, byte_fallback: bool, unk: bool, fuse_unk: bool) -> str:
    """A SentencePiece-style file: trained on words that start with "▁" (Metaspace, split),
    then saved as Llama 2's conversion has it (Prepend + Replace, no pre-tokenizer), so that no
    token holds "▁" after another character and documents merge word by word (hf_bpe.c)."""
    tok = HFTokenizer(models.BPE(byte_fallback=byte_fallback, unk_token="<unk>" if unk else None, fuse_unk=fuse_unk))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    special = ["<unk>", "<s>", "</s>"] + (BYTE_TOKENS if byte_fallback else [])
    trainer = trainers.BpeTrainer(vocab_size=len(special) + 1500, special_tokens=special, show_progress=False,
                                  limit_alphabet=120)
    text = [mixed_text(rng, rng.randint(1, 600)) for _ in range(400)]
    text += ["".join(rng.choices(["a", "b", " ", "  ", "    ", "ab", "的是"], k=rng.randint(1, 60))) for _ in range(100)]
    tok.train_from_iterator(text, trainer)
    js = json.loads(tok.to_str())
    js["pre_tokenizer"] = None
    js["normalizer"] = {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"},
                                                            {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]}
    return json.dumps(js)


def as_shipped(js: str) -> str:
    """The file as Llama 2 ships it: <unk>, <s> and </s> added special tokens, and a template
    that puts <s> before each sequence."""
    obj = json.loads(js)
    vocab = obj["model"]["vocab"]
    obj["added_tokens"] = [{"id": vocab[t], "content": t, "single_word": False, "lstrip": False, "rstrip": False,
                            "normalized": False, "special": True} for t in ("<unk>", "<s>", "</s>")]
    obj["post_processor"] = {"type": "TemplateProcessing",
                             "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                             "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                                      {"SpecialToken": {"id": "<s>", "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
                             "special_tokens": {"<s>": {"id": "<s>", "ids": [vocab["<s>"]], "tokens": ["<s>"]}}}
    return json.dumps(obj)


def texts_of(rng: random.Random, n: int) -> list[str]:
    out = []
    for _ in range(n):
        t = mixed_text(rng, rng.randint(0, 3000))
        if rng.random() < 0.2:  # characters no training text had: byte fallback or unknown
            t += "".join(rng.choices("😀🇩🇪ꙮ𝔘∰", k=rng.randint(1, 20))) + t[: rng.randint(0, 300)]
        out.append(t)
    return out + ["", " ", "a", "😀" * 400, "ab" * 700]


def check(js: str, texts: list[str]) -> None:
    hf = HFTokenizer.from_str(js)
    want = [hf.encode(t) for t in texts]
    want_fast = [e.ids for e in hf.encode_batch_fast(texts)]
    for on in (True, False):
        with windows(on):
            ours = scantok.Tokenizer.from_str(js)
            got = [ours.encode(t) for t in texts]
            assert [e.ids for e in got] == [e.ids for e in want], on
            assert [e.offsets for e in got] == [e.offsets for e in want], on
            assert [e.tokens for e in got] == [e.tokens for e in want], on
            assert [e.word_ids for e in got] == [e.word_ids for e in want], on
            assert [e.special_tokens_mask for e in got] == [e.special_tokens_mask for e in want], on
            assert [e.ids for e in ours.encode_batch_fast(texts, num_threads=1)] == want_fast, on
            assert ours.decode_batch([e.ids for e in got]) == hf.decode_batch([e.ids for e in want]), on


def check_text(ours, hf, text: str) -> None:
    """One (hypothesis) text: encode's fields and encode_batch_fast's ids as tokenizers'; where
    tokenizers' binding refuses the text (a lone surrogate), scantok raises too."""
    try:
        want = hf.encode(text)
    except Exception:
        with pytest.raises(Exception):
            ours.encode(text)
        return
    got = ours.encode(text)
    assert (got.ids, got.offsets, got.tokens, got.word_ids) == (want.ids, want.offsets, want.tokens, want.word_ids)
    assert ours.encode_batch_fast([text, text], num_threads=1)[1].ids == want.ids


@pytest.mark.parametrize("byte_fallback,unk,fuse_unk", [(True, True, True), (True, False, False),
                                                        (False, True, True), (False, True, False),
                                                        (False, False, False)])
def test_llama2_style(byte_fallback, unk, fuse_unk):
    rng = random.Random(f"llama2 {byte_fallback} {unk} {fuse_unk}")
    js = train_char_bpe(rng, byte_fallback=byte_fallback, unk=unk, fuse_unk=fuse_unk)
    before = stats()[0]
    check(js, texts_of(rng, 40))
    assert stats()[0] > before  # long documents were merged in windows


@pytest.mark.parametrize("fuse_unk", [True, False])
def test_byte_fallback_with_missing_bytes(fuse_unk):
    """byte_fallback where some byte tokens are missing: a four-byte character becomes the
    unknown token, and an unknown character after it falls back to bytes while the unknown
    token stays pending, so that it comes after those bytes (tokenizers' order)."""
    rng = random.Random(f"missing bytes {fuse_unk}")
    js = json.loads(train_char_bpe(rng, byte_fallback=True, unk=True, fuse_unk=fuse_unk))
    for b in range(0xF0, 0xF5):
        del js["model"]["vocab"][f"<0x{b:02X}>"]
    js = json.dumps(js)
    texts = texts_of(rng, 20)
    texts += ["".join(rng.choices(["😀", "ꙮ", "∰", "a", " ", "é", "𝔘"], k=rng.randint(1, 900))) for _ in range(20)]
    check(js, texts)


@pytest.mark.parametrize("byte_fallback,unk,fuse_unk", [(True, True, True), (True, False, False),
                                                        (False, True, False), (False, False, False)])
def test_sentencepiece_style_words(byte_fallback, unk, fuse_unk):
    """Word by word (a cut before each "▁" after another character, words of one-character
    tokens cached per thread): the same tokens as tokenizers, with runs of spaces, fallback
    bytes and unknown tokens across the cuts, on a fresh tokenizer and on one whose cache is
    warm, and with byte tokens missing."""
    rng = random.Random(f"sp {byte_fallback} {unk} {fuse_unk}")
    js = train_sp_style(rng, byte_fallback=byte_fallback, unk=unk, fuse_unk=fuse_unk)
    model = scantok.Tokenizer.from_str(js)._model
    model._chars_ready()
    # words on, unless a character can be dropped (no unknown token, no byte fallback)
    assert model._chars_cut == (byte_fallback or unk)
    texts = texts_of(rng, 30) + ["a  b   c" * 40, "   " + "😀 a" * 100, "ab😀 😀ab ꙮ" * 60]
    check(js, texts)
    check(js, texts + texts[::-1])  # repeated: cache hits
    if byte_fallback:
        j = json.loads(js)
        for b in range(0xF0, 0xF5):
            del j["model"]["vocab"][f"<0x{b:02X}>"]
        check(json.dumps(j), texts)


def test_cuts_among_other_three_byte_characters():
    """The cut before "▁" (E2 96 81) is looked for at each E2 byte: characters that share its
    first one or two bytes ("▂" E2 96 82, "─" E2 94 80, "…" E2 80 A6, "€" E2 82 AC), next to
    spaces, at the ends of a text and in runs, and texts of many more pieces than a batch
    (16): the same tokens and offsets as tokenizers, cold and warm."""
    rng = random.Random("e2 cuts")
    js = train_sp_style(rng, byte_fallback=True, unk=True, fuse_unk=False)
    alphabet = ["▂", "─", "…", "€", "▁", " ", "  ", "a", "b", "ab", "\n", "é"]
    texts = ["".join(rng.choices(alphabet, k=rng.randint(1, 300))) for _ in range(60)]
    texts += ["▂", "▂ ", " ▂", "a▂ ▂a", "─" * 40, " " * 40 + "…", "€ " * 100, "a " * 500]
    check(js, texts + texts[::-1])


def word_longs(tok, *, with_bytes: bool = False) -> tuple[int, ...]:
    """(kept, hits) of the store of long words in this thread's cache of tok's model, and with
    with_bytes the bytes its blocks take."""
    from scantok._native import ffi, lib

    kept, hits, size = ffi.new("size_t *"), ffi.new("size_t *"), ffi.new("size_t *")
    lib.hfb_cache_word_longs(tok._model.cache(), kept, hits, size)
    return (kept[0], hits[0], size[0]) if with_bytes else (kept[0], hits[0])


WORD_LONG_BUDGET = 4 << 20  # hf_bpe.c: the long-word store's bytes per thread


def test_long_words_from_the_store():
    """Words of 25-512 bytes (after an indentation of "▁", three bytes each; across a line
    break, where there is no cut) are kept per thread as short ones are: the same tokens and
    offsets as tokenizers on a fresh tokenizer and on a warm one, with fallback bytes and
    unknown characters inside some (those with an unknown one are merged every time: a hit
    gives its offsets from the tokens' lengths), and with more distinct long words than the
    store has slots (2^15 in sets of two, the older one dropped), and more bytes of them than it
    keeps (4 MiB a thread: a block that would go past that is not kept)."""
    rng = random.Random("long words")
    js = train_sp_style(rng, byte_fallback=True, unk=True, fuse_unk=True)
    model = scantok.Tokenizer.from_str(js)._model
    model._chars_ready()
    vocab = json.loads(js)["model"]["vocab"]
    assert model._chars_cut
    known = [c for c in "abcdeéxyz的是" if c in vocab]  # kept words are of known characters only
    assert len(known) >= 6
    words = ["".join(rng.choices(known, k=rng.randint(6, 60))) for _ in range(300)]
    words[::10] = [w[:5] + "\n" + w[5:] for w in words[::10]]  # across a line break
    words[1::10] = [w[:5] + "😀" + w[5:] for w in words[1::10]]  # fallback bytes
    indented = [" " * rng.choice([4, 8, 12, 16]) + w for w in words]
    texts = [" ".join(rng.choices(indented, k=rng.randint(1, 40))) for _ in range(60)]
    texts += [t[:200] + "😀ꙮ\n" + t[:300] for t in texts[:8]]
    check(js, texts + texts[::-1])
    ours, hf = scantok.Tokenizer.from_str(js), HFTokenizer.from_str(js)
    want = [e.ids for e in hf.encode_batch_fast(texts)]
    assert [e.ids for e in ours.encode_batch_fast(texts, num_threads=1)] == want
    kept, hits = word_longs(ours)
    assert kept > 100 and hits > 300  # the texts repeat the same long words (blocks of <= 256 bytes)
    assert [e.ids for e in ours.encode_batch_fast(texts, num_threads=1)] == want
    assert word_longs(ours)[1] > hits
    got = [ours.encode(t) for t in texts]
    want_enc = [hf.encode(t) for t in texts]
    assert [e.offsets for e in got] == [e.offsets for e in want_enc]
    assert [e.tokens for e in got] == [e.tokens for e in want_enc]
    # 40,000 distinct long words, each twice: more than the store's 2^15 blocks, whose sets of
    # two are taken again before the repeat
    many = [" " * 8 + "".join(rng.choices(known, k=rng.randint(18, 40))) for _ in range(40000)]
    docs = [" ".join(many[i:i + 400]) for i in range(0, len(many), 400)]
    docs += docs[::-1]
    want = [e.ids for e in hf.encode_batch_fast(docs)]
    fresh = scantok.Tokenizer.from_str(js)
    assert [fresh.encode(d).ids for d in docs] == want  # on this thread: its cache is read below
    assert word_longs(fresh)[0] > 15000
    assert [e.ids for e in fresh.encode_batch_fast(docs, num_threads=2)] == want
    # deep indentations and long lines: more bytes of distinct words than the store keeps
    deep = [" " * rng.randint(40, 120) + "".join(rng.choices(known, k=rng.randint(40, 150))) for _ in range(20000)]
    docs = [" ".join(deep[i:i + 200]) for i in range(0, len(deep), 200)]
    docs += docs[::-1]
    want = [e.ids for e in hf.encode_batch_fast(docs)]
    fresh = scantok.Tokenizer.from_str(js)
    assert [fresh.encode(d).ids for d in docs] == want
    kept, hits, size = word_longs(fresh, with_bytes=True)
    assert WORD_LONG_BUDGET - 4096 < size <= WORD_LONG_BUDGET and hits > 1000


def without_characters(js: str, chars: str) -> str:
    """The file without the tokens that hold any of chars (and the merges of them), ids made
    contiguous again: as Llama 2's and Mistral's files, where "\n" and "\t" are no token
    (<0x0A>, <0x09>)."""
    obj = json.loads(js)
    model = obj["model"]
    keep = sorted((i, t) for t, i in model["vocab"].items() if not any(c in t for c in chars))
    model["vocab"] = {t: k for k, (_, t) in enumerate(keep)}
    model["merges"] = [m for m in model["merges"] if not any(c in "".join(m) for c in chars)]
    return json.dumps(obj)


def test_words_with_fallback_bytes_are_kept():
    """A word holding byte fallback tokens (Llama 2's "\n" is <0x0A>, so a word runs across each
    line break) is kept in the word cache and the long-word store, a fallback token covering
    one byte: the same tokens and offsets as tokenizers, cold and warm, short words and long."""
    rng = random.Random("fallback words")
    js = without_characters(train_sp_style(rng, byte_fallback=True, unk=True, fuse_unk=True), "\n\t")
    vocab = json.loads(js)["model"]["vocab"]
    assert "\n" not in vocab and "<0x0A>" in vocab
    model = scantok.Tokenizer.from_str(js)._model
    model._chars_ready()
    assert model._chars_cut
    known = [c for c in "abcdeéxyz的是" if c in vocab]
    lines = ["".join(rng.choices(known, k=rng.randint(1, 12))) for _ in range(200)]
    longs = ["\t" * rng.randint(0, 2) + "".join(rng.choices(known, k=rng.randint(10, 40))) for _ in range(100)]
    texts = ["\n".join(" " * rng.choice([0, 2, 4, 8]) + " ".join(rng.choices(lines + longs, k=rng.randint(1, 6)))
                       for _ in range(rng.randint(1, 30))) for _ in range(60)]
    texts += ["\n\n" + t.replace("\n", "😀\n") for t in texts[:10]]
    check(js, texts + texts[::-1])
    ours, hf = scantok.Tokenizer.from_str(js), HFTokenizer.from_str(js)
    want = [hf.encode(t) for t in texts]
    for _ in range(2):
        got = [ours.encode(t) for t in texts]
        assert [e.ids for e in got] == [e.ids for e in want]
        assert [e.offsets for e in got] == [e.offsets for e in want]
    # long words that each run across a line break: every one holds <0x0A>
    broken = ["".join(rng.choices(known, k=rng.randint(8, 20))) + "\n" + "".join(rng.choices(known, k=rng.randint(8, 20)))
              for _ in range(50)]
    docs = [" ".join(rng.choices(broken, k=40)) for _ in range(20)]
    want = [hf.encode(t) for t in docs]
    fresh = scantok.Tokenizer.from_str(js)
    for _ in range(2):
        got = [fresh.encode(t) for t in docs]
        assert [(e.ids, e.offsets) for e in got] == [(e.ids, e.offsets) for e in want]
    kept, hits = word_longs(fresh)
    assert kept >= 40 and hits > 1000


def test_fallback_token_also_merged_from_its_characters():
    """A vocabulary where the text "<0x0A>" also merges into the fallback token <0x0A>: that
    token covers six bytes there and one byte for a "\n", so a word holding the merged one is
    never kept (a hit would give it one byte); offsets as tokenizers' on every pass."""
    chars = ["▁", "a", "b", "<", "0", "x", "A", ">"]
    vocab = {t: i for i, t in enumerate(BYTE_TOKENS)}
    for t in chars + ["<0", "<0x", "<0x0", "<0x0A", "▁a"]:
        vocab[t] = len(vocab)
    merges = [["<", "0"], ["<0", "x"], ["<0x", "0"], ["<0x0", "A"], ["<0x0A", ">"], ["▁", "a"]]
    js = _legacy(vocab, merges, byte_fallback=True)
    model = scantok.Tokenizer.from_str(js)._model
    model._chars_ready()
    assert model._chars_cut
    texts = ["a<0x0A>b a\nb", "a\nb a<0x0A>b", "ab<0x0A>" * 12 + " a" + "b\n" * 12, "<0x0A>\n<0x0A>"] * 3
    hf = HFTokenizer.from_str(js)
    want = [hf.encode(t) for t in texts]
    assert "<0x0A>" in want[0].tokens and want[0].tokens.count("<0x0A>") == 2
    ours = scantok.Tokenizer.from_str(js)
    for _ in range(3):
        got = [ours.encode(t) for t in texts]
        assert [e.ids for e in got] == [e.ids for e in want]
        assert [e.offsets for e in got] == [e.offsets for e in want]


def _legacy(vocab: dict, merges: list, *, unk=None, byte_fallback=False) -> str:
    return json.dumps({"normalizer": {"type": "Sequence", "normalizers": [
        {"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
        "pre_tokenizer": None, "model": {"type": "BPE", "unk_token": unk, "fuse_unk": False,
                                         "byte_fallback": byte_fallback, "vocab": vocab, "merges": merges}})


RUNS = {"▁": 0, "▁▁": 1, "▁▁▁": 2, "a": 3, "b": 4}


@pytest.mark.parametrize("case", ["dropped", "fallback_missing", "unk_is_space", "unk_empty"])
def test_words_need_the_symbol_before_a_cut(case):
    """The word path's argument needs the symbol before a cut to end in a character other than
    "▁" (found by a helper's campaign): a character dropped (no unknown token, no byte token
    for it) leaves "▁" there ("▁▁Q▁b": tokenizers merges "▁▁▁" across the cut), and so does an
    unknown token spelled "▁" or "". Such models merge whole pieces."""
    if case == "dropped":
        js = _legacy(RUNS, [["▁", "▁"], ["▁▁", "▁"]])
    elif case == "fallback_missing":
        vocab = {**RUNS, **{f"<0x{b:02X}>": 5 + b for b in range(256) if b != 0x51}}
        js = _legacy(vocab, [["▁", "▁"], ["▁▁", "▁"]], byte_fallback=True)
    elif case == "unk_is_space":
        js = _legacy({"▁": 0, "▁▁": 1, "a": 2, "b": 3}, [["▁", "▁"]], unk="▁")
    else:
        js = _legacy({"": 0, "▁": 1, "▁▁": 2, "▁▁▁": 3, "a": 4, "b": 5}, [["", "▁"], ["▁", "▁"], ["▁▁", "▁"]], unk="")
    texts = ["a" * 32 + " Q b", "a" * 32 + "  Q b", "a" * 40 + "  Q  Q b Q" * 10]
    check(js, texts)
    model = scantok.Tokenizer.from_str(js)._model
    model._chars_ready()
    assert not model._chars_cut  # merged whole


def test_words_off_where_a_token_crosses():
    """A vocabulary with a token that holds "▁" after another character (tokenizers trained on
    whole documents: "of▁") merges whole pieces (in windows), not word by word."""
    rng = random.Random("crossing")
    js = train_char_bpe(rng, byte_fallback=True, unk=True, fuse_unk=True)
    vocab = json.loads(js)["model"]["vocab"]
    assert any(hf_bpe._INNER_SPACE.search(t) for t in vocab)
    model = scantok.Tokenizer.from_str(js)._model
    model._chars_ready()
    assert not model._chars_cut


@pytest.mark.parametrize("chunk,margin", [(1, 0), (3, 1), (16, 4)])
def test_llama2_style_tiny_windows(chunk, margin):
    rng = random.Random(f"llama2 windows {chunk} {margin}")
    js = train_char_bpe(rng, byte_fallback=True, unk=True, fuse_unk=True)
    with window_size(chunk, margin):
        check(js, texts_of(rng, 12))


def test_runs_of_one_character():
    """A document of spaces is one run of "▁" symbols (the Prepend and the Replace) and takes
    merge_run over the symbols, under every guess (hfb_set_run_guess) too; runs of a letter, an
    ideograph or a character with no token (byte fallback) follow the prepended "▁" and take
    the windows."""
    from scantok._native import ffi, lib

    rng = random.Random("char runs")
    js = train_char_bpe(rng, byte_fallback=True, unk=True, fuse_unk=True)
    texts = [ch * n + tail for ch in (" ", "a", "的", "😀", "ж") for n in (255, 256, 300, 1000, 2500)
             for tail in ("", "x", " end")]
    taken, declined = ffi.new("size_t *"), ffi.new("size_t *")
    lib.hfb_run_stats(taken, declined)
    before = taken[0]
    try:
        for guess in (0, 1, 3, 8, 32):
            lib.hfb_set_run_guess(guess)
            check(js, texts)
    finally:
        lib.hfb_set_run_guess(0)
    lib.hfb_run_stats(taken, declined)
    assert taken[0] > before


@pytest.mark.parametrize("split", [True, False])
def test_metaspace_pre_tokenizer(split):
    """Llama 2 as converted by newer transformers: Metaspace(prepend_scheme="first") as the
    pre-tokenizer, no normalizer; split=False keeps a document one piece."""
    rng = random.Random(f"metaspace {split}")
    js = json.loads(train_char_bpe(rng, byte_fallback=True, unk=True, fuse_unk=True))
    js["normalizer"] = None
    js["pre_tokenizer"] = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": split}
    check(json.dumps(js), texts_of(rng, 20))


def test_llama2_style_with_template_and_added_tokens():
    """A Llama 2 file as shipped: <s> before each sequence (TemplateProcessing), added special
    tokens in the text (the general path), pairs, truncation and padding on the fast path's
    records."""
    rng = random.Random("llama2 template")
    js = as_shipped(train_char_bpe(rng, byte_fallback=True, unk=True, fuse_unk=True))
    texts = texts_of(rng, 12) + ["hello </s> world " * 5, "<s>" + mixed_text(rng, 200)]
    check(js, texts)
    hf, ours = HFTokenizer.from_str(js), scantok.Tokenizer.from_str(js)
    for t in (hf, ours):
        t.enable_truncation(50)
        t.enable_padding(length=64)
    pairs = [(texts[i], texts[i + 1]) for i in range(0, 10, 2)]
    for (a, b) in pairs:
        x, y = ours.encode(a, b), hf.encode(a, b)
        assert (x.ids, x.offsets, x.type_ids, x.attention_mask) == (y.ids, y.offsets, y.type_ids, y.attention_mask)
        assert [o.ids for o in x.overflowing] == [o.ids for o in y.overflowing]


@pytest.mark.parametrize("prefix", [" ", "x ", "▁▁", "ab", ""])
def test_prepend_other_prefixes(prefix):
    """Prepend with another prefix: Replace runs after it, so a space in the prefix becomes the
    replacement too (found by a campaign: prefix " " gave [3, 2] for "a", tokenizers [1, 2]).
    An empty prefix makes the first character an insertion aligned to (0, 0): a token of it
    alone ends at 0 (was 1)."""
    vocab = {"<unk>": 0, "▁": 1, "a": 2, " ": 3, "x": 4, "b": 5, "x▁": 6, "▁a": 7}
    js = json.dumps({"normalizer": {"type": "Sequence", "normalizers": [
        {"type": "Prepend", "prepend": prefix}, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
        "pre_tokenizer": None, "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": False, "byte_fallback": False,
                                         "vocab": vocab, "merges": ["x ▁", "▁ a"]}})
    check(js, ["a", "a" * 40, " a b" * 30, "", " ", "xa " * 20])


def test_unknown_token_not_in_vocabulary():
    """unk_token named but missing: tokenizers fails on a character it needs it for; so does
    scantok (the C path hands such a piece to the Python one, which raises the error)."""
    rng = random.Random("missing unk")
    js = json.loads(train_char_bpe(rng, byte_fallback=False, unk=True, fuse_unk=True))
    js["model"]["unk_token"] = "<nope>"
    js = json.dumps(js)
    hf, ours = HFTokenizer.from_str(js), scantok.Tokenizer.from_str(js)
    text = "ab " * 20 + "😀" + "cd " * 20
    with pytest.raises(Exception):
        hf.encode(text)
    with pytest.raises(Exception):
        ours.encode(text)
    fine = "ab " * 40  # no unknown character: both encode it
    assert ours.encode(fine).ids == hf.encode(fine).ids


def test_short_and_long_pieces_agree():
    """The C path (pieces of _C_CHARS_MIN characters or more) and the Python one agree on the
    same piece."""
    rng = random.Random("c and python")
    js = train_char_bpe(rng, byte_fallback=True, unk=True, fuse_unk=False)
    model = scantok.Tokenizer.from_str(js)._model
    for _ in range(200):
        piece = mixed_text(rng, rng.randint(1, 120)) + "".join(rng.choices("😀ꙮ", k=rng.randint(0, 3)))
        want = model._tokenize_chars(piece)
        got = model._tokenize_chars_c(piece)
        assert got == want, piece
    assert hf_bpe._C_CHARS_MIN > 1


@pytest.mark.parametrize("strip", [False, True])
@pytest.mark.parametrize("pre_tokenizer", [None, {"type": "Whitespace"}])
def test_prepend_empty_prefix_general_path(pre_tokenizer, strip):
    """Prepend("") alone, on the general path (no Replace after it) and with added tokens: the
    first character of each segment is aligned to (0, 0) of the segment, as tokenizers aligns an
    inserted character, even where a Strip before it took the segment's first characters (found
    by a helper's campaign: " a" gave (1, 1), tokenizers (0, 0)); tokenizers panics when
    Lowercase or NFD follows it."""
    vocab = {"<unk>": 0, "a": 1, "b": 2, "ab": 3, "c": 4, "é": 5, "<s>": 6}
    norm = {"type": "Prepend", "prepend": ""}
    if strip:
        norm = {"type": "Sequence", "normalizers": [{"type": "Strip", "strip_left": True, "strip_right": False}, norm]}
    js = json.dumps({"normalizer": norm, "pre_tokenizer": pre_tokenizer,
                     "added_tokens": [{"id": 6, "content": "<s>", "single_word": False, "lstrip": False,
                                       "rstrip": False, "normalized": False, "special": True}],
                     "model": {"type": "BPE", "unk_token": "<unk>", "vocab": vocab, "merges": ["a b"]}})
    check(js, ["cab", "c", "é", "abc", "ab c", "c<s>c", "<s>é ab", "c" * 40, "x" + "ab" * 30, " a", "  ab", "a<s> b",
               " c" * 30])


LAYOUTS = {  # how a file over characters puts "▁" into the text: normalizer, pre-tokenizer
    "legacy": ({"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"},
                                                   {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
               None),
    "replace": ({"type": "Replace", "pattern": {"String": " "}, "content": "▁"}, None),  # Gemma
    "metaspace_first": (None, {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": False}),
    "metaspace_always": (None, {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": False}),
    "metaspace_never": (None, {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "never", "split": False}),
}


def with_layout(js: str, layout: str) -> str:
    obj = json.loads(js)
    obj["normalizer"], obj["pre_tokenizer"] = LAYOUTS[layout]
    return json.dumps(obj)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_encode_one_c_call_equals_tokenizers(layout):
    """encode() of a text without added tokens is one C call (hfb_encode_chars through
    scantok._pylist, a lazy Encoding), of one with added tokens one call per segment between
    them, encode_batch_fast one call per batch: every field equals tokenizers', with pairs,
    truncation (stride, both directions), padding, the template's special tokens and texts
    holding added tokens (where Metaspace's "first" puts its prefix only before the segment
    that starts the text), for each layout that puts "▁" into the text by a formula
    (_CharPiece)."""
    rng = random.Random("one C call " + layout)
    js = with_layout(as_shipped(train_sp_style(rng, byte_fallback=True, unk=True, fuse_unk=True)), layout)
    hf, ours = HFTokenizer.from_str(js), scantok.Tokenizer.from_str(js)
    # the paths under test: one C call, and one per segment between added tokens
    assert ours._chars_c is not None and ours.encode("a b")._lazy is not None
    assert ours.encode("a <s> b</s>")._lazy is not None
    alpha = [" ", "  ", "a", "b", "é", "中", "😀", "\u2581", "<s>", "</s>", "\n", "\t", "ab", "\U0010FFFF", "\x00"]

    def fields(e):
        return (e.ids, e.tokens, e.offsets, e.word_ids, e.type_ids, e.special_tokens_mask, e.attention_mask,
                e.sequence_ids, [(o.ids, o.offsets, o.word_ids, o.type_ids) for o in e.overflowing])

    for trial in range(60):
        mode = trial % 4
        for t in (hf, ours):
            t.no_truncation()
            t.no_padding()
        if mode == 1:
            ml, side = rng.randrange(3, 40), rng.choice(["left", "right"])
            stride = rng.randrange(0, ml - 2)
            for t in (hf, ours):
                t.enable_truncation(ml, stride=stride, direction=side)
        elif mode == 2:
            length = rng.choice([None, 50])
            for t in (hf, ours):
                t.enable_padding(length=length)
        texts = [mixed_text(rng, rng.randint(0, 300)) if rng.random() < 0.5 else
                 "".join(rng.choices(alpha, k=rng.randint(0, 60))) for _ in range(rng.randint(1, 5))]
        add = rng.random() < 0.7
        for x in texts:
            assert fields(ours.encode(x, add_special_tokens=add)) == fields(hf.encode(x, add_special_tokens=add)), x
        got = ours.encode_batch(texts, add_special_tokens=add, num_threads=2)
        assert [fields(e) for e in got] == [fields(e) for e in hf.encode_batch(texts, add_special_tokens=add)]
        got = ours.encode_batch_fast(texts, add_special_tokens=add, num_threads=1)
        want = hf.encode_batch_fast(texts, add_special_tokens=add)
        assert [(e.ids, e.attention_mask, e.special_tokens_mask) for e in got] == \
            [(e.ids, e.attention_mask, e.special_tokens_mask) for e in want]
        if mode == 3:
            assert fields(ours.encode(texts[0], texts[-1])) == fields(hf.encode(texts[0], texts[-1]))


@pytest.mark.parametrize("layout", ["replace_two_chars", "metaspace_split", "metaspace_after_a_normalizer",
                                    "replace_then_prepend"])
def test_layouts_without_a_formula_keep_the_general_path(layout):
    """Layouts _CharPiece does not take (a replacement of two characters, Metaspace that splits
    or follows a normalizer, Prepend after Replace) keep the general path, equal to
    tokenizers'."""
    rng = random.Random("no formula " + layout)
    js = json.loads(as_shipped(train_sp_style(rng, byte_fallback=True, unk=True, fuse_unk=True)))
    meta = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": False}
    js["normalizer"], js["pre_tokenizer"] = {
        "replace_two_chars": ({"type": "Replace", "pattern": {"String": " "}, "content": "▁▁"}, None),
        "metaspace_split": (None, {**meta, "split": True}),
        "metaspace_after_a_normalizer": ({"type": "NFC"}, meta),
        "replace_then_prepend": ({"type": "Sequence", "normalizers": [
            {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}, {"type": "Prepend", "prepend": "▁"}]}, None),
    }[layout]
    js = json.dumps(js)
    assert scantok.Tokenizer.from_str(js)._char_fast is None
    check(js, texts_of(rng, 10) + [" a b ", "<s> a</s>b", "  "])


REPLACEMENTS = ["_", "é", "▁", "𝔘"]  # one to four bytes of UTF-8
NORMALIZED_IN_C = {
    "prepend": lambda r: ({"type": "Sequence", "normalizers": [
        {"type": "Prepend", "prepend": r + "x "}, {"type": "Replace", "pattern": {"String": " "}, "content": r}]}, None),
    "replace": lambda r: ({"type": "Replace", "pattern": {"String": " "}, "content": r}, None),
    "always": lambda r: (None, {"type": "Metaspace", "replacement": r, "prepend_scheme": "always", "split": False}),
    "first": lambda r: (None, {"type": "Metaspace", "replacement": r, "prepend_scheme": "first", "split": False}),
    "never": lambda r: (None, {"type": "Metaspace", "replacement": r, "prepend_scheme": "never", "split": False}),
}


@pytest.mark.parametrize("layout", sorted(NORMALIZED_IN_C))
@pytest.mark.parametrize("rep", REPLACEMENTS)
def test_normalizer_made_in_c(rep, layout):
    """Under each layout _CharPiece takes, the piece is made in C as the text becomes UTF-8
    (pylist.c's meta: the prefix, then each space as the replacement's 1-4 bytes, 16 bytes at
    a time): tokenizers' ids and offsets on texts of every str kind (ASCII, Latin-1, UCS-2,
    UCS-4), spaces at either end and in runs, the replacement itself in the text, and lengths
    around the 16- and 32-byte blocks; encode, encode_batch_fast and texts with added tokens."""
    from hypothesis import given, settings, strategies as st

    chars = ["a", "b", "x", "é", "中", "😀", "\n", rep]
    vocab = {t: i for i, t in enumerate(["<unk>", "<s>"] + BYTE_TOKENS)}
    for t in chars + [rep + "a", "ab", rep + rep, "a" + rep]:
        vocab.setdefault(t, len(vocab))
    merges = [[rep, "a"], ["a", "b"], [rep, rep], ["a", rep]]
    normalizer, pre = NORMALIZED_IN_C[layout](rep)
    js = json.dumps({"normalizer": normalizer, "pre_tokenizer": pre,
                     "added_tokens": [{"id": 1, "content": "<s>", "single_word": False, "lstrip": False,
                                       "rstrip": False, "normalized": False, "special": True}],
                     "model": {"type": "BPE", "unk_token": "<unk>", "byte_fallback": True, "vocab": vocab,
                               "merges": merges}})
    hf, ours = HFTokenizer.from_str(js), scantok.Tokenizer.from_str(js)
    assert ours._chars_c is not None and ours._char_fast.metas is not None

    def same(texts):
        want = [hf.encode(t) for t in texts]
        got = [ours.encode(t) for t in texts]
        assert [(e.ids, e.offsets) for e in got] == [(e.ids, e.offsets) for e in want], texts
        fast = ours.encode_batch_fast(texts, num_threads=1)
        assert [e.ids for e in fast] == [e.ids for e in hf.encode_batch_fast(texts)], texts

    same(["", " ", "  ", rep, " a", rep + "a", "a ", "ab" * 40, " " * 33, (" a" * 16)[1:], "é" * 31 + " ", "😀 " * 17,
          "a<s> b", " <s>" + rep, "Z b" * 20, "ÿ" + " ab" * 11, "\n " * 16])
    alphabet = st.sampled_from([" ", " ", "  ", "a", "b", "ab", "é", "ÿ", "中", "😀", "\n", rep, "Z", "<s>"])

    @settings(max_examples=60, deadline=None, derandomize=True)
    @given(st.lists(st.lists(alphabet, max_size=70).map("".join), min_size=1, max_size=3))
    def run(texts):
        same(texts)

    run()


def test_normalizer_made_in_c_refuses_bad_input():
    """A lone surrogate is refused as before (the str's conversion raises, as tokenizers refuses
    the str); a malformed meta is a TypeError or ValueError, not a crash."""
    from scantok import _pylist
    from scantok.hf.errors import TextEncodeError

    js = with_layout(train_sp_style(random.Random("meta"), byte_fallback=True, unk=True, fuse_unk=True), "legacy")
    ours = scantok.Tokenizer.from_str(js)
    assert ours._char_fast.metas is not None
    for text in ["a \ud800 b", "\udfff", " " * 40 + "\ud800"]:
        with pytest.raises(TextEncodeError):
            ours.encode(text)
        with pytest.raises(TextEncodeError):
            ours.encode_batch_fast(["ok", text], num_threads=1)
    fn, model = ours._chars_c
    ours._model._chars_ready()
    args = (fn, model, ours._model.cache_address(), ours._chars_skip[0, 1], ["a b"], None)
    assert _pylist.hf_encode_batch(*args, (b"\xe2\x96\x81", "▁", False))[0] == \
        _pylist.hf_encode_batch(*args[:4], ["▁a▁b"], None)[0]
    for bad, err in [("x", TypeError), ((b"", "▁"), TypeError), (("▁", "▁", False), TypeError),
                     ((b"", "▁▁", False), ValueError), ((b"", "", False), ValueError)]:
        with pytest.raises(err):
            _pylist.hf_encode_batch(*args, bad)
        with pytest.raises(err):
            _pylist.hf_encode_offsets(*args[:4], "a b", False, 0, None, bad)


def utf8_shape(data: bytes) -> bool:
    """hf_bpe.c's utf8_shape_ok in Python: each lead byte (0xC0 and up; 0xF0 and up four bytes
    long) followed by its continuation bytes, none elsewhere, the last character whole."""
    i = 0
    while i < len(data):
        c = data[i]
        n = 1 if c < 0x80 else 0 if c < 0xC0 else 2 if c < 0xE0 else 3 if c < 0xF0 else 4
        if not n or i + n > len(data) or any(b & 0xC0 != 0x80 for b in data[i + 1:i + n]):
            return False
        i += n
    return True


def test_bytes_not_a_strs_utf8_go_to_the_general_path():
    """hfb_tokenize_chars on bytes (the cffi function, as no str gives them): HFB_SLOW exactly
    where they are not shaped as UTF-8 (utf8_shape), with and without offsets; lead bytes cut
    at and across the 16-byte blocks of its test, bytes with too few continuation bytes, stray
    continuation bytes."""
    from hypothesis import given, settings, strategies as st
    from scantok._native import ffi, lib

    rng = random.Random("shapes")
    tok = scantok.Tokenizer.from_str(train_sp_style(rng, byte_fallback=True, unk=True, fuse_unk=True))
    model = tok._model
    model._chars_ready()

    def run(data: bytes):
        n = len(data)
        ids, starts, ends = (ffi.new("uint32_t[]", n + 1) for _ in range(3))
        fast = lib.hfb_tokenize_chars(model._model, model.cache(), data, n, ids, ffi.NULL, ffi.NULL)
        full = lib.hfb_tokenize_chars(model._model, model.cache(), data, n, ids, starts, ends)
        want_slow = not utf8_shape(data)
        assert (fast == -2) == want_slow and (full == -2) == want_slow, data
        if want_slow or not n:
            return
        assert fast == full > 0
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:  # shaped as UTF-8 but no str's (an overlong form, a code point past U+10FFFF)
            return
        assert list(ids)[:fast] == [t[0] for t in model._tokenize_chars(text)], data

    pieces = ["a", "é", "▁", "中", "😀", "\x7f"]
    for k in range(40):
        base = "".join(rng.choices(pieces, k=k)).encode()
        for cut in range(len(base) + 1):
            run(base[:cut])
        for at in range(len(base)):
            run(base[:at] + bytes([rng.choice([0x80, 0xBF, 0xC0, 0xC3, 0xDF, 0xE0, 0xE2, 0xEF, 0xF0, 0xF7, 0xF8, 0xFF, 0x41])]) + base[at + 1:])

    @settings(max_examples=300, deadline=None, derandomize=True)
    @given(st.binary(max_size=70))
    def random_bytes(data):
        run(data)

    random_bytes()


def test_short_words_of_many_tokens_are_kept():
    """A word of up to 24 bytes with more tokens than a word table slot holds (8) is kept in
    the long-word store, its slot saying so: hits on the next pass, the same ids and offsets as
    tokenizers, with fallback bytes in some, and with the store full (4 MiB) before they come,
    where they are merged every time."""
    letters = "abcdefghijklmnop"
    vocab = {t: i for i, t in enumerate(["<unk>"] + BYTE_TOKENS)}
    for t in ["▁", *letters, "▁a", "ab"]:
        vocab[t] = len(vocab)
    js = _legacy(vocab, [["▁", "a"], ["a", "b"]], unk="<unk>", byte_fallback=True)
    rng = random.Random("many tokens")
    words = ["".join(rng.choices(letters, k=rng.randint(9, 23))) for _ in range(300)]
    words[::7] = [w[:4] + "\n" + w[4:] for w in words[::7]]  # a fallback byte inside
    texts = [" ".join(rng.choices(words, k=rng.randint(1, 60))) for _ in range(80)]
    hf, ours = HFTokenizer.from_str(js), scantok.Tokenizer.from_str(js)
    assert ours._model._chars_ready() is not False and ours._model._chars_cut
    want = [hf.encode(t) for t in texts]
    for n in range(3):
        got = [ours.encode(t) for t in texts]
        assert [(e.ids, e.offsets) for e in got] == [(e.ids, e.offsets) for e in want]
        if n == 0:
            kept, hits = word_longs(ours)
            assert kept >= len(set(words)) - 5
    # the pieces of passes two and three that the store holds (more than 8 tokens or 24 bytes)
    pieces = [w for t in texts for w in t.split(" ")]
    stored = sum(len(hf.encode(w).ids) > 8 or len(("▁" + w).encode()) > 24 for w in pieces)
    assert stored > len(pieces) // 2
    assert word_longs(ours)[1] - hits == 2 * stored
    assert [e.ids for e in ours.encode_batch_fast(texts, num_threads=1)] == [e.ids for e in want]
    # the store full of long words first: the short ones are merged at every sight
    full = scantok.Tokenizer.from_str(js)
    filler = [" " * 140 + "".join(rng.choices(letters, k=60)) for _ in range(9000)]
    assert [e.ids for e in full.encode_batch_fast(filler, num_threads=1)] == \
        [e.ids for e in hf.encode_batch_fast(filler)]
    assert word_longs(full, with_bytes=True)[2] > WORD_LONG_BUDGET - 4096
    for _ in range(2):
        got = [full.encode(t) for t in texts]
        assert [(e.ids, e.offsets) for e in got] == [(e.ids, e.offsets) for e in want]


def test_offsets_of_long_tokens_near_the_end():
    """Offsets count the characters of each token's bytes (hf_bpe.c, leads_between: whole
    words of eight, then the rest by one load, from the text's last eight bytes when fewer
    follow): tokens of 1-24 bytes of one-, two- and three-byte characters, ending at every
    distance from the text's end, and fallback bytes among them; tokenizers' offsets."""
    vocab = {t: i for i, t in enumerate(["<unk>"] + BYTE_TOKENS)}
    merges = []
    for c in ["a", "é", "中"]:
        vocab[c] = len(vocab)
        for n in (2, 4, 8):
            merges.append([c * (n // 2), c * (n // 2)])
            vocab[c * n] = len(vocab)
    for a, b in [("a" * 8, "中"), ("é" * 4, "a" * 4), ("中" * 4, "é")]:  # of 11-14 bytes, mixed
        merges.append([a, b])
        vocab[a + b] = len(vocab)
    vocab["▁"] = len(vocab)
    js = _legacy(vocab, merges, unk="<unk>", byte_fallback=True)
    hf, ours = HFTokenizer.from_str(js), scantok.Tokenizer.from_str(js)
    rng = random.Random("near the end")
    texts = []
    for _ in range(300):
        t = "".join(rng.choice(["a", "é", "中", "😀", "a" * 8 + "中", "é" * 4 + "a" * 4, "中" * 4 + "é"])
                    * rng.choice([1, 2, 3, 4, 7, 8, 9, 15, 16]) for _ in range(rng.randint(1, 5)))
        texts += [t, t[rng.randint(0, len(t)):]]
    want = [hf.encode(t) for t in texts]
    for _ in range(2):  # merged, then from the word caches
        got = [ours.encode(t) for t in texts]
        assert [(e.ids, e.offsets) for e in got] == [(e.ids, e.offsets) for e in want]


def encode_batch_singles(ours, hf, texts, monkeypatch) -> list[str]:
    """encode_batch of texts on one thread and two, with and without special tokens: every
    field as tokenizers'; returns the texts it encoded one by one (_encode_one)."""
    def fields(e):
        return (e.ids, e.tokens, e.offsets, e.word_ids, e.type_ids, e.special_tokens_mask, e.attention_mask)

    singles = []
    real_one = type(ours)._encode_one
    monkeypatch.setattr(type(ours), "_encode_one", lambda self, t, add: singles.append(t) or real_one(self, t, add))
    for threads in (1, 2):
        for add in (True, False):
            want = [fields(e) for e in hf.encode_batch(texts, add_special_tokens=add)]
            assert [fields(e) for e in ours.encode_batch(texts, add_special_tokens=add, num_threads=threads)] == want
    monkeypatch.setattr(type(ours), "_encode_one", real_one)
    return singles


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_encode_batch_in_one_call_a_prefix(layout, monkeypatch):
    """encode_batch under each layout _CharPiece takes: the texts with no added token in one C
    call for each prefix they get (Metaspace's "always" and "first" put none before a text that
    starts with a space or "▁"), the rest one by one; every field as tokenizers', on one thread
    and two; a lone surrogate raises encode()'s error."""
    rng = random.Random("batch " + layout)
    js = with_layout(as_shipped(train_sp_style(rng, byte_fallback=True, unk=True, fuse_unk=True)), layout)
    hf, ours = HFTokenizer.from_str(js), scantok.Tokenizer.from_str(js)
    monkeypatch.setattr(scantok.hf.tokenizer, "usable_cpus", lambda: 2)
    monkeypatch.setattr(scantok.hf.tokenizer, "PARALLEL_MIN", 0)
    texts = ["hello world", "", " leading", "\u2581x y", "a <s> b", "é 中 😀", "ab " * 300, "x</s>"] * 3
    texts += [mixed_text(rng, rng.randint(0, 400)) for _ in range(20)]

    singles = encode_batch_singles(ours, hf, texts, monkeypatch)
    assert singles and all(not t or "<s>" in t or "</s>" in t for t in singles)
    with pytest.raises(UnicodeEncodeError):
        ours.encode_batch(texts[:4] + ["a \ud800"] + texts[4:8], num_threads=2)


def test_batch_groups_under_a_layout():
    """The batch calls encode a chunk's texts in groups (pylist.c: up to 256 texts or ~64 KB a
    group, the GIL released once a group), copying the normalizer's piece of each into the
    group: a batch of 700 texts whose groups hold tiny, empty, added-token and 100 KB texts,
    every field as tokenizers' (encode_batch and encode_batch_fast, one thread: one call)."""
    rng = random.Random("groups")
    js = with_layout(as_shipped(train_sp_style(rng, byte_fallback=True, unk=True, fuse_unk=True)), "legacy")
    hf, ours = HFTokenizer.from_str(js), scantok.Tokenizer.from_str(js)
    texts = [mixed_text(rng, rng.choice([0, 1, 3, 20, 200, 2000])) for _ in range(700)]
    for i in (5, 300, 301, 600):
        texts[i] = mixed_text(rng, 100_000)
    for i in (7, 256, 512):
        texts[i] = "a <s> b"
    got = ours.encode_batch(texts, num_threads=1)
    want = hf.encode_batch(texts)
    assert [(e.ids, e.offsets, e.tokens) for e in got] == [(e.ids, e.offsets, e.tokens) for e in want]
    assert [e.ids for e in ours.encode_batch_fast(texts, num_threads=1)] == [e.ids for e in want]
