"""Objects of plain classes (no dataclass) built inside a differentiated function
(plain_classes.py, records_plain.py): the class's ``__init__`` is its constructor function,
every attribute it stores a differentiable field; methods, ``__call__``, class attributes,
defaults and keywords, ``super().__init__``, objects in lists and dicts, a small MLP and a
physics particle, against central finite differences (float64 and float32), in reverse and
forward mode and to second order; and the refusals, at the user's line with a fix."""

from __future__ import annotations

import numpy as np
import pytest
from fd import check_grad

import pullback
from pullback import grad, hessian, jvp
from pullback.errors import NotDifferentiableError, UnsupportedCallError, UnsupportedSyntaxError
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


class Logged:
    def __init__(self, w):
        self.w = w
        self.calls = 0

    def set_w(self, w):
        self.w = w

    def output(self):
        return 2.0 * self.w


def mutated_by_a_method(a):
    obj = Logged(a)
    obj.set_w(a * a)
    return obj.output()


def test_a_field_a_method_stores_while_the_gradient_runs_is_refused_where_read():
    with pytest.raises(UnsupportedCallError) as info:
        grad(mutated_by_a_method)(1.5)
    where = f"{__file__}:{Logged.output.__code__.co_firstlineno + 1}:22"
    assert str(info.value) == (
        f"{where}: PB107 this reads back 'w', which a method stored on the differentiated "
        "Logged while the gradient ran: the gradient through that store would be lost.\n"
        "Fix: return the new value from the method (or a new object, e.g. `Logged(...)`) "
        "and use that, instead of storing it on the object (see docs/limitations.md#PB107)."
    )


LOG = []


class Logs:
    def __init__(self, w):
        self.w = w
        LOG.append(w)


def logs_but_reads_the_field(a):
    return Logs(a).w * 2.0


def logs_and_reads_the_log(a):
    return Logs(a).w * LOG[-1]


def test_a_value_the_init_also_keeps_elsewhere_is_still_a_field():
    assert grad(logs_but_reads_the_field)(1.5) == 2.0
    # what it kept outside the object, read back, would lose its gradient: refused there
    with pytest.raises(UnsupportedCallError, match="this reads back a value that carries a"):
        grad(logs_and_reads_the_log)(1.5)


class Node:
    def __init__(self, w):
        self.w = w

    def pull(self, other):
        if other is self:  # the objects are the primal's: identity holds as it runs
            return 2.0 * self.w
        return self.w * other.w


def identity(a):
    n, m = Node(a), Node(3.0 * a)
    return n.pull(n) + n.pull(m)


def test_identity_of_objects_is_the_primal_s():
    check_grad(identity, 1.5)
    assert grad(identity)(1.5) == pytest.approx(2.0 + 6.0 * 1.5)


def test_an_object_passed_in_stays_refused_as_before():
    with pytest.raises(NotDifferentiableError) as info:
        grad(Particle.energy)(Particle(np.ones(2), np.ones(2)))
    assert str(info.value) == (
        "cannot differentiate 'energy' with respect to 'self': it is a Particle, "
        "which has no gradient.\nFix: pass the arrays it holds as the arguments, and build "
        "the Particle inside the function (an object built there is differentiated through "
        "its __init__ and methods), or make Particle a @dataclass (its gradient is then a "
        "Particle); see docs/limitations.md#PB501."
    )
    # as a constant (not differentiated), it is an ordinary object
    p = Particle(np.ones(2), np.array([1.0, 2.0]))
    g = grad(lambda m, q: m * q.energy(), wrt=0)(2.0, p)
    assert g == pytest.approx(p.energy())


class WithNew:
    def __new__(cls, w):
        return super().__new__(cls)

    def __init__(self, w):
        self.w = w


class WithSlots:
    __slots__ = ("w",)

    def __init__(self, w):
        self.w = w


class WithGetattr:
    def __init__(self, w):
        self.w = w

    def __getattr__(self, name):
        return 0.0


class Meta(type):
    pass


class WithMeta(metaclass=Meta):
    def __init__(self, w):
        self.w = w


REGISTRY = []


class Registers:
    def __init__(self, w):
        self.w = w
        REGISTRY.append(self)


class CallsAMethod:
    def __init__(self, w):
        self.w = w
        self.reset()

    def reset(self):
        self.state = 0.0


class OnAnArray(np.ndarray):
    def __init__(self, w):
        self.w = w


def with_new(a):
    return WithNew(a).w


def with_slots(a):
    return WithSlots(a).w


def with_getattr(a):
    return WithGetattr(a).w


def with_meta(a):
    return WithMeta(a).w


def registers(a):
    return Registers(a).w


def calls_a_method(a):
    return CallsAMethod(a).w


def _init_line(cls, k):
    return f"{__file__}:{cls.__init__.__code__.co_firstlineno + k}"


REFUSALS = [
    (
        with_new,
        "WithNew",
        "a class that defines __new__ ('WithNew'), which changes what making or reading its "
        "objects does",
        "remove __new__ (keep plain attributes), or register a rule for the class",
    ),
    (
        with_slots,
        "WithSlots",
        "a class with __slots__ ('WithSlots')",
        "drop __slots__ (or use a @dataclass), or register a rule for the class",
    ),
    (
        with_getattr,
        "WithGetattr",
        "a class that defines __getattr__ ('WithGetattr'), which changes what making or "
        "reading its objects does",
        "remove __getattr__ (keep plain attributes), or register a rule for the class",
    ),
    (
        with_meta,
        "WithMeta",
        "a class with the metaclass 'Meta' (which may change how its objects are made)",
        "use a plain class or a @dataclass, or register a rule for the class",
    ),
    (
        registers,
        "Registers",
        "an __init__ that hands 'self' on (stores, passes or compares the object it builds) "
        f"at {_init_line(Registers, 2)}:25",
        "keep __init__ to storing attributes; register the object after constructing it, "
        "outside the differentiated function",
    ),
    (
        calls_a_method,
        "CallsAMethod",
        "an __init__ that calls 'self.reset', which stores 'self.state' at "
        f"{_init_line(CallsAMethod, 2)}:9",
        "call a function (or a @staticmethod) that returns the values, and store them in __init__",
    ),
]


@pytest.mark.parametrize("fn, name, what, fix", REFUSALS)
def test_classes_whose_construction_cannot_be_followed_are_refused(fn, name, what, fix):
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(fn)(1.5)
    message = str(info.value)
    where = f"{__file__}:{fn.__code__.co_firstlineno + 1}:12"
    assert f"{where}: PB301 call of '{__name__}.{name}', {what}\n" in message
    assert f"Fix: {fix} (see docs/limitations.md#PB301)." in message
    assert [d.code for d in pullback.check(fn)] == ["PB301"]


def test_a_class_built_on_a_c_extension_class_is_refused():
    def on_an_array(a):
        return OnAnArray(a)

    with pytest.raises(UnsupportedSyntaxError, match="built on the C-extension class 'ndarray'"):
        grad(on_an_array)(1.5)


def test_refused_classes_run_as_in_the_primal_where_no_gradient_flows():
    def settings(a):
        return WithSlots(2.0).w * Registers(3.0).w * a

    assert grad(settings)(1.5) == pytest.approx(6.0)


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


STATIC_FILE = """
import numpy as np


class Layer:
    def __init__(self, W, b=1.0):
        self.W = W
        self.b = b

    def __call__(self, x):
        return np.tanh(x @ self.W + self.b)


class Slotted:
    __slots__ = ("w",)

    def __init__(self, w):
        self.w = w


class Guarded:
    def __init__(self, w):
        self.w = w

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)


class Registers:
    ALL = []

    def __init__(self, w):
        self.w = w
        Registers.ALL.append(self)


class Resets:
    def __init__(self, w):
        self.w = w
        self.W = self.weights()
        self.reset()

    def weights(self):
        return np.outer(self.w, self.w)

    def reset(self):
        self.state = 0.0


def layer_loss(W):
    return np.sum(Layer(W)(np.ones(2)))


def resets(a):
    return Resets(a).w


def registers(a):
    return Registers(a).w


def slotted(a):
    return Slotted(a).w


def guarded(a):
    return Guarded(a).w
"""


def test_the_static_check_reports_what_grad_refuses(tmp_path, capsys):
    import importlib.util

    from pullback.__main__ import main

    path = tmp_path / "plain_models.py"
    path.write_text(STATIC_FILE)
    main(["check", str(path)])
    out = capsys.readouterr().out
    found = sorted(line.split(": ", 1)[1] for line in out.splitlines() if ": PB" in line)
    assert found == [
        # (the file's every function is checked: __setattr__'s body too)
        "PB301 call of 'object.__setattr__', a function with no Python source and no "
        "differentiation rule",
        "PB301 call of 'plain_models.Guarded', a class that defines __setattr__ ('Guarded'), "
        "which changes what making or reading its objects does",
        "PB301 call of 'plain_models.Registers', an __init__ that hands 'self' on (stores, "
        f"passes or compares the object it builds) at {path}:34:30",
        "PB301 call of 'plain_models.Resets', an __init__ that calls 'self.reset', which "
        f"stores 'self.state' at {path}:41:9",
        "PB301 call of 'plain_models.Slotted', a class with __slots__ ('Slotted')",
    ]
    spec = importlib.util.spec_from_file_location("plain_models", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # grad reads the functions' source from the file
    W = np.array([[0.5, -0.2], [0.1, 0.3]])
    check_grad(module.layer_loss, W)
    with pytest.raises(UnsupportedSyntaxError, match=f"builds\\) at {path}:34:30\n"):
        grad(module.registers)(1.5)  # the same place as the static check's
    with pytest.raises(UnsupportedSyntaxError, match=f"'self.state' at {path}:41:9\n"):
        grad(module.resets)(1.5)
    for name in ("slotted", "guarded", "registers"):
        with pytest.raises(
            UnsupportedSyntaxError, match=f"PB301 call of 'plain_models.{name.title()}'"
        ):
            grad(getattr(module, name))(1.5)


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
