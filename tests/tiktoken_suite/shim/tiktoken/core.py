from scantok.core import Encoding as Encoding
from scantok.core import raise_disallowed_special_token as raise_disallowed_special_token
