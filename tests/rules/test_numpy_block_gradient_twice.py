"""Second derivatives through np.block (nested blocks, which the coverage probe does not
spell) and np.gradient (coordinates: the mixed terms, the primitive behind their
cotangent, and second derivatives in them), float64 and float32."""

from __future__ import annotations

import numpy as np
import pytest
from rule_inputs import make

import pullback
from pullback.rules.numpy_misc_gradient import coordinate_cotangent, gradient_adjoint
from pullback.testing import check_grads, check_rrule

DTYPES = pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])


def blocks(a, b, c, d):
    m = np.block([[a, b], [c, d]])  # 2 x 2 blocks of different widths
    deep = np.block([[[a]], [[a * b[:, :2]]]])  # three levels: a 3-d result
    return np.sum(m**2 * np.tanh(m)) + np.sum(np.sin(deep)) * np.sum(np.block([1.5, d[0]]))


@DTYPES
def test_nested_blocks_twice(dtype):
    a, b = make("real", (2, 2), dtype), make("real", (2, 3), dtype, seed=1)
    c, d = make("real", (1, 2), dtype, seed=2), make("real", (1, 3), dtype, seed=3)
    assert check_grads(blocks, a, b, c, d, order=2) == "reverse over reverse"


def smoothness(f, h, edge_order):
    return np.sum(np.gradient(f, h, edge_order=edge_order) ** 2 * np.cos(f)) * h


@DTYPES
@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_with_a_scalar_spacing_twice(edge_order, dtype):
    f = make("real", (7,), dtype, seed=4)
    how = check_grads(smoothness, f, dtype(0.6), edge_order, wrt=(0, 1), order=2)
    assert how == "reverse over reverse"


def on_a_grid(f, x):
    # np.gradient along both axes: x as the coordinates of the last one
    gy, gx = np.gradient(f, 0.8, x, edge_order=2)
    return np.sum(gx**2 * f + gy * np.sin(f))


def mixed(x, f, w):
    # d/dx of the gradient in f: the mixed second derivatives (f, coordinates)
    return np.sum(pullback.grad(on_a_grid, wrt=0)(f, x) * w)


@DTYPES
def test_gradient_with_coordinates_twice_in_f_and_mixed(dtype):
    f = make("real", (4, 6), dtype, seed=5)
    x = np.asarray(np.cumsum(make((0.5, 1.5), (6,), seed=6)), dtype)
    w = make("real", (4, 6), dtype, seed=7)
    hessian_f = check_grads(lambda f, x: on_a_grid(f, x), f, x, wrt=(0,), order=2)
    assert hessian_f == "reverse over reverse"
    assert check_grads(mixed, x, f, w, wrt=(0,)) == "reverse"


def roughness(x, f, edge_order):
    return np.sum(np.gradient(f, x, axis=-1, edge_order=edge_order) ** 2 * np.cos(f)) * x[1]


@DTYPES
@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_twice_in_its_coordinates(edge_order, dtype):
    # Hessian-vector products in the coordinates (and jointly with f) against finite
    # differences of the gradient: coordinate_cotangent is real arithmetic
    f = make("real", (3, 6), dtype, seed=8)
    x = np.asarray(np.cumsum(make((0.5, 1.5), (6,), seed=9)), dtype)
    how = check_grads(roughness, x, f, edge_order, wrt=(0,), order=2)
    assert how == "reverse over reverse"
    assert check_grads(roughness, x, f, edge_order, wrt=(0, 1), order=2) == how
    x3 = np.asarray([0.0, 0.7, 1.9], dtype)
    assert check_grads(roughness, x3, f[:, :3], edge_order, wrt=(0, 1), order=2) == how


def test_hessian_in_the_coordinates_matches_finite_differences():
    f = make("real", (6,), seed=8)
    x = np.cumsum(make((0.5, 1.5), (6,), seed=9))

    def loss(x):
        return np.sum(np.gradient(f, x, edge_order=2) ** 2)

    H = pullback.hessian(loss, wrt=0)(x)
    g = pullback.grad(loss)
    eps = 1e-6
    fd = np.stack([(g(x + eps * e) - g(x - eps * e)) / (2 * eps) for e in np.eye(6)])
    np.testing.assert_allclose(H, fd, rtol=1e-5, atol=1e-6)


@DTYPES
@pytest.mark.parametrize("edge_order", [1, 2])
def test_the_primitives(edge_order, dtype):
    f = make("real", (5, 6), dtype, seed=10)
    g = make("real", (5, 6), dtype, seed=11)
    x = np.asarray(np.cumsum(make((0.5, 1.5), (6,), seed=12)), dtype)
    # coordinate_cotangent is transformable code: first and second order in every input
    assert check_grads(coordinate_cotangent, f, x, g, 1, edge_order, wrt=(0, 1, 2)) == "reverse"
    how = check_grads(
        lambda f, x, g: np.sum(coordinate_cotangent(f, x, g, 0, edge_order) ** 2),
        f[:, 0],
        x[:5],
        g[:, 1],
        wrt=(0, 1, 2),
        order=2,
    )
    assert how == "reverse over reverse"
    check_rrule(gradient_adjoint, g, x, 1, edge_order)
    check_rrule(gradient_adjoint, g, dtype(0.3), 0, edge_order)
