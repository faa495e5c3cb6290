"""Slice stores ``l[a:b:c] = s`` and slice deletes ``del l[a:b:c]`` on local lists, with
Python's semantics (pullback.containers_slices), and stores into the rows of a local list
of lists ``rows[i][j] (op)= v`` (tests/list_nested_cases.py): values and errors as Python
gives them, reverse mode against finite differences (float64, float32), forward mode,
second order."""

import list_nested_cases as nested
import list_slice_cases as cases
import numpy as np
import pytest
from list_inplace_cases import check_value_and_forward_mode

from pullback import grad
from pullback.check import check
from pullback.containers_slices import slice_keep, slice_order
from pullback.testing import check_grads

X = np.array([0.3, 0.7, -0.4, 1.1, 0.6])
CASES = cases.CASES + nested.CASES


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_reverse_mode_matches_finite_differences(f, dtype):
    assert check(f) == []
    check_grads(f, X.astype(dtype))


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_value_and_forward_mode(f):
    check_value_and_forward_mode(f, X, 4)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_second_order(f):
    check_grads(f, X, order=2)


@pytest.mark.parametrize(
    "n,bounds",
    [(6, (1, 4, None)), (6, (-2, None, None)), (6, (4, 1, None)), (6, (None, None, -1)),
     (7, (1, None, 3)), (7, (-1, 0, -2)), (0, (None, None, None)), (5, (8, 9, None))],
)  # fmt: skip
def test_positions_are_what_python_does(n, bounds):
    lower, upper, step = bounds
    places = len(range(*slice(lower, upper, step).indices(n)))
    for m in {places, 0, 3} if step in (None, 1) else {places}:
        want = list(range(n))
        want[slice(lower, upper, step)] = list(range(n, n + m))
        assert slice_order(n, lower, upper, step, m) == want
    want = list(range(n))
    del want[slice(lower, upper, step)]
    assert slice_keep(n, lower, upper, step) == want


def test_an_extended_slice_of_another_size_raises_what_python_raises():
    def f(x):
        l = [x[0], x[1], x[2], x[3]]
        l[::2] = [x[4]]
        return l[0]

    with pytest.raises(ValueError) as python:
        f(X)
    with pytest.raises(ValueError) as ours:
        grad(f)(X)
    assert str(ours.value) == str(python.value)
    assert "sequence of size 1 to extended slice of size 2" in str(ours.value)


def test_a_zero_step_raises_what_python_raises():
    def f(x):
        l = [x[0], x[1]]
        del l[::0]
        return l[0]

    with pytest.raises(ValueError, match="slice step cannot be zero"):
        grad(f)(X)
