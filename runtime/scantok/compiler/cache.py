"""The disk cache of compiled table images (``scantok.compile``).

One file per (pattern, flavor, Unicode version, generator version, compiler sources) under
``$SCANTOK_CACHE_DIR/compiled/`` (default ``~/.cache/scantok``), written atomically. Each file
carries the SHA-256 of its payload and the key it was built for; a file that is truncated,
altered or built for another key is ignored (and replaced by the rebuilt one), never used.
"""
from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path

from . import GENERATOR_VERSION
from .image import MAGIC as IMAGE_MAGIC

FILE_MAGIC = b"scantok-compiled-1\n"


@functools.lru_cache(maxsize=1)
def compiler_digest() -> str:
    """SHA-256 of the compiler's sources: tables built by other code are never reused."""
    h = hashlib.sha256()
    for path in sorted(Path(__file__).resolve().parent.glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def key_fields(pattern: str, flavor: str, unicode_version: str) -> dict:
    return {"pattern": pattern, "flavor": flavor, "unicode": unicode_version,
            "generator": GENERATOR_VERSION, "compiler": compiler_digest(),
            "image": IMAGE_MAGIC.decode().strip()}


def _path(key: dict) -> Path:
    from ..vocab import scantok_cache_dir

    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()
    return scantok_cache_dir() / "compiled" / f"{digest}.dfa"


def entry_path(pattern: str, flavor: str, unicode_version: str) -> Path:
    return _path(key_fields(pattern, flavor, unicode_version))


def load(pattern: str, flavor: str, unicode_version: str) -> bytes | None:
    """The cached image, or None if there is none or it cannot be trusted."""
    key = key_fields(pattern, flavor, unicode_version)
    try:
        data = _path(key).read_bytes()
    except OSError:
        return None
    if not data.startswith(FILE_MAGIC):
        return None
    digest, sep, payload = data[len(FILE_MAGIC):].partition(b"\n")
    if not sep or hashlib.sha256(payload).hexdigest().encode() != digest:
        return None
    head, sep, image = payload.partition(b"\n")
    try:
        if not sep or json.loads(head) != key:
            return None
    except ValueError:
        return None
    return image


def store(pattern: str, flavor: str, unicode_version: str, image: bytes) -> None:
    from ..vocab import _atomic_write

    key = key_fields(pattern, flavor, unicode_version)
    payload = json.dumps(key, sort_keys=True).encode() + b"\n" + image
    try:
        _atomic_write(_path(key), FILE_MAGIC + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload)
    except OSError:
        pass  # a read-only cache only costs compile time
