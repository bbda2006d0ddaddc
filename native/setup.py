"""The C module of ranklens-native, optional: where no C compiler is found the package
installs without it and ranklens reads Python dicts with numpy alone (same numbers)."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("_ranklens_native", ["src/_ranklens_native.c"], optional=True)])
