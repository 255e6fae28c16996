from scantok.registry import get_encoding as get_encoding
from scantok.registry import list_encoding_names as list_encoding_names
