"""Keywords of star-calls found at run time, at every order and in forward mode.

A ``**`` mapping's entry that lands on a user's keyword-only parameter, in its
``**kwargs``, or on a parameter after one left at its default reaches the callee through
its keyword shim (keyword_shims.py): gradient, Hessian and jvp match central differences
(before: the second order refused it, forward mode silently dropped its tangent). The same
for a method of a user's object (before: refused at every order). A keyword that reaches a
rule and cannot move into position is refused in forward mode too (before: a silently
wrong jvp), and an array method's keywords move by the signature of the function its rule
runs (``x.clip(**{"min": p})`` was a TypeError from inside pullback). A closure handed to a
solver beside ``**{"args": (c,)}`` takes its captured values after ``c``; a mapping in a
name that holds ``args`` too is refused at the call (it was Python's TypeError from
pullback's code)."""

import numpy as np
import pytest
import scipy.integrate
from fd import check_grad, check_hessian_against_differences, check_jvp

import pullback


def scaled(a, b=0.5, c=1.5):
    return a * np.sin(b) * c * c


def keyword_only(a, *, s=1.0):
    return a * s * s


def collected(a, **kw):
    return a * kw["s"] ** 2 + kw.get("t", 0.5) * a


class Model:
    def __init__(self, w):
        self.w = w

    def apply(self, a, b=0.5, scale=1.0, *, shift=0.0):
        return self.w * a * np.cos(b) * scale + shift * shift


def skips_a_default(x):
    kw = {"c": x[2]}
    return scaled(x[0], **kw)


def passed_on(x, opts):
    return scaled(x[0], **opts)


def through_a_passed_dict(x):
    return passed_on(x, {"c": x[2] * x[1]})


def to_keyword_only(x):
    return keyword_only(x[0], **{"s": x[1]})


def into_kwargs(x):
    kw = dict(s=x[1], t=np.sin(x[2]))
    return collected(*(x[0],), **kw)


def method_skips_a_default(x):
    kw = {"scale": x[2]}
    return Model(1.5).apply(x[0], **kw)


def method_of_a_differentiated_object(x):
    m = Model(x[3] * 0.5 + 1.0)
    return m.apply(*(x[0],), **dict(scale=x[1], shift=np.sin(x[2])))


def method_with_constant_keywords(x):
    m = Model(x[3])
    return m.apply(x[0], x[1], **{"shift": 0.25})


def quad_with_args_in_a_display(p):
    return scipy.integrate.quad(lambda t, a: a * p[1] * t * t, 0.0, 1.0, **{"args": (p[0],)})[0]


FORMS = [
    skips_a_default,
    through_a_passed_dict,
    to_keyword_only,
    into_kwargs,
    method_skips_a_default,
    method_of_a_differentiated_object,
    method_with_constant_keywords,
    quad_with_args_in_a_display,
]
X = np.array([0.4, -0.7, 0.9, 0.3])
DIRECTION = np.array([0.3, -0.7, 0.5, 0.2])


@pytest.mark.parametrize("f", FORMS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gradient(f, dtype):
    check_grad(f, X.astype(dtype))


@pytest.mark.parametrize("f", FORMS, ids=lambda f: f.__name__)
def test_hessian(f):
    check_hessian_against_differences(f, X)


@pytest.mark.parametrize("f", FORMS, ids=lambda f: f.__name__)
def test_jvp(f):
    check_jvp(f, (X,), (DIRECTION,))


def test_scalar_argument_through_a_method_and_second_derivative_of_grad():
    def f(t):
        return Model(2.0).apply(t, **{"scale": t * t, "shift": t})

    # f = 2 t^3 cos(0.5) + t^2: f'' = 12 t cos(0.5) + 2
    assert pullback.grad(pullback.grad(f))(0.7) == pytest.approx(12 * 0.7 * np.cos(0.5) + 2)


def _where(fn, line_offset, col):
    return f"{fn.__code__.co_filename}:{fn.__code__.co_firstlineno + line_offset}:{col}"


def rule_keyword(x):
    v = np.sin(x[:3])
    return np.sum(v, **{"initial": x[3]})


def array_method_keyword(x):
    v = np.sin(x[:3])
    return np.sum(v.clip(**{"min": x[3] - 0.5}))


@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_a_rule_keyword_that_cannot_move_is_refused(mode):
    with pytest.raises(pullback.NotDifferentiableError) as info:
        if mode == "grad":
            pullback.grad(rule_keyword)(X)
        else:
            pullback.jvp(rule_keyword, (X,), (DIRECTION,))
    assert str(info.value) == (
        f"{_where(rule_keyword, 2, 12)}: the keyword argument 'initial' of 'sum' carries a "
        "gradient, but it cannot be passed by position, and keyword arguments found at run "
        "time are not differentiated.\n"
        '        return np.sum(v, **{"initial": x[3]})\n'
        "Fix: pass 'initial' by position, or give the callee a parameter for it."
    )


def test_an_array_method_keyword_moves_by_its_rule_signature_or_is_refused():
    with pytest.raises(pullback.NotDifferentiableError) as info:
        pullback.grad(array_method_keyword)(X)
    assert str(info.value).startswith(
        f"{_where(array_method_keyword, 2, 19)}: the keyword argument 'min' of the method "
        "'clip' carries a gradient"
    )

    def constant_bound(x):
        v = np.sin(x[:3])
        return np.sum(v.clip(**{"min": -0.5}) ** 2) + v.sum(**{"axis": 0})

    check_grad(constant_bound, X)


def quad_with_args_in_a_name(p):
    opts = {"args": (p[0],)}
    return scipy.integrate.quad(lambda t, a: a * np.sin(p[1] * t), 0.0, 1.0, **opts)[0]


def test_args_given_twice_to_a_solver_is_refused_at_the_call():
    with pytest.raises(pullback.ArgumentError) as info:
        pullback.grad(quad_with_args_in_a_name)(X)
    assert str(info.value) == (
        f"{_where(quad_with_args_in_a_name, 2, 12)}: the keyword argument 'args' is given "
        "twice (a function given to a solver passes the values it reads through 'args', "
        "which pullback adds to the call).\n"
        "        return scipy.integrate.quad(lambda t, a: a * np.sin(p[1] * t), 0.0, 1.0, "
        "**opts)[0]\n"
        "Fix: give 'args' once, by name or in one mapping; for a solver's 'args', write the "
        "mapping in the call (**{'args': (...), ...}) so that the values read by the function "
        "are added to it."
    )


class Shifter:
    def __call__(self, a, *, s=1.0):
        return a * np.sin(s)


def callable_object_keyword(x):
    shift = Shifter()
    return shift(x[0], **{"s": x[1]})


def test_a_callable_objects_keyword_only_parameter_is_differentiated():
    # (its __call__ is reached through the object: the shim calls Shifter.__call__ with
    # the object first; it was refused by name, keyword_shims.py)
    check_hessian_against_differences(callable_object_keyword, X)
    check_jvp(callable_object_keyword, (X,), (DIRECTION,))
