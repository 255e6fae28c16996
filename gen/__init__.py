"""scantok's build-time generator: pattern specs + UCD → generated C and the shipped Unicode
tables (run as `python -m gen`).

The compiler stages themselves (parse → nfa → determinize → minimize → classes → accel →
layout) live in the package, ``runtime/scantok/compiler/``, because ``scantok.compile`` runs
them at run time too; this package adds what only the build needs: the UCD file reader
(gen/ucd.py), the C templates (gen/emit.py) and the driver (gen/__main__.py).
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_COMPILER = Path(__file__).resolve().parent.parent / "runtime" / "scantok" / "compiler"


def _load_compiler():
    try:
        import scantok.compiler as installed
        return installed
    except ImportError:
        # scantok is not installed or its C extension is not built yet (a fresh clone):
        # load the compiler sources on their own; they import nothing from the rest of scantok.
        name = "_scantok_compiler"
        if name in sys.modules:
            return sys.modules[name]
        spec = importlib.util.spec_from_file_location(name, _COMPILER / "__init__.py",
                                                      submodule_search_locations=[str(_COMPILER)])
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module


compiler = _load_compiler()
