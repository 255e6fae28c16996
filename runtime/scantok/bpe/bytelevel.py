"""GPT-2's byte-level alphabet: the printable character HuggingFace's ``ByteLevel`` uses for
each byte, and the order of the alphabet ids BpeTrainer assigns (by that character's code point).

>>> from scantok.bpe.bytelevel import BYTE_TO_CHAR, bytes_to_str
>>> BYTE_TO_CHAR[ord(" ")], bytes_to_str(b" hi\\n")
('Ġ', 'ĠhiĊ')
"""
from __future__ import annotations

__all__ = ["BYTE_TO_CHAR", "CHAR_TO_BYTE", "ALPHABET_ORDER", "bytes_to_str", "str_to_bytes"]


def _byte_to_char() -> list[str]:
    # Bytes that are printable Latin-1 keep their character; the others are numbered from
    # U+0100 upwards in byte order (GPT-2's bytes_to_unicode).
    keep = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table = [""] * 256
    for b in keep:
        table[b] = chr(b)
    n = 0
    for b in range(256):
        if not table[b]:
            table[b] = chr(0x100 + n)
            n += 1
    return table


BYTE_TO_CHAR: list[str] = _byte_to_char()
CHAR_TO_BYTE: dict[str, int] = {c: b for b, c in enumerate(BYTE_TO_CHAR)}
# The bytes in the order of their characters' code points: BpeTrainer's compute_alphabet sorts
# the alphabet by code point, so this is the order of the 256 alphabet ids.
ALPHABET_ORDER: list[int] = sorted(range(256), key=lambda b: ord(BYTE_TO_CHAR[b]))
_ENC = {b: c for b, c in enumerate(BYTE_TO_CHAR)}


def bytes_to_str(data: bytes) -> str:
    """The byte-level string of `data` (how HF's vocabularies spell a token)."""
    return "".join(BYTE_TO_CHAR[b] for b in data)


def str_to_bytes(text: str) -> bytes | None:
    """The bytes a byte-level string spells, or None if a character is outside the alphabet."""
    try:
        return bytes(CHAR_TO_BYTE[c] for c in text)
    except KeyError:
        return None
