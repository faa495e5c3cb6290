"""``bn_param["running_mean"] = running_mean``: a course's ``batchnorm_forward`` keeps its
running statistics in the dict its caller passes. The function does not use the dict again
after the store (but to store more items), so no gradient can flow back through the stored
value: the store runs as in the primal, the caller's dict gets the value
(transform/side_effects.kept_parameter_item; check and normalize let it through, the sweep
stores through ``store_item``). Before, it was refused as PB106 with a fix (``bn_param =
dict(bn_param)``) that dropped the caller's update. Read back in the same function, it is
still refused before running; read back by the caller inside the differentiated code, it is
refused when it runs (escapes.py)."""

from __future__ import annotations

import numpy as np
import pytest
from fd import check_grad, check_hvp, check_jvp

import pullback
from pullback.check import check
from pullback.errors import UnsupportedCallError

DTYPES = [np.float64, np.float32]


def batchnorm_forward(x, gamma, beta, bn_param):
    eps = bn_param.get("eps", 1e-5)
    momentum = bn_param.get("momentum", 0.9)
    running_mean = bn_param.get("running_mean", np.zeros(x.shape[1], dtype=x.dtype))
    if bn_param["mode"] == "train":
        mu = x.mean(axis=0)
        out = gamma * (x - mu) / np.sqrt(x.var(axis=0) + eps) + beta
        running_mean = momentum * running_mean + (1 - momentum) * mu
    else:
        out = gamma * (x - running_mean) + beta
    bn_param["running_mean"] = running_mean
    bn_param["calls"] = bn_param.get("calls", 0) + 1
    return out, (x, mu)


def loss_with_own_param(x, gamma):
    out, _ = batchnorm_forward(x, gamma, 0.1, {"mode": "train"})
    return np.sum(out**3)


def loss_with_callers_param(x, gamma, bn_param):
    out, _ = batchnorm_forward(np.tanh(x), gamma, 0.1, bn_param)
    return np.sum(out**3)


class Net:
    def __init__(self, d):
        self.bn_params = [{"mode": "train"} for _ in range(2)]
        self.gamma = np.linspace(0.5, 1.5, d)

    def loss(self, x):
        h = x
        for i in range(2):
            h, _ = batchnorm_forward(np.tanh(h), self.gamma, 0.0, self.bn_params[i])
        return np.sum(h**3)


def loss_of_model(x, net):
    return net.loss(x)


def read_back_here(x, p):
    p["m"] = x.mean(axis=0)
    return np.sum(p["m"] * x)


def read_back_by_the_caller(x, p):
    batchnorm_forward(x, 1.0, 0.0, p)
    return np.sum(p["running_mean"] * x)


def rebound(x, p):
    if p is None:
        p = {}
    p["m"] = x.mean(axis=0)
    return np.sum(x**2)


X = np.array([[0.5, -1.0, 0.3], [1.5, 0.2, -0.7], [-0.3, 0.8, 1.1], [0.9, -0.4, 0.6]])
G = np.array([1.0, 0.5, 2.0])


@pytest.mark.parametrize("dtype", DTYPES)
def test_gradients(dtype):
    x = X.astype(dtype)
    check_grad(loss_with_own_param, x, G.astype(dtype), wrt=(0, 1))
    check_grad(loss_with_callers_param, x, G.astype(dtype), {"mode": "train"}, wrt=(0, 1))
    check_grad(loss_of_model, x, Net(3))


@pytest.mark.parametrize("dtype", DTYPES)
def test_the_callers_dict_gets_what_the_primal_stores(dtype):
    x = X.astype(dtype)
    got, want = {"mode": "train", "momentum": 0.5}, {"mode": "train", "momentum": 0.5}
    pullback.grad(loss_with_callers_param)(x, G, got)
    loss_with_callers_param(x, G, want)
    assert got["calls"] == want["calls"] == 1
    assert got["running_mean"].dtype == want["running_mean"].dtype
    np.testing.assert_array_equal(got["running_mean"], want["running_mean"])
    net = Net(3)
    pullback.grad(loss_of_model)(x, net)
    assert all(p["calls"] == 1 and p["running_mean"].shape == (3,) for p in net.bn_params)


def test_forward_and_second_order():
    v = np.linspace(-1.0, 1.0, X.size).reshape(X.shape)
    check_jvp(lambda x: loss_with_callers_param(x, G, {"mode": "train"}), (X,), (v,))
    check_hvp(lambda x: loss_with_callers_param(x, G, {"mode": "train"}), X, v, rtol=1e-5)
    check_hvp(lambda x: loss_of_model(x, Net(3)), X, v, rtol=1e-5)


def test_the_check_lets_the_store_through():
    assert check(batchnorm_forward) == []


def test_read_back_in_the_function_is_refused_before_running():
    with pytest.raises(pullback.PullbackError) as e:
        pullback.grad(read_back_here)(X, {})
    message = str(e.value)
    assert "PB106" in message and 'p["m"] = x.mean(axis=0)' in message
    assert "Fix: copy it first: write `p = dict(p)`" in message


def test_read_back_by_the_caller_is_refused_where_it_reads():
    with pytest.raises(UnsupportedCallError) as e:
        pullback.grad(read_back_by_the_caller)(X, {"mode": "train"})
    message = str(e.value)
    assert "test_parameter_dict_stores.py" in message and "reads back a value" in message
    assert "PB107" in message


def test_a_parameter_the_function_rebinds_is_still_refused():
    assert [d.code for d in check(rebound)] == ["PB106"]
