# ruff: noqa: B905 - zip as public code writes it
"""``sorted``, ``min`` and ``max`` of one ``zip``/``enumerate``/``reversed`` call, with their
keywords, consume it whole: differentiated as the same call of the list comprehension
(found by probe_fin: ``sorted(zip(x, order), key=...)`` and ``max(enumerate(x), key=...)``
were refused as 'a lazy iterator kept as a value')."""

import numpy as np
import pytest
from fd import check_grad, check_hvp

import pullback

X = np.array([0.3, -0.7, 1.1])


def sorted_zip_by_key(x):
    pairs = sorted(zip(x, [3, 1, 2]), key=lambda p: p[1])
    return pairs[0][0] * 2 + pairs[2][0] ** 2


def sorted_enumerate_descending(x):
    pairs = sorted(enumerate(x), key=lambda p: -p[1])
    return pairs[0][1] * pairs[1][1]


def argmax_by_enumerate(x):
    i, v = max(enumerate(x), key=lambda p: p[1])
    return v * 2 + i


def min_of_pairs(x):
    return min(zip(x, x**2))[1]


def sorted_reverse_keyword(x):
    best = sorted(zip(x**2, x), reverse=True)
    return best[0][1] - best[-1][0]


def sum_over_sorted(x):
    return sum(a * b for a, b in sorted(zip(x, x[::-1])))


CASES = [
    sorted_zip_by_key,
    sorted_enumerate_descending,
    argmax_by_enumerate,
    min_of_pairs,
    sorted_reverse_keyword,
    sum_over_sorted,
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("f", CASES, ids=[f.__name__ for f in CASES])
def test_an_ordering_of_an_iterator_is_differentiated(f, dtype):
    check_grad(f, X.astype(dtype))


@pytest.mark.parametrize("f", CASES, ids=[f.__name__ for f in CASES])
def test_second_order_through_an_ordering_of_an_iterator(f):
    check_hvp(f, X, np.array([0.5, -1.0, 0.25]))


def kept_iterator(x):
    pairs = zip(x, [3, 1, 2])
    return sorted(pairs, key=lambda p: p[1])[0][0]


def test_an_iterator_kept_in_a_variable_stays_refused():
    with pytest.raises(pullback.UnsupportedSyntaxError, match="lazy iterator kept as a value"):
        pullback.grad(kept_iterator)(X)
