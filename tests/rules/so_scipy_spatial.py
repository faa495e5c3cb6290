"""Second-order cases: scipy.spatial.distance (see second_order_table.py)."""

from __future__ import annotations

from rule_inputs import make
from second_order_table import case

_A = make("distinct", (4, 3))
_B = make("distinct", (3, 3), seed=1)
case("scipy.spatial.distance.cdist", _A, _B)
case("scipy.spatial.distance.cdist", _A, _B, "minkowski", p=3.0)
case("scipy.spatial.distance.cdist", _A, _B, "cosine")
case("scipy.spatial.distance.pdist", _A)
case("scipy.spatial.distance.pdist", _A, "chebyshev")
case("scipy.spatial.distance.pdist", _A, "cityblock")
case("scipy.spatial.distance.pdist", _A, "minkowski", p=3.0)
case("scipy.spatial.distance.squareform", make("real", (6,)))
case("scipy.spatial.distance.squareform", make("real", (4, 4)), "tovector", False)
