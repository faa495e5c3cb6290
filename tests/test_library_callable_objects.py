"""Calls of library objects whose class's ``__call__`` is Python code (a ``np.vectorize``
object, also of a subclass): Python calls ``type(obj).__call__(obj, ...)``, so that
function's rule is the call's — for a global object, one passed in, or one stored on
``self``; in reverse mode, forward mode and second order. A library object with no such
rule is refused by the name of its ``__call__``, and registering a rule for that name (the
fix the message gives) makes it work. And ``jvp`` of bound methods, partials and callable
objects, as ``grad`` and ``vjp`` take them."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from fd import check_grad, check_jvp, numerical_grad

import pullback
from pullback.registry import default_registry
from pullback.testing import check_grads

DTYPES = [np.float64, np.float32]


def _kinked(t):
    return t * t * t if t > 0 else np.sin(t)


VEC = np.vectorize(_kinked)


class Squares(np.vectorize):
    """A subclass that keeps np.vectorize's __call__."""


SQUARES = Squares(lambda t: t * t)


def global_object(x):
    return np.sum(VEC(x) * x)


def subclass_object(x):
    return np.sum(SQUARES(x)) + x[0] * SQUARES(x[1])


def passed_in(x, fn):
    return np.sum(fn(x) ** 2)


class Layer:
    def __init__(self):
        self.act = VEC

    def loss(self, x):
        return np.sum(self.act(2.0 * x))


X = np.array([0.7, -0.4, 1.3])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("f", [global_object, subclass_object, Layer().loss])
def test_against_finite_differences(f, dtype):
    check_grad(f, X.astype(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_an_object_passed_in(dtype):
    got = pullback.grad(passed_in)(X.astype(dtype), VEC)
    x = X.astype(np.float64)
    want = 2 * VEC(x) * np.where(x > 0, 3 * x * x, np.cos(x))
    np.testing.assert_allclose(got, want, rtol=2e-3 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("f", [global_object, subclass_object])
def test_forward_mode_and_second_order(f):
    check_jvp(f, (X,), (np.array([1.0, -0.5, 0.25]),))
    check_grads(f, X, order=2)


def test_a_scalar_argument():
    def scalar(t):
        return VEC(t) * 2.0

    assert pullback.grad(scalar)(0.5) == pytest.approx(2.0 * 3 * 0.25)
    assert pullback.grad(scalar)(-0.5) == pytest.approx(2.0 * np.cos(-0.5))


class _Affine:
    """A 'library' callable: its __call__ is given a library module below."""

    def __init__(self, a):
        self.a = a

    def __call__(self, x):
        return self.a * x


_Affine.__call__.__module__ = "numpy.fake_affine"  # as if NumPy's own code


AFFINE = _Affine(3.0)


def uses_affine(x):
    return np.sum(AFFINE(x) * x)


def test_a_library_object_with_no_rule_is_refused_by_its_call_method():
    with pytest.raises(pullback.UnsupportedSyntaxError, match=r"PB301.*_Affine.__call__"):
        pullback.grad(uses_affine)(X)


def test_registering_the_rule_the_message_names_makes_it_work():
    reg = default_registry().copy()

    @reg.rrule(_Affine.__call__)
    def _(obj, x):
        return obj.a * x, lambda dy: (pullback.ZERO, obj.a * dy)

    with pullback.use_registry(reg):
        np.testing.assert_allclose(pullback.grad(uses_affine)(X), 6.0 * X)


# -- jvp of every kind of callable ----------------------------------------------------------
class Model:
    def __init__(self):
        self.w = 1.5

    def forward(self, x, scale=1.0):
        return np.sum(np.sin(self.w * x)) * scale

    def __call__(self, x):
        return self.forward(x) * 2.0


@pytest.mark.parametrize(
    "fn",
    [Model().forward, Model(), functools.partial(Model().forward, scale=3.0)],
    ids=["bound method", "callable object", "partial"],
)
def test_jvp_of_bound_callables(fn):
    got = check_jvp(fn, (X,), (np.array([1.0, 2.0, -1.0]),))
    _, v = pullback.vjp(fn, X)
    np.testing.assert_allclose(got, v(1.0) @ np.array([1.0, 2.0, -1.0]), rtol=1e-12)


# -- a np.vectorize object made inside the function (found by probe_fin) ---------------------
def local_lambda(x):
    f = np.vectorize(lambda v: v**3 if v > 0 else -v)
    return np.sum(f(x))


def local_named(x):
    return np.sum(np.vectorize(_kinked)(x) * x)


@pytest.mark.parametrize("f", [local_lambda, local_named])
def test_jvp_of_a_vectorize_object_made_inside(f):
    # its call is found at run time: forward mode takes the rule of np.vectorize.__call__
    # as reverse mode does (it was refused as a call 'with neither Python source nor a rule'
    # naming the lifted lambda '_pb_lambda_2_21')
    t = np.array([1.0, -0.5, 0.25])
    got = check_jvp(f, (X,), (t,))
    np.testing.assert_allclose(got, pullback.grad(f)(X) @ t, rtol=1e-12)


@pytest.mark.parametrize("f", [local_lambda, local_named])
def test_second_derivative_of_a_vectorize_object_made_inside(f):
    # found at run time, its call is np.vectorize.__call__ with the object first, whose
    # pullback function is differentiated again (it was refused: "a closure pullback
    # cannot differentiate again")
    g = pullback.grad(f)
    want = np.stack([numerical_grad(lambda v: g(v)[k], (X,), 0) for k in range(X.size)])
    h = pullback.hessian(f)(X)
    np.testing.assert_allclose(h, want, rtol=1e-6, atol=1e-6)
    v = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(pullback.hvp(f)(X, v), h @ v, rtol=1e-12, atol=1e-12)
