"""What plain classes (plain_classes.py) refuse, at the user's line with a fix, and what
stays exact around them: a field a method stores while the gradient runs (refused where it
is read back), a value the ``__init__`` keeps outside the object, identity of objects, an
object passed in as the differentiated argument, classes whose construction cannot be
followed (``__new__``, ``__slots__``, ``__getattr__``, a metaclass, an ``__init__`` that
hands ``self`` on or calls a method that stores on it, a C-extension base), and the static
``pullback check`` reporting the same at the same lines."""

from __future__ import annotations

import numpy as np
import pytest
from fd import check_grad
from probe.probe_harness import check_probe
from static_files import check_then_import
from test_plain_classes import Particle

import pullback
from pullback import grad
from pullback.errors import NotDifferentiableError, UnsupportedCallError, UnsupportedSyntaxError


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


def mutated_through_an_alias(a):
    obj = Logged(a)
    alias = obj  # in the function's body, both bound once: one object under one name
    alias.set_w(a * a)
    return obj.output()


def mutated_through_an_alias_in_a_branch(a):
    obj = Logged(a)
    alias = obj if a > 0 else Logged(a)
    alias.set_w(a * a)
    return obj.output()


def test_a_field_a_method_stores_on_an_object_the_function_owns_is_a_version():
    # (transform/object_stores.py; tests/test_object_state.py has the other derivatives)
    assert check_grad(mutated_by_a_method, 1.5) == pytest.approx(6.0)


def test_a_field_a_method_stores_through_a_second_name_in_the_body_is_a_version():
    assert check_grad(mutated_through_an_alias, 1.5) == pytest.approx(6.0)


def test_a_field_a_method_stores_while_the_gradient_runs_is_refused_where_read():
    # another name may hold the object: the store is not a version, its read is refused
    with pytest.raises(UnsupportedCallError) as info:
        grad(mutated_through_an_alias_in_a_branch)(1.5)
    where = f"{__file__}:{Logged.output.__code__.co_firstlineno + 1}:22"
    store = f"{__file__}:{Logged.set_w.__code__.co_firstlineno + 1}:9"
    assert str(info.value) == (
        f"{where}: PB107 this reads back 'w' of a differentiated Logged, stored at {store} "
        "while the gradient ran on an object pullback could not follow there (the object "
        "had a second name, was in a container, came in as an argument or was handed on by "
        "a call or a method, or a method changed a list or array it holds in place): the "
        "gradient through that store would be lost.\n"
        "Fix: keep the object under the one name that made it (`obj = Logged(...)`, no "
        "`b = obj` in a loop or branch, no list or call holding it) and store through that "
        "name, a list as a tuple (`self.items = self.items + (v,)`), or return the new "
        "value from the method that computes it and use that "
        "(see docs/limitations.md#PB107)."
    )


class Accumulates:
    def __init__(self, w):
        self.w = w
        self.items = []

    def add(self, y):  # the name of set.add: still this class's method
        self.items.append(self.w * y)

    def push(self, y):
        self.items.append(self.w * y)

    def total(self):
        return sum(self.items)


def added_then_summed_by_a_method(x):
    acc = Accumulates(x[0])
    acc.add(np.sin(x[1]))
    return acc.total()


def pushed_then_read_as_a_field(x):
    acc = Accumulates(x[0])
    acc.push(np.sin(x[1]))
    return sum(acc.items) * x[2]


def added_in_a_loop(x):
    acc = Accumulates(x[0])
    for i in range(3):
        acc.add(np.sin(x[i]))
    return acc.total()


def added_but_never_read_back(x):
    acc = Accumulates(x[0])
    acc.add(x[1])
    return acc.w * x[2]


@pytest.mark.parametrize(
    "fn", [added_then_summed_by_a_method, pushed_then_read_as_a_field, added_in_a_loop]
)
def test_a_list_field_a_method_appends_to_differentiates(fn):
    # once a silent zero gradient (the appended values' gradient lost at the read), then
    # refused there; now the list, made in __init__ and reached by no one else, grows as
    # a copy stored as a new version of the object (transform/object_arrays.py), a method
    # named like a container method (add) included
    check_probe(fn, np.array([0.3, 0.5, 0.7]), second=True)


def test_a_list_field_appended_to_and_not_read_back_differentiates():
    check_grad(added_but_never_read_back, np.array([0.3, 0.5, 0.7]))


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
    path, found, module = check_then_import(tmp_path, capsys, "plain_models", STATIC_FILE)
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
    ]
    W = np.array([[0.5, -0.2], [0.1, 0.3]])
    check_grad(module.layer_loss, W)
    with pytest.raises(UnsupportedSyntaxError, match=f"builds\\) at {path}:34:30\n"):
        grad(module.registers)(1.5)  # the same place as the static check's
    with pytest.raises(UnsupportedSyntaxError, match=f"'self.state' at {path}:41:9\n"):
        grad(module.resets)(1.5)
    assert grad(module.slotted)(1.5) == 1.0  # __slots__: a plain class (test_slotted_classes)
    for name in ("guarded", "registers"):
        with pytest.raises(
            UnsupportedSyntaxError, match=f"PB301 call of 'plain_models.{name.title()}'"
        ):
            grad(getattr(module, name))(1.5)


# Hand-written layer classes (found by probe3): `layer.update([w, b])` is the layer's own method
# storing its parameters, not dict.update: refused for the store it makes (PB107, at the
# method's line), where it was once called a change of a dict (PB106, `l1 = {'key': ...}`).
class Dense:
    def __init__(self, d_in, d_out):
        self.w = np.zeros((d_in, d_out))
        self.b = np.zeros(d_out)

    def __call__(self, x):
        return np.dot(x, self.w) + self.b

    def update(self, params):
        self.w = params[0]
        self.b = params[1]


def dense_loss(w, b, x):
    layer, head = Dense(2, 1), Dense(1, 1)  # made together in one statement
    layer.update([w, b])
    return np.sum(head(layer(x)) ** 2)


def test_an_objects_own_update_method_is_not_a_dict_update():
    args = (np.ones((2, 1)), np.zeros(1), np.ones((3, 2)))
    with pytest.raises(UnsupportedCallError, match="PB107") as info:
        grad(dense_loss)(*args)
    assert "self.w = params[0]" in str(info.value) or "stored outside" in str(info.value)
