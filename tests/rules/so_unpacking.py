"""Second-order cases for the rule of unpacking (pullback.unpacking), which the generated
code of ``a, b = value`` and ``first, *rest = value`` calls (see second_order_table.py)."""

from __future__ import annotations

import numpy as np
from second_order_table import case

_RNG = np.random.default_rng(5)
_P = "pullback.unpacking."

case(_P + "unpack_items", _RNG.normal(size=(3, 2)), 3, wrt=(0,))  # the rows of a matrix
case(_P + "unpack_items", (0.3, _RNG.normal(size=2)), 2, wrt=(0,))  # a tuple
case(_P + "unpack_items", [0.3, -1.1, 0.7], 2, True, wrt=(0,))  # a starred target
