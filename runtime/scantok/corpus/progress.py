"""Progress of a run: the counters a ``progress=`` callback receives, and the bar on stderr
(tqdm when it is installed, else a plain one-line bar)."""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass

__all__ = ["Progress", "ProgressBar"]


@dataclass
class Progress:
    """What a run has done so far (input bytes are exact per finished partition and
    estimated from the documents' text in between)."""

    bytes_done: int
    bytes_total: int
    documents: int
    tokens: int
    partitions_done: int
    partitions_total: int
    elapsed: float

    @property
    def tokens_per_second(self) -> float:
        return self.tokens / self.elapsed if self.elapsed > 0 else 0.0


class ProgressBar:
    """A ``progress=`` callback drawing input bytes, documents and tokens/s on stderr."""

    def __init__(self, file=None, min_interval: float = 0.2):
        self.file = file or sys.stderr
        self.min_interval = min_interval
        self._last = 0.0
        self._tqdm = None
        try:
            from tqdm import tqdm
        except ImportError:
            tqdm = None
        self._tqdm_cls = tqdm

    def __call__(self, p: Progress) -> None:
        now = time.monotonic()
        final = p.partitions_done == p.partitions_total
        if not final and now - self._last < self.min_interval:
            return
        self._last = now
        postfix = f"{p.documents:,} docs, {p.tokens:,} tokens, {p.tokens_per_second / 1e6:.2f} M tokens/s"
        if self._tqdm_cls is not None:
            if self._tqdm is None:
                self._tqdm = self._tqdm_cls(total=p.bytes_total, unit="B", unit_scale=True, file=self.file,
                                            desc="shard", dynamic_ncols=True)
            self._tqdm.n = min(p.bytes_done, p.bytes_total)
            self._tqdm.set_postfix_str(postfix, refresh=False)
            self._tqdm.refresh()
            return
        frac = p.bytes_done / p.bytes_total if p.bytes_total else 1.0
        width = 24
        fill = int(min(1.0, frac) * width)
        rate = p.bytes_done / p.elapsed / 1e6 if p.elapsed > 0 else 0.0
        self.file.write(f"\rshard [{'#' * fill}{'-' * (width - fill)}] {frac * 100:5.1f}% "
                        f"{p.bytes_done / 1e6:,.1f}/{p.bytes_total / 1e6:,.1f} MB {rate:.1f} MB/s, {postfix}")
        self.file.flush()

    def close(self) -> None:
        if self._tqdm is not None:
            self._tqdm.close()
        elif self._last:
            self.file.write("\n")
            self.file.flush()
