"""Second-order cases for the rule of unpacking (pullback.unpacking), which the generated
code of ``a, b = value`` and ``first, *rest = value`` calls, and of reading a named tuple's
field (see second_order_table.py)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from second_order_table import case

_RNG = np.random.default_rng(5)
_P = "pullback.unpacking."

case(_P + "unpack_items", _RNG.normal(size=(3, 2)), 3, wrt=(0,))  # the rows of a matrix
case(_P + "unpack_items", (0.3, _RNG.normal(size=2)), 2, wrt=(0,))  # a tuple
case(_P + "unpack_items", [0.3, -1.1, 0.7], 2, True, wrt=(0,))  # a starred target


# -- a field of a named tuple (pullback.records.field_of): the probe builds the record with
# its class, so that the rule reads a named tuple
class Point(NamedTuple):
    x: float
    y: np.ndarray


_POINT = Point(0.7, np.array([0.4, -1.2, 2.0]))
case("pullback.records.field_of", _POINT, "x", wrt=(0,))
case("pullback.records.field_of", _POINT, "y", wrt=(0,))
