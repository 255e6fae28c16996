"""The scanner compiler: regex pattern → leftmost-first DFA → the engine's tables.

One stage per module, shared by `make gen` (which renders the tables into C for the shipped
scanners) and ``scantok.compile`` (which hands them to the same C engine at run time):

    parse → nfa → determinize → minimize → classes/accel → layout

Pure Python, importing nothing else from scantok (so `make gen` runs before the C extension
is built). The Unicode data comes from ``unicode.load(version)`` (tables shipped in data/) or,
at build time, from gen/ucd.py's reader of the UCD files.
"""
from __future__ import annotations

import importlib

GENERATOR_VERSION = "1.0"
FLAVORS = ("regex", "onig")

_STAGES = ("accel", "cache", "charset", "classes", "determinize", "image", "layout", "minimize",
           "nfa", "parse", "simulate", "unicode")

__all__ = ["GENERATOR_VERSION", "FLAVORS", "compile_dfa", "PatternError", *_STAGES]


def __getattr__(name: str):
    # Stages are imported on first use: loading a scanner from the disk cache needs none of them.
    if name in _STAGES:
        return importlib.import_module(f"{__name__}.{name}")
    if name == "PatternError":
        return importlib.import_module(f"{__name__}.parse").PatternError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def compile_dfa(pattern: str, ucd, *, flavor: str = "regex"):
    """pattern text → minimised DFA (raises PatternError, or DFAError if it is too large)."""
    from .determinize import determinize
    from .minimize import minimize
    from .nfa import build
    from .parse import parse

    return minimize(determinize(build(parse(pattern, ucd, flavor=flavor))))
