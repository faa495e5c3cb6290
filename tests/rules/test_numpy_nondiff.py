"""Non-differentiable entries are marked so (and do not shadow rules)."""

from __future__ import annotations

import numpy as np
import pytest

from pullback.registry import NONDIFF, default_registry
from pullback.rules import numpy_nondiff


@pytest.mark.parametrize("name", numpy_nondiff.NUMPY_NAMES)
def test_numpy_names(name):
    fn = getattr(np, name, None)
    if fn is None:
        pytest.skip(f"numpy.{name} is not in this NumPy")
    rule = default_registry().lookup(fn)
    assert rule is not None and rule.kind == NONDIFF


@pytest.mark.parametrize("name", numpy_nondiff.RANDOM_FUNCTIONS)
def test_random_functions(name):
    fn = getattr(np.random, name, None)
    if fn is None:
        pytest.skip(f"numpy.random.{name} is not in this NumPy")
    assert default_registry().lookup(fn).kind == NONDIFF


@pytest.mark.parametrize("name", numpy_nondiff.GENERATOR_METHODS)
def test_generator_methods(name):
    fn = getattr(np.random.Generator, name, None)
    if fn is None:
        pytest.skip(f"Generator.{name} is not in this NumPy")
    assert default_registry().lookup(fn).kind == NONDIFF


def test_rules_are_not_shadowed():
    reg = default_registry()
    for fn in (np.full, np.full_like, np.sort, np.clip, np.where):
        assert reg.lookup(fn).kind != NONDIFF
