"""The receiver's zero cotangent from a method that does not read its object.

A method that calls ``self.f(x)`` where ``f`` reads no field gets, from ``f``'s vjp
function, a zero cotangent for ``self`` that the reverse sweep adds to the cotangent of
``self``'s other uses (its fields read by the caller). That zero is the tuple of the
fields' zeros, the form of a record's cotangent in generated code: a rebuilt object made
the Hessian raise "object of type ... has no len()" (found by probe4, the Hessian of a
model whose ``predict`` calls ``self.features(x)``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

import pullback
from pullback.testing import check_grads


class Model:
    def __init__(self, w, shift):
        self.w = w
        self.shift = shift

    def features(self, x):
        return np.stack([x, x**2, np.sin(x)], axis=-1)

    def predict(self, x):
        return self.features(x) @ self.w + self.shift

    def loss(self, x, y):
        r = self.predict(x) - y
        return 0.5 * np.dot(r, r)


def model_loss(w, x, y):
    return Model(w, 0.25).loss(x, y)


@dataclass
class Params:
    scale: np.ndarray
    inner: Model

    def doubled(self, x):
        return 2.0 * x

    def value(self, x):
        return np.sum(self.doubled(x) * self.scale) + self.inner.loss(x, x)


def dataclass_value(scale, w, x):
    return Params(scale, Model(w, 0.1)).value(x) ** 2


X = np.array([0.4, -0.3, 1.1, -0.8])
W = np.array([0.3, -0.2, 0.5])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_hessian_of_a_method_calling_one_that_reads_no_field(dtype):
    w = W.astype(dtype)
    check_grads(model_loss, w, X.astype(dtype), X**3, order=2)
    # the exact Hessian of 0.5 |F w + c - y|^2 is F^T F
    feats = np.stack([X, X**2, np.sin(X)], axis=-1)
    hess = pullback.hessian(model_loss)(w, X.astype(dtype), X**3)
    tol = 1e-10 if dtype == np.float64 else 1e-4
    np.testing.assert_allclose(hess, feats.T @ feats, rtol=tol, atol=tol)


def test_a_dataclass_receiver_with_a_record_field():
    scale = np.array([0.5, -1.0, 0.2, 0.7])
    check_grads(dataclass_value, scale, W, X, order=2)
    check_grads(dataclass_value, scale, W, X, wrt=1, order=2)
