"""``grad``, ``jacobian``, ``hessian``, ``hvp`` and ``value_and_grad`` called inside a
function being differentiated. ``grad(g)(x)`` is differentiated (its generated gradient,
differentiated again); the others are refused at the user's line with what they would
need and a fix that works, as golden text (they said "'v' has neither Python source nor
a rule", of a function that has source). The fixes they give are checked too."""

from __future__ import annotations

import os

import numpy as np
import pytest
from fd import check_grad

import pullback
from pullback import grad, hessian, jacobian

HERE = os.path.abspath(__file__)
W = np.array([0.3, -0.7, 1.1])
U = np.array([1.0, 0.5, -2.0])


def g(x):
    return np.sum(np.sin(x) ** 2)


def v(x):
    return np.sin(x) * x


def jacobian_inside(x):
    return np.sum(jacobian(v)(x) ** 2)


def hessian_inside(x):
    return np.sum(hessian(g)(x))


def hvp_inside(x):
    return np.sum(pullback.hvp(g)(x, U))


def value_and_grad_inside(x):
    val, d = pullback.value_and_grad(g)(x)
    return val + np.sum(d)


def _line(fn, k=1) -> int:
    return fn.__code__.co_firstlineno + k


def _message(f) -> str:
    with pytest.raises(pullback.PullbackError) as info:
        grad(f)(W)
    return str(info.value).replace(HERE, "here.py")


def test_jacobian_inside_a_differentiated_function_golden():
    assert _message(jacobian_inside) == (
        f"here.py:{_line(jacobian_inside)}:19: jacobian(v) is called inside a function being "
        "differentiated: its derivative is a second derivative of 'v', which pullback "
        "builds only by nesting grad.\n"
        "        return np.sum(jacobian(v)(x) ** 2)\n"
        "Fix: build the Jacobian from grad of a helper that returns one element, which may "
        "be called here: `def v_i(x, i): return v(x)[i]`, then "
        "`np.stack([grad(v_i)(x, i) for i in range(n)])`."
    )


@pytest.mark.parametrize("f, made", [(hessian_inside, "hessian"), (hvp_inside, "hvp")])
def test_hessian_and_hvp_inside_a_differentiated_function_golden(f, made):
    call = "hessian(g)(x)" if made == "hessian" else "pullback.hvp(g)(x, U)"
    assert _message(f) == (
        f"here.py:{_line(f)}:19: {made}(g) is called inside a function being "
        "differentiated: its derivative is a third derivative of 'g', which pullback does "
        "not build.\n"
        f"        return np.sum({call})\n"
        "Fix: compute it outside the differentiated function and pass it in (no gradient "
        "then flows through it), or call grad(g) here, which is differentiated (a second "
        "derivative)."
    )


def test_value_and_grad_inside_a_differentiated_function_golden():
    assert _message(value_and_grad_inside) == (
        f"here.py:{_line(value_and_grad_inside)}:14: cannot differentiate "
        "ValueAndGradFunction(has_aux=False) of 'g' again: only plain grad(f) can be "
        "nested.\n"
        "        val, d = pullback.value_and_grad(g)(x)\n"
        "Fix: call g for the value and grad(g) for the gradient: "
        "`val, d = g(x), grad(g)(x)` (grad may be nested)."
    )


# -- what works, and the fixes the messages give --------------------------------------


def grad_inside(x):
    return np.sum(grad(g)(x) * x)


def grad_kept_then_called(x):
    dg = grad(g)
    return np.sum(dg(x) ** 2)


def v_i(x, i):
    return v(x)[i]


def jacobian_by_rows(x):
    J = np.stack([grad(v_i)(x, i) for i in range(3)])
    return np.sum(J**2)


def value_then_grad(x):
    val, d = g(x), grad(g)(x)
    return val + np.sum(d)


@pytest.mark.parametrize(
    "f", [grad_inside, grad_kept_then_called, jacobian_by_rows, value_then_grad]
)
def test_grad_inside_a_differentiated_function_and_the_fixes(f):
    check_grad(f, W)


def test_the_jacobian_fix_computes_the_jacobian():
    np.testing.assert_allclose(
        np.stack([grad(v_i)(W, i) for i in range(3)]), jacobian(v)(W), rtol=1e-12
    )
    # the refused function's gradient, by the fix, against central differences of it
    want = np.array(
        [(jacobian_inside(W + 1e-6 * e) - jacobian_inside(W - 1e-6 * e)) / 2e-6 for e in np.eye(3)]
    )
    np.testing.assert_allclose(grad(jacobian_by_rows)(W), want, rtol=1e-6)


# -- vjp and jvp inside ---------------------------------------------------------------


def vjp_inside(x):
    y, back = pullback.vjp(v, x)
    return np.sum(back(U)[0] ** 2)


def jvp_inside(x):
    y, t = pullback.jvp(v, (x,), (U,))
    return np.sum(t**2)


def v_u(x, u):
    return np.sum(v(x) * u)


def vjp_by_grad(x):
    return np.sum(grad(v_u)(x, U) ** 2)


def jvp_by_grad(x):
    t = np.stack([np.dot(grad(v_i)(x, i), U) for i in range(3)])
    return np.sum(t**2)


@pytest.mark.parametrize(
    "f, call, fix",
    [
        (
            vjp_inside,
            "y, back = pullback.vjp(v, x)",
            "`back(u)[0]` of `vjp(f, x)` is `grad(f_u)(x, u)` with "
            "`def f_u(x, u): return np.sum(f(x) * u)`",
        ),
        (
            jvp_inside,
            "y, t = pullback.jvp(v, (x,), (U,))",
            "element i of the tangent of `jvp(f, (x,), (v,))` is "
            "`np.dot(grad(f_i)(x, i), v)` with `def f_i(x, i): return f(x)[i]`",
        ),
    ],
)
def test_vjp_and_jvp_inside_a_differentiated_function_golden(f, call, fix):
    name = f.__name__.split("_")[0]
    assert _message(f) == (
        f"cannot differentiate '{f.__name__}' — 1 unsupported construct\n\n"
        f"  here.py:{_line(f)}:{15 if name == 'vjp' else 12}: PB301 pullback.{name} called "
        "inside a function being differentiated: its derivative is a second derivative, "
        "which pullback builds only by nesting grad\n"
        f"        {call}\n"
        f"        {' ' * (10 if name == 'vjp' else 7)}^^^^^^^^^^^^\n"
        "    pullback differentiates a call through a rule or by transforming the callee's "
        "Python source, and this callee has neither.\n"
        "    Fix: write the product with grad, which may be called here: "
        f"{fix} (see docs/limitations.md#PB301)."
    )


@pytest.mark.parametrize("fixed, refused", [(vjp_by_grad, vjp_inside), (jvp_by_grad, jvp_inside)])
def test_the_vjp_and_jvp_fixes_give_the_refused_functions_gradient(fixed, refused):
    assert fixed(W) == pytest.approx(refused(W), rel=1e-12)
    want = np.array([(refused(W + 1e-6 * e) - refused(W - 1e-6 * e)) / 2e-6 for e in np.eye(3)])
    np.testing.assert_allclose(grad(fixed)(W), want, rtol=1e-6)
