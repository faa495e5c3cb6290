"""A course's two-layer net keeping its weights in ``self.params`` and returning ``loss,
grads`` from ``model.loss``: the gradients dict is the caller's to change once copied
(``grads = dict(grads)`` at the top level makes a name bound by a call a local dict,
transform/list_analysis.py), and ``grads[k] = grads[k] + reg * W`` then differentiates (a
gradient-norm penalty, wrt the inputs and the weights). Written as ``grads[k] += ...`` on a
name not known to be a dict, it is refused (PB102) with that fix first; an item store into
``model.params`` (``model.params[k] = ...``) is refused (PB107) with the fix of storing a new
dict in the attribute, which differentiates (tested, applied)."""

from __future__ import annotations

import numpy as np
import pytest
from fd import check_grad, check_hvp

import pullback

DTYPES = [np.float64, np.float32]
RNG = np.random.default_rng(3)
X = RNG.standard_normal((5, 3))
Y = RNG.standard_normal((5, 2))
P = {
    "W1": RNG.standard_normal((3, 4)) * 0.5,
    "b1": np.linspace(-0.1, 0.1, 4),
    "W2": RNG.standard_normal((4, 2)) * 0.5,
    "b2": np.zeros(2),
}


class TwoLayerNet:
    def __init__(self, params, reg=0.1):
        self.params = params
        self.reg = reg

    def loss(self, x, y):
        W1, b1 = self.params["W1"], self.params["b1"]
        W2, b2 = self.params["W2"], self.params["b2"]
        h = np.tanh(x @ W1 + b1)
        s = h @ W2 + b2
        n = x.shape[0]
        loss = 0.5 * np.sum((s - y) ** 2) / n
        ds = (s - y) / n
        grads = {}
        grads["W2"] = h.T @ ds
        grads["b2"] = ds.sum(axis=0)
        dz = (ds @ W2.T) * (1 - h**2)
        grads["W1"] = x.T @ dz
        grads["b1"] = dz.sum(axis=0)
        return loss, grads


def penalised(params, x, y):
    model = TwoLayerNet(params)
    loss, grads = model.loss(x, y)
    grads = dict(grads)
    for k in ("W1", "W2"):
        grads[k] = grads[k] + model.reg * model.params[k]
        loss = loss + 0.5 * model.reg * np.sum(model.params[k] ** 2)
    return loss + np.sum(grads["W1"] ** 2) + np.sum(grads["W2"] ** 2)


def penalised_in_place(params, x, y):
    model = TwoLayerNet(params)
    loss, grads = model.loss(x, y)
    for k in ("W1", "W2"):
        grads[k] += model.reg * model.params[k]
    return loss + np.sum(grads["W1"] ** 2)


def of_first_layer(w1, x, y):
    return penalised({"W1": w1, "b1": P["b1"], "W2": P["W2"], "b2": P["b2"]}, x, y)


def params_of(dtype):
    return {k: v.astype(dtype) for k, v in P.items()}


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_gradient_penalty_on_the_grads_a_model_returns(dtype):
    check_grad(penalised, params_of(dtype), X.astype(dtype), Y.astype(dtype), wrt=(0, 1))


def test_second_order():
    v = np.linspace(-1.0, 1.0, P["W1"].size).reshape(P["W1"].shape)
    check_hvp(lambda w: of_first_layer(w, X, Y), P["W1"], v, rtol=1e-5)


def test_the_callers_dicts_keep_what_python_leaves_in_them():
    got, want = params_of(np.float64), params_of(np.float64)
    pullback.grad(penalised)(got, X, Y)
    penalised(want, X, Y)
    assert got.keys() == want.keys()
    for k in got:
        np.testing.assert_array_equal(got[k], want[k])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_an_augmented_store_into_the_dict_a_callee_built_is_differentiated(dtype):
    # the callee builds ``grads`` and keeps no other name for it: the caller's own dict
    # (transform/returned_containers.py); refused until stop 34 with `grads = dict(grads)`
    args = (params_of(dtype), X.astype(dtype), Y.astype(dtype))
    check_grad(penalised_in_place, *args, wrt=(0, 1))


def train(params, x, y, lr):
    model = TwoLayerNet(dict(params))
    for _ in range(2):
        _, grads = model.loss(x, y)
        for k in model.params:
            model.params[k] = model.params[k] - lr * grads[k]
    return model.loss(x, y)[0]


def train_fixed(params, x, y, lr):
    model = TwoLayerNet(dict(params))
    for _ in range(2):
        _, grads = model.loss(x, y)
        new = dict(model.params)
        for k in new:
            new[k] = new[k] - lr * grads[k]
        model.params = new
    return model.loss(x, y)[0]


def test_an_item_store_into_a_models_params_is_refused_with_a_fix_that_works():
    with pytest.raises(pullback.PullbackError) as e:
        pullback.grad(train)(params_of(np.float64), X, Y, 0.1)
    message = str(e.value)
    assert "PB107 attribute assignment: 'model.params' would store a differentiated" in message
    assert "model.params[k] = model.params[k] - lr * grads[k]" in message
    assert (
        "Fix: on an object this function builds, store a new container in the attribute "
        "instead of changing the one it holds: `params = dict(model.params)` (or "
        "`list(...)`), `params[k] = ...`, `model.params = params`;" in message
    )
    check_grad(train_fixed, params_of(np.float64), X, Y, 0.1, wrt=(0, 3))
