"""``tiktoken.core`` for scantok: the ``Encoding`` class (defined in ``scantok.encoding``)
under the module name model code imports it from.

>>> from scantok.core import Encoding
>>> Encoding.__module__
'scantok.encoding'
"""
from .encoding import Encoding, raise_disallowed_special_token

__all__ = ["Encoding", "raise_disallowed_special_token"]
