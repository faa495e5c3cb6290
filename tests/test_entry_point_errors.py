"""What the API's entry points say, as pullback errors with the place and a fix, where
Python or the tangent's arithmetic raised before: an output with no derivative (None, a
string, a dict of strings) for jvp and a vjp's pullback, keywords an entry point does not
take (JAX's argnums), a wrt naming an argument that takes its default; and the PB107 texts
(a key spelled as the user wrote it; a field stored from outside its class)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from pullback import grad, hessian, hvp, jacobian, jvp, value_and_grad, vjp
from pullback.errors import (
    ArgumentError,
    NonScalarOutputError,
    UnsupportedCallError,
    UnsupportedSyntaxError,
)


def _line(fn, k=0):
    return fn.__code__.co_firstlineno + k


def returns_none(x):
    x * 2.0
    return None


def returns_text(x):
    return f"{x}"


def returns_labels(x):
    return {"a": "b"}


def square(x, y=1.0):
    return x * x * y


@pytest.mark.parametrize(
    "fn, got", [(returns_none, "None"), (returns_text, "a str"), (returns_labels, "a dict of str")]
)
def test_jvp_and_a_vjp_pullback_of_an_output_with_no_derivative(fn, got):
    place = f"{__file__}:{_line(fn, 2 if fn is returns_none else 1)}:5"
    with pytest.raises(NonScalarOutputError) as info:
        jvp(fn, (1.0,), (1.0,))
    assert str(info.value) == (
        f"{place}: jvp needs '{fn.__name__}' to return numbers or arrays (or a tuple, list "
        f"or dict holding some), but it returned {got}, which has no derivative.\n"
        "Fix: return the value whose directional derivative you want (a number or an "
        "array, or a tuple, list or dict of them); a function run only for what it does "
        "has none: call it directly."
    )
    _, back = vjp(fn, 1.0)
    with pytest.raises(NonScalarOutputError) as info:
        back(1.0)
    assert str(info.value) == (
        f"{place}: the pullback of vjp needs '{fn.__name__}' to return numbers or arrays "
        f"(or a tuple, list or dict holding some), but it returned {got}, which has no "
        "derivative.\nFix: return the value whose cotangent you pull back (a number or an "
        "array, or a tuple, list or dict of them), and pass the rest of what the function "
        "makes out alongside it."
    )


def test_jvp_of_a_lambda_returning_none_names_its_body():
    f = lambda x: None  # noqa: E731
    with pytest.raises(NonScalarOutputError, match=r":\d+:19: jvp needs '<lambda>'"):
        jvp(f, (1.0,), (1.0,))


def test_entries_with_no_derivative_inside_an_output_get_none():
    def f(x):
        return x * 2.0, None, {"v": x * x, "name": "run"}

    y, t = jvp(f, (np.float32(1.5),), (np.float32(1.0),))
    assert t[1] is None and t[2]["name"] is None
    assert t[0] == pytest.approx(2.0) and t[2]["v"] == pytest.approx(3.0)
    # the other entry points already refuse such outputs (unchanged)
    for entry in (grad, value_and_grad, hessian):
        with pytest.raises(NonScalarOutputError):
            entry(returns_none)(1.0)
    with pytest.raises(ArgumentError):
        jacobian(returns_none)(np.ones(2))
    with pytest.raises(NonScalarOutputError):
        hvp(returns_text)(1.0, 1.0)


@pytest.mark.parametrize("entry", [grad, value_and_grad, jacobian, hessian, hvp])
def test_argnums_is_refused_with_the_name_pullback_uses(entry):
    name = entry.__name__
    with pytest.raises(ArgumentError) as info:
        entry(square, argnums=1)
    assert str(info.value) == (
        f"{name}() takes no keyword 'argnums'.\nFix: pass the argument index (or parameter "
        f"name, or a tuple of them) as wrt: {name}(f, wrt=1)."
    )
    with pytest.raises(ArgumentError, match=rf"^{name}\(\) takes no keyword 'wrtt'"):
        entry(square, wrtt=1)


def test_jvp_keywords_the_function_does_not_take():
    with pytest.raises(ArgumentError) as info:
        jvp(square, (1.0,), (1.0,), argnums=0)
    assert str(info.value) == (
        "jvp cannot call 'square' with these arguments: got an unexpected keyword argument "
        "'argnums'.\nFix: jvp differentiates along the tangents given: give pullback.ZERO "
        "(or None) as the tangent of each argument that does not move."
    )
    assert jvp(square, (2.0,), (1.0,), y=3.0) == (12.0, 12.0)


@pytest.mark.parametrize("dtype", [float, np.float32])
def test_wrt_an_argument_left_to_its_default(dtype):
    # (the fast path read past the arguments given: an IndexError)
    assert grad(square, wrt=1)(dtype(1.5)) == pytest.approx(2.25)
    assert grad(square, wrt="y")(dtype(1.5)) == pytest.approx(2.25)


class Model:
    def __init__(self):
        self.params = {"W1": 1.0}


def stores_into_a_held_dict(x, m):
    m.params["W1"] = x * 2.0
    return m.params["W1"] * 3.0


def test_pb107_quotes_the_key_as_written():
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(stores_into_a_held_dict)(1.0, Model())
    assert (
        "Fix: on an object this function builds, store a new container in the attribute "
        "instead of changing the one it holds: `params = dict(m.params)` (or `list(...)`), "
        '`params["W1"] = ...`, `m.params = params`;'
    ) in str(info.value)


class Holder:
    def __init__(self, w):
        self.w = w

    def out(self):
        return self.w * self.extra


def put_extra(o, v):
    o.extra = v


def stores_from_outside(a):
    p = Holder(a)
    put_extra(p, a * a)
    return p.out()


@dataclasses.dataclass
class Cell:
    w: float

    def out(self):
        return self.w * self.extra

    def set_extra(self, v):
        self.extra = v


def stores_a_non_field(a):
    c = Cell(a)
    c.set_extra(a * a)
    return c.out()


def test_pb107_of_a_field_stored_from_outside_its_class():
    with pytest.raises(UnsupportedCallError) as info:
        grad(stores_from_outside)(1.5)
    read = f"{__file__}:{_line(Holder.out, 1)}:25"
    store = f"{__file__}:{_line(put_extra, 1)}:5"
    assert str(info.value) == (
        f"{read}: PB107 this reads back 'extra' of a differentiated Holder, stored at "
        f"{store} while the gradient ran from outside the class: no method of Holder stores "
        "`self.extra`, and pullback follows stores on an object only into the attributes "
        "its class's own methods store, so the gradient through that store would be lost.\n"
        "Fix: store it in a method of Holder (`def set_extra(self, v): self.extra = v`) and "
        "call that method (`obj.set_extra(v)`) in the function that made the object, or "
        "return the value and pass it on (see docs/limitations.md#PB107)."
    )

    # the fix works: a method's store is a field
    class Fixed(Holder):
        def set_extra(self, v):
            self.extra = v

    def fixed(a):
        p = Fixed(a)
        p.set_extra(a * a)
        return p.out()

    assert grad(fixed)(1.5) == pytest.approx(3 * 1.5**2)


def test_pb107_of_a_dataclass_attribute_that_is_no_field():
    with pytest.raises(UnsupportedCallError) as info:
        grad(stores_a_non_field)(1.5)
    read = f"{__file__}:{_line(Cell.out, 1)}:25"
    store = f"{__file__}:{_line(Cell.set_extra, 1)}:9"
    assert str(info.value) == (
        f"{read}: PB107 this reads back 'extra' of a differentiated Cell, stored at {store} "
        "while the gradient ran: 'extra' is not a field of the dataclass Cell, and pullback "
        "follows stores on a dataclass only into its fields, so the gradient through that "
        "store would be lost.\nFix: declare it as a field of Cell (`extra: float = 0.0`) and "
        "have the method return a new object instead of storing on this one "
        "(`return dataclasses.replace(self, extra=v)`, used as `obj = obj.with_extra(v)`) "
        "(see docs/limitations.md#PB107)."
    )

    @dataclasses.dataclass
    class Fixed:
        w: float
        extra: float = 0.0

        def out(self):
            return self.w * self.extra

        def with_extra(self, v):
            return dataclasses.replace(self, extra=v)

    def fixed(a):
        c = Fixed(a)
        c = c.with_extra(a * a)
        return c.out()

    assert grad(fixed)(1.5) == pytest.approx(3 * 1.5**2)
