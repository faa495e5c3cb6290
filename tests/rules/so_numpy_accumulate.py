"""Second-order cases: the numpy_accumulate family (see second_order_table.py)."""

from __future__ import annotations

from rule_inputs import make
from second_order_table import case

_X = make("distinct", (4, 3))
case("pullback.ufunc_methods.maximum_accumulate", _X)
case("pullback.ufunc_methods.minimum_accumulate", _X, 1)
case("pullback.ufunc_methods.logaddexp_accumulate", _X, axis=-1)
case("pullback.ufunc_methods.subtract_accumulate", _X)
case("pullback.ufunc_methods.divide_accumulate", make((0.5, 2.0), (4, 3), seed=1), 1)
case("pullback.ufunc_methods.logaddexp_reduce", _X)
case("pullback.ufunc_methods.logaddexp_reduce", _X, 1, keepdims=True)
case("pullback.ufunc_methods.logaddexp_reduce", _X, None)
case("pullback.ufunc_methods.logaddexp2_reduce", _X, -1)
case("pullback.ufunc_methods.add_reduceat", _X, [0, 2], wrt=(0,))
case("pullback.ufunc_methods.add_reduceat", _X, [0, 0, 1], 1, wrt=(0,))
case(
    "pullback.rules.numpy_accumulate.spread_segments", make("real", (2, 3)), [0, 2], 0, 4, wrt=(0,)
)
