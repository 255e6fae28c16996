"""The plan: input files (path, size, mtime, format) cut into partitions, the unit of work,
of output and of resumption.

A partition is a list of segments, each one piece of one input: a byte range of an
uncompressed JSON Lines file (cut at line boundaries), a whole compressed or plain-text
file, or one Parquet row group. Consecutive small pieces are packed into one partition up
to ``partition_bytes`` of input. The plan depends only on the inputs and
``partition_bytes`` — not on the number of workers or the scheduler — so every way of
running it writes the same shards.
"""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field as dc_field

from . import readers
from .errors import CorpusError, CorpusInputError

__all__ = ["InputFile", "Segment", "Partition", "scan_inputs", "plan_partitions"]


@dataclass(frozen=True)
class InputFile:
    path: str  # absolute
    size: int
    mtime_ns: int
    kind: str  # "jsonl" | "text" | "parquet"
    compression: str | None  # None | "gzip" | "zstd"


@dataclass(frozen=True)
class Segment:
    file: int  # index into the inputs
    start: int = 0  # byte offset (uncompressed JSON Lines), else 0
    end: int | None = None  # byte offset, or None: to the end of the (decompressed) file
    row_group: int | None = None  # Parquet
    first_row: int = 0  # Parquet: row number of the row group's first row
    nbytes: int = 0  # input bytes, for progress


@dataclass(frozen=True)
class Partition:
    index: int
    segments: tuple[Segment, ...] = dc_field(default_factory=tuple)

    @property
    def nbytes(self) -> int:
        return sum(s.nbytes for s in self.segments)

    def to_json(self) -> dict:
        return {"index": self.index, "segments": [asdict(s) for s in self.segments]}

    @classmethod
    def from_json(cls, d: dict) -> "Partition":
        return cls(d["index"], tuple(Segment(**s) for s in d["segments"]))


def scan_inputs(paths) -> list[InputFile]:
    """Stat every input (in the given order); an unreadable or missing file is an error now,
    before any work starts."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    files = []
    for p in paths:
        path = os.path.abspath(os.fspath(p))
        try:
            st = os.stat(path)
        except OSError as e:
            raise CorpusInputError(os.fspath(p), None, f"cannot open: {e.strerror or e}") from None
        if not os.path.isfile(path):
            raise CorpusInputError(os.fspath(p), None, "not a regular file")
        if not os.access(path, os.R_OK):
            raise CorpusInputError(os.fspath(p), None, "cannot open: permission denied")
        kind, compression = readers.detect_format(path)
        files.append(InputFile(path, st.st_size, st.st_mtime_ns, kind, compression))
    if not files:
        raise CorpusError("no input files")
    return files


def _whole_pieces(i: int, f: InputFile, field: str):
    """The segments of an input that is not cut by bytes: its Parquet row groups, or the
    whole (compressed or plain-text) file."""
    if f.kind == "parquet":
        first = 0
        for rg, (rows, nbytes) in enumerate(readers.parquet_row_groups(f.path, field)):
            yield Segment(i, row_group=rg, first_row=first, nbytes=nbytes)
            first += rows
    else:
        yield Segment(i, nbytes=f.size)


def plan_partitions(files: list[InputFile], partition_bytes: int, field: str) -> list[Partition]:
    """Segments packed in input order into partitions of about ``partition_bytes``: a
    byte range is cut to fill the current partition, a piece that cannot be cut starts a
    new partition when it would overflow the current one."""
    if partition_bytes < 1:
        raise ValueError("partition_bytes must be >= 1")
    parts: list[list[Segment]] = [[]]
    used = 0
    for i, f in enumerate(files):
        if f.kind == "jsonl" and f.compression is None:
            pos = 0
            while pos < f.size:
                room = partition_bytes - used
                if room <= 0:
                    parts.append([])
                    used, room = 0, partition_bytes
                cut = readers.next_line_start(f.path, pos + room, f.size)
                parts[-1].append(Segment(i, start=pos, end=cut, nbytes=cut - pos))
                used += cut - pos
                pos = cut
            continue
        for seg in _whole_pieces(i, f, field):
            if used and used + seg.nbytes > partition_bytes:
                parts.append([])
                used = 0
            parts[-1].append(seg)
            used += seg.nbytes
    return [Partition(k, tuple(segs)) for k, segs in enumerate(s for s in parts if s)]
