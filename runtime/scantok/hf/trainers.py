"""HuggingFace-compatible trainers: ``train_wordlevel`` (HF's WordLevelTrainer)."""
from __future__ import annotations

import os
from collections import Counter
from typing import Any, Iterator, Sequence

from .errors import WordLevelError, _check_text
from .models import WordLevel
from .native import _native

def _count_native(dfa, text: str, ccounter) -> None:
    ffi, lib = _native()
    data = text.encode("utf-8", "surrogatepass")
    if lib.vt_count(ccounter, dfa, data, len(data), lib.SCANTOK_SURROGATEPASS) < 0:
        raise MemoryError


def _dump_native(ccounter) -> list[tuple[bytes, int]]:
    import numpy as np

    ffi, lib = _native()
    size = lib.vt_counter_size(ccounter)
    kb = lib.vt_counter_keybytes(ccounter)
    keys = ffi.new("char[]", max(1, kb))
    lens = np.empty(size, dtype=np.uint32)
    counts = np.empty(size, dtype=np.int64)
    lib.vt_counter_dump(ccounter, keys, ffi.cast("uint32_t *", lens.ctypes.data),
                        ffi.cast("int64_t *", counts.ctypes.data))
    buf = ffi.buffer(keys, kb)[:]
    out = []
    off = 0
    for ln, c in zip(lens.tolist(), counts.tolist()):
        out.append((buf[off:off + ln], c))
        off += ln
    return out


def train_wordlevel(files_or_iterator: Any, *, vocab_size: int, min_frequency: int = 0,
                    special_tokens: Sequence[str] = (), pre_tokenizer: Any = "whitespace_split",
                    normalizer: Any = None, unk_token: str = "<unk>", lowercase: bool = False,
                    split_on_cjk: bool = False, split_on_punctuation: bool = False) -> WordLevel:
    """Trains a WordLevel vocabulary exactly like HF's ``WordLevelTrainer`` through
    ``Tokenizer.train(files)`` / ``Tokenizer.train_from_iterator(iterator)``.

    ``files_or_iterator``: a path (``str`` or ``os.PathLike``), a list of ``PathLike`` or of
    names of existing files (each read line by line, keeping line endings, as HF's
    ``Tokenizer.train(files)``), or any other iterable of strings (each one sequence, as
    ``train_from_iterator``).  The vocabulary is the
    special tokens (ids 0..), then the words with count >= ``min_frequency`` by decreasing count,
    ties broken by the words' UTF-8 bytes, cut at ``vocab_size`` entries.  The special tokens
    also become special added tokens, as HF's ``Tokenizer.train`` makes them.
    """
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int) or vocab_size < 0:
        raise ValueError("vocab_size must be a non-negative integer")
    proto = WordLevel({}, unk_token, normalizer, pre_tokenizer, lowercase=lowercase,
                      split_on_cjk=split_on_cjk, split_on_punctuation=split_on_punctuation)
    if isinstance(special_tokens, (str, bytes)):  # a list of tokens, not one (HF: TypeError)
        raise TypeError(f"special_tokens must be a list of str, not {type(special_tokens).__name__}")
    specials = list(special_tokens)
    if isinstance(min_frequency, bool) or not isinstance(min_frequency, int):
        raise TypeError(f"min_frequency must be an int, not {type(min_frequency).__name__}")
    if min_frequency < 0:  # (HF: OverflowError, an unsigned int)
        raise OverflowError(f"min_frequency must be >= 0, got {min_frequency}")

    if isinstance(files_or_iterator, (str, os.PathLike)):
        files_or_iterator = [files_or_iterator]
    is_files = isinstance(files_or_iterator, (list, tuple)) and len(files_or_iterator) > 0 and (
        all(isinstance(f, os.PathLike) for f in files_or_iterator)
        or all(isinstance(f, str) and os.path.isfile(f) for f in files_or_iterator))

    # A single split that keeps only matches that never contain "\n": counting words over a
    # whole file equals counting them line by line.
    fast = proto._fast
    whole_text_ok = fast is not None and fast.scanner in ("whitespace", "whitespace_split", "hf_bert")
    nat = _native() if (fast is not None and fast.dfa is not None) else None

    def sequences() -> Iterator[tuple[str, bool]]:
        if is_files:
            for f in files_or_iterator:
                with open(f, "rb") as fh:
                    raw = fh.read()
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise WordLevelError(f"{os.fspath(f)}: not valid UTF-8 ({e.reason}) at byte {e.start}") from None
                if whole_text_ok:
                    yield text, True
                else:
                    for line in _lines_with_ending(text):
                        yield line, False
        else:
            for k, s in enumerate(files_or_iterator):
                if not isinstance(s, str):
                    raise TypeError(f"training data must be strings, got {type(s).__name__}")
                _check_text(s, f"train_wordlevel(): sequence {k}")  # as tokenizers' trainer refuses it
                yield s, whole_text_ok

    counts: Counter = Counter()
    if nat is not None and whole_text_ok:
        ffi, lib = nat
        cc = ffi.gc(lib.vt_counter_new(), lib.vt_counter_free)
        for s, _ in sequences():
            s = proto.normalize(s) if proto._norm else s
            _count_native(fast.dfa, s, cc)
        items = [(k.decode("utf-8", "surrogatepass"), c) for k, c in _dump_native(cc)]
    else:
        for s, _ in sequences():
            ns = proto.normalize(s) if proto._norm else s
            counts.update(ns[a:b] for a, b in proto._pieces(ns))
        items = list(counts.items())

    items.sort(key=lambda kv: (-kv[1], kv[0].encode("utf-8", "surrogatepass")))
    vocab: dict[str, int] = {}
    i = 0
    for tok in specials:
        if i >= vocab_size:
            break
        vocab[tok] = i
        i += 1
    for w, c in items:
        if i >= vocab_size:
            break
        if c < min_frequency:
            continue
        vocab[w] = i
        i += 1
    # HF's Tokenizer.train then adds every special token to the added vocabulary: a token of the
    # model keeps its id, others get ids after the model's (AddedVocabulary::add_tokens)
    added_ids: dict[str, int] = {}
    for t in dict.fromkeys(specials):
        if t in vocab:
            nid = vocab[t]
        elif not added_ids:
            nid = len(vocab)
        else:
            mx = max(added_ids.values())
            nid = mx + 1 if (mx >= len(vocab) or len(vocab) == 0) else len(vocab)
        added_ids[t] = nid
    added = [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for t, i in added_ids.items()]
    return WordLevel(vocab, unk_token, proto._norm_spec, proto._pre_spec, added_tokens=added)


def _lines_with_ending(text: str) -> Iterator[str]:
    pos = 0
    n = len(text)
    while pos < n:
        j = text.find("\n", pos)
        if j < 0:
            yield text[pos:]
            return
        yield text[pos:j + 1]
        pos = j + 1
