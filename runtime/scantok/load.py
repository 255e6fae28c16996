"""``tiktoken.load`` for scantok: reading rank files from a path or URL with tiktoken 0.14.0's
cache and hash rules, and converting GPT-2's data-gym files.

Model code starts with ``from tiktoken.load import load_tiktoken_bpe`` (Llama 3's and Qwen's
reference tokenizers do); ``from scantok.load import load_tiktoken_bpe`` gives the same
``dict[bytes, int]``, the same errors and messages, and shares tiktoken's cache directory
(``$TIKTOKEN_CACHE_DIR``, else ``$DATA_GYM_CACHE_DIR``, else ``<tmp>/data-gym-cache``; an empty
value disables caching), where a file is stored under the SHA-1 of its path or URL.

Two differences, both so that fewer things need the network or an extra package:

* a miss in that cache for one of OpenAI's four rank-file URLs (with its pinned SHA-256, or no
  expected hash) is served from scantok's own copies (``$SCANTOK_VOCAB_DIR``, the package's
  bundled files, scantok's cache; see ``scantok.vocab``) before downloading; like a download,
  that copy is not trusted without its pinned hash;
* ``dump_tiktoken_bpe`` writes a local path itself (atomically); only other ``scheme://``
  locations need ``blobfile``, as in tiktoken.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "tiny.tiktoken")
>>> dump_tiktoken_bpe({b"a": 0, b"b": 1, b"ab": 2}, path)
>>> load_tiktoken_bpe(path)
{b'a': 0, b'b': 1, b'ab': 2}
"""
from __future__ import annotations

import base64
import hashlib
import os

__all__ = [
    "read_file",
    "check_hash",
    "read_file_cached",
    "data_gym_to_mergeable_bpe_ranks",
    "dump_tiktoken_bpe",
    "load_tiktoken_bpe",
]


def _blobfile():
    try:
        import blobfile
    except ImportError as e:
        raise ImportError(
            "blobfile is not installed. Please install it by running `pip install blobfile`."
        ) from e
    return blobfile


def _http_get(url: str) -> bytes:
    try:
        import requests
    except ImportError:
        requests = None
    if requests is not None:  # tiktoken's client, so the same exceptions
        resp = requests.get(url)
        resp.raise_for_status()
        return resp.content
    import urllib.request

    with urllib.request.urlopen(url) as r:  # noqa: S310 (the caller's URL, as in tiktoken)
        return r.read()


def read_file(blobpath: str) -> bytes:
    """The contents of a local path, an http(s) URL, or (with ``blobfile``) any other URL."""
    if "://" not in blobpath:
        with open(blobpath, "rb", buffering=0) as f:
            return f.read()
    if blobpath.startswith(("http://", "https://")):
        return _http_get(blobpath)
    return _blobfile().read_bytes(blobpath)


def check_hash(data: bytes, expected_hash: str) -> bool:
    return hashlib.sha256(data).hexdigest() == expected_hash


def _cache_dir() -> tuple[str, bool]:
    """(directory, whether the user chose it), as tiktoken picks them."""
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if var in os.environ:
            return os.environ[var], True
    import tempfile

    return os.path.join(tempfile.gettempdir(), "data-gym-cache"), False


def _known_rank_file(blobpath: str, expected_hash: str | None) -> bytes | None:
    """One of OpenAI's rank files from scantok's copies (no download), or None."""
    from .registry import RANK_FILES
    from .vocab import VocabError, find_rank_file

    for file_name, (url, sha) in RANK_FILES.items():
        if url == blobpath and expected_hash in (None, sha):
            # no url: scantok's copies only, never a download from here
            try:
                data, _where = find_rank_file(file_name, sha256=sha, bundled=True)
            except (VocabError, OSError):
                return None
            return data
    return None


def read_file_cached(blobpath: str, expected_hash: str | None = None) -> bytes:
    """read_file through tiktoken's cache: a cached copy with the wrong hash is dropped and
    read again; a fresh read with the wrong hash is a ValueError; a cache that cannot be
    written is an error only if the user chose the directory."""
    cache_dir, user_specified = _cache_dir()
    if cache_dir == "":
        return read_file(blobpath)

    cache_path = os.path.join(cache_dir, hashlib.sha1(blobpath.encode()).hexdigest())
    if os.path.exists(cache_path):
        with open(cache_path, "rb", buffering=0) as f:
            data = f.read()
        if expected_hash is None or check_hash(data, expected_hash):
            return data
        try:
            os.remove(cache_path)
        except OSError:
            pass

    contents = _known_rank_file(blobpath, expected_hash)
    if contents is not None:
        return contents
    contents = read_file(blobpath)
    if expected_hash and not check_hash(contents, expected_hash):
        raise ValueError(
            f"Hash mismatch for data downloaded from {blobpath} (expected {expected_hash}). "
            f"This may indicate a corrupted download. Please try again."
        )

    import uuid

    try:
        os.makedirs(cache_dir, exist_ok=True)
        tmp = f"{cache_path}.{uuid.uuid4()}.tmp"
        with open(tmp, "wb") as f:
            f.write(contents)
        os.rename(tmp, cache_path)
    except OSError:
        if user_specified:
            raise
    return contents


def _data_gym_alphabet() -> dict[str, int]:
    """GPT-2's printable stand-ins for bytes: printable Latin-1 bytes other than space stand
    for themselves, the other 68 bytes for chr(256), chr(257), ... in byte order."""
    printable = [b for b in range(256) if chr(b).isprintable() and chr(b) != " "]
    table = {chr(b): b for b in printable}
    others = [b for b in range(256) if b not in table.values()]
    table.update({chr(256 + i): b for i, b in enumerate(others)})
    return table


def data_gym_to_mergeable_bpe_ranks(
    vocab_bpe_file: str,
    encoder_json_file: str,
    vocab_bpe_hash: str | None = None,
    encoder_json_hash: str | None = None,
    clobber_one_byte_tokens: bool = False,
) -> dict[bytes, int]:
    """Ranks from GPT-2's ``vocab.bpe`` (merges) and ``encoder.json`` (ids), which must agree
    (AssertionError otherwise, as in tiktoken)."""
    import json

    alphabet = _data_gym_alphabet()
    # single bytes first, in the order of their stand-ins: printable ones, then the others
    byte_order = [alphabet[c] for c in sorted(alphabet, key=ord)]
    ranks = {bytes([b]): i for i, b in enumerate(byte_order)}

    def to_bytes(s: str) -> bytes:
        return bytes(alphabet[c] for c in s)

    merges_text = read_file_cached(vocab_bpe_file, vocab_bpe_hash).decode()
    merges = [tuple(line.split()) for line in merges_text.split("\n")[1:-1]]
    rank = len(ranks)
    for first, second in merges:
        ranks[to_bytes(first) + to_bytes(second)] = rank  # a repeated merge keeps its last rank
        rank += 1

    encoder = json.loads(read_file_cached(encoder_json_file, encoder_json_hash))
    from_json = {to_bytes(k): v for k, v in encoder.items()}
    from_json.pop(b"<|endoftext|>", None)
    from_json.pop(b"<|startoftext|>", None)
    if clobber_one_byte_tokens:
        for k, v in from_json.items():
            if len(k) == 1:
                ranks[k] = v
    assert ranks == from_json
    return ranks


def dump_tiktoken_bpe(bpe_ranks: dict[bytes, int], tiktoken_bpe_file: str) -> None:
    """Writes ranks in the ``.tiktoken`` format (``base64(token) rank`` lines, by rank)."""
    from .vocab import dump_tiktoken_bpe as _dump

    data = _dump(bpe_ranks)
    if "://" in str(tiktoken_bpe_file):
        with _blobfile().BlobFile(tiktoken_bpe_file, "wb") as f:
            f.write(data)
        return
    from pathlib import Path

    from .vocab import _atomic_write

    _atomic_write(Path(tiktoken_bpe_file), data)


def load_tiktoken_bpe(tiktoken_bpe_file: str, expected_hash: str | None = None) -> dict[bytes, int]:
    """The ranks of a ``.tiktoken`` file (a path or URL, through ``read_file_cached``)."""
    contents = read_file_cached(tiktoken_bpe_file, expected_hash)
    ranks: dict[bytes, int] = {}
    b64 = base64.b64decode
    for line in contents.splitlines():
        if not line:
            continue
        try:
            token, rank = line.split()
            ranks[b64(token)] = int(rank)
        except Exception as e:
            raise ValueError(f"Error parsing line {line!r} in {tiktoken_bpe_file}") from e
    return ranks
