"""Second-order cases of scipy.interpolate.interp1d (scipy_interpolate.py): the
constructor, and the call of an interpolant made in the probe from differentiated data
(``Built``: the mixed derivatives in the query points and the data run through the
object) or given made (a constant object: the query points only)."""

from __future__ import annotations

import numpy as np
import pytest
from second_order_table import case

from pullback.testing.second_order import Built

si = pytest.importorskip("scipy.interpolate")


XS = np.array([0.0, 0.4, 1.1, 1.5, 2.3, 3.0])
YS = np.sin(XS) + 0.3 * XS
Q = np.array([0.17, 0.93, 1.31, 2.71])
# integer knots for the spline kinds: not differentiated (their derivative is refused)
KNOTS = np.array([0, 1, 2, 4, 5, 7])

case("scipy.interpolate.interp1d", XS, YS, "cubic", wrt=(1,))
CALL = "scipy.interpolate.interp1d.__call__"
_P = "pullback.rules.scipy_interpolate_pullbacks."
case(CALL, Built(si.interp1d, KNOTS, YS, "cubic"), 1.7 * Q)  # y and q: the mixed terms
case(CALL, Built(si.interp1d, XS, YS), Q)  # linear: x, y and q
case(CALL, Built(si.interp1d, KNOTS, np.stack([YS, YS**2]), "quadratic"), 3.3)
case(CALL, si.interp1d(XS, YS, kind="nearest"), Q, wrt=(1,))
# the weights of a spline kind (the call's pullback): their derivative in q is the next
# weights' (the knots' is refused)
case(_P + "basis_weights", KNOTS * 0.5, 1.7 * Q, "cubic", False, 1, wrt=(1,))
case(_P + "basis_weights", XS, Q, "quadratic", True, 0, wrt=(1,))
# CubicSpline (scipy_interpolate_splines.py): the constructor in y, the call in q and,
# through the object, y
case("scipy.interpolate.CubicSpline", KNOTS, YS, wrt=(1,))
_S = "scipy.interpolate.CubicSpline.__call__"
case(_S, Built(si.CubicSpline, KNOTS, YS), 1.7 * Q)
case(_S, Built(si.CubicSpline, KNOTS, np.stack([YS, YS**2]), 1), 3.3)
case("scipy.interpolate.CubicSpline.c", Built(si.CubicSpline, KNOTS, YS))
