"""A lookup that misses for a user's function (a call found at run time, at every call)
keeps its answer that no waiting family's DOMAIN holds the function's name: the names
are kept per list of waiting families, which a family joining or leaving replaces, so a
family that arrives after a miss is still found at the next lookup."""

from __future__ import annotations

import types

import pytest

from pullback import registry as registry_module
from pullback.registry import RuleRegistry, qualified_name


def user_function(x):
    return 2.0 * x


def family_for(fn, name="late"):
    """A family waiting for a lookup of ``fn``'s name (a DOMAIN of one name)."""

    def register(reg):
        @reg.rrule(fn)
        def _(x):
            return fn(x), lambda dy: (2.0 * dy,)

    return types.SimpleNamespace(FAMILY=name, DOMAIN={qualified_name(fn)}, register=register)


def counted_in_domain(monkeypatch):
    calls = []
    real = registry_module.in_domain

    def counted(name, domain):
        calls.append(name)
        return real(name, domain)

    monkeypatch.setattr(registry_module, "in_domain", counted)
    return calls


def test_a_repeated_miss_is_answered_from_the_kept_names(monkeypatch):
    reg = RuleRegistry()
    reg.add_family(family_for(len, "other"))  # a family waiting for another name
    calls = counted_in_domain(monkeypatch)
    assert reg.lookup(user_function) is None
    first = len(calls)
    assert first > 0
    assert reg.lookup(user_function) is None
    assert len(calls) == first  # no family's domain read again


def test_a_family_added_after_a_miss_is_found():
    reg = RuleRegistry()
    reg.add_family(family_for(len, "other"))
    assert reg.lookup(user_function) is None  # kept as outside every waiting domain
    reg.add_family(family_for(user_function))
    rule = reg.lookup(user_function)
    assert rule is not None and rule.fn is user_function
    assert reg.deferred_families()[0].FAMILY == "other"  # the other still waits


def test_a_copy_answers_for_its_own_families():
    reg = RuleRegistry()
    reg.add_family(family_for(len, "other"))
    assert reg.lookup(user_function) is None
    mine = reg.copy()
    mine.add_family(family_for(user_function))
    assert mine.lookup(user_function) is not None
    assert reg.lookup(user_function) is None


def test_a_renamed_function_is_answered_for_its_new_name():
    def renamed(x):
        return x

    reg = RuleRegistry()
    reg.add_family(family_for(user_function))
    assert reg.lookup(renamed) is None  # its name is in no waiting domain: kept
    assert [f.FAMILY for f in reg.deferred_families()] == ["late"]
    renamed.__qualname__ = user_function.__qualname__  # the name the family waits for
    reg.lookup(renamed)
    assert reg.deferred_families() == []  # loaded by the lookup under the new name
    assert reg.lookup(user_function) is not None


@pytest.mark.parametrize("limit", [2])
def test_the_kept_names_are_bounded(monkeypatch, limit):
    monkeypatch.setattr(registry_module, "_OUTSIDE_LIMIT", limit)
    reg = RuleRegistry()
    reg.add_family(family_for(len, "other"))
    for k in range(5):
        fn = types.FunctionType(user_function.__code__, {}, f"made_{k}")
        assert reg.lookup(fn) is None
    assert len(reg._outside[1]) <= limit
