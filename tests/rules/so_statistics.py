"""Second-order cases for Python's ``statistics`` module (rules/statistics_rules.py): a
list, a tuple and a 1-d array, the optional center (``xbar``/``mu``) and weights given
positionally (see second_order_table.py)."""

from __future__ import annotations

import statistics as st

import numpy as np
from second_order_table import case

_X = [0.3, -0.7, 1.2, 2.5]
_A = np.array([0.4, 1.1, -0.6, 2.0, 0.9])
_P = [0.5, 1.5, 0.8, 2.2]  # positive: geometric and harmonic means
_W = [1.0, 2.0, 0.5, 1.5]

for _name in ("mean", "fmean", "median", "median_low", "median_high"):
    case(f"statistics.{_name}", _X)
    case(f"statistics.{_name}", _A)
case("statistics.median", tuple(_X[:3]))
for _name in ("pvariance", "variance", "pstdev", "stdev"):
    case(f"statistics.{_name}", _X)
    case(f"statistics.{_name}", _A)
    case(f"statistics.{_name}", tuple(_X), 0.4)  # the center given
if "weights" in str(__import__("inspect").signature(st.fmean)):  # Python 3.11+
    case("statistics.fmean", _P, _W)
case("statistics.geometric_mean", _P)
case("statistics.geometric_mean", np.array(_P))
case("statistics.harmonic_mean", _P)
case("statistics.harmonic_mean", _P, _W)
if hasattr(st, "covariance"):  # Python 3.10+
    case("statistics.covariance", _X, _P)
    case("statistics.correlation", _A[:4], np.array(_P))
case("statistics.quantiles", _X)
case("statistics.quantiles", _A, n=5, method="inclusive")
case("statistics.quantiles", tuple(_X), n=3)
