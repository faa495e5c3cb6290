"""The state a batched attempt runs in (pullback.batched.Quiet): NumPy's floating-point
errors and Python's warnings are ignored inside, and the user's state is back after it,
whatever it was and however the block ends."""

import warnings

import numpy as np
import pytest

from pullback.batched import Quiet


def test_inside_everything_is_ignored_and_the_state_comes_back():
    with np.errstate(over="raise", divide="warn", invalid="call", under="print"):
        np.seterrcall(lambda *a: None)
        before = np.geterr()
        with Quiet():
            assert set(np.geterr().values()) == {"ignore"}
            np.float64(1e308) * 10.0  # no FloatingPointError
            np.log(np.zeros(1))
            with warnings.catch_warnings(record=True) as seen:
                warnings.warn("inside", UserWarning, stacklevel=1)
            assert seen == []  # catch_warnings(record=True) keeps the filters it finds
        assert np.geterr() == before
        with pytest.raises(FloatingPointError):
            np.float64(1e308) * 10.0


def test_the_state_comes_back_after_an_exception():
    before = np.geterr()
    filters = warnings.filters
    with pytest.raises(ZeroDivisionError):
        with Quiet():
            1 / 0
    assert np.geterr() == before
    assert warnings.filters is filters


def test_nested_quiet_blocks():
    before = np.geterr()
    with Quiet():
        with Quiet():
            assert set(np.geterr().values()) == {"ignore"}
        assert set(np.geterr().values()) == {"ignore"}
    assert np.geterr() == before
