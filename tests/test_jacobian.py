"""Jacobians against analytic ones and finite differences."""

import numpy as np
import pytest

import pullback
from pullback import jacobian

RNG = np.random.default_rng(4)
A = RNG.normal(size=(3, 4))


def linear(x):
    return A @ x


def elementwise(x):
    return np.sin(x) * x


def two_outputs(x, y):
    return x[:, None] * y, np.sum(x) * y


def helper(v):
    return v * v


def loopy(x):
    out = np.zeros(2)
    for i in range(len(x)):
        if x[i] > 0:
            out = out + helper(x[i]) * np.array([1.0, 0.0])
        else:
            out = out + x[i] * np.array([0.0, 1.0])
    return out


def numerical_jacobian(f, x, eps=1e-6):
    y = np.asarray(f(x))
    J = np.zeros(y.shape + x.shape)
    for k in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[k] = eps
        J[(...,) + k] = (np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * eps)
    return J


def test_linear_map_jacobian_is_the_matrix():
    np.testing.assert_allclose(jacobian(linear)(RNG.normal(size=4)), A, rtol=1e-12)


def test_elementwise_jacobian_is_diagonal():
    x = RNG.normal(size=5)
    J = jacobian(elementwise)(x)
    np.testing.assert_allclose(J, np.diag(np.cos(x) * x + np.sin(x)), rtol=1e-12)


def test_tuple_outputs_and_several_arguments_with_broadcasting():
    x, y = RNG.normal(size=3), RNG.normal(size=2)
    (j1x, j1y), (j2x, j2y) = jacobian(two_outputs, wrt=(0, 1))(x, y)
    assert j1x.shape == (3, 2, 3) and j1y.shape == (3, 2, 2)
    assert j2x.shape == (2, 3) and j2y.shape == (2, 2)
    np.testing.assert_allclose(j1x, numerical_jacobian(lambda v: two_outputs(v, y)[0], x))
    np.testing.assert_allclose(j1y, numerical_jacobian(lambda v: two_outputs(x, v)[0], y))
    np.testing.assert_allclose(j2x, np.outer(y, np.ones(3)))
    np.testing.assert_allclose(j2y, np.sum(x) * np.eye(2))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_control_flow_and_user_functions_inside(dtype):
    x = np.array([0.5, -1.0, 2.0], dtype=dtype)
    J = jacobian(loopy)(x)
    want = numerical_jacobian(loopy, x.astype(np.float64))
    np.testing.assert_allclose(J, want, rtol=1e-5 if dtype == np.float32 else 1e-8, atol=1e-6)
    assert J.dtype == dtype


def test_scalar_input_and_output():
    assert jacobian(lambda x: x**3)(2.0) == pytest.approx(12.0)


def test_container_argument_is_refused_clearly():
    with pytest.raises(pullback.ArgumentError) as e:
        jacobian(lambda p: p[0] * p[1])((1.0, 2.0))
    assert "jacobian with respect to 'p', a tuple, is not supported." in str(e.value)


def test_result_writing_variants():
    x = RNG.normal(size=4)
    buf = np.empty((3, 4))
    out = jacobian(linear).into(buf, x)
    assert out is buf
    np.testing.assert_allclose(buf, A)
    g = np.empty(4)
    assert pullback.grad(lambda v: np.sum(v * v)).into(g, x) is g
    np.testing.assert_allclose(g, 2 * x)
    value, same = pullback.value_and_grad(lambda v: np.sum(v * v)).into(g, x)
    assert same is g and value == pytest.approx(np.sum(x * x))
    with pytest.raises(pullback.ShapeMismatchError) as e:
        pullback.grad(lambda v: np.sum(v * v)).into(np.empty(3, np.float32), x)
    assert str(e.value) == (
        "out= has shape (3,) and dtype float32, but the gradient has shape (4,) and dtype "
        "float64.\nFix: preallocate np.empty((4,), dtype=np.float64)."
    )
