"""Encodings registered by other packages through tiktoken's plugin namespace.

A package adds encodings to tiktoken by shipping a module ``tiktoken_ext/<name>.py`` (``tiktoken_ext``
is a namespace package) with a dict ``ENCODING_CONSTRUCTORS`` of encoding name -> function
returning ``Encoding``'s keyword arguments. tiktoken finds them with ``pkgutil.iter_modules``
over ``tiktoken_ext.__path__``; scantok does the same, so installing such a package makes its
encodings available in both.

``tiktoken_ext.openai_public`` (tiktoken's own module) is not imported: scantok's built-in
encodings stand in for it, at its place in the order (so ``list_encoding_names()`` lists names
in tiktoken's order), and a plugin that defines one of their names is a duplicate, as it is in
tiktoken. Without tiktoken installed the built-in names come first.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

__all__ = ["OPENAI_PUBLIC", "available_plugin_modules", "find_constructors"]

OPENAI_PUBLIC = "tiktoken_ext.openai_public"


@functools.lru_cache
def available_plugin_modules() -> Sequence[str]:
    """The names of the modules in the ``tiktoken_ext`` namespace (none if it does not exist)."""
    import pkgutil

    try:
        import tiktoken_ext
    except ImportError:
        return []
    path = getattr(tiktoken_ext, "__path__", None)
    if path is None:
        return []
    return [name for _, name, _ in pkgutil.iter_modules(path, tiktoken_ext.__name__ + ".")]


def find_constructors(builtin: dict[str, Callable[[], dict[str, Any]]]) -> dict[str, Callable[[], dict[str, Any]]]:
    """Encoding name -> constructor over every plugin module, the built-in ones taking the
    place of tiktoken_ext.openai_public; tiktoken's errors for a module without
    ENCODING_CONSTRUCTORS and for a name defined twice."""
    import importlib

    modules = list(available_plugin_modules())
    if OPENAI_PUBLIC not in modules:
        modules.insert(0, OPENAI_PUBLIC)
    found: dict[str, Callable[[], dict[str, Any]]] = {}
    for mod_name in modules:
        if mod_name == OPENAI_PUBLIC:
            constructors = builtin
        else:
            mod = importlib.import_module(mod_name)
            try:
                constructors = mod.ENCODING_CONSTRUCTORS
            except AttributeError as e:
                raise ValueError(f"tiktoken plugin {mod_name} does not define ENCODING_CONSTRUCTORS") from e
        for enc_name, constructor in constructors.items():
            if enc_name in found:
                raise ValueError(f"Duplicate encoding name {enc_name} in tiktoken plugin {mod_name}")
            found[enc_name] = constructor
    return found
