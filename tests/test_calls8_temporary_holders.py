"""An object built around a local dict for one method call, ``TwoLayerNet(params).loss(X,
y)``, in an optimiser's loop that then changes ``params``: the object holds the dict only
for that statement (its ``__init__`` stores it, its method reads its items, neither hands
the object or the dict on), so the change after it is the rebinding the container rewrite
makes, and the unrolled training differentiates (transform/temporary_holders.py; it was
PB106). An object bound to a name and kept past the change (``model = TwoLayerNet(params)``)
stays refused, with the copy as the fix; so does a class whose method hands ``self`` on."""

from __future__ import annotations

import numpy as np
import pytest
from fd import form_tests

import pullback
from pullback.errors import UnsupportedSyntaxError

_R = np.random.default_rng(5)
XD = _R.normal(size=(4, 3))
YD = _R.normal(size=(4, 1))
KEEP: list = []


class TinyNet:
    def __init__(self, params, reg=0.1):
        self.params = params
        self.reg = reg

    def loss(self, X, y):
        W1, W2 = self.params["W1"], self.params["W2"]
        h = np.tanh(X @ W1)
        ds = h @ W2 - y
        loss = 0.5 * np.sum(ds**2) + self.reg * np.sum(W1 * W1)
        grads = {"W2": h.T @ ds, "W1": X.T @ ((ds @ W2.T) * (1 - h**2)) + 2 * self.reg * W1}
        return loss, grads


class LeakyNet(TinyNet):
    def loss(self, X, y):
        KEEP.append(self)  # hands the object on: it outlives the statement
        return np.sum(self.params["W1"]), {"W1": X.T @ X @ self.params["W1"]}


def _params(x):
    return {"W1": np.outer(x, np.array([1.0, -0.5])), "W2": x[:2, None] * 1.0}


def unrolled_training(x):
    params = _params(x)
    total = 0.0
    for _ in range(2):
        loss, grads = TinyNet(params).loss(XD, YD)
        total = total + loss
        for k in params:
            params[k] = params[k] - 0.05 * grads[k]
    return total + np.sum(params["W1"] ** 2)


def unrolled_training_keywords(x):
    params = _params(x)
    for step in range(2):
        loss, grads = TinyNet(params=params, reg=0.05 * (step + 1)).loss(XD, YD)
        params["W1"] = params["W1"] - 0.1 * grads["W1"]
    return loss


FORMS = [unrolled_training, unrolled_training_keywords]
X = np.array([0.3, -0.7, 0.45])

test_gradient_float64, test_gradient_float32, test_hessian, test_jvp = form_tests(
    FORMS, X, np.array([0.2, 0.5, -0.9])
)


def named_model(x):
    params = _params(x)
    for _ in range(2):
        model = TinyNet(params)
        loss, grads = model.loss(XD, YD)
        params["W1"] = params["W1"] - 0.1 * grads["W1"]
    return loss


def named_model_fixed(x):
    params = _params(x)
    for _ in range(2):
        model = TinyNet(dict(params))
        loss, grads = model.loss(XD, YD)
        params["W1"] = params["W1"] - 0.1 * grads["W1"]
    return loss


def leaky(x):
    params = _params(x)
    for _ in range(2):
        loss, grads = LeakyNet(params).loss(XD, YD)
        params["W1"] = params["W1"] - 0.1 * grads["W1"]
    return loss


def _line(fn, text):
    lines, first = __import__("inspect").getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("f, held", [(named_model, "params"), (leaky, "params")])
def test_an_object_kept_past_the_change_stays_refused_golden(f, held):
    with pytest.raises(UnsupportedSyntaxError) as refused:
        pullback.grad(f)(X)
    line = _line(f, 'params["W1"] =')
    use = _line(f, "Net(params")
    assert str(refused.value) == (
        f"cannot differentiate '{f.__name__}' — 1 unsupported construct\n\n"
        f"  {__file__}:{line}:9: PB106 container mutation: 'params[\"W1\"] = ...' changes "
        "'params' in place\n"
        '        params["W1"] = params["W1"] - 0.1 * grads["W1"]\n'
        "        ^^^^^^^^^^^^\n"
        f"    'params' is also used on line {use} in a way that lets another name, a "
        "container or a call hold the same object (or a loop iterate over it) while it still "
        "changes, and pullback does not follow that sharing.\n"
        f"    Fix: copy it where it is shared (`{held}` -> `dict({held})`), or make that use "
        "come after the last change (see docs/limitations.md#PB106)."
    )


def test_the_copy_fix_differentiates():
    from fd import central_jacobian

    g = pullback.grad(named_model_fixed)(X)
    np.testing.assert_allclose(g, central_jacobian(named_model_fixed, X), rtol=1e-6, atol=1e-8)
