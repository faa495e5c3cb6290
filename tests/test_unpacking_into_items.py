"""Unpacking into targets that are not names: ``d['a'], d['b'] = u, v``,
``a[0], a[1] = w[1], w[0]``, ``obj.n, obj.tag = 3, 'x'``, ``for obj.w in ...``.

Each such element is one store, normalized as the single assignment ``target = value`` is
(an item of a local array, list or dict, or an attribute). These used to crash the
normalizer with an internal AttributeError. Gradients against central finite differences
(tests/fd.py), float64 and float32; an attribute store that would carry a gradient is refused
as the single store is (PB107).
"""

from __future__ import annotations

import numpy as np
import pytest
from fd import check_grad

from pullback import grad
from pullback.errors import UnsupportedSyntaxError

DTYPES = [np.float64, np.float32]


def dict_items(w):
    d = {}
    d["a"], d["b"] = w * 2.0, np.sin(w)
    return np.sum(d["a"] * d["b"])


def array_items(w):
    a = np.zeros(2, dtype=w.dtype)
    a[0], a[1] = w[1], w[0] ** 2
    return np.sum(a * w)


def list_items_from_a_pair(w):
    out = [0.0, 0.0]
    out[0], out[1] = (w[0] * w[1], np.exp(w[1]))
    return out[0] * out[1]


def nested_item_targets(w):
    d = {}
    (d["a"], d["b"]), c = (w[0], w[1] ** 2), w[0] * 3.0
    return d["a"] * d["b"] + c


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "f", [dict_items, array_items, list_items_from_a_pair, nested_item_targets]
)
def test_unpacking_into_items(f, dtype):
    check_grad(f, np.array([0.4, -1.3], dtype=dtype))


def test_array_items_by_hand():
    w = np.array([0.4, -1.3])
    # a = [w1, w0^2]; sum(a * w) = w1 w0 + w0^2 w1
    expected = np.array([w[1] + 2 * w[0] * w[1], w[0] + w[0] ** 2])
    assert np.allclose(grad(array_items)(w), expected)


class Layer:
    def __init__(self):
        self.w = np.array([0.5, -1.5])
        self.n = 0
        self.tag = ""


def counts_and_tags(x, layer):
    layer.n, layer.tag = 2, "seen"
    return np.sum(np.tanh(x * layer.w)) * layer.n


def stores_the_weights(x, layer):
    layer.w, layer.n = x * 2.0, 1
    return np.sum(layer.w)


@pytest.mark.parametrize("dtype", DTYPES)
def test_attributes_that_carry_no_gradient(dtype):
    layer = Layer()
    check_grad(lambda x: counts_and_tags(x, layer), np.array([0.3, -0.7], dtype=dtype))
    assert (layer.n, layer.tag) == (2, "seen")


def test_an_attribute_target_carrying_a_gradient_is_refused_as_a_single_store():
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(stores_the_weights)(np.array([0.3, -0.7]), Layer())
    assert [d.code for d in info.value.diagnostics] == ["PB107"]
    assert "layer.w, layer.n = x * 2.0, 1" in str(info.value)
