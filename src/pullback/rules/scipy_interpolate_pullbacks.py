"""Transformable pieces of the ``scipy.interpolate.interp1d`` rules (scipy_interpolate.py).

Every kind of ``interp1d`` is linear in its data: ``F(q) = sum_j W_j(q) y_j`` along the
interpolation axis, with weights ``W`` that depend on the sorted knots ``x`` and the query
points ``q`` only (0 where a constant ``fill_value`` replaces the value). So

* ``ybar = W(q)^T dy`` and ``qbar = <dy, W'(q) y>``: for ``linear`` and ``slinear``,
  :func:`linear_weights` writes ``W`` and ``W'`` out with ``x`` and ``q``; for the other
  kinds :func:`interp_basis` makes them (and the higher derivatives in ``q``) by SciPy
  itself, as the interpolant of the identity (``interp1d(x, eye(n))``: the same kind,
  fill and extrapolation);
* ``xbar``: for ``linear`` and ``slinear``, ``F(q) = y_lo + s (q - x_lo)`` on a segment,
  whose derivatives in ``x_lo`` and ``x_hi`` are ``-s W_lo`` and ``-s W_hi``, so
  ``xbar = -W^T qbar``; 0 for the piecewise constant kinds (``nearest``, ``nearest-up``,
  ``previous``, ``next``, ``zero``); refused for the splines (``quadratic``, ``cubic``, an
  integer order): their knots' derivative needs the B-splines' derivatives in their knots.
  The refusal is a :class:`~._util.Refused` cotangent, raised only when ``x`` is
  differentiated.

The call's pullback is a closure: a second derivative through ``f(q)`` is refused (by the
engine: the pullback reads the object's points and data, which it cannot follow as
moving values). The constructor's pullback, a permutation of the object's cotangent, is
transformable.
"""

from __future__ import annotations

import numpy as np
import scipy.interpolate as si  # this module is imported once scipy.interpolate is

from ..registry import transformable
from ._util import NO_TANGENT, ZERO, Refused

LINEAR = ("linear", "slinear")
CONSTANT = ("nearest", "nearest-up", "previous", "next", "zero")


class KnotsRefused(Refused):
    """The knots' refused cotangent: two of them add to one (an interpolant called twice
    gives its knots two), anything else that uses it raises."""

    def __add__(self, other):
        if isinstance(other, KnotsRefused):
            return self
        return self._raise()

    __radd__ = __add__


SPLINE_KNOTS = (
    "scipy.interpolate.interp1d with respect to its points x for a spline kind "
    "(quadratic, cubic, an integer order)",
    "the knots' derivative of an interpolating spline is not implemented; kinds linear, "
    "slinear, nearest, previous, next and zero differentiate in x.",
)


def kind_of(obj):
    """The kind ``obj`` was made with (interp1d keeps ``"spline"`` for every spline kind,
    and the order in its spline): ``"zero"``, ``"slinear"`` or the order from 2 up."""
    if obj._kind != "spline":
        return obj._kind
    return {0: "zero", 1: "slinear"}.get(obj._spline.k, obj._spline.k)


def basis_interpolant(obj):
    """``interp1d`` of the identity with ``obj``'s knots, kind and extrapolation (a 0 fill
    where ``obj`` fills with constants): its value at ``q`` is ``W(q)``."""
    n = len(obj.x)
    extrapolate = isinstance(obj._fill_value_orig, str) and obj._fill_value_orig == "extrapolate"
    fill = "extrapolate" if extrapolate else 0.0
    return si.interp1d(
        obj.x, np.eye(n), kind=kind_of(obj), axis=0, bounds_error=False, fill_value=fill,
        assume_sorted=True,
    )  # fmt: skip


def interp_basis(obj, q, nu):
    """``d^nu W / dq^nu`` at ``q`` for the interpolant ``obj``: shape ``q.shape + (n,)``."""
    q = np.asarray(q, dtype=np.float64)
    kind, x, n = kind_of(obj), obj.x, len(obj.x)
    if nu == 0:
        return basis_interpolant(obj)(q)
    if kind in CONSTANT or (kind in LINEAR and nu > 1):
        return np.zeros(q.shape + (n,))
    inside = np.ones(q.shape, dtype=bool)
    if not obj._extrapolate:
        inside = (q >= x[0]) & (q <= x[-1])
    if kind == "linear":  # the segment interp1d's linear kind evaluates (its searchsorted)
        hi = np.clip(np.searchsorted(x, q), 1, n - 1)
        slope = 1.0 / (x[hi] - x[hi - 1])
        out = np.zeros(q.shape + (n,))
        np.put_along_axis(out, (hi - 1)[..., None], -slope[..., None], axis=-1)
        np.put_along_axis(out, hi[..., None], slope[..., None], axis=-1)
    else:
        out = basis_interpolant(obj)._spline(q, nu)
    return np.where(inside[..., None], out, 0.0)


def refuse_knots(obj, message):
    """Raise for a derivative in the knots of ``obj`` that the rules do not give (none
    for the piecewise constant kinds, whose weights do not move with them)."""
    if kind_of(obj) not in CONSTANT:
        Refused(*message)._raise()


def is_zero(t) -> bool:
    return t is ZERO or t is NO_TANGENT or t is None


def q_first(dy, axis, qdim):
    """``dy`` (shape ``y.shape[:axis] + q.shape + y.shape[axis+1:]``) with the query axes
    first."""
    return np.moveaxis(dy, list(range(axis, axis + qdim)), list(range(qdim)))


def call_cotangents(dy, obj, q):
    """``({"x": xbar, "y": ybar}, qbar)`` for ``obj(q)`` (the call rule's pullback); ``x``
    and ``y`` are the sorted points and the data as the object keeps them."""
    axis = obj.axis
    qdim = np.ndim(q)
    n = len(obj.x)
    x = obj.x
    data = np.moveaxis(obj.y, axis, 0)  # (n, rest...)
    rest = np.shape(data)[1:]
    if kind_of(obj) in LINEAR:  # written out, so that they move with the knots too
        w, w1 = linear_weights(obj, x, q)
    else:
        w, w1 = interp_basis(obj, q, 0), interp_basis(obj, q, 1)  # q.shape + (n,)
    g = q_first(dy, axis, qdim)  # q.shape + rest
    m = int(np.size(q))
    g2 = np.reshape(g, (m, -1))
    w2 = np.reshape(w, (m, n))
    ybar = np.moveaxis(np.reshape(np.transpose(w2) @ g2, (n,) + rest), 0, axis)
    slopes = np.reshape(w1, (m, n)) @ np.reshape(data, (n, -1))  # (m, R)
    qbar = np.reshape(np.sum(g2 * slopes, axis=1), np.shape(q))
    xbar = ZERO
    if kind_of(obj) not in CONSTANT:
        xbar = linear_knots(obj, w, qbar)
    return {"x": xbar, "y": ybar}, qbar


def linear_weights(obj, x, q):
    """``(W, W')`` of the ``linear`` and ``slinear`` kinds written with ``x`` and ``q``:
    on the segment ``[x_lo, x_hi]`` that interp1d evaluates, ``W_lo = (x_hi - q) / h``,
    ``W_hi = (q - x_lo) / h`` and ``W' = -1/h, 1/h``; 0 where a constant fills."""
    lo, inside = segments(obj, q)
    n = len(obj.x)
    e_lo = one_hot(lo, n)
    e_hi = one_hot(lo + 1, n)
    x_lo = x[lo]
    h = x[lo + 1] - x_lo
    t = (q - x_lo) / h
    w = ((1.0 - t)[..., None] * e_lo + t[..., None] * e_hi) * inside[..., None]
    w1 = ((e_hi - e_lo) / h[..., None]) * inside[..., None]
    return w, w1


def segments(obj, q):
    """``(lo, inside)``: the segment interp1d's linear kind evaluates at each query point
    (its ``searchsorted``) and where no constant fill replaces the value (floats)."""
    x = obj.x
    q = np.asarray(q, dtype=np.float64)
    hi = np.clip(np.searchsorted(x, q), 1, len(x) - 1)
    inside = np.ones(q.shape)
    if not obj._extrapolate:
        inside = ((q >= x[0]) & (q <= x[-1])).astype(np.float64)
    return hi - 1, inside


def one_hot(index, n):
    """``eye(n)[index]``: the rows that pick the points ``index``."""
    return np.eye(n)[index]


def linear_knots(obj, w, qbar):
    """``xbar = -W^T qbar`` for ``linear`` and ``slinear`` (the module docstring); a
    spline kind's is refused (a :class:`~._util.Refused`, raised only where the knots are
    differentiated)."""
    if kind_of(obj) not in LINEAR:
        return spline_knots()
    return -np.tensordot(qbar, w, axes=np.ndim(qbar))


def spline_knots():
    """The refused knots' cotangent of a spline kind."""
    return KnotsRefused(*SPLINE_KNOTS)


@transformable
def interp1d_pullback(
    dobj, x, y, kind="linear", axis=-1, copy=True, bounds_error=None, fill_value=np.nan,
    assume_sorted=False,
):  # fmt: skip
    # interp1d's own parameters: the object's cotangent (a dict of its attributes x and y,
    # sorted) as the cotangents of the points and the data given
    if dobj is ZERO:
        return (ZERO, ZERO) + (NO_TANGENT,) * 6
    cx = ZERO
    if "x" in dobj:
        cx = unsorted(dobj["x"], x, 0, assume_sorted)
    cy = ZERO
    if "y" in dobj:
        cy = unsorted(dobj["y"], x, axis, assume_sorted)
    return (cx, cy) + (NO_TANGENT,) * 6


@transformable
def unsorted(c, x, axis, assume_sorted):
    """The cotangent ``c`` of the sorted points (or of the data along ``axis``) as the
    cotangent of the arguments in their given order (interp1d sorts with a stable argsort
    unless ``assume_sorted``)."""
    if assume_sorted or passes_through(c):
        return c
    return np.take(c, unsorting(x), axis=axis)


def passes_through(c) -> bool:
    """``ZERO``, ``NO_TANGENT`` or a refused cotangent: nothing to reorder."""
    return c is ZERO or c is NO_TANGENT or isinstance(c, Refused)


def unsorting(x):
    """The permutation that undoes interp1d's sort of ``x``."""
    return np.argsort(np.argsort(np.asarray(x), kind="mergesort"))


NON_DIFFERENTIABLE = (passes_through, unsorting)


def register(reg, family):
    """The helpers' entries (the constructor's pullback function runs them)."""
    reg.non_differentiable(*NON_DIFFERENTIABLE, family=family, trusted=True)
