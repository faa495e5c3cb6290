"""Objects the gradient flows through that pullback once passed over with a zero: each
derivative here is the derivative of what the function computes, or a refusal.

- A user's rule returning an object whose data it does not declare (``Quad(a)`` with no
  ``result_attributes``), then a rule of a method called on it: forward mode (jvp, the
  forward jacobian) takes the object's tangent by its pairing with the method rule's
  cotangent (object_tangents.py); read any other way it refuses at the user's line.
- A helper found at run time (``fn = HELPERS[name]; fn(o, x)``) handed an object whose
  fields hold differentiated arrays (a class with ``__slots__``, a plain class), or a bound
  method of one (``fn(o.energy, x)``, ``[o.energy]``): grad, vjp, jvp, hessian and
  jvp(grad). Handed to a library function (np.apply_along_axis, solve_ivp): refused.
- An object a rule makes (interp1d, CubicSpline, a user's ``@rrule(Scaled)``) handed to a
  function found at run time: differentiated where the rule declares its data, refused
  where it does not.
- ``functools.partial`` of differentiated values handed on: a helper called by name
  differentiates; stored, passed to a helper found at run time or to a library function it
  is refused (PB301), never dropped. One of constants (or a bound method of a constant
  object) handed to a helper found at run time stays a constant.
"""

from __future__ import annotations

import functools
import re

import numpy as np
import pytest

import pullback
from pullback.errors import NotDifferentiableError, UnsupportedSyntaxError
from pullback.tangents import ZERO
from pullback.testing import TOLERANCES, check_grads

FLOATS = (np.float64, np.float32)


def central(fn, args, k, direction, h=1e-6):
    """``d/dt fn(args[k] + t direction)`` by central differences, in float64."""
    args = [np.asarray(a, dtype=np.float64) for a in args]
    up, down = list(args), list(args)
    up[k] = args[k] + h * direction
    down[k] = args[k] - h * direction
    return (np.asarray(fn(*up)) - np.asarray(fn(*down))) / (2 * h)


def close(got, want, dtype):
    rtol, atol = TOLERANCES["float32" if dtype == np.float32 else "float64"]
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), want, rtol=rtol, atol=atol)


# -- 1. a rule's object with no declared data, in forward mode ---------------------------


class Quad:
    """``q -> a * q**2``, made and called through a user's rules (nothing declared)."""

    def __init__(self, a):
        self.a = a

    def __call__(self, q):
        return self.a * q**2


@pytest.fixture
def quad_rules():
    registry = pullback.default_registry().copy()

    @pullback.rrule(Quad, registry=registry)
    def _(a):
        def quad_pullback(dobj):
            return (ZERO,) if dobj is ZERO else (dobj["a"],)

        return Quad(a), quad_pullback

    @pullback.rrule(Quad.__call__, registry=registry)
    def _(obj, q):
        return obj(q), lambda dy: ({"a": np.sum(dy * q**2)}, dy * 2.0 * obj.a * q)

    with pullback.use_registry(registry):
        yield


def through_rules(a, q):
    return np.sin(Quad(a)(q)) * a


def reads_the_object(a, q):
    g = Quad(a)
    return np.sum(g(q)) * g.a


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("shape", [(), (3,)], ids=["scalar", "array"])
def test_forward_through_an_undeclared_object(quad_rules, dtype, shape):
    a = dtype(1.3)
    q = np.linspace(-0.7, 0.9, 3).astype(dtype).reshape(shape) if shape else dtype(0.4)
    want = central(through_rules, (a, q), 0, 1.0)
    _, got = pullback.jvp(through_rules, (a, q), (dtype(1.0), ZERO))
    assert np.any(np.asarray(want) != 0.0)  # the zero it once gave would fail
    close(got, want, dtype)
    close(pullback.jacobian(through_rules, wrt=0, mode="forward")(a, q), want, dtype)
    # both arguments moving at once: the object's tangent and q's add up
    dq = np.ones(shape, dtype=dtype) if shape else dtype(1.0)
    both = central(through_rules, (a, q), 0, 1.0) + central(through_rules, (a, q), 1, dq)
    close(pullback.jvp(through_rules, (a, q), (dtype(1.0), dq))[1], both, dtype)
    assert check_grads(through_rules, a, q, wrt=(0, 1)) == "reverse"


def test_stacked_directions_through_an_undeclared_object():
    # a vector a (elementwise rules), every direction at once (jacobian's forward mode,
    # stacked_jvp)
    registry = pullback.default_registry().copy()

    @pullback.rrule(Quad, registry=registry)
    def _(a):
        return Quad(a), lambda dobj: (ZERO,) if dobj is ZERO else (dobj["a"],)

    @pullback.rrule(Quad.__call__, registry=registry)
    def _(obj, q):
        return obj(q), lambda dy: ({"a": dy * q**2}, dy * 2.0 * obj.a * q)

    a, q = np.array([1.3, 0.2, -0.5]), np.array([0.4, -0.7, 0.9])
    with pullback.use_registry(registry):
        _stacked_directions(a, q)


def _stacked_directions(a, q):
    want = np.stack([central(through_rules, (a, q), 0, e) for e in np.eye(3)], axis=1)
    got = pullback.jacobian(through_rules, wrt=0, mode="forward")(a, q)
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)
    _, stacked = pullback.stacked_jvp(through_rules, (a, q), (np.eye(3), ZERO))
    np.testing.assert_allclose(stacked.T, want, rtol=1e-7, atol=1e-9)


def returns_the_object(a, q):
    g = Quad(a)
    return np.sum(g(q)), g


def test_forward_returning_an_undeclared_object(quad_rules):
    # the number's tangent is right (it was 0); the object's entry has none, as None's
    q = np.array([0.4, -0.7])
    (value, made), (dvalue, dmade) = pullback.jvp(returns_the_object, (1.3, q), (1.0, ZERO))
    np.testing.assert_allclose(dvalue, np.sum(q**2), rtol=1e-12)
    assert isinstance(made, Quad) and dmade is None


def test_forward_reading_an_undeclared_object_is_refused(quad_rules):
    # the user's own code reads the object's data: its tangent has no entries to read
    with pytest.raises(pullback.PullbackError, match=r"test_silent_objects\.py:\d+"):
        pullback.jvp(reads_the_object, (1.3, np.array([0.4, -0.7])), (1.0, ZERO))


def test_object_tangent_refuses_any_other_use():
    from pullback.object_tangents import ObjectTangent

    t = ObjectTangent("Quad", lambda c: (2.0 * c["a"],), (3.0,))
    assert t.paired_with({"a": 1.0}, lambda c, d: c * d) == 6.0
    message = re.escape(
        "pullback cannot follow the tangent of the Quad a rule returns: its rule declares "
        "none of its data\nForward mode (jvp, forward jacobian, hessian) passes that tangent "
        "only to other rules' pullbacks; read here, it would be taken as zero.\nFix: declare "
        "the Quad's differentiable attributes on its rule, "
        '`registry.lookup(Quad).extra["result_attributes"] = ("a", ...)`, and give it, in '
        "the pullbacks, the cotangent as a dict of them; or use reverse mode (grad, vjp)."
    )
    for use in (lambda: t + 1.0, lambda: np.ones(2) * t, lambda: t[0], lambda: float(t)):
        with pytest.raises(NotDifferentiableError, match=message):
            use()


# -- 2. objects handed to a helper found at run time -------------------------------------


class Slot:
    __slots__ = ("w", "b")

    def __init__(self, w, b):
        self.w = w
        self.b = b


class Plain:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    def energy(self, x):
        return np.sum(np.tanh(self.w * x + self.b))


def helper(obj, x):
    return np.sum(np.tanh(obj.w * x + obj.b))


def apply(g, x):
    return g(x)


HELPERS = {"helper": helper, "apply": apply}


def slots_object(w, x):
    fn = HELPERS["helper"]
    return fn(Slot(w * 2.0, 1.0), x)


def plain_object(w, x):
    fn = HELPERS["helper"]
    return fn(Plain(np.sin(w), 1.0), x)


def bound_method(w, x):
    o = Plain(w, 0.5)
    fn = HELPERS["apply"]
    return fn(o.energy, x)


def bound_method_by_name(w, x):
    o = Plain(w, 0.5)
    return apply(o.energy, x)


def bound_method_in_a_list(w, x):
    o = Plain(w, 0.5)
    total = 0.0
    for f in [o.energy]:  # forward over reverse: the list's tangent is o's
        total = total + f(x)
    return total


def bound_method_in_a_dict(w, x):
    o = Plain(w, 0.5)
    fns = {"energy": o.energy}
    return fns["energy"](x)


RUN_TIME = [
    slots_object,
    plain_object,
    bound_method,
    bound_method_by_name,
    bound_method_in_a_list,
    bound_method_in_a_dict,
]


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("fn", RUN_TIME, ids=lambda f: f.__name__)
def test_objects_to_a_helper_found_at_run_time(fn, dtype):
    w, x = dtype(0.7), np.array([0.3, -0.5, 0.9], dtype=dtype)
    want = central(fn, (w, x), 0, 1.0)
    assert abs(want) > 1e-3  # the zero it once gave would fail
    close(pullback.grad(fn, wrt=0)(w, x), want, dtype)
    close(pullback.vjp(fn, w, x)[1](dtype(1.0))[0], want, dtype)
    close(pullback.jvp(fn, (w, x), (dtype(1.0), ZERO))[1], want, dtype)
    if dtype == np.float64:  # second order: reverse over reverse and forward over reverse
        assert check_grads(fn, w, x, wrt=(0, 1), order=2) == "reverse over reverse"
        second = (central(fn, (w + 1e-4, x), 0, 1.0) - central(fn, (w - 1e-4, x), 0, 1.0)) / 2e-4
        np.testing.assert_allclose(pullback.hessian(fn, wrt=0)(w, x), second, rtol=1e-5)
        forward = pullback.jvp(pullback.grad(fn, wrt=0), (w, x), (1.0, ZERO))[1]
        np.testing.assert_allclose(forward, second, rtol=1e-5)


def test_a_bound_method_with_an_array_receiver_field():
    # o's field an array: each entry's gradient arrives through the bound method
    def model(w, x):
        o = Plain(w, 0.1)
        fn = HELPERS["apply"]
        return fn(o.energy, x)

    w, x = np.array([0.2, -0.4, 0.6]), np.array([0.3, -0.5, 0.9])
    assert check_grads(model, w, x, wrt=(0, 1)) == "reverse"


# -- 3. functools.partial of differentiated values ---------------------------------------


def kern(p, x):
    return np.sum(np.sin(p * x))


def partial_by_name(w, x):
    return apply(functools.partial(kern, w), x)


def partial_at_run_time(w, x):
    fn = HELPERS["apply"]
    return fn(functools.partial(kern, w), x)


def partial_to_numpy(w, x):
    return np.sum(np.apply_along_axis(functools.partial(kern, w), 0, np.outer(x, x)))


def test_a_partial_to_a_helper_by_name_differentiates():
    w, x = 0.7, np.array([0.3, -0.5, 0.9])
    assert check_grads(partial_by_name, w, x, wrt=(0, 1), order=2) == "reverse over reverse"
    want = central(partial_by_name, (w, x), 0, 1.0)
    np.testing.assert_allclose(
        pullback.jvp(partial_by_name, (w, x), (1.0, ZERO))[1], want, rtol=1e-7
    )


CONSTANT_PARTIAL = functools.partial(kern, 0.5)
CONSTANT_OBJECT = Plain(0.3, 0.5)


def constant_partial(w, x):
    fn = HELPERS["apply"]
    return fn(CONSTANT_PARTIAL, x * w)


def constant_bound_method(w, x):
    fn = HELPERS["apply"]
    return fn(CONSTANT_OBJECT.energy, x * w)


@pytest.mark.parametrize("fn", [constant_partial, constant_bound_method], ids=lambda f: f.__name__)
def test_callables_of_constants_to_a_helper_found_at_run_time(fn):
    # made outside: constants, and the gradient flows through x alone
    w, x = 0.7, np.array([0.3, -0.5, 0.9])
    assert check_grads(fn, w, x, wrt=(0, 1), order=2) == "reverse over reverse"
    want = central(fn, (w, x), 0, 1.0)
    np.testing.assert_allclose(pullback.jvp(fn, (w, x), (1.0, ZERO))[1], want, rtol=1e-7)


@pytest.mark.parametrize("fn", [partial_at_run_time, partial_to_numpy], ids=lambda f: f.__name__)
def test_a_partial_handed_on_is_refused_not_dropped(fn):
    w, x = 0.7, np.array([0.3, -0.5, 0.9])
    pattern = r"test_silent_objects\.py:\d+:\d+: PB301 functools\.partial of values of the"
    for run in (
        lambda: pullback.grad(fn, wrt=0)(w, x),
        lambda: pullback.jvp(fn, (w, x), (1.0, ZERO)),
    ):
        with pytest.raises(UnsupportedSyntaxError, match=pattern):
            run()


# -- objects a rule makes, handed to a function found at run time ------------------------


def call(f, q):
    return f(q)


def read(obj, q):
    return obj.a * q**2


CALLERS = {"call": call, "read": read}
KNOTS = np.array([0.0, 1.0, 2.0, 3.0])


def interp_at_run_time(y, q):
    from scipy.interpolate import interp1d

    fn = CALLERS["call"]
    return np.sum(np.sin(fn(interp1d(KNOTS, y), q)))


def spline_at_run_time(y, q):
    from scipy.interpolate import CubicSpline

    fn = CALLERS["call"]
    return np.sum(np.sin(fn(CubicSpline(KNOTS, y), q)))


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("fn", [interp_at_run_time, spline_at_run_time], ids=lambda f: f.__name__)
def test_a_library_object_to_a_helper_found_at_run_time(fn, dtype):
    y = np.array([0.3, 1.1, -0.4, 0.8], dtype=dtype)
    q = np.array([0.5, 1.7, 2.2], dtype=dtype)
    e = np.eye(4, dtype=dtype)[1]
    want = central(fn, (y, q), 0, e)
    assert abs(want) > 1e-2  # the zero it once gave would fail
    close(pullback.grad(fn)(y, q)[1], want, dtype)
    close(pullback.jvp(fn, (y, q), (e, ZERO))[1], want, dtype)
    if dtype == np.float64:
        assert check_grads(fn, y, q, wrt=(0, 1), order=2) == "reverse over reverse"
        hess = pullback.hessian(fn)(y, q)
        forward = pullback.jvp(pullback.grad(fn), (y, q), (e, ZERO))[1]
        np.testing.assert_allclose(forward, hess[1], rtol=1e-10)
        second = (
            central(fn, (y + 1e-4 * e, q), 0, e) - central(fn, (y - 1e-4 * e, q), 0, e)
        ) / 2e-4
        np.testing.assert_allclose(hess[1, 1], second, rtol=1e-4)


class Scaled:
    """``q -> a * q**2`` made by a user's rule; ``value`` is plain Python reading ``a``."""

    def __init__(self, a):
        self.a = a

    def value(self, q):
        return self.a * q**2


def scaled_rules(declare):
    registry = pullback.default_registry().copy()

    @pullback.rrule(Scaled, registry=registry)
    def _(a):
        def scaled_pullback(dobj):
            return (ZERO,) if dobj is ZERO else (dobj["a"],)

        return Scaled(a), scaled_pullback

    if declare:
        registry.lookup(Scaled).extra["result_attributes"] = ("a",)
    return pullback.use_registry(registry)


def scaled_method(a, q):
    return np.sum(np.sin(Scaled(a).value(q)))


def scaled_helper(a, q):
    fn = CALLERS["read"]
    return np.sum(np.sin(fn(Scaled(a), q)))


SCALED = pytest.mark.parametrize("fn", [scaled_method, scaled_helper], ids=lambda f: f.__name__)


@SCALED
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
def test_a_user_rules_object_to_python_found_at_run_time(fn, dtype):
    a, q = dtype(1.3), np.array([0.4, -0.7], dtype=dtype)
    want = central(fn, (a, q), 0, 1.0)
    with scaled_rules(declare=True):
        close(pullback.grad(fn, wrt=0)(a, q), want, dtype)
        close(pullback.jvp(fn, (a, q), (dtype(1.0), ZERO))[1], want, dtype)


def test_second_order_through_an_undeclared_object_to_python_is_refused():
    # its rule's pullback function transformable: the gradient differentiated again ran
    # the method as a record's and handed the rule a tuple (TypeError); now refused
    from pullback.registry import transformable

    @transformable
    def scaled_pullback(dobj, a):
        return (ZERO,) if dobj is ZERO else (dobj["a"],)

    registry = pullback.default_registry().copy()

    @pullback.rrule(Scaled, registry=registry)
    def _(a):
        return Scaled(a), lambda dobj: scaled_pullback(dobj, a)

    registry.set_pullback_function(Scaled, scaled_pullback)
    with pullback.use_registry(registry):
        with pytest.raises(NotDifferentiableError, match=r"the Scaled handed to 'Scaled\.value'"):
            pullback.hessian(scaled_method, wrt=0)(1.3, np.array([0.4, -0.7]))


@SCALED
def test_a_user_rules_undeclared_object_to_python_found_at_run_time_is_refused(fn):
    message = (
        r"test_silent_objects\.py:\d+: the Scaled handed to '(value|read)' \(found when it "
        r"runs\) was made by a rule from differentiated values, and that rule declares none "
        r"of its data: .*\n.*\nFix: declare the Scaled's differentiable attributes on its "
        r"rule, `registry\.lookup\(Scaled\)\.extra\[\"result_attributes\"\] = \(\"a\", \.\.\.\)`"
    )
    a, q = 1.3, np.array([0.4, -0.7])
    with scaled_rules(declare=False):
        with pytest.raises(NotDifferentiableError, match=message):
            pullback.grad(fn, wrt=0)(a, q)
        # made from constants: nothing to refuse
        np.testing.assert_allclose(
            pullback.grad(lambda q: fn(1.3, q))(q), np.cos(1.3 * q**2) * 2.6 * q, rtol=1e-12
        )


# -- a rule returning a dict, in forward mode ---------------------------------------------


def make_params(w):
    return {"a": 2.0 * w, "b": w**2}


@pytest.fixture
def dict_rule():
    registry = pullback.default_registry().copy()

    @pullback.rrule(make_params, registry=registry)
    def _(w):
        def make_params_pullback(d):
            return (2.0 * d["a"] + 2.0 * w * d["b"],)

        return make_params(w), make_params_pullback

    with pullback.use_registry(registry):
        yield


def uses_params(w, x):
    p = make_params(w)
    return np.sin(p["a"] * x) + p["b"]


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("shape", [(), (3,)], ids=["scalar", "array"])
def test_forward_through_a_rule_returning_a_dict(dict_rule, dtype, shape):
    w = np.linspace(0.2, 0.9, 3).astype(dtype).reshape(shape) if shape else dtype(0.6)
    x = dtype(1.7)
    dw = np.ones(shape, dtype=dtype) if shape else dtype(1.0)
    want = central(uses_params, (w, x), 0, dw)
    close(pullback.jvp(uses_params, (w, x), (dw, ZERO))[1], want, dtype)


class Decay:
    def __init__(self, w):
        self.w = w

    def rhs(self, t, y):
        return -self.w * y

    def energy(self, x):
        return np.sum(np.tanh(self.w * x))


def along_axis_bound(w, x):
    return np.sum(np.apply_along_axis(Decay(w).energy, 0, np.outer(x, x)))


def ivp_bound(w, x):
    from scipy.integrate import solve_ivp

    return np.sum(solve_ivp(Decay(w).rhs, (0.0, 1.0), x).y[:, -1])


@pytest.mark.parametrize("fn", [along_axis_bound, ivp_bound], ids=lambda f: f.__name__)
def test_a_bound_method_handed_to_library_code_is_refused(fn):
    w, x = 0.7, np.array([0.3, -0.5, 0.9])
    pattern = (
        r"test_silent_objects\.py:\d+: \S+ was handed a Decay object \(itself, a bound "
        r"method of it or inside a container\) whose fields \(w\) hold values the gradient "
        r"flows through"
    )
    with pytest.raises(NotDifferentiableError, match=pattern):
        pullback.grad(fn, wrt=0)(w, x)


def quad_by_name(a, q):
    return np.sum(np.sin(call(Quad(a), q)))


def quad_at_run_time(a, q):
    fn = CALLERS["call"]
    return np.sum(np.sin(fn(Quad(a), q)))


def test_an_undeclared_object_calling_its_rule(quad_rules):
    # by name the activity analysis knows the object is differentiated: right; found at
    # run time its undeclared cotangent refuses (the callee may read its data as constants)
    a, q = 1.3, np.array([0.4, -0.7])
    want = central(quad_by_name, (a, q), 0, 1.0)
    np.testing.assert_allclose(pullback.grad(quad_by_name, wrt=0)(a, q), want, rtol=1e-7)
    np.testing.assert_allclose(
        pullback.jvp(quad_at_run_time, (a, q), (1.0, ZERO))[1], want, rtol=1e-7
    )
    with pytest.raises(NotDifferentiableError, match=r"the Quad handed to 'call' \(found when"):
        pullback.grad(quad_at_run_time, wrt=0)(a, q)
