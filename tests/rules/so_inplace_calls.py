"""Second-order cases for the rules of the in-place calls added in this round
(pullback.arrays_inplace_calls: np.copyto with where=/casting=, the values np.putmask
writes, the ufunc.at family; see second_order_table.py). The earlier in-place calls'
cases are in so_mutation.py."""

from __future__ import annotations

import numpy as np
from second_order_table import case

_RNG = np.random.default_rng(13)
_A = _RNG.normal(size=(4, 3))
_ROW = _RNG.normal(size=3)
_MASK = np.array([True, False, True])
_Q = "pullback.arrays_inplace_calls."

for _name in ("array_copyto", "array_copyto_copy"):
    case(_Q + _name, _A.copy(), _ROW, _MASK)  # a row and a mask broadcast over the rows
    case(_Q + _name, _A.copy(), 0.5, _A > 0, "same_kind")  # a scalar, a full mask
case(_Q + "take_flat", _RNG.normal(size=3), np.array([0, 2, 0, 1, 0]))  # repeated reads
case(_Q + "take_flat", _RNG.normal(size=(2, 2)), np.array([3, 1]))
for _ufunc in ("multiply", "divide", "maximum", "minimum"):
    case(
        "pullback.arrays_ufunc_at.array_ufunc_at_copy",
        _A + 3.0,
        _ufunc,
        np.array([0, 2, 0]),
        _RNG.normal(size=(3, 3)) + 2.0,  # repeated rows, away from ties and zero divisors
    )
# ufunc(x, ..., out=a, where=m): x broadcast to a's shape, taken where m holds
case(_Q + "take_broadcast", _ROW, _A, np.nonzero(np.broadcast_to(_MASK, _A.shape)))
case(_Q + "take_broadcast", _RNG.normal(size=(4, 1)), _A, np.nonzero(_A > 0))
