"""HuggingFace models: the WordLevel tokenizer (vocabulary lookup on compiled scanners)."""
from __future__ import annotations

import json
import os
import re
from typing import Any, Iterable, Iterator, Mapping, Sequence

from ..threadpool import map_all, usable_cpus
from .args import u32
from .errors import UnsupportedComponentError, WordLevelError, _batch_surrogate_error, _check_text, _surrogate_error
from .native import _native
from .normalizers import _NORM_NAMES, _NS, _norm_steps
from .pre_tokenizers import _PRETOK_NAMES, _pretok_steps, _pretokenize

def _as_spec(obj: Any, names: Mapping[str, dict], kind: str) -> dict | None:
    if obj is None:
        return None
    if isinstance(obj, str):
        if obj not in names:
            raise UnsupportedComponentError(f"unknown {kind} name {obj!r} (known: {', '.join(sorted(names))})")
        return json.loads(json.dumps(names[obj]))
    if isinstance(obj, Mapping):
        return json.loads(json.dumps(obj))
    if hasattr(obj, "__getstate__"):  # a `tokenizers` component object
        state = obj.__getstate__()
        if isinstance(state, (bytes, str)):
            return json.loads(state)
    if isinstance(obj, (list, tuple)):
        key = "pretokenizers" if kind == "pre-tokenizer" else "normalizers"
        return {"type": "Sequence", key: [_as_spec(o, names, kind) for o in obj]}
    raise WordLevelError(f"cannot use {obj!r} as a {kind}")


def _compose_specs(normalizer, pre_tokenizer, *, lowercase=False, split_on_cjk=False,
                   split_on_punctuation=False):
    norm = _as_spec(normalizer, _NORM_NAMES, "normalizer")
    pre = _as_spec(pre_tokenizer, _PRETOK_NAMES, "pre-tokenizer")
    extra_norm = []
    if split_on_cjk:
        extra_norm.append({"type": "BertNormalizer", "clean_text": False, "handle_chinese_chars": True,
                           "strip_accents": False, "lowercase": False})
    if lowercase:
        extra_norm.append({"type": "Lowercase"})
    if extra_norm:
        parts = ([norm] if norm else []) + extra_norm
        norm = parts[0] if len(parts) == 1 else {"type": "Sequence", "normalizers": parts}
    if split_on_punctuation:
        p = {"type": "Punctuation", "behavior": "Isolated"}
        pre = p if pre is None else {"type": "Sequence", "pretokenizers": [pre, p]}
    return norm, pre



class WordLevel:
    """A HuggingFace-compatible WordLevel tokenizer.

    ``WordLevel(vocab, unk_token="[UNK]", normalizer=None, pre_tokenizer="whitespace_split",
    *, added_tokens=(), lowercase=False, split_on_cjk=False, split_on_punctuation=False)``

    ``normalizer`` / ``pre_tokenizer`` are HF JSON objects (dicts), ``tokenizers`` component
    objects, short names (``"whitespace"``, ``"whitespace_split"``, ``"bert"``,
    ``"punctuation"``, ``"digits"``; ``"lowercase"``, ``"nfc"``, ..., ``"strip"``, ``"bert"``),
    lists of these (a Sequence), or ``None``.  ``lowercase`` appends a Lowercase normalizer,
    ``split_on_cjk`` makes each CJK ideograph its own word (BERT's handle_chinese_chars),
    ``split_on_punctuation`` appends an isolating Punctuation pre-tokenizer.
    """

    def __init__(self, vocab: Mapping[str, int], unk_token: str = "[UNK]", normalizer: Any = None,
                 pre_tokenizer: Any = "whitespace_split", *, added_tokens: Sequence[Mapping] = (),
                 lowercase: bool = False, split_on_cjk: bool = False, split_on_punctuation: bool = False):
        if not isinstance(vocab, Mapping):
            raise WordLevelError("vocab must be a mapping of token -> id")
        clean: dict[str, int] = {}
        for tok, idx in vocab.items():
            if not isinstance(tok, str):
                raise WordLevelError(f"vocab: token {tok!r} is not a string")
            if isinstance(idx, bool) or not isinstance(idx, int) or not 0 <= idx <= 0x7FFFFFFF:
                raise WordLevelError(f"vocab: id of {tok!r} must be an integer in [0, 2**31), got {idx!r}")
            clean[tok] = idx
        if not isinstance(unk_token, str):
            raise WordLevelError("unk_token must be a string")
        norm, pre = _compose_specs(normalizer, pre_tokenizer, lowercase=lowercase,
                                   split_on_cjk=split_on_cjk, split_on_punctuation=split_on_punctuation)
        self._vocab = clean
        self._unk_token = unk_token
        self._norm_spec = norm
        self._pre_spec = pre
        self._norm = _norm_steps(norm)
        self._stages = _pretok_steps(pre)
        self._added = [self._check_added(t, i) for i, t in enumerate(added_tokens)]
        self._setup()

    # -- construction helpers --
    @staticmethod
    def _check_added(tok: Any, i: int) -> dict:
        where = f"added_tokens[{i}]"
        if not isinstance(tok, Mapping):
            raise WordLevelError(f"{where}: expected an object")
        if not isinstance(tok.get("content"), str) or not tok["content"]:
            raise WordLevelError(f"{where}: 'content' must be a non-empty string")
        idx = tok.get("id")
        if isinstance(idx, bool) or not isinstance(idx, int) or idx < 0:
            raise WordLevelError(f"{where}: 'id' must be a non-negative integer")
        for opt in ("single_word", "lstrip", "rstrip"):
            if tok.get(opt, False):
                raise UnsupportedComponentError(f"{where}: added token option {opt}=true is not supported")
        if tok.get("normalized", False):
            raise UnsupportedComponentError(f"{where}: added token with normalized=true is not supported")
        return {
            "id": idx, "content": tok["content"], "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": bool(tok.get("special", False)),
        }

    def _setup(self) -> None:
        self._inv: dict[int, str] = {}
        for tok, idx in self._vocab.items():
            self._inv[idx] = tok
        self._added_by_content = {t["content"]: t for t in self._added}
        self._added_by_id = {t["id"]: t["content"] for t in self._added}
        self._special = {t["content"] for t in self._added if t["special"]}
        self._unk_id = self._vocab.get(self._unk_token)
        self._added_re = None
        # an added token holding a lone surrogate would match one in a text (which tokenizers
        # refuses whole): then encode tests every text first
        self._added_surrogate = any(_surrogate_error(t["content"], "") is not None for t in self._added)
        if self._added:
            alts = sorted((t["content"] for t in self._added), key=len, reverse=True)
            self._added_re = re.compile("|".join(re.escape(a) for a in alts))
        # the hot path: one split that keeps its matches
        self._fast = None
        if len(self._stages) == 1 and len(self._stages[0]) == 1 and self._stages[0][0].keeps_matches_only:
            self._fast = self._stages[0][0].matcher
        self._table = None
        self._fused = True  # use the hand-written WhitespaceSplit loop (False: the compiled scanner)
        nat = _native()
        if nat is not None:
            ffi, lib = nat
            table = lib.vt_new(len(self._vocab))
            if table == ffi.NULL:
                raise MemoryError
            table = ffi.gc(table, lib.vt_free)
            for tok, idx in self._vocab.items():
                b = tok.encode("utf-8", "surrogatepass")
                if lib.vt_insert(table, b, len(b), idx) < 0:
                    raise MemoryError
            self._table = table

    # -- loading / saving --
    @classmethod
    def from_file(cls, path: str | os.PathLike) -> "WordLevel":
        with open(path, "rb") as f:
            raw = f.read()
        try:
            return cls.from_str(raw)
        except WordLevelError as e:
            raise type(e)(f"{os.fspath(path)}: {e}") from None

    @classmethod
    def from_str(cls, data: str | bytes) -> "WordLevel":
        try:
            obj = json.loads(data)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise WordLevelError(f"not valid JSON: {e}") from None
        if not isinstance(obj, dict):
            raise WordLevelError("tokenizer.json must hold a JSON object")
        model = obj.get("model")
        if not isinstance(model, dict):
            raise WordLevelError("missing 'model' object")
        mtype = model.get("type")
        if mtype != "WordLevel":
            raise UnsupportedComponentError(f"model: unsupported model type {mtype!r} (only WordLevel)")
        for key in ("post_processor", "decoder", "truncation", "padding"):
            val = obj.get(key)
            if val is not None:
                what = val.get("type", "") if isinstance(val, dict) else ""
                raise UnsupportedComponentError(f"{key}: unsupported {key} {what!r}".replace(" ''", ""))
        vocab = model.get("vocab")
        if not isinstance(vocab, dict):
            raise WordLevelError("model.vocab must be an object")
        unk = model.get("unk_token", "<unk>")
        added = obj.get("added_tokens") or []
        if not isinstance(added, list):
            raise WordLevelError("added_tokens must be a list")
        return cls(vocab, unk, obj.get("normalizer"), obj.get("pre_tokenizer"), added_tokens=added)

    def to_json(self) -> dict:
        return {
            "version": "1.0",
            "truncation": None,
            "padding": None,
            "added_tokens": [dict(t) for t in self._added],
            "normalizer": self._norm_spec,
            "pre_tokenizer": self._pre_spec,
            "post_processor": None,
            "decoder": None,
            "model": {
                "type": "WordLevel",
                "vocab": dict(sorted(self._vocab.items(), key=lambda kv: (kv[1], kv[0]))),
                "unk_token": self._unk_token,
            },
        }

    def to_str(self, pretty: bool = False) -> str:
        return json.dumps(self.to_json(), ensure_ascii=False, indent=2 if pretty else None)

    def save(self, path: str | os.PathLike, pretty: bool = True) -> None:
        from ..bpe.export import write_atomic  # whole or not at all, as Tokenizer.save

        write_atomic(path, self.to_str(pretty))

    def to_hf(self):
        """The equivalent ``tokenizers.Tokenizer`` (needs the `tokenizers` package)."""
        from tokenizers import Tokenizer

        return Tokenizer.from_str(self.to_str())

    # -- vocabulary --
    @property
    def unk_token(self) -> str:
        return self._unk_token

    @property
    def normalizer(self) -> dict | None:
        return self._norm_spec

    @property
    def pre_tokenizer(self) -> dict | None:
        return self._pre_spec

    def get_vocab(self) -> dict[str, int]:
        v = dict(self._vocab)
        for t in self._added:
            v[t["content"]] = t["id"]
        return v

    def get_vocab_size(self) -> int:
        return len(self.get_vocab())

    def __len__(self) -> int:
        return self.get_vocab_size()

    def token_to_id(self, token: str) -> int | None:
        a = self._added_by_content.get(token)
        if a is not None:
            return a["id"]
        return self._vocab.get(token)

    def id_to_token(self, idx: int) -> str | None:
        t = self._added_by_id.get(idx)
        return t if t is not None else self._inv.get(idx)

    def __repr__(self) -> str:
        return (f"WordLevel(vocab_size={len(self._vocab)}, unk_token={self._unk_token!r}, "
                f"normalizer={self._norm_spec!r}, pre_tokenizer={self._pre_spec!r})")

    # -- normalization / pre-tokenization --
    def normalize(self, text: str) -> str:
        """The normalized text (as HF's ``normalizer.normalize_str``)."""
        ns = _NS(text, track=False)
        for step in self._norm:
            step(ns)
        return ns.text

    def _normalized(self, text: str) -> _NS:
        ns = _NS(text)
        for step in self._norm:
            step(ns)
        return ns

    def pre_tokenize(self, text: str) -> list[tuple[str, tuple[int, int]]]:
        """Words and their offsets in ``text`` (normalizer applied first; no added tokens)."""
        ns = self._normalized(text)
        pieces = self._pieces(ns.text)
        return [(ns.text[a:b], ns.orig_range(a, b)) for a, b in pieces]

    def _pieces(self, text: str) -> list[tuple[int, int]]:
        if not self._stages:
            return [(0, len(text))] if text else []
        return _pretokenize(self._stages, text)

    def _segments(self, text: str) -> Iterator[tuple[int, int, int | None]]:
        """(start, end, added-token id or None) covering text."""
        if self._added_re is None:
            yield 0, len(text), None
            return
        pos = 0
        for m in self._added_re.finditer(text):
            a, b = m.span()
            if a > pos:
                yield pos, a, None
            yield a, b, self._added_by_content[m.group()]["id"]
            pos = b
        if pos < len(text):
            yield pos, len(text), None

    # -- encoding --
    def _missing_unk(self):
        return WordLevelError(f"WordLevel error: Missing {self._unk_token} token from the vocabulary")

    def _lookup(self, words: Iterable[str]) -> list[int]:
        v, unk = self._vocab, self._unk_id
        out = []
        for w in words:
            i = v.get(w)
            if i is None:
                if unk is None:
                    raise self._missing_unk()
                i = unk
            out.append(i)
        return out

    def _encode_plain(self, text: str, offsets: bool, as_numpy: bool = False):
        """ids (and offsets, in normalized-text str indices) of one segment without added tokens."""
        if self._native_fast():
            return self._encode_native(text, offsets, as_numpy)
        pieces = self._pieces(text)
        ids = self._lookup(text[a:b] for a, b in pieces)
        if as_numpy:
            import numpy as np

            ids = np.asarray(ids, dtype=np.int32)
        return (ids, pieces) if offsets else ids

    def _encode_native(self, text: str, offsets: bool, as_numpy: bool):
        import numpy as np

        ffi, lib = _native()
        data = str.encode(text, "utf-8")  # strict: a lone surrogate raises (the callers say where)
        n = len(data)
        if n == 0:
            ids = np.empty(0, dtype=np.int32) if as_numpy else []
            return (ids, []) if offsets else ids
        ids = np.empty(n, dtype=np.int32)
        unk = -1 if self._unk_id is None else self._unk_id
        pids = ffi.cast("int32_t *", ids.ctypes.data)
        if offsets:
            st = np.empty(n, dtype=np.uint32)
            en = np.empty(n, dtype=np.uint32)
            pst, pen = ffi.cast("uint32_t *", st.ctypes.data), ffi.cast("uint32_t *", en.ctypes.data)
        else:
            pst = pen = ffi.NULL
        if self._fast.scanner == "whitespace_split" and self._fused:
            k = lib.vt_encode_wsplit(self._table, data, n, unk, pids, pst, pen, 1)
        else:
            k = lib.vt_encode(self._table, self._fast.dfa, data, n, lib.SCANTOK_SURROGATEPASS, unk,
                              pids, pst, pen, 1)
        if k < 0:
            if k == -(2**63):
                raise MemoryError
            raise self._missing_unk()
        out = ids[:k].copy() if as_numpy else ids[:k].tolist()
        if offsets:
            return out, list(zip(st[:k].tolist(), en[:k].tolist()))
        return out

    def encode(self, text: str, *, as_numpy: bool = False):
        """Token ids of ``text`` (a list, or a numpy ``int32`` array with ``as_numpy=True``)."""
        if not isinstance(text, str):
            raise TypeError(f"encode() expects str, got {type(text).__name__}")
        # a lone surrogate: tokenizers refuses the str.  The one-call path finds it as it makes
        # the UTF-8 (strict); a normalizer (which could remove it), the Python path or an added
        # token holding one: tested first
        if self._norm or self._added_surrogate or not self._native_fast():
            _check_text(text, "encode()")
        try:
            if self._added_re is None:
                return self._encode_plain(self.normalize(text) if self._norm else text, False, as_numpy)
            ids: list[int] = []
            for a, b, aid in self._segments(text):
                if aid is not None:
                    ids.append(aid)
                else:
                    seg = text[a:b]
                    ids.extend(self._encode_plain(self.normalize(seg) if self._norm else seg, False))
        except UnicodeEncodeError as err:
            raise _surrogate_error(text, "encode()") or err from None
        if as_numpy:
            import numpy as np

            return np.asarray(ids, dtype=np.int32)
        return ids

    def encode_with_offsets(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        """``(ids, offsets)``; offsets are ``(start, end)`` str indices into ``text``, as HF's."""
        if not isinstance(text, str):
            raise TypeError(f"encode_with_offsets() expects str, got {type(text).__name__}")
        _check_text(text, "encode_with_offsets()")  # a lone surrogate: tokenizers refuses the str
        ids: list[int] = []
        offs: list[tuple[int, int]] = []
        for a, b, aid in self._segments(text):
            if aid is not None:
                ids.append(aid)
                offs.append((a, b))
                continue
            seg = text[a:b]
            ns = self._normalized(seg)
            sids, pieces = self._encode_plain(ns.text, True)
            ids.extend(sids)
            if ns.align is None:
                if a == 0 and not offs:
                    offs = pieces if isinstance(pieces, list) else list(pieces)
                else:
                    offs.extend((a + s, a + e) for s, e in pieces)
            else:
                al = ns.align
                offs.extend((a + al[s][0], a + al[e - 1][1]) for s, e in pieces)
        return ids, offs

    def encode_batch(self, texts: Sequence[str], num_threads: int | None = None, *,
                     with_offsets: bool = False, as_numpy: bool = False):
        """Encodes every text; ``num_threads`` > 1 uses a thread pool (the C scan and lookup run
        without the GIL).  Returns a list of what :meth:`encode` (or, with ``with_offsets``,
        :meth:`encode_with_offsets`) returns."""
        if isinstance(texts, str):
            raise TypeError("encode_batch() expects a sequence of strings, not a single str")
        if num_threads is None:
            num_threads = os.cpu_count() or 1
        elif isinstance(num_threads, bool) or not isinstance(num_threads, int):
            raise TypeError(f"encode_batch(): num_threads must be an int or None, got {type(num_threads).__name__}")
        elif num_threads < 1:
            raise ValueError(f"encode_batch(): num_threads must be at least 1, got {num_threads}")
        try:
            return self._encode_batch(texts, num_threads, with_offsets, as_numpy)
        except UnicodeEncodeError as err:  # a lone surrogate (the one-call path's strict UTF-8)
            raise _batch_surrogate_error(list(texts), "encode_batch()") or err from None

    def _encode_batch(self, texts: Sequence[str], num_threads: int, with_offsets: bool, as_numpy: bool):
        if not with_offsets and self._native_fast() and self._added_re is None and texts:
            if self._norm:  # a normalizer could move a lone surrogate: tested first
                for i, t in enumerate(texts):
                    if isinstance(t, str):
                        _check_text(t, f"encode_batch(): inputs[{i}]")
            return self._encode_batch_native(texts, num_threads, as_numpy)
        if with_offsets:
            fn = self.encode_with_offsets
        else:
            def fn(t, _e=self.encode, _n=as_numpy):
                return _e(t, as_numpy=_n)
        if num_threads <= 1 or len(texts) <= 1:
            return [fn(t) for t in texts]
        n = min(num_threads, usable_cpus())
        return map_all(n, fn, texts)

    def _native_fast(self) -> bool:
        """True when encode runs as one C call (scan + lookup) per text."""
        if self._fast is None or self._table is None:
            return False
        return (self._fast.scanner == "whitespace_split" and self._fused) or self._fast.dfa is not None

    def _encode_batch_native(self, texts: Sequence[str], num_threads: int, as_numpy: bool):
        import numpy as np

        ffi, lib = _native()
        for t in texts:
            if not isinstance(t, str):
                raise TypeError(f"encode_batch() expects strings, got {type(t).__name__}")
        norm = self.normalize if self._norm else None
        encoded = [str.encode(norm(t) if norm else t, "utf-8") for t in texts]  # strict: see encode_batch
        offsets = np.zeros(len(encoded) + 1, dtype=np.uint64)
        np.cumsum([len(b) for b in encoded], out=offsets[1:])
        data = b"".join(encoded)
        total = int(offsets[-1])
        ids = np.empty(max(total, 1), dtype=np.int32)
        counts = np.empty(len(encoded), dtype=np.int64)
        dfa = ffi.NULL if (self._fast.scanner == "whitespace_split" and self._fused) else self._fast.dfa
        unk = -1 if self._unk_id is None else self._unk_id
        rc = lib.vt_encode_batch(self._table, dfa, data, ffi.cast("uint64_t *", offsets.ctypes.data),
                                 len(encoded), lib.SCANTOK_SURROGATEPASS, unk,
                                 ffi.cast("int32_t *", ids.ctypes.data),
                                 ffi.cast("int64_t *", counts.ctypes.data), max(1, int(num_threads)))
        if rc == -(2**63):
            raise MemoryError
        if rc < 0:
            raise self._missing_unk()
        offs = offsets[:-1].tolist()
        cnts = counts.tolist()
        if as_numpy:
            return [ids[o:o + c].copy() for o, c in zip(offs, cnts)]
        return [ids[o:o + c].tolist() for o, c in zip(offs, cnts)]

    def decode(self, ids: Iterable[int], skip_special_tokens: bool = True) -> str:
        """As HF with no decoder: the tokens joined by spaces; unknown ids are skipped, and so
        are special added tokens when ``skip_special_tokens``."""
        out = []
        for k, i in enumerate(ids):
            # as tokenizers reads ids: an int (TypeError for "1" or 2.7), 0 <= id < 2**32
            tok = self.id_to_token(u32(i, f"ids[{k}]"))
            if tok is None or (skip_special_tokens and tok in self._special):
                continue
            out.append(tok)
        return " ".join(out)
