"""HuggingFace pre-tokenizers: JSON spec -> split stages, and splitting text into pieces
(``NormalizedString::split`` with every behavior and ``invert``)."""
from __future__ import annotations

import re
from typing import Any, Mapping

from .errors import UnsupportedComponentError, WordLevelError
from .patterns import _Matcher, _builtin_matcher, _regex_matcher

_BEHAVIORS = ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous")


class _Step:
    """One HuggingFace split: a matcher, a delimiter behavior and ``invert``."""

    __slots__ = ("matcher", "behavior", "invert")

    def __init__(self, matcher: _Matcher, behavior: str, invert: bool = False):
        self.matcher = matcher
        self.behavior = behavior
        self.invert = invert

    @property
    def keeps_matches_only(self) -> bool:
        return self.behavior == "Removed" and self.invert

    def split(self, text: str, base: int, out: list) -> None:
        """Appends the (start, end) pieces of text (offset by base) to out, as HF's
        NormalizedString::split(pattern, behavior) followed by dropping empty pieces."""
        n = len(text)
        if n == 0:
            return
        spans = self.matcher.spans(text)
        if self.keeps_matches_only:
            out.extend((base + a, base + b) for a, b in spans)
            return
        # (start, end, is_match) covering the text, as Pattern::find_matches
        marks = []
        prev = 0
        for a, b in spans:
            if prev != a:
                marks.append((prev, a, False))
            marks.append((a, b, True))
            prev = b
        if prev != n:
            marks.append((prev, n, False))
        if self.invert:
            marks = [(a, b, not m) for a, b, m in marks]
        beh = self.behavior
        pieces: list[list] = []
        if beh == "Isolated":
            pieces = [[a, b, False] for a, b, _ in marks]
        elif beh == "Removed":
            pieces = [[a, b, m] for a, b, m in marks]
        elif beh == "Contiguous":
            prevm = False
            for a, b, m in marks:
                if m == prevm and pieces:
                    pieces[-1][1] = b
                else:
                    pieces.append([a, b, False])
                prevm = m
        elif beh == "MergedWithPrevious":
            prevm = False
            for a, b, m in marks:
                if m and not prevm and pieces:
                    pieces[-1][1] = b
                else:
                    pieces.append([a, b, False])
                prevm = m
        elif beh == "MergedWithNext":
            prevm = False
            for a, b, m in reversed(marks):
                if m and not prevm and pieces:
                    pieces[-1][0] = a
                else:
                    pieces.append([a, b, False])
                prevm = m
            pieces.reverse()
        for a, b, remove in pieces:
            if not remove and b > a:
                out.append((base + a, base + b))


def _pretok_steps(spec: Any, where: str = "pre_tokenizer") -> list[list[_Step]]:
    """Compiles a HF pre-tokenizer JSON object into a list of stages; each stage is a list of
    splits applied in turn to every piece of the previous stage."""
    if spec is None:
        return []
    if not isinstance(spec, Mapping) or "type" not in spec:
        raise WordLevelError(f"{where}: expected an object with a 'type', got {spec!r}")
    t = spec["type"]
    if t == "Sequence":
        stages: list[list[_Step]] = []
        for i, sub in enumerate(spec.get("pretokenizers", [])):
            stages.extend(_pretok_steps(sub, f"{where}.pretokenizers[{i}]"))
        return stages
    if t == "Whitespace":
        return [[_Step(_builtin_matcher("whitespace"), "Removed", True)]]
    if t == "WhitespaceSplit":
        return [[_Step(_builtin_matcher("whitespace_split"), "Removed", True)]]
    if t == "BertPreTokenizer":
        return [[_Step(_builtin_matcher("bert"), "Removed", True)]]
    if t == "Punctuation":
        beh = spec.get("behavior", "Isolated")
        _check_behavior(beh, where)
        return [[_Step(_builtin_matcher("punct"), beh)]]
    if t == "Digits":
        individual = spec.get("individual_digits", False)
        if not isinstance(individual, bool):
            raise WordLevelError(f"{where}: individual_digits must be a boolean")
        return [[_Step(_builtin_matcher("digit" if individual else "digits"), "Isolated")]]
    if t == "Split":
        pat = spec.get("pattern")
        beh = spec.get("behavior")
        _check_behavior(beh, where)
        invert = spec.get("invert", False)
        if not isinstance(invert, bool):
            raise WordLevelError(f"{where}: invert must be a boolean")
        if isinstance(pat, Mapping) and isinstance(pat.get("String"), str):
            lit = pat["String"]
            if not lit:
                # tokenizers then cuts the text into single characters, whatever the behavior
                # (the empty match at every position): refused, as a regex that matches the
                # empty string is
                raise UnsupportedComponentError(f"{where}: Split on the empty string (not supported)")
            m = _Matcher(None, re.escape(lit), literal=lit)
        elif isinstance(pat, Mapping) and isinstance(pat.get("Regex"), str):
            m = _regex_matcher(pat["Regex"])
        else:
            raise WordLevelError(f"{where}: Split pattern must be {{'String': ...}} or {{'Regex': ...}}")
        return [[_Step(m, beh, invert)]]
    raise UnsupportedComponentError(f"{where}: unsupported pre-tokenizer type {t!r}")


def _check_behavior(beh: Any, where: str) -> None:
    if beh not in _BEHAVIORS:
        raise WordLevelError(f"{where}: unknown split behavior {beh!r} (expected one of {', '.join(_BEHAVIORS)})")


def _pretokenize(stages: list[list[_Step]], text: str) -> list[tuple[int, int]]:
    if not text:
        return []
    pieces = [(0, len(text))]
    for stage in stages:
        for step in stage:
            out: list[tuple[int, int]] = []
            if len(pieces) == 1 and pieces[0] == (0, len(text)):
                step.split(text, 0, out)
            else:
                for a, b in pieces:
                    step.split(text[a:b], a, out)
            pieces = out
    return pieces


_PRETOK_NAMES = {
    "whitespace": {"type": "Whitespace"},
    "whitespace_split": {"type": "WhitespaceSplit"},
    "bert": {"type": "BertPreTokenizer"},
    "punctuation": {"type": "Punctuation", "behavior": "Isolated"},
    "digits": {"type": "Digits", "individual_digits": False},
}


# ------------------------------------------------------------------------------------------------
# pre-tokenizers that transform their pieces (scantok.Tokenizer): ByteLevel and Metaspace
# ------------------------------------------------------------------------------------------------
# tokenizers' ByteLevel regex (GPT-2's), run by Oniguruma
BYTE_LEVEL_PATTERN = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"


def _bytes_to_unicode() -> list[str]:
    """GPT-2's byte -> printable character map (ByteLevel's alphabet)."""
    bs = list(range(0x21, 0x7F)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    table = [""] * 256
    for b, c in zip(bs, cs):
        table[b] = chr(c)
    return table


BYTE_CHARS = _bytes_to_unicode()
CHAR_BYTES = {c: b for b, c in enumerate(BYTE_CHARS)}


class ByteLevelOp:
    """ByteLevel: an optional prefix space per piece, GPT-2's regex (Isolated), then every
    character replaced by the characters of its UTF-8 bytes."""

    __slots__ = ("add_prefix_space", "use_regex", "step")

    def __init__(self, add_prefix_space: bool, use_regex: bool):
        self.add_prefix_space = add_prefix_space
        self.use_regex = use_regex
        self.step = _Step(_regex_matcher(BYTE_LEVEL_PATTERN), "Isolated") if use_regex else None


class MetaspaceOp:
    """Metaspace: spaces become the replacement character, a prefix by prepend_scheme, then a
    split before every replacement character (MergedWithNext)."""

    __slots__ = ("replacement", "prepend_scheme", "step")

    def __init__(self, replacement: str, prepend_scheme: str, split: bool):
        self.replacement = replacement
        self.prepend_scheme = prepend_scheme
        self.step = _Step(_Matcher(None, "", literal=replacement), "MergedWithNext") if split else None


def _bool(spec: Mapping, key: str, default: bool, where: str) -> bool:
    v = spec.get(key, default)
    if not isinstance(v, bool):
        raise WordLevelError(f"{where}: {key} must be a boolean, got {v!r}")
    return v


def pretok_ops(spec: Any, where: str = "pre_tokenizer") -> list:
    """A HF pre-tokenizer JSON object as a flat list of operations applied in turn to every
    piece: ``_Step`` (a split), :class:`ByteLevelOp`, :class:`MetaspaceOp`."""
    if spec is None:
        return []
    if not isinstance(spec, Mapping) or "type" not in spec:
        raise WordLevelError(f"{where}: expected an object with a 'type', got {spec!r}")
    t = spec["type"]
    if t == "Sequence":
        subs = spec.get("pretokenizers")
        if not isinstance(subs, list):
            raise WordLevelError(f"{where}: Sequence needs a 'pretokenizers' list")
        ops: list = []
        for i, sub in enumerate(subs):
            ops.extend(pretok_ops(sub, f"{where}.pretokenizers[{i}]"))
        return ops
    if t == "ByteLevel":
        return [ByteLevelOp(_bool(spec, "add_prefix_space", True, where), _bool(spec, "use_regex", True, where))]
    if t == "Metaspace":
        rep = spec.get("replacement", "\u2581")
        if not isinstance(rep, str) or len(rep) != 1:
            raise WordLevelError(f"{where}: Metaspace replacement must be one character")
        scheme = spec.get("prepend_scheme", "always")
        if scheme not in ("always", "first", "never"):
            raise WordLevelError(f"{where}: unknown prepend_scheme {scheme!r}")
        return [MetaspaceOp(rep, scheme, _bool(spec, "split", True, where))]
    return [step for stage in _pretok_steps(spec, where) for step in stage]
