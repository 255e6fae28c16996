"""cffi build script for ``scantok._native``.

Compiles the committed generated scanners (``build/generated``) together with the
hand-written C of the runtime (``runtime/scantok/csrc``).  Each header carries the
declarations cffi needs between ``cdef:begin`` and ``cdef:end`` markers, next to the C
it declares.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

from cffi import FFI

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "build" / "generated"
CSRC = ROOT / "runtime" / "scantok" / "csrc"

_CDEF = re.compile(r"/\* cdef:begin \*/(.*?)/\* cdef:end \*/", re.S)


def _require_generated() -> None:
    if not (GENERATED / "scantok_scan.h").exists():
        sys.exit(
            "scantok: the generated scanner sources are missing from build/generated/.\n"
            "They are committed to the repository; restore them with `git checkout build/generated`\n"
            "or regenerate them with `make gen` (needs the UCD files: `make ucd` or UCD_DIR)."
        )


def _headers() -> list[Path]:
    return sorted(GENERATED.glob("*.h")) + sorted(CSRC.glob("*.h"))


def _sources() -> list[str]:
    files = sorted(GENERATED.glob("*.c")) + sorted(CSRC.glob("*.c"))
    return [str(f.relative_to(ROOT)) if f.is_relative_to(ROOT) else str(f) for f in files]


_require_generated()
ffibuilder = FFI()
ffibuilder.cdef("\n".join(m for h in _headers() for m in _CDEF.findall(h.read_text())))
ffibuilder.set_source(
    "scantok._native",
    "\n".join(f'#include "{h.name}"' for h in _headers()),
    sources=_sources(),
    include_dirs=[str(GENERATED), str(CSRC)],
    # Baseline ISA only: the SIMD paths carry their own target attributes.
    extra_compile_args=["-O3", "-std=gnu11", "-fvisibility=hidden", "-Wall", "-Wno-unused-function"],
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
