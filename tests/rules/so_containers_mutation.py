"""Second-order cases for the rules of pullback.containers_mutation: ``arg.copy()`` of a
list or dict, the copy that makes an argument's container the function's own before it
changes it (see second_order_table.py)."""

from __future__ import annotations

import numpy as np
from second_order_table import case

_RNG = np.random.default_rng(23)

case("list.copy", [np.float64(0.4), _RNG.normal(size=3), np.float64(-1.3)])
case("list.copy", [_RNG.normal(size=(2, 2))])
