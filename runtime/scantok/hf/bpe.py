"""The BPE and WordLevel models of scantok.Tokenizer (tokenizer.json ``model``).

BPE merges by MERGE RANK as tokenizers does: a pair of ids (a, b) has the rank of its line in
``merges`` and the id of ``a + b``; the lowest rank is merged first, the leftmost on ties.
The merge loop, the pair table and a per-thread piece cache are C (csrc/hf_bpe.c).  Byte mode
(ByteLevel pre-tokenizer, no subword prefix/suffix): a piece is raw UTF-8 bytes whose symbols
are the 256 byte characters' ids, merged without the GIL; otherwise (char mode) the initial
symbols are built here, with ``byte_fallback``, ``unk_token`` and ``fuse_unk``, then merged
in C.
"""
from __future__ import annotations

import re
import threading
from typing import Any, Mapping

from .errors import HFError, UnsupportedComponentError, WordLevelError
from .fields import flag
from .native import _native
from .pre_tokenizers import BYTE_CHARS, CHAR_BYTES


def _check_vocab(vocab: Any, where: str) -> dict[str, int]:
    if not isinstance(vocab, Mapping):
        raise HFError(f"{where}.vocab must be an object")
    values = vocab.values()
    if not values or (set(map(type, values)) == {int} and min(values) >= 0 and max(values) < 2**31):
        return dict(vocab)
    for tok, idx in vocab.items():
        if isinstance(idx, bool) or not isinstance(idx, int) or not 0 <= idx < 2**31:
            raise HFError(f"{where}.vocab: id of {tok!r} must be an integer in [0, 2**31), got {idx!r}")
    return dict(vocab)


def _byte_of():
    import numpy as np

    out = np.full(max(map(ord, BYTE_CHARS)) + 1, -1, dtype=np.int16)
    for b, c in enumerate(BYTE_CHARS):
        out[ord(c)] = b
    return out


_BYTE_OF = _byte_of()


def _records(strings, seps: str = "\0\n") -> tuple[bytes, int] | None:
    """The strings as one UTF-8 record list (each followed by a separator byte none of them
    holds: the first of seps that works), or None."""
    for sep in seps:
        joined = sep.join(strings)
        if joined.count(sep) == max(len(strings) - 1, 0):
            return (joined + sep).encode("utf-8", "surrogatepass"), ord(sep)
    return None


def _merge_ids_c(vocab: dict[str, int], merges: list, plen: int):
    """(a, b, merged) id arrays of the merges by one C call, or None (malformed: the caller
    finds the precise error)."""
    import numpy as np

    nat = _native()
    if nat is None:
        return None
    if not merges:
        return (np.empty(0, dtype=np.uint32),) * 3
    ffi, lib = nat
    first = type(merges[0])
    if first is str and all(type(m) is str for m in merges):
        pairs, flat = 0, merges
    elif first in (list, tuple) and all(type(m) in (list, tuple) and len(m) == 2 for m in merges):
        pairs, flat = 1, [x for m in merges for x in m]
        if not all(type(x) is str for x in flat):
            return None
    else:
        return None
    rec_v = _records(vocab)
    rec_m = _records(flat, chr(rec_v[1])) if rec_v is not None else None
    if rec_m is None:
        return None
    ids = np.fromiter(vocab.values(), dtype=np.uint32, count=len(vocab))
    out = np.empty((3, len(merges)), dtype=np.uint32)
    p = ffi.cast("uint32_t *", out.ctypes.data)
    rc = lib.hfb_merge_ids(rec_v[0], len(vocab), ffi.cast("uint32_t *", ids.ctypes.data), rec_m[0], len(merges),
                           rec_v[1], pairs, plen, p, p + len(merges), p + 2 * len(merges))
    if rc == -1:
        raise MemoryError
    if rc < 0:
        return None
    return out[0], out[1], out[2]


_CONTROLS = "".join(map(chr, range(32))) + "\x7f"
# pieces of at least this many characters are tokenized in C (hfb_tokenize_chars); shorter ones
# (words, under a pre-tokenizer) in Python, behind a cache of the pieces seen
_C_CHARS_MIN = 32
# a "▁" after another character inside a token: then a merge may cross the start of a word
_INNER_SPACE = re.compile("[^\u2581]\u2581")


class _ThreadCaches:
    """The per-thread C state (hfb_cache: piece caches and work arrays) of a native model."""

    def cache(self):
        """This thread's piece cache (C)."""
        c = getattr(self._local, "cache", None)
        if c is None:
            c = self._ffi.gc(self._lib.hfb_cache_new(), self._lib.hfb_cache_free)
            if c == self._ffi.NULL:
                raise MemoryError
            self._local.cache = c
        return c

    def cache_address(self) -> int:
        """The address of this thread's piece cache as an int (for scantok._pylist), kept with
        the cache it is of (an ffi.cast per call cost ~0.7 us of encode()'s ~8)."""
        loc = self._local
        c = getattr(loc, "cache", None)
        if c is None or getattr(loc, "address_of", None) is not c:
            c = self.cache()
            loc.address = int(self._ffi.cast("uintptr_t", c))
            loc.address_of = c
        return loc.address


class WordLevelModel(_ThreadCaches):
    """A piece is one token: its id, or the unk token's.  The C model (hfb_set_word_level)
    looks pieces up under the split stages; None without scantok._native."""

    byte_mode = False
    takes_bytes = False

    def __init__(self, spec: Mapping, where: str = "model"):
        self.vocab = _check_vocab(spec.get("vocab"), where)
        if "unk_token" not in spec:  # as tokenizers, which has no default for it here
            raise HFError(f"{where}: missing field 'unk_token' (WordLevel)")
        self.unk_token = spec["unk_token"]
        if not isinstance(self.unk_token, str):
            raise HFError(f"{where}.unk_token must be a string")
        self.inv = {i: t for t, i in self.vocab.items()}
        # an id given to several strings: tokenizers' token is the piece, not id_to_token's
        # string (the general path keeps the pieces then)
        self.shared_ids = len(self.inv) < len(self.vocab)
        unk = self.vocab.get(self.unk_token)
        self.unk_id = -1 if unk is None else unk
        self._local = threading.local()
        self._model = None if self.shared_ids else self._build_native()

    def _build_native(self):
        nat = _native()
        if nat is None or not hasattr(nat[1], "hfb_set_word_level"):
            return None
        import numpy as np

        ffi, lib = self._ffi, self._lib = nat
        if self.vocab and max(self.vocab.values()) >= 2 * len(self.vocab) + 65536:
            # sparse ids: the C path's encodings name their tokens through a list indexed by id
            # (Tokenizer._token_table, a _TokenTable), as long as the largest id (found by a review: one id of
            # 2e8 took 1.6 GB); the general path looks tokens up in a dict
            return None
        # whitespace and control characters are tokens of some WordLevel files (a Split that
        # keeps them): any ASCII control character may separate the records
        rec = _records(self.vocab, _CONTROLS)
        if rec is None:  # every one occurs in some token: the general path
            return None
        model = lib.hfb_new((max(self.vocab.values()) + 1) if self.vocab else 1, 0)
        if model == ffi.NULL:
            raise MemoryError
        model = ffi.gc(model, lib.hfb_free)
        ids = np.fromiter(self.vocab.values(), dtype=np.uint32, count=len(self.vocab))
        rc = lib.hfb_set_word_level(model, rec[0], len(rec[0]), len(self.vocab), rec[1],
                                    ffi.cast("uint32_t *", ids.ctypes.data), self.unk_id)
        if rc == -1:
            raise MemoryError
        return model if rc == 0 else None

    def tokenize(self, text: str) -> list[tuple[int, int, int]]:
        i = self.vocab.get(text)
        if i is None:
            i = self.vocab.get(self.unk_token)
            if i is None:
                raise WordLevelError(f"WordLevel error: Missing {self.unk_token} token from the vocabulary")
        return [(i, 0, len(text))]


class BPEModel(_ThreadCaches):
    """tokenizers' BPE model (``dropout`` null only)."""

    def __init__(self, spec: Mapping, where: str = "model"):
        self.vocab = _check_vocab(spec.get("vocab"), where)
        self.inv = {i: t for t, i in self.vocab.items()}
        for key in ("unk_token", "continuing_subword_prefix", "end_of_word_suffix"):
            v = spec.get(key)
            if v is not None and not isinstance(v, str):
                raise HFError(f"{where}.{key} must be a string or null")
        self.unk_token = spec.get("unk_token")
        self.prefix = spec.get("continuing_subword_prefix") or None
        self.suffix = spec.get("end_of_word_suffix") or None
        self.fuse_unk = flag(spec, "fuse_unk", False, where)
        self.byte_fallback = flag(spec, "byte_fallback", False, where)
        self.ignore_merges = flag(spec, "ignore_merges", False, where)
        dropout = spec.get("dropout")
        if dropout not in (None, 0, 0.0):
            raise UnsupportedComponentError(f"{where}: BPE dropout={dropout!r} is not supported (only null)")
        merges = spec.get("merges")
        if not isinstance(merges, (list, tuple)):  # a tuple: a Tokenizer's own copy (_merges_untracked)
            raise HFError(f"{where}.merges must be a list")
        plen = len(self.prefix) if self.prefix else 0
        self._unk_id = None
        if self.unk_token is not None:
            self._unk_id = self.vocab.get(self.unk_token)
        self._local = threading.local()
        self._chars_cache: dict[str, list] = {}
        self._chars_set = False
        self._chars_lock = threading.Lock()
        ids = _merge_ids_c(self.vocab, merges, plen)
        if ids is None:
            ids = self._merge_ids_py(merges, plen, where)
        self._build_native(*ids)

    def _merge_ids_py(self, merges: list, plen: int, where: str):
        """The (a, b, merged) ids of every merge, checked one by one (the precise error)."""
        a_ids, b_ids, n_ids = [], [], []
        for i, m in enumerate(merges):
            if isinstance(m, str):
                parts = m.split(" ")
                if len(parts) != 2:
                    raise HFError(f"{where}.merges[{i}]: expected 'a b', got {m!r}")
                a, b = parts
            elif isinstance(m, (list, tuple)) and len(m) == 2 and all(isinstance(x, str) for x in m):
                a, b = m
            else:
                raise HFError(f"{where}.merges[{i}]: expected 'a b' or [a, b], got {m!r}")
            new = a + b[plen:]
            for t in (a, b, new):
                if t not in self.vocab:
                    raise HFError(f"{where}.merges[{i}]: token {t!r} is not in the vocabulary")
            a_ids.append(self.vocab[a])
            b_ids.append(self.vocab[b])
            n_ids.append(self.vocab[new])
        return a_ids, b_ids, n_ids

    # -- C model --
    def _build_native(self, a_ids, b_ids, n_ids) -> None:
        nat = _native()
        if nat is None or not hasattr(nat[1], "hfb_new"):
            raise HFError("scantok._native is not built with hf_bpe (reinstall scantok)")
        import numpy as np

        ffi, lib = nat
        self._ffi, self._lib = ffi, lib
        n_id_max = (max(self.vocab.values()) + 1) if self.vocab else 1
        model = lib.hfb_new(n_id_max, len(a_ids))
        if model == ffi.NULL:
            raise MemoryError
        self._model = ffi.gc(model, lib.hfb_free)
        arrs = [np.ascontiguousarray(x, dtype=np.uint32) for x in (a_ids, b_ids, n_ids)]
        if lib.hfb_add_merges(self._model, *(ffi.cast("uint32_t *", x.ctypes.data) for x in arrs), len(a_ids)) < 0:
            raise MemoryError
        # byte mode: every byte's character is a token and no prefix/suffix changes the symbols
        byte_ids = np.array([self.vocab.get(c, -1) for c in BYTE_CHARS], dtype=np.int32)
        self.byte_mode = self.prefix is None and self.suffix is None
        # end_of_word_suffix (CLIP) without a prefix: raw bytes too, each piece's last byte's
        # character with the suffix (hfb_set_byte_suffix)
        self.byte_suffix = self.suffix is not None and self.prefix is None and not self.ignore_merges
        tok_len = np.zeros(n_id_max, dtype=np.uint32)
        whole = None
        if self.ignore_merges:
            whole = ffi.gc(lib.vt_new(len(self.vocab)), lib.vt_free)
        rec = _records(self.vocab)
        if rec is not None:
            blob, sep = rec
            ids = np.fromiter(self.vocab.values(), dtype=np.uint32, count=len(self.vocab))
            if lib.hfb_vocab_lengths(blob, len(self.vocab), sep, ffi.cast("uint32_t *", ids.ctypes.data),
                                     ffi.cast("int16_t *", _BYTE_OF.ctypes.data), len(_BYTE_OF),
                                     ffi.cast("uint32_t *", tok_len.ctypes.data),
                                     whole if whole is not None else ffi.NULL) < 0:
                raise MemoryError
        else:
            for tok, idx in self.vocab.items():
                try:
                    raw = bytes(CHAR_BYTES[c] for c in tok)
                except KeyError:
                    tok_len[idx] = len(tok.encode("utf-8", "surrogatepass"))
                    continue
                tok_len[idx] = len(raw)
                if whole is not None and lib.vt_insert(whole, raw, len(raw), idx) < 0:
                    raise MemoryError
        if self.byte_suffix:
            # tok_len stays each token's own bytes: only a piece's last token carries the suffix
            # and it ends where the piece does, while a token spelt with the suffix's text can be
            # merged from that text inside a piece ("a</w>" from "a", "<", "/", "w", ">": 5
            # bytes; found by a review, which cut the suffix off at first)
            last_ids = np.array([self.vocab.get(c + self.suffix, -1) for c in BYTE_CHARS], dtype=np.int32)
            lib.hfb_set_byte_suffix(self._model, ffi.cast("int32_t *", last_ids.ctypes.data))
            self._keep_last = last_ids
        self._keep = (byte_ids, tok_len, whole)
        lib.hfb_set_bytes(self._model, ffi.cast("int32_t *", byte_ids.ctypes.data),
                          ffi.cast("uint32_t *", tok_len.ctypes.data), whole if whole is not None else ffi.NULL)
        # long pieces in windows (hf_bpe.c), where no id is given to two strings
        vids = ids if rec is not None else np.fromiter(self.vocab.values(), dtype=np.uint32, count=len(self.vocab))
        if lib.hfb_check_unique_ids(self._model, ffi.cast("uint32_t *", vids.ctypes.data), len(vids)) < 0:
            raise MemoryError
        # the characters a merge may start from already merged (hfb_build_premerge)
        if rec is not None and self.byte_mode:
            if lib.hfb_build_premerge(self._model, rec[0], len(self.vocab), rec[1], ffi.cast("uint32_t *", ids.ctypes.data),
                                      ffi.cast("int16_t *", _BYTE_OF.ctypes.data), len(_BYTE_OF)) < 0:
                raise MemoryError
        # the tokens that merge back into themselves: a first-sight piece that is one of them
        # costs a lookup instead of its merges (ignore_merges looks every piece up in whole)
        if rec is not None and whole is None and self.byte_mode:
            if lib.hfb_build_selfs(self._model, rec[0], len(self.vocab), rec[1], ffi.cast("uint32_t *", ids.ctypes.data),
                                   ffi.cast("int16_t *", _BYTE_OF.ctypes.data), len(_BYTE_OF)) < 0:
                raise MemoryError

    @property
    def takes_bytes(self) -> bool:
        """Whether the C model reads a piece's raw UTF-8 (under a ByteLevel pre-tokenizer)."""
        return self.byte_mode or self.byte_suffix

    # -- char mode --
    def tokenize(self, text: str) -> list[tuple[int, int, int]]:
        """(id, start, end) of the tokens of one piece; offsets are str indices in ``text``."""
        if len(text) >= _C_CHARS_MIN and self.prefix is None and self.suffix is None:
            out = self._tokenize_chars_c(text)
            if out is not None:
                return out
        hit = self._chars_cache.get(text)
        if hit is not None:
            return hit
        out = self._tokenize_chars(text)
        if len(self._chars_cache) < 100_000:
            self._chars_cache[text] = out
        return out

    def _chars_ready(self) -> bool:
        """The C model's one-character tokens, byte fallback and unknown token (hfb_set_chars),
        set on the first long piece."""
        if self._chars_set:
            return True
        with self._chars_lock:
            if not self._chars_set:
                import numpy as np

                ffi, lib = self._ffi, self._lib
                ones = [(ord(t), i) for t, i in self.vocab.items() if len(t) == 1]
                # continuing_subword_prefix / end_of_word_suffix: each character's affixed
                # tokens (prefix + c, c + suffix, prefix + c + suffix), its row of aff
                aff_of = self._char_affixes()
                if aff_of:
                    alone = dict(ones)
                    ones = [(c, alone.get(c, 0xFFFFFFFF)) for c in sorted(set(alone) | set(aff_of))]
                cps = np.array([c for c, _ in ones], dtype=np.uint32)
                ids = np.array([i for _, i in ones], dtype=np.uint32)
                fb = None
                if self.byte_fallback:
                    fb = np.array([self.vocab.get(f"<0x{b:02X}>", -1) for b in range(256)], dtype=np.int32)
                unk = -1 if self.unk_token is None else (-2 if self._unk_id is None else self._unk_id)
                # words (hf_bpe.c): a piece cut before each "▁" that follows another character
                # merges word by word where no token holds such a "▁" (a merge across a cut
                # would make one): SentencePiece vocabularies, whose tokens start with "▁".
                # The symbol before a cut must end in that other character: so no character may
                # be dropped (no unknown token and no full byte fallback: "▁▁Q▁b" with Q dropped
                # merges "▁▁▁" across the cut) and the unknown token must not be "" or end in "▁"
                # (found by a helper's campaign)
                unk_ok = self._unk_id is not None and self.unk_token and not self.unk_token.endswith("\u2581")
                nothing_dropped = unk_ok or (self.unk_token is None and fb is not None and bool((fb >= 0).all()))
                cut = (nothing_dropped and "\u2581" in self.vocab and self.prefix is None and self.suffix is None
                       and not any(_INNER_SPACE.search(t) for t in self.vocab))
                # every id's UTF-8 length: the word cache's hits give their tokens' offsets by it;
                # a byte fallback token covers one byte of the text (Llama 2 and Mistral give
                # "\n" as <0x0A>: the words across line breaks are kept too). A word whose tokens
                # covered other lengths than these is never kept (hf_bpe.c, hit_same)
                u8len = np.zeros(max(self.vocab.values(), default=-1) + 1, dtype=np.uint32)
                for t, i in self.vocab.items():
                    u8len[i] = len(t.encode("utf-8", "surrogatepass"))
                if fb is not None:
                    u8len[fb[fb >= 0]] = 1
                self._chars_keep = (cps, ids, fb, u8len)
                self._chars_cut = cut
                if lib.hfb_set_chars(self._model, ffi.cast("uint32_t *", cps.ctypes.data),
                                     ffi.cast("uint32_t *", ids.ctypes.data), len(ones),
                                     ffi.cast("int32_t *", fb.ctypes.data) if fb is not None else ffi.NULL,
                                     unk, int(self.fuse_unk), ffi.cast("uint32_t *", u8len.ctypes.data),
                                     int(cut)) < 0:
                    raise MemoryError
                if self.prefix is not None or self.suffix is not None:
                    none = (0xFFFFFFFF,) * 3
                    aff = np.array([aff_of.get(c, none) for c, _ in ones], dtype=np.uint32).reshape(-1)
                    self._chars_keep += (aff,)
                    plen = len(self.prefix.encode("utf-8", "surrogatepass")) if self.prefix else 0
                    rc = lib.hfb_set_char_affixes(self._model, ffi.cast("uint32_t *", cps.ctypes.data),
                                                  ffi.cast("uint32_t *", aff.ctypes.data), len(ones), plen,
                                                  int(self.prefix is not None), int(self.suffix is not None))
                    if rc == -1:
                        raise MemoryError
                    if rc != 0:  # (cps lists every affixed character: cannot happen)
                        raise RuntimeError("scantok: hfb_set_char_affixes refused the character table")
                self._chars_set = True
        return True

    def _char_affixes(self) -> dict[int, list[int]]:
        """Code point -> ids of prefix + c, c + suffix, prefix + c + suffix (0xFFFFFFFF: no
        such token), for each character one of them is a token of."""
        p, q = self.prefix or "", self.suffix or ""
        if not p and not q:
            return {}
        out: dict[int, list[int]] = {}
        none = 0xFFFFFFFF
        for t, i in self.vocab.items():
            for k, (a, b) in enumerate(((p, ""), ("", q), (p, q))):
                if (k != 1 and not p) or (k != 0 and not q):
                    continue
                if len(t) == len(a) + len(b) + 1 and t.startswith(a) and t.endswith(b):
                    out.setdefault(ord(t[len(a)]), [none, none, none])[k] = i
        return out

    def _tokenize_chars_c(self, text: str) -> list[tuple[int, int, int]] | None:
        """tokenize() of a long piece in C (hfb_tokenize_chars: the same tokens, long pieces
        merged in windows); None where the Python path must run (it raises tokenizers' error)."""
        r = self.tokenize_arrays(text)
        return None if r is None else list(zip(r[0].tolist(), r[1].tolist(), r[2].tolist()))

    def tokenize_arrays(self, text: str):
        """tokenize() of a piece (prefix and suffix None) in C as three numpy uint32 arrays
        (ids, starts, ends), or None where the Python path must run."""
        import numpy as np

        if self.ignore_merges:
            i = self.vocab.get(text)
            if i is not None:
                return tuple(np.array([x], dtype=np.uint32) for x in (i, 0, len(text)))
        self._chars_ready()
        ffi, lib = self._ffi, self._lib
        data = text.encode("utf-8", "surrogatepass")
        n = len(data)
        ids, st, en = (np.empty(n, dtype=np.uint32) for _ in range(3))
        k = lib.hfb_tokenize_chars(self._model, self.cache(), data, n, ffi.cast("uint32_t *", ids.ctypes.data),
                                   ffi.cast("uint32_t *", st.ctypes.data), ffi.cast("uint32_t *", en.ctypes.data))
        if k == lib.HFB_NOMEM:
            raise MemoryError
        if k < 0:
            return None
        return ids[:k], st[:k], en[:k]

    def _tokenize_chars(self, text: str) -> list[tuple[int, int, int]]:
        if not text:
            return []
        if self.ignore_merges:
            i = self.vocab.get(text)
            if i is not None:
                return [(i, 0, len(text))]
        vocab, n = self.vocab, len(text)
        ids: list[int] = []
        lens: list[int] = []  # in UTF-8 bytes of text, as tokenizers counts them
        unk: list[int] | None = None
        for k, ch in enumerate(text):
            s = ch
            if k and self.prefix:
                s = self.prefix + s
            if k == n - 1 and self.suffix:
                s = s + self.suffix
            blen = len(ch.encode("utf-8", "surrogatepass"))
            idx = vocab.get(s)
            if idx is not None:
                if unk is not None:
                    ids.append(unk[0])
                    lens.append(unk[1])
                    unk = None
                ids.append(idx)
                lens.append(blen)
                continue
            if self.byte_fallback:
                fb = [vocab.get(f"<0x{b:02X}>") for b in s.encode("utf-8", "surrogatepass")]
                if all(x is not None for x in fb):
                    ids.extend(fb)  # type: ignore[arg-type]
                    lens.extend([1] * len(fb))
                    continue
            if self.unk_token is not None:
                if self._unk_id is None:
                    raise HFError(f"Unk token `{self.unk_token}` not found in the vocabulary")
                if unk is not None and self.fuse_unk:
                    unk[1] += blen
                else:
                    if unk is not None:
                        ids.append(unk[0])
                        lens.append(unk[1])
                    unk = [self._unk_id, blen]
        if unk is not None:
            ids.append(unk[0])
            lens.append(unk[1])
        ids, lens = self.merge(ids, lens)
        # byte offsets -> str indices of text (a token may end inside a char: it covers it)
        char_of: list[int] = []
        for k, ch in enumerate(text):
            char_of.extend([k] * len(ch.encode("utf-8", "surrogatepass")))
        total = len(char_of)
        out = []
        pos = 0
        for i, ln in zip(ids, lens):
            a, b = pos, pos + ln
            pos = b
            start = char_of[a] if a < total else n
            end = char_of[b - 1] + 1 if 0 < b <= total else (n if b > total else 0)
            out.append((i, start, end))
        return out

    def merge(self, ids: list[int], lens: list[int]) -> tuple[list[int], list[int]]:
        if len(ids) < 2:
            return ids, lens
        ffi, lib = self._ffi, self._lib
        cids = ffi.new("uint32_t[]", ids)
        clens = ffi.new("uint32_t[]", lens)
        k = lib.hfb_merge(self._model, cids, clens, len(ids))
        if k == 2**64 - 1 or k > len(ids):
            raise MemoryError
        return list(cids[0:k]), list(clens[0:k])

