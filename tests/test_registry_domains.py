"""Families deferred by ``DOMAIN`` (registry.add_family): a family whose every rule is for a
function of one namespace (``math``), or of a set of names (rules/family_domains.py: linear
algebra, polynomials, ``np.gradient``, ...), registers on the first lookup of such a function.

What makes that safe is checked here: the table then reads exactly as if the family had
registered in its place (every rule, its pullback function and its name), loading it changes
no other entry, a user's rule for one of its functions still wins, and a gradient that calls
none of them never imports the family's module.
"""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from pullback import grad
from pullback import rules as shipped
from pullback.registry import RuleRegistry, in_domain, qualified_name
from pullback.rules.family_domains import DOMAINS

DOMAIN_FAMILIES = [f for f in shipped._ORDER if getattr(f, "DOMAIN", None) is not None]


def _eager_registry() -> RuleRegistry:
    """Every family registered in its place, none waiting for its domain."""
    reg = RuleRegistry()
    for family in shipped._ORDER:
        if getattr(family, "DOMAIN", None) is not None:
            family.register(reg)
        else:
            reg.add_family(family)
    return reg


def _table(reg) -> dict:
    def label(f):
        return None if f is None else getattr(f, "__qualname__", repr(f))

    return {
        key: (
            rule.name,
            rule.kind,
            rule.family,
            rule.trusted,
            rule.notes,
            label(rule.rrule),
            label(rule.pullback_fn),
            len(rule.derivatives or ()),
        )
        for key, (_, rule) in reg._rules.items()
    }


def _member(family):
    """A function of ``family``'s, from a registry where it registered in its place."""
    return next(fn for fn, r in _eager_registry()._rules.values() if r.family == family.FAMILY)


def test_there_are_domain_families():
    assert [f.FAMILY for f in DOMAIN_FAMILIES if isinstance(f.DOMAIN, str)] == ["math"]
    by_names = {f.module: f.DOMAIN for f in DOMAIN_FAMILIES if not isinstance(f.DOMAIN, str)}
    assert by_names == DOMAINS  # every set of names defers its family


@pytest.mark.parametrize("family", DOMAIN_FAMILIES, ids=lambda f: f.FAMILY)
def test_every_function_a_family_registers_is_in_its_domain(family):
    # a function outside it would be looked up (and missed) without loading the family
    reg = RuleRegistry()
    family.register(reg)
    names = [qualified_name(fn) for fn, _ in reg._rules.values()]
    assert names and [n for n in names if not in_domain(n, family.DOMAIN)] == []


def test_in_domain_reads_a_namespace_or_a_set_of_names():
    assert in_domain("math.exp", "math") and not in_domain("mathx.exp", "math")
    assert not in_domain("math", "math")
    names = frozenset({"numpy.diff"})
    assert in_domain("numpy.diff", names) and not in_domain("numpy.diff.x", names)


@pytest.mark.parametrize("family", DOMAIN_FAMILIES, ids=lambda f: f.FAMILY)
def test_loading_a_domain_family_changes_no_other_entry(family):
    # one of its functions, from a registry where it registered in its place
    member = _member(family)
    reg = shipped.build_default_registry()
    assert family in reg.deferred_families()
    before = {key: (rule, dict(vars(rule))) for key, (_, rule) in reg._rules.items()}
    assert reg.lookup(member).family == family.FAMILY
    assert family not in reg.deferred_families()
    for key, (rule, attributes) in before.items():
        assert reg._rules[key][1] is rule and vars(rule) == attributes, rule
    added = [fn for key, (fn, _) in reg._rules.items() if key not in before]
    assert added  # the family's rules, each for a function of its namespace
    assert all(in_domain(qualified_name(fn), family.DOMAIN) for fn in added), added


def test_the_table_is_the_one_of_registering_every_family_in_place():
    eager = _table(_eager_registry())
    deferred = shipped.build_default_registry()
    deferred.lookup(math.exp)  # a lookup in the domain registers the family
    for family in DOMAIN_FAMILIES:
        deferred.lookup(_member(family))
    assert [f for f in deferred.deferred_families() if f in DOMAIN_FAMILIES] == []
    assert _table(deferred) == eager


@pytest.mark.parametrize("family", DOMAIN_FAMILIES, ids=lambda f: f.FAMILY)
def test_the_table_is_the_same_whichever_family_loads_first(family):
    eager = _table(_eager_registry())
    deferred = shipped.build_default_registry()
    assert deferred.lookup(_member(family)).family == family.FAMILY
    deferred.load_all()  # the others after it
    assert {k: v for k, v in _table(deferred).items() if k in eager} == eager


def test_no_other_family_registers_a_function_of_a_domain():
    # A rule registered before the family for one of its functions would be found instead
    # of the family's (the lookup would not miss), and one registered after would be
    # replaced when the family loads: neither happens when no other family has one.
    reg = RuleRegistry()
    for family in shipped._ORDER:
        if getattr(family, "DOMAIN", None) is None:
            reg.add_family(family)
    assert [
        qualified_name(fn)
        for fn, _ in reg._rules.values()
        if any(in_domain(qualified_name(fn), f.DOMAIN) for f in DOMAIN_FAMILIES)
    ] == []


def test_a_lookup_outside_every_domain_loads_nothing():
    reg = shipped.build_default_registry()
    waiting = reg.deferred_families()
    assert reg.lookup(np.sum) is not None
    assert reg.lookup(len) is not None
    assert reg.lookup(lambda x: x) is None
    assert reg.deferred_families() == waiting


def test_a_user_rule_for_a_domain_function_wins_over_the_shipped_one():
    reg = shipped.build_default_registry()

    @reg.rrule(math.exp)
    def _mine(x):
        return math.exp(x), lambda dy: (7.0 * dy,)

    assert reg.lookup(math.sin).family == "math"  # the family loads after the user's rule
    mine = reg.lookup(math.exp)
    assert mine.family == "user" and mine.rrule is _mine and mine.pullback_fn is None
    # a removal before the family loads stays removed
    other = shipped.build_default_registry()
    other.remove(math.cos)
    assert other.lookup(math.cos) is None and other.lookup(math.sin).family == "math"


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gradient_through_math_calls_matches_finite_differences(dtype):
    def f(x):
        return math.exp(math.sin(x)) + math.log1p(x * x)

    x = dtype(0.7)
    h = 1e-6 if dtype is np.float64 else 1e-3
    want = (f(float(x) + h) - f(float(x) - h)) / (2 * h)
    rtol = 1e-8 if dtype is np.float64 else 1e-3
    np.testing.assert_allclose(grad(f)(x), want, rtol=rtol)


def test_a_numpy_gradient_leaves_the_math_family_unimported(tmp_path):
    (tmp_path / "domain_np.py").write_text(
        "import numpy as np\n\ndef f(x):\n    return np.sum(np.tanh(x) ** 2)\n"
    )
    (tmp_path / "domain_math.py").write_text(
        "import math\n\ndef g(x):\n    return math.exp(2.0 * x)\n"
    )
    code = f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import numpy as np
        import pullback, domain_np, domain_math
        pullback.grad(domain_np.f)(np.ones(3))
        before = 'pullback.rules.math_rules' in sys.modules
        d = pullback.grad(domain_math.g)(0.25)
        print(before, abs(d - 2.0 * np.exp(0.5)) < 1e-12,
              pullback.default_registry().lookup(domain_math.math.exp).family)
        """
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True", "math"]
