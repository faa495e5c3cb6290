"""Loops and comprehensions over itertools.combinations, combinations_with_replacement,
permutations, product and pairwise (transform/loop_iterables.py reads each tuple's items
by position): gradients against central finite differences (float64 and float32), forward
mode, Hessians against differences of the gradient, and the refusals of the forms whose
tuple size is not written in the call."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from fd import numerical_grad

from pullback import grad, hessian, jvp
from pullback.errors import UnsupportedSyntaxError

X = np.array([0.5, -1.2, 2.0, 0.7])


def central(f, x, h=1e-6):
    """Central differences of ``f`` at ``x`` (tests/fd.py)."""
    return numerical_grad(f, (x,), 0, eps=h)


def pair_loop(x):
    total = 0.0
    for a, b in itertools.combinations(x, 2):
        total += a * b**2
    return total


def pair_sum(x):
    return sum(a * b for a, b in itertools.combinations(x, 2))


def neighbours(x):
    return sum((a - b) ** 2 for a, b in itertools.pairwise(x))


def triples_and_grid(x):
    triples = sum(a * b * c for a, b, c in itertools.permutations(x[:3], 3))
    return triples + sum(p * q for p, q in itertools.product(x, x[::-1]))


def pair_energy(x):
    points = x.reshape(2, 2)
    energy = 0.0
    for (i, p), (j, q) in itertools.combinations(enumerate(points), 2):
        energy += (i + j + 1) / np.sum((p - q) ** 2)
    return energy


def repeats(x):
    squares = sum(a * b for a, b in itertools.product(x[:2], repeat=2))
    return squares + sum(a * b for a, b in itertools.combinations_with_replacement(x, r=2))


def pair_list(x):
    return np.sum(np.array([a - b for a, b in itertools.combinations(x, 2)]) ** 2)


CASES = [pair_loop, pair_sum, neighbours, triples_and_grid, pair_energy, repeats, pair_list]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_gradient_matches_finite_differences(f):
    np.testing.assert_allclose(grad(f)(X), central(f, X), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_float32(f):
    g32 = grad(f)(X.astype(np.float32))
    assert g32.dtype == np.float32
    np.testing.assert_allclose(g32, grad(f)(X), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_forward_mode_and_hessian(f):
    v = np.array([1.0, -0.5, 0.25, 2.0])
    _, t = jvp(f, (X,), (v,))
    np.testing.assert_allclose(t, np.dot(grad(f)(X), v), rtol=1e-10, atol=1e-12)
    g = grad(f)
    want = np.array([central(lambda z, i=i: g(z)[i], X, h=1e-5) for i in range(X.size)])
    np.testing.assert_allclose(hessian(f)(X), want, rtol=1e-5, atol=1e-6)


def test_hand_derived_pair_sum():
    # sum over pairs a_i a_j: d/dx_k = sum of the others
    np.testing.assert_allclose(grad(pair_sum)(X), X.sum() - X)


def test_primal_value_unchanged():
    from pullback import value_and_grad

    assert value_and_grad(pair_energy)(X)[0] == pair_energy(X)


@pytest.mark.parametrize(
    "f, says",
    [
        (lambda x: sum(a * b for a, b, c in itertools.permutations(x)), "permutations(xs, 3)"),
    ],
    ids=["size_not_written"],
)
def test_forms_whose_size_is_not_written_are_refused_with_the_fix(f, says):
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(f)(X)
    message = str(info.value)
    assert "PB301" in message and "the size of its tuples is written in the call" in message
    assert says in message


def listed_pairs(x):
    return np.sum(np.array(list(itertools.combinations(x, 2))) ** 2)


def test_consumed_whole_is_the_comprehension():
    # list(combinations(x, 2)): consumed whole, the list comprehension over it
    # (iteration.loop_itertools); each x_k sits in n - 1 pairs
    np.testing.assert_allclose(grad(listed_pairs)(X), 2 * (len(X) - 1) * X)
