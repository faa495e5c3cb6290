"""Behaviour of the static check beyond the exact wording (see test_golden.py for that)."""

import gast
import numpy as np
import pytest

from pullback.check import (
    LiveEnvironment,
    check,
    check_function,
    raise_if_unsupported,
    rebinding_augassigns,
)
from pullback.check.checker import FunctionChecker
from pullback.errors import SourceUnavailableError
from pullback.registry import default_registry
from pullback.source import load_source

from . import callee_cases, cases

CALLS = []
CACHE = []
W = np.ones((3, 3))


def codes_of(fn, registry=None):
    return [d.code for d in check(fn, registry)]


def test_supported_function_has_no_findings():
    assert check(cases.supported) == []
    assert raise_if_unsupported(cases.supported) is None


def test_check_function_is_check():
    assert check_function(cases.pb101_element) == check(cases.pb101_element)


def test_callee_findings_carry_the_callees_file_and_line():
    # A callee writing into the caller's parameter: reported at the caller's call (where
    # the copy goes), naming the callee's own file and line (check/helper_writes.py).
    (diagnostic,) = check(cases.calls_callee)
    assert diagnostic.filename == cases.__file__
    assert diagnostic.line == cases.calls_callee.__code__.co_firstlineno + 1
    line = callee_cases.mutates.__code__.co_firstlineno + 1
    assert f"{callee_cases.__file__}:{line}:5: `x[0] = 0.0`" in diagnostic.why
    # A callee's own finding carries the callee's file and line.
    (diagnostic,) = check(cases.calls_with_rule)
    assert diagnostic.filename == callee_cases.__file__
    assert diagnostic.line == callee_cases.has_rule.__code__.co_firstlineno + 1


def test_recursion_and_cycles_terminate_and_report_each_function_once():
    diagnostics = check(cases.recursive)
    line = cases.recursive.__code__.co_firstlineno + 3  # the call ping(x, n)
    assert [(d.code, d.line) for d in diagnostics] == [("PB101", line)]
    pong = cases.pong.__code__.co_firstlineno + 1
    assert f"{cases.__file__}:{pong}:5: `x[0] = 1.0`" in diagnostics[0].why


def helper_bad(x):
    x[0] = 1.0
    return x


def helper_clean(x):
    return helper_bad(x) * 2.0


def calls_twice(x):
    y = x[0]
    y = y.sum()
    return helper_bad(x) + helper_clean(x) + helper_bad(x)


def own_problem_then_callees(x):
    a = helper_clean(x)
    del a
    return helper_bad(x)


def test_each_callee_is_checked_once_and_after_the_callers_own_findings():
    # each call passing the caller's parameter to a helper that writes into it is
    # reported at the call; the helpers themselves are then clean (checked once)
    diagnostics = check(calls_twice)
    line = calls_twice.__code__.co_firstlineno + 3
    assert [(d.code, d.line, d.col) for d in diagnostics] == [
        ("PB101", line, 22), ("PB101", line, 40), ("PB101", line, 56)
    ]
    diagnostics = check(own_problem_then_callees)
    first = own_problem_then_callees.__code__.co_firstlineno
    assert [(d.code, d.line) for d in diagnostics] == [
        ("PB101", first + 1), ("PB108", first + 2), ("PB101", first + 3)
    ]
    assert f":{helper_bad.__code__.co_firstlineno + 1}:5: `x[0] = 1.0`" in diagnostics[2].why


def test_a_rule_replaces_checking_the_callee():
    # Without a rule the callee's `with` is reported at its own place ...
    (diagnostic,) = check(cases.calls_with_rule)
    assert diagnostic.code == "PB202" and diagnostic.filename == callee_cases.__file__
    # ... with one, the callee is not transformed, so not checked.
    registry = default_registry().copy()
    registry.non_differentiable(callee_cases.has_rule)
    assert check(cases.calls_with_rule, registry) == []


def test_callee_without_source_is_a_foreign_call():
    (diagnostic,) = check(cases.calls_sourceless)
    assert diagnostic.code == "PB301"
    assert "source cannot be read" in diagnostic.message


def test_function_without_source_raises():
    with pytest.raises(SourceUnavailableError):
        check(len)
    namespace = {}
    exec("def made(x):\n    return x\n", namespace)
    with pytest.raises(SourceUnavailableError):
        check(namespace["made"])


def side_effect(x):
    CALLS.append(x)
    return x


def would_have_side_effects(x):
    side_effect(x)
    x[0] = side_effect(1.0)
    return x


def test_check_runs_no_user_code():
    # its own mutation; the callee's append to a global list just runs (it is not read back)
    assert codes_of(would_have_side_effects) == ["PB101"]
    assert CALLS == []


def mutation_inside_try(x):
    with memoryview(x) as _m:
        y = [1.0 for _ in x]
        x[0] = y[0]
    if y[0] > 2.0:
        x.fill(0.0)
    return x


def test_nested_constructs_are_reported_once_each_in_source_order():
    diagnostics = check(mutation_inside_try)
    assert [d.code for d in diagnostics] == ["PB202", "PB101", "PB103"]
    assert [d.line for d in diagnostics] == sorted(d.line for d in diagnostics)


def library_call(x):
    u = np.linalg.svd(x)
    return W.dot(x) + x.dot(x) + u[1].sum()


def test_library_function_without_rule_is_foreign_and_not_transformed():
    registry = default_registry().copy()
    registry.remove(np.linalg.svd)
    diagnostics = check(library_call, registry)
    assert [d.code for d in diagnostics] == ["PB301"]
    assert "'numpy.linalg.svd'" in diagnostics[0].message
    assert "library code" in diagnostics[0].message
    assert "@pullback.rrule(numpy.linalg.svd)" in diagnostics[0].fix


def global_container(x):
    CACHE.append(x)
    return x


def raise_and_print(x):
    if x.ndim != 1:
        raise ValueError(f"expected 1-d, got {sorted(x.shape)}")
    print("x is", x)
    return x.sum()


def test_global_container_mutation_and_forward_only_code():
    # runs as written: the appended value never comes back (the transform refuses an
    # append that is read back, tests/test_comprehensions.py)
    assert codes_of(global_container) == []
    registry = default_registry().copy()
    registry.remove(sorted)
    registry.remove(print)
    assert check(raise_and_print, registry) == []


def misspelled(x):
    return np.tanhh(x) + lenn(x)  # noqa: F821


def test_undefined_names_suggest_the_close_spelling():
    first, second = check(misspelled)
    assert first.code == second.code == "PB302"
    assert "did you mean 'np.tanh'?" in first.fix
    assert "did you mean 'len'?" in second.fix


def test_a_lambda_is_checked_as_a_function():
    sort_all = lambda x: np.sum(x.sort())  # noqa: E731
    assert codes_of(sort_all) == ["PB103"]


# -- PB105: augmented assignment to a name ------------------------------------------------
def scalar_accumulation(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * x[i]
        if s > 10.0:
            s -= 1.0
    return s


def fresh_arrays(x):
    y = x * 2.0
    y += 1.0
    z = np.zeros(3)
    z += y
    c = x.copy()
    c *= np.sum(y)
    acc = ()
    for v in x:
        acc += (v,)
    t, u = x + 1.0, -x
    t += u
    return y + z + c + np.stack(acc) + t + len(y)


def test_provable_rebindings_are_allowed():
    assert check(scalar_accumulation) == []
    assert check(fresh_arrays) == []


def chained(x):
    a = b = x * 2.0
    a += 1.0
    return a + b


def aliased(x):
    y = x * 1.0
    z = y
    y += 1.0
    return z


def aliased_in_loop(x):
    y = x * 1.0
    total = 0.0
    for _ in range(3):
        z = y
        y += 1.0
        total = total + np.sum(z)
    return total


def loop_rows(X):
    for row in X:
        row += 1.0
    return X


def aliased_after_is_fine(x):
    y = x * 1.0
    y += 1.0
    z = y
    return z


def test_augmented_assignments_that_may_mutate_a_shared_array():
    for fn in (chained, aliased, aliased_in_loop, loop_rows):
        (diagnostic,) = check(fn)
        assert diagnostic.code == "PB105", fn.__name__
    assert check(aliased_after_is_fine) == []
    (diagnostic,) = check(aliased_in_loop)
    assert "line" in diagnostic.why and diagnostic.fix.startswith("write `y = y + 1.0`")


def precedence(x):
    x -= 1.0 - x
    return x


def test_pb105_fix_keeps_the_meaning_of_the_operator():
    (diagnostic,) = check(precedence)
    assert "`x = x - (1.0 - x)`" in diagnostic.fix


def test_rebinding_augassigns_exposes_the_same_decision():
    fs = load_source(aliased_after_is_fine)
    (stmt,) = rebinding_augassigns(fs)
    assert isinstance(stmt, gast.AugAssign) and stmt.lineno == 3
    assert rebinding_augassigns(load_source(aliased)) == set()


# -- the catch-all ----------------------------------------------------------------------------
def unknown_node(x):
    return x


def test_unknown_node_types_are_reported_as_pb400():
    fs = load_source(unknown_node)
    ret = fs.tree.body[0]
    weird = gast.Repr(value=ret.value)  # a Python 2 node: no supported subset has it
    gast.copy_location(weird, ret.value)
    weird.end_lineno, weird.end_col_offset = ret.value.end_lineno, ret.value.end_col_offset
    ret.value = weird
    diagnostics = FunctionChecker(fs, default_registry(), LiveEnvironment()).run()
    assert [d.code for d in diagnostics] == ["PB400"]
    assert "'Repr'" in diagnostics[0].message


# -- properties of every diagnostic -----------------------------------------------------------
def test_every_diagnostic_is_one_line_with_a_reason_and_a_documented_fix():
    registry = default_registry().copy()
    registry.remove(sorted)
    names = [n for n in vars(cases) if n.startswith("pb")] + ["several"]
    for name in names:
        for d in check(getattr(cases, name), registry):
            assert "\n" not in d.message and d.message
            assert d.why.endswith(".") and "\n" not in d.why
            assert f"docs/limitations.md#{d.code}" in d.fix
            assert d.end_col > d.col
            assert d.source_line.strip()
