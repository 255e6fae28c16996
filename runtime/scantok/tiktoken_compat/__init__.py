"""The parts of tiktoken's API beyond plain encoding, beside ``scantok.encoding``, one module
per concern: ``unstable`` (tiktoken's algorithms for bytes that may not be UTF-8 and for the
unstable tail of a text) and ``plugins`` (encodings registered through ``tiktoken_ext``)."""
