"""Matrix helpers shared by the linalg rules (linalg.py, linalg_norms.py)."""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedCallError
from ._util import conj


def _t(x):
    return np.swapaxes(x, -1, -2)


def _h(x):
    return conj(np.swapaxes(x, -1, -2))


def _real_only(name, *arrays):
    for a in arrays:
        if np.iscomplexobj(a):
            raise UnsupportedCallError(
                f"pullback: the rule for numpy.linalg.{name} supports real matrices only"
            )


def _diag_embed(v):
    """``(..., n) -> (..., n, n)`` diagonal matrices."""
    v = np.asarray(v)
    return v[..., :, None] * np.eye(v.shape[-1], dtype=v.dtype)


def _diag(m):
    return np.diagonal(m, axis1=-2, axis2=-1)


def _on_triangle(x, lower=True):
    """The cotangent for a function that reads one triangle of its symmetric argument,
    from a (not necessarily symmetric) gradient ``x`` for symmetric perturbations."""
    full = x + _t(x)
    tri = np.tril(full) if lower else np.triu(full)
    return tri - _diag_embed(_diag(x))


def _inverse_gap(w):
    """``F[..., i, j] = 1 / (w_j - w_i)`` off the diagonal; 0 on it and where equal."""
    gap = w[..., None, :] - w[..., :, None]
    zero = gap == 0
    return np.where(zero, 0.0, 1.0 / np.where(zero, 1.0, gap))
