"""The fix a PB502 refusal gives for a differentiated keyword argument of a rule works with
the installed NumPy and SciPy: a parameter it says to pass by position binds there in the
real function's signature (a sweep of the registry), np.clip's keyword-only ``min`` names
its positional twin, and the fixed call differentiates."""

import inspect
import re

import numpy as np
import pytest
from fd import check_grad
from sweeps import sweep

from pullback import UnsupportedSyntaxError, grad
from pullback.registry import default_registry
from pullback.transform.problems import keyword_fix

_PLACE = re.compile(
    r"'(\w+)', by position, as argument (\d+) of|'(\w+)' by position, as argument (\d+) of"
)


def _signature(fn):
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def _keyword_cases():
    cases = []
    for rule in default_registry().rules():
        sig = _signature(rule.fn)
        if sig is None:
            continue
        aliases = rule.extra.get("keyword_aliases") or {}
        names = [p.name for p in sig.parameters.values() if p.kind is not p.VAR_POSITIONAL]
        for name in [*names[1:], *aliases]:  # (the first is the data: never a keyword here)
            cases.append((rule.name, rule.fn, name, aliases))
    return cases


CASES = _keyword_cases()


@pytest.mark.parametrize(
    "case", sweep(CASES, quick=60), ids=lambda c: f"{c[0]}-{c[2]}" if isinstance(c, tuple) else ""
)
def test_the_suggested_position_binds_in_the_real_signature(case):
    callee, fn, name, aliases = case
    text = keyword_fix(fn, name, callee, aliases)
    found = _PLACE.search(text)
    if found is None:  # no place to give it: the fix is a rule of the user's own
        assert "@pullback.rrule" in text and "positionally" in text, text
        sig = inspect.signature(fn)
        param = sig.parameters.get(name)
        assert (
            param is None
            or param.kind is param.KEYWORD_ONLY
            or any(
                p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                for p in list(sig.parameters.values())[: list(sig.parameters).index(name) + 1]
            )
        ), text
        return
    target = found.group(1) or found.group(3)
    k = int(found.group(2) or found.group(4))
    assert target == name or aliases.get(name) == target, text
    bound = inspect.signature(fn).bind_partial(*range(k))
    assert bound.arguments.get(target) == k - 1, text


def test_the_registry_sweep_reaches_positional_and_keyword_only_parameters():
    texts = [keyword_fix(fn, name, callee, aliases) for callee, fn, name, aliases in CASES]
    assert any("by position, as argument" in t for t in texts)
    assert any("@pullback.rrule" in t for t in texts)


def clip_min_keyword(x, lo):
    return np.sum(np.clip(x, min=lo, max=0.9) ** 2)


def clip_fixed(x, lo):  # the fix applied: the bound by position, as argument 2
    return np.sum(np.clip(x, lo, 0.9) ** 2)


def clip_a_min_keyword(x, lo):  # a keyword naming a positional parameter is moved there
    return np.sum(np.clip(x, a_min=lo, a_max=0.9) ** 2)


def test_clip_min_keyword_refusal_names_its_positional_twin():
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(clip_min_keyword, wrt=(0, 1))(np.linspace(0.1, 1.0, 4), 0.35)
    (d,) = info.value.diagnostics
    assert d.code == "PB502"
    assert d.fix == (
        "'min' is keyword-only in np.clip: pass the same bound as 'a_min', by position, "
        "as argument 2 of np.clip (np.clip(a, a_min, ...))."
    )


@pytest.mark.parametrize("fn", [clip_fixed, clip_a_min_keyword])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_fixed_clip_differentiates(fn, dtype):
    x = np.array([0.1, 0.5, 0.95, 0.7], dtype=dtype)
    check_grad(fn, x, dtype(0.35), wrt=(0, 1))
    check_grad(fn, np.float64(0.6), 0.35, wrt=(0, 1))  # a scalar, broadcast against lo
