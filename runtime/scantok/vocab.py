"""Rank files (tiktoken's ``.tiktoken`` format) and scantok's compact binary cache of them.

Lookup order for a known rank file (``find_rank_file``):

1. an explicit path given by the caller;
2. ``$SCANTOK_VOCAB_DIR/<file name>``;
2b. the copy bundled in the package (``scantok/data/*.stkz``, see :mod:`scantok.bundled`), for
   the callers that ask for it (the registry does); its own SHA-256 is pinned and a bundled
   file that fails it is an error, never used;
3. tiktoken's cache directory (``$TIKTOKEN_CACHE_DIR``, else ``$DATA_GYM_CACHE_DIR``, else
   ``<tmp>/data-gym-cache``), where tiktoken stores files under the SHA-1 of their URL;
4. scantok's own cache (``$SCANTOK_CACHE_DIR``, else ``$XDG_CACHE_HOME/scantok``, else
   ``~/.cache/scantok``);
5. a download from the official URL (disabled with ``SCANTOK_OFFLINE=1``), checked against
   the expected SHA-256 and written atomically into scantok's cache.

Every file taken from 2-5 is checked against the expected SHA-256; a mismatch is an error,
never a silently different encoding.

The parsed table is cached as ``<scantok cache>/<sha256>.stkb`` (a header, the ranks, the
token offsets and the token bytes, little-endian), keyed by the SHA-256 of the rank file's
contents, so a new process loads it with one read and no base64 or hashing.
"""
from __future__ import annotations

import os
import struct
import sys
from pathlib import Path

__all__ = [
    "VocabError",
    "load_tiktoken_bpe",
    "parse_tiktoken_bpe",
    "dump_tiktoken_bpe",
    "find_rank_file",
    "scantok_cache_dir",
    "tiktoken_cache_dir",
    "RankTable",
]

_MAGIC = b"STKB\x01\x00\x00\x00"
_HEADER = struct.Struct("<8sIIQ")  # magic, n tokens, reserved, blob length


class VocabError(RuntimeError):
    """A rank file could not be found, read, or verified."""


# --------------------------------------------------------------------------- locations


def scantok_cache_dir() -> Path:
    d = os.environ.get("SCANTOK_CACHE_DIR")
    if d:
        return Path(d)
    x = os.environ.get("XDG_CACHE_HOME")
    return Path(x) / "scantok" if x else Path.home() / ".cache" / "scantok"


def tiktoken_cache_dir() -> Path | None:
    """tiktoken's cache directory, exactly as tiktoken.load.read_file_cached picks it
    (None when caching is disabled with an empty TIKTOKEN_CACHE_DIR)."""
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        d = os.environ["TIKTOKEN_CACHE_DIR"]
    elif "DATA_GYM_CACHE_DIR" in os.environ:
        d = os.environ["DATA_GYM_CACHE_DIR"]
    else:
        import tempfile

        d = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    return Path(d) if d else None


def _sha256(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def _atomic_write(path: Path, data: bytes) -> None:
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _download(url: str, timeout: float = 60.0) -> bytes:
    import urllib.request

    with urllib.request.urlopen(url, timeout=timeout) as r:  # noqa: S310 (fixed https URL)
        return r.read()


def find_rank_file(
    file_name: str,
    *,
    url: str | None = None,
    sha256: str | None = None,
    path: str | os.PathLike | None = None,
    bundled: bool = False,
) -> tuple[bytes, str]:
    """Returns (contents, where) of a rank file, following the lookup order above; with
    ``bundled=True`` the package's own copy (rebuilt as ``.tiktoken`` text and checked against
    ``sha256``) comes right after ``$SCANTOK_VOCAB_DIR``."""
    tried: list[str] = []

    def check(data: bytes, where: str) -> bytes:
        if sha256 is not None and _sha256(data) != sha256:
            raise VocabError(
                f"rank file {where} has SHA-256 {_sha256(data)}, expected {sha256} "
                f"(corrupt or wrong file); delete or replace it"
            )
        return data

    if path is not None:
        p = Path(path)
        try:
            return check(p.read_bytes(), str(p)), str(p)
        except FileNotFoundError:
            raise VocabError(f"rank file {p} does not exist") from None
    env = os.environ.get("SCANTOK_VOCAB_DIR")
    if env:
        p = Path(env) / file_name
        tried.append(str(p))
        if p.is_file():
            return check(p.read_bytes(), str(p)), str(p)
    if bundled:
        from .bundled import bundled_path, read_bundled

        table = read_bundled(file_name)
        if table is not None:
            where = str(bundled_path(file_name))
            return check(dump_tiktoken_bpe(table.to_dict()), where), where
    if url is not None:
        tdir = tiktoken_cache_dir()
        if tdir is not None:
            import hashlib

            p = tdir / hashlib.sha1(url.encode()).hexdigest()
            tried.append(str(p))
            if p.is_file():
                data = p.read_bytes()
                # tiktoken itself discards a cached file with the wrong hash: skip it too
                if sha256 is None or _sha256(data) == sha256:
                    return data, str(p)
    p = scantok_cache_dir() / file_name
    tried.append(str(p))
    if p.is_file():
        return check(p.read_bytes(), str(p)), str(p)
    offline = os.environ.get("SCANTOK_OFFLINE", "") not in ("", "0")
    if url is not None and not offline:
        try:
            data = _download(url)
        except Exception as e:  # network errors of every kind
            raise VocabError(
                f"rank file {file_name!r} not found (looked in: {', '.join(tried)}) and the "
                f"download from {url} failed ({e}). Put the file in a directory and set "
                f"SCANTOK_VOCAB_DIR to it."
            ) from None
        if sha256 is not None and _sha256(data) != sha256:
            raise VocabError(
                f"download of {url} has SHA-256 {_sha256(data)}, expected {sha256}; not used"
            )
        try:
            _atomic_write(p, data)
        except OSError:
            pass
        return data, url
    raise VocabError(
        f"rank file {file_name!r} not found (looked in: {', '.join(tried)})"
        + ("; downloads are disabled (SCANTOK_OFFLINE)" if offline else "")
        + ". Put the file in a directory and set SCANTOK_VOCAB_DIR to it."
    )


# --------------------------------------------------------------------------- parsing


def parse_tiktoken_bpe(contents: bytes, where: str = "<rank file>") -> dict[bytes, int]:
    """Parses the .tiktoken format (one ``base64(token) rank`` per line), like tiktoken's
    load_tiktoken_bpe but with errors that say which line is wrong."""
    import base64

    ranks: dict[bytes, int] = {}
    b64 = base64.b64decode
    for lineno, line in enumerate(contents.splitlines(), 1):
        if not line:
            continue
        try:
            token, rank = line.split()
            ranks[b64(token, validate=True)] = int(rank)
        except Exception:
            raise VocabError(f"{where}:{lineno}: not a '<base64 token> <rank>' line: {line[:80]!r}") from None
    if not ranks:
        raise VocabError(f"{where}: no tokens")
    return ranks


def dump_tiktoken_bpe(ranks: dict[bytes, int]) -> bytes:
    import base64

    return b"".join(
        base64.b64encode(tok) + b" " + str(r).encode() + b"\n"
        for tok, r in sorted(ranks.items(), key=lambda kv: kv[1])
    )


def load_tiktoken_bpe(path: str | os.PathLike, expected_hash: str | None = None) -> dict[bytes, int]:
    data, where = find_rank_file(Path(path).name, path=path, sha256=expected_hash)
    return parse_tiktoken_bpe(data, where)


# --------------------------------------------------------------------------- compact table


class RankTable:
    """Tokens in rank order as one byte blob: token i is blob[offs[i]:offs[i+1]] with rank
    ranks[i]. ``raw`` is the whole serialised table (the .stkb file); the arrays are views."""

    __slots__ = ("raw", "n", "ranks_off", "offs_off", "blob_off", "blob_len")

    def __init__(self, raw: bytes):
        if len(raw) < _HEADER.size:
            raise VocabError("truncated scantok table")
        magic, n, _res, blob_len = _HEADER.unpack_from(raw, 0)
        if magic != _MAGIC:
            raise VocabError("not a scantok table (bad magic)")
        self.raw = raw
        self.n = n
        self.ranks_off = _HEADER.size
        self.offs_off = self.ranks_off + 4 * n
        self.blob_off = self.offs_off + 4 * (n + 1)
        self.blob_len = blob_len
        if len(raw) != self.blob_off + blob_len:
            raise VocabError("truncated scantok table")

    @classmethod
    def from_arrays(cls, ranks, offs, blob) -> "RankTable":
        """From ``array('I')`` ranks (n) and token offsets (n + 1) into ``blob``."""
        n = len(ranks)
        ra, oa = ranks, offs
        if sys.byteorder != "little":
            import array

            ra, oa = array.array("I", ranks), array.array("I", offs)
            ra.byteswap()
            oa.byteswap()
        return cls(b"".join([_HEADER.pack(_MAGIC, n, 0, len(blob)), ra.tobytes(), oa.tobytes(), blob]))

    @classmethod
    def from_ranks(cls, ranks: dict[bytes, int]) -> "RankTable":
        items = sorted(ranks.items(), key=lambda kv: kv[1])
        n = len(items)
        offs = [0] * (n + 1)
        pos = 0
        for i, (tok, _r) in enumerate(items):
            offs[i] = pos
            pos += len(tok)
        offs[n] = pos
        if pos >= 2**32:
            raise VocabError("vocabulary too large")
        import array

        ra = array.array("I", (r for _t, r in items))
        oa = array.array("I", offs)
        if sys.byteorder != "little":
            ra.byteswap()
            oa.byteswap()
        raw = b"".join(
            [_HEADER.pack(_MAGIC, n, 0, pos), ra.tobytes(), oa.tobytes(), b"".join(t for t, _r in items)]
        )
        return cls(raw)

    def to_dict(self) -> dict[bytes, int]:
        raw = self.raw
        ranks = struct.unpack_from(f"<{self.n}I", raw, self.ranks_off)
        offs = struct.unpack_from(f"<{self.n + 1}I", raw, self.offs_off)
        b = self.blob_off
        return {raw[b + offs[i] : b + offs[i + 1]]: ranks[i] for i in range(self.n)}


def load_table(
    file_name: str,
    *,
    url: str | None = None,
    sha256: str | None = None,
    path: str | os.PathLike | None = None,
    bundled: bool = False,
) -> RankTable:
    """The RankTable of a rank file, through the binary cache when the expected SHA-256 is
    known (the cache is keyed by it). With ``bundled=True`` the package's copy is used when
    there is no explicit path and ``$SCANTOK_VOCAB_DIR`` does not hold the file."""
    cache = scantok_cache_dir()
    if sha256 is not None and path is None:
        cpath = cache / f"{sha256}.stkb"
        try:
            return RankTable(cpath.read_bytes())
        except (OSError, VocabError):
            pass
    if bundled and path is None:
        env = os.environ.get("SCANTOK_VOCAB_DIR")
        if not (env and (Path(env) / file_name).is_file()):
            from .bundled import read_bundled

            table = read_bundled(file_name)
            if table is not None:
                return table  # already compact: not worth a second copy in the cache
    data, where = find_rank_file(file_name, url=url, sha256=sha256, path=path)
    digest = sha256 or _sha256(data)
    cpath = cache / f"{digest}.stkb"
    if path is not None:
        try:
            return RankTable(cpath.read_bytes())
        except (OSError, VocabError):
            pass
    table = RankTable.from_ranks(parse_tiktoken_bpe(data, where))
    try:
        _atomic_write(cpath, table.raw)
    except OSError:
        pass  # a read-only cache only costs speed
    return table


# --------------------------------------------------------------------------- built-table image


def _image_path(sha256: str) -> Path:
    return scantok_cache_dir() / f"{sha256}.{sys.implementation.cache_tag}.{sys.byteorder}.stki"


def load_image(sha256: str):
    """The mmap of the built-table image for the rank file with this SHA-256, or None."""
    import mmap

    try:
        with open(_image_path(sha256), "rb") as f:
            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None


def save_image(sha256: str, data: bytes) -> None:
    try:
        _atomic_write(_image_path(sha256), data)
    except OSError:
        pass  # a read-only cache only costs speed
