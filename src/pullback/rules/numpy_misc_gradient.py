"""``np.gradient``'s pullback as a transformable function, so that second derivatives run
through it (with respect to ``f`` and the spacings: scalars or coordinate arrays, any
``axis=``, ``edge_order=1`` or 2).

``np.gradient(f, h)`` along one axis is ``D(h) f`` with ``D`` a banded matrix (three
weights a row: central differences inside, one-sided ones at the edges) that depends on
the spacing. Its pullback is built from two functions of this module:

* :func:`gradient_adjoint` ``(g, h) = D(h)^T g``, linear in ``g``. Its pullback is
  ``D(h) dy`` (``np.gradient`` itself) for ``g`` and the spacing's cotangent of
  ``np.gradient(dy, h)`` with cotangent ``g`` for ``h`` (``<D^T g, dy> = <g, D dy>``);
  both are transformable, so derivatives of any order follow.
* :func:`spacing_cotangent`: for a scalar ``h`` (``D = D(1) / h``) it is
  ``-<D f, g> / h``, written in the differentiable subset; for coordinates it is
  :func:`coordinate_cotangent`, NumPy's nonuniform-spacing weights differentiated by hand
  in the spacings (real arithmetic in the differentiable subset: derivatives of any order
  in ``f``, ``g`` and the coordinates follow).

On Dask the cotangents stay lazy (the band weights are NumPy arrays from the spacing; a
1-D Dask array's ``np.gradient`` is a list of one array, whose cotangent is a list too).
"""

from __future__ import annotations

import numpy as np

from ..backends import is_dask
from ..list_operands import dense_operand
from ..registry import transformable
from ..tangents import NO_TANGENT, ZERO, densify, unbroadcast
from .user_function_calls import has_tangent


def gradient_band(n, spacing, edge_order):
    """``C[i, d + 2]``: the weight of ``f[i + d]`` in ``gradient(f)[i]`` (1-d, |d| <= 2)."""
    probes = np.stack(
        [
            # complex unit vectors for complex(-stepped) coordinates, whose imaginary
            # part np.gradient would drop from real ones
            np.gradient(
                (np.arange(n) % 5 == r).astype(np.result_type(spacing, np.float64)),
                spacing,
                edge_order=edge_order,
            )
            for r in range(5)
        ]
    )
    i = np.arange(n)
    cols = []
    for d in range(-2, 3):
        j = i + d
        valid = (j >= 0) & (j < n)
        cols.append(np.where(valid, probes[np.mod(j, 5), i], 0.0))
    return np.stack(cols, axis=-1)


def _shift(v, d, axis):
    """``out[j] = v[j - d]`` along ``axis`` (zeros shifted in)."""
    if d == 0:
        return v
    n = v.shape[axis]
    zshape = list(v.shape)
    zshape[axis] = min(abs(d), n)
    z = np.zeros(zshape, dtype=v.dtype)
    index = [slice(None)] * v.ndim
    if d > 0:
        index[axis] = slice(0, max(n - d, 0))
        return np.concatenate([z, v[tuple(index)]], axis=axis)
    index[axis] = slice(-d, n)
    return np.concatenate([v[tuple(index)], z], axis=axis)


def band_transpose(g, band, axis):
    """``dx[j] = sum_d band[j - d, d] * g[j - d]`` along ``axis``."""
    nd = g.ndim
    view = [1] * nd
    view[axis] = band.shape[0]
    total = None
    for k, d in enumerate(range(-2, 3)):
        term = _shift(np.reshape(band[:, k], view) * g, d, axis)
        total = term if total is None else total + term
    return total


def gradient_adjoint(g, spacing, axis, edge_order):
    """``D(spacing)^T g`` along ``axis``: the transpose of ``np.gradient``'s matrix (a
    scalar spacing or coordinates, real or complex)."""
    if not is_dask(g):
        g = np.asarray(g)
    band = gradient_band(g.shape[axis], spacing, edge_order)
    return band_transpose(g, band, axis)


def _gradient_adjoint_rrule(g, spacing, axis, edge_order):
    y = gradient_adjoint(g, spacing, axis, edge_order)

    def gradient_adjoint_closure(dy):
        if dy is ZERO:
            return ZERO, ZERO, NO_TANGENT, NO_TANGENT
        return gradient_adjoint_pullback(dy, g, spacing, axis, edge_order)

    return y, gradient_adjoint_closure


@transformable
def gradient_adjoint_pullback(dy, g, spacing, axis, edge_order):
    d = densify(dy)
    dg = unbroadcast(np.gradient(d, spacing, axis=axis, edge_order=edge_order), g)
    dspacing = NO_TANGENT
    if has_tangent(spacing):
        dspacing = unbroadcast(spacing_cotangent(d, spacing, g, axis, edge_order), spacing)
    return dg, dspacing, NO_TANGENT, NO_TANGENT


@transformable
def spacing_cotangent(f, spacing, g, axis, edge_order):
    """The cotangent of ``spacing`` in ``np.gradient(f, spacing, axis=axis)`` whose output
    has the cotangent ``g``."""
    if np.ndim(spacing) == 0:
        # y = D(1) f / h:  dh = -<y, g> / h
        y = np.gradient(f, spacing, axis=axis, edge_order=edge_order)
        return -np.sum(np.real(np.conj(y) * g)) / spacing
    return coordinate_cotangent(f, spacing, g, axis, edge_order)


@transformable
def _rows(a, axis, n):
    """``a`` with ``axis`` last, as ``(-1, n)`` rows (the other axes flattened)."""
    return np.reshape(np.moveaxis(a, axis, -1), (-1, n))


@transformable
def _paired(G, F, i, d, n):
    """``sum over rows of Re(conj(G[:, i]) F[:, i + d])`` for ``i`` in the slice ``i``."""
    gi = G[:, i[0] : n + i[1]]
    fi = F[:, i[0] + d : n + i[1] + d]
    return np.sum(np.real(np.conj(gi) * fi), axis=0)


@transformable
def coordinate_cotangent(f, coords, g, axis, edge_order):
    """The cotangent of the coordinates ``coords`` in ``np.gradient(f, coords, axis=axis)``
    whose output has the cotangent ``g``: NumPy's nonuniform-spacing weights differentiated
    by hand with respect to the spacings ``h = diff(coords)``, then ``diff`` transposed.
    Real arithmetic in the differentiable subset: derivatives of any order follow.

    Inside (``h1, h2`` the spacings left and right of point ``i``, ``s = h1 + h2``) the
    weights of ``f[i-1], f[i], f[i+1]`` are ``-h2/(h1 s)``, ``1/h1 - 1/h2``, ``h1/(h2 s)``;
    at the edges one-sided differences (``edge_order`` 1 or 2)."""
    n = np.shape(coords)[0]
    F = _rows(f, axis, n)
    G = _rows(g, axis, n)
    h = np.diff(coords) * 1.0
    # inside: the pairings of g[i] with f[i-1], f[i], f[i+1], i = 1 .. n-2
    pm = _paired(G, F, (1, -1), -1, n)
    p0 = _paired(G, F, (1, -1), 0, n)
    pp = _paired(G, F, (1, -1), 1, n)
    h1 = h[:-1]
    h2 = h[1:]
    s = h1 + h2
    d1 = pm * h2 * (s + h1) / (h1 * s) ** 2 - p0 / h1**2 + pp / s**2
    d2 = -pm / s**2 + p0 / h2**2 - pp * h1 * (s + h2) / (h2 * s) ** 2
    zero = h[:1] * 0.0
    dh = np.concatenate([d1, zero]) + np.concatenate([zero, d2])
    # the edges: g[0] with f[0..2], g[-1] with f[-3..-1]
    q0 = _paired(G, F, (0, 1 - n), 0, n)
    q1 = _paired(G, F, (0, 1 - n), 1, n)
    r1 = _paired(G, F, (n - 1, 0), -1, n)
    r2 = _paired(G, F, (n - 1, 0), 0, n)
    if edge_order == 1:
        first = -(q1 - q0) / h[:1] ** 2
        last = -(r2 - r1) / h[-1:] ** 2
        dh = dh + np.concatenate([first, h[1:] * 0.0]) + np.concatenate([h[:-1] * 0.0, last])
    else:
        q2 = _paired(G, F, (0, 1 - n), 2, n)
        r0 = _paired(G, F, (n - 1, 0), -2, n)
        a1, a2 = h[:1], h[1:2]
        sa = a1 + a2
        e1 = q0 * (1 / sa**2 + 1 / a1**2) - q1 / a1**2 - q2 / sa**2
        e2 = q0 / sa**2 - q1 / a2**2 + q2 * a1 * (sa + a2) / (a2 * sa) ** 2
        b1, b2 = h[-2:-1], h[-1:]
        sb = b1 + b2
        l1 = -r0 * b2 * (sb + b1) / (b1 * sb) ** 2 + r1 / b1**2 - r2 / sb**2
        l2 = r0 / sb**2 + r1 / b2**2 - r2 * (1 / sb**2 + 1 / b2**2)
        tail = h[2:] * 0.0
        head = h[:-2] * 0.0
        dh = dh + np.concatenate([e1, e2, tail]) + np.concatenate([head, l1, l2])
    # h = diff(x): dx[j] = dh[j-1] - dh[j]
    return np.concatenate([-dh[:1], dh[:-1] - dh[1:], dh[-1:]])


def gradient_axes(ndim, axis):
    """The axes ``np.gradient`` differentiates along, in its order."""
    if axis is None:
        return tuple(range(ndim))
    if np.ndim(axis) == 0:
        return (int(axis) % ndim,)
    return tuple(int(a) % ndim for a in axis)


@transformable
def gradient_pullback(dy, f, *varargs, axis=None, edge_order=1):
    axes = gradient_axes(np.ndim(f), axis)
    parts = dy
    if len(axes) == 1 and not isinstance(dy, (list, tuple)):
        # (a list of one, on Dask: its 1-D np.gradient returns one)
        parts = (dy,)
    df = np.zeros(np.shape(f), np.result_type(dense_operand(f), 1.0))
    dspace = ()
    for k in range(len(axes)):
        h = 1.0
        if len(varargs) == 1:
            h = varargs[0]
        if len(varargs) > 1:
            h = varargs[k]
        g = parts[k]
        ds = 0.0
        if g is not ZERO:
            g = densify(g)
            df = df + gradient_adjoint(g, h, axes[k], edge_order)
            if len(varargs) > 0:
                ds = spacing_cotangent(f, h, g, axes[k], edge_order)
        dspace = dspace + (ds,)
    out = (unbroadcast(df, f),)
    if len(varargs) == 1:
        # one spacing for every axis: the sum of their cotangents
        total = dspace[0]
        for k in range(1, len(dspace)):
            total = total + dspace[k]
        dh = NO_TANGENT
        if has_tangent(varargs[0]):
            dh = unbroadcast(total, varargs[0])
        return out + (dh,)
    for k in range(len(varargs)):
        dh = NO_TANGENT
        if has_tangent(varargs[k]):
            dh = unbroadcast(dspace[k], varargs[k])
        out = out + (dh,)
    return out


def register(reg, family):
    reg.register(gradient_adjoint, _gradient_adjoint_rrule, family=family, trusted=True)
    reg.set_pullback_function(gradient_adjoint, gradient_adjoint_pullback)
    reg.non_differentiable(gradient_axes, family=family, trusted=True)
    reg.set_pullback_function(np.gradient, gradient_pullback)
