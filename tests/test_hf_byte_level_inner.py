"""scantok.Tokenizer on byte-level BPE files whose ByteLevel pre-tokenizer is not the last one
(Falcon: Punctuation, ByteLevel, Digits, Split of three digits). The splits after ByteLevel
see its characters, one per byte ("в" is "Ð²", and "²" is a number to Digits), so their pieces
may end inside a character of the text. They run in C over those characters
(``hfb_stages_new``'s behavior + 16), the model takes the pieces' bytes; before, such a file
took the general path at ~0.07x tokenizers' speed. Every field must equal tokenizers'."""
from __future__ import annotations

import json
import random

import pytest

pytest.importorskip("numpy")
pytest.importorskip("tokenizers")

from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

import scantok  # noqa: E402
from tokenizers import Tokenizer as HFTokenizer, decoders, models, pre_tokenizers, processors, trainers  # noqa: E402

from test_hf_char_bpe import check, check_text  # noqa: E402
from test_premerge import mixed_text  # noqa: E402

FALCON = {"type": "Sequence", "pretokenizers": [
    {"type": "Punctuation", "behavior": "Contiguous"},
    {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
    {"type": "Digits", "individual_digits": False},
    {"type": "Split", "pattern": {"Regex": "[0-9][0-9][0-9]"}, "behavior": "Isolated", "invert": False}]}

AFTER = [  # splits that may follow a ByteLevel
    {"type": "Digits", "individual_digits": True},
    {"type": "Digits", "individual_digits": False},
    {"type": "Punctuation", "behavior": "Isolated"},
    {"type": "Split", "pattern": {"Regex": r"\p{L}+"}, "behavior": "Isolated", "invert": False},
    {"type": "Split", "pattern": {"Regex": r"\s+"}, "behavior": "Removed", "invert": False},  # "Ġ" is a letter
    {"type": "Split", "pattern": {"Regex": "Ġ"}, "behavior": "MergedWithNext", "invert": False},
    {"type": "Split", "pattern": {"Regex": r"[\x{80}-\x{ff}]+"}, "behavior": "Contiguous", "invert": True},
    {"type": "Split", "pattern": {"Regex": r"\p{No}"}, "behavior": "MergedWithPrevious", "invert": False},
    {"type": "Split", "pattern": {"Regex": r"[0-9]{3}"}, "behavior": "Isolated", "invert": False},
    {"type": "WhitespaceSplit"},
    {"type": "Split", "pattern": {"String": "Ġ"}, "behavior": "MergedWithNext", "invert": False},  # a literal
]
BEFORE = [
    {"type": "Punctuation", "behavior": "Contiguous"},
    {"type": "Digits", "individual_digits": True},
    {"type": "Split", "pattern": {"Regex": r"\p{Han}+"}, "behavior": "Isolated", "invert": False},
]


def train(rng: random.Random, pre_tokenizer: dict, vocab_size: int = 1200) -> str:
    """A byte-level BPE trained with tokenizers under the given pre-tokenizer on mixed scripts,
    digits and punctuation, with the ByteLevel decoder and post-processor."""
    tok = HFTokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<|endoftext|>"], show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(texts(rng, 300), trainer)
    obj = json.loads(tok.to_str())
    obj["pre_tokenizer"] = pre_tokenizer
    return json.dumps(obj)


def texts(rng: random.Random, n: int) -> list[str]:
    out = ["", " ", "в", "вв 123456", "x²y ½1 ³", "1,234.5678 ab12345c", "été 2024!!", "  \n\t x", "😀12😀"]
    for _ in range(n):
        parts = [mixed_text(rng, rng.randint(1, 30)), str(rng.randint(0, 10 ** 9)), rng.choice(["²", "½", "¼³", "…"])]
        out.append(" ".join(rng.choices(parts, k=rng.randint(1, 20))))
    return out


def in_c(js: str) -> list[int]:
    """The stage codes of the C path (behavior, +8 invert, +16 after ByteLevel), [] if none."""
    tok = scantok.Tokenizer.from_str(js)
    assert tok._whole_c
    return tok._stage_spec[1]


def test_falcon_layout():
    rng = random.Random("falcon")
    js = train(rng, FALCON)
    assert [c >= 16 for c in in_c(js)] == [False, False, True, True]
    check(js, texts(rng, 60))


def test_a_split_inside_a_character():
    """"в" is "Ð²" to the stages after ByteLevel and "²" is a number: Digits cuts the
    character in two, and each half is a piece of its own with the character's offsets."""
    js = train(random.Random("inside"), FALCON)
    ours, hf = scantok.Tokenizer.from_str(js), HFTokenizer.from_str(js)
    for text in ("вв 123456", "x²y", "½1"):
        a, b = ours.encode(text), hf.encode(text)
        assert (a.ids, a.tokens, a.offsets, a.word_ids) == (b.ids, b.tokens, b.offsets, b.word_ids)
    assert ours.encode("в").tokens == ["Ð", "²"] and ours.encode("в").offsets == [(0, 1), (0, 1)]


@pytest.mark.parametrize("seed", range(12))
def test_random_sequences(seed):
    """Random splits before and after a ByteLevel (with its regex or without), every behaviour
    and invert: ids, tokens, offsets, word ids, encode_batch_fast and decode as tokenizers'."""
    rng = random.Random(f"inner {seed}")
    before = rng.sample(BEFORE, rng.randint(0, 2))
    after = rng.sample(AFTER, rng.randint(1, 3))
    level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": rng.random() < 0.5}
    js = train(rng, {"type": "Sequence", "pretokenizers": before + [level] + after}, vocab_size=600)
    assert sum(c >= 16 for c in in_c(js)) == len(after)
    check(js, texts(rng, 25))


@pytest.mark.parametrize("seq", [
    [{"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
     {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}],
    [{"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
     {"type": "Digits", "individual_digits": True},
     {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}]])
def test_two_byte_levels_keep_the_general_path(seq):
    """Two ByteLevels map the text twice ("Ġ" becomes "Ä" "ł"): the general path (found by a
    review: the C path mapped it once)."""
    js = train(random.Random("two levels"), {"type": "Sequence", "pretokenizers": seq})
    assert scantok.Tokenizer.from_str(js)._stages is None
    check(js, ["Hello world", "в 12", "a  b"])


def test_prefix_space_inside_a_sequence_keeps_the_general_path():
    js = train(random.Random("prefix"), {"type": "Sequence", "pretokenizers": [
        {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        {"type": "Digits", "individual_digits": True}]})
    assert scantok.Tokenizer.from_str(js)._stages is None
    check(js, ["a1 b22", "x", "²2"])


_JS = train(random.Random("inner hypothesis"), FALCON)
_OURS, _HF = scantok.Tokenizer.from_str(_JS), HFTokenizer.from_str(_JS)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.sampled_from(list("ab 12345²³¹¼½¾.,!вé😀\n")) | st.characters(), max_size=60))
def test_hypothesis_text(text):
    check_text(_OURS, _HF, text)
