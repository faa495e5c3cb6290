"""Second-order cases for the cotangent helpers of writes into local arrays
(pullback.arrays_inplace): ``written_cotangent`` and ``written_scatter`` are each other's
transpose and ``updated_cotangent`` goes through them, so their transformable pullbacks
close and derivatives of any order run through array writes (see second_order_table.py;
third order through user code: tests/test_third_order_runtime_calls.py)."""

from __future__ import annotations

import numpy as np
from second_order_table import case

_RNG = np.random.default_rng(12)
_G = _RNG.normal(size=(4, 3))
_P = "pullback.arrays_inplace."

case(_P + "written_cotangent", _G, (4, 3), (1, slice(None)))  # a row
case(_P + "written_cotangent", _G, (4, 3), (np.array([0, 2, 0]),))  # repeated rows
case(_P + "written_scatter", _RNG.normal(size=3), _G, (4, 3), (1, slice(None)))
case(_P + "written_scatter", _RNG.normal(size=(3, 3)), _G, (4, 3), (np.array([0, 2, 0]),))
case(_P + "updated_cotangent", _G, _G.copy(), (1, slice(None)), _RNG.normal(size=3))
case(_P + "updated_cotangent", _G, _G.copy(), (slice(1, 3), 0), 0.5)  # a broadcast scalar
case(_P + "updated_cotangent", _RNG.normal(size=5), np.zeros(5), np.array([0, 3, 0, 1]), 0.75)
