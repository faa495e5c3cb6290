"""Second-order cases of the scalar minimisers (scipy_optimize_scalar.py): inside the
bounds (the implicit function theorem differentiated again) and on an active bound (the
minimiser is the bound). An inactive bound is not differentiated: its derivative is 0 and
SciPy's stopping point moves with it at the solver's tolerance."""

from __future__ import annotations

import pytest
from second_order_table import case

so = pytest.importorskip("scipy.optimize")

from test_scipy_optimize_scalar import TIGHT, bowl, well  # noqa: E402

ARGS = (0.7, 0.3)

# minimize_scalar(fun, bracket, bounds, args, method, tol, options)
case("scipy.optimize.minimize_scalar", bowl, None, None, ARGS, "brent", 1e-12, wrt=(3,))
case("scipy.optimize.minimize_scalar", well, None, None, ARGS, "golden", 1e-12, wrt=(3,))
case("scipy.optimize.minimize_scalar", well, None, (-1.0, 2.0), ARGS, "bounded", None, TIGHT,
     wrt=(3,))  # fmt: skip
case("scipy.optimize.minimize_scalar", bowl, None, (-1.0, 0.2), ARGS, "bounded", None, TIGHT,
     wrt=(2, 3))  # fmt: skip
# fminbound(func, x1, x2, args, xtol): inside, and on the upper bound 0.2
case("scipy.optimize.fminbound", well, -1.0, 2.0, ARGS, 1e-10, wrt=(3,))
case("scipy.optimize.fminbound", bowl, -1.0, 0.2, ARGS, 1e-10, wrt=(2, 3))
# brent(func, args, brack, tol), golden(...)
case("scipy.optimize.brent", bowl, ARGS, None, 1e-12, wrt=(1,))
case("scipy.optimize.golden", well, ARGS, None, 1e-12, wrt=(1,))
