"""The runnable examples in the passes' docstrings stay true to the code."""

from __future__ import annotations

import doctest
import importlib
import linecache
import pkgutil

import pytest

import pullback

MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages(pullback.__path__, prefix="pullback.")
    if not info.name.startswith("pullback.rules.")  # tables; their tests check them
)


@pytest.fixture
def files_left_unchecked(monkeypatch):
    """``linecache.checkcache()`` with no file name does nothing while the examples run.

    doctest makes a debugger for every docstring it runs, and the debugger's reset stats
    every file in ``linecache`` (to show edited files afresh when stepping): late in a
    full run the cache holds hundreds of files, and the 3,000-odd docstrings cost seconds
    of stat calls per worker. No example steps in a debugger, so nothing reads what that
    check refreshes; a check of one file (inspect, traceback, pullback's source reads)
    still runs.
    """
    check_one_file = linecache.checkcache

    def checkcache(filename=None):
        if filename is not None:
            check_one_file(filename)

    monkeypatch.setattr(linecache, "checkcache", checkcache)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name, files_left_unchecked):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed"
