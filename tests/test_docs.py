"""The README and the docstrings say what the code does: their examples are run."""
import doctest
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MODULES = ["scantok.scanner", "scantok.encoding", "scantok.registry", "scantok.char", "scantok.wordlevel",
           "scantok.hf.tokenizer", "scantok.hf.encoding", "scantok.hf.added_tokens", "scantok.compiler.runtime", "scantok.bpe.train", "scantok.bpe.bytelevel",
           "scantok.bpe.errors", "scantok.code.framing", "scantok.threadpool"]


def test_readme_examples():
    result = doctest.testfile(str(ROOT / "README.md"), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
