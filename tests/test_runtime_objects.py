"""Objects built inside a differentiated function whose class (or the object itself) is
known only when it runs: a class passed in or picked from a dict, made by a factory, a
copy (``copy.copy``/``copy.deepcopy``), the one ``max``/``min`` pick by a key, an attribute
stored by ``setattr``. Each is either differentiated exactly (checked against central
differences, float64 and float32, and to second order where pullback goes there) or
refused at the user's line with a fix; never a silent zero.

Found by probing ``dynamic_calls.call_method``: a copy of an object's record was no record
(its fields carried no gradient), ``max(objects, key=...)`` dropped the picked object's
cotangent (``finalize`` of a non-array), and ``setattr(m, "w", w)`` ran as a
non-differentiable call where ``m.w = w`` is PB107.
"""

from __future__ import annotations

import collections
import copy
import dataclasses

import numpy as np
import pytest
from fd import check_grad, check_hvp

import pullback
from pullback import grad
from pullback.errors import UnsupportedSyntaxError

W = np.array([0.3, -0.7, 1.1])
X = np.array([0.5, 1.5, -0.25])
V = np.array([0.5, -1.0, 0.25])


class Wave:
    def __init__(self, w):
        self.w = w

    def energy(self, x):
        return np.sum(np.sin(self.w) * x)


class Square:
    def __init__(self, w):
        self.w = w

    def energy(self, x):
        return np.sum(self.w**2 * x)


class Nested:
    def __init__(self, w):
        self.inner = Square(w)
        self.s = w * 2.0

    def energy(self, x):
        return self.inner.energy(x) + np.sum(np.cos(self.s) * x)


@dataclasses.dataclass
class Cosine:
    w: np.ndarray

    def energy(self, x):
        return np.sum(np.cos(self.w) * x)


Pair = collections.namedtuple("Pair", "w k")

CLASSES = {"wave": Wave, "square": Square}


def make(cls, w):
    return cls(w)


class Settable:
    def __init__(self):
        self.w = 0.0
        self.n = 1

    def energy(self, x):
        return np.sum(self.w * x) * self.n


# -- a class known only at run time ---------------------------------------------------


def class_argument(w, x, cls):
    return cls(w).energy(x)


def class_from_dict(w, x, name):
    m = CLASSES[name](w)
    return m.energy(x)


def made_by_factory(w, x, cls):
    m = make(cls, w)
    return m.energy(x)


def classes_in_a_loop(w, x, classes):
    t = 0.0
    for c in classes:
        t = t + c(w).energy(x)
    return t


def bound_by_type(w, x):
    m0 = Square(w)
    m = type(m0)(np.tanh(w))
    return m.energy(x)


RUN_TIME_CLASSES = [
    (class_argument, (Wave,)),
    (class_argument, (Square,)),
    (class_argument, (Cosine,)),
    (class_from_dict, ("wave",)),
    (made_by_factory, (Nested,)),
    (classes_in_a_loop, ((Wave, Square, Cosine),)),
    (bound_by_type, ()),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(
    "f, extra",
    RUN_TIME_CLASSES,
    ids=[f"{f.__name__}-{k}" for k, (f, _) in enumerate(RUN_TIME_CLASSES)],
)
def test_objects_of_classes_found_at_run_time(f, extra, dtype):
    check_grad(f, W.astype(dtype), X.astype(dtype), *extra)


# -- copies of objects ----------------------------------------------------------------


def copied(w, x):
    m = Wave(w)
    m2 = copy.copy(m)
    return m2.energy(x)


def deep_copied(w, x):
    m = Square(w)
    m2 = copy.deepcopy(m)
    return m2.energy(x) + m.energy(x * 2.0)


def deep_copied_nested(w, x):
    h = Nested(w)
    h2 = copy.deepcopy(h)
    return h2.energy(x)


def deep_copied_list(w, x):
    ms = [Wave(w), Square(w)]
    ms2 = copy.deepcopy(ms)
    return ms2[0].energy(x) * ms2[1].energy(x)


def copied_at_run_time(w, x, cls):
    m = cls(w)
    return copy.copy(m).energy(x)


COPIES = [
    (copied, ()),
    (deep_copied, ()),
    (deep_copied_nested, ()),
    (deep_copied_list, ()),
    (copied_at_run_time, (Wave,)),
    (copied_at_run_time, (Cosine,)),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(
    "f, extra", COPIES, ids=[f"{f.__name__}-{k}" for k, (f, _) in enumerate(COPIES)]
)
def test_a_copy_of_an_object_keeps_its_gradient(f, extra, dtype):
    check_grad(f, W.astype(dtype), X.astype(dtype), *extra)


@pytest.mark.parametrize("f", [copied, deep_copied, deep_copied_nested, deep_copied_list])
def test_second_order_through_a_copy_of_an_object(f):
    check_hvp(lambda w: f(w, X), W, V)


def test_a_copy_of_an_object_made_outside_stays_without_gradient():
    outside = Square(np.ones(3))

    def f(w, x):
        m = copy.copy(outside)
        return m.energy(x) + np.sum(w * x)

    np.testing.assert_allclose(grad(f)(W, X), X)


# -- max and min by a key over objects ------------------------------------------------


def max_of_objects(w, x):
    ms = [Wave(w), Wave(2.0 * w)]
    m = max(ms, key=lambda m: float(np.sum(m.w)))
    return m.energy(x)


def min_of_two_objects(w, x):
    m = min(Square(w), Square(w * 3.0), key=lambda m: float(np.sum(m.w)))
    return m.energy(x)


def max_of_dataclasses(w, x):
    ms = [Cosine(w), Cosine(w * 0.5)]
    return max(ms, key=lambda m: float(np.sum(m.w))).energy(x)


def min_of_named_tuples(w, x):
    ps = [Pair(w, 2.0), Pair(np.sin(w), 1.0)]
    p = min(ps, key=lambda p: p.k)
    return np.sum(p.w**2 * x)


def max_of_run_time_objects(w, x, cls):
    ms = [cls(w), cls(2.0 * w)]
    return max(ms, key=lambda m: float(np.sum(m.w))).energy(x)


EXTREMES = [
    (max_of_objects, ()),
    (min_of_two_objects, ()),
    (max_of_dataclasses, ()),
    (min_of_named_tuples, ()),
    (max_of_run_time_objects, (Square,)),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(
    "f, extra", EXTREMES, ids=[f"{f.__name__}-{k}" for k, (f, _) in enumerate(EXTREMES)]
)
def test_max_and_min_by_key_pass_the_picked_object_its_cotangent(f, extra, dtype):
    check_grad(f, W.astype(dtype), X.astype(dtype), *extra)


@pytest.mark.parametrize(
    "f", [max_of_objects, min_of_two_objects, max_of_dataclasses, min_of_named_tuples]
)
def test_second_order_through_max_and_min_of_objects(f):
    check_hvp(lambda w: f(w, X), W, V)


# -- setattr --------------------------------------------------------------------------


def setattr_constant(w, x):
    m = Settable()
    m.w = w
    return m.energy(x)


def setattr_of_object(w, x):
    m = Settable()
    object.__setattr__(m, "w", w)
    return m.energy(x)


def setattr_by_name(w, x, name):
    m = Settable()
    setattr(m, name, w)
    return m.energy(x)


@pytest.mark.parametrize(
    "f, extra, shown",
    [
        (setattr_of_object, (), "'m.w' would store a differentiated value"),
        (setattr_by_name, ("w",), "'m.<name>' would store a differentiated value"),
    ],
)
def test_setattr_of_a_differentiated_value_is_refused_as_an_attribute_store(f, extra, shown):
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(f)(W, X, *extra)
    text = str(info.value)
    assert "PB107" in text and shown in text
    assert "setattr" in text and f"test_runtime_objects.py:{f.__code__.co_firstlineno + 2}:" in text
    assert "Fix: keep the value in a local variable" in text


def test_a_store_on_an_object_the_function_owns_is_a_version():
    # m.w = w on an object only this function holds: transform/object_stores.py
    check_grad(setattr_constant, W, X)
    check_hvp(lambda w: setattr_constant(w, X), W, V)


def setattr_of_a_counter(w, x, name):
    m = Settable()
    m.w = 2.0
    m.n = 3
    setattr(m, name, 4)
    return m.energy(x) + np.sum(np.sin(w) * x)


def setattr_never_read_back(w, x):
    m = Settable()
    m.w = w
    return np.sum(w * x)


def test_setattr_of_values_without_gradient_runs_as_written():
    check_grad(setattr_of_a_counter, W, X, "n")
    check_grad(setattr_never_read_back, W, X)


# -- objects handed on by the container builtins --------------------------------------


def tuple_of_objects(w, x, cls):
    ms = [cls(w), cls(2.0 * w)]
    return tuple(ms)[1].energy(x)


def list_copy_of_objects(w, x, cls):
    ms = [cls(w), cls(np.sin(w))]
    return ms.copy()[1].energy(x)


def list_of_dict_values(w, x, cls):
    d = {"a": cls(w), "b": cls(w * 2.0)}
    return list(d.values())[1].energy(x)


def starred_objects(w, x, cls):
    a, *rest = [cls(w), cls(2.0 * w), cls(3.0 * w)]
    return rest[1].energy(x) + a.energy(x)


HANDED_ON = [tuple_of_objects, list_copy_of_objects, list_of_dict_values, starred_objects]


@pytest.mark.parametrize("cls", [Square, Cosine])
@pytest.mark.parametrize("f", HANDED_ON)
def test_objects_in_lists_and_tuples_the_builtins_made(f, cls):
    """Each item's cotangent reached ``unbroadcast`` against an object, which took it for
    an operator applied to the object (a refusal naming ``__add__``)."""
    check_grad(f, W, X, cls)
    check_grad(f, W.astype(np.float32), X.astype(np.float32), cls)


SECOND_ORDER_CLASSES = RUN_TIME_CLASSES


@pytest.mark.parametrize(
    "f, extra",
    SECOND_ORDER_CLASSES,
    ids=[f"{f.__name__}-{k}" for k, (f, _) in enumerate(SECOND_ORDER_CLASSES)],
)
def test_second_order_through_classes_found_at_run_time(f, extra):
    """The vjp of a call of a class held in a variable is its constructor's (it was
    refused as 'needs it to be a Python function or method')."""
    check_hvp(lambda w: f(w, X, *extra), W, V)


def test_an_object_holding_an_object_made_at_run_time_has_a_hessian():
    """The vjp of the vjp of the outer constructor met the inner object's zero cotangent as
    a rebuilt object (runtime.vjp_zero) and failed at the user's line: now it is the tuple
    of the inner object's fields, and the Hessian is jacobian(grad), float64 and float32."""
    for dtype in (np.float64, np.float32):
        w = W.astype(dtype)
        x = X.astype(dtype)

        def f(w, x=x):
            return made_by_factory(w, x, Nested)

        h = pullback.hessian(f)(w)
        assert h.dtype == dtype
        np.testing.assert_allclose(h, pullback.jacobian(grad(f))(w), rtol=1e-5, atol=1e-6)
    h64 = pullback.hessian(lambda w: made_by_factory(w, X, Nested))(W)
    np.testing.assert_allclose(h64 @ V, pullback.hvp(lambda w: made_by_factory(w, X, Nested))(W, V))


class Slotted:
    __slots__ = ("w",)

    def __init__(self, w):
        self.w = w

    def energy(self, x):
        return np.sum(self.w * x)


def test_a_slotted_class_found_at_run_time():
    # (__slots__ was refused: a plain class now, its fields in the slots)
    np.testing.assert_allclose(grad(class_argument)(W, X, Slotted), X, rtol=1e-12)


class StoresALambda:
    def __init__(self, w):
        self.w = w
        self.act = lambda z: self.w * z

    def energy(self, x):
        return np.sum(self.act(x))


@pytest.mark.parametrize(
    "cls, why",
    [
        (StoresALambda, "an __init__ with a nested function that reads 'self'"),
    ],
)
def test_a_class_found_at_run_time_that_cannot_be_followed_says_why(cls, why):
    with pytest.raises(pullback.PullbackError) as info:
        grad(class_argument)(W, X, cls)
    text = str(info.value)
    assert f"cannot differentiate the call of '{cls.__name__}', found at run time: {why}" in text
    assert "return cls(w).energy(x)" in text  # the user's line
    assert "Fix: " in text and "neither Python source nor a rule" not in text


# -- class methods --------------------------------------------------------------------


class Made:
    SCALE = 3.0

    def __init__(self, w):
        self.w = w

    @classmethod
    def create(cls, w):
        return cls(np.sin(w) * 2.0)

    @classmethod
    def total(cls, w, x):
        return np.sum(w**2 * x) * cls.SCALE

    def energy(self, x):
        return np.sum(self.w**2 * x)


class MadeBy(Made):
    SCALE = 5.0


def made_by_class_method(w, x):
    return Made.create(w).energy(x) + MadeBy.create(w * 0.5).energy(x)


def class_method_reading_the_class(w, x):
    return MadeBy.total(w, x) + Made.total(w, x) + Made(w).total(w, x)


@pytest.mark.parametrize("f", [made_by_class_method, class_method_reading_the_class])
def test_class_methods_are_functions_of_their_class(f):
    """``Model.create(w)`` was PB301 'a function with no Python source'."""
    check_grad(f, W, X)
    check_grad(f, W.astype(np.float32), X.astype(np.float32))
    check_hvp(lambda w: f(w, X), W, V)


# -- second order through a helper that builds an object, called at run time --------


def builds_an_object(w, x):
    return Wave(w).energy(x)


def reads_a_field(w, x):
    m = Wave(w)
    return np.sum(np.sin(m.w) * x)


HELPERS = [builds_an_object, reads_a_field]


def star_called(w):
    return builds_an_object(*(w, X))


def called_from_a_list(w):
    f = HELPERS[0]
    return f(w, X)


def field_read_called_from_a_list(w):
    f = HELPERS[1]
    return f(w, X)


def class_star_called(w):
    extra = (Wave,)
    return class_argument(w, X, *extra)


@pytest.mark.parametrize(
    "f", [star_called, called_from_a_list, field_read_called_from_a_list, class_star_called]
)
def test_second_order_through_a_helper_that_builds_an_object_found_at_run_time(f):
    """The gradient differentiated again runs such a helper as written, whose
    ``Wave(w)`` made an object that was no record: its Hessian was silently zero."""
    check_grad(f, W)
    check_hvp(f, W, V)


# -- getattr --------------------------------------------------------------------------


def getattr_method(w, x, cls):
    m = cls(w)
    return m.energy(x)


def getattr_field(w, x):
    m = Square(w)
    return np.sum(m.w * np.sin(x))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_getattr_with_a_constant_name_is_the_attribute(dtype):
    """``getattr(m, "energy")(x)`` is ``m.energy(x)`` and ``getattr(m, "w")`` is ``m.w``
    (they were PB301 'getattr, no Python source', with a fix to register a rule)."""
    w, x = W.astype(dtype), X.astype(dtype)
    check_grad(getattr_method, w, x, Wave)
    check_grad(getattr_method, w, x, Cosine)
    check_grad(getattr_field, w, x)


def test_getattr_with_a_constant_name_to_second_order():
    check_hvp(lambda w: getattr_method(w, X, Wave), W, V)


def getattr_by_name(w, x, name):
    m = Wave(w)
    return getattr(m, name)(x)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_getattr_with_a_name_known_when_it_runs(dtype):
    """``getattr(m, name)(x)`` with ``name`` an argument: the rule of getattr reads the
    record's method as its bound method, whose call gives ``m`` its cotangent (it was
    PB301 'getattr with a name known only when it runs'; pullback/dynamic_attrs.py)."""
    w, x = W.astype(dtype), X.astype(dtype)
    check_grad(getattr_by_name, w, x, "energy")
    check_grad(getattr_by_name, x, w, "energy", wrt=1)


def test_getattr_with_a_name_known_when_it_runs_to_second_order():
    check_hvp(lambda w: getattr_by_name(w, X, "energy"), W, V)


def max_of_pairs_holding_objects(w, x):
    ps = [(1.0, Wave(w)), (2.0, Square(3.0 * w))]
    k, m = max(ps, key=lambda p: p[0])
    return k * m.energy(x)


def min_of_pairs_holding_dataclasses(w, x, cls):
    ps = [(2.0, cls(w)), (1.0, cls(np.sin(w)))]
    k, m = min(ps, key=lambda p: p[0])
    return k * m.energy(x)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_max_and_min_of_tuples_holding_objects(dtype):
    """The picked tuple's cotangent holds a record's: passed whole (``finalize`` made an
    array of it: 'the reverse sweep failed')."""
    w, x = W.astype(dtype), X.astype(dtype)
    check_grad(max_of_pairs_holding_objects, w, x)
    check_grad(min_of_pairs_holding_dataclasses, w, x, Cosine)


def test_second_order_through_max_of_tuples_holding_objects():
    check_hvp(lambda w: max_of_pairs_holding_objects(w, X), W, V)
    check_hvp(lambda w: min_of_pairs_holding_dataclasses(w, X, Cosine), W, V)


class _Stepper:
    def __init__(self, rhs, dt):
        self.rhs = rhs
        self.dt = dt

    def step(self, y):
        f = self.rhs  # a lambda held in a local: called as f(...) to second order
        k1 = f(y)
        return y + self.dt * f(y + 0.5 * self.dt * k1)


def stored_lambda_steps(y0):
    rate = np.array([0.7, -0.4])
    stepper = _Stepper(lambda y: rate * y * y + np.sin(y), 0.1)
    y = y0
    for _ in range(3):
        y = stepper.step(y)
    return np.sum(y * y)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_lambda_stored_on_an_object_and_called_from_a_local_has_second_derivatives(dtype):
    y0 = np.array([0.3, -0.6], dtype=dtype)
    check_grad(stored_lambda_steps, y0)
    if dtype == np.float64:  # (central differences of a float32 gradient are too coarse)
        check_hvp(stored_lambda_steps, y0, np.array([1.0, -0.5]))
    else:
        hv = pullback.hvp(stored_lambda_steps)(y0, np.array([1.0, -0.5], dtype=dtype))
        want = pullback.hvp(stored_lambda_steps)(y0.astype(np.float64), np.array([1.0, -0.5]))
        assert hv.dtype == dtype
        np.testing.assert_allclose(hv, want, rtol=1e-4, atol=1e-5)


class _Halver:  # no fields: its object carries no gradient
    def half(self, p):
        return p * 0.5

    def __call__(self, p):
        p = self.half(p)
        return p * p

    def apply(self, p):
        q = self.half(p)
        return np.sin(q) * q


def fieldless_call(x):
    h = _Halver()
    return np.sum(h(x)) + np.sum(h.apply(x))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_method_of_an_object_without_fields_calling_another_has_second_derivatives(dtype):
    x = np.array([0.3, -0.5, 1.2], dtype=dtype)
    check_grad(fieldless_call, x)
    v = np.array([1.0, 0.5, -2.0])
    if dtype == np.float64:
        check_hvp(fieldless_call, x, v)
    else:  # (central differences of a float32 gradient are too coarse)
        want = pullback.hvp(fieldless_call)(x.astype(np.float64), v)
        got = pullback.hvp(fieldless_call)(x, v.astype(dtype))
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
