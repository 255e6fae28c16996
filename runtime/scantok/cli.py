"""The ``scantok`` command line: encode, decode, count and show text with a BPE encoding.

Large inputs are streamed: the input is read in chunks and each chunk is scanned with
SCANTOK_PARTIAL, so only the pieces the rest of the text cannot change are encoded; the
output is identical to encoding the whole file at once, in bounded memory.
"""
from __future__ import annotations

import argparse
import array
import os
import struct
import sys
import time
from typing import BinaryIO, Iterator

DEFAULT_ENCODING = "o200k_base"
CHUNK = 1 << 22  # 4 MiB
PROGRESS_MIN = 8 << 20  # show a progress bar for inputs over 8 MB (when stderr is a terminal)


# --------------------------------------------------------------------------- I/O helpers


def _open_in(path: str) -> tuple[BinaryIO, int | None]:
    if path == "-":
        return sys.stdin.buffer, None
    f = open(path, "rb")
    try:
        size = os.fstat(f.fileno()).st_size
    except OSError:
        size = None
    return f, size


def _open_out(path: str | None) -> BinaryIO:
    if path is None or path == "-":
        return sys.stdout.buffer
    return open(path, "wb")


class _Progress:
    def __init__(self, total: int | None, enabled: bool, label: str):
        self.total = total
        self.enabled = enabled
        self.label = label
        self.done = 0
        self.t0 = time.perf_counter()
        self.last = 0.0

    def update(self, n: int) -> None:
        self.done += n
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self.last < 0.1 and (self.total is None or self.done < self.total):
            return
        self.last = now
        rate = self.done / max(now - self.t0, 1e-9) / 1e6
        if self.total:
            frac = min(1.0, self.done / self.total)
            width = 30
            bar = "#" * int(frac * width) + "-" * (width - int(frac * width))
            msg = f"\r{self.label} [{bar}] {frac * 100:5.1f}% {self.done / 1e6:8.1f} MB {rate:7.1f} MB/s"
        else:
            msg = f"\r{self.label} {self.done / 1e6:8.1f} MB {rate:7.1f} MB/s"
        sys.stderr.write(msg)
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\n")
            sys.stderr.flush()


def _chunks(f: BinaryIO, size: int, progress: _Progress) -> Iterator[bytes]:
    while True:
        b = f.read(size)
        if not b:
            return
        progress.update(len(b))
        yield b


def _npy_header(n: int) -> bytes:
    header = "{'descr': '<u4', 'fortran_order': False, 'shape': (%d,), }" % n
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * pad + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1")


def _read_npy(data: bytes) -> array.array:
    if not data.startswith(b"\x93NUMPY"):
        raise SystemExit("scantok: input is not a .npy file")
    major = data[6]
    if major == 1:
        hlen = struct.unpack_from("<H", data, 8)[0]
        start = 10 + hlen
    else:
        hlen = struct.unpack_from("<I", data, 8)[0]
        start = 12 + hlen
    header = data[start - hlen : start].decode("latin1")
    import ast

    meta = ast.literal_eval(header)
    descr = meta["descr"]
    codes = {"<u4": "I", "<i4": "i", "<u8": "Q", "<i8": "q", "<u2": "H", "<i2": "h"}
    if descr not in codes or meta.get("fortran_order"):
        raise SystemExit(f"scantok: unsupported .npy dtype {descr!r} (want little-endian integers)")
    a = array.array(codes[descr])
    a.frombytes(data[start:])
    if sys.byteorder != "little":
        a.byteswap()
    return a


def _u32(ids) -> bytes:
    a = array.array("I", ids)
    if sys.byteorder != "little":
        a.byteswap()
    return a.tobytes()


# --------------------------------------------------------------------------- commands


def _encoding(name: str):
    import scantok

    try:
        return scantok.get_encoding(name)
    except ValueError as e:
        raise SystemExit(f"scantok: {e}") from None


def _token_stream(enc, args, label: str) -> Iterator[list[int]]:
    f, size = _open_in(args.input)
    show = args.progress == "always" or (
        args.progress == "auto" and sys.stderr.isatty() and (size is None or size >= PROGRESS_MIN)
    )
    progress = _Progress(size, show, label)
    where = [0, 0]  # the offsets of the last chunk read and of the one after it

    def chunks():
        for b in _chunks(f, args.chunk_size, progress):
            where[0], where[1] = where[1], where[1] + len(b)
            yield b

    try:
        if args.allow_special:
            # special tokens can straddle chunk boundaries: read the whole input
            data = b"".join(chunks())
            where[0] = 0
            yield enc.encode(data.decode("utf-8", args.errors), allowed_special="all")
        else:
            yield from enc.encode_ordinary_stream(chunks(), errors=args.errors)
    except UnicodeDecodeError as e:
        # (the incremental decoder holds back an incomplete character: at most 3 bytes before)
        at = max(0, where[0] + e.start) if e.start >= 0 else where[0]
        raise SystemExit(f"scantok: {args.input}: not valid UTF-8 ({e.reason}) near byte {at}; "
                         "--errors replace reads such bytes as U+FFFD") from None
    finally:
        progress.close()
        if f is not sys.stdin.buffer:
            f.close()


def cmd_encode(args) -> int:
    enc = _encoding(args.encoding)
    out = _open_out(args.output)
    try:
        if args.format == "npy":
            ids = array.array("I")
            for part in _token_stream(enc, args, "encode"):
                ids.extend(part)
            out.write(_npy_header(len(ids)))
            if sys.byteorder != "little":
                ids.byteswap()
            out.write(ids.tobytes())
        elif args.format == "bin":
            for part in _token_stream(enc, args, "encode"):
                out.write(_u32(part))
        else:
            first = True
            for part in _token_stream(enc, args, "encode"):
                if part:
                    out.write(((" " if not first else "") + " ".join(map(str, part))).encode())
                    first = False
            out.write(b"\n")
    finally:
        if out is not sys.stdout.buffer:
            out.close()
        else:
            out.flush()
    return 0


def _read_ids(args) -> list[int]:
    f, _size = _open_in(args.input)
    try:
        data = f.read()
    finally:
        if f is not sys.stdin.buffer:
            f.close()
    fmt = args.format
    if fmt == "auto":
        fmt = "npy" if data.startswith(b"\x93NUMPY") else "ids"
    if fmt == "npy":
        return list(_read_npy(data))
    if fmt == "bin":
        if len(data) % 4:
            raise SystemExit("scantok: binary input length is not a multiple of 4")
        a = array.array("I")
        a.frombytes(data)
        if sys.byteorder != "little":
            a.byteswap()
        return list(a)
    try:
        return [int(x) for x in data.replace(b",", b" ").replace(b"[", b" ").replace(b"]", b" ").split()]
    except ValueError as e:
        raise SystemExit(f"scantok: not a list of token ids: {e}") from None


def cmd_decode(args) -> int:
    enc = _encoding(args.encoding)
    ids = _read_ids(args)
    bad = next((i for i, t in enumerate(ids) if not 0 <= t < 2**32), None)
    if bad is not None:
        raise SystemExit(f"scantok: token id {ids[bad]} (the {bad + 1}th) is not in [0, 2**32)")
    try:
        data = enc.decode_bytes(ids)
    except (KeyError, OverflowError) as e:
        raise SystemExit(f"scantok: {e.args[0] if e.args else e}") from None
    out = _open_out(args.output)
    out.write(data)
    if out is sys.stdout.buffer:
        out.flush()
    else:
        out.close()
    return 0


def cmd_count(args) -> int:
    enc = _encoding(args.encoding)
    n = sum(len(part) for part in _token_stream(enc, args, "count"))
    print(n)
    return 0


_COLOURS = ["\x1b[48;5;153m", "\x1b[48;5;223m", "\x1b[48;5;194m", "\x1b[48;5;225m", "\x1b[48;5;230m"]
_RESET = "\x1b[0m"


def cmd_show(args) -> int:
    enc = _encoding(args.encoding)
    src = args.text
    if src == "-":
        text = sys.stdin.buffer.read().decode("utf-8", "replace")
    elif os.path.isfile(src):
        with open(src, "rb") as f:
            text = f.read().decode("utf-8", "replace")
    else:
        text = src
    ids = enc.encode(text, allowed_special="all") if args.allow_special else enc.encode_ordinary(text)
    colour = args.color == "always" or (args.color == "auto" and sys.stdout.isatty() and not os.environ.get("NO_COLOR"))
    out = []
    pending = b""
    for k, tid in enumerate(ids):
        b = pending + enc.decode_single_token_bytes(tid)
        # a token ending inside a UTF-8 character is shown together with the next one
        try:
            s = b.decode("utf-8")
            pending = b""
        except UnicodeDecodeError as e:
            if e.reason == "unexpected end of data" and k + 1 < len(ids):
                pending = b
                continue
            s = b.decode("utf-8", "replace")
            pending = b""
        label = s.replace("\n", "\\n\n").replace("\t", "\\t").replace("\r", "\\r")
        if args.ids:
            label += f"[{tid}]"
        out.append(f"{_COLOURS[k % len(_COLOURS)]}\x1b[30m{label}{_RESET}" if colour else label)
    sep = "" if colour else "|"
    sys.stdout.write(sep.join(out) + "\n")
    print(f"{len(ids)} tokens, {len(text)} characters, {len(text.encode('utf-8', 'replace'))} bytes ({enc.name})", file=sys.stderr)
    return 0


def cmd_list(args) -> int:
    import scantok

    for name in scantok.list_encoding_names():
        print(name)
    return 0


def cmd_shard(args) -> int:
    """scantok shard: files -> token shards (scantok.corpus), or --info on a shard directory."""
    from . import corpus

    try:
        if args.info:
            if args.files or args.output:
                raise SystemExit("scantok shard --info OUT_DIR takes no input files or -o")
            print(corpus.open(args.info).summary())
            return 0
        if not args.output or not args.files:
            raise SystemExit("scantok shard: give -o OUT_DIR and one or more input files (or --info OUT_DIR)")
        show = args.progress == "always" or (args.progress == "auto" and sys.stderr.isatty())
        enc = _encoding(args.encoding)
        report = corpus.encode_files(
            args.files, args.output, encoding=enc, field=args.field, scheduler=args.scheduler,
            num_workers=args.workers, append_eot=args.append_eot, dtype=args.dtype,
            shard_bytes=int(args.shard_mb * 2**20), partition_bytes=int(args.partition_mb * 2**20),
            errors=args.errors, progress=True if show else None, megatron=args.megatron,
            overwrite=args.overwrite)
    except corpus.CorpusError as e:
        raise SystemExit(f"scantok shard: {e}") from None
    resumed = f", {report.partitions_resumed} of {report.partitions} partitions resumed" if report.partitions_resumed else ""
    skipped = f", {report.skipped:,} documents skipped" if report.skipped else ""
    print(f"{report.out_dir}: {report.documents:,} documents, {report.tokens:,} tokens from "
          f"{report.input_bytes / 1e6:,.1f} MB in {report.seconds:.1f} s{resumed}{skipped}", file=sys.stderr)
    for ex in report.skipped_examples[:5]:
        print(f"  skipped {ex['path']}:{ex['line']}: {ex['reason']}", file=sys.stderr)
    return 0


def cmd_train(args) -> int:
    """scantok train: byte-level BPE with HF BpeTrainer's merges (scantok.train_bpe)."""
    import scantok
    from scantok.bpe import BPETrainingError

    out = args.output
    if not out.endswith((".tiktoken", ".json")):
        raise SystemExit(f"scantok: -o {out!r}: the output must end in .tiktoken (tiktoken ranks) "
                         "or .json (a HuggingFace tokenizer.json)")
    for path in args.files:  # train_bpe takes a list of str whose first is not a file as texts
        if not os.path.isfile(path):
            raise SystemExit(f"scantok train: {path}: no such file" if not os.path.exists(path)
                             else f"scantok train: {path}: not a file")
    progress = args.progress == "always" or (args.progress == "auto" and sys.stderr.isatty())
    if progress:
        try:
            import tqdm  # noqa: F401
        except ImportError:
            print("scantok: install tqdm for progress bars (pip install tqdm)", file=sys.stderr)
    try:
        bpe = scantok.train_bpe(args.files, vocab_size=args.vocab_size, pattern=args.pattern,
                                special_tokens=args.special_token, min_frequency=args.min_frequency,
                                max_token_length=args.max_token_length, num_threads=args.threads,
                                progress=progress)
    except BPETrainingError as e:
        raise SystemExit(f"scantok: {e}") from None
    if out.endswith(".json"):
        bpe.save_hf(out)
    else:
        bpe.save_tiktoken(out)
    specials = ", ".join(f"{t}={i}" for t, i in bpe.special_tokens.items())
    print(f"{out}: {bpe.n_vocab} ids, {len(bpe.merges)} merges, pattern {bpe.scanner_name}"
          + (f"; special tokens (not stored in .tiktoken): {specials}" if specials and not out.endswith(".json")
             else (f"; special tokens: {specials}" if specials else "")), file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="scantok", description="Exact tiktoken-compatible BPE tokenization.")
    sub = p.add_subparsers(dest="command", required=True)

    def common(sp, input_help: str = "input file, or - for stdin (default)"):
        sp.add_argument("-e", "--encoding", default=DEFAULT_ENCODING, help=f"encoding name (default {DEFAULT_ENCODING})")
        sp.add_argument("input", nargs="?", default="-", help=input_help)

    def streaming(sp):
        sp.add_argument("--allow-special", action="store_true", help="encode special-token text (e.g. <|endoftext|>) as special tokens (reads the whole input)")
        sp.add_argument("--progress", choices=["auto", "always", "never"], default="auto", help="progress bar on stderr (auto: terminal and input over 8 MB)")
        sp.add_argument("--chunk-size", type=int, default=CHUNK, help=argparse.SUPPRESS)
        sp.add_argument("--errors", choices=["strict", "replace"], default="strict",
                        help="input that is not UTF-8: an error (strict, the default) or U+FFFD (replace)")

    e = sub.add_parser("encode", help="text -> token ids")
    common(e)
    e.add_argument("--format", choices=["ids", "npy", "bin"], default="ids", help="ids: decimal text; npy: numpy uint32 array; bin: raw little-endian uint32")
    e.add_argument("-o", "--output", help="output file (default stdout)")
    streaming(e)
    e.set_defaults(func=cmd_encode)

    d = sub.add_parser("decode", help="token ids -> text (raw bytes)")
    common(d)
    d.add_argument("--format", choices=["auto", "ids", "npy", "bin"], default="auto")
    d.add_argument("-o", "--output", help="output file (default stdout)")
    d.set_defaults(func=cmd_decode)

    c = sub.add_parser("count", help="number of tokens")
    common(c)
    streaming(c)
    c.set_defaults(func=cmd_count)

    s = sub.add_parser("show", help="the text with token boundaries coloured")
    s.add_argument("-e", "--encoding", default=DEFAULT_ENCODING)
    s.add_argument("text", help="text, a file name, or - for stdin")
    s.add_argument("--ids", action="store_true", help="print each token's id after it")
    s.add_argument("--allow-special", action="store_true")
    s.add_argument("--color", choices=["auto", "always", "never"], default="auto")
    s.set_defaults(func=cmd_show)

    sh = sub.add_parser("shard", help="corpus files -> token shards for training (scantok.corpus)",
                        description="Encodes JSON Lines / text / Parquet files (.gz, .zst too) into token "
                                    "shards plus an index, on every local core or a Dask cluster; resumable.")
    sh.add_argument("-e", "--encoding", default=DEFAULT_ENCODING, help=f"encoding name (default {DEFAULT_ENCODING})")
    sh.add_argument("-o", "--output", metavar="OUT_DIR", help="shard directory (created; a killed run resumes)")
    sh.add_argument("files", nargs="*", metavar="FILES", help="input files, in order")
    sh.add_argument("--info", metavar="OUT_DIR", help="summarise a shard directory")
    sh.add_argument("--field", default="text", help="JSON field / Parquet column holding the text (default text)")
    sh.add_argument("--workers", type=int, default=None, help="local worker processes (default: every core)")
    sh.add_argument("--scheduler", metavar="ADDRESS", default=None, help="run on a Dask cluster (scheduler address)")
    sh.add_argument("--append-eot", action="store_true", help="append the end-of-text token to every document")
    sh.add_argument("--dtype", choices=["uint16", "uint32"], default=None, help="id type (default: uint16 when the vocabulary fits)")
    sh.add_argument("--errors", choices=["strict", "skip"], default="strict", help="bad documents: stop (strict) or skip and count them")
    sh.add_argument("--shard-mb", type=float, default=256, help="largest shard file, MiB (default 256)")
    sh.add_argument("--partition-mb", type=float, default=32, help="input per partition, MiB (default 32)")
    sh.add_argument("--megatron", action="store_true", help="also write a Megatron-LM .idx beside each shard")
    sh.add_argument("--overwrite", action="store_true", help="replace a shard directory made from other inputs or parameters")
    sh.add_argument("--progress", choices=["auto", "always", "never"], default="auto", help="progress bar on stderr (auto: when a terminal)")
    sh.set_defaults(func=cmd_shard)

    ls = sub.add_parser("list", help="list the encodings")
    ls.set_defaults(func=cmd_list)

    t = sub.add_parser("train", help="train a byte-level BPE (the merges of HF's BpeTrainer)")
    t.add_argument("files", nargs="+", help="UTF-8 text files, read line by line")
    t.add_argument("--vocab-size", type=int, required=True, help="special tokens + 256 bytes + merges")
    t.add_argument("--pattern", default="gpt2", help="pre-tokenizer: a compiled scanner's name (default gpt2)")
    t.add_argument("--special-token", action="append", default=[], metavar="T", help="a special token (repeatable; ids 0, 1, ...)")
    t.add_argument("--min-frequency", type=int, default=0)
    t.add_argument("--max-token-length", type=int, default=None)
    t.add_argument("-o", "--output", required=True, help="OUT.tiktoken (ranks) or OUT.json (HF tokenizer.json)")
    t.add_argument("--threads", type=int, default=None, help="counting threads (default: all cores)")
    t.add_argument("--progress", choices=["auto", "always", "never"], default="auto", help="progress bars on stderr (auto: when stderr is a terminal)")
    t.set_defaults(func=cmd_train)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "chunk_size", 1) < 1:
        raise SystemExit("scantok: --chunk-size must be >= 1")
    try:
        return args.func(args)
    except BrokenPipeError:
        try:
            sys.stdout = None  # type: ignore[assignment]
        except Exception:
            pass
        return 0
    except (OSError, ValueError) as e:
        # a user's error (a missing file, a directory, a bad option value, a bad vocabulary or
        # pattern: VocabError, PatternError and HFError are ValueErrors): a message, no traceback
        raise SystemExit(f"scantok: {e}") from None


if __name__ == "__main__":
    sys.exit(main())
