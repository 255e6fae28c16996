"""Parts of the tiktoken-compatible BPE front-end that sit beside ``scantok.encoding``, one
module per concern (tiktoken's algorithms for bytes and unstable tails, plugin discovery)."""
