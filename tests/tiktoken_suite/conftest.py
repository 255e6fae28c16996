"""Not part of tiktoken's suite: how scantok runs it.

Hypothesis draws some of its examples from string constants of "local" modules, and an
editable install (``make install``) makes scantok's sources local, so ``test_hyp_roundtrip``
can be handed ``'<|endoftext|>'``, which ``encode`` rejects in tiktoken as in scantok (a
disallowed special token): the upstream test is only sound when the library under test is
installed code, as in tiktoken's own CI. Derandomizing makes the run the same every time, so a
failure here is a real one and reproducible.
"""
from hypothesis import settings

settings.register_profile("scantok-tiktoken-suite", derandomize=True, database=None)
settings.load_profile("scantok-tiktoken-suite")
