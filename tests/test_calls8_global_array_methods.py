"""Methods of global arrays inside helpers of the differentiated function: ``W.dot(x)``,
``CFG.W.dot(x)`` (an array reached through an attribute), ``self.W.dot(x)`` of a global
object, ``W.T.dot(y)``, ``W.sum(axis=0) * x``, ``CONST.reshape(2, 3) @ x``, and a method
bound to a global array handed on as a value (``helper(W.dot, x)``, ``f = W.dot;
f(x)``), which was refused when it ran (no rule for the bound ``ndarray.dot``): it is the
call ``W.dot(...)``, by the array's rules, at every order (dynamic_calls.array_method_value)."""

from __future__ import annotations

import numpy as np
from fd import form_tests

W = np.array([[0.5, -1.0, 0.25], [1.5, 0.3, -0.7]])
CONST = np.arange(6.0)


class Cfg:
    pass


CFG = Cfg()
CFG.W = W * 2.0


class Model:
    def __init__(self):
        self.W = W * 0.5

    def f(self, x):
        return self.W.dot(x) + CFG.W.dot(x)


MODEL = Model()


def _dot(x):
    return W.dot(x)


def _transposed(y):
    return W.T.dot(y)


def _summed(x):
    return W.sum(axis=0) * x + np.sum(CONST.reshape(2, 3) @ x)


def _apply(fn, x):
    return fn(x)


def _held(x):
    f = W.dot
    return f(x)


def helper_dots(x):
    return np.sum(_dot(x) ** 2) + np.sum(np.sin(MODEL.f(x)))


def transposed_and_summed(x):
    return np.sum(np.sin(_transposed(x[:2]))) + np.sum(_summed(x) ** 2)


def bound_method_handed_on(x):
    return np.sum(np.tanh(_apply(W.dot, x)))


def bound_method_held(x):
    return np.sum(_held(x) ** 3)


FORMS = [helper_dots, transposed_and_summed, bound_method_handed_on, bound_method_held]
X = np.array([0.3, -0.7, 0.45])

test_gradient_float64, test_gradient_float32, test_hessian, test_jvp = form_tests(
    FORMS, X, np.array([0.2, 0.5, -0.9])
)
