"""Trees in a SciPy solver's ``args`` (rules/_args_trees.py): a dict, a nested tuple or
list, a named tuple holding a tuple, with float leaves (Python floats, float arrays) and
constants among them. Their float leaves are parameters: first and second derivatives and
forward mode against central differences for each solver (quad, solve_ivp, odeint,
minimize, root, fsolve, brentq, least_squares); the cotangent of a tree given whole comes
back as a tree of its form; a tree of constants gets none."""

from __future__ import annotations

import collections

import numpy as np
import pytest
import scipy.integrate as si
import scipy.optimize as so
from fd import check_hvp, check_jvp

import pullback as pb

Cfg = collections.namedtuple("Cfg", "scale pair")
Y0 = np.array([1.0, 0.5])
TS = np.array([0.0, 0.5, 1.0])
X0 = np.array([0.3, -0.2])
W = np.array([0.7, 1.3])  # (c, k): every function below takes them as one array


def integrand(x, p):
    return np.exp(-p["c"] * x) * np.sin(p["inner"][0] * x) ** p["power"]


def quad_dict(w):
    p = {"c": w[0], "inner": (w[1], "label"), "power": 2}
    return si.quad(integrand, 0.0, 2.0, args=(p,), epsabs=1e-13, epsrel=1e-13)[0]


def rhs(t, y, p):
    return -p["c"] * y + p["k"][1] * np.sin(t) * y[::-1]


def ivp_dict(w):
    p = {"c": w[0], "k": [0.0, w[1]], "name": "decay"}
    sol = si.solve_ivp(rhs, (0.0, 1.0), Y0, t_eval=TS, args=(p,), rtol=1e-11, atol=1e-12)
    return np.sum(sol.y[:, -1] ** 2)


def orhs(y, t, p):
    return -p[0] * y + p[1][0] * np.sin(t) * y[::-1]


def odeint_nested(w):
    ys = si.odeint(orhs, Y0, TS, args=((w[0], (w[1], 2.0)),), rtol=1e-11, atol=1e-12)
    return np.sum(ys[-1] ** 2)


def objective(x, p):
    return np.sum((x - p.pair[0]) ** 2) + p.scale * np.sum(x**4) + p.pair[1] * x[0]


def minimize_named(w):
    p = Cfg(w[0], (np.array([w[1], -w[1]]), 0.5))
    return so.minimize(objective, X0, args=(p,), method="BFGS").fun


def objective_flat(x, c, k):
    return np.sum((x - np.array([k, -k])) ** 2) + c * np.sum(x**4) + 0.5 * x[0]


def minimize_flat(w):
    return so.minimize(objective_flat, X0, args=(w[0], w[1]), method="BFGS").fun


def residual(x, p):
    return x**3 + p["k"] * x - p["c"] * np.array([1.0, 2.0])


def root_dict(w):
    return np.sum(so.root(residual, X0, args=({"c": w[0], "k": w[1], "n": 3},), tol=1e-13).x ** 2)


def fsolve_nested(w):
    p = {"c": w[0], "k": w[1]}
    x = so.fsolve(lambda x, q: residual(x, q[0]), X0, args=((p, "tag"),), xtol=1e-13)
    return np.sum(x**2)


def brentq_dict(w):
    return so.brentq(
        lambda x, p: x**3 + p["k"] * x - p["c"],
        -5.0,
        5.0,
        args=({"c": w[0], "k": w[1]},),
        xtol=1e-14,
    )


def residuals(x, p):
    t = np.linspace(0.0, 1.0, 5)
    return x[0] * np.exp(-x[1] * t) - p["data"][0] * np.exp(-p["data"][1] * t)


def least_squares_dict(w):
    p = {"data": [w[0], w[1]], "n": 5}
    fit = so.least_squares(
        residuals, np.array([1.0, 1.0]), args=(p,), xtol=1e-14, ftol=1e-14, gtol=1e-14
    )
    return np.sum(fit.x**2)


CASES = [
    quad_dict,
    ivp_dict,
    odeint_nested,
    minimize_named,
    root_dict,
    fsolve_nested,
    brentq_dict,
    least_squares_dict,
]
ids = pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)


def central(fn, w, h):
    out = np.zeros(w.size)
    for i in range(w.size):
        e = np.zeros(w.size)
        e[i] = h
        out[i] = (fn(w + e) - fn(w - e)) / (2 * h)
    return out


@ids
def test_first_order(fn):
    np.testing.assert_allclose(pb.grad(fn)(W), central(fn, W, 1e-6), rtol=1e-6, atol=1e-8)


@ids
def test_second_order_and_forward(fn):
    v = np.array([0.4, -0.9])
    if fn is minimize_named:
        # (BFGS's own tolerance makes differences of its gradient too coarse: the same
        # problem with flat args is the reference)
        np.testing.assert_allclose(pb.hvp(fn)(W, v), pb.hvp(minimize_flat)(W, v), rtol=1e-10)
    else:
        check_hvp(fn, W, v, rtol=1e-5, atol=1e-7)
    check_jvp(fn, (W,), (v,))


def quad_tree(p):
    return si.quad(integrand, 0.0, 2.0, args=(p,), epsabs=1e-13, epsrel=1e-13)[0]


def test_the_cotangent_of_a_tree_is_a_tree():
    p = {"c": 0.7, "inner": (np.float32(1.3), "label"), "power": 2}
    g = pb.grad(quad_tree)(p)
    assert set(g) == {"c", "inner", "power"} and g["power"] is None and g["inner"][1] is None
    assert type(g["inner"][0]) is np.float32
    w = np.array([0.7, 1.3])
    want = central(quad_dict, w, 1e-6)
    np.testing.assert_allclose([g["c"], g["inner"][0]], want, rtol=1e-5)


def test_float32_leaves():
    # the integrand runs on float64 parameters; the cotangents come back in float32
    w32 = W.astype(np.float32)

    def quad32(w):
        p = {"c": w[0], "inner": (w[1], "label"), "power": 2}
        return si.quad(integrand, 0.0, 2.0, args=(p,), epsabs=1e-13, epsrel=1e-13)[0]

    g = pb.grad(quad32)(w32)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, central(quad_dict, W, 1e-6), rtol=1e-5)


def quad_constants(c):
    cfg = {"n": 2, "name": "x", "flags": (True, 3)}
    return si.quad(lambda x, q, a: a * x ** q["n"], 0.0, 1.0, args=(cfg, c))[0]


def quad_of_a_tree(cfg, c):
    return si.quad(lambda x, q, a: a * x ** q["n"], 0.0, 1.0, args=(cfg, c))[0]


def test_a_tree_of_constants_gets_no_gradient():
    np.testing.assert_allclose(pb.grad(quad_constants)(2.0), 1.0 / 3.0, rtol=1e-12)
    # a float the integrand does not read gets zero, a constant none
    g = pb.grad(quad_of_a_tree, wrt=(0, 1))({"n": 2, "unused": 0.5}, 2.0)
    assert g[0] == {"n": None, "unused": 0.0}
    np.testing.assert_allclose(g[1], 1.0 / 3.0, rtol=1e-12)


def closure_over_a_dict(w):
    cfg = {"c": w[0], "k": (w[1], 1)}
    return si.quad(lambda x: np.exp(-cfg["c"] * x) * np.sin(cfg["k"][0] * x), 0.0, 2.0)[0]


def test_a_closure_reading_a_tree():
    np.testing.assert_allclose(
        pb.grad(closure_over_a_dict)(W), central(closure_over_a_dict, W, 1e-6), rtol=1e-6
    )
    check_hvp(closure_over_a_dict, W, np.array([0.4, -0.9]), rtol=1e-5, atol=1e-7)
