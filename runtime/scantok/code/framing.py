"""File and edit framing on token ids: :class:`CodeTokenizer`.

A framed file is ``<FILE> path </FILE> content``; an edit appends ``<EDIT_START> new_text
<EDIT_END>``, with ``<DELETE>`` in the edit region marking a deletion. Framing exists only as
the special-token ids: the path, contents and new text are encoded as ordinary text, so text
that spells ``<EDIT_END>`` or ``<FILE>`` is plain text, and :meth:`CodeTokenizer.parse_edit`
reads the ids (never the decoded text), so such text round-trips exactly.
"""
from __future__ import annotations

from typing import Sequence

__all__ = ["CodeTokenizer", "FramingError", "CODE_SPECIAL_TOKENS"]

# code50k's special tokens (the first 20 ids), in id order
CODE_SPECIAL_TOKENS: dict[str, int] = {
    "<PAD>": 0,
    "<EOS>": 1,
    "<BOS>": 2,
    "<FILE>": 3,
    "</FILE>": 4,
    "<EDIT_START>": 5,
    "<EDIT_END>": 6,
    "<DELETE>": 7,
} | {f"<|reserved_{i}|>": i for i in range(8, 20)}


class FramingError(ValueError):
    """Token ids that are not a well-framed file or edit; the message says what is missing or
    out of order and at which position."""


class CodeTokenizer:
    """Encodes files and edits for code models over the ``code50k`` encoding.

    >>> from scantok import CodeTokenizer
    >>> tok = CodeTokenizer()
    >>> ids = tok.encode_edit("a.py", "x = 1\\n", "x = 2  # not <EDIT_END>\\n")
    >>> ids[0] == tok.FILE, ids[-1] == tok.EDIT_END
    (True, True)
    >>> tok.parse_edit(ids)["new_content"]
    'x = 2  # not <EDIT_END>\\n'
    >>> tok.parse_edit(ids)["edit_type"]
    'replace'
    """

    def __init__(self, encoding="code50k", *, num_threads: int = 8):
        from ..encoding import Encoding
        from ..registry import get_encoding

        enc = get_encoding(encoding) if isinstance(encoding, str) else encoding
        if not isinstance(enc, Encoding):
            raise TypeError(f"encoding must be an encoding name or a scantok.Encoding, not {type(encoding).__name__}")
        specials = enc._special_tokens
        missing = [name for name in list(CODE_SPECIAL_TOKENS)[:8] if name not in specials]
        if missing:
            raise ValueError(f"encoding {enc.name!r} lacks the framing tokens {', '.join(missing)}")
        self.encoding = enc
        self.num_threads = num_threads
        self.PAD, self.EOS, self.BOS = specials["<PAD>"], specials["<EOS>"], specials["<BOS>"]
        self.FILE, self.FILE_END = specials["<FILE>"], specials["</FILE>"]
        self.EDIT_START, self.EDIT_END = specials["<EDIT_START>"], specials["<EDIT_END>"]
        self.DELETE = specials["<DELETE>"]
        self._names = {v: k for k, v in specials.items()}
        self._special_ids = frozenset(specials.values())

    def __repr__(self) -> str:
        return f"<CodeTokenizer over {self.encoding.name!r}>"

    @property
    def n_vocab(self) -> int:
        return self.encoding.n_vocab

    # ------------------------------------------------------------------ text

    def encode(self, text: str) -> list[int]:
        """The ids of ``text`` as ordinary text (special-token spellings included)."""
        return self.encoding.encode_ordinary(text)

    def decode(self, ids: Sequence[int], *, errors: str = "replace") -> str:
        """The text of ``ids``; special tokens are written as their names (``<FILE>`` …)."""
        return self.encoding.decode(ids, errors=errors)

    def encode_batch(self, texts: list[str], *, num_threads: int | None = None) -> list[list[int]]:
        return self.encoding.encode_ordinary_batch(texts, num_threads=num_threads or self.num_threads)

    def decode_batch(self, batch: Sequence[Sequence[int]], *, errors: str = "replace",
                     num_threads: int | None = None) -> list[str]:
        return self.encoding.decode_batch(batch, errors=errors, num_threads=num_threads or self.num_threads)

    # ------------------------------------------------------------------ framing

    def _frame_file(self, path_ids, content_ids) -> list[int]:
        return [self.FILE, *path_ids, self.FILE_END, *content_ids]

    def _frame_edit(self, path_ids, content_ids, new_ids, delete: bool) -> list[int]:
        out = self._frame_file(path_ids, content_ids)
        out.append(self.EDIT_START)
        if delete:
            out.append(self.DELETE)
        out.extend(new_ids)
        out.append(self.EDIT_END)
        return out

    def encode_file(self, path: str, content: str) -> list[int]:
        """``<FILE> path </FILE> content``."""
        _check_str("path", path)
        _check_str("content", content)
        return self._frame_file(self.encode(path), self.encode(content))

    def encode_edit(self, path: str, content: str, new_text: str = "", *, delete: bool = False) -> list[int]:
        """``encode_file(path, content)`` + ``<EDIT_START> new_text <EDIT_END>``; with
        ``delete=True`` the edit region starts with ``<DELETE>`` (then ``new_text`` may say what
        is deleted, or be empty)."""
        _check_str("path", path)
        _check_str("content", content)
        _check_str("new_text", new_text)
        return self._frame_edit(self.encode(path), self.encode(content), self.encode(new_text), delete)

    def encode_file_batch(self, paths: Sequence[str], contents: Sequence[str], *,
                          num_threads: int | None = None) -> list[list[int]]:
        """:meth:`encode_file` for each ``(path, content)``; the texts are encoded on threads."""
        parts = self._encode_columns({"paths": paths, "contents": contents}, num_threads)
        return [self._frame_file(p, c) for p, c in zip(*parts)]

    def encode_edit_batch(self, paths: Sequence[str], contents: Sequence[str], new_texts: Sequence[str], *,
                          delete: Sequence[bool] | bool = False, num_threads: int | None = None) -> list[list[int]]:
        """:meth:`encode_edit` for each ``(path, content, new_text)``; ``delete`` is one flag
        for all or one per edit."""
        parts = self._encode_columns({"paths": paths, "contents": contents, "new_texts": new_texts}, num_threads)
        n = len(paths)
        flags = [bool(delete)] * n if isinstance(delete, bool) else list(delete)
        if len(flags) != n:
            raise ValueError(f"delete has {len(flags)} flags for {n} edits")
        return [self._frame_edit(p, c, t, d) for p, c, t, d in zip(*parts, flags)]

    def _encode_columns(self, columns: dict[str, Sequence[str]], num_threads: int | None) -> list[list[list[int]]]:
        lengths = {name: len(col) for name, col in columns.items()}
        if len(set(lengths.values())) > 1:
            raise ValueError(f"batch columns differ in length: {lengths}")
        flat: list[str] = []
        for name, col in columns.items():
            for i, text in enumerate(col):
                _check_str(f"{name}[{i}]", text)
            flat.extend(col)
        ids = self.encode_batch(flat, num_threads=num_threads)
        n = len(next(iter(columns.values()), ()))
        return [ids[k * n : (k + 1) * n] for k in range(len(columns))]

    # ------------------------------------------------------------------ parsing

    def parse_file(self, ids: Sequence[int]) -> dict[str, str]:
        """``dict(file_path=, content=)`` of ``<FILE> path </FILE> content`` (an optional
        ``<BOS>`` before, ``<EOS>`` and ``<PAD>`` after). FramingError if not so framed."""
        ids = _int_list(ids)
        start, end = self._outer(ids)
        seen = self._framing_positions(ids, start, end, allowed=(self.FILE, self.FILE_END))
        file_end = self._file_header(ids, start, end, seen)
        return {"file_path": self._text(ids[start + 1 : file_end]),
                "content": self._text(ids[file_end + 1 : end])}

    def parse_edit(self, ids: Sequence[int]) -> dict[str, str]:
        """``dict(file_path=, old_content=, new_content=, edit_type=)`` of an edit made by
        :meth:`encode_edit`. ``edit_type`` is ``"delete"`` when ``<DELETE>`` is in the edit
        region, else ``"insert"`` when the old content is empty or only whitespace, else
        ``"replace"``; ``new_content`` is the edit region's text without ``<DELETE>``.
        Missing or out-of-order framing tokens raise FramingError naming what and where."""
        ids = _int_list(ids)
        start, end = self._outer(ids)
        seen = self._framing_positions(ids, start, end,
                                       allowed=(self.FILE, self.FILE_END, self.EDIT_START, self.EDIT_END, self.DELETE))
        file_end = self._file_header(ids, start, end, seen)
        edit_starts = seen.get(self.EDIT_START, [])
        edit_ends = seen.get(self.EDIT_END, [])
        if not edit_starts:
            raise FramingError("missing <EDIT_START> after the file content")
        if len(edit_starts) > 1:
            raise FramingError(f"more than one <EDIT_START> (at {edit_starts[0]} and {edit_starts[1]})")
        es = edit_starts[0]
        if not edit_ends:
            raise FramingError(f"missing <EDIT_END> after <EDIT_START> (at {es})")
        if len(edit_ends) > 1:
            raise FramingError(f"more than one <EDIT_END> (at {edit_ends[0]} and {edit_ends[1]})")
        ee = edit_ends[0]
        if ee < es:
            raise FramingError(f"<EDIT_END> (at {ee}) comes before <EDIT_START> (at {es})")
        if ee != end - 1:
            raise FramingError(f"token {ids[ee + 1]} at {ee + 1} after <EDIT_END> (only <EOS> and <PAD> may follow)")
        deletes = seen.get(self.DELETE, [])
        for d in deletes:
            if not es < d < ee:
                raise FramingError(f"<DELETE> at {d} is outside the edit region ({es}..{ee})")
        old = self._text(ids[file_end + 1 : es])
        new = self._text([t for t in ids[es + 1 : ee] if t != self.DELETE])
        if deletes:
            kind = "delete"
        elif not old.strip():
            kind = "insert"
        else:
            kind = "replace"
        return {"file_path": self._text(ids[start + 1 : file_end]), "old_content": old,
                "new_content": new, "edit_type": kind}

    def parse_edit_batch(self, batch: Sequence[Sequence[int]], *, num_threads: int | None = None) -> list[dict[str, str]]:
        """:meth:`parse_edit` for each item (decoding on threads)."""
        return self.encoding._batch(self.parse_edit, batch, num_threads or self.num_threads)

    def _outer(self, ids: list[int]) -> tuple[int, int]:
        """[start, end) of the framed part: an optional leading <BOS>, trailing <PAD>s and one
        optional <EOS> before them are outside it."""
        start = 1 if ids and ids[0] == self.BOS else 0
        end = len(ids)
        while end > start and ids[end - 1] == self.PAD:
            end -= 1
        if end > start and ids[end - 1] == self.EOS:
            end -= 1
        return start, end

    def _framing_positions(self, ids, start, end, allowed) -> dict[int, list[int]]:
        seen: dict[int, list[int]] = {}
        n_vocab = self.encoding.n_vocab
        for i in range(start, end):
            t = ids[i]
            if t in self._special_ids:
                if t not in allowed:
                    raise FramingError(f"unexpected {self._names[t]} at {i}")
                seen.setdefault(t, []).append(i)
            elif not 0 <= t < n_vocab:
                raise FramingError(f"token {t} at {i} is not in the vocabulary (0..{n_vocab - 1})")
        return seen

    def _file_header(self, ids, start, end, seen) -> int:
        """Checks ``<FILE> path </FILE>`` opens the framed part; returns the </FILE> position."""
        if start >= end or ids[start] != self.FILE:
            where = f"found {self._describe(ids[start])} at {start}" if start < end else "no tokens"
            raise FramingError(f"missing <FILE> at the start ({where})")
        files, file_ends = seen.get(self.FILE, []), seen.get(self.FILE_END, [])
        if len(files) > 1:
            raise FramingError(f"more than one <FILE> (at {files[0]} and {files[1]})")
        if not file_ends:
            raise FramingError("missing </FILE> after the file path")
        if len(file_ends) > 1:
            raise FramingError(f"more than one </FILE> (at {file_ends[0]} and {file_ends[1]})")
        fe = file_ends[0]
        first_other = min((p for t, ps in seen.items() if t not in (self.FILE, self.FILE_END) for p in ps), default=end)
        if fe > first_other:
            raise FramingError(f"</FILE> (at {fe}) comes after {self._names[ids[first_other]]} (at {first_other})")
        return fe

    def _describe(self, t: int) -> str:
        return self._names.get(t, f"token {t}")

    def _text(self, ids: list[int]) -> str:
        return self.encoding.decode(ids, errors="replace")


def _int_list(ids) -> list[int]:
    import operator

    out = []
    for i, t in enumerate(ids):
        if isinstance(t, bool):
            raise TypeError(f"ids[{i}] is bool, not int")
        try:
            out.append(operator.index(t))
        except TypeError:
            raise TypeError(f"ids[{i}] is {type(t).__name__}, not int") from None
    return out


def _check_str(what: str, value) -> None:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be str, not {type(value).__name__}")
