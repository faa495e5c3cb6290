"""The degenerate-size audit: every NumPy, linalg, fft, math and builtins rule on
length-0 and length-1 axes, zero-size arrays, 0-d arrays and scalars.

A rule of these families without an entry in ``degenerate.CASES`` (filled by
degenerate_numpy.py and degenerate_more.py) fails ``test_every_rule_has_degenerate_cases``:
give it cases, or mark it ``Inapplicable`` with the reason.
"""

from __future__ import annotations

import degenerate_more  # noqa: F401 - fills CASES
import degenerate_numpy  # noqa: F401 - fills CASES
import pytest
from degenerate import CASES, Inapplicable, check_degenerate, resolve
from rule_inputs import FLOATS

from pullback.registry import NONDIFF, default_registry

AUDITED = {
    "numpy_ufuncs",
    "numpy_reductions",
    "numpy_products",
    "numpy_shape",
    "numpy_assemble",
    "numpy_indexing",
    "numpy_misc",
    "numpy_accumulate",
    "numpy_casts",
    "numpy_index_tricks",
    "numpy_functional",
    "linalg",
    "fft",
    "math",
    "builtins",
    "operator",
    "ndarray_methods",
}


def _audited_rules():
    return [r for r in default_registry().rules() if r.family in AUDITED and r.kind != NONDIFF]


def test_every_rule_has_degenerate_cases():
    missing = sorted(r.name for r in _audited_rules() if r.name not in CASES)
    assert not missing, f"rules without degenerate cases (or an Inapplicable reason): {missing}"
    known = {r.name for r in default_registry().rules()}
    stale = sorted(set(CASES) - known)
    assert not stale, f"degenerate cases for rules that do not exist: {stale}"


def _params():
    out = []
    for rule in _audited_rules():
        entry = CASES.get(rule.name)
        if entry is None:
            continue
        if isinstance(entry, Inapplicable):
            assert entry.reason
            continue
        for label, args, kwargs, check in entry:
            out.append(pytest.param(rule.fn, args, kwargs, check, id=f"{rule.name}-{label}"))
    return out


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("fn,args,kwargs,check", _params())
def test_degenerate(fn, args, kwargs, check, dtype):
    check_degenerate(fn, resolve(args, dtype), resolve(kwargs, dtype), check)
