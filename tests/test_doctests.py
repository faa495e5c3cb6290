"""The runnable examples in the passes' docstrings stay true to the code."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import pullback

MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages(pullback.__path__, prefix="pullback.")
    if not info.name.startswith("pullback.rules.")  # tables; their tests check them
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed"
