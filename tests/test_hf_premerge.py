"""scantok.Tokenizer's merge loop with pre-merged characters (hf_bpe.c, "pre-merged
characters"): a two- or three-byte character whose bytes merge into one token starts the
merge as that token where no merge of its bytes (or of the token) with a neighbour ranks
below its own. The ids must be tokenizers', and the same as without the shortcut
(``hfb_set_premerge(0)``), on real files and on vocabularies whose merges come in random
order (tokens that straddle characters, end inside them, or hold them whole)."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

pytest.importorskip("numpy")
pytest.importorskip("tokenizers")

import scantok  # noqa: E402
from scantok._native import lib  # noqa: E402
from scantok.hf.pre_tokenizers import BYTE_CHARS  # noqa: E402
from tokenizers import Tokenizer as HFTokenizer, decoders, models, pre_tokenizers, trainers  # noqa: E402

from test_premerge import ALPHABET, mixed_text, switched  # noqa: E402

SHARED = Path(__file__).resolve().parents[2] / "shared"
if not SHARED.exists():
    SHARED = Path("/work/shared")
DEEPSEEK = SHARED / "hf" / "deepseek_v3" / "tokenizer.json"


def premerge(on: bool):
    return switched(lib.hfb_set_premerge, on)


def docs_of(rng: random.Random, n: int) -> list[str]:
    return [mixed_text(rng, rng.randint(1, 600)) for _ in range(n)]


def check(json_str: str, hf: HFTokenizer, docs: list[str], *, offsets: bool = True):
    """tokenizers' ids (and offsets) with and without pre-merged characters, and with and
    without the seeds of a new cache (hfb_set_seed: the tokens that merge back into themselves)."""
    want = [e.ids for e in hf.encode_batch_fast(docs)]
    want_offsets = [hf.encode(d).offsets for d in docs[:20]] if offsets else None
    for setting, seeded in ((True, True), (False, True), (True, False)):
        with premerge(setting), switched(lib.hfb_set_seed, seeded):
            ours = scantok.Tokenizer.from_str(json_str)  # a new model: new caches
            got = [e.ids for e in ours.encode_batch_fast(docs, num_threads=1)]
            assert got == want, (setting, seeded)
            if offsets:
                assert [ours.encode(d).offsets for d in docs[:20]] == want_offsets, (setting, seeded)


def test_deepseek_mixed_scripts():
    hf = HFTokenizer.from_file(str(DEEPSEEK))
    check(DEEPSEEK.read_text(encoding="utf-8"), hf, docs_of(random.Random("deepseek"), 120))


def test_gpt2_style_trained_on_mixed_scripts():
    rng = random.Random("gpt2 style")
    tok = HFTokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=2000, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(docs_of(rng, 300), trainer)
    check(tok.to_str(), tok, docs_of(rng, 120))


def random_bpe_json(rng: random.Random, *, shared_ids: bool = True) -> str:
    """A byte-level BPE file over a few one-, two- and three-byte characters: tokens cut from
    random text anywhere (straddling characters, ending inside them, holding them whole), and
    merges of every cut of them whose two parts are tokens too, in random order: ranks no BPE
    training would give (a merge may use a token that a later merge makes, a character's
    second merge may rank below its first); now and then (``shared_ids``) an id given to two
    strings, or a merge listed twice."""
    def chars(raw: bytes) -> str:
        return "".join(BYTE_CHARS[b] for b in raw)

    vocab = {BYTE_CHARS[b]: b for b in range(256)}
    next_id = 256
    for _ in range(rng.randint(30, 300)):
        text = "".join(rng.choices(ALPHABET, k=8)).encode()
        i = rng.randrange(len(text) - 1)
        tok = chars(text[i : i + rng.randint(2, 7)])
        if tok in vocab:
            continue
        if shared_ids and next_id > 256 and rng.random() < 0.05:  # an id given to two strings, as a file may
            vocab[tok] = rng.randrange(256, next_id)
        else:
            vocab[tok], next_id = next_id, next_id + 1
    merges = []
    for tok in list(vocab):
        raw = bytes(BYTE_CHARS.index(c) for c in tok)
        for cut in range(1, len(raw)):
            a, b = chars(raw[:cut]), chars(raw[cut:])
            if a in vocab and b in vocab and rng.random() < 0.7:
                merges.append(f"{a} {b}")
    rng.shuffle(merges)
    if merges and rng.random() < 0.3:  # a merge listed twice: the later line's rank counts
        for _ in range(rng.randint(1, 5)):
            merges.insert(rng.randrange(len(merges) + 1), rng.choice(merges))
    return byte_level_bpe_json(vocab, merges)


def byte_level_bpe_json(vocab: dict[str, int], merges: list[str]) -> str:
    """A tokenizer.json of a byte-level BPE (GPT-2's layout: ByteLevel with its regex)."""
    return json.dumps({
        "version": "1.0",
        "model": {"type": "BPE", "vocab": vocab, "merges": merges},
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
    })


def test_random_merge_orders():
    rng = random.Random("random merge orders")
    for _ in range(80):
        js = random_bpe_json(rng)
        hf = HFTokenizer.from_str(js)
        docs = ["".join(rng.choices(ALPHABET, k=rng.randint(1, 60))) for _ in range(25)]
        check(js, hf, docs, offsets=False)


def test_one_id_for_two_strings():
    """tokenizers accepts a vocabulary that gives one id to two strings: that id's bytes are not
    known, so a merge of it with a lead byte counts for every byte before the lead. Here "ab" and
    "cd" are both 256 and the merge "cd Ã" ranks below "Ã ©": in "abé" the 256 before é joins its
    lead byte first (found by a review of the pre-merge tables, which took 256's last byte from
    one string only)."""
    def chars(raw: bytes) -> str:
        return "".join(BYTE_CHARS[b] for b in raw)

    vocab = {BYTE_CHARS[b]: b for b in range(256)}
    vocab.update({chars(b"ab"): 256, chars(b"cd"): 256, chars("é".encode()): 257, chars(b"cd\xc3"): 258})
    merges = [f"{chars(a)} {chars(b)}" for a, b in [(b"a", b"b"), (b"c", b"d"), (b"cd", b"\xc3"), (b"\xc3", b"\xa9")]]
    js = json.dumps({"version": "1.0", "model": {"type": "BPE", "vocab": vocab, "merges": merges},
                     "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                                       "use_regex": False}})
    check(js, HFTokenizer.from_str(js), ["abé", "cdé", "é", "abéab", "xé", "ééab"], offsets=False)
