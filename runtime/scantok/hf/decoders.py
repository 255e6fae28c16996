"""HuggingFace decoders: ByteLevel, Metaspace, WordPiece, ByteFallback, Fuse, Strip, Replace,
BPEDecoder, Sequence — each maps a list of token strings to a list of strings (decode_chain); the
decoded text is their concatenation.  Steps that map each token by itself (whether it is the
first one aside) are marked ``per_token``: a tokenizer keeps their result per id."""
from __future__ import annotations

from typing import Any, Mapping

from .errors import HFError, UnsupportedComponentError
from .fields import flag, string
from .pre_tokenizers import CHAR_BYTES


def byte_level_bytes(token: str) -> bytes:
    """The bytes ByteLevel decodes one token to: its characters through the byte alphabet, or,
    for a token with a character outside it (an added token, say), its own UTF-8."""
    try:
        return bytes(CHAR_BYTES[c] for c in token)
    except KeyError:
        return token.encode("utf-8", "surrogatepass")


def _per_token(fn):
    """Marks a step that maps each token by itself, the first token's map aside."""
    fn.per_token = True
    return fn


def _byte_level(tokens: list[str]) -> list[str]:
    return [b"".join(byte_level_bytes(t) for t in tokens).decode("utf-8", "replace")]


_HEX = frozenset("0123456789abcdefABCDEF")


def _fallback_byte(digits: str) -> int | None:
    """The byte of a "<0xHH>" token's two characters as Rust's u8::from_str_radix(_, 16) reads
    them (two hex digits, or "+" and one), else None; Python's int() also took " 1", "-0",
    "1\n" and non-ASCII digits (found by a helper's campaign)."""
    if all(c in _HEX for c in digits) or (digits[0] == "+" and digits[1] in _HEX):
        return int(digits, 16)
    return None


def _byte_fallback(tokens: list[str]) -> list[str]:
    out: list[str] = []
    pending = bytearray()

    def flush():
        if pending:
            try:
                out.append(pending.decode("utf-8"))
            except UnicodeDecodeError:
                out.extend("\ufffd" * len(pending))
            pending.clear()

    for t in tokens:
        if len(t) == 6 and t.startswith("<0x") and t.endswith(">"):
            b = _fallback_byte(t[3:5])
            if b is not None:
                pending.append(b)
                continue
        flush()
        out.append(t)
    flush()
    return out


_CLEANUP = ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"), (" 'm", "'m"),
            (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"))


def _cleanup(s: str) -> str:
    for a, b in _CLEANUP:
        s = s.replace(a, b)
    return s


class Decoder:
    """``decode(tokens) -> str``; no decoder joins the tokens with spaces (as HF)."""

    def __init__(self, spec: Any, where: str = "decoder"):
        self.spec = spec
        self.chain: list = []
        self._compile(spec, where)
        # ByteLevel alone (GPT-2, Llama 3, DeepSeek ...): the text is the concatenation of each
        # token's byte_level_bytes, which Tokenizer.decode keeps per id
        self.byte_level_only = len(self.chain) == 1 and self.chain[0] is _byte_level
        # the leading steps that map each token by itself (SentencePiece files' Replace("▁", " ")
        # or Metaspace before ByteFallback and Fuse): Tokenizer.decode keeps their result per
        # id, the first token's and the others', and runs only the rest of the chain
        self.head = 0
        while self.head < len(self.chain) and getattr(self.chain[self.head], "per_token", False):
            self.head += 1

    def _compile(self, spec: Any, where: str) -> None:
        if spec is None:
            return
        if not isinstance(spec, Mapping) or "type" not in spec:
            raise HFError(f"{where}: expected an object with a 'type'")
        t = spec["type"]
        if t == "Sequence":
            subs = spec.get("decoders")
            if not isinstance(subs, list):
                raise HFError(f"{where}: Sequence needs a 'decoders' list")
            for i, sub in enumerate(subs):
                self._compile(sub, f"{where}.decoders[{i}]")
        elif t == "ByteLevel":
            self.chain.append(_byte_level)
        elif t == "ByteFallback":
            self.chain.append(_byte_fallback)
        elif t == "Fuse":
            self.chain.append(lambda toks: ["".join(toks)])
        elif t == "BPEDecoder":  # end_of_word_suffix: a space, nothing after the last token
            suffix = spec.get("suffix")
            if not isinstance(suffix, str):  # tokenizers refuses a BPEDecoder without one too
                raise HFError(f"{where}: BPEDecoder needs a string 'suffix'")

            def bpe_decoder(toks, suffix=suffix):
                last = len(toks) - 1
                return [t.replace(suffix, "" if i == last else " ") for i, t in enumerate(toks)]

            self.chain.append(bpe_decoder)
        elif t == "Metaspace":
            rep = spec.get("replacement", "\u2581")
            scheme = spec.get("prepend_scheme", "always")
            if not isinstance(rep, str) or len(rep) != 1:
                raise HFError(f"{where}: Metaspace replacement must be one character")
            if scheme not in ("always", "never", "first", None):  # (null: as absent)
                raise HFError(f"{where}: Metaspace prepend_scheme must be \"always\", \"never\" or \"first\", got {scheme!r}")

            def metaspace(toks, rep=rep, strip=scheme != "never"):
                # as tokenizers: every replacement character of the first token is dropped (not
                # only a leading one), and the spaces a token already holds stay
                return [t.replace(rep, "" if i == 0 and strip else " ") for i, t in enumerate(toks)]

            self.chain.append(_per_token(metaspace))
        elif t == "WordPiece":
            prefix = string(spec.get("prefix", "##"), f"{where}.prefix")
            cleanup = flag(spec, "cleanup", True, where)

            def wordpiece(toks, prefix=prefix, cleanup=cleanup):
                out = []
                for i, t in enumerate(toks):
                    if i:
                        t = t.replace(prefix, "", 1) if t.startswith(prefix) else " " + t
                    out.append(_cleanup(t) if cleanup else t)
                return out

            self.chain.append(_per_token(wordpiece))
        elif t == "Strip":
            content, start, stop = spec.get("content", " "), spec.get("start", 0), spec.get("stop", 0)
            if not isinstance(content, str) or len(content) != 1 or type(start) is not int or type(stop) is not int \
                    or start < 0 or stop < 0:
                raise HFError(f"{where}: Strip needs a one-character 'content' and integers 'start'/'stop' >= 0")

            def strip(toks, c=content, start=start, stop=stop):
                out = []
                for t in toks:
                    a = 0
                    while a < min(start, len(t)) and t[a] == c:
                        a += 1
                    b = len(t)
                    while len(t) - b < stop and b > a and t[b - 1] == c:
                        b -= 1
                    out.append(t[a:b])
                return out

            self.chain.append(_per_token(strip))
        elif t == "Replace":
            from .normalizers import _NS, _pattern_matcher, _replace

            pattern = spec.get("pattern")
            content = spec.get("content")
            if not isinstance(content, str):
                raise HFError(f"{where}: Replace needs a string 'content'")
            if isinstance(pattern, Mapping) and isinstance(pattern.get("String"), str):
                # a string: each token's str.replace, as tokenizers' decoder replaces it (an
                # empty one puts the content at every boundary of a non-empty token: "a" ->
                # "_a_", where the normalizer leaves the text alone; found by a helper's campaign)
                def replace_string(toks, p=pattern["String"], c=content):
                    return [t.replace(p, c) if t else t for t in toks]

                self.chain.append(_per_token(replace_string))
                return
            matcher = _pattern_matcher(pattern, where)

            def replace(toks, m=matcher, c=content):
                out = []
                for t in toks:
                    ns = _NS(t, track=False)
                    _replace(ns, m, c)
                    out.append(ns.text)
                return out

            self.chain.append(_per_token(replace))
        else:
            raise UnsupportedComponentError(f"{where}: unsupported decoder type {t!r}")

    def decode(self, tokens: list[str]) -> str:
        if self.spec is None:
            return " ".join(tokens)
        for step in self.chain:
            tokens = step(tokens)
        return "".join(tokens)

    def token_texts(self, token: str) -> tuple[str, str]:
        """token through the leading per-token steps, as the first token and as another."""
        out = []
        for tokens in ([token], ["", token]):
            for step in self.chain[:self.head]:
                tokens = step(tokens)
            out.append(tokens[-1])
        return out[0], out[1]

    def finish(self, tokens: list[str]) -> str:
        """decode of tokens that went through the leading per-token steps (token_texts)."""
        for step in self.chain[self.head:]:
            tokens = step(tokens)
        return "".join(tokens)
