"""Errors a user can meet, as golden text: what went wrong, where, and the fix."""

import math
import os

import error_cases as cases
import numpy as np
import pytest

import pullback
from pullback import grad, vjp

HERE = os.path.dirname(cases.__file__) + os.sep


def message(exc_info) -> str:
    return str(exc_info.value).replace(HERE, "")


def test_non_scalar_output():
    """At the function's return, on the first call (the general path) and the next ones
    (the hot entry) alike."""
    g = grad(cases.vector_valued)
    for _ in range(3):
        with pytest.raises(pullback.NonScalarOutputError) as e:
            g(np.ones(3))
        assert message(e) == (
            "error_cases.py:7:5: grad needs 'vector_valued' to return a scalar, but it "
            "returned an array of shape (3,).\n"
            "Fix: reduce it to a scalar (np.sum, np.mean, ...), or use pullback.vjp / "
            "pullback.jacobian for non-scalar outputs."
        )


def test_wrt_that_names_no_parameter():
    with pytest.raises(pullback.ArgumentError) as e:
        grad(cases.vector_valued, wrt="y")
    assert message(e) == "wrt='y' names no parameter of 'vector_valued'; its parameters are x."
    with pytest.raises(pullback.ArgumentError) as e:
        grad(cases.vector_valued, wrt=3)
    assert message(e) == "wrt=3 is out of range: 'vector_valued' has 1 parameter (x)."
    with pytest.raises(pullback.ArgumentError) as e:
        grad(cases.vector_valued, wrt=1.5)
    assert (
        message(e)
        == "wrt=1.5: each entry must be an argument index or a parameter name, not float."
    )


def test_integer_argument_is_not_differentiable():
    with pytest.raises(pullback.NotDifferentiableError) as e:
        grad(cases.apply, wrt=1)(math.sin, 3)
    assert message(e) == (
        "cannot differentiate 'apply' with respect to 'x': it is an int, which has no gradient.\n"
        "Fix: pass a floating-point value (e.g. float(x) or np.asarray(x, dtype=float)), or "
        "leave 'x' out of wrt."
    )
    with pytest.raises(pullback.NotDifferentiableError):
        grad(cases.uses_sorted)(np.arange(3))


def test_function_without_source():
    with pytest.raises(pullback.SourceUnavailableError) as e:
        grad(math.sin)(1.0)
    assert message(e) == (
        "cannot differentiate math.sin directly: it is a builtin_function_or_method, not a "
        "Python function (pullback transforms Python source).\n"
        "Fix: wrap it in one, e.g. `grad(lambda x: math.sin(x))`; its rule is used inside."
    )
    namespace = {}
    exec("def made(x):\n    return x * x\n", namespace)
    with pytest.raises(pullback.SourceUnavailableError) as e:
        grad(namespace["made"])(1.0)
    assert message(e).startswith("cannot differentiate 'made': its source is not available")
    with pytest.raises(pullback.SourceUnavailableError) as e:
        grad(np.sum)(np.ones(2))
    assert "grad(lambda x: numpy.sum(x))" in message(e)


def test_every_problem_reported_before_the_body_runs():
    calls = []
    with pytest.raises(pullback.UnsupportedSyntaxError) as e:
        grad(cases.mutates)(np.ones(3), calls)
    assert calls == []  # the body never ran
    assert isinstance(e.value, SyntaxError)
    assert e.value.lineno == 16 and e.value.filename.endswith("error_cases.py")
    assert [d.code for d in e.value.diagnostics] == ["PB106", "PB101", "PB202"]
    text = message(e)
    assert text.startswith("cannot differentiate 'mutates' — 3 unsupported constructs\n\n")
    assert (
        "  error_cases.py:17:5: PB101 array mutation: assignment to an element of 'x'\n"
        "        x[0] = 2.0 * x[0]\n"
        "        ^^^^\n"
        "    'x' comes from a parameter, so it may be the caller's array, and a "
        "differentiated function may write only into arrays it created itself.\n"
    ) in text


def test_error_in_the_forward_sweep_keeps_its_type_and_names_the_line():
    with pytest.raises(ValueError) as e:
        grad(cases.shape_bug)(np.ones((2, 3)), np.ones((4, 2)))
    notes = getattr(e.value, "__notes__", [])
    assert any("error_cases.py:26: c = a @ b" in n for n in notes)


def test_missing_rule_found_at_run_time_names_the_call_site():
    with pytest.raises(pullback.MissingRuleError) as e:
        grad(cases.apply, wrt=1)(frozenset, np.ones(3))
    assert message(e) == (
        "error_cases.py:35:12: cannot differentiate the call of 'frozenset': it has neither "
        "Python source nor a rule.\n"
        "        return fn(x)\n"
        "Fix: register a rule with `@pullback.rrule(frozenset)`, or declare it "
        "non-differentiable with `pullback.non_differentiable(frozenset)`."
    )


def test_bad_cotangent_shape_for_vjp():
    y, back = vjp(cases.vector_valued, np.ones(3))
    with pytest.raises(pullback.ShapeMismatchError) as e:
        back(np.ones(4))
    assert message(e) == (
        "dy has shape (4,) but the output has shape (3,); a cotangent must have its output's shape."
    )


def test_has_aux_needs_a_pair():
    with pytest.raises(pullback.ArgumentError) as e:
        grad(cases.vector_valued, has_aux=True)(np.ones(3))
    assert message(e) == (
        "has_aux=True needs 'vector_valued' to return (value, aux); it returned a ndarray."
    )


def test_bad_custom_rule_is_named_with_the_users_line():
    reg = pullback.default_registry().copy()

    def double(x):
        return 2.0 * x

    @reg.rrule(double)
    def _(x):
        def double_pullback(dy):
            return (2.0 * dy, 1.0)  # one cotangent too many

        return 2.0 * x, double_pullback

    def uses_double(x):
        return np.sum(double(x))

    with pytest.raises(pullback.RuleError) as e:
        grad(uses_double, registry=reg)(np.ones(3))
    text = message(e)
    assert "test_errors.py" in text and "return np.sum(double(x))" in text
    assert "returned 2 cotangents for 1 positional arguments" in text


def test_no_internal_traceback_for_a_bad_argument_binding():
    with pytest.raises(pullback.ArgumentError) as e:
        grad(cases.vector_valued)(1.0, 2.0)
    assert message(e) == (
        "cannot call 'vector_valued' with these arguments: too many positional arguments"
    )


def test_all_errors_share_one_base_class():
    for cls in (
        pullback.UnsupportedSyntaxError,
        pullback.SourceUnavailableError,
        pullback.ArgumentError,
        pullback.NotDifferentiableError,
        pullback.ShapeMismatchError,
        pullback.NonScalarOutputError,
        pullback.MissingRuleError,
        pullback.RuleError,
        pullback.AdjointRuntimeError,
    ):
        assert issubclass(cls, pullback.PullbackError)


def test_loop_over_a_non_iterable_names_the_loop():
    with pytest.raises(pullback.NotIterableError) as e:
        grad(cases.loops_over)(2.5)
    assert isinstance(e.value, TypeError)
    assert message(e) == (
        "error_cases.py:44: a for loop iterates over a float, which is not iterable (Python "
        "would raise the same TypeError).\n"
        "        for v in values:\n"
        "Fix: loop over a list, tuple, array or range(...)."
    )


def test_custom_rule_with_a_wrongly_shaped_cotangent():
    reg = pullback.default_registry().copy()

    def scale(x):
        return 3.0 * x

    @reg.rrule(scale)
    def _(x):
        def scale_pullback(dy):
            return (np.ones(7),)  # not the shape of x

        return 3.0 * x, scale_pullback

    def uses_scale(x):
        return np.sum(scale(x))

    with pytest.raises(pullback.RuleError) as e:
        grad(uses_scale, registry=reg)(np.ones(3))
    text = message(e)
    assert "returned a cotangent of shape (7,) for argument 0, which has shape (3,)" in text
    assert "test_errors.py" in text and "return np.sum(scale(x))" in text


def test_diagnostic_is_an_immutable_value():
    import copy
    import pickle

    from pullback import Diagnostic

    d = Diagnostic("PB101", "array mutation", "m.py", 3, 4, 8, "    x[i] = 2\n", "why", "fix")
    assert d == Diagnostic(**{n: getattr(d, n) for n in Diagnostic.FIELDS})
    assert hash(d) == hash(copy.copy(d)) and pickle.loads(pickle.dumps(d)) == d
    moved = d.replace(filename="n.py", line=4)
    assert (moved.filename, moved.line, moved.code) == ("n.py", 4, "PB101") and moved != d
    assert d.header() == "m.py:3:5: PB101 array mutation"
    with pytest.raises(AttributeError):
        d.line = 5
    with pytest.raises(TypeError):
        d.replace(column=1)
