"""Compiled pre-tokenizer scanners: split text exactly as ``regex.findall(pattern, text)``.

>>> import scantok
>>> scantok.scanner("o200k_base").split("a   b")
['a', '  ', ' b']
"""
from __future__ import annotations

import os
from typing import Union

from ._native import ffi, lib
from ._pylist import str_utf8 as _str_utf8
from ._pylist import utf8_bytes as _utf8_bytes

__all__ = ["Scanner", "scanner", "scanners", "simd_impl", "simd_impls"]

_SURROGATEPASS = lib.SCANTOK_SURROGATEPASS
# The scanner writes every entry it reports, so its output buffers need no zero-filling.
_new_uninit = ffi.new_allocator(should_clear_after_alloc=False)
BytesLike = Union[bytes, bytearray, memoryview]


def _apply_forced_impl() -> None:
    forced = os.environ.get("SCANTOK_FORCE_IMPL")
    if forced:
        status = lib.scantok_force_impl(forced.encode("ascii", "replace"))
        if status == -1:
            raise ImportError(f"SCANTOK_FORCE_IMPL={forced!r} is not a scanner implementation; "
                              f"choose one of {simd_impls()}")
        if status == -2:
            raise ImportError(f"SCANTOK_FORCE_IMPL={forced!r}: this CPU does not support it")


def simd_impls() -> list[str]:
    """The scanner implementations compiled in, in priority order (e.g. ``['avx2', 'sse2', 'scalar']``)."""
    return ffi.string(lib.scantok_impl_list()).decode().split(",")


def simd_impl() -> str:
    """The implementation in use: the widest the CPU supports, or ``SCANTOK_FORCE_IMPL``."""
    return ffi.string(lib.scantok_impl_name()).decode()


def _utf8(text: str) -> tuple[bytes, int]:
    """UTF-8 of `text`; a lone surrogate stays one character (class Cs), as `regex` sees it."""
    try:
        return _utf8_bytes(text), 0  # str.encode(text, "utf-8"), SIMD (see cpyext/ucs_utf8.c)
    except UnicodeEncodeError:
        return str.encode(text, "utf-8", "surrogatepass"), _SURROGATEPASS  # the characters, as above


_IN_PLACE_MIN = 1 << 14  # below this a copy costs less than reading the str in place


class _Utf8InPlace:
    """The UTF-8 of a long str, read where CPython keeps it: an ASCII str stores its
    characters as bytes, which are its UTF-8, so encoding and counting need no copy (the
    copy cost as much as the scan, and as much memory as the text); for another str CPython
    makes its UTF-8 once and keeps it in the str (UnicodeEncodeError for lone surrogates)."""

    __slots__ = ("ptr", "n", "text")

    def __init__(self, text: str):
        addr, self.n = _str_utf8(text)
        self.ptr = ffi.cast("const uint8_t *", addr)
        self.text = text  # keeps the memory alive

    def __len__(self) -> int:
        return self.n


class Scanner:
    """A pattern compiled to a DFA at build time. Obtain one with :func:`scanner`.

    Pieces are exactly those of ``regex.findall(pattern, text)`` (with ``$`` meaning end of
    text). In ``bytes`` input, each byte that is not part of valid UTF-8 is a character of
    its own with general category Cs, exactly as if decoded with ``errors="surrogateescape"``.
    """

    __slots__ = ("name", "pattern", "unicode_version", "_dfa")

    def __init__(self, name: str):
        if not isinstance(name, str):
            raise TypeError(f"scanner name must be str, not {type(name).__name__}")
        dfa = lib.scantok_scanner_find(name.encode("utf-8"))
        if dfa == ffi.NULL:
            raise ValueError(f"unknown scanner {name!r}; compiled scanners: {', '.join(scanners())}")
        self._dfa = dfa
        self.name = name
        self.pattern = ffi.string(lib.scantok_scanner_pattern(dfa)).decode("utf-8")
        #: the Unicode version its character classes follow (16.0.0 unless its spec says otherwise)
        self.unicode_version = ffi.string(lib.scantok_scanner_unicode(dfa)).decode()

    def __repr__(self) -> str:
        return f"<scantok.Scanner {self.name!r}>"

    def __reduce__(self):
        return (Scanner, (self.name,))

    # -- the C call
    def _scan(self, data, flags: int, want_starts: bool, want_ends: bool):
        n = len(data)
        if n >= 1 << 32 and (want_starts or want_ends):
            raise ValueError("input of 4 GiB or more: split it first (offsets are 32-bit)")
        starts = _new_uninit("uint32_t[]", n) if want_starts and n else ffi.NULL
        ends = _new_uninit("uint32_t[]", n) if want_ends and n else ffi.NULL
        k = lib.scantok_scan(self._dfa, ffi.from_buffer(data), n, flags, starts, ends, ffi.NULL)
        return k, starts, ends

    @staticmethod
    def _encode(text) -> tuple[bytes, int]:
        if isinstance(text, str):
            return _utf8(text)
        if isinstance(text, (bytes, bytearray, memoryview)):
            return text, 0
        raise TypeError(f"expected str or bytes, not {type(text).__name__}")

    # -- public API
    def count(self, text: Union[str, BytesLike]) -> int:
        """Number of pieces, without building them.

        >>> scanner("cl100k_base").count("Hello, world!")
        4
        """
        if type(text) is str and len(text) >= _IN_PLACE_MIN and text.isascii():
            view = _Utf8InPlace(text)
            return lib.scantok_scan(self._dfa, view.ptr, view.n, 0, ffi.NULL, ffi.NULL, ffi.NULL)
        data, flags = self._encode(text)
        return lib.scantok_scan(self._dfa, ffi.from_buffer(data), len(data), flags, ffi.NULL, ffi.NULL, ffi.NULL)

    def offsets(self, text: Union[str, BytesLike]):
        """The pieces' end offsets in the UTF-8 encoding, as a numpy ``uint32`` array.

        >>> scanner("o200k_base").offsets("a   b").tolist()
        [1, 3, 5]
        """
        import numpy as np

        data, flags = self._encode(text)
        n = len(data)
        if n >= 1 << 32:
            raise ValueError("input of 4 GiB or more: split it first (offsets are 32-bit)")
        out = np.empty(n, dtype=np.uint32)
        k = lib.scantok_scan(self._dfa, ffi.from_buffer(data), n, flags, ffi.NULL,
                             ffi.cast("uint32_t *", out.ctypes.data) if n else ffi.NULL, ffi.NULL)
        return out[:k].copy()

    def byte_spans(self, data: Union[str, BytesLike]) -> list[tuple[int, int]]:
        """Pieces as ``(start, end)`` offsets into the UTF-8 bytes."""
        data, flags = self._encode(data)
        k, starts, ends = self._scan(data, flags, True, True)
        return list(zip(ffi.unpack(starts, k), ffi.unpack(ends, k))) if k else []

    def _char_bounds(self, text: str) -> tuple[list[int], list[int]]:
        """Piece starts and ends as indices into `text`."""
        if not isinstance(text, str):
            raise TypeError(f"expected str, not {type(text).__name__}; use the *_bytes methods for bytes")
        data, flags = _utf8(text)
        k, starts, ends = self._scan(data, flags, True, True)
        if not k:
            return [], []
        if len(data) != len(text):
            lib.scantok_utf8_to_char_offsets(ffi.from_buffer(data), len(data), starts, k)
            lib.scantok_utf8_to_char_offsets(ffi.from_buffer(data), len(data), ends, k)
        return ffi.unpack(starts, k), ffi.unpack(ends, k)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Pieces as ``(start, end)`` indices into `text`.

        >>> scanner("whitespace").spans("Hi there!")
        [(0, 2), (3, 8), (8, 9)]
        """
        return list(zip(*self._char_bounds(text)))

    def split(self, text: str) -> list[str]:
        """The pieces of `text`, like ``regex.findall``.

        >>> scanner("cl100k_base").split("I'm here\\n\\n")
        ['I', "'m", ' here', '\\n\\n']
        """
        starts, ends = self._char_bounds(text)
        return [text[a:b] for a, b in zip(starts, ends)]

    def split_bytes(self, data: BytesLike) -> list[bytes]:
        """The pieces of UTF-8 `data` (invalid bytes are characters of class Cs).

        >>> scanner("r50k_base").split_bytes(b"caf\\xc3\\xa9 \\xff!")
        [b'caf\\xc3\\xa9', b' \\xff!']
        """
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"split_bytes() takes bytes, not {type(data).__name__}")
        data = bytes(data)
        k, starts, ends = self._scan(data, 0, True, True)
        return [data[a:b] for a, b in zip(ffi.unpack(starts, k), ffi.unpack(ends, k))] if k else []


_cache: dict[str, Scanner] = {}


def scanner(name: str) -> Scanner:
    """The compiled scanner called `name` (see :func:`scanners`).

    >>> scanner("o200k_base")
    <scantok.Scanner 'o200k_base'>
    """
    s = _cache.get(name) if isinstance(name, str) else None
    if s is None:
        s = _cache[name] = Scanner(name)
    return s


def scanners() -> list[str]:
    """Names of the compiled scanners.

    >>> "o200k_base" in scanners()
    True
    """
    return [ffi.string(lib.scantok_scanner_name(lib.scantok_scanner_at(i))).decode()
            for i in range(lib.scantok_scanner_count())]


_apply_forced_impl()
