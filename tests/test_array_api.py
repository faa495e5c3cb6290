"""Functions written against an array-API namespace (``array_api_strict``) differentiate,
and their gradients are arrays of that namespace.

The rules of ``pullback.rules.array_api`` take only ``array_api_strict`` arrays, so they
are checked here by central finite differences computed in the namespace itself (the
NumPy-based ``check_rrule`` cannot call them), for every float argument, in float64 and
float32, with broadcasting for the functions of two arrays.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import pullback
from pullback import grad, value_and_grad
from pullback.backends import backend_of
from pullback.rules.array_api import _BINARY, _UNARY

xp = pytest.importorskip("array_api_strict")
try:
    import array_api_compat
except ImportError:  # the test that needs it skips
    array_api_compat = None

# Inputs inside every unary function's domain (log, sqrt, atan, ...); asin, acos and
# atanh take _X / 2, acosh takes _X + 1.
_X = np.array([[0.3, 0.7, 1.2], [0.5, 0.9, 1.1]])
_SHIFT = {"asin": 0.5, "acos": 0.5, "atanh": 0.5, "acosh": 1.0}
_Y = np.array([1.4, 0.6, 0.8])
_W = np.array([[0.2, -1.0, 0.7], [1.3, 0.4, -0.6]])  # a fixed cotangent direction


def _np(a):
    return np.from_dlpack(a)


def _fd_gradient(f, args, k, step):
    """Central finite differences of the scalar ``f`` with respect to ``args[k]``."""
    base = _np(args[k]).astype(np.float64)
    out = np.zeros(base.shape)
    for i in np.ndindex(base.shape):
        shifted = []
        for sign in (1.0, -1.0):
            moved = base.copy()
            moved[i] += sign * step
            new = list(args)
            new[k] = xp.asarray(moved, dtype=args[k].dtype)
            shifted.append(float(f(*new)))
        out[i] = (shifted[0] - shifted[1]) / (2 * step)
    return out


def _check(f, args, dtype, wrt=None):
    tol, step = (1e-7, 1e-6) if dtype == np.float64 else (2e-2, 1e-2)
    wrt = tuple(range(len(args))) if wrt is None else wrt
    grads = grad(f, wrt=wrt)(*args)
    for k, g in zip(wrt, grads, strict=True):
        assert backend_of(g) == "array-api"
        assert g.shape == args[k].shape and g.dtype == args[k].dtype
        np.testing.assert_allclose(_np(g), _fd_gradient(f, args, k, step), rtol=tol, atol=tol)


DTYPES = [np.float64, np.float32]


def _xp(a, dtype):
    return xp.asarray(a.astype(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(_UNARY))
def test_unary_rules_match_finite_differences(name, dtype):
    fn = getattr(xp, name)

    # w is an argument, not a closure variable: see docs/backends.md (array API limits).
    def f(x, w):
        return xp.sum(fn(x) * w)

    _check(f, (_xp(_unary_input(name), dtype), _xp(_W, dtype)), dtype)


def _unary_input(name):
    if name == "acosh":
        return _X + 1.0
    return _X * _SHIFT.get(name, 1.0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(_BINARY))
def test_binary_rules_match_finite_differences_with_broadcasting(name, dtype):
    fn = getattr(xp, name)

    def f(a, b, w):
        return xp.sum(fn(a, b) * w)

    # (2, 3) with (3,): the cotangent of b is summed over the broadcast axis.
    _check(f, (_xp(_X, dtype), _xp(_Y, dtype), _xp(_W, dtype)), dtype)


def reductions(x, w):
    return xp.sum(xp.mean(x, axis=0) * w[0, :]) + xp.sum(x * w, axis=1, keepdims=True)[1, 0]


def products(x, w):
    y = xp.matmul(x, xp.matrix_transpose(w))
    return xp.sum(y * y) + xp.sum(x[0, :] @ w[1, :]) + xp.sum(x @ w[0, :])


def shapes(x, w):
    r = xp.reshape(x, (3, 2))
    return xp.sum(xp.where(r > 0.6, r * r, -r) * xp.reshape(w, (3, 2)))


def operators_and_indexing(x, w):
    return x[0, 1] * x[1, 2] + xp.sum((x - w) ** 2 / 2.0) + xp.sum(x[:, 1:] * -w[:, :2])


def extrema(x, w):
    # max over an axis, min over all; a tie (two equal maxima) shares its cotangent
    tied = xp.concat([x, xp.reshape(x[:, 2], (2, 1))], axis=1)
    return xp.sum(xp.max(tied, axis=1) * w[:, 0]) + xp.min(x * w) + xp.max(x, axis=0)[1]


def joins(x, w):
    c = xp.concat([x, x * w], axis=0)
    s = xp.stack([x[0, :], w[1, :] * x[1, :]], axis=1)
    return xp.sum(c * c) + xp.sum(s * xp.reshape(w, (3, 2)))


def dims(x, w):
    e = xp.expand_dims(x, axis=1)
    p = xp.permute_dims(xp.reshape(x, (1, 2, 3)), (2, 0, 1))
    q = xp.squeeze(xp.reshape(x[:, 1:2], (1, 2, 1)), axis=(0, 2))
    return xp.sum(e[:, 0, :] * w) + xp.sum(p[:, 0, :] * xp.matrix_transpose(w)) + xp.sum(q * q)


def casts(x, w):
    return xp.sum(xp.astype(x, xp.float64) * xp.astype(w, xp.float64))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "f", [reductions, products, shapes, operators_and_indexing, extrema, joins, dims, casts]
)
def test_structural_rules_match_finite_differences(f, dtype):
    _check(f, (_xp(_X, dtype), _xp(_W, dtype)), dtype)


def namespace_of_the_argument(x):
    ns = array_api_compat.array_namespace(x)
    return xp.sum(ns.tanh(x) * x)


def namespace_reduction(x):
    ns = array_api_compat.array_namespace(x)
    return ns.sum(x * x)


def test_namespace_from_array_api_compat_and_value_and_grad():
    if array_api_compat is None:
        pytest.skip("array_api_compat is not installed")
    x = xp.asarray(_X)
    value, g = value_and_grad(namespace_of_the_argument)(x)
    assert backend_of(value) == "array-api" and value.shape == ()
    np.testing.assert_allclose(float(value), np.sum(np.tanh(_X) * _X))
    np.testing.assert_allclose(_np(g), np.tanh(_X) + _X * (1 - np.tanh(_X) ** 2))


def test_a_reduction_of_a_namespace_found_at_run_time():
    if array_api_compat is None:
        pytest.skip("array_api_compat is not installed")
    g = grad(namespace_reduction)(xp.asarray(_X))
    np.testing.assert_allclose(_np(g), 2 * _X)


def _rule_function(name):
    fn = xp
    for part in name.split(".")[1:]:
        fn = getattr(fn, part)
    return fn


def _real_part(y):
    return xp.real(y) if xp.isdtype(y.dtype, "complex floating") else y


_SCALAR_SOURCE = """
import array_api_strict as xp

FN = CONST = KW = DTYPE = None  # set by the test after import


def scalar(w, a, b):
    {complex}y = FN({call})
    if xp.isdtype(y.dtype, "complex floating"):
        y = xp.real(y)
    return xp.sum(xp.multiply(y, w))
"""


def _second_order_scalar(fn, args, kwargs, positions, directory):
    """sum(fn(...) * w) as a function of w and two real arrays a, b: the arguments at
    ``positions`` (one or two; b is unused for one). Written to a file (pullback reads
    source), the call spelled out: the other arguments are read from globals. A complex
    argument is made from a real array inside, so its cotangent goes through astype."""
    names = {p: "ab"[k] for k, p in enumerate(positions)}
    call = [names.get(k, f"CONST[{k}]") for k in range(len(args))]
    call += [f"{key}=KW[{key!r}]" for key in kwargs]
    complex_a = xp.isdtype(args[positions[0]].dtype, "complex floating")
    source = _SCALAR_SOURCE.format(
        call=", ".join(call), complex="a = xp.astype(a, DTYPE)\n    " if complex_a else ""
    )
    path = directory / "second_order_scalar.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"so_scalar_{id(path)}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.FN, module.CONST, module.KW = fn, dict(enumerate(args)), kwargs
    module.DTYPE = args[positions[0]].dtype
    return module.scalar


def _joined(fn):
    """concat/stack of two arrays as a function of the two arrays."""

    def joined(a, b, axis=0):
        return fn([a, b], axis=axis)

    return joined


def _positions(args, wrt):
    if wrt is not None:
        return tuple(wrt)
    return tuple(
        k
        for k, a in enumerate(args)
        if hasattr(a, "dtype") and xp.isdtype(a.dtype, ("real floating", "complex floating"))
    )


def _so_cases():
    # the table of second-order cases lives beside the rule tests (tests/rules)
    sys.path.insert(0, str(Path(__file__).resolve().parent / "rules"))
    import so_array_api  # noqa: F401 - fills the table
    from second_order_table import CASES

    return [
        (name, k, c)
        for name, cases in CASES.items()
        if name.startswith("array_api_strict.")
        for k, c in enumerate(cases)
    ]


_SO_CASES = _so_cases()


def _prepared(name, the_case, directory, dtype=np.float64):
    """The rule's function, the scalar of a and b, and the real values of a and b."""
    args, kwargs, wrt = the_case
    fn = _rule_function(name)
    if isinstance(args[0], list):  # concat, stack
        fn, args = _joined(fn), tuple(args[0])
    positions = _positions(args, wrt)
    assert 1 <= len(positions) <= 2, name
    scalar = _second_order_scalar(fn, args, kwargs, positions, directory)
    rng = np.random.default_rng(len(name))
    w = xp.asarray(rng.normal(size=tuple(fn(*args, **kwargs).shape)), dtype=_xp_dtype(dtype))
    values = [xp.astype(xp.real(args[p]), _xp_dtype(dtype)) for p in positions]
    values += [xp.zeros(1, dtype=_xp_dtype(dtype))] * (2 - len(values))  # b unused
    return scalar, w, values, tuple(range(1, len(positions) + 1))


def _xp_dtype(dtype):
    return xp.float64 if dtype == np.float64 else xp.float32


# The check refuses the second derivative of these before running: the gradient compares
# arrays (Array.__ne__), a method with no rule.
_COMPARISON = {"array_api_strict.take#0", "array_api_strict.sort#0"}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "name, k, the_case", _SO_CASES, ids=[f"{name}#{k}" for name, k, _ in _SO_CASES]
)
def test_every_rule_matches_finite_differences(name, k, the_case, dtype, tmp_path):
    scalar, w, values, wrt_args = _prepared(name, the_case, tmp_path, dtype)
    _check(scalar, (w, *values), dtype, wrt=wrt_args)


@pytest.mark.parametrize(
    "name, k, the_case", _SO_CASES, ids=[f"{name}#{k}" for name, k, _ in _SO_CASES]
)
def test_second_order_reverse_over_reverse(name, k, the_case, tmp_path, request):
    """Reverse over reverse through each rule's transformable pullback: the gradient of
    <grad f, d> against central finite differences of the reverse-mode gradient along d."""
    if f"{name}#{k}" in _COMPARISON:
        request.applymarker(
            pytest.mark.xfail(raises=pullback.HigherOrderError, reason="Array.__ne__", strict=True)
        )
    scalar, w, values, wrt_args = _prepared(name, the_case, tmp_path)
    rng = np.random.default_rng(k)
    directions = [xp.asarray(rng.normal(size=tuple(v.shape))) for v in values]
    gradient = grad(scalar, wrt=wrt_args)

    def along(w, a, b, da, db):
        gs = _as_tuple(grad(scalar, wrt=wrt_args)(w, a, b))
        total = xp.sum(xp.multiply(gs[0], da))
        if len(gs) > 1:
            total = xp.add(total, xp.sum(xp.multiply(gs[1], db)))
        return total

    second = _as_tuple(grad(along, wrt=wrt_args)(w, *values, *directions))  # rev over rev

    def moved(t):
        shifted = [xp.add(v, t * d) for v, d in zip(values, directions, strict=True)]
        return [_np(g) for g in _as_tuple(gradient(w, *shifted))]

    step = 1e-5
    plus, minus = moved(step), moved(-step)
    for j, s in enumerate(second):
        fd = (plus[j] - minus[j]) / (2 * step)
        np.testing.assert_allclose(_np(s), fd, rtol=1e-5, atol=1e-6, err_msg=f"{name} arg {j}")


def _as_tuple(g):
    return g if isinstance(g, tuple) else (g,)


def fancy(x):
    return xp.sum(x[xp.asarray([0, 0])])


def test_integer_array_index_is_refused():
    with pytest.raises(pullback.PullbackError, match="scatter-add"):
        grad(fancy)(xp.asarray(_Y))


def test_a_function_without_a_rule_is_refused_before_running():
    def f(x):
        return xp.sum(xp.cumulative_prod(x, axis=0))

    with pytest.raises(pullback.UnsupportedSyntaxError, match="PB301"):
        grad(f)(xp.asarray(_X))


def test_cupy_gradient_on_the_gpu():
    """Runs only where CuPy and a GPU are present (NumPy dispatches np.* to CuPy)."""
    cupy = pytest.importorskip("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("no GPU")
    except Exception:
        pytest.skip("no GPU")

    def f(x):
        return cupy.sum(cupy.tanh(x) * x)

    x = cupy.asarray(_X)
    g = grad(f)(x)
    assert isinstance(g, cupy.ndarray)
    np.testing.assert_allclose(cupy.asnumpy(g), np.tanh(_X) + _X * (1 - np.tanh(_X) ** 2))
