"""Scanner API behaviour (Python and C), per CONTRACT: names, errors, empty input, offsets,
count, str/bytes consistency, and the SCANTOK_PARTIAL streaming contract."""
from __future__ import annotations

import threading

import pytest
from hypothesis import given

from conftest import (CONTRACT_SCANNERS, c_scan, get_scanner, load_corpus, native,
                      require_scantok)
from strategies import hard_bytes, hard_text, utf8_ends

SURROGATEPASS, PARTIAL = 1, 2


# ---------------------------------------------------------------------------------------------
# names and lookup
# ---------------------------------------------------------------------------------------------
def test_contract_scanners_present():
    names = require_scantok().scanners()
    assert all(isinstance(n, str) for n in names)
    assert len(set(names)) == len(names)
    missing = set(CONTRACT_SCANNERS) - set(names)
    assert not missing, f"scantok.scanners() lacks {sorted(missing)}"


def test_scanner_identity(scanner_name):
    sc = get_scanner(scanner_name)
    assert sc.name == scanner_name
    assert isinstance(sc.pattern, str) and sc.pattern


def test_unknown_scanner_error_lists_names():
    scantok = require_scantok()
    with pytest.raises((LookupError, ValueError)) as ei:
        scantok.scanner("no_such_scanner")
    msg = str(ei.value)
    assert "no_such_scanner" in msg
    for name in scantok.scanners():
        assert name in msg, f"the error should list the known scanners: {msg}"


def test_scanner_name_wrong_type():
    with pytest.raises(TypeError):
        require_scantok().scanner(123)


def test_c_registry_matches_python(scanner_name):
    ffi, lib = native()
    scantok = require_scantok()
    assert lib.scantok_scanner_count() == len(scantok.scanners())
    at = {ffi.string(lib.scantok_scanner_name(lib.scantok_scanner_at(i))).decode()
          for i in range(lib.scantok_scanner_count())}
    assert at == set(scantok.scanners())
    sc = get_scanner(scanner_name)
    dfa = lib.scantok_scanner_find(scanner_name.encode())
    assert dfa != ffi.NULL
    assert ffi.string(lib.scantok_scanner_name(dfa)).decode() == scanner_name
    assert ffi.string(lib.scantok_scanner_pattern(dfa)).decode("utf-8") == sc.pattern
    assert ffi.string(lib.scantok_scanner_name(sc._dfa)).decode() == scanner_name
    assert lib.scantok_scanner_find(b"no_such_scanner") == ffi.NULL


# ---------------------------------------------------------------------------------------------
# types and empty input
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["split", "spans", "count", "offsets"])
@pytest.mark.parametrize("bad", [123, None, 1.5, ["a"]])
def test_str_methods_reject_non_text(scanner_name, method, bad):
    with pytest.raises(TypeError):
        getattr(get_scanner(scanner_name), method)(bad)


def test_split_rejects_bytes(scanner_name):
    """``split`` is the str API (``split_bytes`` takes bytes); bytes must not be accepted silently."""
    with pytest.raises(TypeError):
        get_scanner(scanner_name).split(b"abc")


@pytest.mark.parametrize("bad", ["abc", 123, None])
def test_split_bytes_rejects_non_bytes(scanner_name, bad):
    with pytest.raises(TypeError):
        get_scanner(scanner_name).split_bytes(bad)


def test_empty_input(scanner_name):
    sc = get_scanner(scanner_name)
    assert sc.split("") == []
    assert list(sc.spans("")) == []
    assert sc.split_bytes(b"") == []
    assert sc.count("") == 0
    offs = sc.offsets("")
    assert str(offs.dtype) == "uint32" and len(offs) == 0
    pieces, consumed = c_scan(sc, b"", 0)
    assert pieces == [] and consumed == 0
    pieces, consumed = c_scan(sc, b"", PARTIAL)
    assert pieces == [] and consumed == 0


# ---------------------------------------------------------------------------------------------
# consistency between the entry points
# ---------------------------------------------------------------------------------------------
@given(text=hard_text())
def test_count_offsets_spans_consistent(scanner_name, text):
    sc = get_scanner(scanner_name)
    pieces = sc.split(text)
    spans = [tuple(s) for s in sc.spans(text)]
    assert [text[a:b] for a, b in spans] == pieces
    assert all(a < b for a, b in spans), "no empty pieces"
    assert all(spans[i][1] <= spans[i + 1][0] for i in range(len(spans) - 1)), "ordered, disjoint"
    assert sc.count(text) == len(pieces)
    offs = sc.offsets(text)
    assert str(offs.dtype) == "uint32"
    assert offs.tolist() == utf8_ends(text, spans)


@given(text=hard_text(surrogates=False))
def test_bytes_and_str_agree(scanner_name, text):
    sc = get_scanner(scanner_name)
    assert sc.split_bytes(text.encode("utf-8")) == [p.encode("utf-8") for p in sc.split(text)]


@given(text=hard_text())
def test_c_scan_matches_python(scanner_name, text):
    sc = get_scanner(scanner_name)
    data = text.encode("utf-8", "surrogatepass")
    pieces, consumed = c_scan(sc, data, SURROGATEPASS)
    assert consumed == len(data)
    assert [data[a:b].decode("utf-8", "surrogatepass") for a, b in pieces] == sc.split(text)
    assert [b for _, b in pieces] == sc.offsets(text).tolist()


def test_surrogatepass_flag_changes_only_surrogates(scanner_name):
    """ED A0 80 is one Cs char with SURROGATEPASS, three invalid bytes (three Cs chars) without."""
    sc = get_scanner(scanner_name)
    data = "x\ud800y".encode("utf-8", "surrogatepass")
    with_flag, _ = c_scan(sc, data, SURROGATEPASS)
    assert [data[a:b] for a, b in with_flag] == [p.encode("utf-8", "surrogatepass")
                                                  for p in sc.split("x\ud800y")]
    without, _ = c_scan(sc, data, 0)
    assert [data[a:b] for a, b in without] == sc.split_bytes(data)


# ---------------------------------------------------------------------------------------------
# SCANTOK_PARTIAL: pieces before `consumed` are exactly the full-text pieces, for every cut
# ---------------------------------------------------------------------------------------------
def _check_partial(sc, data: bytes, base_flags: int):
    full, consumed_full = c_scan(sc, data, base_flags)
    assert consumed_full == len(data)
    for k in range(len(data) + 1):
        part, consumed = c_scan(sc, data[:k], base_flags | PARTIAL)
        assert 0 <= consumed <= k, (k, consumed)
        expect = [p for p in full if p[0] < consumed]
        assert part == expect, (f"cut at byte {k} of {data!r}: consumed={consumed}, "
                                f"partial pieces {part} != full-text pieces {expect}")
        assert all(b <= consumed for _, b in part), (k, consumed, part)


@given(text=hard_text(max_fragments=12))
def test_partial_prefix_cuts_text(scanner_name, text):
    _check_partial(get_scanner(scanner_name), text.encode("utf-8", "surrogatepass"), SURROGATEPASS)


@given(data=hard_bytes(max_fragments=12))
def test_partial_prefix_cuts_bytes(scanner_name, data):
    _check_partial(get_scanner(scanner_name), data, 0)


def test_partial_examples(scanner_name):
    sc = get_scanner(scanner_name)
    for text in ["a   b", "don't", "x \r\n y", "12345678", "abc", "'s", "  ", "\u4e2d\u6587 x",
                 "hello world, this is a test.\n"]:
        _check_partial(sc, text.encode(), 0)


# ---------------------------------------------------------------------------------------------
# threads (the C call releases the GIL): concurrent scans give the same results
# ---------------------------------------------------------------------------------------------
def test_concurrent_scans(scanner_name):
    sc = get_scanner(scanner_name)
    text = load_corpus("en")[:500_000]
    want = sc.offsets(text).tolist()
    results = [None] * 4

    def work(i):
        results[i] = sc.offsets(text).tolist()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r == want for r in results)


def test_str_subclass_is_split_by_its_characters():
    # Scanner reads a str's characters, also on the lone-surrogate path: a subclass's own
    # encode() does not change the pieces
    class Loud(str):
        def encode(self, *args, **kwargs):
            return b"zzz zzz zzz"

    sc = require_scantok().scanner("cl100k_base")
    for text in ("hello world", "hello \ud800 world", "h\u00e9llo \udfff w\u00f6rld 123"):
        assert sc.split(Loud(text)) == sc.split(text)
        assert sc.count(Loud(text)) == sc.count(text)
        assert sc.spans(Loud(text)) == sc.spans(text)
