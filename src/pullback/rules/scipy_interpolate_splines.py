"""scipy.interpolate.CubicSpline: the spline's values with respect to the query points
and the data ``y`` (the knots ``x`` refused), to any order.

``CubicSpline(x, y, ...)`` is a call of a class: its rule returns SciPy's object, whose
cotangent is ``{"c": cbar}``, the cotangent of its coefficients ``c`` (the attribute its
rule declares, ``result_attributes``). The coefficients are linear in ``y`` for the
boundary conditions given by name (``"not-a-knot"``, ``"natural"``, ``"clamped"``,
``"periodic"``): ``c = B y`` with ``B`` the coefficients of the spline of the identity,
so ``ybar = B^T cbar``; a ``bc_type`` given by derivative values makes them affine in
``y`` and is refused where ``y`` is differentiated. ``s(q)`` is a call of
``PPoly.__call__``: on the interval ``i`` holding ``q`` (SciPy's, clipped for
extrapolation, wrapped for a periodic spline), ``s(q) = sum_k c[k, i] (q - x_i)^(3-k)``,
written in the differentiable subset with the object's ``c`` read as its declared
attribute (:func:`spline_call_pullback`, marked ``__pullback_receiver_cotangent__``):
its derivative reaches ``c`` and, through the constructor's pullback, ``y``, so the
mixed terms ``d2/dq dy`` are the spline's (unfollowed_objects.py).

>>> import numpy as np, pullback
>>> from scipy.interpolate import CubicSpline
>>> XS = np.array([0.0, 1.0, 2.0, 3.0])
>>> def f(ys, q):
...     return CubicSpline(XS, ys, bc_type="natural")(q)
>>> g = pullback.grad(f, wrt=(0, 1))(np.array([0.0, 1.0, 4.0, 9.0]), 1.0)
>>> [np.round(np.asarray(v), 12).tolist() for v in g]
[[0.0, 1.0, 0.0, 0.0], 1.8]
"""

from __future__ import annotations

import inspect

import numpy as np
import scipy.interpolate as si  # this module is imported once scipy.interpolate is

from ..errors import UnsupportedCallError
from ..registry import transformable
from ._util import NO_TANGENT, ZERO, Refused
from .scipy_interpolate_pullbacks import (
    data_first,
    data_shape,
    float_dtype,
    is_zero,
    one_hot,
    q_first,
)

KNOTS = (
    "scipy.interpolate.CubicSpline with respect to its points x",
    "the knots' derivative of an interpolating spline is not implemented; the data y and "
    "the query points differentiate.",
)
BOUNDARY = (
    "scipy.interpolate.CubicSpline with respect to y under a bc_type given by derivative values",
    "those values make the coefficients affine in y, not linear; bc_type 'not-a-knot', "
    "'natural', 'clamped' and 'periodic' differentiate in y.",
)
_PARAMETERS = ("x", "y", "axis", "bc_type", "extrapolate")


def knots_refused():
    """The cotangent of the knots: refused where they are differentiated."""
    return Refused(*KNOTS)


def coefficient_basis(x, n, bc_type):
    """``dc/dy``: the coefficients of the spline of the identity, ``(4, n-1, n)``, or a
    refusal for a ``bc_type`` given by values (the map is not linear)."""
    if not isinstance(bc_type, str):
        return Refused(*BOUNDARY)
    identity = np.eye(n)
    if bc_type == "periodic":  # (y[-1] repeats y[0]: y[0]'s column moves both, y[-1]'s none)
        identity[-1] = identity[0]
    return si.CubicSpline(x, identity, axis=0, bc_type=bc_type).c


@transformable
def cubic_spline_pullback(dobj, x, y, axis=0, bc_type="not-a-knot", extrapolate=None):
    # ybar = B^T cbar along the interpolation axis (linear in dobj: closes at any order)
    if dobj is ZERO:
        return ZERO, ZERO, NO_TANGENT, NO_TANGENT, NO_TANGENT
    n = np.shape(y)[axis]
    basis = coefficient_basis(x, n, bc_type)
    if isinstance(basis, Refused):
        return knots_refused(), basis, NO_TANGENT, NO_TANGENT, NO_TANGENT
    order, back = data_first(axis, np.ndim(y))
    flat = np.reshape(dobj["c"], (4 * (n - 1), -1))
    ybar = np.transpose(np.reshape(basis, (4 * (n - 1), n))) @ flat
    ybar = np.transpose(np.reshape(ybar, data_shape(y, order)), back)
    return knots_refused(), ybar.astype(float_dtype(y)), NO_TANGENT, NO_TANGENT, NO_TANGENT


def _cubic_spline_rrule(*args, **kwargs):
    obj = si.CubicSpline(*args, **kwargs)

    def cubic_spline_closure(dobj):
        return cubic_spline_pullback(dobj, *args, **kwargs)[: len(args)]

    return obj, cubic_spline_closure


def _cubic_spline_tangent(obj, args, tangents, kwargs, moving):
    """Forward mode of ``CubicSpline(x, y, ...)``: ``{"c": B ty}``, the coefficients of
    the spline of ``ty`` (linear); a moving ``x`` is refused, as the pullback refuses it."""
    p = dict(zip(_PARAMETERS, args, strict=False), **kwargs)
    tx = tangents[0] if tangents else ZERO
    if not is_zero(tx) and np.any(np.asarray(tx) != 0):
        knots_refused()._raise()
    ty = tangents[1] if len(tangents) > 1 else ZERO
    if is_zero(ty):
        return ZERO
    bc_type = p.get("bc_type", "not-a-knot")
    if not isinstance(bc_type, str):
        Refused(*BOUNDARY)._raise()
    spline = si.CubicSpline(p["x"], np.asarray(ty), axis=p.get("axis", 0), bc_type=bc_type)
    return {"c": spline.c}


def spline_config(obj, q):
    """``(x, i, shift, axis)``: the breakpoints, the interval SciPy evaluates at each
    query point (``x[i] <= q < x[i+1]``, clipped where it extrapolates), the shift that
    wraps ``q`` into a periodic spline's period (0 otherwise) and the axis (constants)."""
    x = obj.x
    q = np.asarray(q, dtype=np.float64)
    shift = np.zeros(q.shape)
    if obj.extrapolate == "periodic":
        period = x[-1] - x[0]
        shift = np.floor((q - x[0]) / period) * period
    i = np.clip(np.searchsorted(x, q - shift, side="right") - 1, 0, len(x) - 2)
    return x, i, shift, obj.axis


@transformable
def spline_call_pullback(dy, obj, q):
    """``({"c": cbar}, qbar)`` of ``obj(q)`` for a CubicSpline ``obj`` (module docstring)."""
    if dy is ZERO:
        return ZERO, ZERO
    c = obj.c
    x, i, shift, axis = spline_config(obj, q)
    m = int(np.size(q))
    n1 = len(x) - 1
    s = np.reshape(q - shift - x[i], (m,))
    e = one_hot(np.reshape(i, (m,)), n1)  # (m, n1)
    ones = np.ones(m)
    powers = np.stack([s * s * s, s * s, s, ones], axis=1)  # (m, 4)
    slopes_of = np.stack([3.0 * s * s, 2.0 * s, ones, 0.0 * s], axis=1)
    g = np.reshape(np.transpose(np.asarray(dy), q_first(axis, np.ndim(dy), np.ndim(q))), (m, -1))
    picks = np.reshape(powers[:, :, None] * e[:, None, :], (m, 4 * n1))
    cbar = np.reshape(np.transpose(picks) @ g, np.shape(c))
    local = np.reshape(
        e @ np.reshape(np.transpose(np.reshape(c, (4, n1, -1)), (1, 0, 2)), (n1, -1)), (m, 4, -1)
    )
    slopes = np.sum(slopes_of[:, :, None] * local, axis=1)  # (m, R)
    qbar = np.reshape(np.sum(g * slopes, axis=1), np.shape(q))
    return {"c": cbar.astype(float_dtype(c))}, np.asarray(qbar).astype(float_dtype(q))


spline_call_pullback.__pullback_receiver_cotangent__ = True


def _spline_call_rrule(obj, q, nu=0, extrapolate=None):
    if type(obj) is not si.CubicSpline or nu != 0 or extrapolate is not None:
        what = type(obj).__name__ if type(obj) is not si.CubicSpline else "CubicSpline"
        raise UnsupportedCallError(
            f"pullback: calling a scipy.interpolate.{what}"
            + (" with nu= or extrapolate=" if type(obj) is si.CubicSpline else "")
            + " is not differentiated (CubicSpline(x, y)(q) is).\n"
            "Fix: use scipy.interpolate.CubicSpline and call it with the query points "
            "alone, or interp1d(x, y, kind='cubic')."
        )
    out = obj(q)

    def spline_call_closure(dy):
        return spline_call_pullback(dy, obj, q)

    return out, spline_call_closure


@transformable
def coefficients_pullback(dy, obj):
    # spline.c (a property): the object's cotangent is that of its coefficients
    if dy is ZERO:
        return (ZERO,)
    return ({"c": dy},)


def _coefficients_rrule(obj):
    if type(obj) is not si.CubicSpline:
        raise UnsupportedCallError(
            f"pullback: the coefficients c of a scipy.interpolate.{type(obj).__name__} are "
            "not differentiated (a CubicSpline's are).\nFix: make the spline with "
            "scipy.interpolate.CubicSpline."
        )
    return obj.c, lambda dy: coefficients_pullback(dy, obj)


NON_DIFFERENTIABLE = (knots_refused, coefficient_basis, spline_config)


def register(reg, family):
    from ._util import Registrar

    r = Registrar(reg, family)
    rule = r.rule(si.CubicSpline, _cubic_spline_rrule, name="scipy.interpolate.CubicSpline",
                  notes="the spline object; y (bc_type by name), not x")  # fmt: skip
    rule.extra["result_attributes"] = ("c",)
    rule.extra["output_tangent"] = _cubic_spline_tangent
    reg.set_pullback_function(si.CubicSpline, cubic_spline_pullback)
    call = si.CubicSpline.__call__
    r.rule(call, _spline_call_rrule, name="scipy.interpolate.CubicSpline.__call__",
           notes="q and the data through the object; any order")  # fmt: skip
    reg.set_pullback_function(call, spline_call_pullback)
    coefficients = inspect.getattr_static(si.CubicSpline, "c").fget  # (a property)
    r.rule(coefficients, _coefficients_rrule, name="scipy.interpolate.CubicSpline.c",
           notes="the coefficients read from the object")  # fmt: skip
    reg.set_pullback_function(coefficients, coefficients_pullback)
    reg.non_differentiable(*NON_DIFFERENTIABLE, family=family, trusted=True)
