"""Second-order cases: the numpy_polynomials family (see second_order_table.py)."""

from __future__ import annotations

import numpy as np
from rule_inputs import make
from second_order_table import case

_X = np.linspace(-1.0, 1.3, 6) + make((-0.05, 0.05), (6,), seed=3)
_Y = make("real", (6,), seed=1)
_W = make((0.5, 1.5), (6,), seed=2)
_P = make("real", (4,), seed=4)
case("numpy.polyfit", _X, _Y, 2)
case("numpy.polyfit", _X, _Y, 2, w=_W)
case("numpy.polyder", _P, 2)
case("numpy.polyint", _P, 2, [0.5, -1.5])
case("numpy.roots", np.array([1.0, -0.5, -2.0, 1.2]))
case("numpy.roots", np.array([1.0, 0.3, 2.0]))
case("numpy.polynomial.polynomial.polyfit", _X, _Y, 2, w=_W)
case("numpy.polynomial.polynomial.polyval", _X, _P)
