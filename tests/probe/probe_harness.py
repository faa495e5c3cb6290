"""Checks shared by the probe modules: derivatives against central finite differences.

The probes are functions written the way public projects write them (finance, statistics,
physics, optimization test functions); each is differentiated with respect to its first
argument and compared with central differences of the primal itself, so a wrong gradient
cannot hide behind a second use of pullback.
"""

from __future__ import annotations

import numpy as np

import pullback


def _as_array(x):
    return np.array(x, dtype=np.float64)


def _from_array(a, like):
    if isinstance(like, np.ndarray):
        return a.reshape(like.shape)
    return float(np.ravel(a)[0])


def fd_grad(f, args, eps=1e-6):
    """Central-difference gradient of scalar ``f`` with respect to ``args[0]``."""
    x0 = _as_array(args[0])
    flat = x0.ravel()
    g = np.zeros_like(flat)
    for k in range(flat.size):
        up, down = flat.copy(), flat.copy()
        up[k] += eps
        down[k] -= eps
        fu = f(_from_array(up, args[0]), *args[1:])
        fd = f(_from_array(down, args[0]), *args[1:])
        g[k] = (float(fu) - float(fd)) / (2 * eps)
    return g.reshape(x0.shape)


def _close(got, want, rtol, atol, what):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    assert np.all(np.isfinite(got)), f"{what}: not finite {got}"
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=what)


def direction(x, seed=1):
    """A fixed random direction shaped like ``x``."""
    rng = np.random.default_rng(seed)
    if isinstance(x, np.ndarray):
        return rng.standard_normal(x.shape)
    return float(rng.standard_normal())


def check_probe(f, *args, second=False, rtol=1e-5, atol=1e-7, eps=1e-6):
    """``grad`` of ``f`` against finite differences; with ``second``, ``jvp`` and ``hvp`` too.

    ``hvp`` is compared with central differences of the (already checked) gradient, and the
    row of ``hessian`` along the direction with ``hvp``.
    """
    if isinstance(args[0], dict):  # a parameter dict: each entry against its differences
        got = pullback.grad(f)(*args)
        assert set(got) == set(args[0]), f"grad keys {set(got)}"
        for key in args[0]:
            def one(v, *rest, key=key):
                return f({**args[0], key: v}, *rest)

            _close(got[key], fd_grad(one, (args[0][key],) + args[1:], eps), rtol, atol, key)
        return
    want = fd_grad(f, args, eps)
    got = pullback.grad(f)(*args)
    _close(got, want, rtol, atol, "grad")
    if not second:
        return
    v = direction(args[0])
    _, tangent = pullback.jvp(f, args, (v,) + (pullback.ZERO,) * (len(args) - 1))
    _close(tangent, np.sum(want * v), rtol, atol, "jvp")
    g = pullback.grad(f)

    def along(t):
        return np.asarray(g(*((_from_array(_as_array(args[0]) + t * _as_array(v), args[0]),)
                              + args[1:])), dtype=np.float64)

    h = 1e-4
    want_hv = (along(h) - along(-h)) / (2 * h)
    got_hv = pullback.hvp(f)(*args, v)
    _close(got_hv, want_hv, 1e-4, 1e-5, "hvp")
    hess = np.asarray(pullback.hessian(f)(*args), dtype=np.float64)
    n = np.size(args[0])
    _close(hess.reshape(n, n) @ np.ravel(v), np.ravel(want_hv), 1e-4, 1e-5, "hessian")


def check_refusal(f, *args, error=pullback.PullbackError, says=()):
    """``grad(f)`` refuses before giving any number, with each text of ``says`` in its
    message."""
    try:
        pullback.grad(f)(*args)
    except error as exc:
        message = str(exc)
    else:
        raise AssertionError(f"{f.__name__} was differentiated; a refusal was expected")
    for text in says:
        assert text in message, f"{text!r} not in {message}"


def check_float32(f, *args, rtol=2e-2, atol=2e-3):
    """``grad`` of ``f`` at a float32 first argument: a float32 gradient close to the
    float64 one (the float64 one is checked against finite differences by
    :func:`check_probe`)."""
    want = np.asarray(pullback.grad(f)(*args), dtype=np.float64)
    got = pullback.grad(f)(args[0].astype(np.float32), *args[1:])
    assert got.dtype == np.float32, f"float32 input, {got.dtype} gradient"
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), want, rtol=rtol, atol=atol)


def probe_tests(probes, quick=None):
    """``(test_probe, test_float32)`` for a probe module's ``PROBES`` (name -> ``(f, args,
    second)``): each probe by :func:`check_probe`, and by :func:`check_float32` those whose
    first argument is an array. The module binds them to those names, which pytest
    collects: ``test_probe, test_float32 = probe_tests(PROBES)``. ``quick``: the second
    order and the float32 checks of only that many probes each, spread evenly over the
    names (every one under ``pytest --long``: tests/sweeps.py), the gradient of all."""
    import pytest
    from sweeps import sweep

    def sample(names):
        return names if quick is None else sweep(names, quick=quick)

    seconds = set(sample(sorted(k for k, (_, _, second) in probes.items() if second)))

    @pytest.mark.parametrize("name", sorted(probes))
    def test_probe(name):
        f, args, _ = probes[name]
        check_probe(f, *args, second=name in seconds)

    arrays = sample(
        sorted(k for k, (_, args, _) in probes.items() if isinstance(args[0], np.ndarray))
    )

    @pytest.mark.parametrize("name", arrays)
    def test_float32(name):
        f, args, _ = probes[name]
        check_float32(f, *args)

    return test_probe, test_float32


def refusal_test(refused):
    """``test_refused`` for a probe module's ``REFUSED`` (name -> ``(f, args, says)``):
    each refused by :func:`check_refusal` with what its message must say."""
    import pytest

    @pytest.mark.parametrize("name", sorted(refused))
    def test_refused(name):
        f, args, says = refused[name]
        check_refusal(f, *args, says=says)

    return test_refused
