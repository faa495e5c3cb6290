"""Loops over ``zip`` whose arguments are iterators only known when the code runs: a user's
generator that never ends, an iterator handed in as a parameter or bound to a name.

A zip stops at its shortest argument; pullback reads each argument into a list before the
loop, so an iterator is read only as far as the sequences beside it go
(``unpacking.zip_bounded``) -- before, a generator that never ends (``zip(naturals(),
xs)``) or ``itertools.count()`` passed in as a parameter hung the gradient. A generator
that carries no gradient runs as the primal runs it; one that carries a gradient and
provably never ends (``while True:`` without break or return) is refused before running
(PB402) with a fix, since pullback runs such a generator to its end as the list it yields.
Checked against central differences (float64, float32) and to second order.
"""

import itertools

import numpy as np
import pytest
from fd import check_grad, check_hvp

import pullback
from pullback import UnsupportedSyntaxError


def naturals():
    n = 0
    while True:
        yield n
        n += 1


def weighted_by_naturals(x):
    s = 0.0
    for i, v in zip(naturals(), x, strict=False):
        s = s + i * np.sin(v)
    return s


def naturals_after(x):
    s = 0.0
    for v, (j, i) in zip(x, enumerate(naturals()), strict=False):
        s = s + (i + j) * v**2
    return s


def with_iterator(x, it):
    s = 0.0
    for v, c in zip(x, it, strict=False):
        s = s + c * v**3
    return s


def bound_repeat(x):
    rep = itertools.repeat(1.5)
    s = 0.0
    for r, v in zip(rep, x, strict=False):
        s = s + r * np.exp(v)
    return s


X = np.array([0.3, -0.8, 1.1, 0.6])
V = np.array([1.0, 0.5, -0.25, 2.0])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("f", [weighted_by_naturals, naturals_after, bound_repeat])
def test_zipped_with_an_endless_iterator(f, dtype):
    check_grad(f, X.astype(dtype))


def test_hand_derived():
    got = pullback.grad(weighted_by_naturals)(X)
    np.testing.assert_allclose(got, np.arange(4) * np.cos(X), rtol=1e-12)


@pytest.mark.parametrize("f", [weighted_by_naturals, bound_repeat])
def test_second_order(f):
    check_hvp(f, X, V)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_iterator_parameter(dtype):
    x = X.astype(dtype)
    check_grad(lambda v: with_iterator(v, itertools.count(1)), x)
    got = pullback.grad(with_iterator)(x, itertools.count(1))
    np.testing.assert_allclose(got, 3 * np.arange(1, 5) * x.astype(np.float64) ** 2, rtol=1e-6)


def test_an_iterator_is_read_as_far_as_zip_reads_it():
    it = iter([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    pullback.grad(with_iterator)(X, it)
    assert list(it) == [5.0, 6.0]  # as after the primal: zip stops at x's end


def powers(x):
    v = 1.0
    while True:
        yield v
        v = v * x


def series(x, cs):
    s = 0.0
    for p, c in zip(powers(x), cs, strict=False):
        s = s + p * c
    return s


def test_a_differentiated_generator_that_never_ends_is_refused():
    with pytest.raises(UnsupportedSyntaxError) as info:
        pullback.grad(series)(0.5, [1.0, 2.0, 3.0])
    text = str(info.value)
    assert "test_zipped_iterators.py:" in text
    assert (
        "PB402 generator function 'powers' cannot be differentiated here: it never ends "
        "(the `while` loop at line " in text
    )
    assert (
        "Fix: give 'powers' an end: a parameter for the number of items "
        "(`for _ in range(n):` instead of `while True:`), called with the length of what "
        "it is zipped with" in text
    )


def powers_upto(x, n):
    v = 1.0
    for _ in range(n):
        yield v
        v = v * x


def series_upto(x, cs):
    s = 0.0
    for p, c in zip(powers_upto(x, len(cs)), cs, strict=False):
        s = s + p * c
    return s


def test_the_fix_works():
    cs = [1.0, 2.0, 3.0]
    check_grad(lambda x: series_upto(x, cs), 0.5)
    assert pullback.grad(series_upto)(0.5, cs) == pytest.approx(2.0 + 6.0 * 0.5)
