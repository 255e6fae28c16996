"""Encodings: the public :class:`Encoding` (the fields of ``tokenizers.Encoding``), and the
record the general encode path builds, with what tokenizers does to it after the model:
``truncate`` (into overflowing parts), ``merge`` (the post-processor's pieces, with the
overflowing parts combined) and ``pad``, as tokenizers' ``Encoding`` (encoding.rs, 0.23.3).

A record is a dict of parallel lists: ``ids``, ``tokens``, ``offsets``, ``type_ids``,
``special`` (special_tokens_mask), ``words`` (the pre-tokenizer split or the pre-tokenized
word each token comes from, None for special tokens and padding), ``attention`` (None until
padding: all ones); ``ranges`` (tokenizers' sequence_ranges: sequence id -> (start, stop) of
its tokens, empty until a post-processor sets them) and ``overflowing`` (a list of records)."""
from __future__ import annotations

import warnings

from .args import string, u32, usize
from .errors import HFError

__all__ = ["Encoding"]

_pyl = None


def _pylist():
    """scantok._pylist, imported once (a relative import in a function costs ~2 us a call),
    and told which class its lazy Encodings are."""
    global _pyl
    if _pyl is None:
        from .. import _pylist as mod

        mod.encoding_class(Encoding)
        _pyl = mod
    return _pyl


class Encoding:
    """The result of :meth:`Tokenizer.encode`, as ``tokenizers.Encoding``: ``ids``, ``tokens``,
    ``offsets``, ``attention_mask``, ``special_tokens_mask``, ``type_ids`` (lists) and
    ``overflowing`` (the parts truncation cut off, each an :class:`Encoding`).

    Each access returns a new list, as tokenizers' does (a caller may change it).  An encoding
    made by the C path keeps its C arrays and builds the list from them on access (tokenizers'
    Python ``Encoding`` also converts on access).  One from :meth:`Tokenizer.encode_batch_fast`
    is as tokenizers makes it there: no offsets (all ``(0, 0)``) and an empty string for each
    token of the text (the post-processor's special tokens keep theirs)."""

    # a lazy encoding (_lazy set: the C arrays, n, the post-processor's tokens and sequence
    # ranges around them, the token table, where its word ids come from) has _lazy, _pad and
    # _overflowing only (each slot set costs ~15 ns, a batch of short texts makes thousands),
    # and _words once they are read; a materialized one has the lists, _attention, _ranges and
    # _overflowing.  Lazy ones are made by scantok._pylist (lazy_encoding), untracked by the
    # cyclic GC (a batch of short texts spent a third of its time in collections): no __dict__,
    # and nothing an encoding holds may refer back to an encoding (the token table is the
    # model's, not the tokenizer's: _TokenTable)
    __slots__ = ("_ids", "_tokens", "_offsets", "_special_tokens_mask", "_type_ids", "_words", "_attention",
                 "_ranges", "_overflowing", "_lazy", "_pad")

    def __init__(self):
        """An empty encoding, as ``tokenizers.Encoding()`` (the tokenizer makes the others)."""
        self._set(record([], [], [], []))

    def _set(self, rec: dict) -> None:
        self._ids = rec["ids"]
        self._tokens = rec["tokens"]
        self._offsets = rec["offsets"]
        self._special_tokens_mask = rec["special"]
        self._type_ids = rec["type_ids"]
        self._words = rec["words"]
        self._attention = rec.get("attention")  # None: all ones (nothing padded)
        self._ranges = rec["ranges"]
        self._overflowing = tuple(Encoding._of(o) for o in rec.get("overflowing") or ())
        self._lazy = None
        self._pad = None

    @classmethod
    def _of(cls, rec: dict) -> "Encoding":
        """The Encoding of a record (its overflowing parts too)."""
        e = cls.__new__(cls)
        e._set(rec)
        return e

    @classmethod
    def _from_arrays(cls, arrays, n: int, wrap, table, text: str) -> "Encoding":
        """The model tokens' ids, starts and ends (arrays: the bytes hf_encode_offsets returns,
        3n uint32 in that order, read in place by scantok._pylist as (arrays, index)), the
        post-processor's wrap (prefix, suffix, sequence type id, sequence ranges, words_of, and
        optionally the strings of tokens the table does not give, {model token index: string}),
        the id -> token table and the text: the word ids are words_of(text), made when asked
        for (a truncated part's: a slice of them from its first token, the 6th item)."""
        return _pylist().lazy_encoding(arrays, n, wrap, table, text)

    @classmethod
    def _fast(cls, ids, wrap) -> "Encoding":
        """encode_batch_fast's encoding of model ids (a bytes object of native uint32, read in
        place, or a list) inside the post-processor's wrap (no word ids: tokenizers tracks none
        without offsets)."""
        return _pylist().lazy_encoding(ids, len(ids) >> 2 if type(ids) is bytes else len(ids), wrap, None, None)

    def _truncated(self, parts: list, over_wrap) -> "Encoding":
        """This new lazy encoding cut into parts (windows' result, not None): the first kept,
        the others its overflowing parts, inside over_wrap (the post-processor's tokens around
        an overflowing part, which may differ from the sequence's: a template gives the
        sequence its type id, not the overflowing parts)."""
        arrays, n, wrap, table, text, start = self._lazy
        w = 1 if table is None else 3  # encode_batch_fast's: ids only; encode's: ids, starts, ends
        # the overflowing parts keep this encoding's words and token strings (wrap[4:])
        over_wrap = tuple(over_wrap[:4]) + tuple(wrap[4:])

        def part(a: int, b: int, wrap=over_wrap) -> "Encoding":
            if type(arrays) is bytes:
                sub = b"".join(arrays[4 * (k * n + a):4 * (k * n + b)] for k in range(w))
            else:
                sub = arrays[a:b]
            e = Encoding.__new__(Encoding)
            e._lazy = (sub, b - a, wrap, table, text, start + a)
            e._overflowing = ()
            e._pad = None
            return e

        if not parts:  # max_len 0: nothing kept, all of it overflowing
            first = part(0, 0, wrap)
            first._overflowing = (part(0, n),)
            return first
        first = part(*parts[0], wrap)
        first._overflowing = tuple(part(a, b) for a, b in parts[1:])
        return first

    def _padded(self, target: int, p) -> None:
        """Pads this new encoding (and its overflowing parts) to target tokens with Padding p's
        token, as tokenizers pads (padding twice equals padding once to the larger length).  A
        lazy one keeps its C arrays and only notes the padding."""
        for o in self._overflowing:
            o._padded(target, p)
        k = target - len(self)
        if k <= 0:
            return
        if self._lazy is not None:
            self._pad = (p.direction == "left", k + (self._pad[1] if self._pad else 0), p.pad_id, p.pad_type_id,
                         p.pad_token)
            return
        left = p.direction == "left"
        att = self._attention if self._attention is not None else [1] * len(self._ids)
        for name, fill in (("_ids", p.pad_id), ("_tokens", p.pad_token), ("_offsets", (0, 0)),
                           ("_special_tokens_mask", 1), ("_type_ids", p.pad_type_id), ("_words", None)):
            v = list(getattr(self, name))
            setattr(self, name, [fill] * k + v if left else v + [fill] * k)
        self._attention = [0] * k + list(att) if left else list(att) + [0] * k
        if left:
            self._ranges = {s: (x + k, y + k) for s, (x, y) in self._ranges.items()}

    def _padding(self, lst: list, fill) -> list:
        """lst (a lazy encoding's field) with its padding, if any."""
        pad = self._pad
        if pad is None:
            return lst
        return [fill] * pad[1] + lst if pad[0] else lst + [fill] * pad[1]

    def _parts(self):
        arrays, n, wrap, table = self._lazy[:4]
        return arrays, n, wrap[0], wrap[1], wrap[2], table

    @property
    def ids(self) -> list[int]:
        if self._lazy is None:
            return list(self._ids)
        arrays, n, pre, post, _, _ = self._parts()
        lst = _pylist().ids_to_list((arrays, 0), n) if type(arrays) is bytes else list(arrays)
        lst = [t[0] for t in pre] + lst + [t[0] for t in post] if (pre or post) else lst
        return lst if self._pad is None else self._padding(lst, self._pad[2])

    @property
    def tokens(self) -> list[str]:
        if self._lazy is None:
            return list(self._tokens)
        arrays, n, pre, post, _, table = self._parts()
        lst = [""] * n if table is None else _pylist().tokens_to_list((arrays, 0), n, table())
        wrap, first = self._lazy[2], self._lazy[5]
        if len(wrap) > 5:  # the strings of the added tokens in the text (by model token index)
            for k, t in wrap[5].items():
                if first <= k < first + n:
                    lst[k - first] = t
        lst = [t[1] for t in pre] + lst + [t[1] for t in post] if (pre or post) else lst
        return lst if self._pad is None else self._padding(lst, self._pad[4])

    @property
    def offsets(self) -> list[tuple[int, int]]:
        if self._lazy is None:
            return list(self._offsets)
        arrays, n, pre, post, _, table = self._parts()
        if table is None:  # encode_batch_fast: none tracked
            return [(0, 0)] * len(self)
        lst = _pylist().spans_to_list((arrays, n), (arrays, 2 * n), n, 0)
        lst = [(0, 0)] * len(pre) + lst + [(0, 0)] * len(post) if (pre or post) else lst
        return lst if self._pad is None else self._padding(lst, (0, 0))

    @property
    def special_tokens_mask(self) -> list[int]:
        if self._lazy is None:
            return list(self._special_tokens_mask)
        _, n, pre, post, _, _ = self._parts()
        return self._padding([1] * len(pre) + [0] * n + [1] * len(post), 1)

    @property
    def type_ids(self) -> list[int]:
        if self._lazy is None:
            return list(self._type_ids)
        _, n, pre, post, type_id, _ = self._parts()
        lst = [t[2] for t in pre] + [type_id] * n + [t[2] for t in post]
        return lst if self._pad is None else self._padding(lst, self._pad[3])

    @property
    def attention_mask(self) -> list[int]:
        """1 for each token, 0 for each padding token."""
        if self._lazy is not None:
            if self._pad is not None:
                return self._padding([1] * (len(self) - self._pad[1]), 0)
            return [1] * len(self)
        if self._attention is not None:
            return list(self._attention)
        return [1] * len(self._ids)

    @property
    def overflowing(self) -> list["Encoding"]:
        """The parts truncation cut off (see :meth:`Tokenizer.enable_truncation`), each with the
        post-processor's special tokens, as tokenizers makes them."""
        return list(self._overflowing)

    # -- words and sequences (tokenizers' Encoding mappings) --
    @property
    def word_ids(self) -> list[int | None]:
        """The word each token comes from: the index of the pre-tokenizer's split (an added
        token is a split of its own), or of the word with ``is_pretokenized``; None for the
        post-processor's special tokens and padding, and for every token of
        :meth:`Tokenizer.encode_batch_fast` (which tracks none, as tokenizers').

        >>> from scantok import Tokenizer
        >>> tok = Tokenizer.from_str('{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2},'
        ...                          ' "merges": ["a b"]}, "pre_tokenizer": {"type": "Whitespace"}}')
        >>> enc = tok.encode("ab ba")
        >>> enc.word_ids, enc.word_to_tokens(1), enc.char_to_word(4), enc.token_to_chars(2)
        ([0, 1, 1], (1, 3), 1, (4, 5))
        """
        if self._lazy is None:
            return list(self._words)
        _, n, wrap, _, text, first = self._lazy
        if text is None or wrap[4] is None:  # encode_batch_fast's: none
            lst = [None] * n
        else:
            # the model tokens' words, made once (each is a C encode of the text): the mapping
            # methods read them on every call
            try:
                words = self._words
            except AttributeError:
                words = self._words = wrap[4](text)[first:first + n]
            lst = list(words)
        pre, post = wrap[0], wrap[1]
        lst = [None] * len(pre) + lst + [None] * len(post) if (pre or post) else lst
        return self._padding(lst, None)

    @property
    def words(self) -> list[int | None]:
        """Deprecated alias of :attr:`word_ids` (as in tokenizers)."""
        warnings.warn("Deprecated in 0.9.4: Encoding.words is deprecated, please use Encoding.word_ids instead.",
                      DeprecationWarning, stacklevel=2)
        return self.word_ids

    def _sequence_ranges(self) -> dict:
        """tokenizers' sequence_ranges: sequence id -> (start, stop) of its tokens."""
        if self._lazy is None:
            return self._ranges
        n, wrap = self._lazy[1], self._lazy[2]
        shift = self._pad[1] if self._pad is not None and self._pad[0] else 0
        return {sid: (a + ga * (n - 2) + shift, b + gb * (n - 2) + shift) for sid, a, b, ga, gb in wrap[3]}

    @property
    def n_sequences(self) -> int:
        """How many sequences the encoding holds (1 unless the post-processor marked them)."""
        return len(self._sequence_ranges()) or 1

    @property
    def sequence_ids(self) -> list[int | None]:
        """The sequence (0, or 1 for the pair) of each token; None for special tokens and for
        padding once a post-processor has marked the sequences."""
        n, ranges = len(self), self._sequence_ranges()
        out: list = [None] * n
        for sid in range(len(ranges) or 1):
            a, b = ranges.get(sid, (0, n))
            out[a:b] = [sid] * (b - a)
        return out

    def set_sequence_id(self, sequence_id: int) -> None:
        """Makes every token sequence ``sequence_id``'s (in place)."""
        sid = usize(sequence_id, "sequence_id")
        self._materialize()
        self._ranges = {**self._ranges, sid: (0, len(self._ids))}

    def _range(self, sequence_index: int) -> tuple[int, int]:
        return self._sequence_ranges().get(usize(sequence_index, "sequence_index"), (0, len(self)))

    def token_to_sequence(self, token_index: int) -> int | None:
        """The sequence of the token at ``token_index``."""
        token = usize(token_index, "token_index")
        if token > len(self):  # tokenizers' test (the length itself is in range there)
            return None
        ranges = self._sequence_ranges()
        if not ranges:
            return 0
        for sid, (a, b) in ranges.items():
            if a <= token < b:
                return sid
        return None

    def token_to_chars(self, token_index: int) -> tuple[int, int] | None:
        """The offsets of the token at ``token_index`` (in its sequence's text)."""
        token = usize(token_index, "token_index")
        if self.token_to_sequence(token) is None or token >= len(self):
            return None
        return self.offsets[token]

    def token_to_word(self, token_index: int) -> int | None:
        """The word (in its sequence) of the token at ``token_index``."""
        token = usize(token_index, "token_index")
        if self.token_to_sequence(token) is None or token >= len(self):
            return None
        return self.word_ids[token]

    def word_to_tokens(self, word_index: int, sequence_index: int = 0) -> tuple[int, int] | None:
        """(start, stop) of the tokens of word ``word_index`` of sequence ``sequence_index``."""
        word = u32(word_index, "word_index")
        a, b = self._range(sequence_index)
        words = self.word_ids
        if a > b or b > len(words):
            return None
        start = end = None
        for i, w in enumerate(words[a:b]):
            if w is not None and w > word:  # tokenizers stops at the first later word
                break
            if w == word:
                if start is None:
                    start = i
                end = i + 1
        return None if start is None else (a + start, a + end)

    def word_to_chars(self, word_index: int, sequence_index: int = 0) -> tuple[int, int] | None:
        """The offsets of word ``word_index`` of sequence ``sequence_index``."""
        r = self.word_to_tokens(word_index, sequence_index)
        if r is None or r[1] == 0:
            return None
        offsets = self.offsets
        return offsets[r[0]][0], offsets[r[1] - 1][1]

    def char_to_token(self, char_pos: int, sequence_index: int = 0) -> int | None:
        """The token of sequence ``sequence_index`` whose offsets hold ``char_pos``."""
        pos = usize(char_pos, "char_pos")
        a, b = self._range(sequence_index)
        offsets = self.offsets
        if a > b or b > len(offsets):
            return None
        for i in range(a, b):
            s, e = offsets[i]
            if s <= pos < e:
                return i
        return None

    def char_to_word(self, char_pos: int, sequence_index: int = 0) -> int | None:
        """The word of sequence ``sequence_index`` that holds ``char_pos``."""
        token = self.char_to_token(char_pos, sequence_index)
        return None if token is None else self.token_to_word(token)

    # -- in place, as tokenizers' Encoding --
    def pad(self, length: int, **kwargs) -> None:
        """Pads to ``length`` tokens (in place; the overflowing parts too): keyword options
        ``direction`` ("right" or "left"), ``pad_id``, ``pad_type_id``, ``pad_token``."""
        length = usize(length, "length")
        direction, pad_id, pad_type_id, pad_token = "right", 0, 0, "[PAD]"
        for key, value in kwargs.items():
            if key == "direction":
                string(value, "direction")
                if value not in ("left", "right"):
                    raise ValueError(f"Unknown `direction`: `{value}`. Use one of `left` or `right`")
                direction = value
            elif key in ("pad_id", "pad_type_id"):
                v = u32(value, key)
                pad_id, pad_type_id = (v, pad_type_id) if key == "pad_id" else (pad_id, v)
            elif key == "pad_token":
                pad_token = string(value, "pad_token")
            else:  # tokenizers prints this and goes on
                warnings.warn(f"Ignored unknown kwarg option {key}", stacklevel=2)
        rec = self._record()
        pad(rec, length, pad_id, pad_type_id, pad_token, direction)
        self._assign(rec)

    def truncate(self, max_length: int, stride: int = 0, direction: str = "right") -> None:
        """Keeps ``max_length`` tokens (in place): the rest become the overflowing parts
        (windows overlapping by ``stride``; those it had are dropped) and the sequences are
        forgotten, as tokenizers' ``truncate``."""
        max_length, stride = usize(max_length, "max_length"), usize(stride, "stride")
        if string(direction, "direction") not in ("left", "right"):
            raise ValueError(f"Invalid truncation direction value : {direction}")
        rec = self._record()
        truncate(rec, max_length, stride, direction)
        self._assign(rec)

    @staticmethod
    def merge(encodings, growing_offsets: bool = True) -> "Encoding":
        """The encodings one after the other; with ``growing_offsets`` each one's offsets start
        where the one before ends."""
        if not isinstance(encodings, (list, tuple)):
            raise TypeError(f"Encoding.merge() expects a list of Encodings, got {type(encodings).__name__}")
        if type(growing_offsets) is not bool:
            raise TypeError(f"'{type(growing_offsets).__name__}' object is not an instance of 'bool'")
        recs = []
        for e in encodings:
            if not isinstance(e, Encoding):
                raise TypeError(f"Encoding.merge() expects Encodings, got {type(e).__name__}")
            recs.append(e._record())
        return Encoding._of(merge(recs, growing_offsets))

    def _record(self) -> dict:
        """A new record of this encoding (its overflowing parts too)."""
        rec = record(self.ids, self.tokens, self.offsets, self.type_ids, self.special_tokens_mask, self.word_ids)
        rec["attention"] = self.attention_mask
        rec["ranges"] = dict(self._sequence_ranges())
        rec["overflowing"] = [o._record() for o in self._overflowing]
        return rec

    def _assign(self, rec: dict) -> None:
        self._set(rec)

    def _materialize(self) -> None:
        if self._lazy is not None:
            self._assign(self._record())

    def __reduce__(self):
        return Encoding._of, (self._record(),)

    def __len__(self) -> int:
        if self._lazy is not None:
            _, n, pre, post, _, _ = self._parts()
            return len(pre) + n + len(post) + (self._pad[1] if self._pad else 0)
        return len(self._ids)

    def __repr__(self) -> str:
        return (f"Encoding(num_tokens={len(self)}, attributes=[ids, type_ids, tokens, offsets, attention_mask, "
                "special_tokens_mask, overflowing])")


# ---- records ------------------------------------------------------------------------------

_LISTS = ("ids", "tokens", "offsets", "type_ids", "special", "words")


def record(ids: list, tokens: list, offsets: list, type_ids: list, special: list | None = None,
           words: list | None = None) -> dict:
    """A record of n tokens (special mask zeros and words None unless given, no sequence
    ranges, nothing padded or overflowing)."""
    n = len(ids)
    return {"ids": ids, "tokens": tokens, "offsets": offsets, "type_ids": type_ids,
            "special": [0] * n if special is None else special, "words": [None] * n if words is None else words,
            "attention": None, "ranges": {}, "overflowing": []}


def clone(rec: dict) -> dict:
    """A deep copy (Rust's clone): lists copied, overflowing parts cloned."""
    out = {k: list(rec[k]) for k in _LISTS}
    att = rec.get("attention")
    out["attention"] = None if att is None else list(att)
    out["ranges"] = dict(rec["ranges"])
    out["overflowing"] = [clone(o) for o in rec.get("overflowing") or ()]
    return out


def set_sequence_id(rec: dict, sequence_id: int) -> None:
    """All of rec's tokens are sequence sequence_id's (tokenizers' set_sequence_id)."""
    rec["ranges"][sequence_id] = (0, len(rec["ids"]))


def _slice(rec: dict, a: int, b: int) -> dict:
    out = {k: rec[k][a:b] for k in _LISTS}
    att = rec.get("attention")
    out["attention"] = None if att is None else att[a:b]
    out["ranges"] = {}  # truncation loses them, as tokenizers'
    out["overflowing"] = []
    return out


def windows(n: int, max_len: int, stride: int, direction: str) -> list | None:
    """The parts truncate cuts n tokens into, (start, stop) each, the kept one first; None when
    nothing is cut, [] for max_len 0 (all of it becomes one overflowing part)."""
    if max_len >= n:
        return None
    if max_len == 0:
        return []
    if stride >= max_len:
        raise HFError(f"`stride` must be strictly less than `max_len={max_len}` (note that `max_len` may be "
                      "shorter than the max length of the original model, as it subtracts the number of special "
                      "characters (tokenizers panics here)")
    step = max_len - stride
    parts = []
    if direction == "right":
        for start in range(0, n, step):
            stop = min(start + max_len, n)
            parts.append((start, stop))
            if stop == n:
                break
    else:
        for last in range(n - 1, -1, -step):
            start = max(last + 1 - max_len, 0)
            parts.append((start, last + 1))
            if start == 0:
                break
    return parts


def truncate(rec: dict, max_len: int, stride: int, direction: str) -> None:
    """Keeps max_len tokens of rec (the first ones for direction "right", the last for "left")
    and makes the rest its overflowing parts, windows of max_len tokens that overlap by stride
    (the overflowing parts rec had are dropped, as tokenizers drops them)."""
    parts = windows(len(rec["ids"]), max_len, stride, direction)
    if parts is None:
        return
    if not parts:  # the whole of it overflowing, its sequence ranges kept
        old = dict(rec)
        rec.clear()
        rec.update(record([], [], [], []))
        rec["overflowing"] = [old]
        return
    first = _slice(rec, *parts[0])
    first["overflowing"] = [_slice(rec, a, b) for a, b in parts[1:]]
    rec.clear()
    rec.update(first)


def merge_with(rec: dict, other: dict, growing_offsets: bool = False) -> None:
    """Appends other to rec, combining the overflowing parts as tokenizers does: each of rec's
    with other and with each of other's, then rec with each of other's.  other's offsets are
    as they are, or with growing_offsets shifted by the end of rec's last token."""
    overs = []
    for mine in rec["overflowing"]:
        n = clone(mine)
        merge_with(n, clone(other), growing_offsets)
        overs.append(n)
        for theirs in other["overflowing"]:
            n = clone(mine)
            merge_with(n, clone(theirs), growing_offsets)
            overs.append(n)
    for theirs in other["overflowing"]:
        n = clone(rec)
        merge_with(n, clone(theirs), growing_offsets)
        overs.append(n)
    shift = len(rec["ids"])
    rec["ranges"] = {**rec["ranges"], **{k: (x + shift, y + shift) for k, (x, y) in other["ranges"].items()}}
    a, b = rec.get("attention"), other.get("attention")
    if a is not None or b is not None:
        rec["attention"] = (a if a is not None else [1] * len(rec["ids"])) + \
                           (b if b is not None else [1] * len(other["ids"]))
    start = rec["offsets"][-1][1] if growing_offsets and rec["offsets"] else 0
    for k in _LISTS:
        if k == "offsets" and start:
            rec[k] = rec[k] + [(x + start, y + start) for x, y in other[k]]
        else:
            rec[k] = rec[k] + other[k]
    rec["overflowing"] = overs


def merge(recs: list, growing_offsets: bool = False) -> dict:
    """The records one after the other (tokenizers' Encoding::merge)."""
    out = record([], [], [], [])
    for r in recs:
        merge_with(out, r, growing_offsets)
    return out


def pad(rec: dict, target: int, pad_id: int, pad_type_id: int, pad_token: str, direction: str) -> None:
    """Pads rec (and each overflowing part) to target tokens: pad_id / pad_token / pad_type_id,
    offsets (0, 0), special mask 1, attention 0; a longer one is left as it is."""
    for o in rec["overflowing"]:
        pad(o, target, pad_id, pad_type_id, pad_token, direction)
    n = len(rec["ids"])
    if n >= target:
        return
    k = target - n
    att = rec.get("attention")
    att = [1] * n if att is None else att
    fill = {"ids": [pad_id] * k, "tokens": [pad_token] * k, "offsets": [(0, 0)] * k, "type_ids": [pad_type_id] * k,
            "special": [1] * k, "words": [None] * k}
    if direction == "left":
        for key, v in fill.items():
            rec[key] = v + rec[key]
        rec["attention"] = [0] * k + att
        rec["ranges"] = {s: (x + k, y + k) for s, (x, y) in rec["ranges"].items()}
    else:
        for key, v in fill.items():
            rec[key] = rec[key] + v
        rec["attention"] = att + [0] * k
