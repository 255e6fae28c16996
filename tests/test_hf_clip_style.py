"""scantok.Tokenizer on CLIP's layout and on normalizers of forms, Replace and Lowercase.

CLIP's tokenizer.json (Stable Diffusion's prompts) normalizes with NFC, Replace(\\s+, " ") and
Lowercase, keeps the matches of a Split regex, maps them with ByteLevel (no regex) and merges
with ``end_of_word_suffix="</w>"``: a piece's last byte's character carries the suffix. Such a
file took the general path at ~0.25x tokenizers' speed (78 us against 20 for a prompt). Now
the model merges the pieces' bytes in C with the suffix (``hfb_set_byte_suffix``), and a
normalizer made of Unicode forms, Replace and Lowercase runs on numpy alignments
(``aligned_chain``) before the one C call. Every field must equal tokenizers'."""
from __future__ import annotations

import json
import random

import pytest

pytest.importorskip("numpy")
pytest.importorskip("tokenizers")

from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

import scantok  # noqa: E402
from scantok.hf.pre_tokenizers import BYTE_CHARS  # noqa: E402
from tokenizers import Regex, Tokenizer as HFTokenizer, decoders, models, normalizers, pre_tokenizers  # noqa: E402
from tokenizers import processors, trainers  # noqa: E402

from test_hf_char_bpe import check, check_text  # noqa: E402
from test_hf_long_pieces import stats, window_size  # noqa: E402
from test_premerge import mixed_text  # noqa: E402

CLIP_PAT = r"'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+"


def texts(rng: random.Random, n: int) -> list[str]:
    out = ["", " ", "A photograph of an Astronaut  riding\n\na HORSE, 4k!!", "İstanbul ΑΣ Σ", "e\u0301 É \t x",
           "\u212b  A\u030a", "x" * 600, "don't  STOP", "\u3000a\u00a0b\u2028c", "ǅ ǈ Ⅻ ⓐ"]
    for _ in range(n):
        out.append(rng.choice(["  ", " ", "\n", "\t "]).join(
            mixed_text(rng, rng.randint(1, 30)) for _ in range(rng.randint(1, 25))))
    return out


def clip_file(rng: random.Random, *, normalizer=None, unk: bool = True) -> str:
    """CLIP's layout, trained here on mixed scripts (small vocabulary)."""
    tok = HFTokenizer(models.BPE(end_of_word_suffix="</w>", unk_token="<|endoftext|>" if unk else None))
    tok.normalizer = normalizer if normalizer is not None else normalizers.Sequence(
        [normalizers.NFC(), normalizers.Replace(Regex(r"\s+"), " "), normalizers.Lowercase()])
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(CLIP_PAT), "removed", invert=True),
                                                 pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=1500, special_tokens=["<|startoftext|>", "<|endoftext|>"],
                                  show_progress=False, end_of_word_suffix="</w>",
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(texts(rng, 300), trainer)
    tok.post_processor = processors.RobertaProcessing(("<|endoftext|>", tok.token_to_id("<|endoftext|>")),
                                                      ("<|startoftext|>", tok.token_to_id("<|startoftext|>")),
                                                      trim_offsets=False, add_prefix_space=False)
    return tok.to_str()


def test_clip_layout():
    rng = random.Random("clip")
    js = clip_file(rng)
    tok = scantok.Tokenizer.from_str(js)
    assert tok._whole_c and tok._chain is not None and tok._model.byte_suffix
    check(js, texts(rng, 40))


def test_suffix_without_a_normalizer_and_missing_suffixed_bytes():
    """The suffix alone (no normalizer); then with some bytes' suffixed tokens deleted (a piece
    ending in such a byte is the general path's, with tokenizers' unknown token)."""
    rng = random.Random("clip suffix")
    obj = json.loads(clip_file(rng))
    obj["normalizer"] = None
    js = json.dumps(obj)
    assert scantok.Tokenizer.from_str(js)._whole_c
    ts = texts(rng, 20)
    check(js, ts)
    vocab = obj["model"]["vocab"]
    gone = {BYTE_CHARS[b] + "</w>" for c in "eé\u00a0" for b in c.encode()}
    for t in gone:
        vocab.pop(t, None)
    obj["model"]["merges"] = [m for m in obj["model"]["merges"]
                              if not gone & set(m.split(" ") if isinstance(m, str) else m)]
    check(json.dumps(obj), ts + ["the", "café", "e"])


def test_a_token_spelt_with_the_suffix_inside_a_piece():
    """"a</w>" is a's token with the suffix at a piece's end, and the merge of the text
    "a</w>" (five bytes) inside one: its offsets there are the five bytes' (found by a review:
    the token lengths had the suffix cut off)."""
    alpha = sorted(pre_tokenizers.ByteLevel.alphabet())
    vocab = {c: i for i, c in enumerate(alpha)}
    for c in alpha:
        vocab[c + "</w>"] = len(vocab)
    merges = [("<", "/"), ("</", "w"), ("</w", ">"), ("a", "</w>")]
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    js = json.dumps({"pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                                       "use_regex": False},
                     "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                                 "use_regex": True},
                     "model": {"type": "BPE", "end_of_word_suffix": "</w>", "vocab": vocab,
                               "merges": [list(m) for m in merges]}})
    assert scantok.Tokenizer.from_str(js)._whole_c
    check(js, ["a</w>b", "xa</w>", "a</w>", "a</w>a</w>a", "</w>"])


@pytest.mark.parametrize("suffix,vocab,merges,text", [
    ("w", {"a": 0, "b": 1, "w": 2, "aw": 3, "bw": 4}, [["a", "w"]], "awb"),
    ("_", {"_": 0, "__": 1, "___": 2}, [["_", "_"]], "___"),
])
def test_a_suffix_a_letter_spells(suffix, vocab, merges, text):
    """A suffix that a character of the text spells ("w"): "aw" is a's token with the suffix
    and the merge of "a" and "w" inside a word (found by a helper's campaign, with the review's
    case above)."""
    js = json.dumps({"pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                                       "use_regex": False},
                     "model": {"type": "BPE", "end_of_word_suffix": suffix, "vocab": vocab, "merges": merges}})
    assert scantok.Tokenizer.from_str(js)._whole_c
    check(js, [text, text * 3, "ab", "a"])


@pytest.mark.parametrize("chain", [[normalizers.Lowercase()],
                                   [normalizers.NFC(), normalizers.Replace(Regex(r"\s+"), " "), normalizers.Lowercase()],
                                   [normalizers.Lowercase(), normalizers.NFD(), normalizers.Replace("i", "ii")]])
def test_lowercase_that_lengthens_in_the_chain(chain):
    """"İ" lowercases to two characters ("i" and U+0307), both from it: the chain's arrays
    repeat its index (the Turkish text of the held-out intl set sent CLIP's encode to the
    general path before)."""
    rng = random.Random(f"lengthen {len(chain)}")
    js = byte_level_file(rng, chain)
    assert scantok.Tokenizer.from_str(js)._chain("aİb") is not None
    check(js, ["İstanbul", "aİİb İ", "İ", "x İ\u0307 ΑΣ İa", "İİİ  İ\n", "iİi"] + texts(rng, 5))


def test_batch_fallback_takes_the_original_text():
    """A text the C path declines in a normalized batch (a byte with no token) goes through the
    general path from the original text, not the normalized one: Replace("a", "ab") normalized
    twice made "abb" (found by a helper's campaign)."""
    alpha = sorted(pre_tokenizers.ByteLevel.alphabet())
    vocab = {c: i for i, c in enumerate(c for c in alpha if c != "z")}
    js = json.dumps({"normalizer": {"type": "Replace", "pattern": {"String": "a"}, "content": "ab"},
                     "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                                       "use_regex": True},
                     "model": {"type": "BPE", "vocab": vocab, "merges": []}})
    assert scantok.Tokenizer.from_str(js)._chain is not None
    check(js, ["az", "a", "za a", "zz"])


def test_suffix_in_tiny_windows():
    rng = random.Random("clip windows")
    js = clip_file(rng)
    before = stats()[0]
    with window_size(3, 1):
        check(js, ["x" * 700, "ab" * 400 + " cd", "".join(rng.choices("abcé", k=900))])
    assert stats()[0] > before


CHAIN_STEPS = [normalizers.NFC(), normalizers.NFD(), normalizers.NFKC(), normalizers.Lowercase(),
               normalizers.Replace(Regex(r"\s+"), " "), normalizers.Replace(Regex(r"\s+"), ""),
               normalizers.Replace("a", "AB"), normalizers.Replace(Regex("[0-9]"), "#"),
               normalizers.Replace("é", "e"), normalizers.Replace(Regex(r"\p{Mn}"), ""),
               normalizers.Replace(Regex("[a-c]{2,}"), "Z"), normalizers.Replace(Regex(r"\s{2,}"), "__"),
               normalizers.StripAccents(), normalizers.Strip(), normalizers.Strip(left=False),
               normalizers.Prepend("▁"), normalizers.Prepend("x y"), normalizers.BertNormalizer()]


def byte_level_file(rng: random.Random, steps: list) -> str:
    tok = HFTokenizer(models.BPE())
    tok.normalizer = normalizers.Sequence(steps)
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(texts(rng, 200), trainers.BpeTrainer(
        vocab_size=800, show_progress=False, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return tok.to_str()


@pytest.mark.parametrize("step", [normalizers.Replace(Regex(r"\s+"), " "), normalizers.Replace(Regex("[a-c]{2,}"), "Z"),
                                  normalizers.Replace(Regex(r"\s{2,}"), "__")])
def test_replace_of_runs(step):
    """A match of several characters: the content is aligned like the match's last one (the
    token "Ġb" of "a  b" under \\s+ -> " " starts at the second space)."""
    rng = random.Random(f"runs {step}")
    js = byte_level_file(rng, [step])
    assert scantok.Tokenizer.from_str(js)._chain is not None
    check(js, ["a  b", "abc  \n\n cab", "  lead", "trail \t ", "aabbcc  x"] + texts(rng, 10))


@pytest.mark.parametrize("steps", [[normalizers.Strip()], [normalizers.Strip(right=False)],
                                   [normalizers.Prepend("▁")],
                                   [normalizers.Strip(), normalizers.Prepend("▁")],
                                   [normalizers.Prepend(" "), normalizers.Strip(left=False)],
                                   [normalizers.Replace(Regex(r"\s+"), " "), normalizers.Strip(), normalizers.Prepend("ab")]])
def test_strip_and_prepend(steps):
    """Strip (the kept characters keep their alignments) and Prepend (the prefix aligned like
    the first character; Prepend("") is left out: tokenizers panics on it here)."""
    rng = random.Random(f"strip prepend {steps}")
    js = byte_level_file(rng, steps)
    assert scantok.Tokenizer.from_str(js)._chain is not None
    check(js, ["  lead", "trail \t ", "   ", "", " x ", "\u3000a\u00a0", "é  é"] + texts(rng, 10))


@pytest.mark.parametrize("seed", range(16))
def test_random_chains_on_a_byte_level_file(seed):
    """Random sequences of forms, Replace (shrinking, growing, emptying), Lowercase, Strip,
    Prepend and BertNormalizer in front of a GPT-2 style file: the arrays give tokenizers'
    offsets."""
    rng = random.Random(f"chain {seed}")
    steps = rng.sample(CHAIN_STEPS, rng.randint(1, 4))
    js = byte_level_file(rng, steps)
    ours = scantok.Tokenizer.from_str(js)
    if not all(type(s).__name__ in ("NFC", "NFD", "NFKC") for s in steps):
        assert ours._chain is not None and ours._whole_c
    check(js, texts(rng, 25))


_JS = clip_file(random.Random("clip hypothesis"))
_OURS, _HF = scantok.Tokenizer.from_str(_JS), HFTokenizer.from_str(_JS)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.sampled_from(list("aB é\u0301ΣİI\n\t  \u00a0xyz1'.,")) | st.characters(), max_size=60))
def test_hypothesis_text(text):
    check_text(_OURS, _HF, text)


@pytest.mark.parametrize("suffix", ["</w>", "", "w", "@@"])
def test_bpe_decoder(suffix):
    """BPEDecoder (original GPT's files, suffix models): the suffix is a space, nothing in the
    last token; alone and after ByteLevel, as tokenizers' decoders."""
    rng = random.Random(f"bpe decoder {suffix}")
    vocab = {t: i for i, t in enumerate(["a", "b</w>", "ab", "w", "</w>", "@@", "x@@y", "é</w>", "c", "a</w>b</w>"])}
    for chain in ([{"type": "BPEDecoder", "suffix": suffix}],
                  [{"type": "BPEDecoder", "suffix": suffix}, {"type": "Fuse"}]):
        js = json.dumps({"model": {"type": "BPE", "vocab": vocab, "merges": []},
                         "decoder": {"type": "Sequence", "decoders": chain}})
        ours, hf = scantok.Tokenizer.from_str(js), HFTokenizer.from_str(js)
        for _ in range(60):
            ids = [rng.randrange(len(vocab)) for _ in range(rng.randint(0, 6))]
            assert ours.decode(ids) == hf.decode(ids), ids


def test_strip_accents_on_every_code_point():
    """StripAccents removes tokenizers' marks (a measured table: not \\p{M} of any UCD here, nor
    BertNormalizer's), every code point before "a", alignments as the kept chars'."""
    js = json.dumps({"normalizer": {"type": "StripAccents"}, "pre_tokenizer": {"type": "WhitespaceSplit"},
                     "model": {"type": "WordLevel", "vocab": {"[UNK]": 0, "a": 1}, "unk_token": "[UNK]"}})
    ours, hf = scantok.Tokenizer.from_str(js), HFTokenizer.from_str(js)
    cps = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000]
    for i in range(0, len(cps), 20000):
        text = " ".join(chr(c) + "a" for c in cps[i:i + 20000])
        a, b = ours.encode(text), hf.encode(text)
        assert (a.ids, a.offsets) == (b.ids, b.offsets), i


def test_quicktour_normalizer_on_a_bpe_over_characters():
    """The quicktour's BERT-like normalizer (NFD, Lowercase, StripAccents) in front of a BPE over
    characters under Whitespace: the arrays' alignments, then one C call."""
    rng = random.Random("quicktour normalizer")
    tok = HFTokenizer(models.BPE(unk_token="[UNK]"))
    tok.normalizer = normalizers.Sequence([normalizers.NFD(), normalizers.Lowercase(), normalizers.StripAccents()])
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(texts(rng, 200), trainers.BpeTrainer(vocab_size=900, special_tokens=["[UNK]"],
                                                                 show_progress=False))
    js = tok.to_str()
    ours = scantok.Tokenizer.from_str(js)
    assert ours._chain is not None and ours._whole_c
    check(js, texts(rng, 30) + ["Héllo Wörld", "ÅNGSTRÖM  ǅ", "e\u0301\u0301x"])


def test_lowercase_agreement_set_is_every_code_point_where_python_differs():
    """_lower_text runs str.lower unless the text holds a char of _LOWER_DIFF: that set, found a
    block at a time, is exactly the chars whose str.lower differs from tokenizers' table (a loop
    over every code point here), plus "Σ" (Python's final-sigma rule)."""
    from scantok.hf import normalizers as nz

    nz._lower_text("é")
    table = nz._lower_map()
    want = {chr(c) for c in range(0x80, 0x110000)
            if not 0xD800 <= c < 0xE000 and chr(c).lower() != table.get(c, chr(c))} | {"\u03a3"}
    assert nz._LOWER_DIFF == want
    for text in ["ΑΣ Σ", "İx", "Straße", "ǅ", "ꞵ", "\U00016E40"]:
        assert nz._lower_text(text) == text.translate(table)


@pytest.mark.parametrize("normalizer", [{"type": "Replace", "pattern": {"Regex": "."}, "content": "."},
                                        {"type": "Sequence", "normalizers": [
                                            {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                                             "strip_accents": None, "lowercase": True},
                                            {"type": "Replace", "pattern": {"Regex": "[^\\x00-\\x7f]+"}, "content": ""}]}])
@pytest.mark.parametrize("model", ["BPE", "WordLevel"])
def test_a_surrogate_a_replace_takes_out_is_refused(normalizer, model):
    """A lone surrogate that the normalizer would take out of the text: tokenizers refuses the
    str before normalizing, so scantok raises too, in encode and both batch calls (found by a
    helper's campaign: the chain's C path read the normalized text and gave ids)."""
    alpha = sorted(pre_tokenizers.ByteLevel.alphabet())
    spec = ({"type": "BPE", "vocab": {c: i for i, c in enumerate(alpha)}, "merges": []} if model == "BPE" else
            {"type": "WordLevel", "vocab": {"[UNK]": 0, ".": 1}, "unk_token": "[UNK]"})
    js = json.dumps({"normalizer": normalizer, "pre_tokenizer": {"type": "WhitespaceSplit"}, "model": spec})
    ours, hf = scantok.Tokenizer.from_str(js), HFTokenizer.from_str(js)
    assert ours._chain is not None
    for text in ["\udfff", "a \ud800 b", "é\udc00"]:
        with pytest.raises(TypeError):
            hf.encode(text)
        with pytest.raises(TypeError, match="surrogate"):
            ours.encode(text)
        for call in (ours.encode_batch, ours.encode_batch_fast):
            with pytest.raises(TypeError, match="surrogate"):
                call(["ok", text], num_threads=1)
    assert ours.encode("é .").ids == hf.encode("é .").ids


def test_a_replace_regex_outside_the_subset_is_named():
    js = json.dumps({"normalizer": {"type": "Replace", "pattern": {"Regex": "x*"}, "content": "y"},
                     "pre_tokenizer": {"type": "ByteLevel"}, "model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}})
    with pytest.raises(scantok.UnsupportedComponentError, match="normalizer: Replace regex: .*empty string"):
        scantok.Tokenizer.from_str(js)


# characters whose forms interact: marks of several classes, Hangul jamo, ccc-0 vowel signs that
# compose (U+0B3E), compatibility characters, singletons
_FORM_CHARS = (list("aeoAE cnk") + [chr(c) for c in range(0x300, 0x318)]
               + ["\u05b0", "\u05b4", "\u0651", "\u064e", "\u093c", "\u0f71", "\u0f73", "\u1dc0", "\u20d0", "\u0344",
                  "\u0b3e", "\u0b47", "\u0bbe", "\u1161", "\u11a8", "\u3099", "\u309a", "é", "Å", "ǅ", "ǆ", "가",
                  "각", "ᄀ", "ᅡ", "ᆨ", "ﬁ", "Ⅻ", "①", "ｶ", "ﾞ", "か", "，", "\u00a0", "…", "²", "\u212b", "\u2126",
                  "\u1e9b", "ệ", "ß", "\u3300", "中"])


def _regions_step(text: str, form: str):
    """_nf_step by its regions alone (the reference the array paths are checked against)."""
    import numpy as np
    from scantok.hf.normalizers import _freeze, _nf_regions

    parts, idx, pos = [], [], 0
    for a, b, dest in _nf_regions(text, form, _freeze(form)):
        parts.append(text[pos:a])
        idx.append(np.arange(pos, a))
        off, here = a, []
        for ch, change in dest:
            here.append(off - 1 if change > 0 else off)
            off += 0 if change > 0 else 1 - change
            parts.append(ch)
        idx.append(np.array(here, dtype=np.int64))
        pos = b
    parts.append(text[pos:])
    idx.append(np.arange(pos, len(text)))
    return "".join(parts), np.concatenate(idx)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(_FORM_CHARS) | st.characters(exclude_categories=("Cs",)), min_size=1,
               max_size=24))
def test_forms_by_arrays_equal_their_regions(text):
    """_decomposed (NFD, NFKD) and _composed (NFC, NFKC): where they answer, the same text and
    alignment as the regions (tokenizers' transform, checked against tokenizers elsewhere)."""
    import numpy as np
    from scantok.hf.normalizers import _composed, _decomposed, _has_frozen

    for form in ("NFD", "NFKD", "NFC", "NFKC"):
        if text.isascii() or _has_frozen(form, text):
            continue
        got = (_decomposed if form in ("NFD", "NFKD") else _composed)(text, form)
        if got is not None:
            want = _regions_step(text, form)
            assert got[0] == want[0] and np.array_equal(got[1], want[1]), form
