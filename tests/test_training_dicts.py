"""Training code as courses write it: parameters and gradients in dicts, unrolled optimiser
steps differentiated wrt the initial weights and wrt the learning rate (a hypergradient).

* ``for k in params: params[k] = params[k] - lr * grads[k]`` (and ``params.keys()``,
  ``for k, v in params.items(): params[k] = v - ...``) on a dict the function made
  (``dict(params)``, ``{k: v.copy() ...}``): the loop replaces only the value at the key it
  visits, so its iteration sees nothing of its own changes (transform/key_loops.py) and the
  stores are differentiated as the changes of a local dict. A loop that stores at another
  key stays refused (PB106, golden).
* ``params[k] -= ...`` on an array item changes that array in place (which the copied dict
  shares with the caller's, after ``dict(params)``): refused when it runs, with the fix
  ``params[k] = params[k] - ...``, which differentiates (tested).
* CS231n's ``sgd_momentum(w, dw, config=None)`` changes the caller's ``config`` (the velocity,
  which carries a gradient) and the caller reads it back in its next step: refused (golden),
  with a fix that allows ``config`` to be None and differentiates (tested): the update rule's
  first line ``config = {} if config is None else dict(config)``.
"""

from __future__ import annotations

import numpy as np
import pytest
from fd import check_grad, check_hvp, check_jvp

import pullback
from pullback.check import check
from pullback.check.cli import main
from pullback.errors import UnsupportedCallError

DTYPES = [np.float64, np.float32]
RNG = np.random.default_rng(7)
X = RNG.standard_normal((5, 3)) * 0.5
W0 = RNG.standard_normal((3, 2)) * 0.4
B0 = np.array([0.1, -0.2])
T = RNG.standard_normal((5, 2)) * 0.3


def loss_and_grads(params, x, t):
    """A one-layer tanh regression's loss and its gradients written by hand (a course's
    ``model.loss``): a dict of new arrays."""
    h = np.tanh(x @ params["W"] + params["b"])
    r = h - t
    dz = 2.0 * r * (1.0 - h**2) / x.shape[0]
    grads = {"W": x.T @ dz, "b": dz.sum(axis=0)}
    return np.mean(np.sum(r**2, axis=1)), grads


def sgd_keys(params, x, t, lr):
    params = dict(params)
    for _ in range(3):
        _, grads = loss_and_grads(params, x, t)
        for k in params:
            params[k] = params[k] - lr * grads[k]
    return loss_and_grads(params, x, t)[0]


def sgd_items(params, x, t, lr):
    params = {k: v.copy() for k, v in params.items()}
    for _ in range(3):
        _, grads = loss_and_grads(params, x, t)
        for k, v in params.items():
            params[k] = v - lr * grads[k]
    return loss_and_grads(params, x, t)[0]


def momentum_keys(params, x, t, lr):
    params = dict(params)
    velocity = {k: np.zeros_like(v) for k, v in params.items()}
    for _ in range(3):
        _, grads = loss_and_grads(params, x, t)
        for k in params.keys():
            velocity[k] = 0.9 * velocity[k] - lr * grads[k]
            params[k] = params[k] + velocity[k]
    return loss_and_grads(params, x, t)[0]


def of_weights(w, b, x, t):
    return sgd_items({"W": w, "b": b}, x, t, 0.3)


def plain_params(dtype):
    return {"W": W0.astype(dtype), "b": B0.astype(dtype)}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("step", [sgd_keys, sgd_items, momentum_keys])
def test_unrolled_steps_wrt_weights_and_learning_rate(step, dtype):
    params = plain_params(dtype)
    check_grad(step, params, X.astype(dtype), T.astype(dtype), dtype(0.3), wrt=(0, 3))


def test_the_callers_dict_keeps_what_python_leaves_in_it():
    got, want = plain_params(np.float64), plain_params(np.float64)
    before = {k: v.copy() for k, v in got.items()}
    pullback.grad(sgd_keys)(got, X, T, 0.3)
    sgd_keys(want, X, T, 0.3)
    assert got.keys() == want.keys() == before.keys()
    for k in got:
        np.testing.assert_array_equal(got[k], want[k])
        np.testing.assert_array_equal(got[k], before[k])


def test_second_order_and_forward_mode():
    v = np.linspace(-1.0, 1.0, W0.size).reshape(W0.shape)
    check_hvp(lambda w: of_weights(w, B0, X, T), W0, v, rtol=1e-5)
    check_jvp(lambda w: of_weights(w, B0, X, T), (W0,), (v,))
    check_jvp(lambda lr: sgd_keys(plain_params(np.float64), X, T, lr), (0.3,), (1.0,))


def in_place_items(params, x, t, lr):
    params = dict(params)
    for _ in range(2):
        _, grads = loss_and_grads(params, x, t)
        for k in params:
            params[k] -= lr * grads[k]
    return loss_and_grads(params, x, t)[0]


def in_place_items_fixed(params, x, t, lr):
    params = dict(params)
    for _ in range(2):
        _, grads = loss_and_grads(params, x, t)
        for k in params:
            params[k] = params[k] - lr * grads[k]
    return loss_and_grads(params, x, t)[0]


def test_an_array_item_changed_in_place_is_refused_with_a_fix_that_works():
    with pytest.raises(UnsupportedCallError) as e:
        pullback.grad(in_place_items)(plain_params(np.float64), X, T, 0.3)
    message = str(e.value)
    assert "test_training_dicts.py:" in message and "params[k] -= lr * grads[k]" in message
    assert "Fix: write the new value out, `l[i] = l[i] + v`" in message
    check_grad(in_place_items_fixed, plain_params(np.float64), X, T, 0.3, wrt=(0, 3))


def stores_at_another_key(params, x, t, lr):
    params = dict(params)
    _, grads = loss_and_grads(params, x, t)
    for k in params:
        params["b"] = params[k].sum(axis=0) - lr * grads["b"]
    return loss_and_grads(params, x, t)[0]


def test_a_loop_that_stores_at_another_key_stays_refused():
    with pytest.raises(pullback.PullbackError) as e:
        pullback.grad(stores_at_another_key)(plain_params(np.float64), X, T, 0.3)
    message = str(e.value)
    assert "PB106 container mutation: 'params[\"b\"] = ...' changes 'params' in place" in message
    assert "'params' is also used on line" in message
    assert "Fix: copy it where it is shared (`params` -> `dict(params)`)" in message


# -- CS231n optim.py: update rules keeping their state in a config dict --------------------
def sgd_momentum(w, dw, config=None):
    if config is None:
        config = {}
    config.setdefault("learning_rate", 1e-2)
    config.setdefault("momentum", 0.9)
    v = config.get("velocity", np.zeros_like(w))
    v = config["momentum"] * v - config["learning_rate"] * dw
    next_w = w + v
    config["velocity"] = v
    return next_w, config


def sgd_momentum_fixed(w, dw, config=None):
    config = {} if config is None else dict(config)
    config.setdefault("learning_rate", 1e-2)
    config.setdefault("momentum", 0.9)
    v = config.get("velocity", np.zeros_like(w))
    v = config["momentum"] * v - config["learning_rate"] * dw
    next_w = w + v
    config["velocity"] = v
    return next_w, config


def sgd_momentum_branches(w, dw, config=None):
    if config is None:
        config = {}
    else:
        config = dict(config)  # the fix written as branches: each binds a new dict
    config.setdefault("learning_rate", 1e-2)
    v = 0.9 * config.get("velocity", np.zeros_like(w)) - config["learning_rate"] * dw
    config["velocity"] = v
    return w + v, config


def adam_fixed(w, dw, config=None):
    config = {} if config is None else dict(config)
    config.setdefault("learning_rate", 1e-3)
    config.setdefault("beta1", 0.9)
    config.setdefault("beta2", 0.999)
    config.setdefault("epsilon", 1e-8)
    config.setdefault("m", np.zeros_like(w))
    config.setdefault("v", np.zeros_like(w))
    config.setdefault("t", 0)
    config["t"] += 1
    config["m"] = config["beta1"] * config["m"] + (1 - config["beta1"]) * dw
    config["v"] = config["beta2"] * config["v"] + (1 - config["beta2"]) * dw**2
    mb = config["m"] / (1 - config["beta1"] ** config["t"])
    vb = config["v"] / (1 - config["beta2"] ** config["t"])
    next_w = w - config["learning_rate"] * mb / (np.sqrt(vb) + config["epsilon"])
    return next_w, config


def gradient_of(w, x, t):
    h = np.tanh(x @ w)
    return x.T @ (2.0 * (h - t) * (1.0 - h**2)) / x.shape[0]


def train_momentum(w, x, t):
    config = None
    for _ in range(3):
        w, config = sgd_momentum(w, gradient_of(w, x, t), config)
    return np.sum((np.tanh(x @ w) - t) ** 2)


def train_momentum_fixed(w, x, t):
    config = None
    for _ in range(3):
        w, config = sgd_momentum_fixed(w, gradient_of(w, x, t), config)
    return np.sum((np.tanh(x @ w) - t) ** 2)


def train_momentum_branches(w, x, t):
    config = None
    for _ in range(3):
        w, config = sgd_momentum_branches(w, gradient_of(w, x, t), config)
    return np.sum((np.tanh(x @ w) - t) ** 2)


def train_adam_lr(w, x, t, lr):
    config = {"learning_rate": lr}
    for _ in range(3):
        w, config = adam_fixed(w, gradient_of(w, x, t), config)
    return np.sum((np.tanh(x @ w) - t) ** 2)


def test_an_update_rule_changing_the_callers_config_is_refused_with_a_fix_that_works():
    with pytest.raises(pullback.PullbackError) as e:
        pullback.grad(train_momentum)(W0, X, T)
    message = str(e.value)
    assert (
        "PB101 array mutation: 'sgd_momentum' writes into its parameter 'config', which "
        "this call passes 'config'" in message
    )
    fix = "config = {} if config is None else dict(config)"
    assert (
        f"Fix: let 'sgd_momentum' change a dict of its own: make `{fix}` its first line and "
        "return 'config', and use what it returns (`..., config = sgd_momentum(...)`)"
    ) in message
    assert "PB106 container mutation: 'config[\"velocity\"] = ...' changes 'config'" in message
    assert f"Fix: make it the function's own dict in its first line: `{fix}`" in message
    assert "config.copy()" not in message  # fails on None
    # the fix, applied, differentiates; the caller's config is the caller's own
    w = W0[:, :1] * 1.0
    check_grad(train_momentum_fixed, w, X, T[:, :1])
    check_grad(train_momentum_branches, w, X, T[:, :1])


@pytest.mark.parametrize("dtype", DTYPES)
def test_adam_steps_wrt_weights_and_learning_rate(dtype):
    w = (W0[:, :1] * 1.0).astype(dtype)
    args = (w, X.astype(dtype), T[:, :1].astype(dtype), dtype(0.05))
    check_grad(train_adam_lr, *args, wrt=(0, 3))
    v = np.linspace(-1.0, 1.0, w.size).reshape(w.shape)
    if dtype is np.float64:
        check_hvp(lambda w: train_adam_lr(w, *args[1:]), args[0], v, rtol=1e-5)


def list_loop(x):
    l = [x[0], x[1], x[2]]
    for v in l:  # a list's loop reads the values it stores: l[0] changes what it visits
        l[0] = l[0] + v
    return l[0]


def key_bound_anew(x):
    d = {"a": x[0], "b": x[1]}
    for k in d:
        k = "a"
        d[k] = d[k] * 2.0
    return d["a"] + d["b"]


def values_loop(x):
    d = {"a": x[0], "b": x[1]}
    for v in d.values():
        d["a"] = d["a"] + v
    return d["a"]


@pytest.mark.parametrize("fn", [list_loop, key_bound_anew, values_loop])
def test_loops_that_may_see_their_own_changes_stay_refused(fn):
    assert [d.code for d in check(fn)] == ["PB106"]


def test_pullback_check_agrees_without_running_the_file(capsys):
    # the static check reads loss_and_grads from the file: it keeps nothing of `params`;
    # gradient_of's `x.T @ ...` resolved in a parsed file no longer fails (resolve.py)
    path = __file__
    names = ["sgd_keys", "sgd_items", "momentum_keys", "train_adam_lr", "stores_at_another_key"]
    code = main([f"{path}:{name}" for name in names] + ["--quiet"])
    out = capsys.readouterr().out
    assert code == 1
    assert [line.split(": ")[1].split()[0] for line in out.splitlines()] == ["PB106"]
    assert f"{path}:" in out and "'params[\"b\"] = ...' changes 'params' in place" in out
