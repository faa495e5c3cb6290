"""scipy.sparse to second order: each case of so_scipy_sparse.py (one a rule, at least) is
differentiated reverse over reverse (pullback.hvp through the rule's pullback function) and
compared with finite differences of the gradient, in float64 (float32 at a sample); a rule
that refuses a differentiated argument refuses it here too, and those whose second
derivative pullback refuses (so_scipy_sparse.SECOND_ORDER_REFUSED) refuse it clearly."""

from __future__ import annotations

import numpy as np
import pytest
import so_scipy_sparse  # noqa: F401  (registers the cases)
from second_order_table import CASES
from so_scipy_sparse import SECOND_ORDER_REFUSED
from sweeps import sweep

from pullback import grad, hvp
from pullback.errors import PullbackError
from pullback.testing import check_grads

pytest.importorskip("scipy.sparse")

_NAMES = sorted(
    n
    for n in CASES
    if n.startswith(("scipy.sparse", "pullback.sparse_values", "pullback.rules.scipy_sparse"))
)
PARAMS = sweep(
    [pytest.param(name, k, id=f"{name}-{k}") for name in _NAMES for k in range(len(CASES[name]))],
    quick=12,
)


@pytest.mark.parametrize("name, k", PARAMS)
def test_second_order(name, k):
    args, kwargs, _ = CASES[name][k]
    program, x = args
    if kwargs.get("refused"):
        with pytest.raises(PullbackError, match="has no rule"):
            grad(program)(x)
        return
    if name in SECOND_ORDER_REFUSED:
        with pytest.raises(PullbackError):
            hvp(program)(x, np.ones_like(x))
        return
    how = check_grads(program, x, order=2, rng=np.random.default_rng(1))
    assert how == "reverse over reverse", name


@pytest.mark.parametrize(
    "name",
    sweep(
        [n for n in _NAMES if not CASES[n][0][1].get("refused") and n not in SECOND_ORDER_REFUSED],
        quick=3,
    ),
)
def test_second_order_float32(name):
    args, _, _ = CASES[name][0]
    program, x = args
    how = check_grads(program, x.astype(np.float32), order=2, rng=np.random.default_rng(2))
    assert how == "reverse over reverse", name
