"""Access to ``scantok._native`` for the HF front-ends (optional: every path has a pure-Python
equivalent), and the compiled-scanner span helper."""
from __future__ import annotations

from typing import Any

_NATIVE: Any = None


def _native():
    global _NATIVE
    if _NATIVE is None:
        try:
            import numpy  # noqa: F401  (the C paths exchange numpy buffers)
            from scantok._native import ffi, lib  # type: ignore

            needed = ("vt_new", "vt_encode", "vt_encode_wsplit", "vt_encode_batch", "vt_counter_new",
                      "scantok_scan", "scantok_scanner_find")
            if not all(hasattr(lib, f) for f in needed):
                raise ImportError  # an older build: use the pure-Python paths
            _NATIVE = (ffi, lib)
        except ImportError:
            _NATIVE = False
    return _NATIVE or None


def _scanner_dfa(name: str):
    nat = _native()
    if nat is None:
        return None
    ffi, lib = nat
    dfa = lib.scantok_scanner_find(name.encode())
    return None if dfa == ffi.NULL else dfa


def _native_spans(dfa, text: str) -> list[tuple[int, int]]:
    if len(text) <= 512 and text.isascii():  # a prompt: cffi arrays cost less than numpy's
        ffi, lib = _native()
        data = text.encode("ascii")
        n = len(data)
        if n == 0:
            return []
        starts, ends = ffi.new("uint32_t[]", n), ffi.new("uint32_t[]", n)
        k = lib.scantok_scan(dfa, data, n, lib.SCANTOK_SURROGATEPASS, starts, ends, ffi.NULL)
        return list(zip(ffi.unpack(starts, k), ffi.unpack(ends, k)))
    starts, ends = _native_span_arrays(dfa, text)
    return list(zip(starts.tolist(), ends.tolist()))


def _native_span_arrays(dfa, text: str):
    """The scanner's matches in text as two numpy arrays of str offsets (starts, ends)."""
    import numpy as np

    ffi, lib = _native()
    data = text.encode("utf-8", "surrogatepass")
    n = len(data)
    if n == 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    starts = np.empty(n, dtype=np.uint32)
    ends = np.empty(n, dtype=np.uint32)
    k = lib.scantok_scan(dfa, data, n, lib.SCANTOK_SURROGATEPASS,
                         ffi.cast("uint32_t *", starts.ctypes.data),
                         ffi.cast("uint32_t *", ends.ctypes.data), ffi.NULL)
    starts, ends = starts[:k], ends[:k]
    if len(data) != len(text):  # byte -> str offsets
        lead = (np.frombuffer(data, dtype=np.uint8) & 0xC0) != 0x80
        cum = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(lead, out=cum[1:])
        return cum[starts], cum[ends]
    return starts.astype(np.int64), ends.astype(np.int64)
