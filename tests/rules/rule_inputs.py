"""Deterministic test inputs inside a function's domain."""

from __future__ import annotations

import numpy as np

from pullback.testing import DOMAINS

FLOATS = (np.float64, np.float32)


def rng(seed=0):
    return np.random.default_rng(seed)


def make(domain="real", shape=(3,), dtype=np.float64, seed=0, avoid=(), margin=0.1):
    """Uniform values in ``domain`` (a DOMAINS name or (lo, hi)), ``margin`` away from
    each point of ``avoid``; ``domain="distinct"`` gives well-separated values."""
    g = rng(seed)
    if domain == "distinct":
        n = int(np.prod(shape))
        x = (g.permutation(n) - n / 2) * 0.37 + g.uniform(-0.05, 0.05, n)
        return _cast(x.reshape(shape), dtype)
    if isinstance(domain, str):
        lo, hi = DOMAINS[domain]
        if domain == "nonzero":
            avoid = tuple(avoid) + (0.0,)
    else:
        lo, hi = domain
    x = g.uniform(lo, hi, size=shape)
    for p in avoid:
        close = np.abs(x - p) < margin
        x = np.where(close, p + np.where(x >= p, margin, -margin) * 1.5, x)
    return _cast(x, dtype)


def make_complex(shape=(3,), dtype=np.complex128, seed=0, scale=1.0):
    g = rng(seed)
    z = g.uniform(-scale, scale, shape) + 1j * g.uniform(-scale, scale, shape)
    return np.asarray(z, dtype=dtype)


def spd(n, dtype=np.float64, seed=0, batch=()):
    """A well-conditioned symmetric positive definite matrix (or a stack of them)."""
    g = rng(seed)
    a = g.standard_normal(batch + (n, n))
    m = a @ np.swapaxes(a, -1, -2) / n + np.eye(n)
    return m.astype(dtype)


def well_conditioned(shape, dtype=np.float64, seed=0):
    """A random matrix (or stack) plus a multiple of the identity: far from singular."""
    g = rng(seed)
    a = g.standard_normal(shape) * 0.3
    n = min(shape[-2:])
    eye = np.zeros(shape[-2:])
    eye[np.arange(n), np.arange(n)] = 1.5
    return (a + eye).astype(dtype)


def _cast(x, dtype):
    if dtype is float:
        return float(x) if np.ndim(x) == 0 else x
    return np.asarray(x, dtype=dtype)


def name_of(fn):
    return getattr(fn, "__name__", None) or repr(fn)
