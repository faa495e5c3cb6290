"""``sorted`` in differentiated code: over a dict's items (its keys choose the order), over
floats and arrays, with key= and reverse=, first and second order."""

import numpy as np
import pytest

from pullback import grad, hessian
from pullback.testing import check_grads


def layers(params, x):
    out = x
    for _, (W, b) in sorted(params.items()):
        out = np.tanh(W @ out + b)
    return np.sum(out)


def smallest_three(v):
    s = sorted(v)
    return s[0] * s[1] + s[2] ** 2


def by_magnitude(a, b, c):
    ordered = sorted([a, b, c], key=abs, reverse=True)
    return ordered[0] - 2.0 * ordered[2]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_over_a_dicts_items(dtype):
    rng = np.random.default_rng(0)
    W1, b1 = rng.normal(size=(3, 3)).astype(dtype), rng.normal(size=3).astype(dtype)
    W2, b2 = rng.normal(size=(2, 3)).astype(dtype), rng.normal(size=2).astype(dtype)
    x = rng.normal(size=3).astype(dtype)
    params = {"b": (W2, b2), "a": (W1, b1)}  # sorted: "a" first, as Python runs it
    g = grad(layers)(params, x)
    assert set(g) == {"a", "b"}
    h = 1e-3 if dtype == np.float32 else 1e-6
    for name, k in [("a", 1), ("b", 1), ("a", 0)]:
        d = np.zeros_like(params[name][k])
        d.flat[0] = h
        up = dict(params)
        down = dict(params)
        up[name] = tuple(p + d if j == k else p for j, p in enumerate(params[name]))
        down[name] = tuple(p - d if j == k else p for j, p in enumerate(params[name]))
        fd = (layers(up, x) - layers(down, x)) / (2 * h)
        tol = 1e-2 if dtype == np.float32 else 1e-6
        assert g[name][k].flat[0] == pytest.approx(fd, rel=tol, abs=tol)
    if dtype == np.float64:
        check_grads(layers, params, x)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_against_hand_gradients(dtype):
    v = np.array([0.7, -1.2, 2.5, 0.1], dtype=dtype)
    # sorted: -1.2, 0.1, 0.7, 2.5 -> s0*s1 + s2**2
    want = np.array([2 * 0.7, 0.1, 0.0, -1.2], dtype=dtype)
    np.testing.assert_allclose(grad(smallest_three)(v), want, rtol=1e-6)
    check_grads(smallest_three, v)
    # |2.5| > |-1.2| > |0.7|: 2.5 - 2 * 0.7
    assert grad(by_magnitude, wrt=(0, 1, 2))(0.7, -1.2, 2.5) == pytest.approx((-2.0, 0.0, 1.0))


def test_second_order():
    v = np.array([0.7, -1.2, 2.5, 0.1])
    H = hessian(smallest_three)(v)
    want = np.zeros((4, 4))
    want[1, 3] = want[3, 1] = 1.0  # s0 * s1 = v[1] * v[3]
    want[0, 0] = 2.0  # s2**2 = v[0]**2
    np.testing.assert_allclose(H, want, atol=1e-12)
