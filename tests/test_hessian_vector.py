"""``hessian`` of vector- and tensor-valued functions (``jax.hessian``'s layout: ``out_shape
+ in_shape + in_shape``), several arguments as nested tuples, ``jacobian(jacobian(f))``,
``jacobian(hessian(f))`` and ``hvp`` of a vector function (pullback/second_order.py).

Every result is checked against central finite differences of ``jacobian(f)`` and against
the scalar ``hessian`` of each output element in a loop, in float64 and float32.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

import pullback
from pullback import batched, grad, hessian, hvp, jacobian

DTYPES = [np.float64, np.float32]


def _tol(dtype):
    return 2e-4 if dtype == np.float32 else 1e-10


def fd_of(J, args, wrt, eps=1e-6):
    """Central differences of the function ``J`` (a Jacobian) in argument ``wrt``, in
    float64: shape ``J(...).shape + args[wrt].shape``."""
    args = [a.astype(np.float64) if isinstance(a, np.ndarray) else float(a) for a in args]
    x = np.asarray(args[wrt], dtype=np.float64)
    cols = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = eps
        e = e.reshape(x.shape)
        up = list(args)
        down = list(args)
        up[wrt] = x + e if x.shape else float(x + e)
        down[wrt] = x - e if x.shape else float(x - e)
        cols.append((np.asarray(J(*up)) - np.asarray(J(*down))) / (2 * eps))
    return np.stack(cols, axis=-1).reshape(np.shape(J(*args)) + x.shape)


def per_element(f, x, out_shape):
    """The scalar Hessian of each output element, stacked: ``out_shape + T + T``."""
    blocks = []
    for k in range(math.prod(out_shape)):
        index = np.unravel_index(k, out_shape) if out_shape else ()
        blocks.append(hessian(lambda v, index=index: f(v)[index])(x))
    return np.stack(blocks).reshape(out_shape + np.shape(x) + np.shape(x))


# -- functions of every output shape ------------------------------------------------------


def out_scalar(x):
    return np.sum(np.sin(x) * x) * x.ravel()[0]


def out_vector(x):
    v = x.ravel()
    return np.stack([np.sum(x**3), np.sum(np.tanh(x)) * v[-1], 2.0 * v[0]])


def out_matrix(x):
    v = x.reshape(-1)
    return np.outer(np.sin(v[:2]), np.exp(v[-3:])) * np.sum(v * v)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("in_shape", [(3,), (2, 3)], ids=["n", "n,k"])
@pytest.mark.parametrize(
    "f, out_shape",
    [(out_scalar, ()), (out_vector, (3,)), (out_matrix, (2, 3))],
    ids=["out ()", "out (m,)", "out (m,k)"],
)
def test_hessian_of_every_output_shape(f, out_shape, in_shape, dtype):
    x = np.linspace(0.3, 1.1, math.prod(in_shape)).reshape(in_shape).astype(dtype)
    H = hessian(f)(x)
    assert H.shape == out_shape + in_shape + in_shape and H.dtype == dtype
    tol = _tol(dtype)
    np.testing.assert_allclose(H, per_element(f, x, out_shape), rtol=tol, atol=tol)
    fd = fd_of(jacobian(f), (x,), 0)
    np.testing.assert_allclose(H, fd, rtol=1e-5, atol=1e-5 if dtype == np.float64 else 1e-3)
    # a Hessian is symmetric in its two input axes
    n = math.prod(in_shape)
    flat = H.reshape(out_shape + (n, n))
    np.testing.assert_allclose(flat, np.swapaxes(flat, -1, -2), rtol=tol, atol=tol)


def scalar_in(t):
    return np.array([t**3, np.sin(t) * t, 2.0 * t])


@pytest.mark.parametrize("dtype", DTYPES)
def test_hessian_in_a_scalar_argument(dtype):
    t = dtype(0.7)
    H = hessian(scalar_in)(t)
    assert H.shape == (3,)
    want = [6 * 0.7, 2 * np.cos(0.7) - 0.7 * np.sin(0.7), 0.0]
    np.testing.assert_allclose(H, want, rtol=_tol(dtype), atol=_tol(dtype))
    np.testing.assert_allclose(H, fd_of(jacobian(scalar_in), (0.7,), 0), rtol=1e-6, atol=1e-6)


# -- several arguments: nested tuples, H[i][j] of shape S + T_i + T_j ----------------------


def two_args(x, y):
    return np.tanh(x[:, None] * y[None, :]).ravel()[:3] * np.sum(x) + y[0] ** 2


@pytest.mark.parametrize("dtype", DTYPES)
def test_several_arguments_give_nested_tuples(dtype):
    x = np.array([0.2, 0.5, -0.4], dtype=dtype)
    y = np.array([0.7, -0.3], dtype=dtype)
    H = hessian(two_args, wrt=(0, 1))(x, y)
    assert isinstance(H, tuple) and len(H) == 2 and all(len(r) == 2 for r in H)
    args = (x, y)
    tol = _tol(dtype)
    for i in range(2):
        for j in range(2):
            block = H[i][j]
            assert block.shape == (3,) + args[i].shape + args[j].shape
            assert block.dtype == dtype
            # the derivative in argument j of the Jacobian in argument i
            fd = fd_of(jacobian(two_args, wrt=i), args, j)
            np.testing.assert_allclose(block, fd, rtol=1e-5, atol=1e-5 if tol < 1e-6 else 1e-3)
            nested = jacobian(jacobian(two_args, wrt=i), wrt=j)(x, y)
            np.testing.assert_allclose(block, nested, rtol=tol, atol=tol)
    # the mixed blocks are each other's transposes (in the input axes)
    np.testing.assert_allclose(H[0][1], np.swapaxes(H[1][0], 1, 2), rtol=tol, atol=tol)
    # a name works as an index does
    np.testing.assert_allclose(hessian(two_args, wrt="y")(x, y), H[1][1], rtol=tol, atol=tol)


def scalar_two(x, y):
    return np.sum(x**2 * y[0]) + np.sin(y[1]) * x[0]


def test_a_scalar_function_of_several_arguments_takes_the_same_layout():
    x, y = np.array([0.5, -1.0]), np.array([2.0, 0.3])
    H = hessian(scalar_two, wrt=(0, 1))(x, y)
    for i in range(2):
        for j in range(2):
            fd = fd_of(grad(scalar_two, wrt=i), (x, y), j)
            np.testing.assert_allclose(H[i][j], fd, rtol=1e-6, atol=1e-6)


def tuple_out(x):
    return np.sum(x**3), np.sin(x) * x[0]


def test_a_tuple_output_gives_a_tuple_of_hessians():
    x = np.array([0.4, 0.9, -0.2])
    H = hessian(tuple_out)(x)
    assert isinstance(H, tuple) and H[0].shape == (3, 3) and H[1].shape == (3, 3, 3)
    np.testing.assert_allclose(H[0], np.diag(6 * x), rtol=1e-12)
    np.testing.assert_allclose(H[1], per_element(lambda v: tuple_out(v)[1], x, (3,)), rtol=1e-12)


# -- control flow, a helper, a rule that cannot batch ---------------------------------------


def helper(v, k):
    return v * np.exp(-k * v)


def with_control_flow(x):
    out = []
    for k in range(x.size):
        if x[k] > 0:
            out.append(helper(x[k], 0.5) * x[0])
        else:
            out.append(x[k] ** 3)
    return np.stack(out)


def test_control_flow_and_a_user_helper():
    x = np.array([0.7, -0.4, 1.2])
    H = hessian(with_control_flow)(x)
    np.testing.assert_allclose(H, per_element(with_control_flow, x, (3,)), rtol=1e-12)
    np.testing.assert_allclose(H, fd_of(jacobian(with_control_flow), (x,), 0), rtol=1e-6, atol=1e-6)


def fancy_reads(x):
    return x[np.array([0, 2, 2])] ** 2 * x[1]


def test_a_step_that_cannot_batch_falls_back_to_rows(monkeypatch):
    calls = []
    rows = batched._stack_rows
    monkeypatch.setattr(batched, "_stack_rows", lambda *a: calls.append(1) or rows(*a))
    x = np.linspace(0.5, 1.5, 4)
    H = hessian(fancy_reads)(x)
    assert calls  # integer-array reads do not follow a batch axis in second order
    np.testing.assert_allclose(H, per_element(fancy_reads, x, (3,)), rtol=1e-12)
    np.testing.assert_allclose(H, fd_of(jacobian(fancy_reads), (x,), 0), rtol=1e-6, atol=1e-6)


def elementwise(x):
    return np.tanh(x) * x[0] + np.sin(x) * x - x[0] * x[1] * x + np.sum(x) * np.cos(x)


@pytest.mark.parametrize("dtype", DTYPES)
def test_elementwise_steps_run_batched(monkeypatch, dtype):
    def refuse(*a):
        raise AssertionError("the stacked pullback fell back to rows")

    x = np.linspace(0.3, 1.1, 5).astype(dtype)
    want = per_element(elementwise, x, (5,))
    monkeypatch.setattr(batched, "_stack_rows", refuse)
    H = hessian(elementwise)(x)
    assert H.dtype == dtype
    np.testing.assert_allclose(H, want, rtol=_tol(dtype), atol=_tol(dtype))
    atol = 1e-6 if dtype == np.float64 else 1e-3
    np.testing.assert_allclose(H, fd_of(jacobian(elementwise), (x,), 0), rtol=1e-5, atol=atol)


class Model:
    def __init__(self, a):
        self.a = a

    def field(self, x):
        return np.sin(x) * self.a * x[0]


def scaled(x, c):
    return np.tanh(x * c) * x[1]


def test_methods_partials_and_keyword_arguments():
    x = np.array([0.3, 0.6, 0.9])
    H = hessian(Model(2.0).field)(x)
    np.testing.assert_allclose(H, per_element(lambda v: Model(2.0).field(v), x, (3,)), rtol=1e-12)
    np.testing.assert_allclose(H, fd_of(jacobian(Model(2.0).field), (x,), 0), atol=1e-6)
    np.testing.assert_allclose(hvp(Model(2.0).field)(x, x), H @ x, rtol=1e-12, atol=1e-15)
    want = fd_of(jacobian(scaled), (x, 1.5), 0)
    np.testing.assert_allclose(hessian(functools.partial(scaled, c=1.5))(x), want, atol=1e-6)
    np.testing.assert_allclose(hessian(scaled)(x, c=1.5), want, atol=1e-6)
    out = np.empty((3, 3, 3))
    assert hessian(scaled).into(out, x, 1.5) is out
    np.testing.assert_allclose(out, want, atol=1e-6)


def scalar_or_vector(x):
    if x[0] > 0:
        return np.sum(x**3)
    return x**3


def test_the_remembered_kind_of_output_never_changes_an_answer():
    h, p = np.array([1.0, 2.0]), np.array([-1.0, 2.0])
    hess, hv = hessian(scalar_or_vector), hvp(scalar_or_vector)
    for x in (h, p, h, p):  # a vector output is remembered for these argument kinds
        want = np.diag(6 * x) if x[0] > 0 else np.einsum("ij,jk->ijk", np.eye(2), np.diag(6 * x))
        np.testing.assert_allclose(hess(x), want, rtol=1e-12)
        np.testing.assert_allclose(hv(x, np.ones(2)), want @ np.ones(2), rtol=1e-12)


# -- nesting: jacobian(jacobian(f)), jacobian(grad(f)), jacobian(hessian(f)) ---------------


@pytest.mark.parametrize("mode", ["reverse", "forward", "auto"])
def test_jacobian_of_a_jacobian(mode):
    x = np.array([0.3, -0.8, 1.1])
    JJ = jacobian(jacobian(out_matrix, mode=mode), mode=mode)(x)
    np.testing.assert_allclose(JJ, hessian(out_matrix)(x), rtol=1e-12)
    np.testing.assert_allclose(JJ, fd_of(jacobian(out_matrix), (x,), 0), rtol=1e-6, atol=1e-6)


def test_jacobian_of_grad_and_scalar_hessian_are_unchanged():
    x = np.array([0.3, -0.8, 1.1])
    H = hessian(out_scalar)(x)
    np.testing.assert_array_equal(H, jacobian(grad(out_scalar))(x))
    np.testing.assert_allclose(H, fd_of(grad(out_scalar), (x,), 0), rtol=1e-6, atol=1e-6)


def cubic_sum(x):
    return np.sum(x**3 * x[0])


def test_third_derivatives():
    x = np.array([0.5, -0.3, 0.9])
    T = jacobian(hessian(cubic_sum))(x)
    assert T.shape == (3, 3, 3)
    np.testing.assert_allclose(T, fd_of(hessian(cubic_sum), (x,), 0), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(hessian(grad(cubic_sum))(x), T, rtol=1e-12)


# -- hvp of a vector function: each element's Hessian times v ----------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_hvp_of_a_vector_function(dtype):
    x = np.linspace(0.3, 1.1, 6).reshape(2, 3).astype(dtype)
    v = np.linspace(-1.0, 1.0, 6).reshape(2, 3).astype(dtype)
    got = hvp(out_matrix)(x, v)
    H = hessian(out_matrix)(x)
    assert got.shape == (2, 3, 2, 3) and got.dtype == dtype
    want = np.einsum("...ab,b->...a", H.reshape(2, 3, 6, 6), v.ravel()).reshape(2, 3, 2, 3)
    np.testing.assert_allclose(got, want, rtol=_tol(dtype), atol=_tol(dtype))
    # a scalar function keeps H @ v
    np.testing.assert_allclose(
        hvp(out_scalar)(x, v),
        (hessian(out_scalar)(x).reshape(6, 6) @ v.ravel()).reshape(2, 3),
        rtol=_tol(dtype),
        atol=_tol(dtype),
    )


def complex_in(z):
    return (z.real**2 + z.imag**2) * z.real


def test_a_complex_argument_follows_the_scalar_hessian_convention():
    z = np.array([0.5 + 0.2j, 1.0 - 0.3j])
    H = hessian(complex_in)(z)
    assert H.shape == (2, 2, 2) and H.dtype == np.complex128
    np.testing.assert_allclose(H, per_element(complex_in, z, (2,)), rtol=1e-12)


# -- what is still refused ------------------------------------------------------------------


def complex_out(x):
    return np.exp(1j * x)


def mixed_out(x):
    return np.sum(x), np.exp(1j * x)


def dict_out(x):
    return {"a": x**2}


def of_a_tuple(p):
    return p[0] * p[1]


def test_refusals_name_the_function_and_the_fix():
    x = np.array([0.5, 1.0])
    with pytest.raises(pullback.NotDifferentiableError) as info:
        hessian(complex_out)(x)
    message = str(info.value)
    assert message.split(": ", 1)[1] == (
        "hessian needs 'complex_out' to return a real number, but it returned a complex one "
        "(ndarray); the gradient of a complex-valued function is not defined without choosing "
        "a convention.\n        return np.exp(1j * x)\n"
        "Fix: return a real scalar: np.real(...), np.abs(...) or np.abs(...) "
        "** 2 of the result; for complex outputs use pullback.vjp with a complex cotangent."
    )
    with pytest.raises(pullback.NotDifferentiableError) as info:
        hessian(mixed_out)(x)
    assert str(info.value) == (
        "hessian needs 'mixed_out' to return real values, but it returned a complex ndarray: "
        "its second derivative is not defined without choosing a convention.\nFix: "
        "differentiate np.real(...) and np.imag(...) of the result separately."
    )
    with pytest.raises(pullback.NonScalarOutputError) as info:
        hessian(dict_out)(x)
    assert str(info.value) == (
        "hessian needs 'dict_out' to return numbers or arrays (or a tuple of them), but it "
        "returned a dict.\nFix: return arrays, or use pullback.vjp of the gradient for other "
        "structures."
    )
    with pytest.raises(pullback.ArgumentError) as info:
        hessian(of_a_tuple)((x, x))
    assert str(info.value) == (
        "hessian with respect to 'p', a tuple, is not supported.\n"
        "Fix: pass its arrays as separate arguments."
    )
    with pytest.raises(pullback.ArgumentError) as info:
        hvp(of_a_tuple)((x, x), (x, x))
    assert str(info.value) == (
        "hvp of a non-scalar function with respect to 'p', a tuple, is not supported.\n"
        "Fix: pass its arrays as separate arguments."
    )
    with pytest.raises(pullback.ShapeMismatchError) as info:
        hvp(out_vector)(x, np.ones(3))
    assert str(info.value) == (
        "v has shape (3,) but the argument 'x' has shape (2,); hvp's direction must have "
        "its argument's shape."
    )


def test_a_dask_output_is_refused_with_the_fix():
    da = pytest.importorskip("dask.array")
    x = da.from_array(np.array([0.5, 1.0]), chunks=1)
    with pytest.raises(pullback.ArgumentError) as info:
        hessian(out_vector)(x)
    assert str(info.value) == (
        "hessian of a non-scalar function needs NumPy values, but 'out_vector' returned a "
        "dask array.\nFix: pass NumPy arrays (x.compute() for Dask), or take the hessian of "
        "a scalar function of it."
    )


def test_a_derivative_of_a_jacobian_of_a_jacobian_is_refused_by_name():
    x = np.array([0.5, 1.0])
    with pytest.raises(pullback.HigherOrderError) as info:
        jacobian(jacobian(jacobian(out_vector)))(x)
    assert str(info.value) == (
        "cannot take the jacobian of jacobian(jacobian(out_vector)): pullback differentiates a "
        "jacobian or hessian once (jacobian(jacobian(f)), jacobian(hessian(f)), "
        "hessian(grad(f))).\nFix: for a third derivative of a scalar function use "
        "jacobian(hessian(f)) or hessian(grad(f))."
    )
    with pytest.raises(pullback.HigherOrderError, match=r"the hessian of hessian\(cubic_sum\)"):
        hessian(hessian(cubic_sum))
    with pytest.raises(pullback.HigherOrderError, match=r"the hessian of jacobian\(out_vector\)"):
        hessian(jacobian(out_vector))
