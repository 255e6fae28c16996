"""Character-level tokenizer with a fixed, exact specification.

Specification
-------------
* ``normalize(text)``: printable ASCII (code points 32..126), ``"\\n"`` and ``"\\t"`` are kept
  unchanged; every other character (non-ASCII, other control characters, lone surrogates)
  becomes the placeholder ``"<UNK>"``.  ``normalize("") == ""``.
* Vocabulary order: ``<PAD>`` = 0, ``<UNK>`` = 1, then the allowed characters in code-point
  order from 2: ``"\\t"`` = 2, ``"\\n"`` = 3, ``" "`` = 4, ``"!"`` = 5, ... ``"~"`` = 98
  (so a printable character ``c`` has id ``ord(c) - 28``).  99 ids in all.
* ``encode(text)`` returns one id per character of ``normalize(text)``, except that every
  ``"<UNK>"`` placeholder is the single id 1.  The normalized text is read left to right and
  each occurrence of the five characters ``<UNK>`` is the placeholder, whether it came from an
  unknown character or was already in the input; therefore ``encode(normalize(t)) == encode(t)``
  and ``decode(encode(t)) == normalize(t)`` for every string ``t``.
* ``decode(ids)`` writes ``"<UNK>"`` for the unk id and nothing for the pad id; any other id
  not in the vocabulary is a ``ValueError``.
* ``save_vocab(path)`` writes indented, human-readable JSON; ``CharTokenizer.load_vocab(path)``
  reads it back.  Loading validates everything before building anything: a malformed file
  raises :class:`CharVocabError` (a ``ValueError``) naming the problem.
* ``encode_batch(texts, pad_to=None)`` returns ``(ids, attention_mask)``: two numpy ``int64``
  arrays of shape ``(len(texts), length)`` where ``length`` is ``pad_to`` or the longest
  encoding; padding uses the pad id and mask 0.
"""
from __future__ import annotations

import json
import operator
import os
from typing import Iterable, Mapping, Sequence

__all__ = ["CharTokenizer", "CharVocabError", "PAD", "UNK", "ALLOWED_CHARS"]

PAD = "<PAD>"
UNK = "<UNK>"
#: The kept characters, in vocabulary (code point) order.
ALLOWED_CHARS = "\t\n" + "".join(chr(c) for c in range(32, 127))

_FORMAT = "scantok.CharTokenizer"
_FORMAT_VERSION = 1


def _have_numpy() -> bool:
    try:
        import numpy  # noqa: F401
    except ImportError:
        return False
    return True


class CharVocabError(ValueError):
    """A character vocabulary file or mapping is malformed."""


def _default_vocab() -> dict[str, int]:
    vocab = {PAD: 0, UNK: 1}
    for i, ch in enumerate(ALLOWED_CHARS):
        vocab[ch] = i + 2
    return vocab


def _validate_vocab(vocab: object, where: str = "vocabulary") -> dict[str, int]:
    """Checks a token -> id mapping; returns a clean copy or raises CharVocabError."""
    if not isinstance(vocab, Mapping):
        raise CharVocabError(f"{where}: expected a JSON object mapping tokens to ids, got {type(vocab).__name__}")
    out: dict[str, int] = {}
    by_id: dict[int, str] = {}
    for tok, idx in vocab.items():
        if not isinstance(tok, str):
            raise CharVocabError(f"{where}: token {tok!r} is not a string")
        if isinstance(idx, bool) or not isinstance(idx, int):
            raise CharVocabError(f"{where}: id of token {tok!r} is not an integer: {idx!r}")
        if idx < 0 or idx > 0x7FFFFFFF:
            raise CharVocabError(f"{where}: id of token {tok!r} is out of range: {idx}")
        if idx in by_id:
            raise CharVocabError(f"{where}: duplicate id {idx} (tokens {by_id[idx]!r} and {tok!r})")
        if tok not in (PAD, UNK):
            if len(tok) != 1:
                raise CharVocabError(f"{where}: token {tok!r} is neither <PAD>, <UNK> nor a single character")
            if tok not in ALLOWED_CHARS:
                raise CharVocabError(
                    f"{where}: character {tok!r} is not in the alphabet (printable ASCII, \\n, \\t)"
                )
        by_id[idx] = tok
        out[tok] = idx
    for special in (PAD, UNK):
        if special not in out:
            raise CharVocabError(f"{where}: missing required token {special}")
    missing = [c for c in ALLOWED_CHARS if c not in out]
    if missing:
        raise CharVocabError(f"{where}: missing characters {''.join(missing)!r}")
    return out


class CharTokenizer:
    """Character-level tokenizer; see the module docstring for the exact specification."""

    __slots__ = ("_vocab", "_inv", "_pad_id", "_unk_id", "_lut", "_np_lut", "_identity")

    def __init__(self, vocab: Mapping[str, int] | None = None):
        self._vocab = _default_vocab() if vocab is None else _validate_vocab(vocab)
        self._inv = {i: t for t, i in self._vocab.items()}
        self._pad_id = self._vocab[PAD]
        self._unk_id = self._vocab[UNK]
        # code point (< 128) -> id; everything else -> unk
        lut = [self._unk_id] * 128
        for ch in ALLOWED_CHARS:
            lut[ord(ch)] = self._vocab[ch]
        self._lut = lut
        self._np_lut = None
        self._identity = self._vocab == _default_vocab()

    # -- vocabulary --------------------------------------------------------------------------
    @property
    def pad_id(self) -> int:
        return self._pad_id

    @property
    def unk_id(self) -> int:
        return self._unk_id

    @property
    def vocab_size(self) -> int:
        return len(self._vocab)

    def __len__(self) -> int:
        return len(self._vocab)

    def get_vocab(self) -> dict[str, int]:
        return dict(self._vocab)

    def token_to_id(self, token: str) -> int | None:
        return self._vocab.get(token)

    def id_to_token(self, idx: int) -> str | None:
        return self._inv.get(idx)

    def __repr__(self) -> str:
        return f"CharTokenizer(vocab_size={len(self._vocab)})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CharTokenizer) and self._vocab == other._vocab

    __hash__ = None  # type: ignore[assignment]

    # -- normalize / encode / decode ---------------------------------------------------------
    @staticmethod
    def normalize(text: str) -> str:
        if not isinstance(text, str):
            raise TypeError(f"normalize() expects str, got {type(text).__name__}")
        if text.isascii() and text.isprintable():
            return text
        return "".join(ch if (" " <= ch <= "~" or ch == "\n" or ch == "\t") else UNK for ch in text)

    def _codes(self, text: str):
        import numpy as np

        if not isinstance(text, str):
            raise TypeError(f"encode() expects str, got {type(text).__name__}")
        if UNK in text:
            text = text.replace(UNK, "\x00")  # \x00 is not in the alphabet: it maps to <UNK>
        if text.isascii():
            cps = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
        else:
            cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
            cps = np.where(cps < 128, cps, 0)
        if self._np_lut is None:
            self._np_lut = np.asarray(self._lut, dtype=np.int64)
        return self._np_lut[cps]

    def encode(self, text: str) -> list[int]:
        """One id per character of ``normalize(text)``; each ``<UNK>`` placeholder is one id."""
        if not isinstance(text, str):
            raise TypeError(f"encode() expects str, got {type(text).__name__}")
        if len(text) < 64 or not _have_numpy():
            if UNK in text:
                text = text.replace(UNK, "\x00")
            lut, unk = self._lut, self._unk_id
            return [lut[o] if o < 128 else unk for o in map(ord, text)]
        return self._codes(text).tolist()

    def encode_numpy(self, text: str):
        """Like :meth:`encode`, as a numpy ``int64`` array."""
        return self._codes(text)

    def decode(self, ids: Iterable[int]) -> str:
        inv, pad = self._inv, self._pad_id
        out = []
        for i in ids:
            i = operator.index(i)  # an int (numpy's too), not "12" nor 5.9 (int() took both)
            if i == pad:
                continue
            tok = inv.get(i)
            if tok is None:
                raise ValueError(f"decode(): id {i} is not in the vocabulary")
            out.append(tok)
        return "".join(out)

    def encode_batch(self, texts: Sequence[str], pad_to: int | None = None, *, truncate: bool = False):
        """Encodes ``texts`` into ``(ids, attention_mask)``, two ``int64`` arrays of shape
        ``(len(texts), length)``; ``length`` is ``pad_to`` if given, else the longest encoding.
        An encoding longer than ``pad_to`` is a ``ValueError`` unless ``truncate=True``."""
        import numpy as np

        if isinstance(texts, str):
            raise TypeError("encode_batch() expects a sequence of strings, not a single str")
        encs = [self._codes(t) for t in texts]
        longest = max((len(e) for e in encs), default=0)
        if pad_to is None:
            length = longest
        else:
            if isinstance(pad_to, bool) or not isinstance(pad_to, int) or pad_to < 0:
                raise ValueError(f"pad_to must be a non-negative integer, got {pad_to!r}")
            length = pad_to
            if longest > length and not truncate:
                raise ValueError(
                    f"an encoding has {longest} ids, longer than pad_to={pad_to} (pass truncate=True to cut)"
                )
        ids = np.full((len(encs), length), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(encs), length), dtype=np.int64)
        for row, e in enumerate(encs):
            n = min(len(e), length)
            ids[row, :n] = e[:n]
            mask[row, :n] = 1
        return ids, mask

    # -- persistence -------------------------------------------------------------------------
    def to_json(self) -> str:
        body = {
            "format": _FORMAT,
            "version": _FORMAT_VERSION,
            "vocab": dict(sorted(self._vocab.items(), key=lambda kv: kv[1])),
        }
        return json.dumps(body, indent=2, ensure_ascii=True) + "\n"

    def save_vocab(self, path: str | os.PathLike) -> None:
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(self.to_json())

    @classmethod
    def from_json(cls, text: str | bytes) -> "CharTokenizer":
        def no_dup_keys(pairs):
            d = {}
            for k, v in pairs:
                if k in d:
                    raise CharVocabError(f"duplicate key {k!r} in JSON object")
                d[k] = v
            return d

        try:
            data = json.loads(text, object_pairs_hook=no_dup_keys)
        except CharVocabError:
            raise
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise CharVocabError(f"not valid JSON: {e}") from None
        if not isinstance(data, dict):
            raise CharVocabError(f"expected a JSON object at top level, got {type(data).__name__}")
        if data.get("format") != _FORMAT:
            raise CharVocabError(f"not a CharTokenizer vocabulary: 'format' must be {_FORMAT!r}")
        if data.get("version") != _FORMAT_VERSION:
            raise CharVocabError(f"unsupported CharTokenizer vocabulary version {data.get('version')!r}")
        if "vocab" not in data:
            raise CharVocabError("missing 'vocab' object")
        return cls(_validate_vocab(data["vocab"], "vocab"))

    @classmethod
    def load_vocab(cls, path: str | os.PathLike) -> "CharTokenizer":
        with open(path, "rb") as f:
            raw = f.read()
        try:
            return cls.from_json(raw)
        except CharVocabError as e:
            raise CharVocabError(f"{os.fspath(path)}: {e}") from None
