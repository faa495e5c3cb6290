"""Every rule is differentiable twice: each registered rule has second-order cases
(``so_*.py`` beside this file, see ``second_order_table.py``), and each case passes
``check_rrule_second_order`` (a second-order path, a pullback function that agrees with
the rule, reverse over reverse against finite differences of the gradient), in float64
and float32 for real inputs.

A rule without a case fails ``test_every_rule_has_second_order_cases``: a missing second
derivative is a failing test, not a known gap.
"""

from __future__ import annotations

import importlib
import pathlib

import numpy as np
import pytest
from second_order_table import CASES, COVERAGE_CASES
from sweeps import sweep

from pullback import default_registry
from pullback.testing import check_rrule_second_order
from pullback.testing.second_order import OnSimplex

for _optional in (
    "scipy.special",
    "scipy.stats",
    "scipy.linalg",
    "scipy.signal",
    "scipy.integrate",
    "scipy.optimize",
    "scipy.sparse.linalg",
):
    try:
        importlib.import_module(_optional)
    except ImportError:  # pragma: no cover - SciPy is optional
        pass

# One module of cases per family group: new modules join by being there.
for _path in sorted(pathlib.Path(__file__).parent.glob("so_*.py")):
    importlib.import_module(_path.stem)

#: Families whose cases their own test file runs (with the checks particular to them:
#: closure agreement, rotation over distribution methods, wrappers); every other family's
#: cases run here. The "every rule has a case" test below covers every family.
RUN_ELSEWHERE = {
    "scipy_stats": "tests/rules/test_so_scipy_stats.py",
    "scipy_special": "tests/rules/test_so_scipy_special.py",
    "scipy_linalg": "tests/rules/test_so_scipy_calculus.py",
    "scipy_linalg_decomp": "tests/rules/test_so_scipy_calculus.py",
    "scipy_linalg_matfuncs": "tests/rules/test_so_scipy_calculus.py",
    "scipy_signal": "tests/rules/test_so_scipy_calculus.py",
    "scipy_integrate": "tests/rules/test_so_scipy_calculus.py",
    "array_api": "tests/test_array_api.py",
    "scipy_sparse": "tests/rules/test_scipy_sparse_so.py",
}



def _rules():
    registry = default_registry()
    registry.load_all()
    return [r for r in registry.rules() if r.kind in ("rule", "scalar")]


RULES = {rule.name: rule for rule in _rules()}


def test_every_rule_has_second_order_cases():
    missing = sorted(
        f"{rule.family}: {name}"
        for name, rule in RULES.items()
        if name not in CASES and name not in COVERAGE_CASES
    )
    assert not missing, f"{len(missing)} rules have no second-order case:\n" + "\n".join(missing)


def test_every_case_names_a_rule():
    unknown = sorted(name for name in {**CASES, **COVERAGE_CASES} if name not in RULES)
    assert not unknown, f"cases for names that are no rule: {unknown}"


def _float32(value):
    """``value`` with its float64 leaves in float32 (complex and integer ones unchanged)."""
    if isinstance(value, OnSimplex):
        return OnSimplex(_float32(value.point))
    if isinstance(value, list):
        return [_float32(v) for v in value]
    if isinstance(value, tuple):
        items = [_float32(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, np.ndarray) and value.dtype == np.float64:
        return value.astype(np.float32)
    if isinstance(value, np.float64):
        return np.float32(value)
    return value


def _has_float64_array(value) -> bool:
    if isinstance(value, OnSimplex):
        return _has_float64_array(value.point)
    if isinstance(value, (list, tuple)):
        return any(_has_float64_array(v) for v in value)
    return isinstance(value, (np.ndarray, np.float64)) and value.dtype == np.float64


PARAMS = []
_FURTHER = []  # a rule's later cases and its float32 case: sampled in the quick run
_WITH_FLOAT32 = set()
_HERE = {n: c for n, c in CASES.items() if n in RULES and RULES[n].family not in RUN_ELSEWHERE}
for _name, _cases in sorted({**_HERE, **COVERAGE_CASES}.items()):
    if _name not in RULES:
        continue  # test_every_case_names_a_rule names it
    for _k, (_args, _kwargs, _wrt) in enumerate(_cases):
        _case = pytest.param(_name, _args, _kwargs, _wrt, "float64", id=f"{_name}-{_k}")
        (PARAMS if _k == 0 else _FURTHER).append(_case)
        # float32 at each rule's first array case: the precision is the rule's, not the
        # input's (the suite's time goes to more rules, not more float32 inputs)
        if _has_float64_array(_args) and _name not in _WITH_FLOAT32:
            _WITH_FLOAT32.add(_name)
            _FURTHER.append(
                pytest.param(_name, _args, _kwargs, _wrt, "float32", id=f"{_name}-{_k}-f32")
            )
# every rule's first case always; the rest spread evenly, all of them under pytest --long
PARAMS += sweep(_FURTHER, quick=len(_FURTHER) // 3)


@pytest.mark.parametrize("name,args,kwargs,wrt,precision", PARAMS)
def test_second_order(name, args, kwargs, wrt, precision):
    rule = RULES.get(name)
    if rule is None:
        pytest.fail(f"no rule named {name}")
    if precision == "float32":
        args = _float32(args)
    check_rrule_second_order(rule.fn, *args, wrt=wrt, rng=len(name), **kwargs)
