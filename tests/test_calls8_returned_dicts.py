"""A dict (or list) a user function builds and returns is its caller's own
(transform/returned_containers.py): ``loss, grads = model.loss(X, y)`` then
``grads[k] += reg * W`` or ``grads[k] = grads[k] * 2`` changes it as a local dict, with
exact gradients (it was PB102, or needed ``grads = dict(grads)``). The callee is a global
function or a method of an object of a user class the caller makes (also the temporary
``TinyNet(p).loss(X, y)``). Where the callee keeps the dict too (``self.last = grads``),
the change stays refused before running."""

from __future__ import annotations

import numpy as np
import pytest
from fd import central_jacobian, form_tests

import pullback
from pullback.errors import UnsupportedSyntaxError

_R = np.random.default_rng(3)
XD = _R.normal(size=(4, 3))
YD = _R.normal(size=(4, 1))


class TinyNet:
    def __init__(self, params):
        self.params = params

    def loss(self, X, y=None):
        W1, W2 = self.params["W1"], self.params["W2"]
        h = np.tanh(X @ W1)
        s = h @ W2
        if y is None:
            return s
        ds = s - y
        loss = 0.5 * np.sum(ds**2)
        grads = {}
        grads["W2"] = h.T @ ds
        grads["W1"] = X.T @ ((ds @ W2.T) * (1 - h**2))
        return loss, grads


class KeepingNet(TinyNet):
    def loss(self, X, y=None):
        W1 = self.params["W1"]
        grads = {"W1": X.T @ np.tanh(X @ W1)}
        self.last = grads
        return np.sum(W1**2), grads


def _params(x):
    return {"W1": np.outer(x, np.array([1.0, -0.5])), "W2": x[:2, None] * 1.0}


def tiny_loss_and_grads(W1, W2):
    g = {"W1": np.sin(W1), "W2": W2 * W2}
    return np.sum(W1 @ W2.T), g


def augmented_after_a_method(x):
    params = _params(x)
    model = TinyNet(params)
    loss, grads = model.loss(XD, YD)
    for k in grads:
        grads[k] += 0.1 * params[k]
    return loss + np.sum(grads["W1"] ** 2) + np.sum(grads["W2"] ** 2)


def written_out_after_a_temporary(x):
    loss, grads = TinyNet(_params(x)).loss(XD, YD)
    grads["W1"] = grads["W1"] * x[0]
    return loss * np.sum(grads["W1"])


def augmented_after_a_function(x):
    p = _params(x)
    loss, grads = tiny_loss_and_grads(p["W1"], p["W2"][:2].T)
    grads["W1"] -= p["W1"] * loss
    grads["W2"] *= 2.0
    return np.sum(grads["W1"] * grads["W1"]) + np.sum(grads["W2"])


FORMS = [augmented_after_a_method, written_out_after_a_temporary, augmented_after_a_function]
X = np.array([0.3, -0.7, 0.45])

test_gradient_float64, test_gradient_float32, test_hessian, test_jvp = form_tests(
    FORMS, X, np.array([0.2, 0.5, -0.9])
)


def kept_by_the_callee(x):
    model = KeepingNet(_params(x))
    loss, grads = model.loss(XD, YD)
    grads["W1"] = grads["W1"] * 2.0
    return loss + np.sum(grads["W1"])


def kept_by_the_callee_fixed(x):
    model = KeepingNet(_params(x))
    loss, grads = model.loss(XD, YD)
    grads = dict(grads)
    grads["W1"] = grads["W1"] * 2.0
    return loss + np.sum(grads["W1"])


def _line(fn, text):
    lines, first = __import__("inspect").getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if text in line)


def test_a_dict_the_callee_keeps_stays_refused_golden():
    with pytest.raises(UnsupportedSyntaxError) as refused:
        pullback.grad(kept_by_the_callee)(X)
    line = _line(kept_by_the_callee, 'grads["W1"] =')
    assert str(refused.value) == (
        "cannot differentiate 'kept_by_the_callee' — 1 unsupported construct\n\n"
        f"  {__file__}:{line}:5: PB106 container mutation: 'grads[\"W1\"] = ...' changes "
        "'grads' in place\n"
        '        grads["W1"] = grads["W1"] * 2.0\n'
        "        ^^^^^^^^^^^\n"
        "    pullback cannot prove that 'grads' is a dict the function built itself (a "
        "display, a comprehension, list(...), dict(...)) that no other name sees.\n"
        f"    Fix: copy it right after the assignment on line {line - 1}: "
        "`grads = dict(grads)` (see docs/limitations.md#PB106)."
    )
    g = pullback.grad(kept_by_the_callee_fixed)(X)  # the fix, against differences
    np.testing.assert_allclose(g, central_jacobian(kept_by_the_callee_fixed, X), rtol=1e-6)


def test_a_method_replaced_later_builds_the_gradient_again():
    g = pullback.grad(written_out_after_a_temporary)
    first = g(X)
    original = TinyNet.loss
    try:
        TinyNet.loss = KeepingNet.loss
        with pytest.raises(UnsupportedSyntaxError):
            g(X)
    finally:
        TinyNet.loss = original
    np.testing.assert_allclose(g(X), first)
