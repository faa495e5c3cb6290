"""Second-order cases: np.delete and np.resize (numpy_edit), np.vander, np.logspace and
np.geomspace (numpy_grids), np.linalg.cond and np.linalg.tensorinv (linalg_derived); see
second_order_table.py."""

from __future__ import annotations

import numpy as np
from rule_inputs import make
from second_order_table import case

X = make("real", (5,), seed=11)
M = np.array([[2.0, 0.3, 0.1], [0.2, 1.5, -0.4], [0.0, 0.6, 1.1]])
A4 = np.eye(4) * 2.0 + make("real", (4, 4), seed=12) * 0.3

case("numpy.delete", X, [1, 3])
case("numpy.delete", X.reshape(1, 5), np.s_[::2], axis=1)
case("numpy.resize", X, (3, 4))
case("numpy.vander", X, 4)
case("numpy.vander", X, increasing=True)
case("numpy.logspace", 0.3, 1.1, 5, wrt=(0, 1))
case("numpy.logspace", 0.3, 1.1, 4, False, 2.5, wrt=(0, 1, 4))
case("numpy.geomspace", 0.7, 3.0, 6, wrt=(0, 1))
case("numpy.geomspace", np.array([0.5, 2.0]), np.array([4.0, 3.0]), 3, axis=1, wrt=(0, 1))
case("numpy.linalg.cond", M)
case("numpy.linalg.cond", M, -2)
case("numpy.linalg.cond", M, "fro")
case("numpy.linalg.cond", M[:, :2])
case("numpy.linalg.tensorinv", A4.reshape(2, 2, 4), ind=2)
