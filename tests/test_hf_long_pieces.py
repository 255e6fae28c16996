"""scantok.Tokenizer's long pieces (hf_bpe.c, "long pieces"): a piece of more than 248 bytes
is merged in windows whose junctions are checked by merging the two tokens' bytes, backing off
with wider windows where a junction is not compatible. The ids and offsets must be tokenizers',
and the same as merging the whole piece at once (``hfb_set_windows(0)``), with the default
windows and with tiny ones that put a junction in nearly every piece and force back-offs; a
vocabulary that gives one id to two strings merges long pieces whole."""
from __future__ import annotations

import json
import random
import string
from pathlib import Path

import pytest

pytest.importorskip("numpy")
pytest.importorskip("tokenizers")

import scantok  # noqa: E402
from scantok._native import ffi, lib  # noqa: E402
from tokenizers import Tokenizer as HFTokenizer, decoders, models, pre_tokenizers, trainers  # noqa: E402

from test_hf_premerge import byte_level_bpe_json, random_bpe_json  # noqa: E402
from test_premerge import ALPHABET, mixed_text, switched  # noqa: E402

NO_SPACE = [c for c in ALPHABET if c.isalpha()]  # a run of these is one piece (a word)

SHARED = Path(__file__).resolve().parents[2] / "shared"
if not SHARED.exists():
    SHARED = Path("/work/shared")
DEEPSEEK = SHARED / "hf" / "deepseek_v3" / "tokenizer.json"

# runs that make one long piece under a byte-level pre-tokenizer: letters without a space,
# spaces, newlines, CJK, base64-like text, words glued together, accented and two-byte text
RUNS = ["ab", "aab" + string.ascii_lowercase, string.ascii_letters, " ", "\n", "\t ", "ее",
        "的是一不了人我在", "あいうえおかき", "abcabcx", "é", "=-", "Zürich", "ABCDEFabcdef0123456789+/",
        "thequickbrownfoxjumps"]


def windows(on: bool):
    return switched(lib.hfb_set_windows, on)


class window_size:
    """Windows of chunk + margin bytes for every piece longer than that, for the block."""

    def __init__(self, chunk: int, margin: int):
        self.chunk, self.margin = chunk, margin

    def __enter__(self):
        lib.hfb_set_long_window(self.chunk, self.margin)

    def __exit__(self, *exc):
        lib.hfb_set_long_window(0, 0)


def stats() -> tuple[int, int]:
    pieces, failures = ffi.new("size_t *"), ffi.new("size_t *")
    lib.hfb_long_window_stats(pieces, failures)
    return pieces[0], failures[0]


def long_texts(rng: random.Random, n: int, lo: int = 249, hi: int = 3000) -> list[str]:
    out = []
    for _ in range(n):
        run = rng.choice(RUNS)
        text = "".join(rng.choices(run, k=rng.randint(lo, hi)))
        if rng.random() < 0.3:  # several pieces, some long
            text = text + " " + mixed_text(rng, rng.randint(1, 200)) + " " + text[::-1]
        out.append(text)
    return out


def check(json_str: str, hf: HFTokenizer, texts: list[str], *, offsets: bool = True) -> None:
    want = [e.ids for e in hf.encode_batch_fast(texts)]
    want_offsets = [hf.encode(t).offsets for t in texts] if offsets else None
    for on in (True, False):
        with windows(on):
            ours = scantok.Tokenizer.from_str(json_str)  # a new model: its caches start empty
            assert [e.ids for e in ours.encode_batch_fast(texts, num_threads=1)] == want, on
            if offsets:
                got = [ours.encode(t) for t in texts]
                assert [e.ids for e in got] == want, on
                assert [e.offsets for e in got] == want_offsets, on


def gpt2_style_json(rng: random.Random) -> str:
    tok = HFTokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=3000, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    # runs of spaces, letters and CJK in the training text: merges of long tokens of them
    text = [mixed_text(rng, rng.randint(1, 400)) for _ in range(300)]
    text += ["".join(rng.choices(run, k=rng.randint(1, 64))) for run in RUNS for _ in range(20)]
    tok.train_from_iterator(text, trainer)
    return tok.to_str()


@pytest.fixture(scope="module")
def gpt2_style():
    js = gpt2_style_json(random.Random("gpt2 style, long pieces"))
    return js, HFTokenizer.from_str(js)


@pytest.fixture(scope="module")
def deepseek():
    return DEEPSEEK.read_text(encoding="utf-8"), HFTokenizer.from_file(str(DEEPSEEK))


@pytest.mark.parametrize("which", ["gpt2_style", "deepseek"])
def test_long_pieces_default_windows(which, request):
    js, hf = request.getfixturevalue(which)
    before = stats()[0]
    check(js, hf, long_texts(random.Random(which), 40))
    assert stats()[0] > before  # the windows were used


@pytest.mark.parametrize("chunk,margin", [(1, 0), (2, 0), (3, 1), (8, 4), (40, 8)])
@pytest.mark.parametrize("which", ["gpt2_style", "deepseek"])
def test_long_pieces_tiny_windows(which, chunk, margin, request):
    """Windows of a few bytes: nearly every piece has junctions, many not compatible."""
    js, hf = request.getfixturevalue(which)
    rng = random.Random(f"{which} {chunk} {margin}")
    texts = long_texts(rng, 8, 20, 600) + [mixed_text(rng, rng.randint(1, 300)) for _ in range(20)]
    with window_size(chunk, margin):
        check(js, hf, texts, offsets=chunk < 3)


def test_back_offs_happen():
    """Tiny windows over runs whose merges reach far: junctions fail and are redone."""
    js = gpt2_style_json(random.Random("back-offs"))
    hf = HFTokenizer.from_str(js)
    texts = [" " * 500 + "x", "ab" * 300, "\n" * 700, "的是" * 200]
    _, failures = stats()
    with window_size(1, 0):
        check(js, hf, texts)
    assert stats()[1] > failures


def test_random_merge_orders():
    """Vocabularies whose merges come in random order (a merge may use a token a later merge
    makes), every piece of three bytes or more windowed."""
    rng = random.Random("long pieces, random merge orders")
    for i in range(60):
        js = random_bpe_json(rng, shared_ids=False)
        hf = HFTokenizer.from_str(js)
        docs = ["".join(rng.choices(ALPHABET, k=rng.randint(1, 80))) for _ in range(20)]
        docs += ["".join(rng.choices(NO_SPACE, k=rng.randint(250, 600))) for _ in range(3)]
        with window_size(*[(1, 0), (2, 1), (4, 0), (0, 0)][i % 4]):
            check(js, hf, docs, offsets=False)


def test_one_id_for_two_strings_merges_whole():
    """A vocabulary that gives one id to two strings: tokenizers' heap can then merge a pair by
    another pair's rank, so long pieces are merged whole (no windows), and still exactly."""
    rng = random.Random("shared ids")
    seen = 0
    for _ in range(40):
        js = random_bpe_json(rng)
        model = scantok.Tokenizer.from_str(js)
        vocab = json.loads(js)["model"]["vocab"]
        if len(set(vocab.values())) == len(vocab):
            continue
        seen += 1
        hf = HFTokenizer.from_str(js)
        docs = ["".join(rng.choices(NO_SPACE, k=rng.randint(250, 600))) for _ in range(4)]
        before = stats()[0]
        assert [e.ids for e in model.encode_batch_fast(docs, num_threads=1)] == \
            [e.ids for e in hf.encode_batch_fast(docs)]
        assert stats()[0] == before  # merged whole
    assert seen


def test_one_id_for_two_strings_stale_heap_entry():
    """tokenizers' heap, when "ab" and "abx" share id 10: the entry pushed for (a, b) is still
    taken after b became bx, since (a, bx) has the same new id, and merges at (a, b)'s rank
    ("abxy": [10, 3], where the lowest rank first gives [0, 5]). Such a vocabulary merges every
    piece on the heap, which checks entries as tokenizers does (found by a review)."""
    vocab = {c: i for i, c in enumerate("abxy")}
    vocab.update({"bx": 4, "ab": 10, "abx": 10, "bxy": 5})
    js = json.dumps({"version": "1.0", "model": {"type": "BPE", "vocab": vocab,
                                                  "merges": ["b x", "a b", "bx y", "a bx"]},
                     "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                                       "use_regex": False}})
    hf, ours = HFTokenizer.from_str(js), scantok.Tokenizer.from_str(js)
    texts = ["abxy", "abx", "zabxy", "abxyabxy", "ab" * 200 + "xy"]
    assert [ours.encode(t).ids for t in texts] == [hf.encode(t).ids for t in texts]
    assert hf.encode("abxy").ids == [10, 3]


def test_shared_ids_random():
    """Random vocabularies where a token and a longer one share an id (as above, by chance),
    merges in random order: every piece as tokenizers merges it, and (found by a fuzz campaign
    in session 23) the offsets of `encode`: a token's end is not its start plus its id's length
    when the id is given to strings of two lengths."""
    rng = random.Random("shared ids, stale entries")
    letters = "abcxy"
    for _ in range(300):
        vocab = {c: i for i, c in enumerate(letters)}
        toks = set()
        while len(toks) < 12:
            w = "".join(rng.choices(letters, k=rng.randint(2, 5)))
            toks.add(w)
        nid = len(vocab)
        for w in sorted(toks):
            if w not in vocab:
                vocab[w], nid = nid, nid + 1
        # a longer token w + c takes w's id, and w's tail + c is a token (so that the pair
        # after w's first letter can grow into the one that makes w + c)
        for _ in range(2):
            w = rng.choice([t for t in vocab if 2 <= len(t) <= 3])
            c = rng.choice(letters)
            if w[1:] + c not in vocab:
                vocab[w[1:] + c], nid = nid, nid + 1
            vocab[w + c] = vocab[w]
        merges = [f"{w[:c]} {w[c:]}" for w in vocab for c in range(1, len(w))
                  if w[:c] in vocab and w[c:] in vocab]
        rng.shuffle(merges)
        js = json.dumps({"version": "1.0", "model": {"type": "BPE", "vocab": vocab, "merges": merges},
                         "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                                           "use_regex": False}})
        hf, ours = HFTokenizer.from_str(js), scantok.Tokenizer.from_str(js)
        texts = ["".join(rng.choices(letters, k=rng.randint(1, 12))) for _ in range(30)]
        assert [e.ids for e in ours.encode_batch_fast(texts, num_threads=1)] == \
            [e.ids for e in hf.encode_batch_fast(texts)], js
        want = [(e.ids, e.offsets) for e in hf.encode_batch(texts)]
        assert [(e.ids, e.offsets) for e in (ours.encode(t) for t in texts)] == want, js
        assert [(e.ids, e.offsets) for e in ours.encode_batch(texts, num_threads=1)] == want, js


def test_shared_id_of_two_lengths_offsets():
    """One id for "ü" (2 bytes, merged) and a 3-byte string: the token's end is where its
    merged bytes end, not its start plus the id's last listed length (which put the end past
    the piece and read the next start one entry past the text's code point index)."""
    vocab = {c: b for b, c in enumerate(BYTE_LEVEL)}
    vocab.update({"Ã¼": 275, "Ĺ¥a": 275})
    js = byte_level_bpe_json(vocab, ["Ã ¼"])
    hf = HFTokenizer.from_str(js)
    assert hf.encode("üb").offsets == [(0, 1), (1, 2)]
    check(js, hf, ["üb", "büb", "ü ü", "üüüb" * 40, "Ĺ¥a ü"])


@pytest.mark.parametrize("which", ["gpt2_style", "deepseek"])
def test_runs_of_one_byte(which, request):
    """A run of 256 bytes or more of one byte takes merge_run (copies of a period token, then
    the merge of its last bytes, each junction checked): every ASCII character, around that
    length, alone and between other text."""
    js, hf = request.getfixturevalue(which)
    texts = []
    for code in range(128):
        ch = chr(code)
        for n in (255, 256, 257, 383, 384, 1000) + ((4097, 20011) if ch in " \n\t=-a0" else ()):
            texts += [ch * n, f"x{ch * n}", f" {ch * n}yz\n"]
    check(js, hf, texts)


BYTE_LEVEL = pre_tokenizers.ByteLevel.alphabet()


def run_vocab_json(rng: random.Random) -> str:
    """A byte-level BPE file whose only long tokens are runs of "a" and of spaces, of random
    lengths, with the merges of random cuts of them in random order: runs that need not merge
    into copies of one token followed by a short tail."""
    vocab = {c: i for i, c in enumerate(BYTE_LEVEL)}
    for ch in ("a", "Ġ"):
        for n in rng.sample(range(2, 13), rng.randint(1, 8)):
            vocab.setdefault(ch * n, len(vocab))
    merges = [f"{tok[:cut]} {tok[cut:]}" for tok in vocab if len(tok) > 1 for cut in range(1, len(tok))
              if tok[:cut] in vocab and tok[cut:] in vocab and rng.random() < 0.7]
    rng.shuffle(merges)
    return byte_level_bpe_json(vocab, merges)


def test_runs_under_random_run_vocabularies():
    """merge_run's guess is used only where its junctions check out: vocabularies of random
    run tokens whose merges come in random order."""
    rng = random.Random("runs, random run vocabularies")
    for _ in range(60):
        js = run_vocab_json(rng)
        hf = HFTokenizer.from_str(js)
        texts = [ch * rng.randint(256, 1500) + tail for ch in ("a", " ") for tail in ("", "x")]
        check(js, hf, texts)


def test_runs_under_every_guess(gpt2_style, deepseek):
    """merge_run's guess (hfb_set_run_guess: the run prefix that names the period token and
    bounds the tail) is only a guess: guesses of a few symbols name wrong periods and tails,
    whose junctions fail their check (removing either check gives other ids than tokenizers'),
    and the run goes on to the windows."""
    rng = random.Random("runs, every guess")
    files = [gpt2_style, deepseek] + [(js, HFTokenizer.from_str(js)) for js in (run_vocab_json(rng) for _ in range(8))]
    texts = [ch * n for ch in " \n\t=-a0*.#_~" for n in (256, 300, 513, 1000, 1777)]
    taken, declined = ffi.new("size_t *"), ffi.new("size_t *")
    lib.hfb_run_stats(taken, declined)
    before = (taken[0], declined[0])
    try:
        for guess in (1, 2, 3, 4, 5, 6, 8, 12, 16, 24, 32, 64, 0):
            lib.hfb_set_run_guess(guess)
            for js, hf in files:
                check(js, hf, texts, offsets=guess in (2, 5))
    finally:
        lib.hfb_set_run_guess(0)
    lib.hfb_run_stats(taken, declined)
    assert taken[0] > before[0] and declined[0] > before[1]  # both ways were taken


def period_trap_json(unit: int) -> str:
    """A byte-level BPE file with runs of "a" only, in which "a" * 2 * guess merges into a first
    token P whose pair (P, P) is not compatible, while (P, the tail's first token) is. With B =
    "a" * unit (a power of two, made first by the merges of doubled halves), the run tokens are
    nB for n in 1, 2, 3, 5, 6, merged in the order (2B, B), (3B, 2B), (B, B), (3B, 3B): B * 8
    merges into [3B, 5B], so guess = 4 * unit bytes names P = 3B (at most the guess), but
    B * 6 merges into [6B], not [3B, 3B]. A run of 5B + j bytes (0 <= j < unit) plus k copies of
    3B has the tail 5B + j, whose first token is 5B, and (3B, 5B) is compatible (B * 8 itself):
    only the (P, P) check keeps merge_run from answering k copies of 3B, then 5B, where the
    merge starts with copies of 6B (B * 17 is [6B, 6B, 5B])."""
    vocab = {c: i for i, c in enumerate(BYTE_LEVEL)}
    merges, n = [], 1
    while n < unit:
        merges.append(f"{'a' * n} {'a' * n}")
        n *= 2
        vocab["a" * n] = len(vocab)
    assert n == unit
    for x, y in [(2, 1), (3, 2), (1, 1), (3, 3)]:
        vocab.setdefault("a" * ((x + y) * unit), len(vocab))
        merges.append(f"{'a' * (x * unit)} {'a' * (y * unit)}")
    return byte_level_bpe_json(vocab, merges)


@pytest.mark.parametrize("unit", [1, 2, 4, 8, 16, 32])
def test_runs_period_pair_not_compatible(unit):
    """merge_run's (P, P) check: a period token P (the first token of the run's first 2 * guess
    symbols) whose pair with itself is not compatible, while its pair with the tail's first
    token is (period_trap_json). Without that check runs of "a" of 5B + j + k * 3B bytes come out
    as k copies of 3B, not tokenizers' copies of 6B. The guess is 4 * unit bytes (unit 32: 128,
    merge_run's own RUN_GUESS, so the run is taken with no knob too); the run is declined (P
    has no compatible pair with itself) and merged in windows."""
    js = period_trap_json(unit)
    hf = HFTokenizer.from_str(js)
    k0 = max(2, -(-(256 - 5 * unit) // (3 * unit)))  # runs of 256 bytes or more, 2 copies or more
    trap = [5 * unit + j + 3 * unit * k for k in range(k0, k0 + 3) for j in sorted({0, unit - 1})]
    for n in trap:
        assert hf.encode("a" * n).ids[0] == hf.token_to_id("a" * 6 * unit), n
    texts = ["a" * n + tail for n in trap + list(range(256, 256 + 6 * unit, max(1, unit // 4)))
             for tail in ("", " x")]
    taken, declined = ffi.new("size_t *"), ffi.new("size_t *")
    lib.hfb_run_stats(taken, declined)
    before = declined[0]
    try:
        for guess in sorted({4 * unit, 0}):
            lib.hfb_set_run_guess(guess)
            check(js, hf, texts, offsets=guess == 4 * unit)
    finally:
        lib.hfb_set_run_guess(0)
    lib.hfb_run_stats(taken, declined)
    assert declined[0] > before


@pytest.mark.parametrize(
    "make",
    [lambda: "a" * 10**6, lambda: " " * 10**6 + "x",
     lambda: "".join(random.Random(1).choices(string.ascii_lowercase, k=10**6)),
     lambda: "".join(random.Random(2).choices("的是一不了人我在有他这", k=2 * 10**5))],
    ids=["a_1e6", "spaces_1e6_x", "random_letters_1e6", "cjk_2e5"],
)
def test_pathological_inputs(make, deepseek, gpt2_style):
    text = make()
    for js, hf in (deepseek, gpt2_style):
        ours = scantok.Tokenizer.from_str(js)
        got, want = ours.encode(text), hf.encode(text)
        assert got.ids == want.ids
        assert got.offsets == want.offsets
