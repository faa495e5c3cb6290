"""``numpy.polynomial.polynomial``'s ``polyfit`` and ``polyval`` (the coefficients lowest
power first), in the numpy_polynomials family: a deferred module, registered once a
program has imported ``numpy.polynomial`` (which a NumPy gradient does not load otherwise).
The conventions and limits are numpy_polynomials.py's.
"""

from __future__ import annotations

import numpy as np
import numpy.polynomial.polynomial as npp

from ..registry import transformable
from ..tangents import NO_TANGENT, densify, unbroadcast
from .numpy_polynomials import (
    _check_fit,
    _one_dimensional,
    ascending_powers,
    fit_cotangents,
    register_table,
)

FAMILY = "numpy_polynomials"
REQUIRES = "numpy.polynomial.polynomial"


def _npp_polyfit_checked(x, y, deg, rcond=None, full=False, w=None):
    _check_fit("numpy.polynomial.polynomial.polyfit", x, y, deg, rcond, full, w)
    return npp.polyfit(x, y, deg, rcond, full, w)


@transformable
def npp_polyfit_pullback(dy, x, y, deg, rcond=None, full=False, w=None):
    _check_fit("numpy.polynomial.polynomial.polyfit", x, y, deg, rcond, full, w)
    # numpy.polynomial's coefficients are np.polyfit's, lowest power first
    d_x, d_y, d_w = fit_cotangents(np.flip(densify(dy), 0), x, y, deg, w)
    return d_x, d_y, NO_TANGENT, NO_TANGENT, NO_TANGENT, d_w


def _npp_polyval_checked(x, c, tensor=True):
    _one_dimensional("numpy.polynomial.polynomial.polyval", c)
    return npp.polyval(x, c, tensor)


@transformable
def npp_polyval_pullback(dy, x, c, tensor=True):
    _one_dimensional("numpy.polynomial.polynomial.polyval", c)
    n = np.shape(c)[0]
    g = densify(dy)
    vander = ascending_powers(x, n)  # x's shape + (n,)
    dc = np.sum(np.reshape(np.expand_dims(g, -1) * np.conj(vander), (-1, n)), axis=0)
    if n > 1:
        dx = g * np.conj(npp.polyval(x, c[1:] * np.arange(1, n)))
    else:
        dx = 0.0 * g
    return unbroadcast(dx, x), unbroadcast(dc, c), NO_TANGENT


def register(reg):
    register_table(
        reg,
        (
            (npp.polyfit, _npp_polyfit_checked, npp_polyfit_pullback, ("w",), "full rank"),
            (npp.polyval, _npp_polyval_checked, npp_polyval_pullback, (), ""),
        ),
    )
