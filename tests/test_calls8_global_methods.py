"""A differentiated keyword of a call found at run time whose callee is a method of a
global object (``MODEL.apply(x, scale=p)``), a callable held on an object
(``self.layer(x, training=True, alpha=p)``), a global object's method spread from a dict
(``MODEL.apply(*args, **kw)``) or a global's bound method handed to a helper
(``helper(MODEL.apply, x, s)`` calling ``fn(x, scale=s)``): each is a star-call
(star_runtime.py) whose keywords get their cotangents at every order and in forward mode
(it was PB502, or refused when it ran). What such a call keeps on its object is recorded
as for a call written out (escapes.effect_star_method): a read of it back is refused at the
reading line, where before a spread call's or a handed method's kept keyword silently gave
no gradient."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from fd import form_tests

import pullback
from pullback.errors import UnsupportedCallError

HERE = __file__


class Dense:
    def __init__(self, w):
        self.w = w

    def __call__(self, x, training=False, alpha=0.0):
        y = np.tanh(self.w * x)
        return y * (1.0 + alpha) if training else y

    def apply(self, x, *, scale=1.0, shift=0.0):
        return np.sin(self.w * x) * scale + shift


def swish(x, *, beta=1.0):
    return x / (1.0 + np.exp(-beta * x))


class Net:
    def __init__(self):
        self.layer = Dense(np.array([0.5, -1.0, 2.0]))
        self.act = swish
        self.part = functools.partial(swish, beta=2.0)

    def run(self, x):
        h = self.layer(x, training=True, alpha=x[0] ** 2)
        return np.sum(self.act(h, beta=np.cos(x[1])))

    def run_alpha_only(self, x):
        return np.sum(self.layer(x, alpha=np.exp(x[2])) * self.part(x, beta=x[0]))


class Keeper:
    def keep(self, x, *, scale):
        self.kept = scale * 2.0

    def total(self, x, *, scale):
        self.last = scale
        return np.sum(x) * scale


MODEL = Dense(np.array([1.5, 0.5, -0.25]))
NET = Net()
KEEPER = Keeper()


def global_method_keyword(x):
    return np.sum(MODEL.apply(x, scale=x[0] * x[1], shift=np.sin(x[2])))


def held_layer_keywords(x):
    return NET.run(x)


def held_layer_keyword_after_default(x):
    return NET.run_alpha_only(x)


def global_method_spread(x):
    kw = {"scale": np.exp(x[0]), "shift": x[1] * x[2]}
    args = (x**2,)
    return np.sum(MODEL.apply(*args, **kw))


def _apply_with(fn, x, s):
    return np.sum(fn(x, scale=s) ** 2)


def bound_global_method_to_helper(x):
    return _apply_with(MODEL.apply, x, np.tanh(x[1]))


def keeps_and_returns(x):
    # keeps its keyword on a global object, never read back: runs as in the primal
    KEEPER.keep(x, scale=x[2])
    return KEEPER.total(x, scale=x[0] ** 2) + np.sum(x)


FORMS = [
    global_method_keyword,
    held_layer_keywords,
    held_layer_keyword_after_default,
    global_method_spread,
    bound_global_method_to_helper,
    keeps_and_returns,
]
X = np.array([0.3, -0.7, 0.45])

test_gradient_float64, test_gradient_float32, test_hessian, test_jvp = form_tests(
    FORMS, X, np.array([0.2, 0.5, -0.9])
)


def test_a_scalar_keyword_of_a_global_method():
    def f(s):
        return np.sum(MODEL.apply(np.array([0.5, 1.0, 2.0]), scale=s**2))

    h = 1e-6
    assert pullback.grad(f)(0.7) == pytest.approx((f(0.7 + h) - f(0.7 - h)) / (2 * h), rel=1e-7)
    g32 = pullback.grad(f)(np.float32(0.7))
    assert g32.dtype == np.float32
    assert pullback.hessian(f)(0.7) == pytest.approx(2 * np.sum(np.sin(MODEL.w * [0.5, 1, 2])))


def kept_by_a_spread_call(x):
    kw = {"scale": x[0]}
    KEEPER.keep(*(x,), **kw)
    return KEEPER.kept * 2.0


def _keep_with(fn, x):
    fn(x, scale=x[1])


def kept_by_a_handed_method(x):
    _keep_with(KEEPER.keep, x)
    return KEEPER.kept * 2.0


def kept_by_a_call_whose_result_is_used(x):
    t = KEEPER.total(x, scale=x[0] ** 2)
    return t + KEEPER.last


def _line(text):
    with open(HERE, encoding="utf-8") as f:
        return next(k for k, line in enumerate(f, 1) if text in line)


@pytest.mark.parametrize(
    "f, read, column, stored, stored_column",
    [
        (kept_by_a_spread_call, "return KEEPER.kept * 2.0", 12, "self.kept = scale", 9),
        (kept_by_a_handed_method, "return KEEPER.kept * 2.0", 12, "self.kept = scale", 9),
        (kept_by_a_call_whose_result_is_used, "return t + KEEPER.last", 16, "self.last = s", 9),
    ],
)
def test_a_kept_keyword_read_back_is_refused_golden(f, read, column, stored, stored_column):
    with pytest.raises(UnsupportedCallError) as refused:
        pullback.grad(f)(X)
    lines = [k for k, line in enumerate(open(HERE, encoding="utf-8"), 1) if read in line]
    line = next(k for k in lines if k > f.__code__.co_firstlineno)
    assert str(refused.value) == (
        f"{HERE}:{line}:{column}: this reads back a value that carries a gradient, which "
        f"{HERE}:{_line(stored)}:{stored_column} stored outside the differentiated variables "
        "(on an object or in a list the function did not build): its gradient would be lost "
        "here.\n"
        "Fix: return the value from the function that computes it (or pass it on as an "
        "argument) and use that, instead of reading it back from the object or container "
        "(see docs/limitations.md#PB107)."
    )


def kept_fixed(x):
    # the fix: the value returned, not read back from the object
    return KEEPER.total(x, scale=x[0] ** 2) + x[0] ** 2


def test_the_fix_differentiates():
    g = pullback.grad(kept_fixed)(X)
    np.testing.assert_allclose(
        g, [np.sum(X) * 2 * X[0] + X[0] ** 2 + 2 * X[0], X[0] ** 2, X[0] ** 2]
    )
