"""A short run of tests/fuzz_hf_components.py (random tokenizer.json pipelines built with
`tokenizers`, compared with scantok.Tokenizer on random texts): 20 pipelines of a fixed seed,
in well under 30 s. The long campaign is `make fuzz-hf-components`."""
from __future__ import annotations

import pytest

pytest.importorskip("tokenizers")

import fuzz_hf_components as fz  # noqa: E402


def test_random_pipelines_match_tokenizers(capsys):
    c = fz.Campaign(seed=20261126)
    c.big_batches = False  # no batch of PARALLEL_MIN characters per pipeline (the campaign has them)
    c.run(seconds=None, pipelines=20, texts_per=12)
    out = capsys.readouterr().out
    assert c.built >= 10, fz.summary(c, 0)  # most pipelines are compared, not skipped
    assert c.texts > 0 and sum(c.calls.values()) > 10 * c.built
    assert not c.mismatches, out + "\n" + fz.summary(c, 0)
