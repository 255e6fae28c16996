"""Code models' front-end over scantok's own ``code50k`` encoding: file and edit framing on
token ids (:mod:`.framing`)."""
from .framing import CODE_SPECIAL_TOKENS, CodeTokenizer, FramingError

__all__ = ["CodeTokenizer", "FramingError", "CODE_SPECIAL_TOKENS"]
