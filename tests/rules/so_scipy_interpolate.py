"""Second-order cases of scipy.interpolate.interp1d (scipy_interpolate.py)."""

from __future__ import annotations

import numpy as np
import pytest
from second_order_table import case

si = pytest.importorskip("scipy.interpolate")


XS = np.array([0.0, 0.4, 1.1, 1.5, 2.3, 3.0])
YS = np.sin(XS) + 0.3 * XS
Q = np.array([0.17, 0.93, 1.31, 2.71])


# the constructor's pullback (a permutation of the object's cotangent) is transformable;
# its call's is a closure: a second derivative through f(q) is refused
# (test_scipy_interpolate.py::test_second_order_refused), and the coverage test lists it
case("scipy.interpolate.interp1d", XS, YS, "cubic", wrt=(1,))
