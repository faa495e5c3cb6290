"""itertools.combinations, permutations, combinations_with_replacement and product over
differentiated values (pairwise losses written with them used to be refused, PB301): each
item's cotangent is the sum of those of the places it was picked into. Against central
finite differences, float64 and float32, over lists, tuples and the rows of an array; by
hand; forward mode and the second derivative."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from rule_inputs import FLOATS, rng

from pullback import grad, jvp
from pullback.testing import check_grads


def pairwise_dots(a, b, c):
    return sum(np.dot(u, v) for u, v in itertools.combinations([a, b, c], 2))


def pairwise_distances(X):
    return sum(np.sqrt(np.sum((u - v) ** 2)) for u, v in itertools.combinations(X, 2))


def ordered_pairs(w):
    return sum(u * v**2 for u, v in itertools.permutations(w, 2))


def with_replacement(w):
    out = 0.0
    for u, v in itertools.combinations_with_replacement(w, 2):
        out = out + u * np.sin(v)
    return out


def grid(a, b):
    return sum(u * np.exp(v) for u, v in itertools.product(a, b))


def squared_grid(w):
    return sum(u * v**2 for u, v in itertools.product(w, repeat=2))


def from_a_tuple(w):
    t = (w[0], w[1] * 2.0, w[2])
    return sum(u * v for u, v in itertools.combinations(t, 2))


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
def test_against_finite_differences(dtype):
    g = rng(31)
    a, b, c = (np.asarray(g.normal(size=3), dtype) for _ in range(3))
    check_grads(pairwise_dots, a, b, c, wrt=(0, 1, 2))
    check_grads(pairwise_distances, np.asarray(g.normal(size=(4, 2)), dtype))
    w = np.asarray(g.normal(size=3), dtype)
    for f in (ordered_pairs, with_replacement, squared_grid, from_a_tuple):
        check_grads(f, w)
    check_grads(grid, w, np.asarray(g.normal(size=2), dtype), wrt=(0, 1))
    assert grad(pairwise_distances)(np.asarray(g.normal(size=(4, 2)), dtype)).dtype == dtype


def test_by_hand():
    w = np.array([0.3, -1.2, 0.7])
    # sum over i != j of w_i w_j^2: d/dw_k = sum_{j != k} w_j^2 + 2 w_k sum_{i != k} w_i
    s, q = w.sum(), (w**2).sum()
    assert np.allclose(grad(ordered_pairs)(w), (q - w**2) + 2 * w * (s - w))
    # sum over i, j of a_i b_j^2 = sum(a) sum(b^2)
    a, b = np.array([0.5, 2.0]), np.array([1.5, -0.5, 0.25])
    da, db = grad(lambda a, b: sum(u * v**2 for u, v in itertools.product(a, b)), wrt=(0, 1))(
        a, b
    )
    assert np.allclose(da, np.sum(b**2)) and np.allclose(db, 2 * b * a.sum())


def test_forward_mode_and_second_order():
    g = rng(32)
    X = g.normal(size=(4, 2))
    v = g.normal(size=(4, 2))
    _, t = jvp(pairwise_distances, (X,), (v,))
    assert np.isclose(t, np.sum(grad(pairwise_distances)(X) * v))
    check_grads(ordered_pairs, g.normal(size=3), order=2)
