"""Second-order cases for the rules of writes into local arrays (pullback.arrays_inplace),
which the generated code of ``a[idx] = v`` calls (see second_order_table.py)."""

from __future__ import annotations

import numpy as np
from second_order_table import case

_RNG = np.random.default_rng(11)
_A = _RNG.normal(size=(4, 3))
_ROW = _RNG.normal(size=3)
_P = "pullback.arrays_inplace."

for _name in ("array_set", "array_set_copy"):
    case(_P + _name, _A, (1, slice(None)), _ROW)  # a row, in the array's dtype
    case(_P + _name, _A, (np.array([0, 2, 0]),), _RNG.normal(size=(3, 3)))  # repeated rows
    case(_P + _name, _A, (slice(1, 3), 0), 0.75)  # a broadcast scalar
case(_P + "array_fresh", _RNG.normal(size=(2, 3)))
case(_P + "array_named_read", _RNG.normal(size=3), _A)
