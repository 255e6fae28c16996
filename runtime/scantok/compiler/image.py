"""The table image: a compiled pattern's engine tables as one byte string.

``scantok.compile`` builds the image from the layout (compiler/layout.py), stores it in the
disk cache as is, and builds the C scanner from it, so a freshly compiled scanner and one
loaded from the cache go through the same path (and the same C validation). Little-endian,
fixed field order:

    magic, then u32 nclasses start pair nstates naccel stage2_len trans_len
    ascii u8[128], ascii_x u16[128], stage1 u16[4352], stage2 u8[stage2_len],
    next u32[trans_len], flags u8[trans_len],
    accel_lo u8[3n], accel_len u8[3n], accel_match u8[n], accel_bits u64[2n]
"""
from __future__ import annotations

import struct
from array import array

MAGIC = b"scantok-dfa-1\n"
STAGE1_LEN = 0x110000 >> 8  # code points >> classes.BLOCK_SHIFT (checked by the tests)
_HEADER = struct.Struct("<7I")


class ImageError(ValueError):
    """A table image is truncated or malformed."""


class Tables:
    """The arrays of struct scantok_dfa (plus the accelerators as flat arrays): ascii, stage2,
    flags and accel_* are bytes; ascii_x and stage1 array('H'), next array('I'), accel_bits
    array('Q'). (Not a dataclass: loading from the cache should not import dataclasses.)"""

    __slots__ = ("nclasses", "start", "pair", "nstates", "ascii", "ascii_x", "stage1", "stage2",
                 "next", "flags", "accel_lo", "accel_len", "accel_match", "accel_bits")

    def __init__(self, **fields):
        for name in self.__slots__:
            setattr(self, name, fields.pop(name))
        if fields:
            raise TypeError(f"unknown table fields {sorted(fields)}")

    @property
    def naccel(self) -> int:
        return len(self.accel_match)


def _typed(code: str, values) -> array:
    a = array(code, values)
    if a.itemsize != {"H": 2, "I": 4, "Q": 8}[code]:  # pragma: no cover - exotic platforms
        raise ImageError(f"array type {code!r} has item size {a.itemsize}")
    return a


def from_layout(lay: dict) -> Tables:
    """The Tables of a layout() result (the same numbers gen/emit.py renders into C)."""
    table = lay["table"]
    lo, ln, match, bits = bytearray(), bytearray(), bytearray(), []
    for a in lay["accels"]:
        r_lo = [r[0] for r in a.ranges]
        r_len = [r[1] - r[0] for r in a.ranges]
        while len(r_lo) < 3:  # unused slots repeat slot 0, as the C template does
            r_lo.append(r_lo[0])
            r_len.append(r_len[0])
        lo += bytes(r_lo)
        ln += bytes(r_len)
        match.append(int(a.match))
        bits += list(a.bitmap())
    return Tables(
        nclasses=lay["nclasses"], start=lay["start"], pair=lay["pair"], nstates=lay["nstates"],
        ascii=bytes(table.ascii), ascii_x=_typed("H", lay["ascii_x"]), stage1=_typed("H", table.stage1),
        stage2=bytes(table.stage2), next=_typed("I", lay["next"]), flags=bytes(lay["flags"]),
        accel_lo=bytes(lo), accel_len=bytes(ln), accel_match=bytes(match), accel_bits=_typed("Q", bits))


def _le(a: array) -> bytes:
    if struct.pack("=H", 1) != struct.pack("<H", 1):  # pragma: no cover - big-endian hosts
        a = array(a.typecode, a)
        a.byteswap()
    return a.tobytes()


def pack(t: Tables) -> bytes:
    head = _HEADER.pack(t.nclasses, t.start, t.pair, t.nstates, t.naccel, len(t.stage2), len(t.flags))
    return b"".join([MAGIC, head, t.ascii, _le(t.ascii_x), _le(t.stage1), t.stage2, _le(t.next),
                     t.flags, t.accel_lo, t.accel_len, t.accel_match, _le(t.accel_bits)])


def unpack(data: bytes) -> Tables:
    """Tables from an image; ImageError if it is truncated or its sizes disagree (the values
    themselves are checked by the C constructor)."""
    view = memoryview(data)
    if bytes(view[:len(MAGIC)]) != MAGIC:
        raise ImageError("not a scantok table image")
    pos = len(MAGIC)
    if len(view) < pos + _HEADER.size:
        raise ImageError("table image truncated")
    nclasses, start, pair, nstates, naccel, stage2_len, trans_len = _HEADER.unpack_from(view, pos)
    pos += _HEADER.size

    def take(n: int) -> memoryview:
        nonlocal pos
        if n < 0 or pos + n > len(view):
            raise ImageError("table image truncated")
        out = view[pos:pos + n]
        pos += n
        return out

    def typed(code: str, n: int) -> array:
        a = array(code)
        a.frombytes(take(n * a.itemsize))
        if struct.pack("=H", 1) != struct.pack("<H", 1):  # pragma: no cover
            a.byteswap()
        return a

    t = Tables(nclasses=nclasses, start=start, pair=pair, nstates=nstates,
               ascii=bytes(take(128)), ascii_x=typed("H", 128), stage1=typed("H", STAGE1_LEN),
               stage2=bytes(take(stage2_len)), next=typed("I", trans_len), flags=bytes(take(trans_len)),
               accel_lo=bytes(take(3 * naccel)), accel_len=bytes(take(3 * naccel)),
               accel_match=bytes(take(naccel)), accel_bits=typed("Q", 2 * naccel))
    if pos != len(view):
        raise ImageError(f"table image has {len(view) - pos} trailing bytes")
    return t
