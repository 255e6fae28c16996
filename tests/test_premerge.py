"""The BPE merge loop's pre-merged characters (bpe.c, "pre-merged characters"): a two- or
three-byte UTF-8 character that is a token starts the merge as one part where the vocabulary
shows no merge of its bytes with a neighbour can come first. The ids must be tiktoken's, and
the same as without the shortcut (``bpe_set_premerge(0)``), on every context: characters
next to each other, next to the bytes whose tokens rank below them (a space before a
Cyrillic letter in o200k_base), at a piece's ends, in invalid sequences, and in pieces long
enough for the windowed and heap merges."""
from __future__ import annotations

import contextlib
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import scantok
from scantok._native import lib
from scantok.registry import _load_encoding
from conftest import available_impls, current_impl, force_impl
from strategies import describe_mismatch
from strategies import random_vocabulary
from test_encoding_oracle import tiktoken_encoding, vocab_dir

NAMES = ["o200k_base", "cl100k_base", "r50k_base"]

# two- and three-byte characters of the scripts in the held-out text, with neighbours that
# decide whether they may be pre-merged (spaces, ASCII letters, digits, punctuation)
ALPHABETS = [
    "абвгдежзийклмнопрстуфхцчшщъыьэюяАБВГДЕЖЗ",  # Cyrillic
    "αβγδεζηθικλμνξοπρστυφχψωΑΒΓΔΕ",  # Greek
    "éèêëàâäôöûüçñßøåæœÉÀÇ",  # Latin-1 and Latin Extended
    "אבגדהוזחטיכלמנסעפצקרשת",  # Hebrew
    "ابتثجحخدذرزسشصضطظعغفقكلمنهوي",  # Arabic
    "的一是不了人我在有他这中大来上国个到说们",  # CJK ideographs
    "あいうえおかきくけこさしすせそアイウエオカキ",  # kana
    "가나다라마바사아자차카타파하한국어",  # Hangul
    "กขคงจฉชซญดตถทนบปผพฟภมยรลวศษสหอฮ",  # Thai
    "…—–“”‘’€™",  # punctuation of three bytes
]
NEIGHBOURS = " \n\t.,;:!?'\"()-_0123456789abcxyzABC"


@contextlib.contextmanager
def switched(setter, on: bool):
    """The C switch setter (returning its previous setting) on or off for the block."""
    old = setter(1 if on else 0)
    try:
        yield
    finally:
        setter(old)


def premerge(on: bool):
    return switched(lib.bpe_set_premerge, on)


@pytest.fixture(scope="module", autouse=True)
def _vocab():
    vocab_dir()


def fresh(name):
    # new tables: piece caches are per table, so nothing encoded earlier with the other
    # setting is served from a cache
    return _load_encoding(name)


def mixed_text(rng: random.Random, n: int) -> str:
    out = []
    while len(out) < n:
        alphabet = rng.choice(ALPHABETS)
        out.extend(rng.choices(alphabet, k=rng.randint(1, 12)))
        if rng.random() < 0.7:
            out.extend(rng.choices(NEIGHBOURS, k=rng.randint(1, 3)))
    return "".join(out)


@pytest.mark.parametrize("name", NAMES)
def test_mixed_scripts_equal_tiktoken_and_without_premerge(name):
    rng = random.Random(name)
    text = "\n".join(mixed_text(rng, rng.randint(1, 400)) for _ in range(300))
    want = tiktoken_encoding(name).encode_ordinary(text)
    with premerge(True):
        on = fresh(name).encode_ordinary(text)
    with premerge(False):
        off = fresh(name).encode_ordinary(text)
    assert on == want, describe_mismatch(on, want, text)
    assert off == want, describe_mismatch(off, want, text)


@pytest.mark.parametrize("impl", available_impls())
@pytest.mark.parametrize("name", NAMES)
def test_single_pieces_of_characters_and_bytes(name, impl):
    """One piece, no pre-tokenizer, on each engine path (the merge loop is compiled per
    instruction set): characters glued to every kind of neighbour byte, invalid sequences (a
    lead byte without its continuation, stray continuation bytes), lengths from 2 to past the
    small merge's 160 bytes (the heap) and past 1 KiB (the windows)."""
    original = current_impl()
    assert force_impl(impl) == 0
    try:
        _single_pieces(name)
    finally:
        force_impl(original)


def _single_pieces(name):
    t = tiktoken_encoding(name)
    rng = random.Random(f"pieces {name}")
    chars = [c.encode() for a in ALPHABETS for c in a]
    junk = [b"\xd0", b"\xe4\xb8", b"\x80", b"\xbf", b"\xc3", b"\xe0\x80\x80", b"\xed\xa0\x80", b" ", b"a", b"\xff"]
    pieces = []
    for _ in range(600):
        k = rng.choice([1, 2, 3, 5, 8, 20, 60, 120, 500])
        pieces.append(b"".join(rng.choice(chars) if rng.random() < 0.75 else rng.choice(junk) for _ in range(k)))
    for setting in (True, False):
        with premerge(setting):
            e = fresh(name)
            for p in pieces:
                got, want = e._encode_single_piece(p), t._encode_single_piece(p)
                assert got == want, (setting, p, got, want)


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_context_decides(name):
    """The same character pre-merged in one context and not in another: after a space a
    Cyrillic letter joins the space first in o200k_base (' \\xd0' ranks below most letters);
    inside a word it does not."""
    t = tiktoken_encoding(name)
    words = ["привет", " привет", "мир привет", "x привет", "1привет", "приветx", " Ελλάδα", "日本語", " 日本語", "a日本語b"]
    for setting in (True, False):
        with premerge(setting):
            e = fresh(name)
            for w in words:
                assert e.encode_ordinary(w) == t.encode_ordinary(w), (setting, w)
                assert e._encode_single_piece(w) == t._encode_single_piece(w), (setting, w)


@pytest.mark.parametrize("setter", ["bpe_set_premerge", "hfb_set_premerge", "bpe_set_piece_seed", "hfb_set_seed"])
def test_switch_reports_previous_setting(setter):
    setter = getattr(lib, setter)
    with switched(setter, False):
        assert setter(1) == 0
        assert setter(1) == 1


@pytest.mark.parametrize("name", NAMES)
@given(words=st.lists(st.text(alphabet=st.sampled_from("".join(ALPHABETS) + NEIGHBOURS), min_size=1, max_size=30),
                      min_size=1, max_size=20))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_hypothesis_mixed_scripts(name, words):
    text = " ".join(words)
    with premerge(True):
        got = fresh(name).encode_ordinary(text)
    want = tiktoken_encoding(name).encode_ordinary(text)
    assert got == want, describe_mismatch(got, want, text)


ALPHABET = ["a", "b", " ", "é", "ü", "п", "р", "日", "本", "€"]


def test_random_vocabularies_equal_tiktoken():
    import tiktoken

    rng = random.Random("random vocabularies")
    checked = 0
    for k in range(150):
        # vocabularies no BPE training would make, as a custom Encoding may have
        ranks = random_vocabulary(rng, ALPHABET)
        kwargs = dict(pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens={})
        want_enc = tiktoken.Encoding(f"random{k}", **kwargs)
        for setting in (True, False):
            with premerge(setting):
                e = scantok.Encoding(f"random{k}", **kwargs)
                for _ in range(30):
                    text = "".join(rng.choices(ALPHABET, k=rng.randint(1, 40)))
                    got, want = e.encode_ordinary(text), want_enc.encode_ordinary(text)
                    assert got == want, (k, setting, text, got, want)
                    piece = text.encode()
                    assert e._encode_single_piece(piece) == want_enc._encode_single_piece(piece), (k, setting, text)
                    checked += 1
    assert checked == 150 * 2 * 30
