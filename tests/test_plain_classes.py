"""Objects of plain classes (no dataclass) built inside a differentiated function
(plain_classes.py, records_plain.py): the class's ``__init__`` is its constructor function,
every attribute it stores a differentiable field; methods, ``__call__``, properties, class
attributes, defaults and keywords, ``super().__init__``, methods the ``__init__`` calls,
objects in lists and dicts, a small MLP and a physics particle, against central finite
differences (float64 and float32), in reverse and forward mode and to second order. What
is refused: tests/test_plain_class_refusals.py."""

from __future__ import annotations

import numpy as np
import pytest
from fd import check_grad, check_jvp

import pullback
from pullback import grad, hessian, jvp
from pullback.errors import UnsupportedCallError, UnsupportedSyntaxError
from pullback.testing import check_grads

DTYPES = [np.float64, np.float32]


class Scaled:
    OFFSET = 0.5

    def __init__(self, x, log_s, power=2, *, shift=0.0):
        self.n = len(x)
        self.scale = np.exp(log_s)
        self.x = x
        self.power = power
        self.shift = shift + self.OFFSET

    def value(self):
        return np.sum((self.scale * self.x) ** self.power) / self.n + self.shift

    def twice(self):
        return 2.0 * self.value()

    def __call__(self, y):
        return self.twice() * y


def keywords_and_methods(x):
    s = Scaled(x, x[0], power=3, shift=x[1])
    return s(2.0) + s.OFFSET * s.n


class Base:
    def __init__(self, w):
        self.w = w * 2.0


class Child(Base):
    def __init__(self, w, b):
        super().__init__(w)
        self.b = b

    def out(self, x):
        return np.sum(np.sin(self.w * x) + self.b)


class Inherits(Child):
    def out(self, x):
        return 3.0 * Child.out(self, x)


def subclass(x):
    return Child(x, x[0] ** 2).out(1.5) + Inherits(x, x[1]).out(0.5)


class Lin:
    def __init__(self, W, b, act=True):
        self.W = W
        self.b = b
        if act:
            self.act = np.tanh
        else:
            self.act = None

    def __call__(self, x):
        y = x @ self.W + self.b
        if self.act is not None:
            y = self.act(y)
        return y


class MLP:
    def __init__(self, params):
        self.layers = [Lin(params[0], params[1]), Lin(params[2], params[3], act=False)]

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def mlp_loss(theta):
    W1 = theta[:6].reshape(2, 3)
    W2 = theta[6:9].reshape(3, 1)
    model = MLP([W1, theta[9:12], W2, theta[12:13]])
    x = np.array([[0.5, -1.0], [1.0, 2.0]], dtype=theta.dtype)
    return np.sum(model(x) ** 2)


class Particle:
    G = 9.81

    def __init__(self, pos, vel, mass=1.0):
        self.pos = pos
        self.vel = vel
        self.mass = mass

    def energy(self):
        return 0.5 * self.mass * np.sum(self.vel**2) + self.mass * self.G * self.pos[1]

    def step(self, dt):
        gravity = np.array([0.0, -self.G], dtype=self.vel.dtype)
        return Particle(self.pos + dt * self.vel, self.vel + dt * gravity, self.mass)


def particle(x):
    p = Particle(x[:2], x[2:4], mass=2.0)
    for _ in range(3):
        p = p.step(0.1)
    return p.energy() + np.sum(p.pos**2)


def in_a_dict(x):
    d = {"a": Lin(x.reshape(2, 1), 0.0), "b": Lin(x.reshape(1, 2), 1.0, act=False)}
    return np.sum(d["b"](d["a"](np.ones((1, 2), dtype=x.dtype))))


def scalar(a):
    p = Particle(a, a * 2.0)
    return p.vel * p.pos


class EarlyReturn:
    def __init__(self, w, fast=False):
        self.w = w
        if fast:
            return
        self.w2 = w * w


def early_return(a):
    return EarlyReturn(a).w2 + EarlyReturn(a, fast=True).w


FUNCTIONS = [keywords_and_methods, subclass, mlp_loss, particle, in_a_dict]


def _argument(fn, dtype):
    n = {mlp_loss: 13, in_a_dict: 2}.get(fn, 4)
    return np.linspace(-0.9, 1.1, n).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn", FUNCTIONS)
def test_objects_built_inside_against_finite_differences(fn, dtype):
    check_grad(fn, _argument(fn, dtype))


@pytest.mark.parametrize("fn", [scalar, early_return])
def test_scalar_fields(fn):
    check_grad(fn, 1.5)
    assert grad(scalar)(1.5) == pytest.approx(6.0)  # d/da 2 a^2
    assert grad(early_return)(1.5) == pytest.approx(4.0)  # d/da (a^2 + a)


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_forward_mode_and_second_order_agree(fn):
    x = _argument(fn, np.float64)
    v = np.cos(np.arange(x.size) + 1.0)
    _, tangent = jvp(fn, (x,), (v,))
    np.testing.assert_allclose(tangent, grad(fn)(x) @ v, rtol=1e-10, atol=1e-12)
    eps = 1e-5
    columns = [(grad(fn)(x + eps * e) - grad(fn)(x - eps * e)) / (2 * eps) for e in np.eye(x.size)]
    np.testing.assert_allclose(hessian(fn)(x), np.array(columns), rtol=1e-5, atol=1e-6)
    check_grads(fn, x, order=2)
    assert pullback.check(fn) == []


class Body:
    def __init__(self, pos, vel, mass=1.0):
        self.pos = pos
        self.vel = vel
        self.mass = mass

    @property
    def kinetic(self):
        return 0.5 * self.mass * np.sum(self.vel**2)

    @property
    def potential(self):
        return self.mass * 9.81 * self.pos[1]

    def energy(self):
        return self.kinetic + self.potential


def properties(x):
    body = Body(x[:2], x[2:4], mass=x[0])
    return 2.0 * body.kinetic + body.energy()


@pytest.mark.parametrize("dtype", DTYPES)
def test_properties_of_a_known_class_are_calls_of_their_getter(dtype):
    x = np.array([0.3, -0.7, 1.1, 0.4], dtype=dtype)
    check_grad(properties, x)
    x = x.astype(np.float64)
    # 3 kinetic + potential = 1.5 x0 (x2^2 + x3^2) + 9.81 x0 x1
    want = np.array(
        [[0.0, 9.81, 3 * x[2], 3 * x[3]], [9.81, 0, 0, 0], [3 * x[2], 0, 3 * x[0], 0],
         [3 * x[3], 0, 0, 3 * x[0]]]
    )  # fmt: skip
    np.testing.assert_allclose(hessian(properties)(x), want, rtol=1e-10, atol=1e-12)
    _, tangent = jvp(properties, (x,), (np.ones(4),))
    assert tangent == pytest.approx(np.sum(grad(properties)(x)))


def property_of_an_object_from_a_list(x):
    bodies = [Body(x[:2], x[2:4])]
    return bodies[0].kinetic


def test_a_property_of_an_object_of_unknown_class_is_refused_with_a_fix():
    with pytest.raises(UnsupportedCallError) as info:
        grad(property_of_an_object_from_a_list)(np.ones(4))
    where = f"{__file__}:{property_of_an_object_from_a_list.__code__.co_firstlineno + 2}:12"
    assert str(info.value) == (
        f"{where}: PB501 property 'kinetic' of a differentiated Body cannot be "
        "differentiated: pullback follows the attributes its __init__ stores and its "
        "methods' calls.\n"
        "Fix: write it as a method and call it, `.kinetic()`, or store it in __init__ "
        "(see docs/limitations.md#PB501)."
    )


class Counted:
    count = 0

    def __init__(self, w, *extra, scale=1.0, **opts):
        self.w = w * scale
        self.extra = extra
        self.opts = opts
        Counted.count += 1  # a side effect with no gradient: runs as in the primal

    def __call__(self, x):
        return np.sum(self.w * x) + sum(self.extra)


def apply(model, x):
    return model(x)


def star_arguments(x):
    model = Counted(x, x[0], x[1] ** 2, scale=2.0, tag="a")
    return apply(model, np.arange(x.size, dtype=x.dtype))


def _closure_class(k):
    class Inner:
        def __init__(self, w):
            self.w = w * k

        def out(self):
            return np.sum(self.w**2)

    def closure_class(x):
        return Inner(x).out()

    return closure_class


class OnOneBranch:
    def __init__(self, w, flag):
        if flag:
            self.w = w
        self.v = 2.0 * w

    def get(self):
        return self.w


def on_one_branch(x, flag):
    return np.sum(OnOneBranch(x, flag).get())


@pytest.mark.parametrize("dtype", DTYPES)
def test_star_arguments_closures_and_class_side_effects(dtype):
    x = np.array([0.3, -0.7, 1.1], dtype=dtype)
    before = Counted.count
    check_grad(star_arguments, x)
    assert Counted.count > before
    check_grad(_closure_class(3.0), x)


def test_an_attribute_stored_on_one_branch_only():
    x = np.array([0.3, -0.7])
    check_grad(on_one_branch, x, True)
    with pytest.raises(AttributeError, match="'OnOneBranch' object has no attribute 'w'"):
        grad(on_one_branch)(x, False)  # as the primal: the object has no such attribute


class Same:
    def __init__(self, w):
        self.w = w

    def scaled(self, k):
        return type(self)(self.w * k)  # the class found when the call runs


def same_class_again(a):
    return Same(a).scaled(3.0).w ** 2


def class_in_a_variable(a):
    make = Same
    return make(a).w * a


def test_a_class_called_through_a_value_found_at_run_time():
    check_grad(same_class_again, 1.5)
    check_grad(class_in_a_variable, 1.5)
    assert grad(same_class_again)(1.5) == pytest.approx(18 * 1.5)


class Ruled:
    def __init__(self, w):
        self.w = w


def ruled(a):
    return Ruled(a).w


def test_a_rule_registered_for_the_class_is_used():
    from pullback.plain_classes import constructor_of

    registry = pullback.default_registry().copy()

    @pullback.rrule(Ruled, registry=registry)
    def _(w):
        return Ruled(w), lambda dy: (dy,)

    assert registry.lookup(constructor_of(Ruled)) is registry.lookup(Ruled)
    with pullback.use_registry(registry):  # its result is a rule's object, as before
        with pytest.raises(UnsupportedSyntaxError, match="PB501 attribute 'w'"):
            grad(ruled)(1.5)
    assert grad(ruled)(1.5) == 1.0  # without the rule: the constructor function


class Pair:
    def __init__(self, W, b):
        self.W = W
        self.b = b


def build_pair(W):
    return Pair(2.0 * W, W[0] + 1.0)


def test_an_object_returned_by_the_function_in_vjp_and_jvp():
    from pullback import vjp

    W = np.array([1.0, 2.0])
    y, back = vjp(build_pair, W)
    assert type(y) is Pair and np.allclose(y.W, [2.0, 4.0]) and y.b == 2.0
    # its cotangent: the same class (its attributes), or the tuple of them in __init__ order
    (dW,) = back(Pair(np.array([1.0, -1.0]), 3.0))
    np.testing.assert_allclose(dW, [2.0 + 3.0, -2.0])
    (dW,) = back((np.array([1.0, -1.0]), 3.0))
    np.testing.assert_allclose(dW, [5.0, -2.0])
    _, tangent = jvp(build_pair, (W,), (np.array([1.0, 0.5]),))
    assert type(tangent) is Pair
    np.testing.assert_allclose(tangent.W, [2.0, 1.0])
    assert tangent.b == 1.0


class Accumulates:
    total = 0.0
    count = 0

    def __init__(self, xs, scale):
        for x in xs:
            self.total = self.total + scale * x  # the class's 0.0 first, then its own
        self.count = self.count + 1
        self.weights = self.make_weights(scale)
        self.norm = self.total / (1.0 + Accumulates.total)

    @staticmethod
    def make_weights(s):
        return np.array([s, 2.0 * s])


def accumulates(x):
    a = Accumulates(x, x[0])
    return a.norm * np.sum(a.weights) + a.count


def test_class_attributes_read_before_stored_and_static_methods():
    x = np.array([0.3, -0.7, 1.1])
    check_grad(accumulates, x)
    assert accumulates(x) == pytest.approx(0.3 * np.sum(x) * 0.9 + 1)
    assert Accumulates.total == 0.0 and Accumulates.count == 0  # the class is untouched


class Replaced:
    def __init__(self, w):
        self.w = 2.0 * w


def replaced(a):
    return Replaced(a).w


def test_a_replaced_init_is_what_the_next_gradient_follows(monkeypatch):
    g = grad(replaced)
    assert g(1.5) == 2.0

    def tripled(self, w):
        self.w = 3.0 * w

    monkeypatch.setattr(Replaced, "__init__", tripled)
    assert g(1.5) == 3.0


class Initialized:
    def __init__(self, w, n):
        self.w = w
        self.n = n
        self.W = self.init_weights(2.0)  # methods that only read: on the attributes so far
        self.norm = self.total() / self.n

    def init_weights(self, scale):
        return scale * np.outer(self.w, self.w) + self.bias()

    def bias(self):
        return self.w[0]

    @property
    def size(self):
        return self.n

    def total(self):
        return np.sum(self.W) * self.size


def initialized(x):
    m = Initialized(x, 3)
    return m.norm + np.sum(m.W)


@pytest.mark.parametrize("dtype", DTYPES)
def test_an_init_calling_methods_that_only_read(dtype):
    check_grad(initialized, np.array([0.3, -0.7, 1.1], dtype=dtype))
    check_grads(initialized, np.array([0.3, -0.7, 1.1]), order=2)


class PaddedTaps:
    """An __init__ that fills an array it made (a digital filter's padded taps):
    `self.b = np.zeros(n)` then `self.b[n - len(b):] = b`. The constructor's
    closing `return new_record(...)` once carried the def line's place, so the write
    seemed to come after a use that keeps the array (found by probe3)."""

    def __init__(self, b, a):
        self.a = np.array(a)
        self.b = np.zeros(self.a.size)
        self.b[self.b.size - len(b):] = b
        self.x = np.zeros(self.b.size - 1)

    def response(self, u):
        return np.sum(self.b * u) + np.sum(self.x)


@pytest.mark.parametrize("dtype", DTYPES)
def test_an_init_writing_into_an_array_it_made(dtype):
    def f(b, a, u):
        return PaddedTaps(b, a).response(u) ** 2

    check_grad(f, np.array([0.2, 0.3], dtype=dtype), np.array([1.0, -0.5, 0.1]), np.ones(3))


class _Clipper:
    """Methods named like array methods (clip, sum, mean): the class's own are called."""

    def __init__(self, lo):
        self.lo = lo

    def clip(self, p):
        return np.maximum(p, self.lo) * 2.0

    def sum(self, p):
        return np.sum(p * p)

    def mean(self, p):
        return self.sum(self.clip(p)) / 3.0


def methods_named_like_array_methods(x):
    c = _Clipper(0.1)
    return c.sum(c.clip(x)) + c.mean(x * x)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_users_method_named_like_an_array_method_is_the_users(dtype):
    x = np.array([0.3, -0.5, 0.8], dtype=dtype)
    f = methods_named_like_array_methods
    lo = np.maximum(x, 0.1)
    want = 8.0 * lo * (x > 0.1) + (16.0 / 3.0) * x * np.maximum(x * x, 0.1) * (x * x > 0.1)
    np.testing.assert_allclose(pullback.grad(f)(x), want, rtol=1e-5)
    _, t = pullback.jvp(f, (x,), (np.ones(3, dtype=dtype),))
    np.testing.assert_allclose(t, np.sum(want), rtol=1e-5)


class Scorer:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    def score(self, y):
        return np.sum(self.w * y) + self.b


def objects_appended_in_a_loop(x):
    ms = []
    for i in range(2):
        ms.append(Scorer(x * (i + 0.5), x[0]))
    return ms[0].score(x) - ms[-1].score(x * x)


def one_object_appended(x):
    ms = []
    ms.append(Scorer(x, x[0]))
    return ms[0].score(x)


@pytest.mark.parametrize("f", [objects_appended_in_a_loop, one_object_appended])
def test_objects_appended_to_a_list_in_forward_mode(f):
    # jvp crashed: the tangent of ms[k] (operator.getitem's pullback transposed) made a
    # zero cotangent as 0.0 * the object, and checked a record's tuple against the object
    x = np.array([0.3, 0.5, 0.7])
    check_jvp(f, (x,), (np.array([1.0, 0.5, -1.0]),))
    check_grad(f, x)
