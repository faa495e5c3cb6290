"""State written on objects that no gradient reads back in the call: it runs, once, as in
the primal. A batch norm's running mean in training mode (read in the other branch only),
a cache on ``self`` or on an object passed in, a counter, a history of losses: after
``grad``, ``vjp``, ``jvp``, ``hvp`` and ``hessian`` the object holds what Python stores (a
plain ndarray or float, the primal's value), updated once per call. A stored value that
the call reads back, and a second derivative whose recompute would read a state the call
changed, are refused with the line and a fix.
"""

from __future__ import annotations

import numpy as np
import pytest
from fd import central_jacobian, check_grad, check_hvp, check_jvp

import pullback
from pullback.errors import UnsupportedCallError

RNG = np.random.default_rng(7)
X0 = RNG.standard_normal((5, 3))
V0 = RNG.standard_normal((5, 3))


class BatchNorm:
    def __init__(self, n, momentum=0.9):
        self.gamma = np.ones(n)
        self.running_mean = np.zeros(n)
        self.momentum = momentum
        self.updates = 0
        self.cache = {}
        self.history = []

    def forward(self, X, training=True):
        if training:
            mu = X.mean(axis=0)
            self.running_mean = self.momentum * self.running_mean + (1 - self.momentum) * mu
            self.updates += 1
            self.cache["X"] = X
        else:
            mu = self.running_mean
        out = self.gamma * (X - mu) / np.sqrt(X.var(axis=0) + 1e-5)
        loss = np.sum(out**3)
        self.history.append(loss)
        return loss


MADE = []


def fresh_norm(X):
    bn = BatchNorm(X.shape[1])
    MADE.append(bn)
    return bn.forward(X)


SHARED = BatchNorm(3)


def shared_norm(X):
    return SHARED.forward(X)


def through_argument(X, bn):
    return bn.forward(X) * 2.0


def _primal_state(X, calls=1):
    bn = BatchNorm(X.shape[1])
    for _ in range(calls):
        bn.forward(X)
    return bn


def _assert_state(bn, X, calls=1):
    want = _primal_state(X, calls)
    assert type(bn.running_mean) is np.ndarray
    np.testing.assert_allclose(bn.running_mean, want.running_mean, rtol=1e-6)
    assert bn.updates == calls and len(bn.history) == calls
    assert all(type(h) in (float, np.float64, np.float32) for h in bn.history)
    np.testing.assert_allclose(bn.history, want.history, rtol=1e-5)
    assert type(bn.cache["X"]) is np.ndarray and bn.cache["X"] is not None


def _along(X):
    return np.resize(V0.ravel(), X.shape).astype(X.dtype)


DERIVATIVES = {
    "grad": lambda f, X: pullback.grad(f)(X),
    "vjp": lambda f, X: pullback.vjp(f, X)[1](1.0),
    "jvp": lambda f, X: pullback.jvp(f, (X,), (_along(X),)),
    "hvp": lambda f, X: pullback.hvp(f)(X, _along(X)),
    "hessian": lambda f, X: pullback.hessian(f)(X),
    "grad of grad": lambda f, X: pullback.jacobian(pullback.grad(f))(X),
}


@pytest.mark.parametrize("how", sorted(DERIVATIVES))
def test_a_norm_made_inside_is_updated_once_per_call(how):
    MADE.clear()
    DERIVATIVES[how](fresh_norm, X0)
    assert len(MADE) == 1
    _assert_state(MADE[0], X0)


@pytest.mark.parametrize("how", sorted(DERIVATIVES))
def test_a_shared_norm_is_updated_once_per_call_and_again_on_the_next(how):
    SHARED.__init__(3)
    DERIVATIVES[how](shared_norm, X0)
    _assert_state(SHARED, X0)
    DERIVATIVES[how](shared_norm, X0)  # the state of the first call is a constant now
    _assert_state(SHARED, X0, calls=2)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_training_mode_gradients_against_differences(dtype):
    X = X0.astype(dtype)
    check_grad(fresh_norm, X)
    check_grad(shared_norm, X)
    check_grad(lambda X: through_argument(X, BatchNorm(3)), X)


def test_training_mode_second_order_against_differences():
    x = X0.ravel()

    def flat(v):
        return fresh_norm(v.reshape(5, 3))

    check_jvp(flat, (x,), (V0.ravel(),))
    check_hvp(flat, x, V0.ravel())
    np.testing.assert_allclose(
        pullback.hessian(flat)(x),
        central_jacobian(pullback.grad(flat), x, 1e-5),
        rtol=1e-5,
        atol=1e-6,
    )


def test_evaluation_mode_reads_the_running_mean_as_a_constant():
    bn = BatchNorm(3)
    bn.running_mean = np.array([0.1, -0.2, 0.3])

    def evaluate(X):
        return bn.forward(X, training=False)

    check_grad(evaluate, X0)
    check_hvp(lambda v: evaluate(v.reshape(5, 3)), X0.ravel(), V0.ravel())
    assert bn.updates == 0


class Model:
    """A model keeping its logits in a dict and its last output as an attribute."""

    def __init__(self, theta):
        self.theta, self.cache, self.last = theta, {}, None

    def predict(self, X):
        z = X @ self.theta
        self.cache["z"] = z
        out = np.tanh(z)
        self.last = out
        return out


def cache_on_a_model_made_inside(theta):
    m = Model(theta)
    MADE.append(m)
    return np.sum(m.predict(X0) ** 2)


class Store:
    def __init__(self):
        self.cache = {}
        self.calls = 0


STORE = Store()


def cache_on_an_object_passed_in(x, store):
    y = np.sin(x) * 2.0
    store.cache["y"] = y
    store.calls += 1
    return np.sum(y**2)


@pytest.mark.parametrize("how", sorted(DERIVATIVES))
def test_caches_hold_the_primal_value(how):
    theta = np.array([0.2, -0.1, 0.4])
    MADE.clear()
    DERIVATIVES[how](cache_on_a_model_made_inside, theta)
    assert type(MADE[-1].cache["z"]) is np.ndarray and type(MADE[-1].last) is np.ndarray
    np.testing.assert_allclose(MADE[-1].cache["z"], X0 @ theta)
    np.testing.assert_allclose(MADE[-1].last, np.tanh(X0 @ theta))
    STORE.__init__()
    x = np.array([0.3, -0.7, 1.2])
    DERIVATIVES[how](lambda v: cache_on_an_object_passed_in(v, STORE), x)
    assert STORE.calls == 1
    assert type(STORE.cache["y"]) is np.ndarray
    np.testing.assert_allclose(STORE.cache["y"], np.sin(x) * 2.0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_caches_gradients_against_differences(dtype):
    theta = np.array([0.2, -0.1, 0.4], dtype=dtype)
    check_grad(cache_on_a_model_made_inside, theta)
    check_grad(lambda v: cache_on_an_object_passed_in(v, Store()), theta)
    check_hvp(cache_on_a_model_made_inside, theta.astype(np.float64), np.ones(3))


class Layer:
    """A layer called as an object, keeping its output and a count of its calls."""

    def __init__(self, W):
        self.W, self.calls, self.out = W, 0, None

    def __call__(self, x):
        self.calls += 1
        y = np.tanh(x @ self.W)
        self.out = y
        return y


LAYER = Layer(RNG.standard_normal((3, 2)))


def through_a_layer(x):
    return np.sum(LAYER(x) ** 2)


@pytest.mark.parametrize("how", sorted(DERIVATIVES))
def test_a_layer_called_as_an_object_keeps_its_output_once(how):
    x = np.array([0.3, -0.7, 1.2])
    LAYER.calls, LAYER.out = 0, None
    DERIVATIVES[how](through_a_layer, x)
    assert LAYER.calls == 1
    assert type(LAYER.out) is np.ndarray
    np.testing.assert_allclose(LAYER.out, np.tanh(x @ LAYER.W))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_layer_called_as_an_object_against_differences(dtype):
    check_grad(through_a_layer, np.array([0.3, -0.7, 1.2], dtype=dtype))
    check_hvp(through_a_layer, np.array([0.3, -0.7, 1.2]), np.array([1.0, 0.5, -2.0]))


# -- refused: the stored value is read back, or a recompute would read a changed state ---


class ReadsItsMean(BatchNorm):
    def forward(self, X, training=True):
        self.running_mean = 0.9 * self.running_mean + 0.1 * X.mean(axis=0)
        return np.sum(self.running_mean * X)


class LoopedMean(BatchNorm):
    def forward(self, X, training=True):
        total = 0.0
        for k in range(2):
            if k == 1:
                total = total + np.sum(self.running_mean)
            else:
                self.running_mean = X.mean(axis=0)
        return total + np.sum(X**2)


@pytest.mark.parametrize("cls", [ReadsItsMean, LoopedMean])
def test_a_store_read_back_in_the_call_is_refused(cls):
    bn = cls(3)
    with pytest.raises(pullback.UnsupportedSyntaxError) as e:
        pullback.grad(lambda X: bn.forward(X))(X0)
    text = str(e.value)
    assert "PB107 attribute assignment: 'self.running_mean' would store a differentiated" in text
    assert "Fix: keep the value in a local variable (`running_mean = ...`)" in text


class Counter:
    def __init__(self):
        self.n = 1.0

    def step(self, x):
        y = x**3 * self.n
        self.n = self.n + 1.0
        return y


COUNTER = Counter()


def counted(x):
    return COUNTER.step(x)


def test_a_counter_read_by_the_call_differentiates_first_order():
    COUNTER.n = 1.0
    assert pullback.grad(counted)(2.0) == pytest.approx(12.0)
    assert COUNTER.n == 2.0


def test_a_second_derivative_that_would_recompute_a_changed_counter_is_refused():
    COUNTER.n = 1.0
    with pytest.raises(UnsupportedCallError) as e:
        pullback.hessian(counted)(2.0)
    assert str(e.value) == (
        f"{__file__}:{Counter.step.__code__.co_firstlineno + 1}: PB107 this reads 'n' of a "
        "Counter, which the function also changes: a second derivative pulls back through a "
        "recompute of the call, which would read 'n' as the call left it, not as the call "
        "read it, and differentiate another function.\n"
        "Fix: update 'n' outside the differentiated function (after calling it, from a value "
        "it returns), or pass the value it reads as an argument "
        "(see docs/limitations.md#PB107)."
    )
