"""Central finite differences for the core tests (independent of pullback.testing).

Gradients are compared against finite differences computed in float64 on upcast copies
of the arguments; a float32 gradient is compared with a float32-sized tolerance and must
have dtype float32.
"""

from __future__ import annotations

import warnings

import numpy as np

import pullback


def _upcast(v):
    if isinstance(v, np.ndarray) and v.dtype.kind == "f":
        return v.astype(np.float64)
    if isinstance(v, np.floating):
        return np.float64(v)
    if isinstance(v, tuple):
        return tuple(_upcast(x) for x in v)
    if isinstance(v, list):
        return [_upcast(x) for x in v]
    if isinstance(v, dict):
        return {k: _upcast(x) for k, x in v.items()}
    return v


def _leaf_paths(v, path=()):
    if isinstance(v, (tuple, list)):
        for k, x in enumerate(v):
            yield from _leaf_paths(x, path + (k,))
    elif isinstance(v, dict):
        for k, x in v.items():
            yield from _leaf_paths(x, path + (k,))
    elif isinstance(v, (float, np.floating)) or (isinstance(v, np.ndarray) and v.dtype.kind == "f"):
        yield path


def _get(v, path):
    for p in path:
        v = v[p]
    return v


def _replace(v, path, new):
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(v, tuple):
        return tuple(_replace(x, rest, new) if k == head else x for k, x in enumerate(v))
    if isinstance(v, list):
        return [_replace(x, rest, new) if k == head else x for k, x in enumerate(v)]
    out = dict(v)
    out[head] = _replace(v[head], rest, new)
    return out


def numerical_grad(f, args, k, kwargs=None, eps=1e-6):
    """Central-difference gradient of scalar ``f`` w.r.t. positional argument ``k``."""
    kwargs = kwargs or {}
    args = [_upcast(a) for a in args]
    target = args[k]

    def value(new_target):
        call = list(args)
        call[k] = new_target
        return float(np.sum(f(*call, **kwargs)))

    def leaf_grad(path):
        leaf = _get(target, path)
        if isinstance(leaf, np.ndarray):
            g = np.zeros_like(leaf)
            for idx in np.ndindex(leaf.shape):
                hi = leaf.copy()
                lo = leaf.copy()
                hi[idx] += eps
                lo[idx] -= eps
                g[idx] = (value(_replace(target, path, hi)) - value(_replace(target, path, lo))) / (
                    2 * eps
                )
            return g
        hi = value(_replace(target, path, float(leaf) + eps))
        lo = value(_replace(target, path, float(leaf) - eps))
        return (hi - lo) / (2 * eps)

    paths = list(_leaf_paths(target))
    if paths == [()]:
        return leaf_grad(())
    out = target
    for path in paths:
        out = _replace(out, path, leaf_grad(path))
    return out


def central_jacobian(fn, x, eps=1e-6):
    """Central differences of ``fn`` (numbers or arrays out) at the vector ``x``, in float64:
    shape ``out + (x.size,)``, the gradient of a scalar ``fn``, the Hessian of a gradient."""
    x = np.asarray(x, dtype=np.float64)
    columns = []
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = eps
        hi = np.asarray(fn(x + e), dtype=np.float64)
        lo = np.asarray(fn(x - e), dtype=np.float64)
        columns.append((hi - lo) / (2 * eps))
    return np.stack(columns, axis=-1)


def check_hessian_against_differences(f, x, rtol=1e-6, atol=1e-7):
    """pullback's gradient of scalar ``f`` at the vector ``x`` against central differences
    of ``f``, and its Hessian against central differences of that gradient. Returns the
    differences' Hessian."""
    g = pullback.grad(f)
    np.testing.assert_allclose(g(x), central_jacobian(f, x, 1e-6), rtol=rtol, atol=atol * 0.1)
    want = central_jacobian(g, x, 1e-5)
    np.testing.assert_allclose(pullback.hessian(f)(x), want, rtol=rtol, atol=atol)
    return want


def assert_tree_close(got, want, rtol, atol, where="gradient"):
    if isinstance(want, (tuple, list)):
        assert isinstance(got, type(want)), f"{where}: {type(got)} is not {type(want)}"
        assert len(got) == len(want)
        for k, (g, w) in enumerate(zip(got, want, strict=True)):
            assert_tree_close(g, w, rtol, atol, f"{where}[{k}]")
        return
    if isinstance(want, dict):
        assert isinstance(got, dict) and set(got) == set(want), where
        for key in want:
            assert_tree_close(got[key], want[key], rtol, atol, f"{where}[{key!r}]")
        return
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=where)


def _dtype_of(v):
    return v.dtype if isinstance(v, (np.ndarray, np.generic)) else None


def check_grad(f, *args, wrt=0, kwargs=None, rtol=None, atol=None):
    """pullback's gradient of ``f`` matches central differences, with the argument's
    structure, shape and dtype. Returns the gradient."""
    kwargs = kwargs or {}
    single = not isinstance(wrt, tuple)
    indices = (wrt,) if single else wrt
    got = pullback.grad(f, wrt=wrt)(*args, **kwargs)
    got_t = (got,) if single else got
    low = any(_dtype_of(a) == np.float32 for a in args if _dtype_of(a) is not None)
    rtol = rtol if rtol is not None else (2e-3 if low else 1e-6)
    atol = atol if atol is not None else (2e-3 if low else 1e-7)
    for k, g in zip(indices, got_t, strict=True):
        want = numerical_grad(f, args, k, kwargs)
        assert_tree_close(g, want, rtol, atol, f"d/d arg{k}")
        _check_like(g, args[k], f"d/d arg{k}")
    return got


def _check_like(g, like, where):
    if isinstance(like, (tuple, list)):
        assert type(g) is type(like), where
        for k, (a, b) in enumerate(zip(g, like, strict=True)):
            _check_like(a, b, f"{where}[{k}]")
    elif isinstance(like, dict):
        for key in like:
            _check_like(g[key], like[key], f"{where}[{key!r}]")
    elif isinstance(like, np.ndarray):
        assert isinstance(g, np.ndarray), f"{where}: {type(g)} for an array argument"
        assert g.shape == like.shape, f"{where}: shape {g.shape} != {like.shape}"
        assert g.dtype == like.dtype, f"{where}: dtype {g.dtype} != {like.dtype}"
    elif isinstance(like, np.generic):
        assert np.asarray(g).dtype == like.dtype, f"{where}: dtype {np.asarray(g).dtype}"
    elif isinstance(like, float):
        assert type(g) is float, f"{where}: {type(g).__name__} for a Python float"


def check_jvp(f, primals, tangents, h=1e-6, rel=1e-6):
    """pullback's forward-mode directional derivative of scalar-valued ``f`` at ``primals``
    along ``tangents`` (tuples, one entry per argument) matches the central difference
    ``(f(x + h t) - f(x - h t)) / 2h`` in float64. Returns the directional derivative."""
    _, got = pullback.jvp(f, tuple(primals), tuple(tangents))
    plus = [p + h * t for p, t in zip(primals, tangents, strict=True)]
    minus = [p - h * t for p, t in zip(primals, tangents, strict=True)]
    want = (f(*plus) - f(*minus)) / (2 * h)
    np.testing.assert_allclose(got, want, rtol=rel, atol=rel * 1e-2)
    return got


def check_hvp(f, x, v, h=1e-5, rtol=1e-6, atol=1e-8):
    """pullback's Hessian-vector product of scalar ``f`` at ``x`` along ``v`` (reverse over
    reverse) matches central differences of its gradient along ``v``. Returns it."""
    g = pullback.grad(f)
    want = (g(x + h * v) - g(x - h * v)) / (2 * h)
    got = pullback.hvp(f)(x, v)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    return got


def check_hessian_is_jacobian_of_grad(f, *args, rtol=1e-8, atol=1e-10):
    """pullback's Hessian of scalar ``f`` (in its first argument) equals the Jacobian of its
    gradient: two second-order paths through the same generated code. Returns it."""
    hess = np.asarray(pullback.hessian(f)(*args))
    jac = np.asarray(pullback.jacobian(pullback.grad(f))(*args))
    np.testing.assert_allclose(hess, jac, rtol=rtol, atol=atol)
    return hess


def check_jvp_of_grad(f, x, v, rtol=None, atol=1e-6):
    """Forward over reverse: the jvp of ``grad(f)`` at the vector ``x`` along ``v`` is
    finite, has ``x``'s dtype and equals ``hessian(f)(x) @ v`` (reverse over reverse);
    NumPy's RuntimeWarnings (a ``np.where`` branch not selected) are silenced. ``rtol``
    defaults to 1e-6 in float64, 1e-4 in float32. Returns ``(gradient, its jvp, hessian)``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        g, dg = pullback.jvp(pullback.grad(f), (x,), (v,))
        h = pullback.hessian(f)(x)
    assert dg.dtype == x.dtype, dg.dtype
    assert np.all(np.isfinite(dg)), dg
    rtol = rtol if rtol is not None else (1e-4 if x.dtype == np.float32 else 1e-6)
    np.testing.assert_allclose(dg, h @ v, rtol=rtol, atol=atol)
    return g, dg, h


def smooth_at(f, args, k=0, rtol=1e-4, atol=1e-6):
    """Whether central differences of ``f`` in argument ``k`` with steps 1e-6 and 1e-3
    agree: no switch of a data-dependent condition (a branch, a ``next`` with a test)
    within the larger step, so ``f`` is differentiable there and finite differences mean
    something. Property tests of programs whose conditions depend on the data reject the
    other points (``hypothesis.assume``); pullback's gradient is checked at all the rest."""
    fine = numerical_grad(f, args, k, eps=1e-6)
    coarse = numerical_grad(f, args, k, eps=1e-3)
    if not np.all(np.isfinite(fine)):
        return False
    return bool(np.allclose(fine, coarse, rtol=rtol, atol=atol))


def form_tests(forms, x, direction):
    """``(test_gradient_float64, test_gradient_float32, test_hessian, test_jvp)`` for a
    table of scalar functions ``forms`` of the vector ``x``: the gradient against central
    differences (float64, and float32 with its dtype kept), the Hessian against differences
    of the gradient, and ``jvp`` along ``direction``. A test module binds them to those
    names, which pytest collects."""
    import pytest

    ids = [f.__name__ for f in forms]

    @pytest.mark.parametrize("f", forms, ids=ids)
    def test_gradient_float64(f):
        np.testing.assert_allclose(
            pullback.grad(f)(x), central_jacobian(f, x), rtol=1e-6, atol=1e-8
        )

    @pytest.mark.parametrize("f", forms, ids=ids)
    def test_gradient_float32(f):
        g = pullback.grad(f)(x.astype(np.float32))
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, central_jacobian(f, x), rtol=2e-3, atol=2e-4)

    @pytest.mark.parametrize("f", forms, ids=ids)
    def test_hessian(f):
        want = central_jacobian(pullback.grad(f), x, 1e-5)
        np.testing.assert_allclose(pullback.hessian(f)(x), want, rtol=1e-5, atol=1e-6)

    @pytest.mark.parametrize("f", forms, ids=ids)
    def test_jvp(f):
        y, t = pullback.jvp(f, (x,), (direction,))
        assert y == pytest.approx(f(x))
        assert t == pytest.approx(central_jacobian(f, x) @ direction, rel=1e-6, abs=1e-8)

    return test_gradient_float64, test_gradient_float32, test_hessian, test_jvp
