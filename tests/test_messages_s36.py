"""Messages a user meets at the edges, as golden text naming the user's line, and the
gradients that now flow where a refusal fired before.

* A rule's refused cotangent (a Bessel function's float order, Riemann zeta's ``x`` below
  -2) accumulates silently where the refused parameter is not differentiated (a constant
  kept in a tuple, list or dict next to differentiated values, or passed through a
  helper): the gradient
  of the rest matches differences to second order. Where the parameter is differentiated
  the refusal names the user's line of the call, under grad, vjp, hessian, jacobian of grad
  and vjp of grad alike (hessian said "jacobian needs outputs that are arrays" before).
* ``x.__getitem__(0)`` on a float raises the user's own AttributeError (Python's), with a
  note naming the user's line, at first and second order (it was "a derivative of a
  derivative failed inside pullback's rule step").
* ``hessian`` of a ``with`` of a ``@contextmanager`` function given a variable (a loop
  counter, a local) differentiates: the check no longer descends into the decorator's
  ``helper(*args, **kwds)`` as if every argument carried a gradient (HigherOrderError).
"""

from __future__ import annotations

import inspect
import os

import message_cases_s36 as cases
import numpy as np
import pytest

import pullback
from pullback.errors import UnsupportedCallError
from pullback.testing import check_grads

HERE = os.path.dirname(cases.__file__) + os.sep
X = np.array([2.5, 3.0, 3.5])


def _line_of(fn, text: str) -> int:
    """The line of ``cases`` where ``fn``'s source line ``text`` is."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if line.strip() == text)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize(
    "fn",
    [
        cases.order_in_a_tuple,
        cases.order_in_a_list,
        cases.order_in_a_dict,
        cases.order_through_a_helper,
    ],
    ids=lambda f: f.__name__,
)
def test_a_refused_constant_next_to_differentiated_values_accumulates(fn):
    check_grads(fn, X, 1.5, order=2)
    check_grads(fn, X.astype(np.float32), 1.5)
    check_grads(fn, 2.75, 1.5)


BESSEL = (
    "message_cases_s36.py:{line}: pullback cannot differentiate a scipy.special Bessel "
    "function with respect to its order v: the derivative of a Bessel function with respect "
    "to a non-integer order has no closed form\n"
    "        {text}\n"
    "Fix: keep that parameter constant: do not differentiate with respect to it, and pass "
    "it on its own, not as an element of an array that holds differentiated values (a tuple, "
    "list or dict may hold both); or register your own rule with `@pullback.rrule(...)`."
)


def _refusal(run) -> str:
    with pytest.raises(pullback.NotDifferentiableError) as info:
        run()
    return str(info.value).replace(HERE, "")


@pytest.mark.parametrize(
    "how",
    ["grad", "vjp", "hessian", "jacobian of grad", "vjp of grad", "hvp"],
)
def test_a_differentiated_order_is_refused_at_the_users_call(how):
    f = cases.bessel
    runs = {
        "grad": lambda: pullback.grad(f)(1.5, X),
        "vjp": lambda: pullback.vjp(f, 1.5, X)[1](1.0),
        "hessian": lambda: pullback.hessian(f)(1.5, X),
        "jacobian of grad": lambda: pullback.jacobian(pullback.grad(f))(1.5, X),
        "vjp of grad": lambda: pullback.vjp(pullback.grad(f), 1.5, X),
        "hvp": lambda: pullback.hvp(f)(np.float32(1.5), X.astype(np.float32), 1.0),
    }
    text = "return np.sum(sc.jv(v, x))"
    assert _refusal(runs[how]) == BESSEL.format(line=_line_of(f, text), text=text)


def test_a_refused_order_computed_from_the_input_names_the_call():
    # w depends on x: the gradient flows through the order, at the call that takes it
    f = cases.order_through_a_sum
    text = "return np.sum(sc.jv(w, x))"
    assert _refusal(lambda: pullback.grad(f, wrt=1)(1.5, X)) == BESSEL.format(
        line=_line_of(f, text), text=text
    )


def test_riemann_zeta_x_below_minus_two_is_refused_at_second_order_with_its_reason():
    f = cases.riemann_zeta_of
    text = "return np.sum(sc.zeta(x))"
    assert _refusal(lambda: pullback.hessian(f)(np.array([-3.0, -2.5]))) == (
        f"message_cases_s36.py:{_line_of(f, text)}: pullback cannot differentiate "
        "scipy.special.zeta(x) with respect to x below -2: its derivative there is the "
        "analytic continuation of a sum whose terms cancel, which pullback does not compute "
        f"to float64 accuracy\n        {text}\n"
        "Fix: keep that parameter constant: do not differentiate with respect to it, and "
        "pass it on its own, not as an element of an array that holds differentiated values "
        "(a tuple, list or dict may hold both); or register your own rule with "
        "`@pullback.rrule(...)`."
    )
    check_grads(f, np.array([-1.5, 0.5, 3.0]), order=2)  # above -2 it differentiates
    check_grads(cases.zeta_of, X, 1.5, wrt=(0, 1), order=2)  # Hurwitz's, in x and q


@pytest.mark.parametrize("how", ["grad", "hessian"])
def test_a_dunder_call_on_a_float_raises_the_users_own_error(how):
    f = cases.subscripts_a_float
    with pytest.raises(AttributeError) as primal:
        f(1.5)
    run = pullback.grad(f) if how == "grad" else pullback.hessian(f)
    with pytest.raises(AttributeError) as info:
        run(1.5)
    assert not isinstance(info.value, pullback.PullbackError)
    assert str(info.value) == str(primal.value) == "'float' object has no attribute '__getitem__'"
    text = "return x.__getitem__(0) * 2.0"
    assert [n.replace(HERE, "") for n in info.value.__notes__] == [
        f"  raised by message_cases_s36.py:{_line_of(f, text)}: {text}  "
        "(in pullback's forward sweep)"
    ]


def test_a_dunder_call_on_an_array_differentiates():
    check_grads(cases.subscripts_an_array, X, order=2)
    check_grads(cases.subscripts_an_array, X.astype(np.float32))


@pytest.mark.parametrize("fn", [cases.loop_with_a_manager, cases.manager_of_a_local])
def test_a_context_manager_given_a_variable_has_a_second_derivative(fn):
    check_grads(fn, X, order=2)
    check_grads(fn, X.astype(np.float32), order=2)
    check_grads(fn, 0.75, order=2)


# -- run-time refusals of rules: the user's line and a fix, at first and second order ----

RULE_REFUSALS = {
    "pinv_hermitian": (
        "return np.sum(np.linalg.pinv(np.outer(x, x) + np.eye(3), hermitian=True))",
        "pullback: pinv(hermitian=True) has no rule.\n"
        "Fix: drop hermitian=True (the same pseudo-inverse, differentiated).",
    ),
    "quantile_hazen": (
        'return np.quantile(x, 0.3, method="hazen")',
        "pullback: quantile method 'hazen' has no rule.\n"
        "Fix: pass method= one of linear, lower, higher, midpoint or nearest.",
    ),
    "interp_periodic": (
        "return np.sum(np.interp(x, XP, FP, period=3.0))",
        "pullback: interp(period=...) has no rule.\n"
        "Fix: wrap the points yourself and call np.interp without period=: "
        "np.interp(np.mod(x, period), np.concatenate([xp[-1:] - period, xp, xp[:1] + period]), "
        "np.concatenate([fp[-1:], fp, fp[:1]])) for xp sorted within [0, period).",
    ),
    "root_overdetermined": (
        'return np.sum(so.root(g, np.zeros(2), args=(x,), method="lm").x)',
        "pullback: scipy.optimize.root: 3 equations for 2 unknowns; the implicit function "
        "theorem needs a square system.\n"
        "Fix: give the function one equation per unknown, or fit an overdetermined system "
        "with scipy.optimize.least_squares, whose solution is differentiated.",
    ),
    "cross_of_2_vectors": (
        "return np.sum(np.cross(x[:2], x[1:]))",
        "pullback: np.cross has a rule for 3-vectors only (NumPy deprecates 2-vectors).\n"
        "Fix: write the cross product of 2-vectors out, a[..., 0] * b[..., 1] - "
        "a[..., 1] * b[..., 0], or pad them to 3-vectors with a zero.",
    ),
    "viewed_as_integers": (
        "return np.sum(x.view(np.int64) * 1.0)",
        "pullback: x.view(<class 'numpy.int64'>) reinterprets the array (float64 ndarray as "
        "int64 ndarray) and has no derivative.\n"
        "Fix: convert the values with x.astype(dtype) instead.",
    ),
}


# The calls among them made through a call site (a method of a value whose type the
# transform did not know): the message names the call's column too.
CALLED_AT_RUN_TIME = {"viewed_as_integers": "x.view("}


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # (NumPy's, of 2-vector cross)
@pytest.mark.parametrize("name", sorted(RULE_REFUSALS))
@pytest.mark.parametrize("how", ["grad", "hessian"])
def test_a_rules_refusal_names_the_users_line_and_a_fix(name, how):
    fn = getattr(cases, name)
    text, message = RULE_REFUSALS[name]
    run = pullback.grad(fn) if how == "grad" else pullback.hessian(fn)
    with pytest.raises(UnsupportedCallError) as info:
        run(np.array([0.4, 1.3, 2.2]))
    line = _line_of(fn, text)
    what, fix = message.split("\nFix: ")  # the house order: what, where, the line, the fix
    place = f"{line}"
    if name in CALLED_AT_RUN_TIME:  # its call site knows the column (1-based, indent 4)
        place += f":{5 + text.index(CALLED_AT_RUN_TIME[name])}"
    assert str(info.value).replace(HERE, "") == (
        f"message_cases_s36.py:{place}: {what}\n        {text}\nFix: {fix}"
    )


def test_the_fix_of_a_periodic_interp_differentiates():
    x = np.array([-0.7, 0.3, 2.4, 4.1, 7.9])
    want = [np.interp(v, cases.XP, cases.FP, period=3.0) for v in x]
    got = [cases.interp_wrapped(np.array([v])) for v in x]
    np.testing.assert_allclose(got, want)
    check_grads(cases.interp_wrapped, x, order=2)
    check_grads(cases.interp_wrapped, x.astype(np.float32))


def test_a_second_derivative_through_a_users_closure_rule_names_the_line_and_the_rule():
    registry = pullback.default_registry().copy()

    @registry.rrule(cases.cubed)
    def _(x):
        return cases.cubed(x), lambda dy: (3.0 * x**2 * dy,)

    f = cases.through_a_closure_rule
    check_grads(f, X, registry=registry)  # (first order: the closure serves)
    with pytest.raises(pullback.HigherOrderError) as info:
        pullback.hessian(f, registry=registry)(X)
    text = "return np.sum(cubed(x))"
    assert str(info.value).replace(HERE, "") == (
        f"message_cases_s36.py:{_line_of(f, text)}: cannot take a second derivative of "
        "'through_a_closure_rule': its gradient uses the rules message_cases_s36.cubed whose "
        "pullbacks pullback cannot differentiate yet (or calls of other user functions).\n"
        f"        {text}\n"
        "Second derivatives work through arithmetic, indexing, control flow, `math` and the "
        "elementwise NumPy functions (np.sin, np.tanh, ...) in one function.\n"
        "Fix: write that step with those, or use finite differences of the gradient "
        "(pullback.testing.check_grads(order=2) shows how); a rule of yours needs a "
        "differentiable pullback: register one with registry.set_pullback_function(fn, "
        "pullback_fn) (docs/custom-rules.md, 'Second derivatives through a rule')."
    )


@pytest.mark.parametrize("how", ["grad", "hessian"])
def test_a_frompyfunc_ufunc_is_refused_at_the_users_line_with_a_fix_that_works(how):
    f = cases.through_frompyfunc
    run = pullback.grad(f) if how == "grad" else pullback.hessian(f)
    with pytest.raises(pullback.MissingRuleError) as info:
        run(X)
    text = "return np.sum(f(x).astype(float))"
    # the column of the call, at second order too: found in the gradient's own code, the
    # column of the first derivative's call site on that line
    col = 19
    assert str(info.value).replace(HERE, "") == (
        f"message_cases_s36.py:{_line_of(f, text)}:{col}: cannot differentiate the call of a "
        "ufunc made by np.frompyfunc: it has neither Python source nor a rule.\n"
        f"        {text}\n"
        "Fix: make it with np.vectorize(fn, otypes=[float]) instead, whose calls pullback "
        "differentiates through fn's source, or write fn with NumPy operations."
    )
    check_grads(cases.through_vectorize, X, order=2)
    check_grads(cases.through_vectorize, np.float32(0.75))


@pytest.mark.parametrize(
    "fn", [cases.squared_slope_of_a_global, cases.squared_slope_of_a_decorated]
)
def test_a_grad_object_called_inside_a_differentiated_function_differentiates(fn):
    # (it was PB301 "call of '..._wave', a function with no Python source")
    x = np.array([0.3, 0.7, -0.4])
    check_grads(fn, 1.5, x, order=2)
    check_grads(fn, 1.5, x, wrt=1)
    check_grads(fn, np.float32(1.5), x.astype(np.float32))


def test_an_order_inside_an_array_with_differentiated_values_is_refused_with_the_way_out():
    # An array is differentiated as a whole: its element v carries the gradient of x[0]'s
    # neighbour. The fix (v on its own, or in a tuple) is order_in_a_tuple's, which works.
    f = cases.order_in_an_array
    text = "return np.sum(sc.jv(p[0], x) * p[1])"
    assert _refusal(lambda: pullback.grad(f)(X, 1.5)) == BESSEL.format(
        line=_line_of(f, text), text=text
    )
