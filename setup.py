# setuptools needs setup.py only to hand cffi its build script and to declare the one small
# C-API extension; everything else is in pyproject.toml.
from setuptools import Extension, setup

setup(
    cffi_modules=["build/build_native.py:ffibuilder"],
    # Token ids to Python lists with cached int objects (see the file's header for why this
    # is not cffi, and why it uses the full C API where the cffi module is abi3).
    ext_modules=[
        Extension(
            "scantok._pylist",
            sources=["runtime/scantok/cpyext/pylist.c", "runtime/scantok/cpyext/ucs_utf8.c"],
            depends=["runtime/scantok/cpyext/ucs_utf8.h", "runtime/scantok/csrc/bpe.h"],
            extra_compile_args=["-O2"],
        )
    ],
    # build/ holds the committed generated C; keep setuptools' scratch files out of it.
    options={"build": {"build_base": ".pybuild"}},
)
