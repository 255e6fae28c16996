"""``tiktoken.registry`` for scantok: the encodings tiktoken 0.14.0 ships
(tiktoken_ext/openai_public.py) and those of plugin packages (``scantok.tiktoken_compat.plugins``), loaded
once per process by ``get_encoding``, with tiktoken's names, errors and messages.

The model tables moved to ``scantok.model`` (as in tiktoken); their names still resolve here.

>>> list_encoding_names()[:3]
['gpt2', 'r50k_base', 'p50k_base']
"""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing import Callable, Sequence

    from .encoding import Encoding

from .code.framing import CODE_SPECIAL_TOKENS as CODE50K_SPECIAL_TOKENS

ENDOFTEXT = "<|endoftext|>"
FIM_PREFIX = "<|fim_prefix|>"
FIM_MIDDLE = "<|fim_middle|>"
FIM_SUFFIX = "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"

R50K_PAT_STR = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
CL100K_PAT_STR = r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
O200K_PAT_STR = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

_BASE_URL = "https://openaipublic.blob.core.windows.net/encodings/"

# rank file name -> (download URL, SHA-256)
RANK_FILES: dict[str, tuple[str, str]] = {
    "r50k_base.tiktoken": (_BASE_URL + "r50k_base.tiktoken", "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"),
    "p50k_base.tiktoken": (_BASE_URL + "p50k_base.tiktoken", "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069"),
    "cl100k_base.tiktoken": (_BASE_URL + "cl100k_base.tiktoken", "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"),
    "o200k_base.tiktoken": (_BASE_URL + "o200k_base.tiktoken", "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"),
}

_O200K_SPECIALS = {ENDOFTEXT: 199999, ENDOFPROMPT: 200018}

# scantok's own code50k (issue 9): trained by scantok.train_bpe (`make train-code50k`), bundled
# only (no download URL). Pinned: the SHA-256 of its .tiktoken text (the bundle's own SHA-256 is
# pinned in bundled.py).
CODE50K_PAT_STR = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""0[xX][0-9a-fA-F]+|0[bB][01]+|\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+(?:[\r\n]+[ \t]*)?""",
        r"""\s*[\r\n]+[ \t]*""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
OWN_RANK_FILES: dict[str, str] = {"code50k.tiktoken": "43b1808a6d456e73e9a219baba6738c4ffd58e4c7c8c19bbad27de211f6eb91d"}


def rank_file_source(file_name: str) -> tuple[str | None, str]:
    """(download URL or None, pinned SHA-256) of a rank file an encoding here uses."""
    if file_name in RANK_FILES:
        return RANK_FILES[file_name]
    return None, OWN_RANK_FILES[file_name]

# name -> (rank file, compiled scanner, pat_str, special tokens, explicit_n_vocab)
# gpt2's ranks are r50k_base's (tiktoken builds them from GPT-2's vocab.bpe/encoder.json,
# which give the identical table).
ENCODINGS: dict[str, tuple[str, str, str, dict[str, int], int | None]] = {
    "gpt2": ("r50k_base.tiktoken", "r50k_base", R50K_PAT_STR, {ENDOFTEXT: 50256}, 50257),
    "r50k_base": ("r50k_base.tiktoken", "r50k_base", R50K_PAT_STR, {ENDOFTEXT: 50256}, 50257),
    "p50k_base": ("p50k_base.tiktoken", "r50k_base", R50K_PAT_STR, {ENDOFTEXT: 50256}, 50281),
    "p50k_edit": (
        "p50k_base.tiktoken", "r50k_base", R50K_PAT_STR,
        {ENDOFTEXT: 50256, FIM_PREFIX: 50281, FIM_MIDDLE: 50282, FIM_SUFFIX: 50283}, None,
    ),
    "cl100k_base": (
        "cl100k_base.tiktoken", "cl100k_base", CL100K_PAT_STR,
        {ENDOFTEXT: 100257, FIM_PREFIX: 100258, FIM_MIDDLE: 100259, FIM_SUFFIX: 100260, ENDOFPROMPT: 100276},
        None,
    ),
    "o200k_base": ("o200k_base.tiktoken", "o200k_base", O200K_PAT_STR, _O200K_SPECIALS, None),
    "o200k_harmony": (
        "o200k_base.tiktoken", "o200k_base", O200K_PAT_STR,
        {
            **_O200K_SPECIALS,
            "<|startoftext|>": 199998,
            "<|endoftext|>": 199999,
            "<|reserved_200000|>": 200000,
            "<|reserved_200001|>": 200001,
            "<|return|>": 200002,
            "<|constrain|>": 200003,
            "<|reserved_200004|>": 200004,
            "<|channel|>": 200005,
            "<|start|>": 200006,
            "<|end|>": 200007,
            "<|message|>": 200008,
            "<|reserved_200009|>": 200009,
            "<|reserved_200010|>": 200010,
            "<|reserved_200011|>": 200011,
            "<|call|>": 200012,
        }
        | {f"<|reserved_{i}|>": i for i in range(200013, 201088)},
        None,
    ),
    # scantok's own, after tiktoken's (list_encoding_names: tiktoken's names, then code50k)
    "code50k": ("code50k.tiktoken", "code50k", CODE50K_PAT_STR, CODE50K_SPECIAL_TOKENS, 50000),
}

_lock = threading.RLock()
_loaded: dict[str, "Encoding"] = {}
# encoding name -> constructor (Encoding's keyword arguments), built-in and plugin ones; None
# until the plugins are looked for (as in tiktoken)
ENCODING_CONSTRUCTORS: "dict[str, Callable[[], dict[str, Any]]] | None" = None
TIKTOKEN_VERSION = "0.14.0"  # the tiktoken whose API and messages scantok reproduces


def _builtin_constructor(encoding_name: str) -> "Callable[[], dict[str, Any]]":
    def constructor() -> dict[str, Any]:
        from .vocab import load_table

        file_name, _scanner, pat_str, specials, n_vocab = ENCODINGS[encoding_name]
        url, sha = rank_file_source(file_name)
        spec: dict[str, Any] = {
            "name": encoding_name,
            "pat_str": pat_str,
            "mergeable_ranks": load_table(file_name, url=url, sha256=sha, bundled=True).to_dict(),
            "special_tokens": dict(specials),
        }
        if n_vocab is not None:
            spec["explicit_n_vocab"] = n_vocab
        return spec

    constructor.__name__ = constructor.__qualname__ = encoding_name
    return constructor


def _available_plugin_modules() -> "Sequence[str]":
    from .tiktoken_compat.plugins import available_plugin_modules

    return available_plugin_modules()


def _find_constructors() -> None:
    global ENCODING_CONSTRUCTORS
    with _lock:
        if ENCODING_CONSTRUCTORS is not None:
            return
        from .tiktoken_compat.plugins import find_constructors

        # an error leaves ENCODING_CONSTRUCTORS None, so the next call raises it again
        ENCODING_CONSTRUCTORS = find_constructors({name: _builtin_constructor(name) for name in ENCODINGS})


def _unknown_encoding(encoding_name: str) -> ValueError:
    return ValueError(
        f"Unknown encoding {encoding_name}.\n"
        f"Plugins found: {_available_plugin_modules()}\n"
        f"tiktoken version: {TIKTOKEN_VERSION} (are you on latest?)"
    )


def list_encoding_names() -> list[str]:
    """The names get_encoding knows: built-in and from plugins, in tiktoken's order."""
    with _lock:
        if ENCODING_CONSTRUCTORS is None:
            _find_constructors()
            assert ENCODING_CONSTRUCTORS is not None
        return list(ENCODING_CONSTRUCTORS)


def get_encoding(encoding_name: str) -> "Encoding":
    """The named encoding, loaded once per process (thread-safe). The built-in names never
    wait for the plugins to be looked for; other names come from ``tiktoken_ext`` plugins.

    >>> get_encoding("o200k_base").encode("hello world")
    [24912, 2375]
    """
    if not isinstance(encoding_name, str):
        raise ValueError(f"Expected a string in get_encoding, got {type(encoding_name)}")
    enc = _loaded.get(encoding_name)
    if enc is not None:
        return enc
    with _lock:
        enc = _loaded.get(encoding_name)
        if enc is not None:
            return enc
        if encoding_name in ENCODINGS:
            enc = _load_encoding(encoding_name)
        else:
            if ENCODING_CONSTRUCTORS is None:
                _find_constructors()
                assert ENCODING_CONSTRUCTORS is not None
            if encoding_name not in ENCODING_CONSTRUCTORS:
                raise _unknown_encoding(encoding_name)
            from .encoding import Encoding

            enc = Encoding(**ENCODING_CONSTRUCTORS[encoding_name]())
        _loaded[encoding_name] = enc
        return enc


def _load_encoding(encoding_name: str) -> "Encoding":
    """A new Encoding object with tables of its own (get_encoding shares one per name; the
    benchmarks use this for a fresh instance whose caches are cold)."""
    if encoding_name not in ENCODINGS:
        raise _unknown_encoding(encoding_name)
    from .encoding import Encoding, _Table
    from .vocab import load_image, load_table, save_image

    file_name, scanner_name, pat_str, specials, n_vocab = ENCODINGS[encoding_name]
    url, sha = rank_file_source(file_name)

    def loader():
        return load_table(file_name, url=url, sha256=sha, bundled=True)

    # fast path: the built hash tables, mmap'ed from scantok's cache
    native = None
    table = None
    image = load_image(sha)
    if image is not None:
        native = _Table.from_image(image, specials)
    if native is None:
        table = loader()
        native = _Table(table, specials)
        save_image(sha, native.image_bytes())
    return Encoding._from_table(
        encoding_name,
        pat_str=pat_str,
        table=table,
        special_tokens=dict(specials),
        explicit_n_vocab=n_vocab,
        scanner_name=scanner_name,
        native=native,
        table_loader=loader,
    )


def _is_registered(enc: Any) -> bool:
    return _loaded.get(getattr(enc, "name", None)) is enc


_MODEL_NAMES = frozenset({"MODEL_PREFIX_TO_ENCODING", "MODEL_TO_ENCODING", "encoding_name_for_model", "encoding_for_model"})


def __getattr__(name: str):
    # the model tables live in scantok.model (tiktoken's layout); kept reachable here
    if name in _MODEL_NAMES:
        from . import model

        return getattr(model, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
