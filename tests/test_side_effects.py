"""Side effects that carry no gradient back run as written, once per call; those that
would bring a differentiated value back are refused before anything runs."""

from __future__ import annotations

import numpy as np
import pytest

from pullback import grad
from pullback.testing import check_grads

X = np.array([0.4, -1.2, 0.9])


class Layer:
    def __init__(self):
        self.w = np.array([1.5, -0.5, 2.0])
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        self.input = x  # cached for a hand-written backward, never read here
        self.z = x * self.w
        return np.sum(np.tanh(self.w * x))

    def forward_reading_back(self, x):
        self.z = x * self.w
        return np.sum(self.z)


def test_a_layer_caching_its_input_differentiates_and_caches():
    layer = Layer()
    check_grads(layer.forward, X)
    g = grad(layer.forward)(X)
    np.testing.assert_allclose(g, layer.w * (1 - np.tanh(layer.w * X) ** 2), rtol=1e-12)
    np.testing.assert_array_equal(layer.input, X)
    np.testing.assert_allclose(layer.z, X * layer.w)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_counter_counts_each_gradient_call_once(dtype):
    layer = Layer()
    before = layer.calls
    grad(layer.forward)(X.astype(dtype))
    grad(layer.forward)(X.astype(dtype))
    assert layer.calls == before + 2


def test_a_stored_value_read_back_later_in_the_call_differentiates():
    # self.z read after this call stored it: the read reads the stored value's local
    # (transform/side_effects.py shadow_read_back_attributes); refusals: test_callables.py
    layer = Layer()
    check_grads(layer.forward_reading_back, X)
    np.testing.assert_allclose(grad(layer.forward_reading_back)(X), layer.w)
    np.testing.assert_allclose(layer.z, X * layer.w)
