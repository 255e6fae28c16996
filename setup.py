# setuptools needs setup.py only to hand cffi its build script; everything else is in pyproject.toml.
from setuptools import setup

setup(
    cffi_modules=["build/build_native.py:ffibuilder"],
    # build/ holds the committed generated C; keep setuptools' scratch files out of it.
    options={"build": {"build_base": ".pybuild"}},
)
