"""Transformable pieces of the ``scipy.interpolate.interp1d`` rules (scipy_interpolate.py).

Every kind of ``interp1d`` is linear in its data: ``F(q) = sum_j W_j(q) y_j`` along the
interpolation axis, with weights ``W`` that depend on the sorted knots ``x`` and the query
points ``q`` only (0 where a constant ``fill_value`` replaces the value). So

* ``ybar = W(q)^T dy`` and ``qbar = <dy, W'(q) y>``: for ``linear`` and ``slinear``,
  :func:`linear_weights` writes ``W`` and ``W'`` out with ``x`` and ``q``; for the other
  kinds :func:`basis_weights` makes them (and the higher derivatives in ``q``) by SciPy
  itself, as the interpolant of the identity (``interp1d(x, eye(n))``: the same kind,
  fill and extrapolation), a primitive whose rule is the next derivative in ``q``;
* ``xbar``: for ``linear`` and ``slinear``, ``F(q) = y_lo + s (q - x_lo)`` on a segment,
  whose derivatives in ``x_lo`` and ``x_hi`` are ``-s W_lo`` and ``-s W_hi``, so
  ``xbar = -W^T qbar``; 0 for the piecewise constant kinds (``nearest``, ``nearest-up``,
  ``previous``, ``next``, ``zero``); refused for the splines (``quadratic``, ``cubic``, an
  integer order): their knots' derivative needs the B-splines' derivatives in their knots.
  The refusal is a :class:`~._util.Refused` cotangent, raised only when ``x`` is
  differentiated (at any order: :func:`basis_weights`' knots too).

The call's pullback :func:`interp1d_call_pullback` is written in the differentiable
subset and reads the object's data as ``obj.x`` and ``obj.y``, the attributes the
constructor's rule declares (``result_attributes``): marked
``__pullback_receiver_cotangent__``, its derivative reaches the object (its cotangent the
dict ``{"x", "y"}``) and through the constructor's pullback the arguments, so the mixed
second derivatives (``d2/dq dy``) are those of the interpolant (unfollowed_objects.py).
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


def refuse_knots(obj, message):
    """Raise for a derivative in the knots of ``obj`` that the rules do not give (none
    for the piecewise constant kinds, whose weights do not move with them)."""
    if kind_of(obj) not in CONSTANT:
        Refused(*message)._raise()


def is_zero(t) -> bool:
    return t is ZERO or t is NO_TANGENT or t is None


def call_config(obj):
    """``(kind, axis, extrapolate)`` of the interpolant ``obj``: what its call's pullback
    reads of it besides its data (constants)."""
    return kind_of(obj), obj.axis % np.ndim(obj.y), bool(obj._extrapolate)


def basis_weights(x, q, kind, extrapolate, nu):
    """``d^nu W / dq^nu`` at ``q`` for the knots ``x`` and ``kind``, by SciPy's interpolant
    of the identity with them (0 outside ``[x[0], x[-1]]`` unless ``extrapolate``):
    shape ``q.shape + (n,)``."""
    x = np.asarray(x, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    n = len(x)
    if kind in CONSTANT and nu > 0:
        return np.zeros(q.shape + (n,))
    fill = "extrapolate" if extrapolate else 0.0
    basis = si.interp1d(x, np.eye(n), kind=kind, axis=0, bounds_error=False,
                        fill_value=fill, assume_sorted=True)  # fmt: skip
    if nu == 0:
        return basis(q)
    out = basis._spline(q, nu)
    if not extrapolate:
        out = np.where(((q >= x[0]) & (q <= x[-1]))[..., None], out, 0.0)
    return out


def knots_cotangent(kind):
    """The cotangent of the knots of :func:`basis_weights`: 0 for the piecewise constant
    kinds (their weights do not move with them a.e.), refused for the splines."""
    return ZERO if kind in CONSTANT else KnotsRefused(*SPLINE_KNOTS)


@transformable
def basis_weights_pullback(dw, x, q, kind, extrapolate, nu):
    # each query point's weights depend on it alone: qbar = <dw, dW/dq> per point
    qbar = np.sum(dw * basis_weights(x, q, kind, extrapolate, nu + 1), axis=-1)
    return knots_cotangent(kind), qbar, NO_TANGENT, NO_TANGENT, NO_TANGENT


def _basis_weights_rrule(x, q, kind, extrapolate, nu):
    w = basis_weights(x, q, kind, extrapolate, nu)

    def basis_weights_closure(dw):
        if dw is ZERO:
            return ZERO, ZERO, NO_TANGENT, NO_TANGENT, NO_TANGENT
        return basis_weights_pullback(dw, x, q, kind, extrapolate, nu)

    return w, basis_weights_closure


def segments(x, q, extrapolate):
    """``(lo, inside)``: the segment interp1d's linear kind evaluates at each query point
    (its ``searchsorted``) and where no constant fill replaces the value (floats)."""
    q = np.asarray(q, dtype=np.float64)
    hi = np.clip(np.searchsorted(x, q), 1, len(x) - 1)
    inside = np.ones(q.shape)
    if not extrapolate:
        inside = ((q >= x[0]) & (q <= x[-1])).astype(np.float64)
    return hi - 1, inside


def one_hot(index, n):
    """``eye(n)[index]``: the rows that pick the points ``index``."""
    return np.eye(n)[index]


@transformable
def linear_weights(x, q, extrapolate):
    """``(W, W')`` of the ``linear`` and ``slinear`` kinds written with ``x`` and ``q``:
    on the segment ``[x_lo, x_hi]`` that interp1d evaluates, ``W_lo = (x_hi - q) / h``,
    ``W_hi = (q - x_lo) / h`` and ``W' = -1/h, 1/h``; 0 where a constant fills."""
    lo, inside = segments(x, q, extrapolate)
    n = len(x)
    e_lo = one_hot(lo, n)
    e_hi = one_hot(lo + 1, n)
    x_lo = x[lo]
    h = x[lo + 1] - x_lo
    t = (q - x_lo) / h
    w = ((1.0 - t)[..., None] * e_lo + t[..., None] * e_hi) * inside[..., None]
    w1 = ((e_hi - e_lo) / h[..., None]) * inside[..., None]
    return w, w1


@transformable
def weights(x, q, kind, extrapolate):
    """``(W, W')`` at ``q``, shape ``q.shape + (n,)`` each."""
    if kind in LINEAR:  # written out, so that they move with the knots too
        return linear_weights(x, q, extrapolate)
    return basis_weights(x, q, kind, extrapolate, 0), basis_weights(x, q, kind, extrapolate, 1)


def q_first(axis, ndim, qdim):
    """The axes of ``dy`` (``y.shape[:axis] + q.shape + y.shape[axis+1:]``, ``ndim`` of
    them) with the query axes first: the order for ``np.transpose``."""
    front = list(range(axis, axis + qdim))
    return tuple(front + [k for k in range(ndim) if k not in front])


def data_first(axis, ndim):
    """The axes of the data with the interpolation axis first, and back."""
    axis = axis % ndim
    order = [axis] + [k for k in range(ndim) if k != axis]
    return tuple(order), tuple(int(k) for k in np.argsort(order))


def float_dtype(a):
    """The floating dtype of a cotangent for ``a`` (float64 for a Python number)."""
    dtype = np.result_type(a)
    return dtype if dtype.kind == "f" else np.dtype(np.float64)


@transformable
def interp1d_call_pullback(dy, obj, q):
    """``({"x": xbar, "y": ybar}, qbar)`` of ``obj(q)`` (``x`` and ``y``: the sorted
    points and the data as the object keeps them); see the module docstring."""
    if dy is ZERO:
        return ZERO, ZERO
    x = obj.x
    y = obj.y
    kind, axis, extrapolate = call_config(obj)
    n = len(x)
    qdim = np.ndim(q)
    m = int(np.size(q))
    w, w1 = weights(x, q, kind, extrapolate)
    order, back = data_first(axis, np.ndim(y))
    data = np.reshape(np.transpose(y, order), (n, -1))  # (n, R)
    g = np.reshape(np.transpose(np.asarray(dy), q_first(axis, np.ndim(dy), qdim)), (m, -1))
    w2 = np.reshape(w, (m, n))
    rest = data_shape(y, order)
    ybar = np.transpose(np.reshape(np.transpose(w2) @ g, rest), back)
    slopes = np.reshape(w1, (m, n)) @ data  # (m, R)
    qbar = np.reshape(np.sum(g * slopes, axis=1), np.shape(q))
    xbar = ZERO
    if kind in LINEAR:
        xbar = -(np.transpose(w2) @ np.reshape(qbar, (m,)))
    elif kind not in CONSTANT:
        xbar = knots_cotangent(kind)
    ybar = ybar.astype(float_dtype(y))
    qbar = np.asarray(qbar).astype(float_dtype(q))
    if kind in LINEAR:
        xbar = xbar.astype(float_dtype(x))
    return {"x": xbar, "y": ybar}, qbar


interp1d_call_pullback.__pullback_receiver_cotangent__ = True


def data_shape(y, order):
    """The shape of the data ``y`` with its axes in ``order``."""
    return tuple(np.shape(y)[k] for k in order)


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


NON_DIFFERENTIABLE = (
    passes_through, unsorting, kind_of, call_config, segments, one_hot, knots_cotangent,
    q_first, data_first, data_shape, float_dtype,
)  # fmt: skip


def register(reg, family):
    """The helpers' entries (the constructor's pullback function runs them)."""
    reg.non_differentiable(*NON_DIFFERENTIABLE, family=family, trusted=True)
    reg.register(basis_weights, _basis_weights_rrule, family=family, trusted=True)
    reg.set_pullback_function(basis_weights, basis_weights_pullback)
