"""tiktoken 0.14.0's two algorithms that look at the *last* regex piece of a text:
``_encode_bytes`` (bytes that may not be UTF-8) and ``encode_with_unstable`` (the tokens that
cannot change when text is appended, and every completion of the rest).

Both follow tiktoken's Rust code (``CoreBPE::encode``'s ``last_piece_token_len``,
``_increase_last_piece_token_len``, ``_encode_unstable_native`` and ``py.rs``'s
``_encode_bytes``) step for step, including its quick fixes, because the product is the same
ids, not better ones. Where tiktoken calls ``byte_pair_encode`` (a merge *without* first
looking the whole piece up) this module does the same merge in Python (``byte_pair_encode``
below): a piece that is itself a token can merge into something else.
"""
from __future__ import annotations

import bisect
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..encoding import Encoding

__all__ = ["encode_bytes", "encode_with_unstable", "byte_pair_encode"]

_SPACE_BYTES = frozenset(b" \n\t")
# Rust's char::is_whitespace: the Unicode White_Space property (unchanged since Unicode 6.3)
_WHITE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000"
)


def byte_pair_encode(piece: bytes, ranks: dict[bytes, int]) -> list[int]:
    """tiktoken's ``byte_pair_encode``: the leftmost lowest-ranked pair merges first, and the
    piece itself is not looked up first. KeyError for a byte without a token (tiktoken
    panics)."""
    n = len(piece)
    if n == 1:
        return [ranks[piece]]
    big = 1 << 32
    bounds = list(range(n + 1))  # token i is piece[bounds[i]:bounds[i + 1]]
    pair = [ranks.get(piece[i : i + 2], big) for i in range(n - 1)]
    while pair:
        best = min(pair)
        if best == big:
            break
        i = pair.index(best)
        del bounds[i + 1]
        del pair[i]
        if i < len(pair):
            pair[i] = ranks.get(piece[bounds[i] : bounds[i + 2]], big)
        if i > 0:
            pair[i - 1] = ranks.get(piece[bounds[i - 1] : bounds[i + 1]], big)
    return [ranks[piece[a:b]] for a, b in zip(bounds, bounds[1:])]


def _ordinary_with_last_piece(enc: "Encoding", data: bytes) -> tuple[list[int], int]:
    """encode_ordinary of UTF-8 ``data`` and how many of its tokens the last regex piece
    gave (0 when there is no piece)."""
    if not data:
        return [], 0
    tokens = enc._ids_list(data)
    spans = enc._scanner.byte_spans(data)
    if not spans:
        return tokens, 0
    start, end = spans[-1]
    return tokens, len(enc._encode_single_piece(data[start:end]))


def _mergeable_bytes(enc: "Encoding", token: int) -> bytes | None:
    """The bytes of a mergeable token (tiktoken's ``decoder``), None for a special token."""
    try:
        b = enc.decode_single_token_bytes(token)
    except KeyError:
        return None
    if token in enc._special_token_values and _lookup(enc, b) != token:
        return None
    return b


def _lookup(enc: "Encoding", b: bytes) -> int:
    from .._native import lib

    return lib.bpe_lookup(enc._t, b, len(b)) if b else -1


def _increase_last_piece_token_len(enc: "Encoding", tokens: list[int], n: int) -> int:
    """tiktoken's fix for unstable regex splits: a last piece made of spaces, newlines and
    tabs takes in the all-space tokens before it."""

    def all_space(token: int) -> bool:
        b = _mergeable_bytes(enc, token)
        return b is not None and all(c in _SPACE_BYTES for c in b)

    if n > 0 and all_space(tokens[len(tokens) - n]):
        while n < len(tokens) and all_space(tokens[len(tokens) - n - 1]):
            n += 1
    return n


def encode_bytes(enc: "Encoding", data: bytes) -> list[int]:
    """tiktoken's ``Encoding._encode_bytes``: valid UTF-8 is encoded as text; otherwise the
    valid prefix is encoded as text, and the tokens of its last piece (widened by
    ``_increase_last_piece_token_len``) are re-encoded together with the rest of the bytes as
    one byte string."""
    if not isinstance(data, bytes):  # tiktoken (pyo3) takes bytes only, with this message
        what = "'None'" if data is None else f"'{type(data).__name__}' object"
        raise TypeError(f"{what} is not an instance of 'bytes'")
    data = bytes(data)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        valid = e.start  # Rust's Utf8Error::valid_up_to
    else:
        return enc._ids_list(data)
    tokens, n = _ordinary_with_last_piece(enc, data[:valid])
    n = _increase_last_piece_token_len(enc, tokens, n)
    if tokens and n > 0:
        tail = enc.decode_bytes(tokens[len(tokens) - n :]) + data[valid:]
        del tokens[len(tokens) - n :]
    else:
        tail = data[valid:]
    if tail:
        tokens.extend(enc._encode_single_piece(tail))
    return tokens


class _Views:
    """The mergeable tokens sorted by bytes (tiktoken's sorted_token_bytes), with each one's
    rank and whether it is valid UTF-8, and rank -> byte length; made once per encoding."""

    __slots__ = ("tokens", "ranks", "valid", "length")

    def __init__(self, mergeable_ranks: dict[bytes, int]):
        self.tokens = sorted(mergeable_ranks)
        self.ranks = [mergeable_ranks[b] for b in self.tokens]
        self.valid = bytearray(_is_utf8(b) for b in self.tokens)
        self.length = {r: len(b) for b, r in mergeable_ranks.items()}

    def starting_with(self, prefix: bytes) -> range:
        """The indices of the tokens that start with prefix."""
        tokens = self.tokens
        lo = bisect.bisect_left(tokens, prefix)
        hi = lo
        while hi < len(tokens) and tokens[hi].startswith(prefix):
            hi += 1
        return range(lo, hi)


def _is_utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _views(enc: "Encoding") -> _Views:
    views = enc.__dict__.get("_unstable_views")
    if views is None:
        views = enc.__dict__["_unstable_views"] = _Views(enc._mergeable_ranks)
    return views


def _encode_utf8_many(enc: "Encoding", datas: list[bytes]) -> tuple[list[int], list[int]]:
    """encode_ordinary of each of datas (valid UTF-8) in one C call over one buffer: all the
    ids, and where each data's ids end in them."""
    from .._native import ffi, lib

    from ..encoding import _check_rc, _unpack

    n = len(datas)
    blob = b"".join(datas)
    keep = ffi.from_buffer("uint8_t[]", blob)
    base = int(ffi.cast("uintptr_t", keep))
    lens = [len(d) for d in datas]
    starts = [0] * n
    off = 0
    for i, k in enumerate(lens):
        starts[i] = base + off
        off += k
    addrs = ffi.new("uintptr_t[]", starts)  # owns the pointer array: alive until the call returns
    c_lens = ffi.new("size_t[]", lens)
    ends = ffi.new("size_t[]", n)
    buf = ffi.new("bpe_buf *")
    try:
        rc = lib.bpe_encode_many(enc._t, enc._dfa, ffi.cast("const uint8_t *const *", addrs), c_lens, n, 0, buf,
                                 ends, ffi.new("size_t *"))
        _check_rc(rc)
        return _unpack(buf), ffi.unpack(ends, n)
    finally:
        lib.bpe_buf_free(buf)
        del keep, addrs, c_lens


def encode_with_unstable(enc: "Encoding", text: str, allowed_special) -> tuple[list[int], list[list[int]]]:
    """tiktoken's ``CoreBPE._encode_unstable_native`` (the special-token check is done by the
    caller). Completions come in a fixed order, the order found (tiktoken returns them in
    hash-set order, which changes from run to run)."""
    text.encode("utf-8")  # tiktoken (pyo3) refuses lone surrogates here: UnicodeEncodeError
    tokens: list[int] = []
    n = 0
    for seg, special in enc._segments(text, allowed_special):
        if seg:
            ids, n = _ordinary_with_last_piece(enc, seg.encode("utf-8"))
            tokens.extend(ids)
        if special is not None:
            tokens.append(special)
            n = 0
    if n == 0:
        return tokens, []
    n = _increase_last_piece_token_len(enc, tokens, n)
    unstable = enc.decode_bytes(tokens[len(tokens) - n :])
    del tokens[len(tokens) - n :]
    if not unstable:
        return tokens, []

    views = _views(enc)
    vtokens, vranks, vvalid, length = views.tokens, views.ranks, views.valid, views.length
    # an insertion-ordered set: the same input gives the same order every time
    completions: dict[tuple[int, ...], None] = dict.fromkeys((vranks[j],) for j in views.starting_with(unstable))

    # every other position of the token that straddles the end: retokenise prefix + token
    # (regex split and all when that is UTF-8, a plain merge otherwise)
    utf8: list[bytes] = []
    other: list[bytes] = []
    for i in range(1, len(unstable)):
        prefix, suffix = unstable[:i], unstable[i:]
        on_boundary = (unstable[i] & 0xC0) != 0x80  # prefix is whole characters (unstable is UTF-8)
        for j in views.starting_with(suffix):
            possibility = prefix + vtokens[j]
            if vvalid[j] if on_boundary else _is_utf8(possibility):
                utf8.append(possibility)
            else:
                other.append(possibility)
    want = len(unstable)
    add = completions.setdefault
    if utf8:
        ids, ends = _encode_utf8_many(enc, utf8)
        start = 0
        for end in ends:
            # the tokens up to the first that reaches the end of unstable
            seq_len = length[ids[start]]
            k = start + 1
            while seq_len < want and k < end:
                seq_len += length[ids[k]]
                k += 1
            add(tuple(ids[start:k]))
            start = end
    ranks = enc._mergeable_ranks
    for possibility in other:
        seq = []
        seq_len = 0
        for token in byte_pair_encode(possibility, ranks):
            seq.append(token)
            seq_len += length[token]
            if seq_len >= want:
                break
        add(tuple(seq))

    # a whitespace character at the end may split off from what precedes it
    if len(unstable) > 1:
        last = _last_char(unstable)
        if last is not None and len(unstable) - len(last) > 0 and last.decode("utf-8") in _WHITE_SPACE:
            head = unstable[: len(unstable) - len(last)]
            add(tuple(byte_pair_encode(head, ranks) + byte_pair_encode(last, ranks)))

    return tokens, [list(c) for c in completions]


def _last_char(data: bytes) -> bytes | None:
    """The UTF-8 bytes of the last character of data (None if data does not end with one)."""
    for size in range(1, min(4, len(data)) + 1):
        tail = data[len(data) - size :]
        try:
            tail.decode("utf-8")
        except UnicodeDecodeError:
            continue
        return tail
    return None
