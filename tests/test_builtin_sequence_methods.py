"""``xs.index(v)`` and ``xs.count(v)`` of lists and tuples that hold differentiated values:
integers that carry no gradient, at first and second order, found when the call runs
(dynamic_vjps.no_cotangents); checked against central finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from fd import numerical_grad

from pullback import grad, hessian, jvp

X = np.array([0.5, -1.2, 0.3])


def central(f, x, h=1e-6):
    """Central differences of ``f`` at ``x`` (tests/fd.py)."""
    return numerical_grad(f, (x,), 0, eps=h)


def picked(x):
    xs = list(x)
    best = xs.index(max(xs))
    return xs[best] ** 2 + xs.count(xs[0]) * xs[0] + tuple(xs).index(xs[2]) * xs[2] ** 3


def held_in_a_dict(x):
    d = {"a": list(x)}
    return d["a"].index(d["a"][1]) * 1.0 + sum(d["a"]) ** 2


@pytest.mark.parametrize("f", [picked, held_in_a_dict], ids=lambda f: f.__name__)
def test_first_and_second_order(f):
    np.testing.assert_allclose(grad(f)(X), central(f, X), rtol=1e-6, atol=1e-8)
    g = grad(f)
    want = np.array([central(lambda z, i=i: g(z)[i], X, h=1e-5) for i in range(X.size)])
    np.testing.assert_allclose(hessian(f)(X), want, rtol=1e-5, atol=1e-6)
    v = np.array([1.0, 0.5, -2.0])
    _, t = jvp(f, (X,), (v,))
    np.testing.assert_allclose(t, np.dot(grad(f)(X), v), rtol=1e-10)


def test_float32():
    g32 = grad(picked)(X.astype(np.float32))
    assert g32.dtype == np.float32
    np.testing.assert_allclose(g32, grad(picked)(X), rtol=1e-5)


def test_hand_derived():
    # max is x[0] = 0.5: 2 x0 + count(x0) = 1 (times x0's derivative 1) + 3 * 2 * x2^2
    np.testing.assert_allclose(grad(picked)(X), [2 * 0.5 + 1.0, 0.0, 3 * 2 * 0.3**2])


def test_dict_get_found_at_run_time_at_second_order():
    # its rule's pullback function gives the dict its cotangent first (one per positional
    # argument, the receiver first): once the reverse counted it as the receiver's
    # cotangent-less slot, the entry's cotangent was dropped and the Hessian was zero
    def f(x):
        d = {f"w{i}": v for i, v in enumerate(x)}
        return d.get("w1", 0.0) ** 3

    np.testing.assert_allclose(grad(f)(X), [0.0, 3 * 1.44, 0.0])
    g = grad(f)
    want = np.array([central(lambda z, i=i: g(z)[i], X, h=1e-5) for i in range(X.size)])
    np.testing.assert_allclose(want[1, 1], 6 * X[1], rtol=1e-6)
    np.testing.assert_allclose(hessian(f)(X), want, rtol=1e-5, atol=1e-6)
