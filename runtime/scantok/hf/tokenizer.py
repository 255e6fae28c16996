"""``scantok.Tokenizer``: a HuggingFace ``tokenizers.Tokenizer`` for tokenizer.json files whose
model is BPE or WordLevel, with the same ids, tokens, offsets and decoding (tokenizers 0.23.3).

Pipeline, as tokenizers runs it: added tokens are split out of the original text; every other
part is normalized (alignments kept), normalized added tokens are split out, the pre-tokenizer
cuts the rest into pieces, the model turns each piece into tokens; then each sequence (one, or
a pair) is truncated if set (the cut-off parts become overflowing encodings), the
post-processor adds special tokens / trims offsets, and the encodings are padded if set.
Offsets are ``str`` indices into the original text, as the Python API of tokenizers gives them.

Fast path: a pre-tokenizer made of splits that run on compiled scanners followed by
``ByteLevel`` (no prefix space), with a byte-level BPE model, runs as one C call per text
(stages, merges, offsets) without the GIL.
"""
from __future__ import annotations

import copy
import json
import re
import os
import struct
import sys
import threading
from operator import index
from typing import Any, Iterable, Mapping, Sequence

try:
    import numpy  # noqa: F401  (the BPE model's tables and the C paths' buffers)
except ImportError:
    raise ImportError("scantok.Tokenizer needs numpy: pip install numpy (or scantok[numpy])") from None

from ..threadpool import PARALLEL_MIN, map_all, size_chunks, usable_cpus
from .added_tokens import AddedToken, AddedVocabulary, with_tokenizers_ids
from .args import is_bool
from .bpe import _C_CHARS_MIN, BPEModel, WordLevelModel
from .decoders import Decoder, byte_level_bytes
from .encoding import Encoding, _pylist, record, windows
from .errors import HFError, UnsupportedComponentError, _batch_surrogate_error, _check_text, _surrogate_error
from .normalizers import _NS, _norm_steps, aligned_chain, nf_aligned, nf_forms, nf_unchanged
from .padding import Padding, pad_encodings, pad_records
from .post_processors import PostProcessor
from .pre_tokenizers import BYTE_CHARS, ByteLevelOp, MetaspaceOp, _Step, pretok_ops
from .truncation import Truncation, truncate_pair

# scantok._pylist.hf_encode_offsets and lazy_encoding, set by the first Tokenizer made
_hf_encode_offsets = None
_lazy_encoding = None

def _flag(v, name: str, where: str) -> bool:
    """v as a bool, as tokenizers reads these flags: a bool (numpy's too), else TypeError."""
    if is_bool(v):
        return bool(v)
    raise TypeError(f"{where}: {name} must be a bool, got {type(v).__name__}")


def _checked_id(i, where: str) -> int:
    """i as an id: an int (TypeError otherwise) in 0 .. 2**32 - 1 (OverflowError otherwise),
    as tokenizers reads ids (u32)."""
    i = index(i)
    if not 0 <= i < 1 << 32:
        raise OverflowError(f"{where}: id {i} is out of range (ids are 0 <= id < 2**32)")
    return i


__all__ = ["Tokenizer", "Encoding"]

_BEHAVIOR_CODE = {"Removed": 0, "Isolated": 1, "MergedWithPrevious": 2, "MergedWithNext": 3, "Contiguous": 4}


class _CharPiece:
    """How a text segment becomes the one piece a BPE model over characters reads when the
    normalizer and pre-tokenizer only put a prefix before it and replace each space by one
    character, so that its alignments follow from a formula (no alignment list is made):

    * ``Prepend(p)`` then ``Replace(" ", r)``, no pre-tokenizer (Llama 2 and Mistral as
      transformers converts them, legacy): p + the replaced segment, p's spaces replaced too;
    * ``Replace(" ", r)`` alone, no pre-tokenizer (Gemma): the replaced segment;
    * ``Metaspace(r, prepend_scheme, split=False)``, no normalizer (the non-legacy conversions):
      the replaced segment, with r before it unless it starts with r, where the scheme is
      "always", or "first" and the segment starts the text.

    piece() gives the piece, k (the prefix's length: its characters and the segment's first come
    from the segment's first character, every other character of the piece from the one k
    before it) and first_end, the end of a token that ends at the first character: 1, or 0
    after ``Prepend("")``, which makes that character an insertion aligned to (0, 0)."""

    __slots__ = ("prefix", "rep", "scheme", "metas")

    def __init__(self, prefix: str | None, rep: str, scheme: str):
        self.prefix, self.rep, self.scheme = prefix, rep, scheme  # scheme: "prepend", "always", "first", "never"
        # pylist.c's meta: the piece made in C as the text becomes UTF-8 (prefix put / none /
        # for a batch); None where the prefix or rep is no UTF-8 (a lone surrogate: piece()'s
        # str, whose conversion raises CPython's error)
        put = prefix if scheme == "prepend" else rep
        try:
            put_b = put.encode("utf-8")
            rep.encode("utf-8")
        except UnicodeEncodeError:
            self.metas = None
        else:
            batch = (put_b, rep, False) if scheme == "prepend" else (b"", rep, False) if scheme == "never" \
                else (put_b, rep, True)
            self.metas = ((put_b, rep, False), (b"", rep, False), batch)

    @classmethod
    def of(cls, obj: Mapping, model, ops: list) -> "_CharPiece | None":
        if not isinstance(model, BPEModel) or model.prefix is not None or model.suffix is not None:
            return None
        norm = obj.get("normalizer")
        if ops:
            op = ops[0]
            if len(ops) == 1 and isinstance(op, MetaspaceOp) and op.step is None and norm is None \
                    and len(op.replacement) == 1:
                return cls(None, op.replacement, op.prepend_scheme)
            return None
        if _space_replace(norm):
            return cls(None, norm["content"], "never")
        if not isinstance(norm, Mapping) or norm.get("type") != "Sequence":
            return None
        steps = norm.get("normalizers")
        if not isinstance(steps, list) or len(steps) != 2:
            return None
        pre, rep = steps
        if not (isinstance(pre, Mapping) and pre.get("type") == "Prepend" and isinstance(pre.get("prepend"), str)):
            return None
        if not _space_replace(rep):
            return None
        # Replace runs after Prepend: a space in the prefix is replaced too (found by a campaign);
        # one character for one, so the prefix keeps its length
        return cls(pre["prepend"].replace(" ", rep["content"]), rep["content"], "prepend")

    def piece(self, seg: str, first: bool) -> tuple[str, int, int]:
        """(the piece, k, first_end) of a non-empty segment (first: it starts the text)."""
        t = seg.replace(" ", self.rep)
        if self.scheme == "prepend":
            return self.prefix + t, len(self.prefix), 1 if self.prefix else 0
        if (self.scheme == "always" or (self.scheme == "first" and first)) and not t.startswith(self.rep):
            return self.rep + t, 1, 1
        return t, 0, 1

    def meta(self, seg: str, first: bool) -> tuple[tuple, int, int]:
        """(pylist.c's meta, k, first_end) of a non-empty segment: piece()'s k and first_end,
        and the meta that makes its piece in C (metas not None)."""
        if self.scheme == "prepend":
            return self.metas[0], len(self.prefix), 1 if self.prefix else 0
        if (self.scheme == "always" or (self.scheme == "first" and first)) and seg[0] != " " and seg[0] != self.rep:
            return self.metas[0], 1, 1
        return self.metas[1], 0, 1

    def most_prefix(self) -> int:
        """The longest prefix piece() puts before a segment."""
        return len(self.prefix) if self.scheme == "prepend" else 1


def _stage_text(text: str, first: bool, rep: str | None, scheme: str | None, prefix: bool) -> tuple[str, int]:
    """Tokenizer._with_prefix's text and prefix length, from the tokenizer's Metaspace
    replacement and scheme (rep None: none) and ByteLevel's add_prefix_space."""
    if rep is not None:
        t = text.replace(" ", rep)
        if t and (scheme == "always" or (scheme == "first" and first)) and not t.startswith(rep):
            return rep + t, 1
        return t, 0
    if prefix and text and not text.startswith(" "):
        return " " + text, 1
    return text, 0


def _space_replace(spec) -> bool:
    """A Replace normalizer of " " by one character."""
    return (isinstance(spec, Mapping) and spec.get("type") == "Replace" and spec.get("pattern") == {"String": " "}
            and isinstance(spec.get("content"), str) and len(spec["content"]) == 1)


class _Piece:
    """A part of the text being pre-tokenized: its text and, per char, the range of the
    original text it comes from (``align``), or ``None`` for the identity shifted by ``base``.
    ``raw_bytes``: a ByteLevel transform is pending (the model reads the UTF-8 directly)."""

    __slots__ = ("text", "align", "base", "raw_bytes")

    def __init__(self, text: str, align, base: int, raw_bytes: bool = False):
        self.text, self.align, self.base, self.raw_bytes = text, align, base, raw_bytes

    def slice(self, a: int, b: int) -> "_Piece":
        if self.align is None:
            return _Piece(self.text[a:b], None, self.base + a, self.raw_bytes)
        return _Piece(self.text[a:b], self.align[a:b], 0, self.raw_bytes)

    def orig(self, a: int, b: int) -> tuple[int, int]:
        if self.align is None:
            return self.base + a, self.base + b
        return self.align[a][0], self.align[b - 1][1]

    def materialize(self) -> list:
        if self.align is None:
            n, base = len(self.text), self.base
            self.align = [(base + i, base + i + 1) for i in range(n)]
        return self.align

    def prepend(self, s: str) -> "_Piece":
        align = self.materialize()
        return _Piece(s + self.text, [align[0]] * len(s) + align, 0, self.raw_bytes)

    def to_byte_chars(self) -> "_Piece":
        align = self.materialize()
        text, al = [], []
        for ch, a in zip(self.text, align):
            bs = ch.encode("utf-8", "surrogatepass")
            text.extend(BYTE_CHARS[b] for b in bs)
            al.extend([a] * len(bs))
        return _Piece("".join(text), al, 0)


def _split(step: _Step, pieces: list[_Piece]) -> list[_Piece]:
    out: list[_Piece] = []
    for p in pieces:
        spans: list[tuple[int, int]] = []
        step.split(p.text, 0, spans)
        out.extend(p.slice(a, b) for a, b in spans)
    return out


def _input_sequence(seq, pretokenized: bool):
    """One sequence of an input, checked as tokenizers extracts it: a str, or with
    pretokenized a list or tuple of str (its words, as a list)."""
    if not pretokenized:
        if not isinstance(seq, str):
            raise TypeError("TextInputSequence must be str")
        return seq
    if isinstance(seq, (list, tuple)) and all(isinstance(w, str) for w in seq):
        return list(seq)
    raise TypeError("PreTokenizedInputSequence must be Union[List[str], Tuple[str]]")


def _wrap_around(r: dict, a: int, b: int, spans: list) -> tuple | None:
    """(prefix, suffix, type id, sequence ranges) around the two probe tokens a, b (words 0
    and 1) in a post-processed record, or None unless the rest are special tokens with offsets
    (0, 0) and no word, and a, b kept as they were.  The ranges as (sequence id, start, stop,
    ga, gb): for n tokens in place of the two, (start + ga (n - 2), stop + gb (n - 2))."""
    try:
        k = r["ids"].index(a)
    except ValueError:
        return None
    if (r["ids"][k + 1:k + 2] != [b] or r["offsets"][k:k + 2] != spans or r["special"][k:k + 2] != [0, 0]
            or r["type_ids"][k] != r["type_ids"][k + 1] or (r.get("attention") or [1])[0] != 1
            or r["words"][k:k + 2] != [0, 1]):
        return None
    ends = [j for j in range(len(r["ids"])) if j not in (k, k + 1)]
    if any(r["offsets"][j] != (0, 0) or r["special"][j] != 1 or r["ids"][j] < 0 or r["words"][j] is not None
           for j in ends):
        return None
    ranges = []
    for sid, (x, y) in r["ranges"].items():
        if y <= k:  # before the sequence
            ranges.append((sid, x, y, 0, 0))
        elif x >= k + 2:  # after it
            ranges.append((sid, x, y, 1, 1))
        elif x <= k and y >= k + 2:  # around it
            ranges.append((sid, x, y, 0, 1))
        else:
            return None
    entries = [(r["ids"][j], r["tokens"][j], r["type_ids"][j]) for j in range(len(r["ids"]))]
    return entries[:k], entries[k + 2:], r["type_ids"][k], tuple(ranges)


_ASYNC_POOL = None
_ASYNC_LOCK = threading.Lock()


def _async_pool():
    """The threads the async_* methods run on (made at first use; as many as usable cores)."""
    global _ASYNC_POOL
    with _ASYNC_LOCK:
        if _ASYNC_POOL is None:
            from concurrent.futures import ThreadPoolExecutor

            _ASYNC_POOL = ThreadPoolExecutor(max_workers=max(2, usable_cpus()), thread_name_prefix="scantok-async")
    return _ASYNC_POOL


def _raise_surrogate_first(items: list, where: str) -> None:
    """In a batch's except block: tokenizers converts every input before it encodes any, so a
    lone surrogate anywhere in the batch is its TypeError, whatever an earlier input raised
    (the C paths' UnicodeEncodeError, HFError, ...); raises that one if there is one (the
    caller re-raises its own otherwise)."""
    err = _batch_surrogate_error(items, where)
    if err is not None:
        raise err from None


def _all_str(items: list) -> bool:
    """Every item is a str (not a subclass): the batch's str paths apply.  map(type) runs in C
    (a generator per item cost 3 us of a 25 us batch of 64 short texts)."""
    return set(map(type, items)) <= _STR_ONLY


_STR_ONLY = {str}


_ADDED_OPTIONS = ("single_word", "lstrip", "rstrip", "normalized", "special")


def _added_entry(t, special: bool, where: str) -> dict:
    """An added token as its tokenizer.json entry (without id), as tokenizers' add_tokens
    (special False) or add_special_tokens (special True) reads it."""
    if isinstance(t, str):
        if _has_surrogate(t):  # no UTF-8, no tokenizer.json: tokenizers refuses such a str
            raise TypeError(f"{where}: the token holds a lone surrogate")
        return {"content": t, "single_word": False, "lstrip": False, "rstrip": False, "normalized": not special,
                "special": special}
    if isinstance(t, AddedToken):
        if special:  # as tokenizers' add_special_tokens, which makes the caller's token special
            t.special = True
        fields = {k: getattr(t, k) for k in ("content",) + _ADDED_OPTIONS}
    elif isinstance(t, Mapping):
        fields = dict(t)
    elif all(hasattr(t, k) for k in ("content",) + _ADDED_OPTIONS):  # tokenizers.AddedToken
        fields = {k: getattr(t, k) for k in ("content",) + _ADDED_OPTIONS}
        if special and not fields["special"] and fields["normalized"]:
            # tokenizers' AddedToken("x") and AddedToken("x", normalized=True) look alike from
            # Python, and add_special_tokens gives them different normalized flags (False, True)
            raise HFError(f"{where}: {fields['content']!r}: say special=True (and normalized) on the AddedToken, "
                          "or pass a str or a scantok.AddedToken: whether it is normalized cannot be read from it")
    else:
        raise TypeError("Input must be a List[Union[str, AddedToken]]")
    content = fields.get("content")
    if not isinstance(content, str):
        raise HFError(f"{where}: 'content' must be a string")
    if _has_surrogate(content):  # no UTF-8, no tokenizer.json: tokenizers refuses such a str
        raise TypeError(f"{where}: 'content' holds a lone surrogate")
    out = {"content": content}
    for k in _ADDED_OPTIONS:
        v = fields.get(k, (not special) if k == "normalized" else False)
        if not isinstance(v, bool):
            raise HFError(f"{where}: '{k}' must be a boolean")
        out[k] = v
    if special:
        out["special"] = True
    return out


def _check_input(seqs: tuple, pretokenized: bool, where: str) -> None:
    """TextEncodeError for a lone surrogate in an input's sequences (tokenizers refuses such a
    str when it reads its arguments, before any encoding)."""
    for seq in seqs:
        for text in seq if pretokenized else (seq,):
            _check_text(text, where)


def _encode_input(item, pretokenized: bool) -> tuple:
    """An item of encode_batch's input as (sequence,) or (sequence, pair), as tokenizers reads
    it: a sequence, or a tuple (or another sequence) of two."""
    try:
        return (_input_sequence(item, pretokenized),)
    except TypeError:
        pass
    if isinstance(item, Sequence) and not isinstance(item, str) and len(item) == 2:
        return (_input_sequence(item[0], pretokenized), _input_sequence(item[1], pretokenized))
    kind = "PreTokenized" if pretokenized else "Text"
    raise TypeError(f"{kind}EncodeInput must be Union[{kind}InputSequence, Tuple[{kind}InputSequence, "
                    f"{kind}InputSequence]]")


def _json_obj(data: str | bytes) -> dict:
    try:
        return _json_obj_checked(data)
    except RecursionError:  # json.loads' and _surrogate_path's
        raise HFError("not valid JSON: arrays or objects nested too deeply") from None


def _json_obj_checked(data: str | bytes) -> dict:
    try:
        if isinstance(data, (bytes, bytearray)) and not data.isascii():
            data.decode("utf-8")  # strict: json.loads decodes bytes with surrogatepass
        obj = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise HFError(f"not valid JSON: {e}") from None
    if not isinstance(obj, dict):
        raise HFError("tokenizer.json must hold a JSON object")
    # a lone surrogate (an escape such as "\ud800" without its pair, or, in a str, the
    # character itself): tokenizers' JSON reader refuses the file, where json.loads keeps it
    if re.search(r"\\u[dD][89a-fA-F]" if isinstance(data, str) else rb"\\u[dD][89a-fA-F]", data) or (
            isinstance(data, str) and not data.isascii() and _has_surrogate(data)):
        where = _surrogate_path(obj, "")
        if where is not None:
            raise HFError(f"not valid JSON: a lone surrogate in {where or 'the file'}")
    return obj


def _has_surrogate(s: str) -> bool:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _surrogate_path(obj, path: str) -> str | None:
    """Where in a loaded JSON value a string (a key or a value) holds a lone surrogate."""
    if isinstance(obj, str):
        return path if _has_surrogate(obj) else None
    if isinstance(obj, dict):
        for k, v in obj.items():
            if _has_surrogate(k):
                return f"{path}: the key {k!r}"
            p = _surrogate_path(v, f"{path}.{k}" if path else k)
            if p is not None:
                return p
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            p = _surrogate_path(v, f"{path}[{i}]")
            if p is not None:
                return p
    return None


class Tokenizer:
    """A HuggingFace tokenizer.json (BPE or WordLevel model) with tokenizers' results.

    >>> import scantok
    >>> tok = scantok.Tokenizer.from_str(
    ...     '{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]},'
    ...     ' "pre_tokenizer": {"type": "Whitespace"}}')
    >>> enc = tok.encode("ab ba")
    >>> enc.ids, enc.tokens, enc.offsets
    ([2, 1, 0], ['ab', 'b', 'a'], [(0, 2), (3, 4), (4, 5)])
    >>> tok.decode([2, 1, 0])
    'ab b a'
    """

    def __init__(self, obj: Mapping):
        try:
            self._init(obj)
        except RecursionError:  # the components' readers recurse into Sequences
            raise HFError("tokenizer.json: components nested too deeply") from None

    def _init(self, obj: Mapping) -> None:
        if not isinstance(obj, Mapping):
            raise HFError("tokenizer.json must hold a JSON object")
        # (truncation, padding), replaced as one: each call reads it once, so that another
        # thread's enable_* never gives it half of each
        self._lengths: tuple = (Truncation.from_json(obj.get("truncation")), Padding.from_json(obj.get("padding")))
        self._lengths_lock = threading.Lock()
        self._in_flight = _InFlight()
        model = obj.get("model")
        if not isinstance(model, Mapping):
            raise HFError("missing 'model' object")
        mtype = model.get("type")
        if mtype is None and "merges" in model:
            mtype = "BPE"
        if mtype == "BPE":
            self._model: Any = BPEModel(model)
        elif mtype == "WordLevel":
            self._model = WordLevelModel(model)
        else:
            raise UnsupportedComponentError(f"model: unsupported model type {mtype!r} (BPE or WordLevel)")
        obj = self._obj = _merges_untracked(obj)
        self._norm = _norm_steps(obj.get("normalizer"), extended=True)
        # a normalizer of Unicode forms only leaves most texts as they are: those take the C
        # paths whole (_takes_whole)
        self._nf_forms = nf_forms(obj.get("normalizer"))
        self._nf_unchanged = nf_unchanged(self._nf_forms) if self._nf_forms else None
        # forms, Replace, Lowercase and StripAccents (CLIP's normalizer, the quicktour's): a
        # text is normalized with numpy alignments and takes the C paths (_encode_chained)
        self._chain = aligned_chain(obj.get("normalizer")) if self._norm and not self._nf_forms else None
        self._ops = pretok_ops(obj.get("pre_tokenizer"))
        self._char_fast = _CharPiece.of(obj, self._model, self._ops)
        added = with_tokenizers_ids(obj.get("added_tokens") or [], self._model.vocab)
        if added != (obj.get("added_tokens") or []):
            obj = self._obj = {**obj, "added_tokens": added}  # to_str writes tokenizers' ids
        self._added = AddedVocabulary(added, self._normalize_str if self._norm else None)
        self._has_added = bool(self._added)  # encode() asks per call (a Python __bool__ each)
        self._post = PostProcessor(obj.get("post_processor"), self.token_to_id)
        # the ids decode(skip_special_tokens=True) drops: tokenizers drops a token whose string
        # (id_to_token's) is a special token's content, so not a normalized special token whose
        # normalized content differs, but a vocabulary token spelt as a special one
        self._skip_ids = self._special_ids()
        self._decoder = Decoder(obj.get("decoder"))
        # a ByteLevel decoder's bytes per id, made on first decode of the id (see decode)
        self._id_bytes: dict[int, bytes] | None = {} if self._decoder.byte_level_only else None
        # other decoders whose chain starts with per-token steps: each id's text through them, as
        # the first token and as another, made on first decode of the id (see _decode_per_token)
        self._id_text: dict[int, tuple[str, str]] | None = \
            {} if self._decoder.head and self._decoder.spec is not None and self._id_bytes is None else None
        # a ByteLevel that ends the pre-tokenizer hands the model raw UTF-8 (byte mode)
        # Metaspace's prepend_scheme "first" asks where a piece starts in the original text
        # (after any normalizer: one that deletes moves the start on, and the characters one
        # makes of the first character, Prepend's, a decomposition, NFC's singletons, Lowercase's
        # "İ", all start at 0, so a piece cut from inside them is first too): the ids-only paths
        # track the alignments too
        self._first_scheme = (any(isinstance(op, MetaspaceOp) and op.prepend_scheme == "first" for op in self._ops)
                              and bool(self._norm))
        self._last_byte_level = (bool(self._ops) and isinstance(self._ops[-1], ByteLevelOp)
                                 and self._model.takes_bytes)
        self._setup_fast()
        if self._stages is None or self._chars_c is not None:
            # no stages to hand the normalized text to, or a layout over characters whose
            # normalizer _CharPiece applies by formula (Gemma's Replace)
            self._chain = None
        global _hf_encode_offsets, _lazy_encoding  # encode()'s C calls, module globals: a lookup per call costs
        if _hf_encode_offsets is None:
            _hf_encode_offsets = _pylist().hf_encode_offsets
            _lazy_encoding = _pylist().lazy_encoding
        self._token_table = _TokenTable(self._model)
        # encode() of a text the C path takes whole: lazy Encoding around the C arrays
        # a text without added tokens runs whole as one C call (stages, merges, offsets)
        self._whole_c = self._stages is not None and (
            not self._norm or self._nf_unchanged is not None or self._chain is not None)
        self._lazy = self._lazy_wraps() if self._whole_c or self._chars_c is not None else None
        self._fast_wraps = self._lazy_wraps(fast=True)
        # truncation of a lazy encoding: its overflowing parts' wraps (None: the general path)
        self._lazy_over = self._lazy_wraps(overflowing=True) if self._lazy is not None else None
        self._fast_over = self._lazy_wraps(fast=True, overflowing=True) if self._fast_wraps is not None else None

    # -- loading / saving --
    @classmethod
    def from_str(cls, json_str: str | bytes) -> "Tokenizer":
        """Builds a tokenizer from the JSON text of a tokenizer.json."""
        return cls(_json_obj(json_str))

    @classmethod
    def from_buffer(cls, buffer: bytes) -> "Tokenizer":
        """Builds a tokenizer from the bytes of a tokenizer.json."""
        if not isinstance(buffer, bytes):
            raise TypeError(f"from_buffer() expects bytes, got {type(buffer).__name__}")
        return cls(_json_obj(buffer))

    @classmethod
    def from_file(cls, path: str | os.PathLike) -> "Tokenizer":
        """Loads a tokenizer.json file."""
        path = os.fspath(path)  # (TypeError for an int: open() would take it as a descriptor)
        with open(path, "rb") as f:
            raw = f.read()
        try:
            return cls(_json_obj(raw))
        except HFError as e:
            raise type(e)(f"{os.fspath(path)}: {e}") from None

    def to_str(self, pretty: bool = False) -> str:
        """The tokenizer.json text (loads in scantok and in tokenizers)."""
        return json.dumps(self._obj, ensure_ascii=False, indent=2 if pretty else None)

    def save(self, path: str | os.PathLike, pretty: bool = True) -> None:
        """Writes the tokenizer.json to path: whole or not at all (a temporary file beside it,
        renamed over it), so a failure leaves an existing file as it was."""
        from ..bpe.export import write_atomic

        write_atomic(path, self.to_str(pretty))

    # -- vocabulary --
    def get_vocab(self, with_added_tokens: bool = True) -> dict[str, int]:
        with_added_tokens = _flag(with_added_tokens, "with_added_tokens", "get_vocab()")
        v = dict(self._model.vocab)
        if with_added_tokens:
            for t in self._added.tokens:
                v[t.content] = t.id
        return v

    def get_vocab_size(self, with_added_tokens: bool = True) -> int:
        with_added_tokens = _flag(with_added_tokens, "with_added_tokens", "get_vocab_size()")
        return len(self.get_vocab(with_added_tokens))

    def token_to_id(self, token: str) -> int | None:
        if not isinstance(token, str):
            raise TypeError(f"token_to_id() expects str, got {type(token).__name__}")
        t = self._added.by_content.get(token)
        if t is not None:
            return t.id
        i = self._model.vocab.get(token)
        if i is None and not token.isascii():
            _check_text(token, "token_to_id()")  # a lone surrogate: tokenizers' UnicodeEncodeError
        return i

    def id_to_token(self, id: int) -> str | None:
        id = _checked_id(id, "id_to_token()")
        t = self._added.by_id.get(id)
        return t.norm if t is not None else self._model.inv.get(id)

    # -- normalization --
    def _normalize_str(self, text: str) -> str:
        ns = _NS(text, track=False)
        for step in self._norm:
            step(ns)
        return ns.text

    # -- the fast path --
    def _setup_fast(self) -> None:
        """The C stages (scanner, behaviour) when the whole pre-tokenizer can run in C."""
        self._stages = None
        # ByteLevel(add_prefix_space) alone: every text the batch path takes whole is one piece
        # before the regex, so its prefix space is a space put before the text (ids only)
        self._prefix_space = False
        # Metaspace(split=True) alone over a model of characters: its replacement character;
        # the text the stages read has its spaces replaced and the prefix put before it
        # (_with_prefix), the split runs as a C stage (MergedWithNext)
        self._metaspace: str | None = None
        self._drops_chars = False
        self._screen_whole: bytes | None = None  # see below, where _batch_c is set
        self._chars_c = self._chars_setup()
        # a BPE over characters under split stages only (tokenizers' quicktour: Whitespace):
        # the same C path with each piece merged from its characters' tokens
        over_chars = (not self._last_byte_level and self._chars_c is None and bool(self._ops)
                      and isinstance(self._model, BPEModel) and not self._model.ignore_merges)
        meta = self._ops[0] if len(self._ops) == 1 else None
        # under a normalizer (tokenizers' SentencePieceBPETokenizer: NFKC) too, but for the
        # scheme "first", which asks whether a piece starts the original text: a normalizer
        # that deletes the text's first characters moves that start on (_first_scheme)
        if (over_chars and isinstance(meta, MetaspaceOp) and meta.step is not None and len(meta.replacement) == 1
                and (not self._norm or meta.prepend_scheme != "first")):
            self._metaspace, self._meta_scheme = meta.replacement, meta.prepend_scheme
        chars = over_chars and (self._metaspace is not None or all(isinstance(op, _Step) for op in self._ops))
        # a WordLevel model under split stages (or none): each piece looked up whole in C
        word_level = (isinstance(self._model, WordLevelModel) and self._model._model is not None
                      and all(isinstance(op, _Step) for op in self._ops))
        # one ByteLevel with split stages after it (Falcon: Punctuation, ByteLevel, Digits,
        # Split): those stages run in C over ByteLevel's characters, one per byte (+16), and
        # the model takes the pieces' bytes, as it does when ByteLevel comes last
        levels = [k for k, op in enumerate(self._ops) if isinstance(op, ByteLevelOp)]
        inner = (len(levels) == 1 and self._model.takes_bytes
                 and all(isinstance(op, _Step) for op in self._ops[levels[0] + 1:]))
        if len(levels) > 1 or not (self._last_byte_level or chars or inner or word_level):
            # two ByteLevels map the text twice: the general path (found by a review)
            return
        from .patterns import _scanner_dfa

        dfas, codes = [], []
        mapped = 0
        for op in self._ops:
            if isinstance(op, MetaspaceOp) and self._metaspace is not None:
                from .patterns import _regex_matcher

                self._meta_matcher = _regex_matcher("\\x{%x}" % ord(self._metaspace))
                if self._meta_matcher.dfa is None:
                    self._metaspace = None
                    return
                dfas.append(self._meta_matcher.dfa)
                codes.append(_BEHAVIOR_CODE["MergedWithNext"])
                continue
            if isinstance(op, ByteLevelOp):
                if op.add_prefix_space and len(self._ops) != 1:
                    return
                mapped = 16
                self._prefix_space = op.add_prefix_space
                if op.use_regex:
                    # tokenizers' ByteLevel regex and r50k_base's pattern split alike (tested)
                    dfa = _scanner_dfa("r50k_base")
                    if dfa is None:
                        return
                    dfas.append(dfa)
                    codes.append(1)
                continue
            if not isinstance(op, _Step):
                return
            dfa = _step_dfa(op)
            if dfa is None:
                return
            dfas.append(dfa)
            codes.append(_BEHAVIOR_CODE[op.behavior] + (8 if op.invert else 0) + mapped)
        ffi, lib = self._model._ffi, self._model._lib
        stages = lib.hfb_stages_new(ffi.new("const scantok_dfa *[]", dfas or [ffi.NULL]),
                                    ffi.new("int32_t[]", codes or [0]), len(dfas), 1)
        if stages == ffi.NULL:
            raise MemoryError
        # the stages point at the scanners' tables: keep the matchers (and their tables) alive
        self._stage_matchers = [op for op in self._ops if isinstance(op, (_Step, ByteLevelOp))]
        self._stage_spec = (dfas, codes)
        self._stages = ffi.gc(stages, lib.hfb_stages_free)
        # encode_batch_fast in one call of scantok._pylist (the addresses it hands to hfb_encode)
        addr = lambda p: int(ffi.cast("uintptr_t", p))  # noqa: E731
        if chars:  # under hfb_encode's and hfb_encode_words' signatures
            self._model._chars_ready()
            model = self._model
            # a character that is no token, with no unknown token and no byte of it to fall
            # back to, is dropped: a piece may have no token, so a segment's pieces are not its
            # last token's word + 1 (_encode_segments, _encode_segment)
            self._drops_chars = model.unk_token is None and not (
                model.byte_fallback and all(f"<0x{b:02X}>" in model.vocab for b in range(256)))
            encode_fn, words_fn = "hfb_encode_chars_split", "hfb_encode_chars_words"
        elif word_level:
            encode_fn, words_fn = "hfb_encode_wl", "hfb_encode_wl_words"
            # WhitespaceSplit alone (the common WordLevel file): the scan fused with the lookups,
            # as scantok.WordLevel runs it (4.7 ms for 1 MB of 4 KB documents against 7.7
            # through the stage)
            op = self._ops[0] if len(self._ops) == 1 else None
            lib.hfb_set_word_wsplit(self._model._model, int(
                op is not None and op.keeps_matches_only and op.matcher.scanner == "whitespace_split"))
        else:
            encode_fn, words_fn = "hfb_encode", "hfb_encode_words"
        self._words_c = getattr(lib, words_fn)
        # encode() in one call of scantok._pylist: ids, offsets and words (hf_encode_offsets)
        self._offsets_fn = addr(ffi.addressof(lib, words_fn))
        self._batch_c = (addr(ffi.addressof(lib, encode_fn)), addr(self._model._model), addr(stages),
                         _added_screen(self._added))
        # encode() screens a text for added tokens in its C call where it reads the text as it
        # is (no normalizer, prefix or Metaspace, nor the char path) and the text has them
        self._screen_whole = (self._batch_c[3] if self._has_added and not self._norm and not self._prefix_space
                              and self._metaspace is None and self._chars_c is None else None)

    def _chars_setup(self) -> tuple | None:
        """(hfb_encode_chars, model, address of the prefix's length) when a text without added
        tokens (as it is) goes through _char_fast's model in one C call of scantok._pylist, as
        the ByteLevel path's texts do; else None.  Not with normalized added tokens (they match
        in the normalized text) or ignore_merges (a whole piece in the vocabulary is one token)."""
        if self._char_fast is None or self._added.has_normalized or self._model.ignore_merges:
            return None
        ffi, lib = self._model._ffi, self._model._lib
        addr = lambda p: int(ffi.cast("uintptr_t", p))  # noqa: E731
        # hfb_encode_chars' (k, first_end) of each case _CharPiece.piece gives, by address
        self._chars_skips = {key: ffi.new("uint32_t[2]", list(key)) for key in
                             {(0, 0), (0, 1), (1, 1), (self._char_fast.most_prefix(), 1)}}
        self._chars_skip = {key: addr(buf) for key, buf in self._chars_skips.items()}
        return (addr(ffi.addressof(lib, "hfb_encode_chars")), addr(self._model._model))

    def _encode_c(self, text: str, offsets: bool, words: bool = False):
        """(ids, starts, ends, words) of text by the C path (None for those not asked for), or
        None (the caller takes the slow path)."""
        import numpy as np

        ffi, lib = self._model._ffi, self._model._lib
        data = text.encode("utf-8")
        n = len(data)
        if n == 0:
            return [], [], [], []
        ids = np.empty(n, dtype=np.uint32)
        ptr = lambda a: ffi.cast("uint32_t *", a.ctypes.data)  # noqa: E731
        st = en = wd = None
        if offsets:
            st, en = np.empty(n, dtype=np.uint32), np.empty(n, dtype=np.uint32)
        if words:
            wd = np.empty(n, dtype=np.uint32)
        r = self._words_c(self._model._model, self._model.cache(), self._stages, data, n, ptr(ids),
                                 ptr(st) if offsets else ffi.NULL, ptr(en) if offsets else ffi.NULL,
                                 ptr(wd) if words else ffi.NULL)
        if r == lib.HFB_NOMEM:
            raise MemoryError
        if r < 0:
            return None
        return tuple(None if a is None else a[:r].tolist() for a in (ids, st, en, wd))

    # -- the general path --
    def _pretokenize(self, piece: _Piece) -> list[_Piece]:
        pieces = [piece] if piece.text else []
        last = len(self._ops) - 1
        for k, op in enumerate(self._ops):
            if isinstance(op, _Step):
                pieces = _split(op, pieces)
            elif isinstance(op, ByteLevelOp):
                if op.add_prefix_space:
                    pieces = [p if p.text.startswith(" ") else p.prepend(" ") for p in pieces]
                if op.step is not None:
                    pieces = _split(op.step, pieces)
                if k == last and self._last_byte_level:
                    for p in pieces:
                        p.raw_bytes = True
                else:
                    pieces = [p.to_byte_chars() for p in pieces]
            elif isinstance(op, MetaspaceOp):
                out = []
                for p in pieces:
                    p = _Piece(p.text.replace(" ", op.replacement), p.align, p.base)
                    if op.prepend_scheme != "never" and not p.text.startswith(op.replacement):
                        if op.prepend_scheme == "always" or p.orig(0, 1)[0] == 0:
                            p = p.prepend(op.replacement)
                    out.append(p)
                pieces = _split(op.step, out) if op.step is not None else out
        return pieces

    def _model_tokens(self, p: _Piece, ids: list, offs: list | None) -> None:
        if p.raw_bytes:
            r = self._encode_raw_piece(p.text)
            if r is not None:
                pids, st, en = r
                ids.extend(pids)
                if offs is not None:
                    offs.extend(p.orig(a, b) for a, b in zip(st, en))
                return
            p = p.to_byte_chars()
        n = len(p.text)
        for i, a, b in self._model.tokenize(p.text):
            ids.append(i)
            if offs is not None:
                if a >= n and n:
                    # past the piece: byte_fallback counts the bytes of a continuing_subword_prefix
                    # or end_of_word_suffix as the character's, as tokenizers does (whose offsets
                    # then run past the text too): the end of the piece
                    e = p.orig(n - 1, n)[1]
                    offs.append((e, e))
                    continue
                offs.append(p.orig(a, b) if b > a else (p.orig(a, a + 1)[0],) * 2 if n else (0, 0))

    def _encode_raw_piece(self, text: str):
        import numpy as np

        ffi, lib = self._model._ffi, self._model._lib
        data = text.encode("utf-8", "surrogatepass")
        n = len(data)
        ids = np.empty(n, dtype=np.uint32)
        st, en = np.empty(n, dtype=np.uint32), np.empty(n, dtype=np.uint32)
        r = lib.hfb_encode(self._model._model, self._model.cache(), ffi.NULL, data, n,
                           ffi.cast("uint32_t *", ids.ctypes.data), ffi.cast("uint32_t *", st.ctypes.data),
                           ffi.cast("uint32_t *", en.ctypes.data))
        if r == lib.HFB_NOMEM:
            raise MemoryError
        if r < 0:
            return None
        return ids[:r].tolist(), st[:r].tolist(), en[:r].tolist()

    def _encode_segment(self, ns: _NS, c: int, d: int, base: int, ids: list, offs: list | None,
                        words: list | None = None, w: int = 0, strings: dict | None = None) -> int:
        """Tokens of ns.text[c:d] (a normalized part of the original text starting at base);
        with words (a list), each token's word (the pieces numbered from w); with strings (a
        dict), the token strings by position of a WordLevel model that gives an id to several
        strings (tokenizers' token is the piece).  Returns the number of the next piece."""
        if self._stages is not None and not (words is not None and self._drops_chars):
            seg, k = self._with_prefix(ns.text[c:d], ns.align is None and base + c == 0)
            r = self._encode_c(seg, offs is not None, words is not None)
            if r is not None:
                pids, st, en, wl = r
                if k and offs is not None:  # the prefix comes from the segment's first character
                    st, en = [max(a - k, 0) for a in st], [max(b - k, 1) for b in en]
                ids.extend(pids)
                if words is not None and wl:
                    # a piece of UTF-8 has a token at least: the pieces are the last word + 1
                    words.extend(w + x for x in wl)
                    w += wl[-1] + 1
                if offs is not None:
                    al = ns.align
                    if al is None:
                        sh = base + c
                        offs.extend((sh + a, sh + b) for a, b in zip(st, en))
                    else:
                        offs.extend((base + al[c + a][0], base + al[c + b - 1][1]) for a, b in zip(st, en))
                return w
        if ns.align is None:
            piece = _Piece(ns.text[c:d], None, base + c)
        else:
            piece = _Piece(ns.text[c:d], [(x + base, y + base) for x, y in ns.align[c:d]], 0)
        for p in self._pretokenize(piece):
            k = len(ids)
            self._model_tokens(p, ids, offs)
            if strings is not None:
                strings[k] = p.text if p.text in self._model.vocab else self._model.unk_token
            if words is not None:
                words.extend([w] * (len(ids) - k))
            w += 1
        return w

    def _encode_raw(self, text: str, offsets: bool, words: list | None = None) -> tuple[list[int], list | None, dict]:
        """Model ids (and offsets) of text, before post-processing, and the token strings of
        added tokens by position (their matched text, as tokenizers reports them); with words
        (a list), each token's word id goes there (tokenizers' split index: an added token is a
        split of its own, as is each piece of the pre-tokenizer)."""
        # the C paths raise UnicodeEncodeError on a lone surrogate; this one would otherwise
        # encode it (the pieces' bytes are made with surrogatepass), where tokenizers raises
        _check_text(text, "")  # the SIMD UTF-8 test, not a regex scan (the callers say where)
        ids: list[int] = []
        offs: list | None = [] if offsets else None
        matched: dict[int, str] = {}
        strings = matched if isinstance(self._model, WordLevelModel) and self._model.shared_ids else None
        added = self._added
        segments = added.split(text, normalized=False) if added else [(0, len(text), None)]
        w = 0  # the next split's index
        for a, b, tok in segments:
            if tok is not None:
                matched[len(ids)] = text[a:b]
                ids.append(tok.id)
                if offs is not None:
                    offs.append((a, b))
                if words is not None:
                    words.append(w)
                w += 1
                continue
            if self._char_fast is not None and not added.has_normalized:
                w = self._encode_chars_fast(text[a:b], a, ids, offs, words, w, a == 0)
                continue
            ns = _NS(text[a:b], track=offsets or self._first_scheme)
            for step in self._norm:
                step(ns)
            if added.has_normalized:
                for c, d, tok2 in added.split(ns.text, normalized=True):
                    if tok2 is not None:
                        matched[len(ids)] = ns.text[c:d]
                        ids.append(tok2.id)
                        if offs is not None:
                            x, y = ns.orig_range(c, d)
                            offs.append((a + x, a + y))
                        if words is not None:
                            words.append(w)
                        w += 1
                    else:
                        w = self._encode_segment(ns, c, d, a, ids, offs, words, w, strings)
            elif ns.text:
                w = self._encode_segment(ns, 0, len(ns.text), a, ids, offs, words, w, strings)
        return ids, offs, matched

    def _chars_fast_tokens(self, seg: str, first: bool):
        """The model tokens of a non-empty text segment under _char_fast (first: the segment
        starts the text): (ids, starts, ends) as numpy arrays, offsets in characters of seg, by
        _CharPiece's formula: no alignment list is made."""
        import numpy as np

        norm, k, first_end = self._char_fast.piece(seg, first)
        r = self._model.tokenize_arrays(norm) if len(norm) >= _C_CHARS_MIN else None
        if r is None:  # short (the cache of the Python path), or its error to raise
            toks = self._model.tokenize(norm)
            r = tuple(np.array([t[j] for t in toks], dtype=np.int64) for j in range(3))
        tid, st, en = r
        st, en = st.astype(np.int64), en.astype(np.int64)
        return tid, np.maximum(st - k, 0), np.where(en > k + 1, en - k, first_end)

    def _encode_chars_fast(self, seg: str, base: int, ids: list, offs: list | None, words: list | None,
                           w: int, first: bool) -> int:
        """_encode_segment of a text segment under _char_fast (_chars_fast_tokens)."""
        if not seg:
            return w
        tid, st, en = self._chars_fast_tokens(seg, first)
        ids.extend(tid.tolist())
        if offs is not None:
            offs.extend(zip((st + base).tolist(), (en + base).tolist()))
        if words is not None:
            words.extend([w] * len(tid))
        return w + 1

    def _chars_fast_record(self, text: str, type_id: int) -> dict | None:
        """_model_record of a non-empty text with no added token in it, under _char_fast, the
        lists made in C (as the ByteLevel path's); None for an empty text (the general path)."""
        import numpy as np

        if not text:
            return None
        _check_text(text, "")  # tokenizers fails on a lone surrogate (the C call would take it)
        tid, st, en = self._chars_fast_tokens(text, True)
        n = len(tid)
        buf = np.concatenate([tid.astype(np.uint32), st.astype(np.uint32), en.astype(np.uint32)]).tobytes()
        pyl = _pylist()
        return record(pyl.ids_to_list((buf, 0), n), pyl.tokens_to_list((buf, 0), n, self._token_table()),
                      pyl.spans_to_list((buf, n), (buf, 2 * n), n, 0), [type_id] * n, None, [0] * n)

    def _lazy_wraps(self, fast: bool = False, overflowing: bool = False):
        """For add_special_tokens False and True: (prefix, suffix, sequence type id) the
        post-processor puts around the model tokens, prefix/suffix as (id, token, type id)
        entries with offsets (0, 0) and special mask 1; None when it does more (trims offsets).
        fast: for encode_batch_fast's encodings, whose tokens are "" and offsets (0, 0), which
        trimming leaves alone.  overflowing: what it puts around an overflowing part of a
        sequence (whose type ids it may leave as they were, where it sets the sequence's)."""
        if self._post.trims and not fast:
            return None
        out = []
        for add in (False, True):
            spans = [(0, 0), (0, 0)] if fast else [(7, 8), (8, 9)]

            def probe(a, b):
                return record([a, b], ["", ""] if fast else ["\x00", "\x01"], list(spans), [0, 0], None, [0, 1])

            rec = probe(-1, -2)
            if overflowing:
                rec["overflowing"] = [probe(-3, -4)]
            try:
                r = self._post.process(rec, None, add)
            except Exception:  # pragma: no cover
                return None
            if overflowing:
                if len(r["overflowing"]) != 1:  # a template that repeats the sequence
                    return None
                r = r["overflowing"][0]
            wrap = _wrap_around(r, -3 if overflowing else -1, -4 if overflowing else -2, spans)
            if wrap is None:
                return None
            out.append(wrap + (None if fast else self._words_of(),))
        return tuple(out)

    def _words_of(self):
        """words_of(text): the word of each token of text as encode()'s C path makes them (its
        piece index), for a lazy Encoding's word_ids (encode() does not track them: that cost
        it 6 % of its instructions).  A closure over the C handles, not the tokenizer."""
        if self._chars_c is not None:  # one word: _encode_lazy gives each encoding its own count
            return None
        fn, (_, model, stages, _), cache_address = self._offsets_fn, self._batch_c, self._model.cache_address
        rep, prefix = self._metaspace, self._prefix_space
        scheme = self._meta_scheme if rep else None

        def words_of(text: str) -> list[int]:
            text = _stage_text(text, True, rep, scheme, prefix)[0]  # as _with_prefix
            r = _hf_encode_offsets(fn, model, cache_address(), stages, text, True)
            n = len(r) // 16
            return _pylist().ids_to_list((r, 3 * n), n)

        # the owners of those addresses, alive as long as an encoding can ask for its words (the
        # tokenizer may have swapped its state in add_tokens by then)
        words_of.owners = (self._model, self._stages, self._stage_matchers, self._stage_spec)
        return words_of

    # -- public encoding --
    def encode(self, sequence, pair=None, is_pretokenized: bool = False, add_special_tokens: bool = True) -> Encoding:
        """The :class:`Encoding` of ``sequence`` (and of ``pair``, the second sequence, if
        given): ids, tokens, offsets (str indices into each sequence), attention_mask,
        special_tokens_mask, type_ids and overflowing, as tokenizers' ``encode``.  With
        ``is_pretokenized``, each sequence is a list (or tuple) of words, encoded one by one.
        Truncation and padding apply as set (:meth:`enable_truncation`, :meth:`enable_padding`).

        >>> tok = Tokenizer.from_str('{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2},'
        ...                          ' "merges": ["a b"]}, "pre_tokenizer": {"type": "Whitespace"}}')
        >>> enc = tok.encode("ab b", "a")
        >>> enc.ids, enc.type_ids, enc.offsets
        ([2, 1, 0], [0, 0, 1], [(0, 2), (3, 4), (0, 1)])
        """
        flight = self._in_flight  # inline: run()'s call cost a short encode 20 %
        flight.calls += 1
        try:
            return self._encode_body(sequence, pair, is_pretokenized, add_special_tokens)
        finally:
            flight.calls -= 1
            if flight.retired:
                flight.settle()

    def _encode_body(self, sequence, pair=None, is_pretokenized: bool = False, add_special_tokens: bool = True) -> Encoding:
        if is_pretokenized is not False:
            is_pretokenized = _flag(is_pretokenized, "is_pretokenized", "encode()")
        if add_special_tokens is not True and add_special_tokens is not False:
            add_special_tokens = _flag(add_special_tokens, "add_special_tokens", "encode()")
        t, p = self._lengths
        if pair is None and not is_pretokenized and type(sequence) is str and t is None and p is None \
                and self._lazy is not None:
            # the common call, without a step it need not take (~0.1 us of a 1 us encode)
            try:
                enc = self._encode_whole(sequence, add_special_tokens)
                if enc is not None:
                    return enc
            except UnicodeEncodeError as err:  # a lone surrogate (the C paths' own error)
                raise _surrogate_error(sequence, "encode()") or err from None
        if pair is None and not is_pretokenized and type(sequence) is str and (
                t is None or self._lazy_over is not None):
            enc = self._encode_one(sequence, add_special_tokens)
            if t is not None:
                enc = self._truncate_one(enc, add_special_tokens, False, t)
            if enc is not None:
                if p is not None:
                    pad_encodings([enc], p)
                return enc
        seqs = (_input_sequence(sequence, is_pretokenized),)
        if pair is not None:
            seqs += (_input_sequence(pair, is_pretokenized),)
        _check_input(seqs, is_pretokenized, "encode()")
        return Encoding._of(self._encode_record(seqs, is_pretokenized, add_special_tokens, True, "encode()", t, p))

    def _takes_whole(self, text: str) -> bool:
        """Whether the C path (_whole_c's, _chars_c's) may take text whole: no added token in it
        and, under a normalizer of Unicode forms, none that would change it."""
        if self._has_added and self._added.matches(text):
            return False
        if self._chain is not None:  # its texts are normalized first (_encode_chained)
            return False
        return self._nf_unchanged is None or self._nf_unchanged(text)

    def _encode_whole(self, text: str, add_special_tokens: bool) -> Encoding | None:
        """encode of a text by one C call (a lazy Encoding), or None (the general path): no
        added token in it; under a normalizer of Unicode forms a text they change is normalized
        here first (nf_aligned) and its offsets mapped back."""
        if self._screen_whole is not None:
            # the C call screens the text for added tokens' first bytes (the exact test below
            # when it sees them): AddedVocabulary.matches took ~10 us a 4 KB text holding "<"
            # under DeepSeek V3's tokens, 10 % of encode() over multi-script text
            fn, model, stages, _ = self._batch_c
            r = _hf_encode_offsets(fn, model, self._model.cache_address(), stages, text, False, 0, self._screen_whole)
            if type(r) is not int:
                return _lazy_encoding(r, len(r) // 12, self._lazy[add_special_tokens], self._token_table, text)
            if r != -3:  # HFB_SLOW
                return None
        if self._has_added and self._added.matches(text):
            if (self._whole_c and not self._norm and not self._drops_chars) or self._chars_c is not None:
                return self._encode_segments(text, add_special_tokens)
            return None
        if self._chain is not None:
            return self._encode_chained(text, add_special_tokens)
        if self._nf_unchanged is None or self._nf_unchanged(text):
            return self._encode_lazy(text, add_special_tokens)
        return self._encode_nf_changed(text, add_special_tokens)

    def _encode_chained(self, text: str, add_special_tokens: bool) -> Encoding | None:
        """_encode_whole under _chain's normalizer: the text normalized with its alignments as
        arrays, then the C path over it (each token's offsets mapped back); None where the
        chain declines or a normalized added token occurs in the normalized text."""
        # a lone surrogate: tokenizers refuses the str before normalizing it, where a Replace
        # (or BertNormalizer) could take it out of the text the C path reads (found by a
        # helper's campaign: "\udfff" under Replace(".", ".") gave ids)
        _check_text(text, "")
        r = self._chain(text)
        if r is None:
            return None
        norm, starts, ends = r
        if self._has_added and norm is not text and self._added.matches(norm):
            return None
        if starts is None:  # the same characters one for one: the same offsets
            return self._encode_lazy(norm, add_special_tokens)
        return self._encode_mapped(norm, starts, ends, add_special_tokens)

    def _encode_segments(self, text: str, add_special_tokens: bool) -> Encoding | None:
        """_encode_whole of a text holding added tokens (chat templates put them in most texts),
        without a normalizer or under _char_fast's: the added tokens split out as _encode_raw
        splits them, one C call per segment between them, a lazy Encoding over the joined arrays
        whose word ids and added tokens' strings it carries; None where the C path declines a
        segment.  Through the general path such a text ran at 1.1-1.7x tokenizers' speed (a
        Python step per token)."""
        parts = self._added_parts(text)
        chars = self._chars_c is not None
        if chars:  # (no normalized added token: _chars_setup)
            self._model._chars_ready()
        else:
            fn, (_, model, stages, _) = self._offsets_fn, self._batch_c
        cache = self._model.cache_address()
        # each part as one block of 4m uint32 (ids, starts, ends, words, in the part's own
        # positions and pieces), shifted and interleaved below in one pass: numpy per part made a
        # text of 50,000 added tokens twice as slow as the general path
        blocks, counts, shifts, wbases, strings = [], [], [], [], {}
        n = w = 0
        for a, b, tok in parts:
            if tok is not None:
                strings[n] = text[a:b]
                blocks.append(_pack4(tok.id, 0, b - a, 0))
                m = 1
            else:
                if chars:  # the segment is one piece, one word (_encode_chars_fast)
                    r = self._chars_offsets(cache, text[a:b], a == 0)
                else:
                    seg, k = self._with_prefix(text[a:b], a == 0)
                    r = _hf_encode_offsets(fn, model, cache, stages, seg, True, k)
                if type(r) is int:  # HFB_SLOW
                    return None
                m = len(r) // (12 if chars else 16)
                blocks.append(r + bytes(4 * m) if chars else r)
            counts.append(m)
            shifts.append(a)
            wbases.append(w)
            if tok is not None or chars:
                w += 1
            elif m:  # a piece has a token at least: the pieces are the last word + 1
                w += int.from_bytes(r[-4:], sys.byteorder) + 1
            n += m
        if not n:
            return None
        arrays, word_ids = _join_blocks(blocks, counts, shifts, wbases, n)
        base = self._lazy[add_special_tokens]
        wrap = tuple(base[:4]) + (lambda _text, w=word_ids: w.tolist(), strings)
        return Encoding._from_arrays(arrays, n, wrap, self._token_table, text)

    def _added_parts(self, text: str) -> list:
        """(start, end, added token or None) covering a text without a normalizer, the added
        tokens split out as _encode_raw splits them (normalized ones in the parts between the
        others: without a normalizer, the same text)."""
        added = self._added
        parts = []
        for a, b, tok in added.split(text, normalized=False):
            if tok is None and added.has_normalized:
                parts.extend((a + c, a + d, t2) for c, d, t2 in added.split(text[a:b], normalized=True))
            else:
                parts.append((a, b, tok))
        return parts

    def _encode_nf_changed(self, text: str, add_special_tokens: bool) -> Encoding | None:
        """_encode_whole of a text the Unicode forms change: the C path over the normalized
        text, each token's offsets mapped through the alignments (the first character's start,
        the last one's end, as the general path maps them); None where a normalized added token
        occurs in it.  Through the general path such a text (one decomposed accent in 4 KB) ran
        no faster than tokenizers."""
        norm, starts, ends = nf_aligned(text, self._nf_forms)
        if self._has_added and self._added.matches(norm):
            return None
        return self._encode_mapped(norm, starts, ends, add_special_tokens)

    def _encode_mapped(self, norm: str, starts, ends, add_special_tokens: bool) -> Encoding | None:
        """The C path over a normalized text whose characters come from the original ranges
        starts[i]..ends[i] (numpy arrays), each token's offsets mapped through them."""
        import numpy as np

        fn, model, stages, _ = self._batch_c
        whole, k = self._with_prefix(norm)
        r = _hf_encode_offsets(fn, model, self._model.cache_address(), stages, whole, False, k)
        if type(r) is int:  # HFB_SLOW
            return None
        n = len(r) // 12
        a = np.frombuffer(r, dtype=np.uint32)
        st, en = a[n:2 * n].astype(np.int64), a[2 * n:].astype(np.int64)
        out = np.concatenate([a[:n], starts[st].astype(np.uint32), ends[en - 1].astype(np.uint32)])
        return Encoding._from_arrays(out.tobytes(), n, self._lazy[add_special_tokens], self._token_table, norm)

    def _encode_one(self, text: str, add_special_tokens: bool) -> Encoding:
        """One str, without truncation, before padding: lazy around the C arrays where it can."""
        try:
            if self._lazy is not None:
                enc = self._encode_whole(text, add_special_tokens)
                if enc is not None:
                    return enc
            return Encoding._of(self._post.process(self._model_record(text, 0, True), None, add_special_tokens))
        except UnicodeEncodeError as err:  # a lone surrogate (the C paths' own error)
            raise _surrogate_error(text, "encode()") or err from None

    def _truncate_one(self, enc: Encoding, add_special_tokens: bool, fast: bool, t: Truncation) -> Encoding | None:
        """A new encoding of one sequence, truncated (_post_process's truncation, for a lazy
        encoding: its parts are views of its C arrays), or None if it is not lazy or the
        post-processor wraps overflowing parts in a way the lazy form cannot hold."""
        over = self._fast_over if fast else self._lazy_over
        if enc._lazy is None or over is None:
            return None
        max_length = t.max_length
        added = self._post.added_tokens(False)
        if add_special_tokens and added:
            max_length = (max_length - added) % (1 << 64)  # tokenizers' usize arithmetic
        n = enc._lazy[1]
        if max_length:
            if n <= max_length:
                return enc
            if t.strategy == "only_second":
                raise HFError("Truncation error: Second sequence not provided")
        parts = windows(n, max_length, t.stride, t.direction)
        return enc if parts is None else enc._truncated(parts, over[add_special_tokens])

    def _encode_record(self, seqs: tuple, pretokenized: bool, add_special_tokens: bool, offsets: bool,
                       where: str, t: Truncation | None, p: Padding | None) -> dict:
        """The record of one input (a sequence or a pair, checked by _input_sequence) as
        tokenizers' encode: each sequence through the model, then truncation, the
        post-processor and padding (where: the call, for an error)."""
        recs = []
        for k, seq in enumerate(seqs):
            try:
                if pretokenized:  # each word on its own, its offsets its own (tokenizers merges them so)
                    parts = [self._model_record(w, k, offsets) for w in seq]
                    rec = record([], [], [], [])
                    for i, part in enumerate(parts):
                        if offsets:  # the word's index (tokenizers tracks no words without offsets)
                            part["words"] = [i] * len(part["ids"])
                        for key in ("ids", "tokens", "offsets", "type_ids", "special", "words"):
                            rec[key] += part[key]
                else:
                    rec = self._model_record(seq, k, offsets)
            except UnicodeEncodeError:  # a lone surrogate (the C paths' own error)
                for text in seq if pretokenized else (seq,):
                    e = _surrogate_error(text, where)
                    if e is not None:
                        raise e from None
                raise
            recs.append(rec)
        return self._post_process(recs[0], recs[1] if len(recs) > 1 else None, add_special_tokens, t, p)

    def _model_record(self, text: str, type_id: int, offsets: bool) -> dict:
        """The model's tokens of one text (sequence type_id: 0 the first, 1 the pair), before
        post-processing, as a record (offsets False: as tokenizers' encode_fast makes them,
        offsets (0, 0), tokens "" and type id 0)."""
        if not offsets:
            ids = self._batch_model_ids([text])[0]
            n = len(ids) >> 2 if type(ids) is bytes else len(ids)
            ids = _pylist().ids_to_list((ids, 0), n) if type(ids) is bytes else list(ids)
            return record(ids, [""] * n, [(0, 0)] * n, [0] * n)
        if self._whole_c and self._takes_whole(text):
            # the C arrays made lists in C (a Python loop per token cost 20x more)
            _, model, stages, _ = self._batch_c
            whole, k = self._with_prefix(text)
            r = _hf_encode_offsets(self._offsets_fn, model, self._model.cache_address(), stages, whole, True, k)
            if type(r) is not int:  # else HFB_SLOW: the general path below
                n, pyl = len(r) // 16, _pylist()
                return record(pyl.ids_to_list((r, 0), n), pyl.tokens_to_list((r, 0), n, self._token_table()),
                              pyl.spans_to_list((r, n), (r, 2 * n), n, 0), [type_id] * n, None,
                              pyl.ids_to_list((r, 3 * n), n))
        if self._char_fast is not None and not self._added.has_normalized and \
                not (self._has_added and self._added.matches(text)):
            rec = self._chars_fast_record(text, type_id)
            if rec is not None:
                return rec
        words: list = []
        ids, offs, matched = self._encode_raw(text, offsets, words)
        n = len(ids)
        inv = self._model.inv
        tokens = [inv.get(i) for i in ids]
        for k, t in matched.items():
            tokens[k] = t
        return record(ids, tokens, offs, [type_id] * n, None, words)

    def _post_process(self, enc: dict, pair: dict | None, add_special_tokens: bool, t: Truncation | None,
                      p: Padding | None) -> dict:
        """Truncation, the post-processor, padding (tokenizers' post_process)."""
        if t is not None:
            max_length = t.max_length
            added = self._post.added_tokens(pair is not None)
            if add_special_tokens and added:
                max_length = (max_length - added) % (1 << 64)  # tokenizers' usize arithmetic
            truncate_pair(enc, pair, max_length, t)
        out = self._post.process(enc, pair, add_special_tokens)
        if p is not None:
            pad_records([out], p)
        return out

    # -- truncation and padding --
    def enable_truncation(self, max_length: int, *, stride: int = 0, strategy: str = "longest_first",
                          direction: str = "right") -> None:
        """Truncate every encoding to ``max_length`` tokens, the post-processor's special tokens
        included; what is cut off goes to ``Encoding.overflowing``, in windows that overlap by
        ``stride`` tokens.  ``strategy``: ``longest_first``, ``only_first`` or ``only_second``
        (which sequence of a pair loses tokens); ``direction``: ``right`` or ``left`` (which end).

        >>> tok = Tokenizer.from_str('{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": []},'
        ...                          ' "pre_tokenizer": {"type": "Whitespace"}}')
        >>> tok.enable_truncation(2)
        >>> enc = tok.encode("a b a b a")
        >>> enc.ids, [o.ids for o in enc.overflowing]
        ([0, 1], [[0, 1], [0]])
        """
        t = Truncation(max_length, stride, strategy, direction)
        added = self._post.added_tokens(False)
        effective = (t.max_length - added) % (1 << 64)
        if effective < t.stride:
            raise ValueError(f"tokenizer stride set to {t.stride}, which is greater than or equal to its effective "
                             f"max length of {effective} (= {t.max_length} original max length - {added} added "
                             "special tokens), ")
        self._set_lengths(t, None, "truncation")

    def no_truncation(self) -> None:
        """Encode without truncating."""
        self._set_lengths(None, None, "truncation")

    @property
    def truncation(self) -> dict | None:
        """The truncation parameters (max_length, stride, strategy, direction), or None."""
        t = self._lengths[0]
        return t.as_dict() if t is not None else None

    def enable_padding(self, *, direction: str = "right", pad_id: int = 0, pad_type_id: int = 0,
                       pad_token: str = "[PAD]", length: int | None = None,
                       pad_to_multiple_of: int | None = None) -> None:
        """Pad every encoding to ``length`` tokens, or, with ``length`` None, a batch's
        encodings to the longest of them; rounded up to a multiple of ``pad_to_multiple_of``.
        Padding tokens have ``pad_id``, ``pad_token``, ``pad_type_id``, offsets (0, 0),
        attention 0 and special mask 1, on the ``direction`` side (``right`` or ``left``).

        >>> tok = Tokenizer.from_str('{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": []},'
        ...                          ' "pre_tokenizer": {"type": "Whitespace"}}')
        >>> tok.enable_padding(pad_id=9)
        >>> [(e.ids, e.attention_mask) for e in tok.encode_batch(["a b a", "b"])]
        [([0, 1, 0], [1, 1, 1]), ([1, 9, 9], [1, 0, 0])]
        """
        self._set_lengths(None, Padding(direction=direction, pad_id=pad_id, pad_type_id=pad_type_id,
                                        pad_token=pad_token, length=length, pad_to_multiple_of=pad_to_multiple_of),
                          "padding")

    def no_padding(self) -> None:
        """Encode without padding."""
        self._set_lengths(None, None, "padding")

    @property
    def padding(self) -> dict | None:
        """The padding parameters (length, pad_to_multiple_of, pad_id, pad_token, pad_type_id,
        direction), or None."""
        p = self._lengths[1]
        return p.as_dict() if p is not None else None

    def _set_lengths(self, t: Truncation | None, p: Padding | None, which: str) -> None:
        """Sets truncation (which "truncation") or padding to t or p, in the file too."""
        with self._lengths_lock:
            old_t, old_p = self._lengths
            new = (t, old_p) if which == "truncation" else (old_t, p)
            value = new[0] if which == "truncation" else new[1]
            self._obj = {**self._obj, which: value.to_json() if value is not None else None}
            self._lengths = new

    def _special_ids(self) -> frozenset:
        specials = self._added.special_contents
        by_id = self._added.by_id
        return frozenset({i for i, t in by_id.items() if t.norm in specials}
                         | {i for c in specials if (i := self._model.vocab.get(c)) is not None and i not in by_id})

    # -- adding tokens --
    def add_tokens(self, tokens: list) -> int:
        """Adds tokens (str, ``tokenizers.AddedToken`` objects or tokenizer.json entries such as
        ``{"content": "<x>", "lstrip": True}``) as tokenizers' ``add_tokens`` does: a content in
        the vocabulary keeps its id, a new one takes the next id; an empty one or one added
        before with the same options is ignored, one added before with other options gets
        these.  Returns how many were not ignored.  Afterwards the tokenizer is what tokenizers
        gives after loading its own file (``to_str``): tokenizers' own object keeps some state
        of a token added again with other options (it stays special for ``decode``, and keeps its
        earlier normalized form for ``id_to_token``) until then, and where the vocabulary holds
        an id at or past its size and an added token names that entry, its next new id counts
        that id (loading its file does not, which scantok follows).

        >>> tok = Tokenizer.from_str('{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": []},'
        ...                          ' "pre_tokenizer": {"type": "Whitespace"}}')
        >>> tok.add_tokens(["<x>", "a", ""]), tok.encode("a<x>b").ids
        (2, [0, 2, 1])
        """
        return self._add(tokens, False, "add_tokens()")

    def add_special_tokens(self, tokens: list) -> int:
        """:meth:`add_tokens` for special tokens (``special`` set; a str is not normalized), as
        tokenizers' ``add_special_tokens``: they are skipped by ``decode(skip_special_tokens=True)``."""
        return self._add(tokens, True, "add_special_tokens()")

    def _add(self, tokens: list, special: bool, where: str) -> int:
        if not isinstance(tokens, list):
            raise TypeError(f"{where}: tokens must be a list, got {type(tokens).__name__}")
        entries = [_added_entry(t, special, f"{where}: tokens[{i}]") for i, t in enumerate(tokens)]
        current = [dict(t) for t in self._obj.get("added_tokens") or []]
        by_content = {t["content"]: t for t in current}
        ignored = 0
        for e in entries:
            old = by_content.get(e["content"])
            if not e["content"] or (old is not None and all(old.get(k) == e[k] for k in _ADDED_OPTIONS)):
                ignored += 1
                continue
            if old is not None:  # added before with other options: it keeps its id, takes these
                old.update(e)
                continue
            entry = {"id": 0, **e}  # its id is assigned below, as tokenizers assigns it
            current.append(entry)
            by_content[e["content"]] = entry
        # the whole tokenizer again, from the file it now is; swapped in at once (a refused
        # token leaves this one as it was, and a call on another thread sees one or the other)
        new = type(self)({**self._obj, "added_tokens": current})
        new._added.encode_special = self._added.encode_special  # not in the file: kept, as tokenizers
        flight = new._in_flight = self._in_flight
        old = self.__dict__
        self.__dict__ = new.__dict__
        if flight.calls:
            # encode calls on other threads may be running C code on the old state's handles
            # (addresses, the GIL released): freed only when the last of them returns
            flight.retired.append(old)
        return len(entries) - ignored

    @property
    def encode_special_tokens(self) -> bool:
        """False (the default): special added tokens are split out of the text as their ids;
        True: they are encoded as any other text (tokenizers' ``encode_special_tokens``; not
        saved in the file)."""
        return self._added.encode_special

    @encode_special_tokens.setter
    def encode_special_tokens(self, value: bool) -> None:
        if not isinstance(value, bool):
            raise TypeError(f"'{type(value).__name__}' object is not an instance of 'bool'")
        self._added.encode_special = value

    def get_added_tokens_decoder(self) -> dict[int, AddedToken]:
        """The added tokens by id, as :class:`AddedToken` objects (content as the file gives it).

        >>> tok = Tokenizer.from_str('{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}')
        >>> tok.add_special_tokens(["<s>"])
        1
        >>> tok.get_added_tokens_decoder()
        {1: AddedToken("<s>", rstrip=False, lstrip=False, single_word=False, normalized=False, special=True)}
        """
        return {t.id: AddedToken(t.content, single_word=t.single_word, lstrip=t.lstrip, rstrip=t.rstrip,
                                 normalized=t.normalized, special=t.special) for t in self._added.tokens}

    def post_process(self, encoding: Encoding, pair: Encoding | None = None,
                     add_special_tokens: bool = True) -> Encoding:
        """What :meth:`encode` does after the model, on encodings made without it (say with
        ``add_special_tokens=False`` and neither truncation nor padding): truncation, the
        post-processor, padding, as set now; a new :class:`Encoding` (the arguments are left
        as they were)."""
        for name, e in (("encoding", encoding), ("pair", pair)):
            if not isinstance(e, Encoding) and (name == "encoding" or e is not None):
                raise TypeError(f"'{type(e).__name__}' is not an instance of 'Encoding' ({name})")
        add = _flag(add_special_tokens, "add_special_tokens", "post_process()")
        t, p = self._lengths
        rec = self._post_process(encoding._record(), None if pair is None else pair._record(), add, t, p)
        return Encoding._of(rec)

    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        """How many special tokens the post-processor adds to a sequence (``is_pair`` False)
        or a pair."""
        return self._post.added_tokens(_flag(is_pair, "is_pair", "num_special_tokens_to_add()"))

    def _chars_offsets(self, cache: int, seg: str, first: bool) -> bytes | int:
        """hf_encode_offsets of a non-empty segment under _char_fast (first: it starts the
        text): its piece made in C as it becomes UTF-8 (meta), or by piece() where meta cannot
        be used."""
        fn, model = self._chars_c
        cp = self._char_fast
        if cp.metas is not None:
            meta, k, first_end = cp.meta(seg, first)
            return _hf_encode_offsets(fn, model, cache, self._chars_skip[k, first_end], seg, False, 0, None, meta)
        piece, k, first_end = cp.piece(seg, first)
        return _hf_encode_offsets(fn, model, cache, self._chars_skip[k, first_end], piece)

    def _chars_encoding(self, r: bytes, add_special_tokens: bool, text: str) -> Encoding:
        """The lazy Encoding of a text's hf_encode_offsets result under _chars_c (no
        pre-tokenizer: the text is one word)."""
        n = len(r) // 12
        wrap = tuple(self._lazy[add_special_tokens][:4]) + (lambda _text, n=n: [0] * n,)
        return Encoding._from_arrays(r, n, wrap, self._token_table, text)

    def _encode_lazy(self, text: str, add_special_tokens: bool) -> Encoding | None:
        """The whole text by one C call (no normalizer, no added token in it), or None.  Per
        call costs matter here (a 4 KB text encodes in ~50 us): the imports are module
        globals after the first call and the cache address is kept (Model.cache_address)."""
        if self._chars_c is not None:
            if not text:  # no prefix on it: the general path's empty record
                return None
            self._model._chars_ready()
            r = self._chars_offsets(self._model.cache_address(), text, True)
            if type(r) is int:  # HFB_SLOW: the general path raises tokenizers' error
                return None
            return self._chars_encoding(r, add_special_tokens, text)
        fn, model, stages, _ = self._batch_c
        whole, k = self._with_prefix(text)
        r = _hf_encode_offsets(fn, model, self._model.cache_address(), stages, whole, False, k)
        if type(r) is int:  # HFB_SLOW
            return None
        return _lazy_encoding(r, len(r) // 12, self._lazy[add_special_tokens], self._token_table, text)

    def _with_prefix(self, text: str, first: bool = True) -> tuple[str, int]:
        """The text the C stages read for text (first: it starts the original text), and the
        length of the prefix put before it, whose characters come from text's first one
        (hf_encode_offsets folds it back): ByteLevel's add_prefix_space puts " " before a
        non-empty piece that does not start with one; Metaspace(split=True) replaces each
        space by its character, one for one, and puts that character before a text that does
        not start with it, as its prepend_scheme says."""
        return _stage_text(text, first, self._metaspace, self._meta_scheme if self._metaspace else None,
                           self._prefix_space)

    @staticmethod
    def _threads(num_threads: int | None, where: str = "encode_batch()") -> int:
        """Threads for a batch: num_threads (default: every usable core; an int of at least 1),
        at most the usable cores (each thread keeps piece caches of its own)."""
        cpus = usable_cpus()
        if num_threads is None:
            return cpus
        if is_bool(num_threads):
            raise TypeError(f"{where}: num_threads must be an int or None, got a bool")
        try:
            n = index(num_threads)
        except TypeError:
            raise TypeError(f"{where}: num_threads must be an int or None, got {type(num_threads).__name__}") from None
        if n < 1:
            raise ValueError(f"{where}: num_threads must be at least 1, got {n}")
        return min(n, cpus)

    def encode_batch(self, input: Sequence, is_pretokenized: bool = False, add_special_tokens: bool = True, *,
                     num_threads: int | None = None) -> list[Encoding]:
        """:meth:`encode` of every input (a sequence, or a pair as a tuple or list of two), on
        ``num_threads`` threads (default: all cores); with padding set, padded together (to
        the longest of the batch unless a length is set)."""
        return self._in_flight.run(self._encode_batch_body, input, is_pretokenized, add_special_tokens, num_threads=num_threads)

    def _encode_batch_body(self, input: Sequence, is_pretokenized: bool = False, add_special_tokens: bool = True, *,
                           num_threads: int | None = None) -> list[Encoding]:
        items = self._batch_items(input, "encode_batch()")
        if num_threads is not None:
            self._threads(num_threads, "encode_batch()")  # its errors, before any work
        if is_pretokenized is not False:
            is_pretokenized = _flag(is_pretokenized, "is_pretokenized", "encode_batch()")
        add = add_special_tokens if type(add_special_tokens) is bool else \
            _flag(add_special_tokens, "add_special_tokens", "encode_batch()")
        t, p = self._lengths
        if not is_pretokenized and (t is None or self._lazy_over is not None) and \
                _all_str(items):
            try:
                encs = self._encode_batch(items, add, num_threads)
            except Exception:
                _raise_surrogate_first(items, "encode_batch()")
                raise
            if t is None and p is None:
                return encs
            return self._finish_batch(items, encs, add, True, "encode_batch()", t, p)
        return self._encode_batch_records(items, is_pretokenized, add, num_threads, True, "encode_batch()", t, p)

    def _finish_batch(self, items: list, encs: list, add: bool, offsets: bool, where: str, t: Truncation | None,
                      p: Padding | None) -> list[Encoding]:
        """The Encodings of a batch of str made without truncation: truncated (lazily, or an
        input's record where its encoding is not lazy), then padded together."""
        if t is not None:
            for i, e in enumerate(encs):
                cut = self._truncate_one(e, add, not offsets, t)
                encs[i] = cut if cut is not None else Encoding._of(
                    self._encode_record((items[i],), False, add, offsets, f"{where}: inputs[{i}]", t, None))
        if p is not None:
            pad_encodings(encs, p)
        return encs

    @staticmethod
    def _batch_items(inputs, where: str) -> list:
        if isinstance(inputs, (str, bytes, Mapping)) or not isinstance(inputs, Iterable):
            raise TypeError(f"{where} expects a list of inputs, not {type(inputs).__name__}")
        return list(inputs)

    def _encode_batch(self, inputs: list, add_special_tokens: bool, num_threads: int | None) -> list[Encoding]:
        n = self._threads(num_threads)
        if n <= 1 or len(inputs) <= 1 or sum(len(t) for t in inputs if isinstance(t, str)) < PARALLEL_MIN:
            return self._encode_many(inputs, add_special_tokens)
        # the process-wide pool: its threads keep their piece caches warm across calls; a chunk
        # each, so that a thread takes the GIL once a chunk (_encode_many), not once a text;
        # chunks of equal characters, not of equal counts (size_chunks)
        chunks = [inputs[a:b] for a, b in size_chunks([len(t) if isinstance(t, str) else 1 for t in inputs], n)]
        parts = map_all(n, lambda c: self._encode_many(c, add_special_tokens), chunks)
        return [e for part in parts for e in part]

    def _encode_many(self, texts: list, add_special_tokens: bool) -> list[Encoding]:
        """_encode_one of each str, those the byte-level stages take whole (_encode_whole's
        first two cases) in one C call (hf_encode_offsets_batch), and under _char_fast's
        normalizer those with no added token (_encode_lazy's) in one call a prefix; the
        others, and those the C path declines, one by one."""
        lazy = self._lazy
        screen = self._screen_whole
        if lazy is not None and self._chars_c is not None and len(texts) > 1 and self._char_fast.metas is not None \
                and self._chain is None and self._nf_unchanged is None:
            return self._encode_many_chars(texts, add_special_tokens)
        if lazy is None or self._chars_c is not None or len(texts) < 2 or not (
                screen is not None or (not self._has_added and self._chain is None and self._nf_unchanged is None)):
            return [self._encode_one(t, add_special_tokens) for t in texts]
        fn, model, stages, _ = self._batch_c
        if screen is not None:
            staged, folds = texts, None
        else:
            pairs = [self._with_prefix(t) for t in texts]
            staged, folds = [w for w, _ in pairs], [k for _, k in pairs]
        try:
            rs = _pylist().hf_encode_offsets_batch(fn, model, self._model.cache_address(), stages, staged, screen, folds)
        except UnicodeEncodeError:  # a lone surrogate: _encode_one's error, for the first such text
            return [self._encode_one(t, add_special_tokens) for t in texts]
        encs = _pylist().lazy_encodings(rs, 12, lazy[add_special_tokens], self._token_table, texts)
        return [e if e is not None else self._encode_one(t, add_special_tokens) for e, t in zip(encs, texts)]

    def _encode_many_chars(self, texts: list, add_special_tokens: bool) -> list[Encoding]:
        """_encode_many under _chars_c: the non-empty texts with no added token in them, one C
        call for each prefix they get (_CharPiece.meta: at most two), as _encode_lazy encodes
        each; the others one by one."""
        fn, model = self._chars_c
        self._model._chars_ready()
        cp, added = self._char_fast, self._added if self._has_added else None
        groups: dict = {}
        for i, t in enumerate(texts):
            if t and not (added and added.matches(t)):
                meta, k, first_end = cp.meta(t, True)
                groups.setdefault((k, first_end), (meta, []))[1].append(i)
        out: list = [None] * len(texts)
        cache, batch = self._model.cache_address(), _pylist().hf_encode_offsets_batch
        try:
            for (k, first_end), (meta, idx) in groups.items():
                rs = batch(fn, model, cache, self._chars_skip[k, first_end], [texts[i] for i in idx], None, None, meta)
                for i, r in zip(idx, rs):
                    if type(r) is bytes:
                        out[i] = self._chars_encoding(r, add_special_tokens, texts[i])
        except UnicodeEncodeError:  # a lone surrogate: _encode_one's error, for the first such text
            pass
        return [e if e is not None else self._encode_one(t, add_special_tokens) for e, t in zip(out, texts)]

    def _encode_batch_records(self, items: list, pretokenized: bool, add: bool, num_threads: int | None,
                              offsets: bool, where: str, t: Truncation | None, p: Padding | None) -> list[Encoding]:
        """The general batch: each input's record (pairs, pre-tokenized words, truncation),
        then the batch padded together, as tokenizers' encode_batch."""
        inputs = [_encode_input(x, pretokenized) for x in items]
        for i, seqs in enumerate(inputs):  # tokenizers reads every input before it encodes any
            _check_input(seqs, pretokenized, f"{where}: inputs[{i}]")

        def one(i: int) -> dict:
            return self._encode_record(inputs[i], pretokenized, add, offsets, f"{where}: inputs[{i}]", t, p)

        n = self._threads(num_threads)
        size = sum(len(s) if isinstance(s, str) else sum(map(len, s)) for seqs in inputs for s in seqs)
        if n <= 1 or len(inputs) <= 1 or size < PARALLEL_MIN:
            recs = [one(i) for i in range(len(inputs))]
        else:
            recs = map_all(n, one, range(len(inputs)))
        if p is not None:
            pad_records(recs, p)
        return [Encoding._of(r) for r in recs]

    def encode_batch_fast(self, input: Sequence, is_pretokenized: bool = False, add_special_tokens: bool = True, *,
                          num_threads: int | None = None) -> list[Encoding]:
        """:meth:`encode_batch` without offsets, as tokenizers' ``encode_batch_fast``: every
        :class:`Encoding`'s offsets are ``(0, 0)`` and the tokens of the text empty strings
        (ids, masks and type ids as :meth:`encode`'s).  Each keeps its ids in one bytes object and
        makes a new list of them on each access (``[e.ids for e in tok.encode_batch_fast(texts)]``).

        >>> tok = Tokenizer.from_str('{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2},'
        ...                          ' "merges": ["a b"]}, "pre_tokenizer": {"type": "Whitespace"}}')
        >>> [(e.ids, e.offsets) for e in tok.encode_batch_fast(["ab ba", "b"])]
        [([2, 1, 0], [(0, 0), (0, 0), (0, 0)]), ([1], [(0, 0)])]
        """
        return self._in_flight.run(self._encode_batch_fast_body, input, is_pretokenized, add_special_tokens, num_threads=num_threads)

    def _encode_batch_fast_body(self, input: Sequence, is_pretokenized: bool = False,
                                add_special_tokens: bool = True, *, num_threads: int | None = None) -> list[Encoding]:
        inputs = self._batch_items(input, "encode_batch_fast()")
        if num_threads is not None:
            self._threads(num_threads, "encode_batch_fast()")  # its errors, before any work
        if is_pretokenized is not False:
            is_pretokenized = _flag(is_pretokenized, "is_pretokenized", "encode_batch_fast()")
        add = add_special_tokens if type(add_special_tokens) is bool else \
            _flag(add_special_tokens, "add_special_tokens", "encode_batch_fast()")
        t, p = self._lengths
        if is_pretokenized or (t is not None and self._fast_over is None) or \
                not _all_str(inputs):
            return self._encode_batch_records(inputs, is_pretokenized, add, num_threads, False,
                                              "encode_batch_fast()", t, p)
        try:
            n = self._threads(num_threads)
            if n <= 1 or len(inputs) < 2 or sum(map(len, inputs)) < PARALLEL_MIN:
                encs = self._fast_encodings(inputs, add)
            else:
                chunks = [inputs[a:b] for a, b in size_chunks(list(map(len, inputs)), n)]
                parts = map_all(n, lambda c: self._fast_encodings(c, add), chunks)
                encs = [e for part in parts for e in part]
        except Exception:
            _raise_surrogate_first(inputs, "encode_batch_fast()")
            raise
        if t is None and p is None:
            return encs
        return self._finish_batch(inputs, encs, add, False, "encode_batch_fast()", t, p)

    def _fast_encodings(self, texts: list[str], add_special_tokens: bool) -> list[Encoding]:
        wrap = self._fast_wraps[add_special_tokens] if self._fast_wraps is not None else None
        if wrap is not None:
            ids = self._batch_model_ids(texts)
            encs = _pylist().lazy_encodings(ids, 4, wrap, None, None)
            if None in encs:  # not bytes nor a list (none is): as a list
                encs = [e if e is not None else Encoding._fast(list(i), wrap) for e, i in zip(encs, ids)]
            return encs
        out = []
        for ids in self._batch_model_ids(texts):
            n = len(ids) >> 2 if type(ids) is bytes else len(ids)
            if type(ids) is bytes:
                ids = _pylist().ids_to_list((ids, 0), n)
            enc = self._post.process(record(list(ids), [""] * n, [(0, 0)] * n, [0] * n), None, add_special_tokens)
            out.append(Encoding._of(enc))
        return out

    def _batch_chars_ids(self, texts: list[str]) -> list:
        """_batch_model_ids under _chars_c: the normalized texts in one hf_encode_batch call; a
        text holding an added token, or one the model must leave to the general path (HFB_SLOW),
        by _model_ids."""
        from .._pylist import hf_encode_batch

        fn, model = self._chars_c
        self._model._chars_ready()
        metas = self._char_fast.metas
        if metas is not None:  # the pieces made in C
            norm = list(texts)
        else:
            piece = self._char_fast.piece
            norm = [piece(t, True)[0] if t else t for t in texts]
        flagged = [i for i, t in enumerate(texts) if self._added.matches(t)] if self._has_added else []
        for i in flagged:
            norm[i] = ""  # encoded below
        # ids only: hfb_encode_chars reads no offsets' shift, any will do
        out = hf_encode_batch(fn, model, self._model.cache_address(), self._chars_skip[0, 1], norm, None,
                              None if metas is None else metas[2])
        for i in flagged:
            out[i] = None
        for i, ids in enumerate(out):
            if ids is None:
                out[i] = self._model_ids(texts[i])
        return out

    def _model_ids(self, text: str) -> list[int]:
        return self._encode_raw(text, False)[0]

    def _batch_model_ids(self, texts: list[str]) -> list:
        """The model ids of each text, before post-processing: a bytes object of native uint32
        (the C path, one call for the texts it takes whole: no added token, no normalizer) or a
        list."""
        if self._chars_c is not None and texts:
            return self._batch_chars_ids(texts)
        if self._stages is None or (self._norm and self._nf_unchanged is None and self._chain is None) or not texts:
            return [self._model_ids(t) for t in texts]
        if self._norm:  # the texts the normalizer changes: normalized here first
            if self._nf_unchanged is not None:
                norm = [t if self._nf_unchanged(t) else self._normalize_str(t) for t in texts]
            else:
                for t in texts:  # (as _encode_chained: before a Replace can take a surrogate out)
                    _check_text(t, "")
                norm = [self._normalize_str(t) for t in texts]
                norm = [t if n == t else n for t, n in zip(texts, norm)]
            out: list = [None] * len(texts)
            # a changed text holding an added token, in the original (a token not normalized)
            # or once normalized: the general path (the batch call screens the texts the forms
            # leave alone, whose two are the same; found by a review: NFD's "xÅ" with "Å" added
            # unnormalized lost the token)
            whole = [i for i, t in enumerate(texts) if norm[i] is t or not (
                self._has_added and (self._added.matches(t) or self._added.matches(norm[i])))]
            # a text the C path declines comes back None: the general path takes the original
            # (normalizing the normalized text again is wrong for a normalizer that is not
            # idempotent: Replace("a", "ab"); found by a helper's campaign)
            for i, ids in zip(whole, self._batch_whole_ids([norm[i] for i in whole], fallback=False)):
                out[i] = ids
            return [self._model_ids(texts[i]) if ids is None else ids for i, ids in enumerate(out)]
        return self._batch_whole_ids(texts)

    def _batch_segment_ids(self, texts: list[str]) -> list:
        """The model ids of texts holding added tokens (chat templates), without a normalizer or
        a prefix space: every segment between their added tokens in one hf_encode_batch call,
        each text's ids the segments' and the added tokens' joined (a bytes object), or None for
        a text with a segment the C path declines.  By the general path, a text at a time, such a
        batch ran at a third of the speed of one without added tokens."""
        from .._pylist import hf_encode_batch

        segs: list[str] = []
        plans = []
        for text in texts:
            plan = []
            for a, b, tok in self._added_parts(text):
                if tok is None:
                    plan.append(len(segs))
                    segs.append(text[a:b])
                else:
                    plan.append(_pack1(tok.id))
            plans.append(plan)
        fn, model, stages, _ = self._batch_c
        res = hf_encode_batch(fn, model, self._model.cache_address(), stages, segs, None) if segs else []
        out: list = []
        for plan in plans:
            blocks = [res[x] if type(x) is int else x for x in plan]
            out.append(None if any(blk is None for blk in blocks) else b"".join(blocks))
        return out

    def _batch_whole_ids(self, texts: list[str], fallback: bool = True) -> list:
        """_batch_model_ids of texts the stages may take whole (but for added tokens, tested
        here) and that need no normalizer (already normalized); a text the C path declines goes
        through the general path, or is None without fallback."""
        if not texts:
            return []
        if not self._prefix_space and self._metaspace is None:
            from .._pylist import hf_encode_batch

            fn, model, stages, screen = self._batch_c
            cache = self._model.cache_address()
            out = hf_encode_batch(fn, model, cache, stages, texts, screen)
            # None: the screen saw the first two bytes of an added token (the exact test here),
            # or the model needs the general path
            redo = [i for i, ids in enumerate(out) if ids is None]
            clean = [i for i in redo if not self._added.matches(texts[i])] if screen is not None else []
            if clean:
                for i, ids in zip(clean, hf_encode_batch(fn, model, cache, stages, [texts[i] for i in clean], None)):
                    out[i] = ids
            left = [i for i in redo if out[i] is None]
            if left and not self._norm:  # texts holding added tokens: their segments in one call
                for i, ids in zip(left, self._batch_segment_ids([texts[i] for i in left])):
                    out[i] = ids
            for i in redo if fallback else ():
                if out[i] is None:
                    out[i] = self._model_ids(texts[i])
            return out
        from .._pylist import hf_encode_batch

        # the texts as the stages read them (_with_prefix): the added tokens tested here, on the
        # texts themselves; an empty text takes the general path
        added = self._added
        whole = [i for i, t in enumerate(texts) if t and not (added and added.matches(t))]
        out: list = [None] * len(texts)
        if whole:
            fn, model, stages, _ = self._batch_c
            staged = [self._with_prefix(texts[i])[0] for i in whole]
            for i, ids in zip(whole, hf_encode_batch(fn, model, self._model.cache_address(), stages, staged, None)):
                out[i] = ids
        for i, t in enumerate(texts):
            if out[i] is None and fallback:
                out[i] = self._model_ids(t)
        return out

    # -- decoding --
    def decode(self, ids: Iterable[int], skip_special_tokens: bool = True) -> str:
        """The text of ``ids`` through the decoder (tokens joined by spaces without one)."""
        if skip_special_tokens is not True and skip_special_tokens is not False:
            skip_special_tokens = _flag(skip_special_tokens, "skip_special_tokens", "decode()")
        if self._id_bytes is not None:
            return self._decode_byte_level(ids, skip_special_tokens)
        if self._id_text is not None:
            return self._decode_per_token(ids, skip_special_tokens)
        tokens = []
        special = self._skip_ids
        by_id, inv = self._added.by_id, self._model.inv
        for i in ids:
            i = index(i)  # an int (numpy's too), not a float or str: TypeError, as tokenizers
            if skip_special_tokens and i in special:
                continue
            a = by_id.get(i)
            t = a.norm if a is not None else inv.get(i)
            if t is not None:
                tokens.append(t)
            elif not 0 <= i < 1 << 32:
                _checked_id(i, "decode()")  # raises
        return self._decoder.decode(tokens)

    def _decode_per_token(self, ids: Iterable[int], skip_special_tokens: bool) -> str:
        """decode through a chain that starts with per-token steps (Llama 2, Gemma, Mistral:
        Replace("▁", " ") or Metaspace, then ByteFallback, Fuse, Strip): those steps' result is
        kept per id, the rest of the chain runs on it.  Through the whole chain (a normalized
        string per token for Replace) 1,000 ids took 1.7 ms, tokenizers 0.39."""
        cache, dec = self._id_text, self._decoder
        special = self._skip_ids if skip_special_tokens else ()
        tokens: list[str] = []
        for i in ids:
            i = index(i)  # an int (numpy's too), not a float or str: TypeError, as tokenizers
            if i not in special:
                texts = cache.get(i) or self._keep_decoded(cache, i, dec.token_texts)
                if texts is not None:
                    tokens.append(texts[1] if tokens else texts[0])
        return dec.finish(tokens)

    def _keep_decoded(self, cache: dict, i: int, make):
        """make(token) of id i, kept in cache (a token is fixed once loaded), or None for an id
        with no token (skipped, as decode does, and not kept; one out of range raises)."""
        a = self._added.by_id.get(i)
        t = a.norm if a is not None else self._model.inv.get(i)
        if t is None:
            if not 0 <= i < 1 << 32:
                _checked_id(i, "decode()")  # raises
            return None
        v = cache[i] = make(t)
        return v

    def _decode_byte_level(self, ids: Iterable[int], skip_special_tokens: bool) -> str:
        """decode with a ByteLevel decoder alone: each id's bytes (byte_level_bytes of its
        token, made once per id and kept: a token is fixed once loaded), joined and decoded as
        the decoder does.  Through the decoder chain, token strings and a generator per token,
        two ids took 1.5 us (tokenizers: 0.36)."""
        cache = self._id_bytes
        special = self._skip_ids if skip_special_tokens else ()
        parts = []
        for i in ids:
            i = index(i)  # an int (numpy's too), not a float or str: TypeError, as tokenizers
            if i not in special:
                b = cache.get(i)
                if b is not None or (b := self._keep_decoded(cache, i, byte_level_bytes)) is not None:
                    parts.append(b)
        return b"".join(parts).decode("utf-8", "replace")

    def decode_batch(self, sequences: Sequence[Iterable[int]], skip_special_tokens: bool = True, *,
                     num_threads: int | None = None) -> list[str]:
        skip_special_tokens = _flag(skip_special_tokens, "skip_special_tokens", "decode_batch()")
        self._threads(num_threads, "decode_batch()")  # checked; decoding runs on the calling thread
        return [self.decode(s, skip_special_tokens) for s in sequences]

    # -- asyncio, as tokenizers' async_* methods: the arguments are read and checked at the
    # call, the work runs on scantok's own threads (not the event loop's default executor,
    # which the application may keep busy) with the tokenizer as it is at the call (later
    # settings, added tokens or changes to the inputs do not reach it); called outside a
    # running event loop they raise RuntimeError --
    def _snapshot(self) -> "Tokenizer":
        """A tokenizer that encodes as this one does now, sharing its tables (a setting changed
        on this one later, or add_tokens, which swaps in new state, does not reach it)."""
        snap = object.__new__(Tokenizer)
        state = dict(self.__dict__)
        state["_added"] = copy.copy(self._added)  # its encode_special flag is set in place
        snap.__dict__ = state
        return snap

    def _submit(self, fn, *args):
        import asyncio

        loop = asyncio.get_running_loop()
        return asyncio.wrap_future(_async_pool().submit(fn, *args), loop=loop)

    def async_encode(self, sequence, pair=None, is_pretokenized: bool = False, add_special_tokens: bool = True):
        """:meth:`encode`, awaitable (an asyncio future)."""
        pre = _flag(is_pretokenized, "is_pretokenized", "async_encode()")
        add = _flag(add_special_tokens, "add_special_tokens", "async_encode()")
        seq = _input_sequence(sequence, pre)
        other = None if pair is None else _input_sequence(pair, pre)
        return self._submit(self._snapshot().encode, seq, other, pre, add)

    def _async_batch(self, method: str, input, is_pretokenized, add_special_tokens):
        where = f"async_{method}()"
        pre = _flag(is_pretokenized, "is_pretokenized", where)
        add = _flag(add_special_tokens, "add_special_tokens", where)
        items = [x[0] if len(x) == 1 else x for x in (_encode_input(i, pre) for i in self._batch_items(input, where))]
        return self._submit(getattr(self._snapshot(), method), items, pre, add)

    def async_encode_batch(self, input: Sequence, is_pretokenized: bool = False, add_special_tokens: bool = True):
        """:meth:`encode_batch`, awaitable (an asyncio future)."""
        return self._async_batch("encode_batch", input, is_pretokenized, add_special_tokens)

    def async_encode_batch_fast(self, input: Sequence, is_pretokenized: bool = False,
                                add_special_tokens: bool = True):
        """:meth:`encode_batch_fast`, awaitable (an asyncio future)."""
        return self._async_batch("encode_batch_fast", input, is_pretokenized, add_special_tokens)

    def async_decode_batch(self, sequences: Sequence[Iterable[int]], skip_special_tokens: bool = True):
        """:meth:`decode_batch`, awaitable (an asyncio future)."""
        skip = _flag(skip_special_tokens, "skip_special_tokens", "async_decode_batch()")
        if isinstance(sequences, str):
            raise TypeError("async_decode_batch() expects a sequence of id sequences")
        seqs = [[_checked_id(i, "async_decode_batch()") for i in s] for s in sequences]
        return self._submit(self._snapshot().decode_batch, seqs, skip)

    def __reduce__(self):
        # pickled as its file, as tokenizers pickles it (encode_special_tokens is not kept there
        # either); multiprocessing and datasets' map send tokenizers this way
        return Tokenizer.from_str, (self.to_str(),)

    def __repr__(self) -> str:
        return f"Tokenizer(model={type(self._model).__name__}, vocab_size={self.get_vocab_size()})"


class _TokenTable:
    """id -> model token (None where the model has none), made on the first call, for
    Encoding.tokens.  Lazy encodings keep this rather than a method of the tokenizer: they are
    not tracked by the cyclic GC (scantok._pylist.lazy_encoding), so nothing they hold may lead
    back to an encoding, as a tokenizer could (an attribute set on it); the model cannot."""

    __slots__ = ("_model", "_table")

    def __init__(self, model):
        self._model = model
        self._table = None

    def __call__(self) -> list:
        t = self._table
        if t is None:
            inv = self._model.inv
            t = self._table = [inv.get(i) for i in range(max(inv, default=-1) + 1)]
        return t


def _join_blocks(blocks: list, counts: list, shifts: list, wbases: list, n: int):
    """_encode_segments' parts joined: (ids, starts + shift, ends + shift as one bytes object of
    3n uint32, words + word base as a numpy array).  A few parts part by part; many (a text of
    thousands of added tokens) in one vectorised pass, where numpy per part cost more than the
    general path."""
    import numpy as np

    if len(blocks) <= 8:
        cols: list = [[], [], [], []]
        for blk, m, a, w in zip(blocks, counts, shifts, wbases):
            arr = np.frombuffer(blk, dtype=np.uint32)
            cols[0].append(arr[:m])
            cols[1].append(arr[m:2 * m] + np.uint32(a))
            cols[2].append(arr[2 * m:3 * m] + np.uint32(a))
            cols[3].append(arr[3 * m:] + np.uint32(w))
        return np.concatenate(cols[0] + cols[1] + cols[2]).tobytes(), np.concatenate(cols[3])
    m = np.array(counts, dtype=np.int64)
    part = np.repeat(np.arange(len(counts)), m)
    first = np.cumsum(m) - m
    at = 4 * first[part] + np.arange(n) - first[part]  # each token's id in its part's block
    mp = m[part]
    flat = np.frombuffer(b"".join(blocks), dtype=np.uint32)
    shift = np.array(shifts, dtype=np.uint32)[part]
    arrays = np.concatenate([flat[at], flat[at + mp] + shift, flat[at + 2 * mp] + shift]).tobytes()
    return arrays, flat[at + 3 * mp] + np.array(wbases, dtype=np.uint32)[part]


# four native uint32: _encode_segments' block of one added token; one: _batch_segment_ids'
_pack4 = struct.Struct("=4I").pack
_pack1 = struct.Struct("=I").pack


class _InFlight:
    """The encode calls running on a tokenizer, which add_tokens' swap of the whole state must
    not pull the C handles from under: they hand hf_bpe.c the model's, the stages' and the thread
    caches' addresses and release the GIL, so a state replaced meanwhile is kept (retired) until
    the last of them returns (found by a helper's review: encode on one thread and add_tokens on
    another read freed stages under ASan).  One per tokenizer, carried across the swaps."""

    __slots__ = ("calls", "retired")

    def __init__(self):
        self.calls = 0
        self.retired: list[dict] = []

    def run(self, body, *args, **kw):
        """body(*args, **kw), counted among the calls in flight."""
        self.calls += 1
        try:
            return body(*args, **kw)
        finally:
            self.calls -= 1
            if self.retired:
                self.settle()

    def settle(self) -> None:
        """After a call: the retired states go once no call runs."""
        if not self.calls:
            self.retired.clear()


def _added_screen(added) -> bytes | None:
    """For scantok._pylist.hf_encode_batch: flags of the first UTF-8 byte of each added token
    (1: the token has two bytes or more, 2: it is that byte), then a bitmap of their first two
    bytes; a text where none occurs holds no added token.  None without added tokens.  A
    normalized token's normalized content counts too: under a normalizer of Unicode forms the
    batch call takes the texts the forms leave alone, whose original and normalized text are
    the same (NFD's "A\u030a" is a normalized "Å")."""
    contents = [c.encode("utf-8", "surrogatepass") for t in added.tokens for c in {t.content, t.norm}]
    contents = [c for c in contents if c]
    if not contents:
        return None
    first, pairs = bytearray(256), bytearray(8192)
    for c in contents:
        if len(c) == 1:
            first[c[0]] |= 2
        else:
            first[c[0]] |= 1
            pairs[c[0] << 5 | c[1] >> 3] |= 1 << (c[1] & 7)
    return bytes(first + pairs)


def _merges_untracked(obj: dict) -> dict:
    """obj (the file, kept for to_str and for the tokenizers made from it) with its model's
    merges as a tuple (of strs, or of 2-tuples), which the cyclic GC stops tracking on its
    first pass over it.  Kept as the file's list, its 127K strs (DeepSeek V3) were visited by
    every full collection, each a cache miss: 11-19 ms a collection for one loaded tokenizer,
    against 1 ms without it."""
    model = obj.get("model")
    merges = model.get("merges") if isinstance(model, Mapping) else None
    if not isinstance(merges, list):
        return obj
    frozen = tuple(tuple(m) if type(m) is list else m for m in merges)
    return {**obj, "model": {**model, "merges": frozen}}


def _step_dfa(step: _Step):
    """The compiled scanner of a split (a shipped scanner, or one compiled at load time by
    scantok.compile in Oniguruma's semantics); a literal split's is the regex of its
    characters as code points (the same leftmost non-overlapping matches); None where there is
    none (an empty literal, a character the compiler refuses)."""
    m = step.matcher
    if m.literal is not None:
        if not m.literal:
            return None
        from .patterns import _regex_matcher

        try:  # kept alive by the matchers' cache
            return _regex_matcher("".join("\\x{%x}" % ord(c) for c in m.literal)).dfa
        except UnsupportedComponentError:
            return None
    return m.dfa
