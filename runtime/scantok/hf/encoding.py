"""Encodings: the public :class:`Encoding` (the fields of ``tokenizers.Encoding``), and the
record the general encode path builds, with what tokenizers does to it after the model:
``truncate`` (into overflowing parts), ``merge`` (the post-processor's pieces, with the
overflowing parts combined) and ``pad``, as tokenizers' ``Encoding`` (encoding.rs, 0.23.3).

A record is a dict of parallel lists: ``ids``, ``tokens``, ``offsets``, ``type_ids``,
``special`` (special_tokens_mask), ``attention`` (None until padding: all ones) and
``overflowing`` (a list of records)."""
from __future__ import annotations

from .errors import HFError

__all__ = ["Encoding"]

_pyl = None


def _pylist():
    """scantok._pylist, imported once (a relative import in a function costs ~2 us a call)."""
    global _pyl
    if _pyl is None:
        from .. import _pylist as mod

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

    # a lazy encoding (_lazy set: the C arrays, n, the post-processor's tokens around them, the
    # token table) has _lazy, _pad and _overflowing only (each slot set costs ~15 ns, a batch of
    # short texts makes thousands); a materialized one has the lists, _attention and _overflowing
    __slots__ = ("_ids", "_tokens", "_offsets", "_special_tokens_mask", "_type_ids", "_attention",
                 "_overflowing", "_lazy", "_pad")

    def __init__(self, ids, tokens, offsets, special_tokens_mask, type_ids, attention_mask=None, overflowing=()):
        self._ids = ids
        self._tokens = tokens
        self._offsets = offsets
        self._special_tokens_mask = special_tokens_mask
        self._type_ids = type_ids
        self._attention = attention_mask  # None: all ones (nothing padded)
        self._overflowing = tuple(overflowing)
        self._lazy = None
        self._pad = None

    @classmethod
    def _of(cls, rec: dict) -> "Encoding":
        """The Encoding of a record (its overflowing parts too)."""
        return cls(rec["ids"], rec["tokens"], rec["offsets"], rec["special"], rec["type_ids"], rec.get("attention"),
                   [cls._of(o) for o in rec.get("overflowing") or ()])

    @classmethod
    def _from_arrays(cls, arrays, n: int, wrap, table) -> "Encoding":
        """The model tokens' ids, starts and ends (arrays: the bytes hf_encode_offsets returns,
        3n uint32 in that order, read in place by scantok._pylist as (arrays, index)), the
        post-processor's (prefix, suffix, sequence type id) and the id -> token table."""
        e = cls.__new__(cls)
        e._lazy = (arrays, n, wrap, table)
        e._overflowing = ()
        e._pad = None
        return e

    @classmethod
    def _fast(cls, ids, wrap) -> "Encoding":
        """encode_batch_fast's encoding of model ids (a bytes object of native uint32, read in
        place, or a list) inside the post-processor's (prefix, suffix, sequence type id)."""
        e = cls.__new__(cls)
        e._lazy = (ids, len(ids) >> 2 if type(ids) is bytes else len(ids), wrap, None)
        e._overflowing = ()
        e._pad = None
        return e

    def _truncated(self, parts: list, over_wrap) -> "Encoding":
        """This new lazy encoding cut into parts (windows' result, not None): the first kept,
        the others its overflowing parts, inside over_wrap (the post-processor's tokens around
        an overflowing part, which may differ from the sequence's: a template gives the
        sequence its type id, not the overflowing parts)."""
        arrays, n, wrap, table = self._lazy
        w = 1 if table is None else 3  # encode_batch_fast's: ids only; encode's: ids, starts, ends

        def part(a: int, b: int, wrap=over_wrap) -> "Encoding":
            if type(arrays) is bytes:
                sub = b"".join(arrays[4 * (k * n + a):4 * (k * n + b)] for k in range(w))
            else:
                sub = arrays[a:b]
            e = Encoding.__new__(Encoding)
            e._lazy = (sub, b - a, wrap, table)
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
                           ("_special_tokens_mask", 1), ("_type_ids", p.pad_type_id)):
            v = list(getattr(self, name))
            setattr(self, name, [fill] * k + v if left else v + [fill] * k)
        self._attention = [0] * k + list(att) if left else list(att) + [0] * k

    def _padding(self, lst: list, fill) -> list:
        """lst (a lazy encoding's field) with its padding, if any."""
        pad = self._pad
        if pad is None:
            return lst
        return [fill] * pad[1] + lst if pad[0] else lst + [fill] * pad[1]

    def _parts(self):
        arrays, n, (pre, post, type_id), table = self._lazy
        return arrays, n, pre, post, type_id, table

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

    def __len__(self) -> int:
        if self._lazy is not None:
            _, n, pre, post, _, _ = self._parts()
            return len(pre) + n + len(post) + (self._pad[1] if self._pad else 0)
        return len(self._ids)

    def __repr__(self) -> str:
        return (f"Encoding(num_tokens={len(self)}, attributes=[ids, type_ids, tokens, offsets, attention_mask, "
                "special_tokens_mask, overflowing])")


# ---- records ------------------------------------------------------------------------------

_LISTS = ("ids", "tokens", "offsets", "type_ids", "special")


def record(ids: list, tokens: list, offsets: list, type_ids: list, special: list | None = None) -> dict:
    """A record of n tokens (special mask zeros unless given, nothing padded or overflowing)."""
    return {"ids": ids, "tokens": tokens, "offsets": offsets, "type_ids": type_ids,
            "special": [0] * len(ids) if special is None else special, "attention": None, "overflowing": []}


def clone(rec: dict) -> dict:
    """A deep copy (Rust's clone): lists copied, overflowing parts cloned."""
    out = {k: list(rec[k]) for k in _LISTS}
    att = rec.get("attention")
    out["attention"] = None if att is None else list(att)
    out["overflowing"] = [clone(o) for o in rec.get("overflowing") or ()]
    return out


def _slice(rec: dict, a: int, b: int) -> dict:
    out = {k: rec[k][a:b] for k in _LISTS}
    att = rec.get("attention")
    out["attention"] = None if att is None else att[a:b]
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
    if not parts:
        old = dict(rec)
        rec.update(record([], [], [], []))
        rec["overflowing"] = [old]
        return
    first = _slice(rec, *parts[0])
    first["overflowing"] = [_slice(rec, a, b) for a, b in parts[1:]]
    rec.clear()
    rec.update(first)


def merge_with(rec: dict, other: dict) -> None:
    """Appends other to rec (offsets as they are), combining the overflowing parts as
    tokenizers does: each of rec's with other and with each of other's, then rec with each of
    other's."""
    overs = []
    for mine in rec["overflowing"]:
        n = clone(mine)
        merge_with(n, clone(other))
        overs.append(n)
        for theirs in other["overflowing"]:
            n = clone(mine)
            merge_with(n, clone(theirs))
            overs.append(n)
    for theirs in other["overflowing"]:
        n = clone(rec)
        merge_with(n, clone(theirs))
        overs.append(n)
    a, b = rec.get("attention"), other.get("attention")
    if a is not None or b is not None:
        rec["attention"] = (a if a is not None else [1] * len(rec["ids"])) + \
                           (b if b is not None else [1] * len(other["ids"]))
    for k in _LISTS:
        rec[k] = rec[k] + other[k]
    rec["overflowing"] = overs


def merge(recs: list) -> dict:
    """The records one after the other (tokenizers' Encoding::merge)."""
    out = record([], [], [], [])
    for r in recs:
        merge_with(out, r)
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
            "special": [1] * k}
    if direction == "left":
        for key, v in fill.items():
            rec[key] = v + rec[key]
        rec["attention"] = [0] * k + att
    else:
        for key, v in fill.items():
            rec[key] = rec[key] + v
        rec["attention"] = att + [0] * k
