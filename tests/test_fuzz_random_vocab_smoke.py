"""A short run of tests/fuzz_random_vocab.py (random vocabularies in random rank order, under
random encoder switches, against tiktoken): 150 vocabularies of a fixed seed, in a few seconds.
The long campaign is `make fuzz-random-vocab`."""
from __future__ import annotations

import fuzz_random_vocab as fz
from scantok._native import lib


def test_random_vocabularies_match_tiktoken_and_switches_are_restored(capsys):
    before = (lib.bpe_piece_cache_bytes(), lib.bpe_set_piece_seed(1), lib.bpe_set_premerge(1))
    lib.bpe_set_piece_seed(before[1])
    lib.bpe_set_premerge(before[2])
    assert fz.main(["--examples", "150", "--seed", "20261127"]) == 0, capsys.readouterr().out
    out = capsys.readouterr().out
    assert "150 vocabularies, 1500 texts" in out and "mismatches: 0" in out
    # every example's switches were put back
    after = (lib.bpe_piece_cache_bytes(), lib.bpe_set_piece_seed(before[1]), lib.bpe_set_premerge(before[2]))
    assert after == before
