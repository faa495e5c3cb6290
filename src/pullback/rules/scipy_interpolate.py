"""scipy.interpolate.interp1d: the interpolant's values with respect to the query points,
the data ``y`` and (for the piecewise linear and constant kinds) the points ``x``.

``interp1d(x, y, ...)`` is a call of a class: its rule returns SciPy's object, whose
cotangent is a dict of the attributes the call rule differentiates (``x`` and ``y`` as
the object keeps them: sorted), mapped back to the arguments through the sort. ``f(q)``
is a call of ``_Interpolator1D.__call__``, whose rule takes ``f`` built in the
differentiated function (its cotangent reaches ``x`` and ``y``) or outside (a constant).
The call's pullback is transformable and reads the object's data as its declared
attributes, so second and higher derivatives run through the object too (the mixed terms
in ``q`` and ``y``; see scipy_interpolate_pullbacks.py). Every kind
and fill is SciPy's own: the derivatives come from the interpolant of the identity (see
scipy_interpolate_pullbacks.py), so ``fill_value`` (constant or ``"extrapolate"``),
``bounds_error`` and ``assume_sorted`` mean what they mean to SciPy; a constant fill has
no derivative. The knots ``x`` of a spline kind (``quadratic``, ``cubic``, an integer
order) are refused when differentiated. ``fill_value`` given by a differentiated value is
refused (PB502): it takes no gradient.

>>> import numpy as np, pullback
>>> from scipy.interpolate import interp1d
>>> XS = np.array([0.0, 1.0, 2.0])
>>> def f(ys, q):
...     return interp1d(XS, ys)(q)
>>> [np.asarray(g).tolist() for g in pullback.grad(f, wrt=(0, 1))(np.array([0.0, 2.0, 3.0]), 0.25)]
[[0.75, 0.25, 0.0], 2.0]
"""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedCallError
from ._util import NO_TANGENT, ZERO, Refused, Registrar, finalize

FAMILY = "scipy_interpolate"
REQUIRES = "scipy.interpolate"

_PARAMETERS = ("x", "y", "kind", "axis", "copy", "bounds_error", "fill_value", "assume_sorted")


def _fit(c, a):
    return c if isinstance(c, Refused) else finalize(c, a)


def _interp1d_rrule(*args, **kwargs):
    import scipy.interpolate as si

    from .scipy_interpolate_pullbacks import unsorted

    obj = si.interp1d(*args, **kwargs)
    p = dict(zip(_PARAMETERS, args, strict=False), **kwargs)
    x, y, sort = p["x"], p["y"], p.get("assume_sorted", False)
    axis = p.get("axis", -1)

    def interp1d_pullback(dobj):
        if dobj is ZERO or dobj is NO_TANGENT:
            return (ZERO, ZERO) + (NO_TANGENT,) * (len(args) - 2)
        cx = unsorted(dobj.get("x", ZERO), x, 0, sort)
        cy = unsorted(dobj.get("y", ZERO), x, axis, sort)
        return (_fit(cx, x), _fit(cy, y)) + (NO_TANGENT,) * (len(args) - 2)

    return obj, interp1d_pullback


def _interp1d_tangent(obj, args, tangents, kwargs, moving):
    """Forward mode of ``interp1d(x, y, ...)``: the object's tangent in the layout of its
    cotangent (``{"x", "y"}``, sorted as the object keeps them); a moving knot of a spline
    kind is refused, as the pullback refuses it."""
    from .scipy_interpolate_pullbacks import SPLINE_KNOTS, is_zero, kind_of, refuse_knots

    p = dict(zip(_PARAMETERS, args, strict=False), **kwargs)
    order = slice(None)
    if not p.get("assume_sorted", False):
        order = np.argsort(np.asarray(p["x"]), kind="mergesort")
    out = {}
    tx = tangents[0] if tangents else ZERO
    if not is_zero(tx) and np.any(np.asarray(tx) != 0):  # (zeros: the points stay)
        if kind_of(obj) not in ("linear", "slinear"):
            refuse_knots(obj, SPLINE_KNOTS)
        out["x"] = np.asarray(tx)[order]
    ty = tangents[1] if len(tangents) > 1 else ZERO
    if not is_zero(ty):
        out["y"] = np.take(np.asarray(ty), np.arange(len(obj.x))[order], axis=p.get("axis", -1))
    return out if out else ZERO


def _call_rrule(obj, q):
    import scipy.interpolate as si

    from .scipy_interpolate_pullbacks import interp1d_call_pullback

    if type(obj) is not si.interp1d:
        raise UnsupportedCallError(
            f"pullback: calling a scipy.interpolate.{type(obj).__name__} is not "
            "differentiated (interp1d is).\n"
            "Fix: use scipy.interpolate.interp1d, or np.interp for linear interpolation."
        )
    out = obj(q)

    def interp1d_call_pullback_(dy):
        return interp1d_call_pullback(dy, obj, q)

    return out, interp1d_call_pullback_


def register(reg):
    try:
        import scipy.interpolate as si
        from scipy.interpolate._polyint import _Interpolator1D
    except ImportError:  # pragma: no cover - scipy is optional
        return
    from . import scipy_interpolate_pullbacks as pbs

    r = Registrar(reg, FAMILY)
    rule = r.rule(si.interp1d, _interp1d_rrule, name="scipy.interpolate.interp1d",
                  notes="the interpolant object; x of the linear and constant kinds")  # fmt: skip
    rule.extra["result_attributes"] = ("x", "y")
    rule.extra["output_tangent"] = _interp1d_tangent
    r.rule(_Interpolator1D.__call__, _call_rrule, name="scipy.interpolate.interp1d.__call__",
           notes="every kind and fill; q, y, x (not a spline's); any order")  # fmt: skip
    reg.set_pullback_function(si.interp1d, pbs.interp1d_pullback)
    # (marked __pullback_receiver_cotangent__: its derivative reaches the object's data)
    reg.set_pullback_function(_Interpolator1D.__call__, pbs.interp1d_call_pullback)
    pbs.register(reg, FAMILY)
    from . import scipy_interpolate_splines

    scipy_interpolate_splines.register(reg, FAMILY)
