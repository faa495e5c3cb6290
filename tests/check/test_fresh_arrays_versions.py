"""The table of NumPy calls that return new arrays on every supported NumPy: before 2.3 some
C functions (np.zeros, np.empty, np.concatenate, ...) have no signature inspect can read."""

import inspect

import numpy as np
import pytest

from pullback.check import fresh_arrays
from pullback.check.fresh_arrays import NEW_ARRAY_FUNCTIONS, NOT_LITERAL, call_returns_new

# (a ufunc's out is its (nin + 1)-th positional argument: it needs no signature)
FUNCTIONS = sorted(
    n for n in NEW_ARRAY_FUNCTIONS if hasattr(np, n) and not isinstance(getattr(np, n), np.ufunc)
)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_every_new_array_function_has_known_parameters(name):
    assert fresh_arrays._parameters(getattr(np, name)) is not None


@pytest.mark.parametrize("name", sorted(fresh_arrays.C_PARAMETERS))
def test_written_parameters_match_numpy_where_it_has_a_signature(name):
    try:
        params = tuple(inspect.signature(getattr(np, name)).parameters)
    except (TypeError, ValueError):
        pytest.skip(f"numpy {np.__version__} has no signature for np.{name} (before 2.3)")
    written = fresh_arrays.C_PARAMETERS[name]
    assert params[: len(written)] == written


def test_constructors_are_new_and_a_positional_out_is_not():
    assert call_returns_new(np.zeros, {}, (3,))
    assert call_returns_new(np.empty, {}, (3, NOT_LITERAL))
    assert call_returns_new(np.concatenate, {}, (NOT_LITERAL, 0))
    assert not call_returns_new(np.concatenate, {}, (NOT_LITERAL, 0, NOT_LITERAL))
    assert not call_returns_new(np.dot, {}, (NOT_LITERAL, NOT_LITERAL, NOT_LITERAL))
