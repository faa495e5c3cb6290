"""A user object made in the differentiated function whose fields hold what the gradient
flows through, handed to library code that calls it (SciPy's solvers, np.piecewise,
np.apply_along_axis): the library calls it natively, its fields as constants, and main
gave a gradient of 0 (``quad(D(p), 0, 1)``: 0.0 where 0.5 is right). Each entry point and
each way of handing it over (the object, a bound method, a partial of a method, inside
``args``; a plain class, a dataclass, a named tuple with ``__call__``) is now a pullback
error at the user's line with a fix that works; an object that carries no gradient, a
named tuple in ``args`` and the fix differentiate (against central differences)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pytest
from fd import numerical_grad

scipy = pytest.importorskip("scipy")
from scipy import integrate, optimize  # noqa: E402

from pullback import grad, hessian  # noqa: E402
from pullback.errors import PullbackError  # noqa: E402

HERE = __file__
X = np.array([0.2, 0.7])


class Line:
    """``p * t``, callable and by methods."""

    def __init__(self, p):
        self.p = p

    def __call__(self, t):
        return self.p * t

    def scaled(self, t):
        return self.p * t * t

    def residual(self, x):
        return x**3 - self.p

    def rhs(self, t, y):
        return -self.p * y

    def rhs_yt(self, y, t):
        return -self.p * y

    def loss(self, x):
        return np.sum((x - self.p) ** 2)


CONSTANT = Line(3.0)  # a module's object: its fields carry no gradient


@dataclass
class Rate:
    p: float

    def __call__(self, t):
        return self.p * t

    def residual(self, x):
        return x**3 - self.p


class Pair(NamedTuple):
    p: float
    q: float

    def __call__(self, t):
        return self.p * t + self.q


# -- each entry point, the object handed over in each form -----------------------------
def quad_object(p):
    return integrate.quad(Line(p), 0.0, 1.0)[0]


def quad_method(p):
    return integrate.quad(Line(p).scaled, 0.0, 1.0)[0]


def quad_in_args(p):
    return integrate.quad(lambda t, lines: lines[0](t), 0.0, 1.0, args=([Line(p)],))[0]


def quad_partial(p):
    return integrate.quad(functools.partial(Line(p).scaled), 0.0, 1.0)[0]


def ivp_method(p):
    line = Line(p)
    return integrate.solve_ivp(line.rhs, (0.0, 1.0), np.array([1.0])).y[0, -1]


def odeint_method(p):
    return integrate.odeint(Line(p).rhs_yt, np.array([1.0]), np.array([0.0, 1.0]))[-1, 0]


def brentq_method(p):
    return optimize.brentq(Line(p).residual, 0.0, 3.0)


def fsolve_method(p):
    return optimize.fsolve(Line(p).residual, np.array([1.0]))[0]


def root_method(p):
    return optimize.root(Line(p).residual, np.array([1.0])).x[0]


def minimize_method(p):
    return optimize.minimize(Line(p).loss, np.array([0.0])).x[0]


def piecewise_object(p):
    return np.sum(np.piecewise(X, [X < 0.5, X >= 0.5], [Line(p), lambda t: t]))


def piecewise_method(p):
    return np.sum(np.piecewise(X, [X < 0.5, X >= 0.5], [Line(p).scaled, lambda t: t]))


def apply_object(p):
    return np.sum(np.apply_along_axis(Line(p), 0, X))


def apply_method(p):
    return np.sum(np.apply_along_axis(Line(p).scaled, 0, X))


def quad_dataclass(p):
    return integrate.quad(Rate(p), 0.0, 1.0)[0]


def brentq_dataclass_method(p):
    return optimize.brentq(Rate(p).residual, 0.0, 3.0)


def quad_dataclass_in_args(p):
    return integrate.quad(lambda t, r: r.p * t, 0.0, 1.0, args=(Rate(p),))[0]


def quad_named_tuple(p):
    return integrate.quad(Pair(p, 1.0), 0.0, 1.0)[0]


def piecewise_dataclass(p):
    return np.sum(np.piecewise(X, [X < 0.5, X >= 0.5], [Rate(p), lambda t: t]))


REFUSED = [
    quad_dataclass,
    brentq_dataclass_method,
    quad_dataclass_in_args,
    quad_named_tuple,
    piecewise_dataclass,
    quad_object,
    quad_method,
    quad_in_args,
    quad_partial,
    ivp_method,
    odeint_method,
    brentq_method,
    fsolve_method,
    root_method,
    minimize_method,
    piecewise_object,
    piecewise_method,
    apply_object,
    apply_method,
]


@pytest.mark.parametrize("fn", REFUSED, ids=lambda f: f.__name__)
def test_an_object_holding_the_gradient_is_refused_never_zero(fn):
    with pytest.raises(PullbackError) as refused:
        grad(fn)(2.0)
    message = str(refused.value)
    assert HERE in message or "PB301" in message  # the user's line (a partial: PB301)
    assert "Fix" in message or "fix" in message


def _line(text):
    with open(HERE, encoding="utf-8") as f:
        return next(k for k, line in enumerate(f, 1) if text in line)


def test_the_refusal_golden():
    with pytest.raises(PullbackError) as refused:
        grad(quad_object)(2.0)
    assert str(refused.value) == (
        f"{HERE}:{_line('quad(Line(p), 0.0')}: scipy.integrate.quad was handed a Line object "
        "(itself, a bound method of it or inside a container) whose fields (p) hold values "
        "the gradient flows through: scipy.integrate.quad calls it as library code, and its "
        "rule differentiates through args only, so the gradient through the object's fields "
        "would be lost.\n"
        "        return integrate.quad(Line(p), 0.0, 1.0)[0]\n"
        "Fix: pass the values the object is made from as parameters and build the Line inside "
        "the function scipy.integrate.quad calls, e.g. `quad(lambda t, p: Line(p)(t), lo, hi, "
        "args=(p,))` (SciPy's solvers: `args=`; np.piecewise and np.apply_along_axis take "
        "extra arguments after the function's), or call the method in the differentiated "
        "function."
    )


@pytest.mark.parametrize("fn", [quad_method, brentq_method, piecewise_object])
def test_refused_at_second_order_too(fn):
    with pytest.raises(PullbackError, match="handed a Line object"):
        hessian(fn)(2.0)


# -- what differentiates: the fix, objects that carry no gradient ------------------------
def quad_fixed(p):
    return integrate.quad(lambda t, q: Line(q)(t), 0.0, 1.0, args=(p,))[0] * p


def brentq_fixed(p):
    return optimize.brentq(lambda x, q: Line(q).residual(x), 0.0, 3.0, args=(p,))


def piecewise_fixed(p):
    pieces = [lambda t, q: Line(q)(t), lambda t, q: t * t]
    return np.sum(np.piecewise(X * p, [X < 0.5, X >= 0.5], pieces, p))


def constant_objects(p):
    a = integrate.quad(CONSTANT, 0.0, 1.0)[0] * p
    b = integrate.quad(Line(2.0).scaled, 0.0, 1.0)[0] * p  # made from constants
    return a + b + np.sum(np.piecewise(X * p, [X < 0.5, X >= 0.5], [CONSTANT, np.sin]))


def named_tuple_in_args(p):
    # a named tuple in args= is data the rule differentiates (rules/_args_trees.py)
    return integrate.quad(lambda t, c: c.p * t + c.q, 0.0, 1.0, args=(Pair(p, 2.0 * p),))[0]


def mapped_methods(p):
    line = Line(p)
    return sum(map(line.scaled, [0.2, 0.7])) + sorted([0.7, 0.2], key=line)[0] * p


@pytest.mark.parametrize(
    "fn",
    [
        quad_fixed,
        brentq_fixed,
        piecewise_fixed,
        constant_objects,
        mapped_methods,
        named_tuple_in_args,
    ],
)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_fix_and_objects_without_gradient_differentiate(fn, dtype):
    p = dtype(1.3)
    g = grad(fn)(p)
    expected = numerical_grad(fn, (np.float64(p),), 0, eps=1e-6)
    tol = 1e-6 if dtype == np.float64 else 2e-3
    np.testing.assert_allclose(float(g), float(expected), rtol=tol, atol=tol)


def test_the_fix_at_second_order():
    # d2/dp2 of p * p / 2 and of the root p ** (1 / 3)
    np.testing.assert_allclose(hessian(quad_fixed)(2.0), 1.0, rtol=1e-7)
    expected = -2.0 / 9.0 * 2.0 ** (-5.0 / 3.0)
    np.testing.assert_allclose(hessian(brentq_fixed)(2.0), expected, rtol=1e-6)
