"""``train_bpe``: byte-level BPE training on a compiled scanner, with exactly the merges of
HuggingFace tokenizers 0.23.3 ``BpeTrainer(initial_alphabet=ByteLevel.alphabet())``, and
``TrainedBPE``, its result.

>>> import scantok
>>> bpe = scantok.train_bpe(["low lower lowest"] * 3, vocab_size=256 + 3)
>>> bpe.merges
[(b'l', b'o'), (b'lo', b'w'), (b' ', b'low')]
>>> bpe.to_encoding("tiny").encode("lowest")
[257, 68, 82, 83]

The rules reproduced (read from tokenizers/src/models/bpe/trainer.rs and word.rs, and tested
against tokenizers on corpora made of ties):

* **Pieces**: each sequence (an iterator item, or a line of a file with its ``\\n``, as
  ``Tokenizer.train(files)`` reads files) is split by the pattern; the matches and the text
  between them are the pieces (Split "isolated"), counted as byte strings.
  A pattern is read as Oniguruma reads it in HF's Split: for cl100k_base, whose
  ``\\p{N}{1,3}+`` Oniguruma (Ruby syntax) takes as a repeated ``{1,3}``, not a possessive one,
  digit runs are whole pieces (scanner ``hf_cl100k_base``); ``.pattern``, ``to_encoding()`` and
  the exports keep the pattern string, which tiktoken reads as tiktoken does. ``"gpt2"`` and
  the other shipped patterns read the same in both.
* **Ids**: the special tokens first (0, 1, ...), then the 256 bytes in the order of the code
  points of their ByteLevel characters (``!`` = byte 33 first, ``Ā`` = byte 0 after ``ÿ``), then
  each merge's new token. A merge whose token already exists (``a+bc`` after ``ab+c``, or a
  special token's spelling) reuses its id. ``vocab_size`` counts all of them.
* **Order of merges**: the pair with the highest count; **ties go to the smallest pair of ids**
  ``(left id, right id)`` compared left first. So among equally frequent pairs the one whose left
  token is older (lower id) wins, bytes ranking by their ByteLevel character.
* **HF's bookkeeping, kept as it is**: a queue entry carries the words it was created for and a
  merge rewrites only those; a merged pair's own count is not decreased; a stale entry is pushed
  back with the current count. So a pair can be merged twice (its later occurrences), and HF's
  saved tokenizer keeps each pair once, at its last position: ``merges`` is that list.
* **Stopping**: when the vocabulary reaches ``vocab_size``, or the best count is below
  ``min_frequency`` (or zero). ``max_token_length`` stops pairs whose token would be that long
  or longer from being counted as new pairs form.

Entries equal in count and pair but created at different steps can coexist; HF pops them in an
order that depends on its random hash seeds, scantok first-in first-out. This needs a pair whose
count drops and rises back to the same value between two steps and has not been observed on
any corpus tested.
"""
from __future__ import annotations

import os
from typing import Any, Sequence

from .._native import ffi, lib
from ..encoding import _usable_cpus
from .bytelevel import ALPHABET_ORDER, str_to_bytes
from .count import Counter, count_files, count_texts
from .errors import (BPETrainingError, EmptyCorpusError, SpecialTokenError, TrainingInputError, UnknownPatternError,
                     VocabSizeError)

__all__ = ["train_bpe", "TrainedBPE"]

# Scanners whose pattern Oniguruma (HF's Split) reads differently from tiktoken: training counts
# the pieces HF would count; the encoding and exports keep the pattern string itself.
_HF_READING = {"cl100k_base": "hf_cl100k_base"}
_MERGE_BATCH = 256  # merges per C call (the progress bar's step)


class TrainedBPE:
    """A trained byte-level BPE vocabulary.

    ``merges``: ``(bytes, bytes)`` pairs in merge order (HF's order); ``mergeable_ranks``: token
    bytes -> id (tiktoken's format; special tokens excluded); ``special_tokens``: str -> id;
    ``pattern``: the pre-tokenizer regex; ``scanner_name``: its compiled scanner.
    """

    __slots__ = ("merges", "mergeable_ranks", "special_tokens", "pattern", "scanner_name")

    def __init__(self, *, merges: list[tuple[bytes, bytes]], mergeable_ranks: dict[bytes, int],
                 special_tokens: dict[str, int], pattern: str, scanner_name: str):
        self.merges = merges
        self.mergeable_ranks = mergeable_ranks
        self.special_tokens = special_tokens
        self.pattern = pattern
        self.scanner_name = scanner_name

    def __getstate__(self):
        return {k: getattr(self, k) for k in self.__slots__}

    def __setstate__(self, state):
        for k in self.__slots__:
            setattr(self, k, state[k])

    def __eq__(self, other) -> bool:
        if not isinstance(other, TrainedBPE):
            return NotImplemented
        return self.__getstate__() == other.__getstate__()

    def __repr__(self) -> str:
        return (f"<TrainedBPE {self.scanner_name!r}: {self.n_vocab} ids, {len(self.merges)} merges, "
                f"{len(self.special_tokens)} special tokens>")

    @property
    def n_vocab(self) -> int:
        """Number of ids (tokens and special tokens)."""
        return len(set(self.mergeable_ranks.values()) | set(self.special_tokens.values()))

    def to_encoding(self, name: str = "trained"):
        """A :class:`scantok.Encoding` with these ranks, special tokens and pre-tokenizer.

        >>> enc = train_bpe(["aaab"], vocab_size=258).to_encoding("x")
        >>> enc.decode(enc.encode("aab"))
        'aab'
        """
        from ..encoding import Encoding

        return Encoding(name, pat_str=self.pattern, mergeable_ranks=self.mergeable_ranks,
                        special_tokens=self.special_tokens)

    def save_tiktoken(self, path: str | os.PathLike) -> None:
        """Writes the ranks as a ``.tiktoken`` file (special tokens are not part of that format:
        pass ``special_tokens`` to ``tiktoken.Encoding`` yourself)."""
        from .export import tiktoken_text, write_atomic

        write_atomic(path, tiktoken_text(self.mergeable_ranks))

    def to_hf_json(self) -> dict:
        """The HuggingFace tokenizer.json content (a dict)."""
        from .export import hf_json

        return hf_json(self)

    def save_hf(self, path: str | os.PathLike) -> None:
        """Writes a HuggingFace tokenizer.json (``tokenizers.Tokenizer.from_file`` loads it with
        these merges, this vocabulary and these ids)."""
        from .export import hf_text, write_atomic

        write_atomic(path, hf_text(self))


# ------------------------------------------------------------------------------- arguments


def _resolve_pattern(pattern: Any) -> tuple[str, str]:
    """(scanner name, pattern string) for a scanner name or a compiled pattern string."""
    from ..scanner import scanner, scanners

    if not isinstance(pattern, str):
        raise UnknownPatternError(f"pattern must be a str, not {type(pattern).__name__}")
    names = scanners()
    if pattern in names:
        return pattern, scanner(pattern).pattern
    for name in names:
        if scanner(name).pattern == pattern:
            return name, pattern
    raise UnknownPatternError(
        f"unknown pattern {pattern!r}: give a compiled scanner's name ({', '.join(names)}) or its "
        "pattern string; a new pattern needs a spec in gen/patterns/ and `make gen`")


def _check_int(name: str, value: Any, minimum: int, exc=BPETrainingError) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise exc(f"{name} must be an int, not {type(value).__name__}")
    if value < minimum:
        raise exc(f"{name} must be >= {minimum}, got {value}")
    return value


def _check_specials(special_tokens: Any) -> list[str]:
    if isinstance(special_tokens, str):
        raise SpecialTokenError("special_tokens must be a sequence of str, not a str")
    specials = list(special_tokens)
    seen: set[str] = set()
    for i, t in enumerate(specials):
        if not isinstance(t, str):
            raise SpecialTokenError(f"special token #{i} must be a str, not {type(t).__name__}")
        if not t:
            raise SpecialTokenError(f"special token #{i} is empty")
        if t in seen:
            raise SpecialTokenError(f"duplicate special token {t!r} (#{i})")
        seen.add(t)
    return specials


def _as_files(source: Any) -> list[str] | None:
    """The file names if `source` names files, else None (an iterable of texts)."""
    if isinstance(source, (str, os.PathLike)):
        source = [source]
    if not isinstance(source, (list, tuple)):
        return None
    if source and all(isinstance(f, os.PathLike) for f in source):
        paths = [os.fspath(f) for f in source]
    elif (source and all(isinstance(f, str) for f in source) and len(source[0]) < 4096
          and "\n" not in source[0] and os.path.isfile(source[0])):
        paths = list(source)
    else:
        return None
    for p in paths:
        if not os.path.isfile(p):
            raise FileNotFoundError(f"training file not found: {p!r}")
    return paths


# the CPUs this process may run on, as the encoder's batches count them
_default_threads = _usable_cpus


# ------------------------------------------------------------------------------- training


def train_bpe(files_or_iterator: Any, *, vocab_size: int, pattern: str = "gpt2",
              special_tokens: Sequence[str] = (), min_frequency: int = 0,
              max_token_length: int | None = None, num_threads: int | None = None,
              scheduler: Any = None, progress: bool | None = None) -> TrainedBPE:
    """Trains a byte-level BPE exactly as HF tokenizers' BpeTrainer does (see the module doc).

    ``files_or_iterator``: a path or a list of paths (UTF-8 text, read line by line in
    chunks, as ``Tokenizer.train(files)``), or an iterable of ``str`` (each one sequence, as
    ``train_from_iterator``). A list of ``str`` is taken as paths when its first item names an
    existing file (then every item must); pass ``os.PathLike`` items or a generator to be explicit. ``pattern``: a compiled scanner's name or pattern string; ``"gpt2"``
    is HF's ``ByteLevel(use_regex=True)``, any other P is HF's ``Split(Regex(P), "isolated")``
    followed by ``ByteLevel(use_regex=False)``. ``vocab_size``: special tokens + 256 bytes +
    merges. ``num_threads``: counting threads (default, and at most: the usable CPUs). ``scheduler``: a
    ``dask.distributed.Client`` to count on a cluster. ``progress``: progress bars on stderr.

    >>> bpe = train_bpe(["hug hug pug"], vocab_size=260, special_tokens=["<s>"])
    >>> bpe.special_tokens, bpe.merges[:2]
    ({'<s>': 0}, [(b'u', b'g'), (b'h', b'ug')])
    """
    scanner_name, pat = _resolve_pattern(pattern)
    specials = _check_specials(special_tokens)
    _check_int("vocab_size", vocab_size, 256 + len(specials), VocabSizeError)
    _check_int("min_frequency", min_frequency, 0)
    if max_token_length is not None:
        _check_int("max_token_length", max_token_length, 1)
    if num_threads is None:
        num_threads = _default_threads()
    # at most the usable CPUs: each thread keeps a piece counter (a million threads asked for
    # ran out of memory)
    num_threads = min(_check_int("num_threads", num_threads, 1), _default_threads())
    from ..scanner import scanner

    dfa = scanner(_HF_READING.get(scanner_name, scanner_name))._dfa
    files = _as_files(files_or_iterator)
    if files is None and (isinstance(files_or_iterator, (bytes, bytearray))
                          or not hasattr(files_or_iterator, "__iter__")):
        raise TrainingInputError("files_or_iterator must be a path, a list of paths or an iterable "
                                 f"of str, not {type(files_or_iterator).__name__}")
    bars = _Bars(progress)
    try:
        if scheduler is not None:
            from .distributed import count_on_cluster

            counter = count_on_cluster(scheduler, files, files_or_iterator,
                                       _HF_READING.get(scanner_name, scanner_name),
                                       progress=bars.counting(files))
        elif files is not None:
            counter = count_files(files, dfa, num_threads=num_threads, progress=bars.counting(files))
        else:
            counter = count_texts(files_or_iterator, dfa, num_threads=num_threads,
                                  progress=bars.counting(None))
        bars.close()
        if not len(counter):
            what = "the training files are empty" if files else "the training texts are empty"
            raise EmptyCorpusError(f"empty corpus: {what}")
        return _merge(counter, specials, vocab_size, min_frequency, max_token_length, pat,
                      scanner_name, bars)
    finally:
        bars.close()


def _merge(counter: Counter, specials: list[str], vocab_size: int, min_frequency: int,
           max_token_length: int | None, pat: str, scanner_name: str, bars: "_Bars") -> TrainedBPE:
    keys = [str_to_bytes(t) for t in specials]
    blob = b"".join(k for k in keys if k)
    lens = ffi.new("uint32_t[]", [len(k) if k else 0xFFFFFFFF for k in keys] or [0])
    order = ffi.new("uint8_t[]", bytes(ALPHABET_ORDER))
    ptr = lib.bt_trainer_new(counter.ptr, len(specials), ffi.from_buffer(blob) if blob else ffi.NULL,
                             lens, order, vocab_size, min_frequency,
                             max_token_length if max_token_length is not None else 2**64 - 1)
    if ptr == ffi.NULL:
        raise MemoryError("out of memory setting up BPE training")
    t = ffi.gc(ptr, lib.bt_trainer_free)
    counter.release()
    start = lib.bt_trainer_n_tokens(t)
    update = bars.merging(vocab_size - start)
    while True:
        rc = lib.bt_trainer_run(t, _MERGE_BATCH)
        if rc < 0:
            raise MemoryError("out of memory during BPE training")
        if update is not None:
            update(lib.bt_trainer_n_tokens(t) - start)
        if rc == 0:
            break
    # copy the results out and free the C state before building Python objects (peak memory)
    n = lib.bt_trainer_n_merges(t)
    pairs = ffi.new("uint32_t[]", 2 * n or 1)
    n_saved = lib.bt_trainer_saved_merges(t, pairs)
    if n_saved == 2**64 - 1:
        raise MemoryError("out of memory listing the merges")
    ntok = lib.bt_trainer_n_tokens(t)
    blob = ffi.new("uint8_t[]", lib.bt_trainer_token_bytes(t) or 1)
    lens = ffi.new("uint32_t[]", ntok or 1)
    lib.bt_trainer_tokens(t, blob, lens)
    ffi.release(t)
    raw = ffi.buffer(blob)[:]
    del blob
    tokens: list[bytes | None] = []
    off = 0
    for ln in ffi.unpack(lens, ntok):
        if ln == 0xFFFFFFFF:
            tokens.append(None)
        else:
            tokens.append(raw[off:off + ln])
            off += ln
    del raw
    ids = ffi.unpack(pairs, 2 * n_saved)
    del pairs
    merges = [(tokens[ids[i]], tokens[ids[i + 1]]) for i in range(0, 2 * n_saved, 2)]
    del ids
    special_ids = {tok: i for i, tok in enumerate(specials)}
    ranks = {tok: i for i, tok in enumerate(tokens) if tok is not None and i >= len(specials)}
    return TrainedBPE(merges=merges, mergeable_ranks=ranks, special_tokens=special_ids,
                      pattern=pat, scanner_name=scanner_name)


class _Bars:
    """tqdm progress bars on stderr for counting (bytes) and merging (tokens), if asked for
    and tqdm is installed."""

    def __init__(self, enabled: bool | None):
        self.tqdm = None
        self.bar = None
        if enabled:
            try:
                from tqdm import tqdm

                self.tqdm = tqdm
            except ImportError:
                self.tqdm = None

    def counting(self, files: list[str] | None):
        if self.tqdm is None:
            return None
        total = sum(os.path.getsize(f) for f in files) if files else None
        self.bar = self.tqdm(total=total, unit="B", unit_scale=True, desc="counting", leave=False)
        return self.bar.update

    def merging(self, total: int):
        if self.tqdm is None:
            return None
        self.close()
        bar = self.bar = self.tqdm(total=max(total, 0), unit="tok", desc="merging", leave=False)

        def update(done: int) -> None:
            bar.update(done - bar.n)

        return update

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
