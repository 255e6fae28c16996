"""The common start of the differential fuzz scripts (fuzz_hf, fuzz_hf_components; their
arguments for fuzz_tiktoken_surface and fuzz_random_vocab too): the oracle
on one thread (set before tokenizers loads), where the shared data is, and the comparable forms
of outcomes and of an Encoding's mappings (the tests use them too)."""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

os.environ.setdefault("RAYON_NUM_THREADS", "1")

TESTS = Path(__file__).resolve().parent
SHARED = TESTS.parent.parent / "shared"
if not SHARED.exists():
    SHARED = Path("/work/shared")
CORPORA = ("en", "code", "multi")


class Raised:
    """An exception's outcome: equal to any other (the libraries raise different types)."""

    def __init__(self, exc: BaseException):
        self.name = type(exc).__name__
        self.msg = str(exc)[:200]

    def __eq__(self, other) -> bool:
        return isinstance(other, Raised)

    def __repr__(self) -> str:
        return f"<raised {self.name}: {self.msg}>"


def outcome(fn, *args):
    """fn(*args), or Raised for what it raised, tokenizers' panics included."""
    try:
        return fn(*args)
    except Exception as exc:
        return Raised(exc)
    except BaseException as exc:  # pyo3_runtime.PanicException: tokenizers panicked (not an Exception)
        if type(exc).__name__ != "PanicException":
            raise
        return Raised(exc)


def mappings(e, limit: int = 48, exact_sequence: bool = False) -> list:
    """Encoding's mapping methods at the first positions (tokens, words, chars; sequences 0
    and 1) and one past them.  token_to_sequence as whether it has one, unless exact_sequence:
    where two sequences' token ranges overlap (a Sequence post-processor with ByteLevel after a
    template numbers the template's pieces again; set_sequence_id), tokenizers answers with
    the first range in its hash map's order, which changes from process to process."""
    n = len(e)
    words = max([w for w in e.word_ids if w is not None], default=-1) + 2
    chars = max([b for _, b in e.offsets], default=0) + 1
    out = [(e.token_to_sequence(i) if exact_sequence else e.token_to_sequence(i) is None, e.token_to_chars(i),
            e.token_to_word(i)) for i in range(min(n + 2, limit))]
    for s in (0, 1):
        out += [(e.word_to_tokens(w, s), e.word_to_chars(w, s)) for w in range(min(words, limit))]
        out += [(e.char_to_token(c, s), e.char_to_word(c, s)) for c in range(min(chars, limit))]
    return out


def campaign_args(argv=None) -> argparse.Namespace:
    """--seconds, --examples and --seed, as the campaigns take them: a bound on time or on
    examples (60 seconds when neither is given), and a seed (the clock's by default)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=None)
    ap.add_argument("--examples", type=int, default=None)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    args = ap.parse_args(argv)
    if args.seconds is None and args.examples is None:
        args.seconds = 60.0
    return args
