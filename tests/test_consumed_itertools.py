"""itertools iterators consumed whole: ``list(accumulate(xs))``, ``tuple(accumulate(xs,
operator.mul))``, ``list(chain(a, b))``, ``sorted(combinations(xs, 2), key=...)``,
``max(product(a, b), key=...)``, ``len(list(pairwise(xs)))``.

Loops over these iterators were differentiated (transform/loop_iterables.py), but a
``list``/``tuple``/``sorted``/``min``/``max`` of one was refused (PB301, "loop over it
where it is made"). Consumed whole, each is the list comprehension over it
(iteration.loop_itertools, beside zip/enumerate/reversed), checked here against central
differences in float64 and float32 and to second order; ``dict`` of one is left as
written.
"""

import itertools
import operator

import numpy as np
import pytest
from fd import check_grad, check_hvp


def cumulative_sums(r):
    return np.sum(np.array(list(itertools.accumulate(r))) ** 2)


def cumulative_products(r):
    return sum(v**2 for v in tuple(itertools.accumulate(1 + r, operator.mul)))


def wealth_path(r):
    path = list(itertools.accumulate(1 + r, lambda a, b: a * b, initial=1.0))
    return np.log(path[-1]) - 0.5 * np.var(path)


def chained(x):
    return np.sum(np.array(list(itertools.chain(x[:2], x[1:] ** 2))) ** 2)


def ordered_pairs(x):
    pairs = sorted(itertools.combinations(x, 2), key=lambda p: p[0] * p[1])
    return pairs[0][0] * pairs[-1][1] + len(list(itertools.pairwise(x)))


def widest_product(x):
    return max(itertools.product(x, x[:2]), key=lambda p: p[0] - p[1])[0] ** 2


FUNCTIONS = [
    cumulative_sums,
    cumulative_products,
    wealth_path,
    chained,
    ordered_pairs,
    widest_product,
]
X = np.array([0.5, 1.2, 0.8, 1.7]) * 0.3
V = np.array([1.0, -0.5, 0.25, 2.0])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("f", FUNCTIONS)
def test_gradient(f, dtype):
    check_grad(f, X.astype(dtype))


@pytest.mark.parametrize("f", [cumulative_products, wealth_path, chained, ordered_pairs])
def test_second_order(f):
    check_hvp(f, X, V)


def scaled_products(t):
    r = np.array([t, 2 * t, -t])
    return sum(v**2 for v in tuple(itertools.accumulate(1 + r, operator.mul)))


def test_scalar_input():
    check_grad(scaled_products, 0.4)
