"""Input formats: which format a path is, opening it (gzip/zstd by extension), and the
documents of one segment of it (a byte range of a JSON Lines file, a whole text file, a
Parquet row group), each with its line (or row) number.

Formats, by extension (after a compression suffix ``.gz``/``.zst``/``.zstd``):

* ``.jsonl``, ``.ndjson``, ``.json``: JSON Lines, one object per line, the text in ``field``.
  Lines holding only whitespace are not documents (a trailing blank line is common).
* ``.parquet``, ``.pq``: Parquet, the text in column ``field`` (needs pyarrow).
* anything else: plain text, one document per file (UTF-8).

A bad document is reported through ``bad(line, reason)``, which raises or records
(``errors=`` policy); a file that cannot be opened or decompressed is always an error.
"""
from __future__ import annotations

import codecs
import io
import json
import os
from typing import BinaryIO, Callable, Iterator

import numpy as np

from .._native import ffi, lib
from ..encoding import _utf8
from .errors import CorpusError, CorpusInputError

__all__ = ["detect_format", "open_binary", "next_line_start", "count_lines_before",
           "jsonl_batches", "extract_jsonl", "parse_jsonl_line", "DocBatch", "text_document",
           "parquet_row_groups", "parquet_documents", "LargeText", "BLOCK"]

BLOCK = 1 << 22  # read size: 4 MiB
LARGE_TEXT = 1 << 26  # text files above 64 MiB are encoded as a stream, in bounded memory

_COMPRESSION = {".gz": "gzip", ".zst": "zstd", ".zstd": "zstd"}
_KINDS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl", ".parquet": "parquet", ".pq": "parquet"}

BadDocument = Callable[[int, str], None]


def detect_format(path: str) -> tuple[str, str | None]:
    """(kind, compression) of a path, from its extension.

    >>> detect_format("data/part-1.jsonl.zst"), detect_format("a.txt")
    (('jsonl', 'zstd'), ('text', None))
    """
    stem, ext = os.path.splitext(path)
    compression = _COMPRESSION.get(ext.lower())
    if compression is not None:
        ext = os.path.splitext(stem)[1]
    kind = _KINDS.get(ext.lower(), "text")
    if kind == "parquet" and compression is not None:
        raise CorpusInputError(path, None, "a compressed Parquet file: Parquet compresses internally; give the .parquet file")
    return kind, compression


def open_binary(path: str, compression: str | None) -> BinaryIO:
    """The decompressed bytes of a file, as a buffered binary stream."""
    try:
        raw = open(path, "rb")
    except OSError as e:
        raise CorpusInputError(path, None, f"cannot open: {e.strerror or e}") from None
    if compression is None:
        return raw
    if compression == "gzip":
        import gzip

        return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]
    try:
        import zstandard
    except ImportError:
        raw.close()
        raise CorpusError(f"{path}: reading .zst files needs the zstandard package (pip install zstandard)") from None
    reader = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True, closefd=True)
    return io.BufferedReader(reader, BLOCK)  # type: ignore[arg-type]


try:  # a damaged .zst stream raises this, not an OSError as gzip does
    from zstandard import ZstdError as _ZstdError
except ImportError:  # (then no .zst file is read at all)
    class _ZstdError(Exception):
        pass


def _read_error(path: str, e: BaseException) -> CorpusInputError:
    return CorpusInputError(path, None, f"cannot read ({type(e).__name__}): {e}")


# --------------------------------------------------------------------------- line boundaries


def next_line_start(path: str, pos: int, size: int) -> int:
    """The first line start at or after ``pos`` (``size`` if none): the byte after the first
    ``\\n`` at or after ``pos - 1``."""
    if pos <= 0:
        return 0
    if pos >= size:
        return size
    with open(path, "rb") as f:
        f.seek(pos - 1)
        at = pos - 1
        while True:
            block = f.read(1 << 16)
            if not block:
                return size
            i = block.find(b"\n")
            if i >= 0:
                return at + i + 1
            at += len(block)


def count_lines_before(path: str, pos: int, compression: str | None = None) -> int:
    """How many lines end before byte ``pos`` (of the decompressed stream)."""
    n = 0
    with open_binary(path, compression) as f:
        left = pos
        while left > 0:
            block = f.read(min(BLOCK, left))
            if not block:
                break
            n += block.count(b"\n")
            left -= len(block)
    return n


def _blocks(f: BinaryIO, remaining: int | None) -> Iterator[bytes]:
    """The next ``remaining`` bytes of f (all if None) in blocks of whole lines; only the
    last block may end without a newline. A line longer than a block is assembled from
    pieces, never re-copied per block."""
    pending: list[bytes] = []
    while remaining is None or remaining > 0:
        block = f.read(BLOCK if remaining is None else min(BLOCK, remaining))
        if not block:
            break
        if remaining is not None:
            remaining -= len(block)
        i = block.rfind(b"\n")
        if i < 0:
            pending.append(block)
            continue
        pending.append(block[:i + 1])
        yield b"".join(pending) if len(pending) > 1 else pending[0]
        pending = [block[i + 1:]]
    if pending and any(pending):
        yield b"".join(pending)


# --------------------------------------------------------------------------- JSON Lines

_JSON_TYPES = {dict: "an object", list: "an array", int: "a number", float: "a number", bool: "a boolean", type(None): "null"}


def _json_type(value) -> str:
    return _JSON_TYPES.get(type(value), type(value).__name__)


def parse_jsonl_line(raw: bytes, field: str) -> tuple[str | None, str | None]:
    """(text, None), (None, reason) for a bad line, or (None, None) for a blank line:
    Python's json on one line, the reference the C extractor is tested against."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return None, f"invalid UTF-8 (byte {e.start} of the line)"
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        if not text or text.isspace():
            return None, None  # a blank line is not a document
        return None, f"invalid JSON: {e.msg} (column {e.colno})"
    except RecursionError:
        return None, "invalid JSON: nested too deeply"
    if type(obj) is not dict:
        return None, f"expected a JSON object, got {_json_type(obj)}"
    if field not in obj:
        return None, f"no field {field!r}"
    value = obj[field]
    if type(value) is not str:
        return None, f"field {field!r} is {_json_type(value)}, expected a string"
    return value, None


class DocBatch:
    """Documents back to back as UTF-8 in ``data``; document i is data[ends[i-1]:ends[i]],
    from segment ``segments[i]`` at ``lines[i]``."""

    __slots__ = ("data", "ends", "lines", "nlines")

    def __init__(self, data, ends: np.ndarray, lines: np.ndarray, nlines: int):
        self.data = data
        self.ends = ends
        self.lines = lines
        self.nlines = nlines  # lines read, documents or not


def extract_jsonl(block: bytes, field: str, field_utf8: bytes | None, first_line: int,
                  bad: BadDocument) -> DocBatch:
    """The documents of a block of whole JSON Lines (lines numbered from first_line + 1):
    the C extractor, and Python's json for every line it leaves undecided."""
    n = len(block)
    cap = block.count(b"\n") + 1
    out = np.empty(n, dtype=np.uint8)  # not zero-filled: every byte read back was written
    ends = np.empty(cap, dtype=np.uintp)
    status = np.empty(cap, dtype=np.uint8)
    if field_utf8 is not None:
        k = lib.scantok_jsonl_extract(ffi.from_buffer(block), n, field_utf8, len(field_utf8), ffi.from_buffer(out),
                                      ffi.cast("size_t *", ends.ctypes.data), ffi.cast("uint8_t *", status.ctypes.data))
    else:  # a field that is not valid UTF-8: every line through Python
        k = cap - int(block.endswith(b"\n"))
        status[:k] = 2
        ends[:k] = 0
    ends, status = ends[:k].astype(np.int64), status[:k]
    lines = np.arange(first_line + 1, first_line + 1 + k, dtype=np.int64)
    if (status == 0).all():
        return DocBatch(out[:int(ends[-1]) if k else 0], ends, lines, k)
    # some lines are blank or left to Python: rebuild the batch from the pieces
    raw_lines = block.split(b"\n")
    pieces: list = []
    doc_ends: list[int] = []
    doc_lines: list[int] = []
    total = 0
    prev = 0
    view = memoryview(out)
    for i in range(k):
        st = status[i]
        end = int(ends[i])
        if st == 0:
            piece = view[prev:end]
        elif st == 1:
            prev = end
            continue
        else:
            text, reason = parse_jsonl_line(raw_lines[i], field)
            if text is None:
                if reason is not None:
                    bad(int(lines[i]), reason)
                prev = end
                continue
            piece = _utf8(text)
        pieces.append(piece)
        total += len(piece)
        doc_ends.append(total)
        doc_lines.append(int(lines[i]))
        prev = end
    return DocBatch(b"".join(pieces), np.array(doc_ends, dtype=np.int64), np.array(doc_lines, dtype=np.int64), k)


def jsonl_batches(path: str, compression: str | None, start: int, end: int | None, field: str,
                  bad: BadDocument, counter: list[int]) -> Iterator[DocBatch]:
    """The documents of bytes [start, end) of a JSON Lines file, a block at a time; lines
    are numbered from 1 at ``start``. ``counter[0]`` ends as the number of lines read."""
    try:
        field_utf8: bytes | None = field.encode("utf-8")
    except UnicodeEncodeError:
        field_utf8 = None
    f = open_binary(path, compression)
    try:
        if start:
            f.seek(start)
        line = 0
        for block in _blocks(f, None if end is None else end - start):
            batch = extract_jsonl(block, field, field_utf8, line, bad)
            line += batch.nlines
            yield batch
        counter[0] = line
    except (OSError, EOFError, ValueError, _ZstdError) as e:
        if isinstance(e, CorpusError):
            raise
        raise _read_error(path, e) from None
    finally:
        f.close()


# --------------------------------------------------------------------------- plain text


class LargeText:
    """A text document too large to hold in memory: encoded from its chunks as a stream."""

    def __init__(self, path: str, compression: str | None):
        self.path = path
        self.compression = compression

    def chunks(self) -> Iterator[bytes]:
        f = open_binary(self.path, self.compression)
        try:
            while True:
                block = f.read(BLOCK)
                if not block:
                    return
                yield block
        except (OSError, EOFError, _ZstdError) as e:
            raise _read_error(self.path, e) from None
        finally:
            f.close()

    def invalid_utf8(self) -> tuple[int, str] | None:
        """(line, reason) of the first invalid UTF-8, or None (one pass over the file)."""
        dec = codecs.getincrementaldecoder("utf-8")("strict")
        lines = 0
        for block in self.chunks():
            try:
                dec.decode(block)
            except UnicodeDecodeError as e:
                return lines + block.count(b"\n", 0, e.start) + 1, "invalid UTF-8"
            lines += block.count(b"\n")
        try:
            dec.decode(b"", final=True)
        except UnicodeDecodeError:
            return lines + 1, "invalid UTF-8 (truncated at the end of the file)"
        return None


def text_document(path: str, compression: str | None, size: int, bad: BadDocument) -> Iterator[tuple[int, "str | LargeText"]]:
    """The one document of a text file: (1, text), or (1, LargeText) for a large file."""
    if compression is None and size > LARGE_TEXT:
        doc = LargeText(path, compression)
        found = doc.invalid_utf8()
        if found is not None:
            bad(*found)
            return
        yield 1, doc
        return
    f = open_binary(path, compression)
    try:
        data = f.read()
    except (OSError, EOFError, _ZstdError) as e:
        raise _read_error(path, e) from None
    finally:
        f.close()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        bad(data.count(b"\n", 0, e.start) + 1, "invalid UTF-8")
        return
    yield 1, text


# --------------------------------------------------------------------------- Parquet


def _pyarrow_parquet(path: str):
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise CorpusError(f"{path}: reading Parquet needs pyarrow (pip install pyarrow)") from None
    return pq


def parquet_row_groups(path: str, field: str) -> list[tuple[int, int]]:
    """(rows, uncompressed bytes) of each row group; checks that ``field`` is a string column."""
    pq = _pyarrow_parquet(path)
    try:
        pf = pq.ParquetFile(path)
    except Exception as e:  # pyarrow raises ArrowInvalid, OSError, ...
        raise CorpusInputError(path, None, f"not a readable Parquet file: {e}") from None
    import pyarrow as pa

    schema = pf.schema_arrow
    if field not in schema.names:
        raise CorpusInputError(path, None, f"no column {field!r} (columns: {', '.join(schema.names)})")
    t = schema.field(field).type
    if not (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)):
        raise CorpusInputError(path, None, f"column {field!r} is {t}, expected a string column")
    md = pf.metadata
    return [(md.row_group(i).num_rows, md.row_group(i).total_byte_size) for i in range(md.num_row_groups)]


def parquet_documents(path: str, row_group: int, first_row: int, field: str,
                      bad: BadDocument) -> Iterator[tuple[int, str]]:
    """(row, text) of each row of one row group; ``row`` is 0-based in the file."""
    pq = _pyarrow_parquet(path)
    try:
        table = pq.ParquetFile(path).read_row_group(row_group, columns=[field])
    except Exception as e:
        raise CorpusInputError(path, None, f"cannot read row group {row_group}: {e}") from None
    values = table.column(0).to_pylist()
    del table
    for i, value in enumerate(values):
        if value is None:
            bad(first_row + i, f"field {field!r} is null")
            continue
        yield first_row + i, value
