"""Shared test helpers: hypothesis strategies for hard scanner inputs, and the regex oracle.

Reused by every differential test in the project (scanner, BPE encoder, WordLevel, ...)::

    from strategies import hard_text, hard_bytes, oracle, oracle_split, oracle_split_bytes

* ``hard_text()``  -- ``str`` built from *fragments* (single characters of every general
  category and short multi-character snippets: contractions, CRLF, space runs, emoji ZWJ
  sequences, digit runs, ...) so that the interesting sequences are common, not one in a
  million.  ``surrogates=False`` leaves out lone surrogates (for APIs that take UTF-8 only).
* ``hard_bytes()`` -- ``bytes``: UTF-8 of hard fragments mixed with invalid UTF-8 (stray
  continuation bytes, truncated sequences, overlongs, encoded surrogates, > U+10FFFF, F5..FF).
* ``FRAGMENTS`` / ``BYTE_FRAGMENTS`` / ``random_text(rng)`` / ``random_bytes(rng)`` -- the same
  pools for plain ``random``-driven generators (the long fuzz campaign).
* ``oracle(pattern)`` -- ``regex.compile`` of a scanner pattern with ``$`` translated to ``\\Z``
  (Rust/tiktoken semantics: ``$`` is end of text only) and the ``regex.V0`` flag; the reference
  is ``regex==2025.9.18`` (Unicode 16.0.0), checked by ``check_oracle_version()``.
* ``oracle_split(pattern, text)`` and ``oracle_split_bytes(pattern, data)``: the expected
  pieces. For bytes, an invalid byte is one ``Cs`` character, exactly like decoding with
  ``errors="surrogateescape"``.
"""
from __future__ import annotations

import functools
import random
from typing import Sequence

import regex
from hypothesis import strategies as st

ORACLE_REGEX_VERSION = "2025.9.18"

# ---------------------------------------------------------------------------------------------
# The oracle
# ---------------------------------------------------------------------------------------------


def check_oracle_version() -> str:
    """The installed ``regex`` release; raises if it is not the pinned one (Unicode 16.0.0)."""
    try:
        from importlib.metadata import version

        v = version("regex")
    except Exception as exc:  # pragma: no cover - broken environment
        raise RuntimeError(f"cannot determine the installed regex version: {exc}") from exc
    if v != ORACLE_REGEX_VERSION:
        raise RuntimeError(
            f"the differential oracle must be regex=={ORACLE_REGEX_VERSION} (Unicode 16.0.0), "
            f"found regex=={v}; install the pinned test dependencies (pip install -e .[test])"
        )
    return v


def translate_dollar(pattern: str) -> str:
    r"""Replace every unescaped ``$`` outside a character class by ``\Z``.

    ``regex`` (like Perl) lets ``$`` also match before a final ``\n``; tiktoken's Rust engine
    does not.  Inside ``[...]`` a ``$`` is a literal and is kept.
    """
    out: list[str] = []
    i, n = 0, len(pattern)
    in_class = False
    class_start = -1
    while i < n:
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            # ']' right after '[' or '[^' is a literal member, not the end of the class.
            if c == "]" and i > class_start:
                in_class = False
            out.append(c)
        elif c == "[":
            in_class = True
            class_start = i + 1
            if i + 1 < n and pattern[i + 1] == "^":
                class_start = i + 2
            out.append(c)
        elif c == "$":
            out.append(r"\Z")
        else:
            out.append(c)
        i += 1
    return "".join(out)


@functools.lru_cache(maxsize=None)
def oracle(pattern: str) -> "regex.Pattern[str]":
    """The compiled reference for a scanner pattern (``$`` -> ``\\Z``, ``regex.V0``)."""
    return regex.compile(translate_dollar(pattern), regex.V0)


# `regex` 2025.9.18 mismatches a negated class beside a case-insensitive branch: it takes the
# class's letter in both cases, so regex.findall(r"[^a\s]|(?i:c)", "A") == [] where `re`,
# tiktoken and scantok match "A" (found by test_generated_patterns_on_periodic_text;
# test_compile_runtime.py::test_negated_class_beside_a_caseless_branch checks scantok on such
# patterns against `re`). The same pattern behind a lookahead that every match satisfies,
# (?=[\s\S])(?:...) (a scanner pattern never matches the empty string), compiles otherwise in
# `regex` and does not show it: where the two spellings disagree, `regex` has no answer.
def oracle_agrees_with_itself(pattern: str, text: str) -> bool:
    if "(?i" not in pattern:
        return True
    other = regex.compile(f"(?=[\\s\\S])(?:{translate_dollar(pattern)})", regex.V0)
    try:
        return ([m.span() for m in oracle(pattern).finditer(text, timeout=5)]
                == [m.span() for m in other.finditer(text, timeout=5)])
    except TimeoutError:  # backtracking gone exponential: no answer either
        return False


def oracle_split(pattern: str, text: str) -> list[str]:
    return oracle(pattern).findall(text)


def oracle_spans(pattern: str, text: str) -> list[tuple[int, int]]:
    return [m.span() for m in oracle(pattern).finditer(text)]


ORACLE_UNICODE = "16.0.0"
_UNASSIGNED_FOR_ORACLE = regex.compile(r"\p{Cn}")


def oracle_cannot_judge(scanner, text: str) -> bool:
    """True for a scanner built on a later Unicode than the oracle's (the hf_* ones follow HF's
    17.0.0) and a text holding a code point that 16.0.0 leaves unassigned: such a character
    may rightly be a digit or a letter for the scanner (e.g. U+11DE9, a Tolong Siki digit new
    in 17.0), so the oracle cannot judge the example."""
    return scanner.unicode_version != ORACLE_UNICODE and _UNASSIGNED_FOR_ORACLE.search(text) is not None


def oracle_split_bytes(pattern: str, data: bytes) -> list[bytes]:
    """Pieces of ``data``: every invalid UTF-8 byte is one Cs character (surrogateescape)."""
    text = data.decode("utf-8", "surrogateescape")
    return [p.encode("utf-8", "surrogateescape") for p in oracle(pattern).findall(text)]


# ---------------------------------------------------------------------------------------------
# Fragment pools
# ---------------------------------------------------------------------------------------------

GENERAL_CATEGORIES = (
    "Lu Ll Lt Lm Lo Mn Mc Me Nd Nl No Pc Pd Ps Pe Pi Pf Po Sm Sc Sk So Zs Zl Zp Cc Cf Cs Co Cn"
).split()

CONTRACTION_SUFFIXES = ("s", "t", "re", "ve", "m", "ll", "d")


def _case_variants(s: str) -> list[str]:
    out = {""}
    for ch in s:
        out = {p + v for p in out for v in {ch.lower(), ch.upper()}}
    return sorted(out)


CONTRACTIONS: list[str] = sorted(
    {"'" + v for suf in CONTRACTION_SUFFIXES for v in _case_variants(suf)}
    # simple case folding: U+017F LATIN SMALL LETTER LONG S folds to s, U+212A KELVIN SIGN to k
    | {"'\u017f", "'\u017F\u017f", "'\u212a", "'\u212ag", "'l\u017f", "'\u017ft", "'K"}
    # typographic apostrophe is NOT a contraction; apostrophe followed by other letters
    | {"\u2019s", "'x", "'", "''", "'  ", "'\n", "'1", "'\u0301s"}
)

WHITESPACE_FRAGMENTS: list[str] = [
    " ", "  ", "   ", "    ", " " * 7, " " * 16, " " * 17, " " * 33,
    "\t", "\t\t", " \t", "\t ",
    "\n", "\n\n", "\r", "\r\r", "\r\n", "\r\n\r\n", "\n\r", " \n", "\n ", " \r\n ", "  \n  ",
    "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f",  # VT/FF are \s; 1C-1F are not
    "\x85", " \x85", "\x85 ",          # NEL
    "\xa0", " \xa0", "\xa0 ",          # NBSP
    "\u1680", "\u2000", "\u200a", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000",
    "\u200b", "\u180e", "\ufeff",      # zero width space / Mongolian vowel sep / BOM: not \s
]

LETTER_FRAGMENTS: list[str] = [
    "a", "b", "s", "t", "k", "x", "A", "B", "S", "T", "K", "Z",
    "hello", "Hello", "HELLO", "hELLO", "don", "I", "it", "we", "They",
    "abcdefghijklmnopqrstuvwxyz" * 3, "ABCDEFGHIJKLMNOPQRSTUVWXYZ" * 3,
    "CamelCase", "camelCaseWord", "XMLHttpRequest", "iPhone", "McDonald", "ÉCOLE", "école",
    "\u01c5", "\u01c8", "\u01cb", "\u01f2", "\u1f88", "\u1fbc", "Dž\u01c5a",  # Lt titlecase
    "\u02b0", "\u02c6", "\u3005", "\u30fc", "\uff70", "a\u02b0", "A\u02b0",  # Lm modifier letters
    "\u00aa", "\u00ba", "\u05d0\u05d1", "\u4e2d\u6587", "\u3042\u3044", "\u0e01\u0e32",  # Lo
    "\u017f", "\u212a", "\u0130", "\u0131", "\u00df", "\u1e9e", "\ufb00",  # case-folding oddities
    "\u0391\u03b2\u03b3", "\u0416\u0436", "\u0531\u0561",  # Greek, Cyrillic, Armenian
    "e\u0301", "E\u0301", "a\u0301\u0302\u0303", "\u0301", "\u0903", "\u20dd", "\u0488",  # marks
    "\u0915\u094d\u0937", "\u0644\u064e", "\U0001d400", "\U0001d41a", "\U00010400", "\U00010428",
    "\U0001e900", "\U0001e922", "\U00020000", "\U0003134a",
]

DIGIT_FRAGMENTS: list[str] = [
    "0", "1", "7", "12", "123", "1234", "12345", "1234567", "0" * 10, "9" * 65,
    "\u0660\u0661\u0662", "\u06f1\u06f2", "\u0966\u0967", "\u09e6", "\u0e51\u0e52",
    "\uff10\uff11\uff12", "\U0001d7ce", "\U0001d7ec", "\U000104a0", "\U0001e950",
    "\u2160\u216b", "\u3007", "\u00b2", "\u00bd", "\u2460", "\U00010107",  # Nl / No
    "1.5", "3,000", "0x1F", "1e10", "v2", "a1", "1a", "12ab", "١٢٣٤",
]

PUNCT_FRAGMENTS: list[str] = [
    "/", "//", "/\n", "/\r\n", "\n/", " /", "a/b", "/*", "*/", "./", "../", "http://x.y/z",
    ".", ",", "!", "?", "...", "-", "--", "_", "__init__", "(", ")", "[", "]", "{", "}",
    "\"", "`", "``", "#", "@", "$", "%", "^", "&", "*", "+", "=", "<", ">", "|", "~", ":", ";",
    "\\", "\\n", "->", "=>", "!=", "==", "+=", "();", "\u2014", "\u2019", "\u201c", "\u00bf",
    "\u3001", "\u3002", "\uff0c", "\u00a9", "\u20ac", "$5", "\u00b0C", "\u2211", "\u2192",
    " .", " !\n", " ,\r\n", "!\n\n", "?\r\n/", ".\r", "\U0001f600",
]

EMOJI_FRAGMENTS: list[str] = [
    "\U0001f44d", "\U0001f44d\U0001f3fd", "\U0001f468\u200d\U0001f469\u200d\U0001f467",
    "\U0001f3f3\ufe0f\u200d\U0001f308", "\u2764\ufe0f", "\U0001f1eb\U0001f1f7", "\u200d",
    "\ufe0f", "\U0001f3fb", "1\ufe0f\u20e3", "#\ufe0f\u20e3", "\U0001f9d1\U0001f3ff\u200d\U0001f4bb",
    "\U000e0067", "\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f",
]

ODD_FRAGMENTS: list[str] = [
    "\x00", "\x01", "\x7f", "\x80", "\x9f", "\u00ad", "\u0600", "\u200e", "\u2066",  # Cc / Cf
    "\ue000", "\uf8ff", "\U000f0000", "\U0010fffd", "\U0010ffff",  # private use / nonchar
    "\u0378", "\u0379", "\u05ff", "\ufdd0", "\ufffe", "\uffff", "\U0002fffe", "\U000e0000",
    "\U0003fffd", "\U00040000", "\U000dffff",  # unassigned
    "\ufffd", "\U0001fbf0", "\U0001ccd6", "\U00011f50", "\U0001e5f1",  # incl. Unicode 16 additions
    "\u0c5c", "\U0001ccf0", "\U00010d40",  # assigned only in 17.0 (Cn for the 16.0 oracle)
]

SURROGATE_FRAGMENTS: list[str] = [
    "\ud800", "\udbff", "\udc00", "\udfff", "\udc80", "\udcff", "\ud83d\ude00",
    "a\ud800b", " \udfff", "\ud800\n", "'\udc73",
]

SNIPPETS: list[str] = [
    "don't", "I'm", "we've", "they're", "she'll", "he'd", "it's", "IT'S", "DON'T", "WE'VE",
    "it\u017f", "it'\u017f", "O'Neil", "rock'n'roll", "'tis", "x's's", "a's", "'s'",
    "a   b", "a  \nb", "a \r\n b", "x  ", "x \n", "  \n", " \n ", "\n\n\n", "\r\n\r\n  x",
    "foo(bar, baz)\n", "    return x\n", "\tif (a) {\n\t\tb();\n\t}\n", "x = 1  # c\r\n",
    "<|endoftext|>", "Hello, world!", " the", " The", " 123", " 1234", "  $", " \u00a0x",
    "\u00a0\u00a0a", "\u3000\u4e2d", "\u4e2d\u6587 text", "na\u00efve", "Stra\u00dfe", "\u0130stanbul",
    "\u0645\u0631\u062d\u0628\u0627 123", "\u0928\u092e\u0938\u094d\u0924\u0947",
    "\U0001f44d\U0001f3fd ok", "a\u200db", "x\u0301\u0301\u0301", "A\u0301b\u0301",
]


@functools.lru_cache(maxsize=1)
def category_chars() -> dict[str, list[str]]:
    """Characters of every general category *as the oracle (Unicode 16.0.0) sees them*.

    Huge categories (Lo, Co, Cn) are sampled down deterministically; every category keeps its
    first and last member.
    """
    everything = "".join(map(chr, range(0x110000)))
    out: dict[str, list[str]] = {}
    rng = random.Random(20250918)
    for cat in GENERAL_CATEGORIES:
        chars = regex.findall(r"\p{%s}" % cat, everything)
        if len(chars) > 3000:
            chars = [chars[0], chars[-1]] + rng.sample(chars, 3000)
        out[cat] = chars
    return out


def _weighted(pairs: Sequence[tuple[int, st.SearchStrategy[str]]]) -> st.SearchStrategy[str]:
    """``one_of`` with integer weights (by repetition); the first entry is the shrink target."""
    strategies: list[st.SearchStrategy[str]] = []
    for weight, strategy in pairs:
        strategies.extend([strategy] * weight)
    return st.one_of(strategies)


def _any_codepoint(surrogates: bool) -> st.SearchStrategy[str]:
    s = st.integers(0, 0x10FFFF).map(chr)
    if not surrogates:
        s = s.filter(lambda c: not "\ud800" <= c <= "\udfff")
    return s


def fragment(*, surrogates: bool = True) -> st.SearchStrategy[str]:
    """One fragment: a single character or a short snippet, weighted toward the hard cases."""
    cats = category_chars()
    cat_names = [c for c in GENERAL_CATEGORIES if surrogates or c != "Cs"]
    by_category = st.sampled_from(cat_names).flatmap(lambda c: st.sampled_from(cats[c]))
    pairs: list[tuple[int, st.SearchStrategy[str]]] = [
        (6, st.sampled_from(LETTER_FRAGMENTS)),
        (6, st.sampled_from(WHITESPACE_FRAGMENTS)),
        (3, st.sampled_from(CONTRACTIONS)),
        (3, st.sampled_from(DIGIT_FRAGMENTS)),
        (3, st.sampled_from(PUNCT_FRAGMENTS)),
        (2, st.sampled_from(EMOJI_FRAGMENTS)),
        (2, st.sampled_from(ODD_FRAGMENTS)),
        (3, st.sampled_from(SNIPPETS)),
        (4, by_category),
        (1, _any_codepoint(surrogates)),
        # long runs of one class: exercise the SIMD skip (>= 64 bytes, crossing 16/32 boundaries)
        (1, st.tuples(st.sampled_from(["a", "Z", " ", "1", "\t", "\n", "-", "\u00e9", "\u4e2d"]),
                      st.integers(1, 140)).map(lambda t: t[0] * t[1])),
    ]
    if surrogates:
        pairs.append((1, st.sampled_from(SURROGATE_FRAGMENTS)))
    return _weighted(pairs)


def hard_text(*, min_fragments: int = 0, max_fragments: int = 40,
              surrogates: bool = True) -> st.SearchStrategy[str]:
    """Text made of ``min_fragments..max_fragments`` hard fragments (see module doc)."""
    return st.lists(fragment(surrogates=surrogates), min_size=min_fragments,
                    max_size=max_fragments).map("".join)


# Invalid (and edge-valid) UTF-8 sequences.
INVALID_UTF8: list[bytes] = [
    b"\x80", b"\x8f", b"\xbf", b"\x80\x80",                     # stray continuation bytes
    b"\xc2", b"\xdf", b"\xe2\x82", b"\xe0\xa0", b"\xf0\x9f\x98", b"\xf0\x9f", b"\xf4\x8f\xbf",  # truncated
    b"\xc0\x80", b"\xc1\xbf", b"\xc0\xaf", b"\xe0\x80\x80", b"\xe0\x9f\xbf",  # overlong
    b"\xf0\x80\x80\x80", b"\xf0\x8f\xbf\xbf",
    b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xed\xa0\xbd\xed\xb8\x80",  # encoded surrogates (CESU-8)
    b"\xf4\x90\x80\x80", b"\xf7\xbf\xbf\xbf", b"\xf8\x88\x80\x80\x80", b"\xfc\x84\x80\x80\x80\x80",
    b"\xf5", b"\xfe", b"\xff", b"\xff\xfe",
    b"\xe2\x82a", b"\xc3 ", b"\xe4\xb8\n", b"'\xc5", b"'\xc5\xbf",  # truncated then ASCII
]
EDGE_VALID_UTF8: list[bytes] = [
    b"\x7f", b"\xc2\x80", b"\xdf\xbf", b"\xe0\xa0\x80", b"\xed\x9f\xbf", b"\xee\x80\x80",
    b"\xef\xbf\xbd", b"\xef\xbf\xbf", b"\xf0\x90\x80\x80", b"\xf4\x8f\xbf\xbf",
    b"\xc5\xbf", b"\xe2\x84\xaa",  # U+017F, U+212A
]


def hard_bytes(*, max_fragments: int = 40) -> st.SearchStrategy[bytes]:
    """Bytes: UTF-8 of hard fragments (no surrogates) mixed with invalid UTF-8."""
    valid = fragment(surrogates=False).map(lambda s: s.encode("utf-8"))
    frag = st.one_of(
        valid, valid, valid,
        st.sampled_from(INVALID_UTF8), st.sampled_from(INVALID_UTF8),
        st.sampled_from(EDGE_VALID_UTF8),
        st.integers(0, 255).map(lambda b: bytes([b])),
    )
    return st.lists(frag, max_size=max_fragments).map(b"".join)


# ---------------------------------------------------------------------------------------------
# Plain-random generators over the same pools (for long campaigns; much faster than hypothesis)
# ---------------------------------------------------------------------------------------------

def _text_pools(surrogates: bool) -> list[tuple[float, list[str]]]:
    cats = category_chars()
    pools: list[tuple[float, list[str]]] = [
        (6, LETTER_FRAGMENTS), (6, WHITESPACE_FRAGMENTS), (3, CONTRACTIONS), (3, DIGIT_FRAGMENTS),
        (3, PUNCT_FRAGMENTS), (2, EMOJI_FRAGMENTS), (2, ODD_FRAGMENTS), (3, SNIPPETS),
    ]
    for c in GENERAL_CATEGORIES:
        if surrogates or c != "Cs":
            pools.append((4 / len(GENERAL_CATEGORIES), cats[c]))
    if surrogates:
        pools.append((1, SURROGATE_FRAGMENTS))
    return pools


def random_fragments(rng: random.Random, n: int, *, surrogates: bool = True) -> list[str]:
    pools = _text_pools(surrogates)
    weights = [w for w, _ in pools] + [1, 1]
    out: list[str] = []
    for k in rng.choices(range(len(weights)), weights=weights, k=n):
        if k < len(pools):
            out.append(rng.choice(pools[k][1]))
        elif k == len(pools):
            c = chr(rng.randrange(0x110000))
            if not surrogates and "\ud800" <= c <= "\udfff":
                c = "\ufffd"
            out.append(c)
        else:
            out.append(rng.choice("aZ 1\t\n-\u00e9\u4e2d") * rng.randint(1, 140))
    return out


def random_text(rng: random.Random, max_fragments: int = 60, *, surrogates: bool = True) -> str:
    return "".join(random_fragments(rng, rng.randint(0, max_fragments), surrogates=surrogates))


def random_byte_fragments(rng: random.Random, n: int) -> list[bytes]:
    out: list[bytes] = []
    for _ in range(n):
        r = rng.random()
        if r < 0.6:
            out.append(random_fragments(rng, 1, surrogates=False)[0].encode("utf-8"))
        elif r < 0.85:
            out.append(rng.choice(INVALID_UTF8))
        elif r < 0.93:
            out.append(rng.choice(EDGE_VALID_UTF8))
        else:
            out.append(bytes([rng.randrange(256)]))
    return out


def random_bytes(rng: random.Random, max_fragments: int = 60) -> bytes:
    return b"".join(random_byte_fragments(rng, rng.randint(0, max_fragments)))


# ---------------------------------------------------------------------------------------------
# Reference patterns (independent of scantok): tiktoken 0.14.0's own strings, HF's Whitespace
# ---------------------------------------------------------------------------------------------

HF_WHITESPACE_PATTERN = r"\w+|[^\w\s]+"


def random_vocabulary(rng: random.Random, alphabet: Sequence[str], *, tokens: tuple[int, int] = (20, 300),
                      max_len: int = 7, cut_from: int = 8) -> dict[bytes, int]:
    """A tiktoken-style vocabulary no BPE training would make: every byte, and between tokens[0]
    and tokens[1] byte strings of 2 to max_len bytes cut anywhere from random text of cut_from
    characters of alphabet (so that tokens straddle characters, end inside them and hold them
    whole), ranked in random order (so that a token need not merge back into itself)."""
    found = {bytes([b]) for b in range(256)}
    for _ in range(rng.randint(*tokens)):
        text = "".join(rng.choices(alphabet, k=cut_from)).encode()
        i = rng.randrange(len(text) - 1)
        found.add(text[i : i + rng.randint(2, max_len)])
    order = list(found)
    rng.shuffle(order)
    return {t: r for r, t in enumerate(order)}


@functools.lru_cache(maxsize=1)
def reference_patterns() -> dict[str, str]:
    """``{scanner name: pattern}`` read from tiktoken_ext.openai_public (without loading vocab)."""
    import tiktoken_ext.openai_public as op

    saved = (op.load_tiktoken_bpe, op.data_gym_to_mergeable_bpe_ranks)
    op.load_tiktoken_bpe = lambda *a, **k: {}
    op.data_gym_to_mergeable_bpe_ranks = lambda *a, **k: {}
    try:
        pats = {name: getattr(op, name)()["pat_str"]
                for name in ("r50k_base", "cl100k_base", "o200k_base")}
    finally:
        op.load_tiktoken_bpe, op.data_gym_to_mergeable_bpe_ranks = saved
    pats["whitespace"] = HF_WHITESPACE_PATTERN
    return pats


def describe_mismatch(got: list, want: list, text=None, context: int = 3) -> str:
    """Human-readable first difference between two piece lists (``None`` if equal)."""
    if got == want:
        return None
    i = 0
    while i < min(len(got), len(want)) and got[i] == want[i]:
        i += 1
    lo = max(0, i - context)
    where = ""
    if text is not None:
        pos = sum(len(p) for p in want[:i])
        where = (f" (at offset ~{pos} if the pattern has no gaps; text there: "
                 f"{text[max(0, pos - 20):pos + 40]!r})")
    return (f"first mismatch at piece {i} of got={len(got)}/want={len(want)}{where}\n"
            f"  got [{lo}:]: {got[lo:i + context]!r}\n"
            f"  want[{lo}:]: {want[lo:i + context]!r}")


def utf8_prefix(text: str):
    """numpy int64 array P of len(text)+1: P[i] = UTF-8 length of text[:i] (surrogates: 3 bytes)."""
    import numpy as np

    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    widths = 1 + (cps >= 0x80).astype(np.int64) + (cps >= 0x800) + (cps >= 0x10000)
    out = np.zeros(len(text) + 1, dtype=np.int64)
    np.cumsum(widths, out=out[1:])
    return out


def utf8_ends(text: str, spans) -> list[int]:
    """UTF-8 byte offsets of the span ends."""
    p = utf8_prefix(text)
    return [int(p[b]) for _, b in spans]


# ---- generated patterns (the compiler's differential tests) ------------------------------

ATOMS = ["a", "b", "s", "k", "'", " ", r"\n", r"\s", r"\S", r"\d", r"\w", r"\W", r"\p{L}", r"\p{N}", r"\p{Lu}",
         r"\p{M}", "[ab]", "[^a\\s]", "[a-c\\d]", r"\p{P}", ".", r"[\r\n]", "\u00e9", r"\u017f"]
QUANTS = ["", "", "?", "*", "+", "??", "*?", "+?", "?+", "*+", "++", "{1,3}", "{2}", "{1,2}+", "{0,2}?"]


REJECTED_BY_DESIGN = ("empty string", "zero-width assertion")


# Under (?i) the `regex` module gives \p{Lu}/\p{Ll}/\p{Lt} the meaning \p{LC} and folds no other
# property, where tiktoken's engine (and scantok) closes the property's set under simple case
# folding: (?i:\p{Lu}) does not match U+1F88 in tiktoken, does in `regex`; (?i:\p{M}) matches
# 'ι' in tiktoken, not in `regex`. Those atoms are therefore not drawn inside (?i:...) here;
# tests/test_compile_runtime.py::test_case_insensitive_properties_follow_tiktoken checks them against
# tiktoken on every code point instead.
CASE_DIVERGENT_ATOMS = (r"\p{L}", r"\p{Lu}", r"\p{M}")
ATOMS_CASELESS = [a for a in ATOMS if a not in CASE_DIVERGENT_ATOMS]
# the same holds in a lookahead: (?i:(?=\p{L}))\p{M} matches U+0345 in tiktoken, not in `regex`
LOOKS = [r"(?=\s)", r"(?!\S)", r"(?!a)", r"(?=\p{L})", "$"]
LOOKS_CASELESS = [a for a in LOOKS if not any(p in a for p in CASE_DIVERGENT_ATOMS)]


@st.composite
def patterns(draw, depth=0, caseless=False):
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.integers(0, 9 if depth < 2 else 6))
        if kind <= 5:
            atom = draw(st.sampled_from(ATOMS_CASELESS if caseless else ATOMS))
            q = draw(st.sampled_from(QUANTS))
            parts.append(atom + q)
        elif kind == 6:
            parts.append(draw(st.sampled_from(LOOKS_CASELESS if caseless else LOOKS)))
        elif kind == 7:
            inner = draw(patterns(depth + 1, caseless))
            q = draw(st.sampled_from(["", "?", "*", "+", "??", "{1,2}"]))
            parts.append(f"(?:{inner}){q}")
        elif kind == 8:
            parts.append(f"(?i:{draw(patterns(depth + 1, True))})")
        else:
            parts.append(f"(?:{draw(patterns(depth + 1, caseless))}|{draw(patterns(depth + 1, caseless))})")
    seq = "".join(parts)
    if depth == 0 and draw(st.booleans()):
        seq += "|" + draw(patterns(depth + 1, caseless))
    return seq


# ---------------------------------------------------------------------------------------------
# Loops whose body can match nothing through an assertion (compiler regression class)
# ---------------------------------------------------------------------------------------------

# An iteration that matched nothing ends the loop; when it went through a pending assertion
# (a possessive X?+ is X? then (?!X), or (?=C) (?!C) $ written inside the body), that is only
# known at the next character, so the loop's "nothing consumed" state must travel with the
# thread. Nested, lazy, greedy and possessive variants; each pattern is checked on
# NULLABLE_LOOP_TEXTS (every string of up to 4 characters over their alphabet, and longer).
NULLABLE_LOOP_ASSERTION_PATTERNS = [
    r"\S(?:\W??(?:a?+)a?)*a?",  # found by hypothesis: '1/' gave ['1/'], regex gives ['1', '/']
    r"\S(?:\W??(?:a?)a?)*a?",
    r"\S(?:\W??a?+)*a?",
    r"\S(?:\W??a?+)*?a?",
    r"\S(?:\W?a?+)*a?",
    r"\S(?:\W??a*+)*a?",
    r"\S(?:\W??a{0,2}+)*a?",
    r"\S(?:\W??(?!b)a?)*a?",
    r"\S(?:\W??(?:(?=a)|b?)a?)*a?",
    r"\S(?:\W??(?:a?$|b?))*a?",
    r"\S(?:\W??(?:b|a?+))*?$",
    r"\S(?:\W??(?:a??(?!b))*a?)*a?",
    r"\S(?:(?:\W??a?+)*?b?)*a",
    r"\S(?:(?:\W??a?+)*(?!1))*",
    r"\S(?:(?:\W??(?=a))?a?)*",
    r"x(?:\s??(?!\S)a?)*",
    r"\S(?:[/ ]??(?!a)b?)+?1?",
    r"(?:a?+b??)+b",
    r"(?:\W??a?+)*\S",
    r"(?:(?!a)\W??b?)*\S",
    r"(?:\W??(?=\S)b?)*\S",
    r"(?:a??(?!b)|\W)+?\S",
    r"(?:\s??(?:a?+|b??)(?!x)|/)*?[ab1]",
    r"\S(?:\W??(?:(?:a?+)*?b?)*)*1?",
    r"\S(?:\W??a?+)+a?",
    r"\S(?:\W??a?+)+?a?",
    r"\S(?:\W??(?!b)a?){2,}a?",
    r"\S(?:(?:\W??a?+){0,2}b?)*a",
    r"(?:\W??(?=\S)b?){1,3}\S",
]


def _all_strings(alphabet: str, max_len: int) -> list[str]:
    out = [""]
    for _ in range(max_len):
        out += [s + ch for s in out if len(s) == max(map(len, out)) for ch in alphabet]
    return out


NULLABLE_LOOP_TEXTS = _all_strings("ab1/ x", 4) + [
    "1/a", "x//", "a/a/", "aa//a", "a/ab/b1 /xa a", "ba//ab  x/1a", "1/a/b/ab/aab//bba x", "//aa//bb//11"]


def isolated(sc, text: str) -> list[tuple[str, tuple[int, int]]]:
    """A scanner's matches plus the gaps between them, as HuggingFace's
    ``Split(..., "isolated")`` gives them."""
    out, last = [], 0
    for a, b in sc.spans(text):
        if a > last:
            out.append((text[last:a], (last, a)))
        out.append((text[a:b], (a, b)))
        last = b
    if last < len(text):
        out.append((text[last:], (last, len(text))))
    return out
