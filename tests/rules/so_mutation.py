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
# a[idx] += v / -= v as one call: a row, repeated rows, a scalar into repeated positions
for _name in ("array_add_set", "array_add_set_copy", "array_sub_set", "array_sub_set_copy"):
    case(_P + _name, _A.copy(), (1, slice(None)), _ROW)
    case(_P + _name, _A.copy(), (np.array([0, 2, 0]),), _RNG.normal(size=(3, 3)))
    case(_P + _name, _RNG.normal(size=5), np.array([0, 3, 0, 1]), 0.75)
case(_P + "array_fresh", _RNG.normal(size=(2, 3)))
case(_P + "array_named_read", _RNG.normal(size=3), _A)

# In-place calls on local arrays (pullback.arrays_inplace_calls).
_Q = "pullback.arrays_inplace_calls."
for _name in ("array_add_at", "array_add_at_copy"):
    case(_Q + _name, _A.copy(), (np.array([0, 2, 0]), np.array([1, 1, 2])), _RNG.normal(size=3))
    case(_Q + _name, _A.copy(), np.array([3, 3]), _RNG.normal(size=(2, 1)))  # broadcast, repeated
for _name in ("array_fill", "array_fill_copy"):
    case(_Q + _name, _A.copy(), _ROW)  # a row broadcast into every row
    case(_Q + _name, _A.copy(), 0.5)  # a scalar
case(_Q + "array_iadd", _A.copy(), _ROW)  # a row broadcast over the rows
case(_Q + "array_iadd", _RNG.normal(size=3), 0.25)
case(_Q + "cycled", _RNG.normal(size=3), (np.arange(7),))  # repeated cyclically
case(_Q + "cycled", _RNG.normal(size=(2, 2)), (np.arange(3),))  # cut short
case(_Q + "array_sort", _RNG.normal(size=(3, 4)), 0)
case(_Q + "array_sort", _RNG.normal(size=5))
