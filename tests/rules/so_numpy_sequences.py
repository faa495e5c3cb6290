"""Second-order cases: np.ediff1d and np.unwrap (numpy_misc; see second_order_table.py)."""

from __future__ import annotations

import numpy as np
from rule_inputs import make
from second_order_table import case

case("numpy.ediff1d", make("real", (2, 3)), np.array([1.5, 2.0]), 0.5)
case("numpy.unwrap", np.cumsum([0.4, 3.9, -4.2, 1.0, 7.0]), period=5.0)
