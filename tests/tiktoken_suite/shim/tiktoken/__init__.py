"""A package named ``tiktoken`` that only re-exports scantok, so that tiktoken's own test
suite runs against scantok (tests/test_tiktoken_suite.py puts this directory first on
PYTHONPATH in a subprocess; everywhere else the real tiktoken stays the oracle)."""
from scantok import Encoding as Encoding
from scantok import encoding_for_model as encoding_for_model
from scantok import encoding_name_for_model as encoding_name_for_model
from scantok import get_encoding as get_encoding
from scantok import list_encoding_names as list_encoding_names

__version__ = "0.14.0"
