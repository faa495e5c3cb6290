"""Helpers that write into the arrays their callers pass (issue 11): ``buf = fill(buf, x)``,
``fill(buf, x)`` with the result unused, ``fill(np.zeros(n), x)``, helpers calling helpers,
recursion, reads before writes, loops and branches, in-place calls; reverse mode against
central finite differences in float64 and float32, second order (reverse over reverse) and
forward mode (``jvp``). Calls that pass anything but a local array are refused before
running, at the call, naming the helper's write (golden messages below)."""

import re

import helper_writes_cases as C
import numpy as np
import pytest

from pullback import UnsupportedSyntaxError, grad, jvp, value_and_grad
from pullback.testing import check_grads

X = np.array([0.3, 0.5, 0.9, 0.2])
CASES = [pytest.param(f, id=f.__name__) for f in C.CASES]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("f", CASES)
def test_gradient_matches_finite_differences(f, dtype):
    assert check_grads(f, X.astype(dtype)) == "reverse"


@pytest.mark.parametrize("f", CASES)
def test_second_order_reverse_over_reverse(f):
    assert check_grads(f, X, order=2) == "reverse over reverse"


@pytest.mark.parametrize("f", CASES)
def test_forward_mode(f):
    v = np.array([0.7, -0.2, 0.4, 1.1])
    y, t = jvp(f, (X,), (v,))
    h = 1e-6
    expected = (f(X + h * v) - f(X - h * v)) / (2 * h)
    assert np.isclose(y, f(X))
    assert np.isclose(t, expected, rtol=1e-6, atol=1e-8)


def test_primal_value_and_caller_array_unchanged():
    x = X.copy()
    value, g = value_and_grad(C.result_unused)(x)
    assert np.isclose(value, C.result_unused(X))
    assert np.array_equal(x, X)  # the helper wrote into the caller's own buffer only
    assert g.shape == x.shape


def test_redefined_helper_is_picked_up():
    namespace = {"np": np}
    source = (
        "def helper(out, x):\n"
        "    out[0] = x[0] * {k}\n"
        "    return out\n"
        "def f(x):\n"
        "    buf = np.zeros(2)\n"
        "    buf = helper(buf, x)\n"
        "    return np.sum(buf * x)\n"
    )
    import linecache

    for k, name in ((2.0, "<helper_writes_a>"), (5.0, "<helper_writes_b>")):
        text = source.format(k=k)
        linecache.cache[name] = (len(text), None, text.splitlines(True), name)
        exec(compile(text, name, "exec"), namespace)  # noqa: S102 - the test's own text
        if k == 2.0:
            f = namespace["f"]
            g = grad(f)
            assert np.allclose(g(np.array([1.0, 1.0])), [4.0, 0.0])
    # f is the first definition; its global 'helper' is now the second one
    assert np.allclose(g(np.array([1.0, 1.0])), [10.0, 0.0])


def _message(f) -> str:
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(f)(X)
    return re.sub(r"\S*helper_writes_cases\.py", "cases.py", str(info.value))


def test_refused_own_parameter():
    assert _message(C.passes_its_parameter) == (
        "cannot differentiate 'passes_its_parameter' — 1 unsupported construct\n\n"
        "  cases.py:202:10: PB101 array mutation: 'fill' writes into its parameter 'out', "
        "which this call passes 'x'\n"
        "        fill(x, x)\n"
        "             ^\n"
        "    'fill' writes into 'out' at cases.py:8:9: `out[i] = np.sin(x[i]) * 2.0`. 'x' "
        "comes from a parameter, so it may be the caller's array, and a differentiated "
        "function may write only into arrays it created itself.\n"
        "    Fix: pass a copy: `fill(x.copy(), x)` (then use what 'fill' returns, or name "
        "the copy first: `x = x.copy()` before the call) (see docs/limitations.md#PB101)."
    )


def _detail(f) -> str:
    """The reason and fix lines of the one finding."""
    lines = _message(f).splitlines()
    return "\n".join(line.strip() for line in lines[2:])


def test_refused_global():
    assert _detail(C.passes_a_global) == (
        "cases.py:210:10: PB101 array mutation: 'fill' writes into its parameter 'out', which "
        "this call passes 'G'\n"
        "fill(G, x)\n"
        "^\n"
        "'fill' writes into 'out' at cases.py:8:9: `out[i] = np.sin(x[i]) * 2.0`. 'G' is a "
        "global or a variable of an enclosing function: the writes would outlive the call.\n"
        "Fix: pass a copy: `fill(G.copy(), x)` (then use what 'fill' returns, or name the copy "
        "first: `G = G.copy()` before the call) (see docs/limitations.md#PB101)."
    )


def test_refused_view():
    assert _detail(C.passes_a_view) == (
        "cases.py:216:10: PB101 array mutation: 'fill' writes into its parameter 'out', which "
        "this call passes 'buf[1:4]'\n"
        "fill(buf[1:4], x)\n"
        "^^^^^^^^\n"
        "'fill' writes into 'out' at cases.py:8:9: `out[i] = np.sin(x[i]) * 2.0`. `buf[1:4]` "
        "may be a view of another array (or that array itself), and the helper's writes would "
        "change that array through it, which pullback does not follow.\n"
        "Fix: pass a new array and write it back: `part = buf[1:4].copy()`, `fill(part, x)`, "
        "then store `part` where it belongs (`buf[1:4] = part`) (see "
        "docs/limitations.md#PB101)."
    )


def test_refused_parameter_passed_through_a_helper():
    assert _detail(C.passes_parameter_through_helper) == (
        "cases.py:240:38: PB101 array mutation: 'forwards_parameter' writes into its "
        "parameter 'out', which this call passes 'x'\n"
        "return np.sum(forwards_parameter(x, x))\n"
        "^\n"
        "'forwards_parameter' writes into 'out' at cases.py:235:10: `fill(out, x)`, which "
        "writes into it at cases.py:8:9: `out[i] = np.sin(x[i]) * 2.0`. 'x' comes from a "
        "parameter, so it may be the caller's array, and a differentiated function may write "
        "only into arrays it created itself.\n"
        "Fix: pass a copy: `forwards_parameter(x.copy(), x)` (then use what "
        "'forwards_parameter' returns, or name the copy first: `x = x.copy()` before the "
        "call) (see docs/limitations.md#PB101)."
    )


def test_refused_local_another_name_holds():
    detail = _detail(C.passes_a_shared_local)
    assert detail.startswith(
        "cases.py:230:10: PB101 array mutation: 'fill' writes into its parameter 'out', "
        "which this call passes 'buf'\n"
    )
    assert "'buf' is also used on line 229" in detail
    assert "Fix: pass a copy: `fill(buf.copy(), x)`" in detail


def test_refused_result_aliasing_the_argument_then_written():
    detail = _detail(C.result_aliases)
    assert detail.startswith(
        "cases.py:223:5: PB101 array mutation: assignment to an element of 'buf'\n"
    )
    assert "'buf' is also used on line 222" in detail


def test_refused_call_inside_an_expression():
    detail = _detail(C.call_inside_expression)
    assert detail.endswith(
        "Fix: write the call as a statement of its own (`f(buf, ...)` or `buf = f(buf, ...)`) "
        "and use the array afterwards (see docs/limitations.md#PB101)."
    )
    assert detail.startswith(
        "cases.py:245:24: PB101 array mutation: 'fill' writes into its parameter 'out', which "
        "this call passes 'buf'\n"
    )


def test_helper_alone_still_refused():
    # differentiated itself, the helper writes into its caller's array: PB101 as before
    with pytest.raises(UnsupportedSyntaxError, match="'out' comes from a parameter"):
        grad(C.fill, wrt=1)(np.zeros(4), X)


def test_refused_one_array_for_two_parameters():
    assert "is also passed as another argument of this call" in _detail(C.passes_one_array_twice)
    detail = _detail(C.passes_array_as_source_too)
    assert "'reads_and_writes' writes into its parameter 'out', which this call passes" in detail
    assert "Fix: pass a copy: `reads_and_writes(buf.copy(), buf)`" in detail


def test_method_writing_into_its_argument_stays_refused_in_the_method():
    assert "'out' comes from a parameter" in _detail(C.method_helper)


def test_refused_list_parameter_passed_to_a_helper_that_appends():
    # before, the append ran on the caller's list and its gradient was lost: [1, 0, ...]
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(C.passes_its_list, wrt=1)([0.5], X)
    message = re.sub(r"\S*helper_writes_cases\.py", "cases.py", str(info.value))
    assert "PB101 array mutation: 'add_scaled' writes into its parameter 'rows', which this " \
        "call passes 'rows'" in message
    assert "at cases.py:353:5: `rows.append(v * 2.0)`" in message
    assert "Fix: pass a copy: `add_scaled(rows.copy(), x[0])`" in message


def test_list_built_by_a_helper_from_a_fresh_list():
    assert np.allclose(grad(C.list_parameter)(X), [2.0, 1.0, 0.0, 0.0])


def test_refused_helper_keeping_what_it_writes_into():
    assert _detail(C.kept_then_read) == (
        "cases.py:402:17: PB101 array mutation: 'keep_written' keeps 'out', which it writes "
        "into, in `KEPT.append(out)`\n"
        "KEPT.append(out)\n"
        "^^^\n"
        "Every call of 'keep_written' passes 'out' an array of its caller, which would then be "
        "that same array in Python, changed and read by the caller after the call, which "
        "pullback does not follow.\n"
        "Fix: keep a copy (`out.copy()`) there, or return 'out' (see docs/limitations.md#PB101)."
    )
    assert "'keep_on_object' keeps 'out', which it writes into, in `HOLDER.last`" in _detail(
        C.kept_on_object
    )


def test_refused_list_parameter_of_the_differentiated_function():
    # main gave [1, 0, 0, 0] here: the appended value's gradient was lost
    with pytest.raises(UnsupportedSyntaxError, match="'add_scaled' writes into its parameter"):
        grad(C.appends_to_its_list_parameter)(X, [1.0])


def test_augmented_assignment_to_a_parameter_alone_rebinds_a_float_in_the_helper():
    # s += v rebinds a float (and would write into an array, refused for an array
    # argument: tests/test_param_rebinding.py): the helper runs as written
    x = np.array([0.3, 0.5, 0.9, 0.2])
    np.testing.assert_allclose(
        grad(C.passes_a_float_to_augmented_assignment)(x), [4.0, 1.0, 0.0, 0.0]
    )


def test_hessian_and_grad_of_grad():
    from pullback import hessian

    h = 1e-4
    x = X
    exact = hessian(C.result_unused)(x)
    g = grad(C.result_unused)
    fd = np.stack([(g(x + h * e) - g(x - h * e)) / (2 * h) for e in np.eye(x.size)])
    assert np.allclose(exact, fd, rtol=1e-6, atol=1e-7)
    t = 0.4
    second = grad(grad(C.scalar_input))(t)
    d = grad(C.scalar_input)
    assert np.isclose(second, (d(t + h) - d(t - h)) / (2 * h), rtol=1e-6)


def test_a_helpers_fill_loop_writes_in_place():
    # the specialization's entry copy is no whole use of the array: the writes that follow
    # run in place (array_set), not as a copy of the array at each write (array_set_copy)
    from pullback.transform.normalize import core_source
    from pullback.transform.owned_helpers import specialization

    text = core_source(specialization(C.fill, ("out",), (None,)))
    assert "_pb_array_set(" in text and "_pb_array_set_copy(" not in text


def test_out_keyword_of_a_user_function_passing_the_callers_parameter_is_refused_at_the_call():
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(C.out_keyword_passes_its_parameter)(X, np.zeros(4))
    text = str(info.value)
    assert "PB101" in text and "PB104" not in text
    assert "'add_into' writes into its parameter 'out', which this call passes 'y'" in text
    assert "`add_into(x, x, out=y.copy())`" in text
