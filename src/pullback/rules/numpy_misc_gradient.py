"""``np.gradient``'s pullback as a transformable function, so that second derivatives run
through it (with respect to ``f`` and the spacings: scalars or coordinate arrays, any
``axis=``, ``edge_order=1`` or 2).

``np.gradient(f, h)`` along one axis is ``D(h) f`` with ``D`` a banded matrix (three
weights a row: central differences inside, one-sided ones at the edges) that depends on
the spacing. Its pullback is built from two primitives of this module:

* :func:`gradient_adjoint` ``(g, h) = D(h)^T g``, linear in ``g``. Its pullback is
  ``D(h) dy`` (``np.gradient`` itself) for ``g`` and the spacing's cotangent of
  ``np.gradient(dy, h)`` with cotangent ``g`` for ``h`` (``<D^T g, dy> = <g, D dy>``);
  both are transformable, so derivatives of any order follow.
* :func:`spacing_cotangent`: for a scalar ``h`` (``D = D(1) / h``) it is
  ``-<D f, g> / h``, written in the differentiable subset; for coordinates it is
  :func:`coordinate_cotangent`, computed by complex steps of ``np.gradient`` itself (its
  weights are rational functions of the coordinates, so a complex step is exact to
  rounding). That primitive's own rule gives exact derivatives with respect to ``f`` and
  ``g`` (it is bilinear in them: complex steps again) and refuses one with respect to the
  coordinates (``np.gradient`` differentiated twice in its coordinates) with a
  NotDifferentiableError, only when that derivative is used.
"""

from __future__ import annotations

import numpy as np

from ..backends import is_dask
from ..registry import transformable
from ..tangents import NO_TANGENT, ZERO, densify, unbroadcast
from .numpy_misc import _band_transpose, _coordinate_cotangent, _gradient_band
from .scipy_stats_common import refused
from .user_function_calls import has_tangent


def gradient_adjoint(g, spacing, axis, edge_order):
    """``D(spacing)^T g`` along ``axis``: the transpose of ``np.gradient``'s matrix (a
    scalar spacing or coordinates, real or complex)."""
    if not is_dask(g):
        g = np.asarray(g)
    band = _gradient_band(g.shape[axis], spacing, edge_order)
    return _band_transpose(g, band, axis)


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


def coordinate_cotangent(f, coords, g, axis, edge_order):
    """The cotangent of the coordinates ``coords`` in ``np.gradient(f, coords, axis=axis)``
    whose output has the cotangent ``g`` (complex steps of np.gradient)."""
    return _coordinate_cotangent(f, np.asarray(coords, dtype=np.float64), g, axis, edge_order)


def _coordinate_cotangent_rrule(f, coords, g, axis, edge_order):
    y = coordinate_cotangent(f, coords, g, axis, edge_order)
    x = np.asarray(coords, dtype=np.float64)

    def coordinate_cotangent_pullback(dy):
        if dy is ZERO:
            return ZERO, ZERO, ZERO, NO_TANGENT, NO_TANGENT
        again = NO_TANGENT
        if has_tangent(coords):
            again = refused(
                "np.gradient twice with respect to its coordinates",
                "its coordinates' cotangent is computed by complex steps, which give "
                "first derivatives only",
            )
        w = np.asarray(densify(dy), dtype=np.float64)
        top = float(np.max(np.abs(w)))
        if top == 0.0:
            return np.zeros_like(f), again, np.zeros_like(g), NO_TANGENT, NO_TANGENT
        if np.iscomplexobj(f) or np.iscomplexobj(g):
            mixed = refused(
                "np.gradient of complex values twice with respect to its coordinates",
                "its complex steps need real values",
            )
            return mixed, again, mixed, NO_TANGENT, NO_TANGENT
        # <dy, c(f, g)> = <g, D'(x)[dy] f>, D'(x)[dy] = Im D(x + i eps dy) / eps (exact:
        # D's weights are rational in x)
        eps = 1e-30 * max(1.0, float(np.max(np.abs(x)))) / top
        stepped = x + 1j * eps * w
        dg = np.imag(np.gradient(np.asarray(f) + 0j, stepped, axis=axis, edge_order=edge_order))
        df = np.imag(gradient_adjoint(np.asarray(g) + 0j, stepped, axis, edge_order))
        return (
            unbroadcast(df / eps, f),
            again,
            unbroadcast(dg / eps, g),
            NO_TANGENT,
            NO_TANGENT,
        )

    return y, coordinate_cotangent_pullback


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
    df = np.zeros(np.shape(f), np.result_type(f, 1.0))
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
    reg.register(coordinate_cotangent, _coordinate_cotangent_rrule, family=family, trusted=True)
    reg.non_differentiable(gradient_axes, family=family, trusted=True)
    reg.set_pullback_function(np.gradient, gradient_pullback)
