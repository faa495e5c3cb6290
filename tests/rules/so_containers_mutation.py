"""Second-order cases for the rules of pullback.containers_mutation: ``arg.copy()`` of a
list or dict, the copy that makes an argument's container the function's own before it
changes it (see second_order_table.py)."""

from __future__ import annotations

import numpy as np
from second_order_table import case

_RNG = np.random.default_rng(23)

case("list.copy", [np.float64(0.4), _RNG.normal(size=3), np.float64(-1.3)])
case("list.copy", [_RNG.normal(size=(2, 2))])

# The in-place changes of local lists (pullback.containers_inplace): positions are
# already non-negative there (the normalizer checks them); the list is the first argument.
# The harness gives each call its own copy of the list (as the probe builds it anew), so
# that list_delete and list_pop, which shorten it, are checked here too.
_P = "pullback.containers_inplace."


def _items(k):
    return [np.float64(v) for v in _RNG.normal(size=k)]


case(_P + "list_set", _items(3), 1, np.float64(0.9))
case(_P + "list_set", _items(4), -1, np.float64(-0.4))
case(_P + "list_insert", _items(3), 0, np.float64(0.3))
case(_P + "list_insert", _items(2), 2, np.float64(1.3))
case(_P + "own_cotangent", _items(3), 3)
case(_P + "list_take", _items(3), 1)
case(_P + "list_delete", _items(3), 1)
case(_P + "list_delete", [np.float64(0.2), _RNG.normal(size=2)], 0)
case(_P + "list_pop", _items(3), 2, 3)
case(_P + "list_pop", [np.float64(0.2), _RNG.normal(size=2), np.float64(1.1)], 1, 3)
case(_P + "list_add_at", _items(3), 2, np.float64(0.6))
case(_P + "pair_first", (np.float64(0.3), np.float64(-1.2)))
case(_P + "pair_second", (np.float64(0.3), np.float64(-1.2)))
case(_P + "pair_second", (np.float64(0.3), _RNG.normal(size=3)))

# Slice stores and deletes (pullback.containers_slices): the gather and its transpose.
_Q = "pullback.containers_slices."
case(_Q + "list_gather", _items(4), [3, 0, 0, 2])
case(_Q + "list_gather", [_RNG.normal(size=(2, 2))], [0, 0])
case(_Q + "list_scatter", _items(3), [2, 0, 2], 4)
