"""``scantok.compile``: a pattern compiled at run time, scanned by the shipped C engine.

The generator's stages build the tables (no C compiler involved), the table image goes to
the disk cache, and the C constructor checks the tables before the engine may use them. The
returned scanner has the API of the shipped ones (split, spans, split_bytes, byte_spans,
count, offsets; SCANTOK_PARTIAL streaming) and runs on the same SIMD implementations.
"""
from __future__ import annotations

import hashlib
import threading

from .._native import ffi, lib
from ..scanner import Scanner
from . import FLAVORS, cache, compile_dfa, image

__all__ = ["compile", "CompiledScanner", "DEFAULT_UNICODE", "build_image"]

# The Unicode version each flavor's reference engine classifies characters by (measured on
# every code point): tiktoken 0.14.0 and regex==2025.9.18 use 16.0.0 (DESIGN.md), and so does
# the Oniguruma inside tokenizers 0.23.3 (\p{L}, \p{N}, \p{M}, \p{P}, \p{S}, \p{C} equal
# 16.0.0's sets and miss every code point 17.0.0 added).
DEFAULT_UNICODE = {"regex": "16.0.0", "onig": "16.0.0"}


class TableError(RuntimeError):
    """The C constructor rejected a table set (a corrupt image, or a compiler bug)."""


class CompiledScanner(Scanner):
    """A scanner whose tables were compiled at run time by :func:`compile`."""

    __slots__ = ("flavor", "_keep")

    def __init__(self, pattern: str, flavor: str, unicode_version: str, img: bytes):
        t = image.unpack(img)
        keep = {
            "name": ffi.new("char[]", self._label(pattern, flavor).encode()),
            "pattern": ffi.new("char[]", pattern.encode("utf-8", "surrogatepass")),
            "ascii": ffi.new("uint8_t[]", t.ascii),
            "ascii_x": _array("uint16_t[]", t.ascii_x),
            "stage1": _array("uint16_t[]", t.stage1),
            "stage2": ffi.new("uint8_t[]", t.stage2),
            "next": _array("uint32_t[]", t.next),
            "flags": ffi.new("uint8_t[]", t.flags),
            "accel_lo": ffi.new("uint8_t[]", t.accel_lo or b"\0"),
            "accel_len": ffi.new("uint8_t[]", t.accel_len or b"\0"),
            "accel_match": ffi.new("uint8_t[]", t.accel_match or b"\0"),
            "accel_bits": _array("uint64_t[]", t.accel_bits),
        }
        spec = ffi.new("scantok_dfa_tables *")
        spec.nclasses, spec.start, spec.pair, spec.nstates, spec.naccel = (
            t.nclasses, t.start, t.pair, t.nstates, t.naccel)
        for field in ("ascii", "ascii_x", "stage1", "stage2", "next", "flags",
                      "accel_lo", "accel_len", "accel_match", "accel_bits"):
            setattr(spec, field, keep[field])
        spec.stage1_len, spec.stage2_len, spec.trans_len = len(t.stage1), len(t.stage2), len(t.flags)
        err = ffi.new("char[]", 256)
        dfa = lib.scantok_dfa_new(spec, keep["name"], keep["pattern"], err, 256)
        if dfa == ffi.NULL:
            raise TableError(f"scanner tables rejected: {ffi.string(err).decode()}")
        self._dfa = ffi.gc(dfa, lib.scantok_dfa_free)
        self._keep = keep
        self.name = ffi.string(keep["name"]).decode()
        self.pattern = pattern
        self.flavor = flavor
        self.unicode_version = unicode_version

    @staticmethod
    def _label(pattern: str, flavor: str) -> str:
        digest = hashlib.sha256(f"{flavor}\0{pattern}".encode("utf-8", "surrogatepass")).hexdigest()
        return f"compiled-{flavor}-{digest[:12]}"

    def __repr__(self) -> str:
        shown = self.pattern if len(self.pattern) <= 60 else self.pattern[:57] + "..."
        return f"<scantok.Scanner compiled {shown!r} flavor={self.flavor!r}>"

    def __reduce__(self):
        return (_rebuild, (self.pattern, self.flavor, self.unicode_version))


def _array(ctype: str, values):
    out = ffi.new(ctype, max(len(values), 1))
    if len(values):
        ffi.memmove(out, values.tobytes(), len(values) * values.itemsize)
    return out


def _rebuild(pattern: str, flavor: str, unicode_version: str) -> CompiledScanner:
    return compile(pattern, flavor=flavor, unicode_version=unicode_version)


_compiled: dict[tuple[str, str, str], CompiledScanner] = {}
_lock = threading.Lock()


def build_image(pattern: str, flavor: str, unicode_version: str) -> bytes:
    """Run the compiler: the table image of `pattern` (raises PatternError)."""
    from . import unicode as uni
    from .determinize import DFAError
    from .layout import layout
    from .parse import PatternError

    try:
        return image.pack(image.from_layout(layout(compile_dfa(pattern, uni.load(unicode_version), flavor=flavor))))
    except PatternError:
        raise
    except (DFAError, ValueError) as e:  # too many states or classes for the engine's tables
        raise PatternError(f"pattern too large for a scanner: {e}", pattern, 0) from None
    except RecursionError:  # the parser and the NFA builder recurse into groups
        raise PatternError("pattern nested too deeply", pattern, 0) from None


def compile(pattern: str, *, flavor: str = "regex", unicode_version: str | None = None) -> Scanner:
    """Compile `pattern` into a scanner at run time (no C compiler needed).

    ``flavor="regex"`` reproduces ``regex.findall`` and tiktoken (``$`` is end of text);
    ``flavor="onig"`` reproduces Oniguruma as HuggingFace tokenizers' ``Split`` runs it.
    Tables are cached on disk (``$SCANTOK_CACHE_DIR``, default ``~/.cache/scantok``) and in
    the process. A pattern outside the supported subset raises :class:`PatternError`
    naming the construct and its offset.

    >>> import scantok
    >>> llama3 = scantok.compile(r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}"
    ...                          r"| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
    >>> llama3.split("I'M here:  1234!")
    ['I', "'M", ' here', ':', ' ', ' ', '123', '4', '!']
    >>> scantok.compile(r"a(?<=b)")
    Traceback (most recent call last):
    ...
    scantok.compiler.parse.PatternError: lookbehind is not supported at offset 1 in pattern 'a(?<=b)'
    """
    if not isinstance(pattern, str):
        raise TypeError(f"pattern must be str, not {type(pattern).__name__}")
    if flavor not in FLAVORS:
        raise ValueError(f"unknown pattern flavor {flavor!r}; choose one of {', '.join(FLAVORS)}")
    version = unicode_version or DEFAULT_UNICODE[flavor]
    if not isinstance(version, str):
        raise TypeError("unicode_version must be str")
    key = (pattern, flavor, version)
    found = _compiled.get(key)
    if found is not None:
        return found
    with _lock:
        found = _compiled.get(key)
        if found is None:
            found = _compiled[key] = _load_or_build(pattern, flavor, version)
        return found


def _load_or_build(pattern: str, flavor: str, version: str) -> CompiledScanner:
    img = cache.load(pattern, flavor, version)
    if img is not None:
        try:
            return CompiledScanner(pattern, flavor, version, img)
        except (image.ImageError, TableError):
            pass  # a checksum collision or a stale format: rebuild, never trust it
    img = build_image(pattern, flavor, version)
    scanner = CompiledScanner(pattern, flavor, version, img)
    cache.store(pattern, flavor, version, img)
    return scanner
