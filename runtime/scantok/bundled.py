"""The vocabularies shipped inside the package (``scantok/data/*.stkz``): their compact file
format, their pinned SHA-256, and reading them back.

A ``.stkz`` file is ``b"STKZ\\x01\\x00\\x00\\x00"`` followed by one zlib stream of, little-endian:
``u32 n_tokens``, ``u32 n_runs``, ``n_runs`` pairs ``(u32 first_rank, u32 count)`` (the ranks,
in order, as runs of consecutive integers: p50k_base skips 50256), ``u16 length`` per token,
then the token bytes concatenated in rank order. zlib rather than lzma: 10% larger, but it
decompresses o200k_base 5x faster, and the first load of a bundled vocabulary should stay cheap.

Every bundled file is pinned twice: the SHA-256 of the ``.stkz`` file itself (checked on every
read: a mismatch is a :class:`~scantok.vocab.VocabError`, the file is never used), and, for the
OpenAI vocabularies, the SHA-256 of the original ``.tiktoken`` file it reconstructs
(``registry.RANK_FILES``; checked when the bundle is written and by the tests, and whenever
:func:`scantok.vocab.find_rank_file` hands out the reconstructed text).

``python -m scantok.bundled write NAME.tiktoken ...`` rewrites bundles from rank files (the
maintainer's step; it prints the new pins to paste below).
"""
from __future__ import annotations

import struct
import sys
import zlib
from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent / "data"

_MAGIC = b"STKZ\x01\x00\x00\x00"

# rank file name -> (bundled file in data/, SHA-256 of the bundled file)
BUNDLED: dict[str, tuple[str, str]] = {
    "r50k_base.tiktoken": ("r50k_base.stkz", "fd88fa2e0615925d8cd76023b9471bf478363ad4e2ba6cf37422e4e28c845a00"),
    "p50k_base.tiktoken": ("p50k_base.stkz", "d6d50e199dcd94de2c2137773dc77661b27a8df4af285e580a22f0da1bc03f58"),
    "cl100k_base.tiktoken": ("cl100k_base.stkz", "1ded882062c22bb0c7cd439949f040994dc9a9083060a1966b709900f27fadfe"),
    "o200k_base.tiktoken": ("o200k_base.stkz", "2184336365bba53a289e7637064cd91a999c24c2fa9c9143eb6d3ea54d03abc0"),
    # scantok's own, written by `make train-code50k` (corpus/train_code50k.py)
    "code50k.tiktoken": ("code50k.stkz", "42c77d414277bc2128a6e164f7dc4bd8a15970a894c8b4726b9abb1560a0d4eb"),
}


def _error(msg: str) -> Exception:
    from .vocab import VocabError

    return VocabError(msg)


def pack(ranks: dict[bytes, int]) -> bytes:
    """The ``.stkz`` bytes of a rank table (deterministic: same table, same bytes)."""
    items = sorted(ranks.items(), key=lambda kv: kv[1])
    runs: list[list[int]] = []
    for _tok, r in items:
        if runs and runs[-1][0] + runs[-1][1] == r:
            runs[-1][1] += 1
        else:
            if runs and r <= runs[-1][0] + runs[-1][1] - 1:
                raise _error(f"rank {r} appears twice")
            runs.append([r, 1])
    for tok, r in items:
        if len(tok) > 0xFFFF:
            raise _error(f"token of rank {r} is {len(tok)} bytes long (the format allows 65535)")
    import array

    lengths = array.array("H", (len(t) for t, _r in items))
    if sys.byteorder != "little":
        lengths.byteswap()
    body = b"".join(
        [
            struct.pack("<II", len(items), len(runs)),
            b"".join(struct.pack("<II", a, c) for a, c in runs),
            lengths.tobytes(),
            b"".join(t for t, _r in items),
        ]
    )
    return _MAGIC + zlib.compress(body, 9)


def unpack_table(data: bytes, where: str):
    """The :class:`~scantok.vocab.RankTable` held by ``.stkz`` bytes (structure checked)."""
    import array
    import itertools

    from .vocab import RankTable

    if not data.startswith(_MAGIC):
        raise _error(f"{where}: not a scantok bundled vocabulary (bad magic)")
    try:
        body = zlib.decompress(data[len(_MAGIC):])
    except zlib.error as e:
        raise _error(f"{where}: corrupt ({e})") from None
    if len(body) < 8:
        raise _error(f"{where}: truncated")
    n, n_runs = struct.unpack_from("<II", body, 0)
    pos = 8 + 8 * n_runs
    if len(body) < pos + 2 * n:
        raise _error(f"{where}: truncated")
    runs = struct.unpack_from(f"<{2 * n_runs}I", body, 8)
    ranks = array.array("I")
    for i in range(n_runs):
        ranks.extend(range(runs[2 * i], runs[2 * i] + runs[2 * i + 1]))
    lengths = array.array("H", body[pos : pos + 2 * n])
    if sys.byteorder != "little":
        lengths.byteswap()
    blob_off = pos + 2 * n
    offs = array.array("I", itertools.accumulate(lengths, initial=0))
    if len(ranks) != n or offs[-1] != len(body) - blob_off:
        raise _error(f"{where}: inconsistent sizes")
    return RankTable.from_arrays(ranks, offs, memoryview(body)[blob_off:])


def bundled_path(file_name: str) -> Path | None:
    entry = BUNDLED.get(file_name)
    return DATA_DIR / entry[0] if entry else None


def read_bundled(file_name: str):
    """The RankTable bundled for ``file_name``, or None when the package bundles no such file.
    A bundled file whose SHA-256 differs from its pin raises VocabError."""
    import hashlib

    entry = BUNDLED.get(file_name)
    if entry is None:
        return None
    path = DATA_DIR / entry[0]
    try:
        data = path.read_bytes()
    except OSError as e:
        raise _error(f"bundled vocabulary {path} cannot be read ({e}); reinstall scantok") from None
    digest = hashlib.sha256(data).hexdigest()
    if digest != entry[1]:
        raise _error(
            f"bundled vocabulary {path} has SHA-256 {digest}, expected {entry[1]} "
            f"(corrupt installation); not used: reinstall scantok"
        )
    return unpack_table(data, str(path))


def _main(argv: list[str]) -> int:
    import argparse
    import hashlib

    from .vocab import parse_tiktoken_bpe

    ap = argparse.ArgumentParser(prog="python -m scantok.bundled")
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write", help="write data/NAME.stkz from rank files and print the pins")
    w.add_argument("files", nargs="+", type=Path)
    args = ap.parse_args(argv)
    from .registry import RANK_FILES
    from .vocab import dump_tiktoken_bpe

    DATA_DIR.mkdir(exist_ok=True)
    for f in args.files:
        src = f.read_bytes()
        ranks = parse_tiktoken_bpe(src, str(f))
        packed = pack(ranks)
        back = unpack_table(packed, f.name).to_dict()
        assert back == ranks, f"{f}: round trip failed"
        expected = RANK_FILES.get(f.name, (None, None))[1]
        original = hashlib.sha256(dump_tiktoken_bpe(back)).hexdigest()
        if expected is not None and original != expected:
            raise SystemExit(f"{f}: reconstructs a file with SHA-256 {original}, pinned {expected}")
        out = DATA_DIR / (f.name.removesuffix(".tiktoken") + ".stkz")
        out.write_bytes(packed)
        print(f'    "{f.name}": ("{out.name}", "{hashlib.sha256(packed).hexdigest()}"),  # {len(packed)} bytes')
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
