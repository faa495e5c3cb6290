"""Edges where a gradient used to be silently wrong or a crash escaped: non-scalar and
complex outputs, second derivatives of the wrong function, array subclasses, refusals
found while the gradient runs, calls that do not bind."""

from __future__ import annotations

import types

import numpy as np
import pytest
from fd import check_grad

import pullback
from pullback import grad, hessian, hvp, value_and_grad


def vector_valued(x):
    return x**3


def scalar_valued(x):
    return np.sum(x**3)


@grad
def already_a_gradient(w):
    return np.sum(w**3)


def test_hessian_and_hvp_of_a_vector_function_are_per_element_not_summed():
    # jax.hessian's layout: one Hessian per output element (pullback/second_order.py)
    x = np.array([1.0, 2.0])
    H = hessian(vector_valued)(x)
    want = np.zeros((2, 2, 2))
    want[0, 0, 0], want[1, 1, 1] = 6 * x
    np.testing.assert_allclose(H, want)
    np.testing.assert_allclose(hvp(vector_valued)(x, np.ones(2)), np.diag(6 * x))
    # the same function made scalar is its sum's Hessian, one component is one element's
    np.testing.assert_allclose(hessian(scalar_valued)(x), np.diag(6 * x))
    np.testing.assert_allclose(hessian(lambda v: (v**3)[1])(x), [[0, 0], [0, 12]])


def test_hessian_of_an_already_decorated_gradient_is_the_third_derivative():
    x = np.array([1.0, 2.0])
    # never the Hessian of the loss, never a third-derivative tensor summed silently: the
    # whole tensor, d3/dw_i dw_j dw_k of sum(w**3) = 6 if i == j == k else 0
    want = np.zeros((2, 2, 2))
    want[0, 0, 0] = want[1, 1, 1] = 6.0
    np.testing.assert_allclose(hessian(already_a_gradient)(x), want)
    # on a scalar argument grad(f) is a scalar function: its derivative is f'''
    assert grad(grad(grad(lambda t: t**4)))(2.0) == pytest.approx(48.0)


@pytest.mark.parametrize(
    "f, x",
    [
        (lambda x: (1 + 2j) * x, 0.5),
        (lambda x: np.exp(1j * x), np.float64(0.5)),
        (lambda x: np.sum(np.exp(1j * x)), np.array([0.5, 1.0])),
    ],
    ids=["python complex", "numpy complex scalar", "complex sum"],
)
def test_a_complex_output_is_refused_with_the_fix(f, x):
    with pytest.raises(pullback.NotDifferentiableError, match="np.real"):
        grad(f)(x)


def _re_sum_exp(x):
    return np.real(np.sum(np.exp(1j * x)))


def _im_times_i(x):
    return np.sum(np.imag(1j * x))


def _re_square_of_imaginary(x):
    return np.sum(np.real((1j * x) * (1j * x)))


def _im_sum(x):
    return np.imag(np.sum(1j * x * x))


def _re_exp_of_complex_line(x):
    return np.sum(np.real(np.exp((1 + 1j) * x)))


@pytest.mark.parametrize(
    "f, expected",
    [
        (_re_sum_exp, lambda x: -np.sin(x)),
        (_im_times_i, lambda x: np.ones_like(x)),
        (_re_square_of_imaginary, lambda x: -2 * x),
        (_im_sum, lambda x: 2 * x),
        (_re_exp_of_complex_line, lambda x: np.exp(x) * (np.cos(x) - np.sin(x))),
    ],
)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_real_outputs_through_complex_intermediates(f, expected, dtype):
    # Complex constants are not real: their cotangents conjugate (they used to be skipped,
    # flipping signs), and elementwise rules conjugate their derivatives.
    x = np.array([0.3, 1.1, -0.7], dtype=dtype)
    tol = 1e-10 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(grad(f)(x), expected(x), rtol=tol, atol=tol)
    check_grad(f, x)


def test_masked_arrays_are_refused_wherever_they_are_passed():
    m = np.ma.masked_array([1.0, 2.0, 3.0], mask=[0, 1, 0])
    with pytest.raises(pullback.NotDifferentiableError, match="MaskedArray"):
        grad(scalar_valued)(m)
    with pytest.raises(pullback.NotDifferentiableError, match="mask"):
        grad(lambda w, d: np.sum(w * d))(1.0, m)
    with pytest.raises(pullback.NotDifferentiableError, match="MaskedArray"):
        grad(lambda ws: np.sum(ws[0]))((m,))


def _matrix_square(a):
    return np.sum(a * a) + np.sum(np.tanh(a))


def test_np_matrix_is_refused_with_the_fix():
    # a np.matrix's `*` is a matrix product: the elementwise rules gave a wrong gradient
    m = np.matrix([[1.0, 2.0], [3.0, 4.0]])
    for call in (
        lambda: grad(_matrix_square)(m),
        lambda: grad(lambda w, a: np.sum(w * a))(1.0, m),
        lambda: grad(lambda ms: np.sum(ms[0]))((m,)),
    ):
        with pytest.raises(pullback.NotDifferentiableError, match=r"numpy\.matrix.*\n.*@"):
            call()
    # the fix: a plain array, `@` for the product
    a = np.asarray(m)
    g = grad(lambda a: np.sum(a @ a) + np.sum(np.tanh(a)))(a)
    want = a.sum(axis=1)[None, :] + a.sum(axis=0)[:, None] + 1 - np.tanh(a) ** 2
    np.testing.assert_allclose(g, want)


def _with_try(x):
    with memoryview(x) as _m:  # `as` a value of the input: still refused
        y = x * x
    y = y + 0.0
    return y


def _apply(f, x):
    return f(x) + x


def test_a_refusal_found_while_running_keeps_its_diagnostics():
    with pytest.raises(pullback.UnsupportedSyntaxError) as info:
        grad(_apply, wrt=1)(_with_try, 2.0)
    assert [d.code for d in info.value.diagnostics] == ["PB202"]
    assert "`with ... as name` binds a value computed from the differentiated input" in str(
        info.value
    )


def two_args(x, y):
    return x * y


def test_a_call_that_does_not_bind_names_the_users_function():
    for f in (grad(two_args), value_and_grad(two_args)):
        with pytest.raises(pullback.ArgumentError) as info:
            f(1.0)
        message = str(info.value)
        assert "two_args()" in message and "__forward" not in message
        assert "'y'" in message
    with pytest.raises(TypeError):  # ArgumentError is still a TypeError for callers
        grad(two_args)(1.0, 2.0, 3.0)


def _early_return_before_a_loop(x, n):
    if n == 0:
        return x * x
    s = 0.0
    for _ in range(n):
        s = s + x
    return s


def test_an_early_return_taken_before_a_loop_runs():
    assert grad(_early_return_before_a_loop)(2.0, 0) == 4.0
    assert grad(_early_return_before_a_loop)(2.0, 3) == 3.0


def _shrinking(w):
    s = 0.0
    for _ in range(3):
        s = s + np.sum(w[:2] ** 2)
        w = w[1:]
    return s


def _unpack_layers(flat, sizes):
    # a flat parameter vector consumed layer by layer, as model code does
    h = 1.0
    for n in sizes:
        layer = flat[:n]
        flat = flat[n:]
        h = np.tanh(np.sum(layer) * h)
    return h + np.sum(flat**2)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_loop_carried_array_that_changes_shape(dtype):
    w = np.arange(5.0, dtype=dtype) / 4
    np.testing.assert_allclose(grad(_shrinking)(w), [0, 1, 2, 1.5, 0], rtol=1e-6)
    check_grad(_shrinking, w)
    flat = np.linspace(-0.5, 0.7, 9).astype(dtype)
    check_grad(_unpack_layers, flat, (2, 3, 1))


def _helper_names(densify, unbroadcast, *, add=2.0):
    _partial = densify * unbroadcast
    ZERO = _partial * add
    fold_reads = ZERO * densify
    return fold_reads


def test_names_of_generated_helpers_are_free_for_users():
    x, y = 1.5, -0.5
    assert grad(_helper_names)(x, y) == pytest.approx(2 * 2 * x * y)
    gx, gy = grad(_helper_names, wrt=(0, "unbroadcast"))(x, unbroadcast=y, add=3.0)
    assert (gx, gy) == (pytest.approx(6 * x * y), pytest.approx(3 * x * x))
    assert pullback.jvp(_helper_names, (x, y), (1.0, 0.0))[1] == pytest.approx(4 * x * y)
    assert grad(grad(_helper_names))(x, y) == pytest.approx(4 * y)
    check_grad(_helper_names, x, y)


def test_every_generated_helper_name_is_reserved():
    from pullback.transform.codegen import runtime_namespace
    from pullback.transform.free_values import is_reserved

    assert [n for n in runtime_namespace() if not is_reserved(n)] == []


def _or_chain(x, a, b, c, d):
    if a or b or c or d:
        return 2.0 * x
    return 3.0 * x


def _and_chain(x, a, b, c):
    y = (a and b and c) or x * 0.0
    return x * x if y else 5.0 * x


def _mixed_chain(x, a, b, c):
    return x * (a or (b and c) or 0.5)


@pytest.mark.parametrize("bits", range(16))
def test_every_operand_of_a_long_boolean_chain_is_evaluated(bits):
    a, b, c, d = (bool(bits >> k & 1) for k in range(4))
    x = 1.5
    assert grad(_or_chain)(x, a, b, c, d) == (2.0 if (a or b or c or d) else 3.0)
    assert grad(_and_chain)(x, a, b, c) == (2 * x if (a and b and c) else 5.0)
    ga, gb, gc = 0.25 * (1 + a), 0.5 + b, 2.0 + c
    assert grad(_mixed_chain)(x, 0.0 if not a else ga, gb if b else 0.0, gc if c else 0.0) == (
        _mixed_chain(1.0, 0.0 if not a else ga, gb if b else 0.0, gc if c else 0.0)
    )


def _r_join(x):
    return np.sum(np.r_[x, 2.0 * x, 0:2] ** 2)


def _c_join(x):
    return np.sum(np.c_[x, 3.0 * x] ** 3)


def _s_index(x):
    return np.sum(x[np.s_[1:]] ** 2)


class _Table:
    """A user object whose indexing has no rule."""

    def __getitem__(self, key):
        return key * 2.0


_TABLE = _Table()


def _user_indexing(x):
    return _TABLE[x]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("f", [_r_join, _c_join, _s_index])
def test_index_trick_objects_carry_gradients(f, dtype):
    x = np.array([0.5, -1.0, 2.0], dtype=dtype)
    check_grad(f, x)


def test_a_users_getitem_is_differentiated_and_one_without_source_is_refused():
    assert grad(_user_indexing)(1.0) == 2.0  # _Table.__getitem__ is transformed
    with pytest.raises(pullback.UnsupportedSyntaxError, match="PB503"):
        grad(_proxy_indexing)(1.0)
    # the same objects indexed with constants just run
    assert grad(lambda x: x * _TABLE[1.5])(2.0) == 3.0
    assert grad(lambda x: x * _PROXY[1.0])(2.0) == 2.0


_PROXY = types.MappingProxyType({1.0: 2.0})


def _proxy_indexing(x):
    return _PROXY[x]


class _Layer:
    """A layer object as model code writes it."""

    def __init__(self, w):
        self.w = w

    def forward(self, x):
        """Docstring lines and blank lines must not shift reported lines.

        Second paragraph.
        """

        h = x * self.w

        return np.sum(np.tanh(h))

    def broken(self, x):

        y = x * 2.0

        with memoryview(x) as _m:  # the refused line
            y = y + 1.0
        y = y * 1.0
        pass
        return y


_LAYER = _Layer(np.array([0.5, -1.0, 2.0]))


def _calls_a_global_objects_method(x):
    return _LAYER.forward(x) * 2.0


def test_methods_of_global_objects_are_differentiated_and_read_live():
    global _LAYER
    x = np.array([0.1, 0.2, -0.3])
    check_grad(_calls_a_global_objects_method, x)
    _LAYER.w = np.array([1.0, 1.0, 1.0])  # changed in place
    check_grad(_calls_a_global_objects_method, x)
    saved = _LAYER
    _LAYER = _Layer(np.array([3.0, 0.0, -1.0]))  # rebound
    try:
        check_grad(_calls_a_global_objects_method, x)
    finally:
        _LAYER = saved


def test_lines_in_methods_with_blank_lines_and_docstrings_are_exact():
    import inspect

    lines, start = inspect.getsourcelines(_Layer.broken)
    expected = start + next(k for k, ln in enumerate(lines) if "the refused line" in ln)
    (d,) = pullback.check(_Layer.broken)
    assert d.code == "PB202" and d.line == expected
    assert d.source_line.strip() == "with memoryview(x) as _m:  # the refused line"


def _recursive(x, n):
    if n == 0:
        return x
    return _recursive(x, n - 1) * 1.0001


def test_a_gradient_reaches_the_recursion_depth_the_primal_reaches():
    import sys

    limit = sys.getrecursionlimit()
    assert grad(_recursive)(1.0, 900) == pytest.approx(1.0001**900)
    _, back = pullback.vjp(_recursive, 1.0, 900, wrt=0)
    assert back(1.0) == pytest.approx(1.0001**900)
    with pytest.raises(pullback.AdjointRuntimeError, match="sys.setrecursionlimit"):
        grad(_recursive)(1.0, 20_000)
    assert sys.getrecursionlimit() == limit


class _Chain:
    def step(self, x, n):
        if n == 0:
            return x
        return self.step(x, n - 1) * 1.0001


def _through_a_method(x, n):
    return _Chain().step(x, n)


def test_a_recursive_method_gradient_goes_past_the_c_recursion_limit_of_python_3_12():
    # CPython 3.12 counts calls of objects with __call__ and of functools.partial against a
    # C recursion limit (~1500) that sys.setrecursionlimit does not raise: before generated
    # code called bound methods instead, 3.12 stopped at ~400 levels here (3.11: ~700).
    n = 600
    assert grad(_through_a_method)(1.0, n) == pytest.approx(1.0001**n)
    _, back = pullback.vjp(_through_a_method, 1.0, n, wrt=0)
    assert back(1.0) == pytest.approx(1.0001**n)


def _quartic(x):
    return x**4


def _calls_quartic(x):
    return _quartic(x) * 2.0


def test_third_derivative_through_a_call_of_another_user_function():
    assert grad(grad(grad(_calls_quartic)))(1.5) == pytest.approx(2 * 24 * 1.5)


def test_a_deeply_nested_expression(tmp_path, monkeypatch):
    import importlib

    text = "def deep(x):\n    return " + "(" * 200 + "x" + " + 1.0)" * 200 + "\n"
    (tmp_path / "pb_deep_expression.py").write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("pb_deep_expression")
    assert grad(mod.deep)(1.0) == 1.0


class _CallableObject:
    def __call__(self, x):
        return x * x


def _calls_a_callable_object(x):
    return _OBJECT_FN(x)


_OBJECT_FN = _CallableObject()


def test_messages_name_objects_without_memory_addresses():
    import re

    attempts = (
        lambda: grad(_CallableObject())(1.0),
        lambda: grad(_calls_a_callable_object)(1.0),
    )
    for attempt in attempts:
        try:
            attempt()
        except pullback.PullbackError as exc:
            assert not re.search(r"0x[0-9a-f]{6,}", str(exc)), str(exc)
        else:  # differentiating it is fine too: then there is no message to check
            pass
