"""A method that stores a differentiated value on ``self`` and reads it back later in the
same call (a layer caching its activation and using it): the value also goes into a
local, the later reads read the local, so the gradient flows; the object still gets the
value (transform/side_effects.py, shadow_read_back_attributes). Where pullback cannot
prove every read sees this call's store, the store stays refused (PB107)."""

from __future__ import annotations

import numpy as np
import pytest
from fd import check_grad

from pullback import grad, hessian, jvp
from pullback.errors import UnsupportedSyntaxError
from pullback.testing import check_grads

X = np.array([0.3, -0.7, 1.1])


class CachingLayer:
    def __init__(self):
        self.w = np.array([0.5, -1.5, 2.0])
        self.n_calls = 0

    def forward(self, x):
        self.n_calls += 1
        self.pre = x * self.w
        self.out = np.tanh(self.pre)
        if np.sum(self.out) > 10.0:
            return np.sum(self.pre)
        return np.sum(self.out**2 + self.pre)


class OverwritingLayer:
    def forward(self, x):
        self.h = x * 2.0
        for _ in range(2):
            self.h = np.sin(self.h) + x
        return np.sum(self.h * x)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("cls", [CachingLayer, OverwritingLayer])
def test_stored_and_read_back_against_finite_differences(cls, dtype):
    layer = cls()
    x = X.astype(dtype)
    check_grads(layer.forward, x)
    check_grad(layer.forward, x)
    v = np.array([0.5, -1.0, 0.25])

    def through_the_layer(x):
        return layer.forward(x)

    _, t = jvp(through_the_layer, (X,), (v,))
    assert np.isclose(t, grad(layer.forward)(X) @ v)
    assert check_grads(layer.forward, X, order=2)  # (tanh of an attribute's kind: by FD)


def test_the_object_still_gets_the_values_once_per_gradient():
    layer = CachingLayer()
    grad(layer.forward)(X)
    assert layer.n_calls == 1
    assert np.allclose(layer.pre, X * layer.w)
    assert np.allclose(layer.out, np.tanh(X * layer.w))
    t = np.tanh(X * layer.w)
    assert np.allclose(grad(layer.forward)(X), (2 * t * (1 - t * t) + 1) * layer.w)
    h = hessian(OverwritingLayer().forward)(X)
    assert np.allclose(h, h.T)


class ReadsBeforeItStores:
    def __init__(self):
        self.h = np.ones(3)

    def forward(self, x):
        y = np.sum(self.h * x)  # the value of an earlier call
        self.h = x * 2.0
        return y + np.sum(self.h)


class HandsItselfToAMethod:
    def scale(self):
        return self.h * 2.0

    def forward(self, x):
        self.h = x * x
        return np.sum(self.scale() + self.h)


@pytest.mark.parametrize("cls", [ReadsBeforeItStores, HandsItselfToAMethod])
def test_reads_that_may_not_see_the_store_stay_refused(cls):
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(cls().forward)(X)
    assert [d.code for d in info.value.diagnostics] == ["PB107"]
