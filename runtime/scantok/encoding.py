"""A drop-in replacement for ``tiktoken.Encoding``: the same ids, the same special-token
rules and error messages, on scantok's compiled scanners and C byte-pair merge."""
from __future__ import annotations

import array
import functools
import operator
import re
import sys
import threading

from typing import TYPE_CHECKING, AbstractSet, Collection, Iterable, Iterator, Literal, NoReturn, Sequence

from ._native import ffi, lib
from ._pylist import ascii_views as _ascii_views
from ._pylist import decode_small as _decode_small
from ._pylist import encode_small as _encode_small
from ._pylist import ids_to_list as _ids_to_list
from ._pylist import split_ids_into as _split_ids_into
from ._pylist import utf8_bytes as _utf8_bytes
from ._pylist import utf8_contains as _utf8_contains
from .scanner import _IN_PLACE_MIN, _Utf8InPlace
from .threadpool import PARALLEL_MIN as _PARALLEL_MIN
from .threadpool import map_all as _map_all
from .threadpool import size_chunks as _size_chunks
from .threadpool import thread_pool as _thread_pool
from .threadpool import usable_cpus as _usable_cpus
from .threadpool import wait_all as _wait_all

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from .vocab import RankTable

__all__ = ["Encoding"]

_SIZE_MAX = 2**64 - 1
_SMALL_MAX = lib.BPE_SMALL_MAX  # texts up to this many UTF-8 bytes take bpe_encode_small
# bpe_encode_small's address, for scantok._pylist.encode_small (the short-text path of
# encode_ordinary and encode, one C call from Python: see Encoding._init)
_SMALL_FN = int(ffi.cast("uintptr_t", ffi.addressof(lib, "bpe_encode_small")))
_NOT_SMALL = object()  # encode's arguments do not take the short-text path
# bpe_decode_len and bpe_decode, for scantok._pylist.decode_small (decode_bytes of a short list)
_DECODE_LEN_FN = int(ffi.cast("uintptr_t", ffi.addressof(lib, "bpe_decode_len")))
_DECODE_FN = int(ffi.cast("uintptr_t", ffi.addressof(lib, "bpe_decode")))
_EMPTY_OK = (set, frozenset, tuple, list)  # empty special-token collections it takes
_scratch = threading.local()  # per thread: the C call releases the GIL, so no sharing
_PARTIAL = 2


class _Table:
    """Owns a C bpe_table (and, for one built from an image, the image's buffer)."""

    __slots__ = ("ptr", "image", "__weakref__")

    @classmethod
    def from_image(cls, image, special_tokens: dict[str, int]) -> "_Table | None":
        """A table using a serialised image in place (an mmap), or None if the image is not
        from this build."""
        ptr = lib.bpe_table_from_image(ffi.from_buffer("uint8_t[]", image), len(image))
        if ptr == ffi.NULL:
            return None
        self = cls.__new__(cls)
        self.image = image
        self.ptr = ffi.gc(ptr, lib.bpe_table_free)
        self._add_specials(special_tokens)
        return self

    def image_bytes(self) -> bytes:
        n = lib.bpe_table_image_size(self.ptr)
        buf = ffi.new("uint8_t[]", n)
        lib.bpe_table_image_write(self.ptr, buf)
        return ffi.buffer(buf, n)[:]

    def _add_specials(self, special_tokens: dict[str, int]) -> None:
        for name, tid in special_tokens.items():
            if not isinstance(name, str):  # as tiktoken, which reads the names as str
                raise TypeError(f"special token names must be str, got {type(name).__name__}: {name!r}")
            if not name:  # tiktoken's encode(allowed_special="all") loops forever on one
                raise ValueError("a special token must not be empty")
            tid = operator.index(tid)
            if not 0 <= tid < 2**32:  # tiktoken's Rank is a u32
                raise OverflowError(f"special token id {tid} for {name!r} is not in [0, 2**32)")
            b = name.encode("utf-8")
            if tid == 2**32 - 1 or lib.bpe_table_add_special(self.ptr, tid, b, len(b)):
                raise ValueError(f"invalid special token id {tid} for {name!r}")

    def __init__(self, table: "RankTable", special_tokens: dict[str, int]):
        self.image = None
        raw = table.raw
        if table.n:
            # the C tables are indexed by rank (~20 bytes a rank): a rank of 2**30 among 257
            # tokens took 24 GB; tiktoken's hash map takes any u32
            ranks = array.array("I", raw[table.ranks_off:table.ranks_off + 4 * table.n])
            if sys.byteorder != "little":  # RankTable's arrays are little-endian
                ranks.byteswap()
            top = max(ranks)
            if top > 4 * table.n + _SPARSE_RANKS:
                raise ValueError(f"invalid mergeable_ranks: the largest rank, {top}, is far above the number of "
                                 f"tokens ({table.n}); scantok's tables are indexed by rank, so ranks must be "
                                 f"nearly dense (at most 4 × tokens + {_SPARSE_RANKS})")
        buf = ffi.from_buffer("uint8_t[]", raw)
        err = ffi.new("int *")
        err_i = ffi.new("uint32_t *")
        ptr = lib.bpe_table_new(
            buf + table.blob_off,
            ffi.cast("uint32_t *", buf + table.offs_off),
            ffi.cast("uint32_t *", buf + table.ranks_off),
            table.n,
            err,
            err_i,
        )
        if ptr == ffi.NULL:
            reason = {1: "out of memory", 2: "an empty token", 3: "a duplicate token or rank", 4: "a rank >= 2**32 - 2",
                      5: "decreasing token offsets"}
            raise ValueError(f"invalid mergeable_ranks: {reason.get(err[0], 'error')} (token #{err_i[0]})")
        self.ptr = ffi.gc(ptr, lib.bpe_table_free)
        self._add_specials(special_tokens)


def _fix_surrogates(text: str) -> str:
    # exactly tiktoken's fix-up for str that is not valid Unicode (lone surrogates -> U+FFFD),
    # text.encode included: for a str subclass tiktoken calls the subclass's own encode() here
    # (while it reads the characters of one without a lone surrogate)
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _has_lone_surrogate(text: str) -> bool:
    try:
        str.encode(text, "utf-8")  # the characters, whatever a subclass's encode() does
    except UnicodeEncodeError:
        return True
    return False


def _utf8(text: str) -> bytes:
    # the characters' UTF-8, not text.encode: a str subclass's own encode() does not change its
    # text (tiktoken reads the characters); _utf8_bytes is str.encode(text, "utf-8") assembled
    # with SIMD (~4x CPython's encoder on text that mixes scripts), with CPython's error for a
    # lone surrogate
    if not isinstance(text, str):
        raise TypeError(f"expected str, got {type(text).__name__}")
    try:
        return _utf8_bytes(text)
    except UnicodeEncodeError:
        return _utf8_bytes(_fix_surrogates(text))


# A non-ASCII str of up to this many characters gets its UTF-8 made by CPython and kept in the
# str itself (PyUnicode_AsUTF8AndSize; freed with the str), so a text encoded again, as
# documents are across passes and tokenizers, is not converted again. Longer str get a
# temporary copy: the kept UTF-8 would outlive the call at the size of the text.
_KEEP_UTF8_MAX = 1 << 22


def _utf8_view(text: str, strict: bool = False) -> "bytes | _Utf8InPlace":
    """text's UTF-8 for one encoder call: in place for a long ASCII str, CPython's own UTF-8 of
    the str for a non-ASCII one up to _KEEP_UTF8_MAX characters, else a copy.  A lone surrogate
    is replaced as tiktoken's encode() does, or with strict raises UnicodeEncodeError, as
    tiktoken's encode_to_numpy (its Rust call takes the str as it is)."""
    if type(text) is str and len(text) >= _IN_PLACE_MIN:
        if text.isascii():
            return _Utf8InPlace(text)
        if len(text) <= _KEEP_UTF8_MAX:
            try:
                return _Utf8InPlace(text)
            except UnicodeEncodeError:
                if strict:
                    raise
    if strict:
        if not isinstance(text, str):
            raise TypeError(f"expected str, got {type(text).__name__}")
        return _utf8_bytes(text)
    return _utf8(text)


@functools.lru_cache(maxsize=128)
def _special_token_regex(tokens: frozenset[str]) -> tuple[re.Pattern[str], str, bytes | None]:
    """The regex of the tokens, their common prefix, and that prefix in UTF-8 (None if it
    has no UTF-8 form): UTF-8 is self-synchronising, so the prefix occurs in a text iff its
    bytes occur in the text's UTF-8, and bytes.find is several times faster than str's."""
    inner = "|".join(re.escape(token) for token in tokens)
    prefix = _common_prefix(tokens)
    try:
        prefix_bytes: bytes | None = prefix.encode("utf-8")
    except UnicodeEncodeError:
        prefix_bytes = None
    return re.compile(f"({inner})"), prefix, prefix_bytes


@functools.lru_cache(maxsize=128)
def _joinable(tokens: frozenset[str]) -> bool:
    """Whether a search for the tokens over texts joined by NUL finds exactly those in the
    texts: no token is empty or holds NUL."""
    return all(t and "\0" not in t for t in tokens)


def _common_prefix(tokens: Iterable[str]) -> str:
    it = iter(tokens)
    try:
        p = next(it)
    except StopIteration:
        return ""
    for t in it:
        while not t.startswith(p):
            p = p[:-1]
        if not p:
            break
    return p


def raise_disallowed_special_token(token: str) -> NoReturn:
    raise ValueError(
        f"Encountered text corresponding to disallowed special token {token!r}.\n"
        "If you want this text to be encoded as a special token, "
        f"pass it to `allowed_special`, e.g. `allowed_special={{{token!r}, ...}}`.\n"
        f"If you want this text to be encoded as normal text, disable the check for this token "
        f"by passing `disallowed_special=(enc.special_tokens_set - {{{token!r}}})`.\n"
        "To disable this check for all special tokens, pass `disallowed_special=()`.\n"
    )


def _unpack(buf) -> list[int]:
    """The ids of a bpe_buf as a list (the buffer stays owned by the caller)."""
    n = buf.len
    if not n:
        return []
    return _ids_to_list(int(ffi.cast("uintptr_t", buf.ids)), n)


def _check_rc(rc: int) -> None:
    if rc == 0:
        return
    if rc == -1:
        raise MemoryError("scantok: out of memory while encoding")
    if rc == -2:
        raise ValueError("scantok: a byte of the input has no token in this vocabulary")
    raise RuntimeError(f"scantok: internal encoder error {rc}")


def _scanner_for(pat_str: str, scanner_name: str | None):
    """The shipped scanner of `pat_str` if there is one, else the pattern compiled at run time
    (scantok.compile: PatternError if it is outside the supported subset)."""
    import scantok

    if scanner_name is not None:
        return scantok.scanner(scanner_name)
    from .compiler.runtime import DEFAULT_UNICODE

    for name in scantok.scanners():
        sc = scantok.scanner(name)
        if sc.pattern == pat_str and sc.unicode_version == DEFAULT_UNICODE["regex"]:
            return sc
    return scantok.compile(pat_str)


def _split_ids(out: list, at: int, addr: int, ends, n: int) -> None:
    """out[at + i] = text i's ids, for i < n: the uint32 ids at addr, where ends (a C size_t
    array) says where each text's ids end."""
    _split_ids_into(out, at, addr, int(ffi.cast("uintptr_t", ends)), n)


_CHUNKS_PER_THREAD = 8  # see Encoding._batch


# see Encoding._encode_ordinary_shared; 64 Ki characters rather than 32: a chunk costs the
# calling thread a few calls, and on 3.7 MB of 4 KB documents 2 threads ran 2-4 % faster
# (in-process A/B, 9 alternating runs, o200k and cl100k on en, code and multi)
_SHARED_CHUNK_CHARS = 64 << 10


# how far above 4 x the token count a rank may be (see _Table): ~20 MB of tables
_SPARSE_RANKS = 1 << 20


def _workers(num_threads) -> int:
    """num_threads as tiktoken's ThreadPoolExecutor(num_threads) takes it: None is the
    executor's default (here: every usable CPU), one below 1 its ValueError, a str its
    TypeError; a float is cut to an int."""
    if num_threads is None:
        return _usable_cpus()
    if num_threads <= 0:
        raise ValueError("max_workers must be greater than 0")
    return max(1, int(num_threads))


class Encoding:
    def __init__(
        self,
        name: str,
        *,
        pat_str: str,
        mergeable_ranks: dict[bytes, int],
        special_tokens: dict[str, int],
        explicit_n_vocab: int | None = None,
    ):
        """Creates an Encoding (same arguments as tiktoken.Encoding). The pattern must be one
        scantok has compiled (see ``scantok.scanners()``)."""
        from .vocab import RankTable

        self._init(
            name,
            pat_str=pat_str,
            table=RankTable.from_ranks(mergeable_ranks),
            special_tokens=special_tokens,
            explicit_n_vocab=explicit_n_vocab,
            scanner_name=None,
            mergeable_ranks=mergeable_ranks,
        )

    @classmethod
    def _from_table(cls, name, *, pat_str, table, special_tokens, explicit_n_vocab, scanner_name,
                    native=None, table_loader=None):
        self = cls.__new__(cls)
        self._init(
            name,
            pat_str=pat_str,
            table=table,
            special_tokens=special_tokens,
            explicit_n_vocab=explicit_n_vocab,
            scanner_name=scanner_name,
            mergeable_ranks=None,
            native=native,
            table_loader=table_loader,
        )
        return self

    def _init(self, name, *, pat_str, table, special_tokens, explicit_n_vocab, scanner_name, mergeable_ranks,
              native=None, table_loader=None):
        self.name = name
        self._pat_str = pat_str
        self._special_tokens = dict(special_tokens)
        self._explicit_n_vocab = explicit_n_vocab
        self._rank_table_cache = table
        self._table_loader = table_loader
        self._mergeable_ranks_cache = mergeable_ranks
        self._scanner = _scanner_for(pat_str, scanner_name)
        self._dfa = self._scanner._dfa
        t = native if native is not None else _Table(table, self._special_tokens)
        self._table_owner = t
        self._t = t.ptr
        n_ranks = lib.bpe_table_size(self._t)
        max_rank = lib.bpe_table_max_rank(self._t) if n_ranks else 0
        self.max_token_value = max(max_rank, max(self._special_tokens.values(), default=0))
        if explicit_n_vocab:
            assert n_ranks + len(self._special_tokens) == explicit_n_vocab
            assert self.max_token_value == explicit_n_vocab - 1
        self._special_token_values = set(self._special_tokens.values())
        self._all_special = None  # compiled lazily
        # the short-text path (scantok._pylist.encode_small): the table and scanner as
        # addresses (self keeps both alive), and what encode() screens a text for with its
        # default arguments, the special tokens' common prefix in UTF-8 (None: no special
        # tokens, nothing to screen; b"": no common prefix, every text takes the full check)
        self._small_t = int(ffi.cast("uintptr_t", self._t))
        self._small_dfa = int(ffi.cast("uintptr_t", self._dfa))
        if self._special_tokens:
            self._small_screen = _special_token_regex(frozenset(self._special_tokens))[2] or b""
        else:
            self._small_screen = None

    def __repr__(self) -> str:
        return f"<Encoding {self.name!r}>"

    # ------------------------------------------------------------------ low level

    def _run(self, data: bytes, flags: int = 0, count_only: bool = False, limit: int = _SIZE_MAX):
        """Returns (bpe_buf*, consumed). The caller frees the buffer."""
        buf = ffi.new("bpe_buf *")
        consumed = ffi.new("size_t *")
        rc = lib.bpe_encode_scan(
            self._t, self._dfa, data.ptr if type(data) is _Utf8InPlace else ffi.from_buffer(data), len(data),
            flags, buf, consumed, int(count_only), limit
        )
        if rc:
            lib.bpe_buf_free(buf)
            _check_rc(rc)
        return buf, consumed[0]

    def _small(self, data: bytes) -> tuple[int, int]:
        """Encodes a short text (<= lib.BPE_SMALL_MAX bytes) into this thread's scratch ids:
        (number of ids, their address). No allocation: short texts are common, and for them
        the per-call cost is the cost."""
        scratch = _scratch.__dict__.get("ids")
        if scratch is None:
            scratch = _scratch.ids = ffi.new("uint32_t[]", lib.BPE_SMALL_IDS)
            _scratch.addr = int(ffi.cast("uintptr_t", scratch))
        k = lib.bpe_encode_small(self._t, self._dfa, data, len(data), 0, scratch)
        if k < 0:
            _check_rc(k)
        return k, _scratch.addr

    def _ids_list(self, data: bytes) -> list[int]:
        if len(data) <= _SMALL_MAX:
            k, addr = self._small(data)
            return _ids_to_list(addr, k)
        buf, _ = self._run(data)
        try:
            return _unpack(buf)
        finally:
            lib.bpe_buf_free(buf)

    def _ids_numpy(self, data: bytes):
        import numpy as np

        if len(data) <= _SMALL_MAX:
            k, _ = self._small(data)
            return np.frombuffer(ffi.buffer(_scratch.ids, 4 * k), dtype=np.uint32).copy()
        buf, _ = self._run(data)
        n = buf.len
        if n == 0:
            lib.bpe_buf_free(buf)
            return np.empty(0, dtype=np.uint32)
        ids = ffi.gc(buf.ids, lib.bpe_free)  # ownership moves to the array
        return np.frombuffer(ffi.buffer(ids, 4 * n), dtype=np.uint32)

    def _count_bytes(self, data: bytes, limit: int = _SIZE_MAX) -> int:
        if len(data) <= _SMALL_MAX:
            return self._small(data)[0]
        buf, _ = self._run(data, count_only=True, limit=limit)
        n = buf.len
        lib.bpe_buf_free(buf)
        return n

    # ------------------------------------------------------------------ specials

    def _normalize_special(self, allowed_special, disallowed_special):
        if allowed_special is None:  # tiktoken's TypeError (it takes a set, or "all")
            raise TypeError("allowed_special must be 'all' or a set of special tokens, not None")
        if not allowed_special and isinstance(disallowed_special, str) and disallowed_special == "all":
            # the default arguments: every special token disallowed, as one frozenset made once
            # (o200k_harmony has 1,088 specials; building the set per call cost ~80 µs)
            specials = self.__dict__.get("_specials_frozen")
            if specials is None:
                specials = self._specials_frozen = frozenset(self._special_tokens)
            return frozenset(), specials
        if allowed_special == "all":
            allowed_special = self.special_tokens_set
        if disallowed_special == "all":
            disallowed_special = self.special_tokens_set - allowed_special
        return allowed_special, disallowed_special

    def _check_disallowed(self, text: str, disallowed_special, data=None) -> None:
        """Raises if text contains a disallowed special token; data, if given, is text's
        UTF-8 (from _utf8_view): bytes are searched first for the tokens' common prefix."""
        if disallowed_special:
            if not isinstance(disallowed_special, frozenset):
                disallowed_special = frozenset(disallowed_special)
            rx, prefix, prefix_bytes = _special_token_regex(disallowed_special)
            # the shortcuts only for an exact str: a subclass's data may come from its own
            # encode() (tiktoken's lone-surrogate fix-up calls it), and its `in` may be its own;
            # tiktoken searches the text itself
            if type(text) is not str:
                pass
            elif type(data) is bytes and prefix_bytes:
                if prefix_bytes not in data:
                    return
            elif type(data) is _Utf8InPlace and prefix_bytes:
                # the UTF-8 the str keeps: a non-ASCII str's own characters are 2 or 4 bytes
                if not _utf8_contains(text, prefix_bytes):
                    return
            elif prefix and prefix not in text:
                return
            if match := rx.search(text):
                raise_disallowed_special_token(match.group())

    def _segments(self, text: str, allowed_special) -> Iterator[tuple[str, int | None]]:
        """Splits text like tiktoken's CoreBPE.encode: (ordinary text, special id or None)."""
        allowed = [t for t in allowed_special if t in self._special_tokens] if allowed_special else []
        if not allowed:
            yield text, None
            return
        if self._all_special is None:
            self._all_special = re.compile("|".join(re.escape(t) for t in self._special_tokens))
        rx = self._all_special
        allowed_set = set(allowed)
        start = 0
        while True:
            start_find = start
            while True:
                m = rx.search(text, start_find)
                if m is None or m.group() in allowed_set:
                    break
                start_find = m.start() + 1
            if m is None:
                yield text[start:], None
                return
            yield text[start : m.start()], self._special_tokens[m.group()]
            start = m.end()

    def _encode_general(self, text: str, allowed_special, as_numpy: bool, data: bytes):
        """encode(); data is text's UTF-8 (from _utf8_view)."""
        if not self._has_allowed(text, allowed_special):
            # one ordinary segment: the text is encoded to UTF-8 once
            return self._ids_numpy(data) if as_numpy else self._ids_list(data)
        if _has_lone_surrogate(text):
            text = _fix_surrogates(text)
        out: list[int] = []
        for seg, special in self._segments(text, allowed_special):
            if seg:
                out.extend(self._ids_list(seg.encode("utf-8")))
            if special is not None:
                out.append(special)
        if as_numpy:
            import numpy as np

            return np.array(out, dtype=np.uint32)
        return out

    def _has_allowed(self, text: str, allowed_special) -> bool:
        """Whether an allowed special token occurs in text (else it is one ordinary segment)."""
        if not allowed_special:
            return False
        return any(t in text for t in allowed_special if t in self._special_tokens)

    # ------------------------------------------------------------------ encoding

    def encode_ordinary(self, text: str) -> list[int]:
        """Encodes a string into tokens, ignoring special tokens."""
        ids = _encode_small(_SMALL_FN, self._small_t, self._small_dfa, text, None)
        if ids is not None:
            return ids
        return self._ids_list(_utf8_view(text))

    def encode(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | AbstractSet[str] = set(),  # noqa: B006
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> list[int]:
        """Encodes a string into tokens, with tiktoken's special-token rules."""
        # a short text without the special tokens' common prefix holds none of them: with the
        # usual arguments it is encoded as encode_ordinary does, in one C call
        if not allowed_special and allowed_special is not None and type(disallowed_special) is str \
                and disallowed_special == "all":
            screen = self._small_screen  # the defaults
        else:
            screen = self._small_screen_for(allowed_special, disallowed_special)
        if screen is not _NOT_SMALL:
            ids = _encode_small(_SMALL_FN, self._small_t, self._small_dfa, text, screen)
            if ids is not None:
                return ids
        allowed_special, disallowed_special = self._normalize_special(allowed_special, disallowed_special)
        data = _utf8_view(text)
        self._check_disallowed(text, disallowed_special, data)
        return self._encode_general(text, allowed_special, False, data)

    def _small_screen_for(self, allowed_special, disallowed_special):
        """What encode's short-text path screens a text for under these arguments (see
        _init), or _NOT_SMALL when they are not ones it takes: nothing allowed and nothing
        disallowed (no screen: every text is ordinary), or allowed_special="all" with
        disallowed_special "all" or empty (the prefix: a text holding it may hold a special
        token to encode as one). Other arguments take the general path, which checks them."""
        no_disallowed = type(disallowed_special) in _EMPTY_OK and not disallowed_special
        if not allowed_special and type(allowed_special) in _EMPTY_OK:
            return None if no_disallowed else _NOT_SMALL
        if type(allowed_special) is str and allowed_special == "all" and (
                no_disallowed or (type(disallowed_special) is str and disallowed_special == "all")):
            return self._small_screen
        return _NOT_SMALL

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | AbstractSet[str] = set(),  # noqa: B006
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> "npt.NDArray[np.uint32]":
        """Encodes a string into tokens, returning a numpy uint32 array (no Python list); a lone
        surrogate is a UnicodeEncodeError, as in tiktoken (encode() replaces it)."""
        allowed_special, disallowed_special = self._normalize_special(allowed_special, disallowed_special)
        try:
            data = _utf8_view(text, strict=True)
        except UnicodeEncodeError:
            # tiktoken checks for disallowed special tokens first: that error wins
            self._check_disallowed(text, disallowed_special)
            raise
        self._check_disallowed(text, disallowed_special, data)
        return self._encode_general(text, allowed_special, True, data)

    def encode_ordinary_to_numpy(self, text: str) -> "npt.NDArray[np.uint32]":
        return self._ids_numpy(_utf8_view(text))

    def _batch(self, fn, items: Sequence, num_threads: int, *, many=None) -> list:
        """[fn(x) for x in items] on up to num_threads threads, each taking a contiguous
        chunk; many(chunk), if given, does a whole chunk at once (one C call)."""
        items = list(items)
        n = len(items)
        if many is None:
            def many(chunk):
                return [fn(x) for x in chunk]
        nt = min(_workers(num_threads), n, _usable_cpus())
        if nt <= 1:
            return many(items)
        # contiguous chunks of similar byte size, _CHUNKS_PER_THREAD per worker, taken in turn:
        # a chunk's C call releases the GIL, its lists are built with it held, so with several
        # chunks per worker one thread builds lists while the others encode (one chunk each
        # left the list building of all workers to the end, one after another)
        nchunks = min(n, nt * _CHUNKS_PER_THREAD)
        sizes = [len(x) if hasattr(x, "__len__") else 1 for x in items]  # bad items fail in fn, clearly
        if sum(sizes) < _PARALLEL_MIN:
            return many(items)

        def work(lo_hi):
            lo, hi = lo_hi
            return many(items[lo:hi])

        parts = _map_all(nt, work, _size_chunks(sizes, nchunks))
        return [r for part in parts for r in part]

    def encode_ordinary_batch(self, text: list[str], *, num_threads: int = 8) -> list[list[int]]:
        """Encodes a list of strings in parallel: on up to num_threads threads, and no more than
        the CPUs this process may use (the C encoder releases the GIL)."""
        items = list(text)
        nt = min(_workers(num_threads), len(items), _usable_cpus())
        try:
            if nt <= 1 or sum(map(len, items)) < _PARALLEL_MIN:
                return self._encode_ordinary_many(items)
            return self._encode_ordinary_shared(items, nt)
        except TypeError:
            bad = next((i for i, t in enumerate(items) if not isinstance(t, str)), None)
            if bad is None:
                raise
            raise TypeError(f"encode_ordinary_batch: text[{bad}] is {type(items[bad]).__name__}, "
                            "expected str") from None

    def _encode_ordinary_shared(self, texts: list[str], nt: int) -> list[list[int]]:
        """encode_ordinary of each text on nt threads sharing one C batch (bpe_batch_*, which
        says which chunks a thread takes): nt - 1 pool threads only encode (they never take the
        GIL until the batch is done); this thread converts the texts to UTF-8 while they start,
        then builds the lists of the chunks as they finish, and encodes chunks itself whenever
        none is finished. (With each worker building its own chunks' lists, as _batch does,
        the workers queued for the GIL and its hand-offs at every chunk, and the conversion ran
        before any of them started.)"""
        n = len(texts)
        # chunks of about _SHARED_CHUNK_CHARS (whole texts): small enough that the threads
        # finish together (the last chunk is the only one to wait for) and that lists are built
        # while the others encode; a chunk costs a few calls. Sizes in characters: the UTF-8 is
        # not made yet (bad items fail in _utf8 below, clearly).
        sizes = [len(t) if type(t) is str else 1 for t in texts]
        nchunks = max(nt * 4, min(n, sum(sizes) // _SHARED_CHUNK_CHARS))
        bounds = [hi for _, hi in _size_chunks(sizes, nchunks)]
        nchunks = len(bounds)
        ptrs = ffi.new("const uint8_t *[]", n)
        lens = ffi.new("size_t[]", n)
        b = lib.bpe_batch_new(self._t, self._dfa, ptrs, lens, n, ffi.new("size_t[]", bounds), nchunks, nt, 0)
        if b == ffi.NULL:
            raise MemoryError("scantok: out of memory while encoding")
        keep = []  # the UTF-8 copies of the texts not read in place, alive until freed
        futures = []
        out: list = [None] * n
        try:
            # the texts in the order the threads start on them: each region's first chunk, then
            # each one's second, ...
            lo_p, hi_p = ffi.new("size_t *"), ffi.new("size_t *")
            regions = []
            for r in range(nt):
                lib.bpe_batch_region(b, r, lo_p, hi_p)
                regions.append(range(lo_p[0], hi_p[0]))
            order = [reg[j] for j in range(max(map(len, regions))) for reg in regions if j < len(reg)]
            ptrs_at, lens_at = int(ffi.cast("uintptr_t", ptrs)), int(ffi.cast("uintptr_t", lens))
            for step, k in enumerate(order):
                # ASCII str in place (texts holds them), in one call; the others here
                for i in _ascii_views(texts, bounds[k - 1] if k else 0, bounds[k], ptrs_at, lens_at):
                    d = _utf8(texts[i])
                    v = ffi.from_buffer("uint8_t[]", d)
                    keep.append(v)
                    ptrs[i] = v
                    lens[i] = len(d)
                lib.bpe_batch_set_ready(b, k)
                if step == nt - 1:  # the workers start on their first chunks while the rest is converted
                    pool = _thread_pool(nt - 1)
                    for w in range(1, nt):  # one by one: a failing submit keeps those started
                        futures.append(pool.submit(lib.bpe_batch_work, b, 0, w))
            nids = ffi.new("size_t *")
            ends_p = ffi.new("const size_t **")
            for _ in range(nchunks):
                k = lib.bpe_batch_next(b, 0)
                while k == -1 and lib.bpe_batch_work(b, 1, 0):
                    k = lib.bpe_batch_next(b, 0)
                if k == -1:
                    k = lib.bpe_batch_next(b, 1)  # every chunk is taken: wait for one
                if k < 0:
                    raise RuntimeError(f"scantok: internal encoder error {k}")
                _check_rc(lib.bpe_batch_rc(b, k))
                addr = int(ffi.cast("uintptr_t", lib.bpe_batch_ids(b, k, nids, ends_p)))
                lo = bounds[k - 1] if k else 0
                _split_ids(out, lo, addr, ends_p[0], bounds[k] - lo)
                lib.bpe_batch_release(b, k)
        finally:
            lib.bpe_batch_stop(b)  # after an error: the workers take no more chunks
            _wait_all(futures)  # they read texts, keep and the arrays until they return
            lib.bpe_batch_free(b)
        return out

    def _encode_ordinary_many(self, texts: Sequence[str]) -> list[list[int]]:
        """encode_ordinary of each text, with one C call (GIL released) for all of them."""
        datas = [_utf8(t) for t in texts]
        n = len(datas)
        if n == 0:
            return []
        views = [ffi.from_buffer("uint8_t[]", d) for d in datas]  # alive until the call returns
        ends = ffi.new("size_t[]", n)
        failed = ffi.new("size_t *")
        buf = ffi.new("bpe_buf *")
        try:
            _check_rc(lib.bpe_encode_many(self._t, self._dfa, ffi.new("const uint8_t *[]", views),
                                          ffi.new("size_t[]", [len(d) for d in datas]), n, 0, buf, ends, failed))
            out: list = [None] * n
            _split_ids(out, 0, int(ffi.cast("uintptr_t", buf.ids)), ends, n)
            return out
        finally:
            lib.bpe_buf_free(buf)

    def encode_batch(
        self,
        text: list[str],
        *,
        num_threads: int = 8,
        allowed_special: Literal["all"] | AbstractSet[str] = set(),  # noqa: B006
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> list[list[int]]:
        allowed_special, disallowed_special = self._normalize_special(allowed_special, disallowed_special)
        if not isinstance(disallowed_special, frozenset):
            disallowed_special = frozenset(disallowed_special)
        items = list(text)
        if self._no_special_in(items, disallowed_special):
            # encode() of a text that holds no special token (nor a string the caller
            # disallows) is encode_ordinary(): the batch in the shared C batch, where a Python
            # call a text ran two threads slower than one (o200k_base, 50,000 texts of 60
            # characters: 22 MB/s on one thread, 15 on two; encode_ordinary_batch 69 and 136)
            return self.encode_ordinary_batch(items, num_threads=num_threads)
        encoder = functools.partial(
            self.encode, allowed_special=allowed_special, disallowed_special=disallowed_special
        )
        return self._batch(encoder, items, num_threads)

    def _no_special_in(self, items: list, disallowed_special: frozenset) -> bool:
        """Whether every item is a str (exactly) holding none of the encoding's special tokens
        and none of disallowed_special (which may name other strings: tiktoken refuses those
        too). One search over the items joined by NUL, which no such token holds (else False:
        the caller checks the texts one by one)."""
        specials = self.__dict__.get("_specials_frozen")
        if specials is None:
            specials = self._specials_frozen = frozenset(self._special_tokens)
        if disallowed_special is specials or disallowed_special <= specials:
            tokens = specials
        else:
            tokens = specials | disallowed_special
        if set(map(type, items)) - {str}:
            return False
        if not tokens:
            return True
        if not _joinable(tokens):
            return False
        rx, prefix, _ = _special_token_regex(tokens)
        joined = "\0".join(items)
        if prefix and prefix not in joined:
            return True
        return rx.search(joined) is None

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        """The id of a text that is exactly one token (special tokens included). KeyError
        otherwise."""
        if isinstance(text_or_bytes, str):
            b = text_or_bytes.encode("utf-8")
        elif isinstance(text_or_bytes, bytes):  # as tiktoken: not bytearray, nor an int (bytes(5))
            b = bytes(text_or_bytes)
        else:
            raise TypeError(f"encode_single_token() expects str or bytes, got {type(text_or_bytes).__name__}")
        r = lib.bpe_lookup(self._t, b, len(b)) if b else -1
        if r >= 0:
            return int(r)
        try:
            s = b.decode("utf-8")
        except UnicodeDecodeError:
            s = None
        if s is not None and s in self._special_tokens:
            return self._special_tokens[s]
        raise KeyError(b)

    def _encode_single_piece(self, text_or_bytes: str | bytes) -> list[int]:
        b = text_or_bytes.encode("utf-8") if isinstance(text_or_bytes, str) else bytes(text_or_bytes)
        buf = ffi.new("bpe_buf *")
        try:
            _check_rc(lib.bpe_encode_piece(self._t, b, len(b), buf))
            return _unpack(buf)
        finally:
            lib.bpe_buf_free(buf)

    def _encode_bytes(self, data: bytes) -> list[int]:
        """Encodes bytes that may not be UTF-8, as tiktoken does (see scantok.tiktoken_compat.unstable)."""
        from .tiktoken_compat.unstable import encode_bytes

        return encode_bytes(self, data)

    def encode_with_unstable(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | AbstractSet[str] = set(),  # noqa: B006
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> tuple[list[int], list[list[int]]]:
        """The tokens of text that appending text cannot change, and every token sequence
        that can follow them and covers the rest of text (tiktoken's algorithm; the
        completions come in a fixed order, tiktoken's in a random one).

        >>> import scantok
        >>> enc = scantok.get_encoding("cl100k_base")
        >>> stable, completions = enc.encode_with_unstable("hello fanta")
        >>> enc.decode(stable)
        'hello'
        >>> all(enc.decode_bytes(stable + c).startswith(b"hello fanta") for c in completions)
        True
        """
        from .tiktoken_compat.unstable import encode_with_unstable

        allowed_special, disallowed_special = self._normalize_special(allowed_special, disallowed_special)
        self._check_disallowed(text, disallowed_special)
        return encode_with_unstable(self, text, allowed_special)

    # ------------------------------------------------------------------ counting

    def count(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | AbstractSet[str] = set(),  # noqa: B006
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> int:
        """``len(self.encode(text, ...))`` without building the list."""
        # a short text: encode's short-text path (a list of a few ids costs less than the
        # general path's calls)
        if not allowed_special and allowed_special is not None and type(disallowed_special) is str \
                and disallowed_special == "all":
            screen = self._small_screen
        else:
            screen = self._small_screen_for(allowed_special, disallowed_special)
        if screen is not _NOT_SMALL:
            ids = _encode_small(_SMALL_FN, self._small_t, self._small_dfa, text, screen)
            if ids is not None:
                return len(ids)
        return self.count_until(text, _SIZE_MAX - 1, allowed_special=allowed_special, disallowed_special=disallowed_special)

    def count_until(
        self,
        text: str,
        limit: int,
        *,
        allowed_special: Literal["all"] | AbstractSet[str] = set(),  # noqa: B006
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> int:
        """``min(self.count(text, ...), limit + 1)``, stopping as soon as the count exceeds
        ``limit`` (useful for "does this fit in the context window")."""
        if limit < 0:
            raise ValueError("limit must be >= 0")
        limit = min(limit, _SIZE_MAX - 1)
        allowed_special, disallowed_special = self._normalize_special(allowed_special, disallowed_special)
        data = _utf8_view(text)
        self._check_disallowed(text, disallowed_special, data)
        if not self._has_allowed(text, allowed_special):
            return min(self._count_bytes(data, limit), limit + 1)
        if _has_lone_surrogate(text):
            text = _fix_surrogates(text)
        total = 0
        for seg, special in self._segments(text, allowed_special):
            if seg:
                total += self._count_bytes(seg.encode("utf-8"), limit - total)
            if total > limit:
                return limit + 1
            if special is not None:
                total += 1
                if total > limit:
                    return limit + 1
        return total

    # ------------------------------------------------------------------ streaming

    def encode_ordinary_stream(self, chunks: Iterable[bytes | str], *, errors: str = "replace") -> Iterator[list[int]]:
        """Encodes a text given in chunks (bytes are UTF-8, decoded with ``errors``) with
        bounded memory; the concatenated output equals encode_ordinary(whole text). Each chunk
        is scanned with SCANTOK_PARTIAL: only pieces the rest of the text cannot change are
        emitted, the tail is carried into the next call."""
        import codecs

        dec = codecs.getincrementaldecoder("utf-8")(errors=errors)
        pending = b""  # tail not yet final (rescanned with the next input)
        fresh: list[bytes] = []  # input received since the last scan
        fresh_len = 0
        for chunk in chunks:
            if isinstance(chunk, (bytes, bytearray, memoryview)):
                chunk = dec.decode(bytes(chunk))
            if not chunk:
                continue
            b = _utf8(chunk)
            fresh.append(b)
            fresh_len += len(b)
            # rescan only once the new input is at least as long as the carried tail, so a
            # single huge piece (a long run of spaces) costs O(n) in total, not O(n^2 / chunk)
            if fresh_len < len(pending):
                continue
            data = pending + b"".join(fresh)
            fresh.clear()
            fresh_len = 0
            buf, consumed = self._run(data, flags=_PARTIAL)
            try:
                ids = _unpack(buf)
            finally:
                lib.bpe_buf_free(buf)
            pending = data[consumed:]
            if ids:
                yield ids
        tail = dec.decode(b"", final=True)
        data = pending + b"".join(fresh) + _utf8(tail)
        if data:
            yield self._ids_list(data)

    # ------------------------------------------------------------------ decoding

    def _ids_array(self, tokens):
        try:
            import numpy as np

            if isinstance(tokens, np.ndarray):
                arr = np.ascontiguousarray(tokens, dtype=np.uint32) if tokens.dtype != np.uint32 or not tokens.flags.c_contiguous else tokens
                if tokens.dtype != np.uint32 and tokens.size and (tokens.min() < 0 or tokens.max() >= 2**32):
                    raise OverflowError("out of range integral type conversion attempted")
                return ffi.cast("uint32_t *", ffi.from_buffer(arr)), arr.size, arr
        except ImportError:
            pass
        tokens = list(tokens)
        try:
            arr = ffi.new("uint32_t[]", tokens)
        except OverflowError:
            raise OverflowError("out of range integral type conversion attempted") from None
        return arr, len(tokens), arr

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        out = _decode_small(_DECODE_LEN_FN, _DECODE_FN, self._small_t, tokens)
        if out is not None:  # a short list of ints, in one C call
            return out
        ptr, n, keep = self._ids_array(tokens)
        total = lib.bpe_decode_len(self._t, ptr, n)
        if total < 0:
            bad = -1 - total
            raise KeyError(f"Invalid token for decoding: {int(ptr[bad])}")
        out = ffi.new("uint8_t[]", max(total, 1))
        lib.bpe_decode(self._t, ptr, n, out)
        return ffi.buffer(out, total)[:]

    def decode(self, tokens: Sequence[int], errors: str = "replace") -> str:
        return self.decode_bytes(tokens).decode("utf-8", errors=errors)

    def decode_single_token_bytes(self, token: int) -> bytes:
        if type(token) is not int:
            token = operator.index(token)  # numpy's ints, not 1.0 or "7" (TypeError, as tiktoken)
        if not 0 <= token < 2**32:
            raise OverflowError("out of range integral type conversion attempted")
        p = ffi.new("const uint8_t **")
        n = lib.bpe_token_bytes(self._t, token, p)
        if n < 0:
            raise KeyError(str(token))
        return ffi.buffer(p[0], n)[:]

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> list[bytes]:
        return [self.decode_single_token_bytes(token) for token in tokens]

    def decode_with_offsets(self, tokens: Sequence[int]) -> tuple[str, list[int]]:
        token_bytes = self.decode_tokens_bytes(tokens)
        text_len = 0
        offsets = []
        for token in token_bytes:
            offsets.append(max(0, text_len - (0x80 <= token[0] < 0xC0)))
            text_len += sum(1 for c in token if not 0x80 <= c < 0xC0)
        text = b"".join(token_bytes).decode("utf-8", errors="strict")
        return text, offsets

    def decode_batch(
        self, batch: Sequence[Sequence[int]], *, errors: str = "replace", num_threads: int = 8
    ) -> list[str]:
        decoder = functools.partial(self.decode, errors=errors)
        return self._batch(decoder, batch, num_threads)

    def decode_bytes_batch(self, batch: Sequence[Sequence[int]], *, num_threads: int = 8) -> list[bytes]:
        return self._batch(self.decode_bytes, batch, num_threads)

    # ------------------------------------------------------------------ misc

    def token_byte_values(self) -> list[bytes]:
        """All mergeable token byte values (sorted, like tiktoken)."""
        return sorted(self._mergeable_ranks.keys())

    @property
    def _rank_table(self) -> "RankTable":
        if self._rank_table_cache is None:
            self._rank_table_cache = self._table_loader()
        return self._rank_table_cache

    @property
    def _mergeable_ranks(self) -> dict[bytes, int]:
        if self._mergeable_ranks_cache is None:
            self._mergeable_ranks_cache = self._rank_table.to_dict()
        return self._mergeable_ranks_cache

    @property
    def eot_token(self) -> int:
        return self._special_tokens["<|endoftext|>"]

    @functools.cached_property
    def special_tokens_set(self) -> set[str]:
        return set(self._special_tokens.keys())

    def is_special_token(self, token: int) -> bool:
        assert isinstance(token, int)
        return token in self._special_token_values

    @property
    def n_vocab(self) -> int:
        return self.max_token_value + 1

    # ------------------------------------------------------------------ pickling

    def __reduce__(self):
        from . import registry

        if registry._is_registered(self):
            return (registry.get_encoding, (self.name,))
        return (
            _rebuild,
            (
                self.name,
                self._pat_str,
                self._rank_table.raw,
                self._special_tokens,
                self._explicit_n_vocab,
                # a scanner compiled at run time is compiled again (or loaded from the disk cache)
                None if hasattr(self._scanner, "flavor") else self._scanner.name,
            ),
        )


def _rebuild(name, pat_str, raw, special_tokens, explicit_n_vocab, scanner_name):
    from .vocab import RankTable

    return Encoding._from_table(
        name,
        pat_str=pat_str,
        table=RankTable(raw),
        special_tokens=special_tokens,
        explicit_n_vocab=explicit_n_vocab,
        scanner_name=scanner_name,
    )
