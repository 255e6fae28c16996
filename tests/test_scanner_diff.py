"""Differential tests: every shipped scanner against the pinned ``regex`` oracle.

``Scanner.split(s) == regex.compile(pattern with $ -> \\Z, V0).findall(s)`` on hypothesis text
weighted toward the hard cases, on bytes with invalid UTF-8 (an invalid byte is one Cs
character), and on the three benchmark corpora (whole files, piece by piece, as UTF-8 offsets; `split` on a 200 KB slice).
The oracle's pattern is ``Scanner.pattern`` so new scanners are covered automatically.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings

from conftest import CORPORA, GAPLESS_SCANNERS, c_scan_np, get_scanner, load_corpus
from strategies import (describe_mismatch, hard_bytes, hard_text, oracle, oracle_cannot_judge,
                        oracle_split_bytes, utf8_ends, utf8_prefix)


def check_text(sc, text: str) -> None:
    if oracle_cannot_judge(sc, text):
        return  # a code point new after the oracle's Unicode, for a scanner on a later one
    want_spans = [m.span() for m in oracle(sc.pattern).finditer(text)]
    want = [text[a:b] for a, b in want_spans]
    got = sc.split(text)
    assert got == want, describe_mismatch(got, want, text)
    if sc.name in GAPLESS_SCANNERS:
        assert "".join(got) == text
    spans = [tuple(s) for s in sc.spans(text)]
    assert spans == want_spans
    assert sc.count(text) == len(want)
    offs = sc.offsets(text)
    assert str(offs.dtype) == "uint32"
    assert offs.tolist() == utf8_ends(text, want_spans)


@given(text=hard_text())
def test_hard_text(scanner_name, text):
    check_text(get_scanner(scanner_name), text)


@settings(max_examples=max(10, settings.default.max_examples // 3))
@given(text=hard_text(min_fragments=30, max_fragments=150))
def test_hard_text_long(scanner_name, text):
    check_text(get_scanner(scanner_name), text)


@given(data=hard_bytes())
def test_hard_bytes(scanner_name, data):
    sc = get_scanner(scanner_name)
    if oracle_cannot_judge(sc, data.decode("utf-8", "surrogateescape")):
        return  # as in check_text
    want = oracle_split_bytes(sc.pattern, data)
    got = sc.split_bytes(data)
    assert got == want, describe_mismatch(got, want)
    if sc.name in GAPLESS_SCANNERS:
        assert b"".join(got) == data


@pytest.mark.parametrize("corpus", CORPORA)
def test_corpus(scanner_name, corpus):
    """Whole corpus, piece by piece: the pieces' UTF-8 (start, end) offsets equal the oracle's."""
    text = load_corpus(corpus)
    sc = get_scanner(scanner_name)
    rx = oracle(sc.pattern)
    if sc.name in GAPLESS_SCANNERS:
        ends_c = np.fromiter(itertools.accumulate(map(len, rx.findall(text))), dtype=np.int64)
        starts_c = np.concatenate([[0], ends_c[:-1]]) if len(ends_c) else ends_c
    else:
        spans = [m.span() for m in rx.finditer(text)]
        starts_c = np.array([a for a, _ in spans], dtype=np.int64)
        ends_c = np.array([b for _, b in spans], dtype=np.int64)
    prefix = utf8_prefix(text)
    want_starts, want_ends = prefix[starts_c], prefix[ends_c]
    data = text.encode("utf-8", "surrogatepass")
    starts, ends, _ = c_scan_np(sc, data, 0)
    if not (np.array_equal(starts, want_starts) and np.array_equal(ends, want_ends)):
        m = min(len(starts), len(want_starts))
        diff = np.nonzero((starts[:m] != want_starts[:m]) | (ends[:m] != want_ends[:m]))[0]
        i = int(diff[0]) if len(diff) else m
        lo = max(0, i - 3)
        got_p = [data[a:b].decode("utf-8", "surrogateescape") for a, b in zip(starts[lo:i + 3], ends[lo:i + 3])]
        want_p = [data[a:b].decode("utf-8", "surrogateescape")
                  for a, b in zip(want_starts[lo:i + 3], want_ends[lo:i + 3])]
        pytest.fail(f"{scanner_name} on corpus {corpus}: first mismatch at piece {i} "
                    f"(got {len(starts)} pieces, want {len(want_starts)}), near byte "
                    f"{int(want_starts[min(i, len(want_starts) - 1)])}:\n"
                    f"  got [{lo}:]: {got_p!r}\n  want[{lo}:]: {want_p!r}", pytrace=False)
    assert np.array_equal(sc.offsets(text), want_ends)
    assert sc.count(text) == len(want_ends)
    # the Python-object API on a slice of real text (full-corpus split is covered by offsets)
    part = text[:200_000]
    want_part = rx.findall(part)
    got_part = sc.split(part)
    assert got_part == want_part, describe_mismatch(got_part, want_part, part)
    if sc.name in GAPLESS_SCANNERS:
        assert "".join(got_part) == part
