"""The scanner compiler: regex pattern → leftmost-first DFA → the engine's tables.

One stage per module, shared by `make gen` (which renders the tables into C for the shipped
scanners) and ``scantok.compile`` (which hands them to the same C engine at run time):

    parse → nfa → determinize → minimize → classes/accel → layout

Pure Python, importing nothing else from scantok (so `make gen` runs before the C extension
is built). The Unicode data comes from ``unicode.load(version)`` (tables shipped in data/) or,
at build time, from gen/ucd.py's reader of the UCD files.
"""
from __future__ import annotations

from . import accel, charset, classes, determinize, layout, minimize, nfa, parse, simulate, unicode

GENERATOR_VERSION = "1.0"

__all__ = ["GENERATOR_VERSION", "compile_dfa", "PatternError"]

PatternError = parse.PatternError


def compile_dfa(pattern: str, ucd, *, flavor: str = "regex") -> determinize.DFA:
    """pattern text → minimised DFA (raises PatternError, or DFAError if it is too large)."""
    return minimize.minimize(determinize.determinize(nfa.build(parse.parse(pattern, ucd, flavor=flavor))))
