"""Second derivatives through the scipy.special rules: reverse over reverse at every case
of so_scipy_special.py (elementwise rules differentiate their derivative functions; the
others have transformable pullbacks, which agree with their closures)."""

from __future__ import annotations

import pytest

pytest.importorskip("scipy.special")

import so_scipy_special  # noqa: E402
from second_order_table import CASES  # noqa: E402
from so_scipy_check import (  # noqa: E402
    assert_agrees_with_the_closure,
    assert_reverse_over_reverse,
    rule_named,
)

FAMILY = sorted(
    (name, k)
    for name, cases in CASES.items()
    if name.startswith(("scipy.special.", "pullback.rules.scipy_special_series."))
    for k in range(len(cases))
)
IDS = [f"{n}-{k}" for n, k in FAMILY]


@pytest.mark.parametrize("name,k", FAMILY, ids=IDS)
def test_reverse_over_reverse(name, k):
    assert_reverse_over_reverse(name, CASES[name][k], so_scipy_special.NOT_YET)


@pytest.mark.parametrize("name,k", FAMILY, ids=IDS)
def test_pullback_function_agrees_with_the_closure(name, k):
    assert_agrees_with_the_closure(name, CASES[name][k], so_scipy_special.NOT_YET, seed=k)


def test_every_differentiable_rule_has_a_case():
    import scipy.special  # noqa: F401

    from pullback import default_registry

    missing = [
        r.name
        for r in default_registry().rules()
        if r.family == "scipy_special" and r.kind != "non-differentiable" and r.name not in CASES
    ]
    assert missing == []
    assert all(rule_named(n).pullback_fn is None for n in so_scipy_special.NOT_YET)
