"""``min``/``max`` of tuples compare them item by item, as Python does. The pullback
function (the one the sweeps call) compared the flattened array of every item instead, so
``min(pairs)[1]`` sent the gradient to the wrong pair and ``max(pairs)[0]`` to none
(found by probe_fin with ``min(zip(x, x ** 2))``)."""

import numpy as np
import pytest
from fd import check_grad, check_hvp

X = np.array([0.3, -0.7, 1.1])


def min_of_pairs(x):
    pairs = [(x[0], x[0] ** 2), (x[1], x[1] ** 2), (x[2], x[2] ** 2)]
    return min(pairs)[1]


def max_first_item(x):
    pairs = [(x[0], 1.0), (x[1], 2.0), (x[2], 3.0)]
    return max(pairs)[0] * 2.0


def min_of_listed_zip(x):
    return min(list(zip(x, x**3, strict=True)))[1]


def max_of_tied_first_items(x):
    # equal first items: the second decides, as in Python
    pairs = [(1.0, x[0]), (1.0, x[2]), (0.0, x[1])]
    return max(pairs)[1] ** 2


def min_of_numbers(x):
    return min(x[0], x[1] * 2.0, x[2]) + max([x[0], x[2]])


CASES = [min_of_pairs, max_first_item, min_of_listed_zip, max_of_tied_first_items, min_of_numbers]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("f", CASES, ids=[f.__name__ for f in CASES])
def test_min_and_max_of_tuples_pick_as_python_does(f, dtype):
    check_grad(f, X.astype(dtype))


@pytest.mark.parametrize("f", CASES, ids=[f.__name__ for f in CASES])
def test_second_order_through_min_and_max_of_tuples(f):
    check_hvp(f, X, np.array([0.5, -1.0, 0.25]))
