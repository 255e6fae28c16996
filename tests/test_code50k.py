"""code50k, scantok's own encoding: layout, bundled and pinned, the same ids as tiktoken over the
same ranks and pattern, and tiktoken's rank rule equal to BPE by the trainer's merge list."""
from __future__ import annotations

import functools
import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import scantok
from scantok import bundled
from scantok.code import CODE_SPECIAL_TOKENS
from scantok.registry import CODE50K_PAT_STR, OWN_RANK_FILES
from scantok.vocab import dump_tiktoken_bpe

from merge_bpe_reference import merge_bpe, rank_bpe, recover_merges

REPO = Path(__file__).resolve().parent.parent


@functools.lru_cache(maxsize=1)
def ranks() -> dict[bytes, int]:
    return bundled.read_bundled("code50k.tiktoken").to_dict()


@functools.lru_cache(maxsize=1)
def merge_ranks() -> dict[tuple[bytes, bytes], int]:
    return {pair: i for i, pair in enumerate(recover_merges(ranks()))}


@functools.lru_cache(maxsize=1)
def tiktoken_code50k():
    import tiktoken

    return tiktoken.Encoding("code50k", pat_str=CODE50K_PAT_STR, mergeable_ranks=ranks(),
                             special_tokens=CODE_SPECIAL_TOKENS, explicit_n_vocab=50000)


def test_layout():
    enc = scantok.get_encoding("code50k")
    assert enc.n_vocab == 50000 and enc.max_token_value == 49999
    assert enc._special_tokens == CODE_SPECIAL_TOKENS
    assert [enc.decode_single_token_bytes(i) for i in range(8)] == [
        b"<PAD>", b"<EOS>", b"<BOS>", b"<FILE>", b"</FILE>", b"<EDIT_START>", b"<EDIT_END>", b"<DELETE>"]
    assert enc.decode_single_token_bytes(19) == b"<|reserved_19|>"
    r = ranks()
    assert sorted(r.values()) == list(range(20, 50000))
    assert sorted(t for t, i in r.items() if i < 276) == [bytes([b]) for b in range(256)]
    assert enc.encode("<FILE>", allowed_special="all") == [3]
    with pytest.raises(ValueError, match="disallowed special token"):
        enc.encode("<FILE>")
    assert 3 not in enc.encode("<FILE>", disallowed_special=())


def test_pinned():
    data = (bundled.DATA_DIR / "code50k.stkz").read_bytes()
    assert hashlib.sha256(data).hexdigest() == bundled.BUNDLED["code50k.tiktoken"][1]
    assert hashlib.sha256(dump_tiktoken_bpe(ranks())).hexdigest() == OWN_RANK_FILES["code50k.tiktoken"]


def test_code_structure_tokens():
    enc = scantok.get_encoding("code50k")
    for text in ["\n    ", "\n        ", "\n\t", "\n\t\t", " ==", " !=", " ===", " <=", " >=", " &&", " ||",
                 " <<", " >>", " +=", " ->", " =>", "::", " **", "):\n    ", " {\n\t"]:
        assert len(enc.encode_ordinary(text)) == 1, text
    assert [enc.decode([t]) for t in enc.encode_ordinary("MyClass")] == ["My", "Class"]
    sc = scantok.scanner("code50k")
    assert sc.split("x = 0x1F + 0b101 + 12345") == ["x", " =", " ", "0x1F", " +", " ", "0b101", " +", " ", "123", "45"]
    assert sc.split("if x:\n        y\n\tz") == ["if", " x", ":\n        ", "y", "\n\t", "z"]
    assert sc.split("don't HTTPServer") == ["don't", " HTTPServer"]


def _samples() -> list[str]:
    files = sorted(REPO.glob("runtime/scantok/**/*.py")) + sorted(REPO.glob("tests/*.py")) + [REPO / "README.md"]
    files += sorted(REPO.glob("runtime/scantok/csrc/*.c"))
    return [p.read_text(encoding="utf-8") for p in files]


def test_same_ids_as_tiktoken_on_sources():
    enc = scantok.get_encoding("code50k")
    texts = _samples()
    assert enc.encode_ordinary_batch(texts) == tiktoken_code50k().encode_ordinary_batch(texts)


@given(st.text(alphabet=st.sampled_from(list("ab_ \t\n(){}[]=<>!&|+-*/:;.,'\"0x19AZéß日\u00a0\r")), max_size=80)
       | st.text(max_size=40))
def test_same_ids_as_tiktoken_property(text):
    assert scantok.get_encoding("code50k").encode(text, disallowed_special=()) == \
        tiktoken_code50k().encode(text, disallowed_special=())


def test_rank_rule_equals_merge_list_on_sources():
    """tiktoken's rule (rank of the concatenation) gives the ids of BPE by the merge list."""
    enc = scantok.get_encoding("code50k")
    sc = scantok.scanner("code50k")
    r, mr = ranks(), merge_ranks()
    cache: dict[bytes, list[int]] = {}
    mismatches = 0
    for text in _samples():
        expected = []
        for piece in sc.split_bytes(text.encode()):
            ids = cache.get(piece)
            if ids is None:
                ids = cache[piece] = [r[p] for p in merge_bpe(piece, mr)]
            expected.extend(ids)
        mismatches += expected != enc.encode_ordinary(text)
    assert mismatches == 0


@functools.lru_cache(maxsize=1)
def _tokens() -> list[bytes]:
    return sorted(ranks())


@given(st.lists(st.integers(0, 49979), min_size=1, max_size=4))
def test_rank_rule_equals_merge_list_property(picks):
    """On pieces made of vocabulary tokens glued together (where the two rules could part)."""
    piece = b"".join(_tokens()[i] for i in picks)
    r = ranks()
    assert rank_bpe(piece, r) == merge_bpe(piece, merge_ranks())


def test_fresh_process_offline(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "SCANTOK_VOCAB_DIR"}
    env.update(SCANTOK_CACHE_DIR=str(tmp_path), SCANTOK_OFFLINE="1")
    code = "import scantok; print(scantok.get_encoding('code50k').encode_ordinary('def f(x):\\n    return x'))"
    for _ in range(2):  # the first builds the table image, the second loads it
        out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True).stdout
        assert eval(out) == scantok.get_encoding("code50k").encode_ordinary("def f(x):\n    return x")
