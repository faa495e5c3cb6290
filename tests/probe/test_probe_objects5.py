"""Probe: every read pattern on objects reached through parameters (objects5).

A helper receives an object (a parameter of unknown class) and reads it as public code
does: subscripts of its fields (``h.v[0]``, ``h.v[-1]``, ``h.v[1:]``), unpacking
(``a, b = h.v``, ``a, *rest = h.v``), loops, ``len``, ``enumerate``, ``zip(h.a, h.b)``,
``sum``/``max``/``min``/``sorted``, ``tuple(h.v)``/``list(h.v)``, dict fields, nested
objects (``m.layers[i].W``), named tuples, dataclasses, ``getattr`` with a constant name,
class attributes read through the instance, properties (``m.first`` of a parameter). Each
field holds a list, a tuple, an array or an object of a user's class with its own
``__iter__``/``__getitem__`` (``Seq``), which is what failed: a parameter's fields were
taken to be plain values, so the items of a ``Seq`` in one were read as a list's (a crash
in the reverse sweep, or a refusal); ``tuple(v)``, ``max(v)``, ``sorted(v)`` of such an
object were refused; a property read on a parameter was refused (PB501), and so was a
class attribute read through a dataclass or named tuple argument; and a ``Seq`` inside a
differentiated dataclass got the gradient None, silently (now refused before running).

Each probe: the gradient against central differences, ``jvp``, ``hvp`` and ``hessian``
(probe_harness.check_probe), and float32. Differentiated with respect to the object itself
where pullback gives objects gradients (dataclasses, named tuples). What is still refused
is refused before any number, with the fix (golden texts below).
"""

from __future__ import annotations

import collections
import dataclasses
from typing import NamedTuple

import numpy as np
import pytest
from probe_harness import probe_tests, refusal_test

from pullback import grad, hessian, jvp


class H:
    def __init__(self, v=None, a=None, b=None, params=None, inner=None):
        self.v = v
        self.a = a
        self.b = b
        self.params = params
        self.inner = inner


class Seq:
    """A sequence of the user's: its own ``__iter__``, ``__len__`` and ``__getitem__``."""

    def __init__(self, xs):
        self.xs = xs

    def __iter__(self):
        return iter(self.xs)

    def __len__(self):
        return len(self.xs)

    def __getitem__(self, i):
        return self.xs[i]


class Layer:
    def __init__(self, W, b):
        self.W = W
        self.b = b


class Model:
    scale = 2.0  # a class attribute, read through the instance

    def __init__(self, layers):
        self.layers = layers

    @property
    def first(self):
        return self.layers[0]

    @property
    def norm(self):
        return sum(np.sum(layer.W**2) for layer in self.layers)


@dataclasses.dataclass
class D:
    v: object
    s: float = 1.0


class NT(NamedTuple):
    a: object
    b: object


Pair = collections.namedtuple("Pair", "a b")


def make(kind, w):
    """Three items of ``w`` as a list, a tuple, an array or a Seq."""
    if kind == "list":
        return [w[0], w[1], w[2]]
    if kind == "tuple":
        return (w[0], w[1], w[2])
    if kind == "array":
        return w[:3] * 1.0
    return Seq([w[0], w[1], w[2]])


# --- the readers: helpers whose parameter ``h`` holds the items in ``h.v`` ---------------


def r_index(h):
    return h.v[0] * h.v[1] + h.v[-1]


def r_unpack(h):
    a, b, c = h.v
    return a * b + c * c


def r_star(h):
    a, *rest = h.v
    return a * rest[0] + rest[-1]


def r_loop(h):
    s = 0.0
    for x in h.v:
        s = s + x * x
    return s


def r_slice(h):
    return np.sum(np.asarray(h.v[1:])) * h.v[0]


def r_len(h):
    return h.v[0] * len(h.v)


def r_enumerate(h):
    s = 0.0
    for i, x in enumerate(h.v):
        s = s + (i + 1) * x * x
    return s


def r_sum(h):
    return sum(h.v) * h.v[1]


def r_sum_start(h):
    return sum(h.v, 1.0) ** 2


def r_tuple(h):
    t = tuple(h.v)
    return t[0] * t[2] + sum(t + (1.0,))


def r_list(h):
    t = list(h.v)
    return t[0] * t[2]


def r_comprehension(h):
    return sum([x * x for x in h.v])


def r_generator(h):
    return sum(x**3 for x in h.v)


def r_getattr(h):
    return getattr(h, "v")[1] ** 2  # noqa: B009 (the form probed: a constant name)


def r_loop_index(h):
    s = 0.0
    for i in range(len(h.v)):
        s = s + h.v[i] * h.v[i]
    return s


def r_max_min(h):
    return max(h.v) * min(h.v)


def r_sorted(h):
    s = sorted(h.v)
    return s[0] * s[-1]


def r_max_key(h):
    return max(h.v, key=abs) ** 2


def r_local_field(h):
    v = h.v
    return sum(v) * max(v)


READERS = [
    r_index, r_unpack, r_star, r_loop, r_slice, r_len, r_enumerate, r_sum, r_sum_start,
    r_tuple, r_list, r_comprehension, r_generator, r_getattr, r_loop_index, r_max_min,
    r_sorted, r_max_key, r_local_field,
]  # fmt: skip
KINDS = ("list", "tuple", "array", "seq")


def reading(reader, kind):
    def f(w):
        return reader(H(make(kind, w))) * w[3]

    f.__name__ = f"{reader.__name__}_{kind}"
    return f


# --- other shapes of objects: zip of fields, dicts, nesting, containers of objects ------


def zip_fields(h):
    s = 0.0
    for a, b in zip(h.a, h.b, strict=True):
        s = s + a * b
    for i, a in enumerate(h.a):
        s = s + i * a * a
    return s


def zip_seqs(w):
    return zip_fields(H(a=Seq([w[0], w[1]]), b=Seq([w[2], w[3]])))


def zip_lists(w):
    return zip_fields(H(a=[w[0], w[1]], b=(w[2], w[3])))


def zip_arrays(w):
    return zip_fields(H(a=w[:2], b=w[2:]))


def dict_reads(h):
    s = h.params["w"] * h.params["b"] ** 2
    for k, v in h.params.items():
        s = s + v * v * len(k)
    return s + sum(h.params.values())


def dict_field(w):
    return dict_reads(H(params={"w": w[0], "b": w[1] * w[2]})) * w[3]


def seq_in_dict(h):
    a, b = h.params["s"]
    return a * b + h.params["s"][1]


def dict_of_seq(w):
    return seq_in_dict(H(params={"s": Seq([w[0], w[1]])})) * w[2]


def nested_reads(h):
    a, b = h.inner.v
    return a * b * h.inner.v[0]


def nested_seq(w):
    return nested_reads(H(inner=H(Seq([w[0], w[1]])))) + w[3]


def nested_list(w):
    return nested_reads(H(inner=H([w[0], w[1]]))) * w[2]


def item_of_param(pairs):
    a, b = pairs[0]
    return a * b + pairs[1][0]


def tuple_of_seqs(w):
    return item_of_param((Seq([w[0], w[1]]), Seq([w[2], w[3]])))


def items_of_field(h):
    a, b = h.v[1]
    s = 0.0
    for p in h.v:
        x, y = p
        s = s + x * y
    return a * b + s


def list_of_seqs(w):
    return items_of_field(H([Seq([w[0], w[1]]), Seq([w[2], w[3]])]))


def loops_over_items(ps):
    s = 0.0
    for p in ps:
        for x in p:
            s = s + x * x
    return s


def seqs_looped(w):
    return loops_over_items([Seq([w[0], w[1]]), Seq([w[2], w[3]])])


def use_model(m):
    s = 0.0
    for i in range(len(m.layers)):
        s = s + np.sum(m.layers[i].W ** 2) * m.layers[i].b
    for layer in m.layers:
        s = s + np.sum(layer.W) * layer.b
    return s * m.scale


def model_layers(w):
    return use_model(Model([Layer(w[:2] * 1.0, w[2]), Layer(w[2:], w[3])]))


def use_pairs(p):
    a, b = p
    return a * p.b[0] * b[1] + p[0]


def namedtuple_fields(w):
    return use_pairs(NT(w[0], Seq([w[1], w[2]]))) * w[3]


def collections_namedtuple(w):
    return use_pairs(Pair(w[0], (w[1], w[2]))) * w[3]


def dataclass_holding_seq(w):
    return r_unpack(D(Seq([w[0], w[1], w[2]]))) * w[3]


def use_property(m):
    return np.sum(np.sin(m.first.W) * m.first.b) + m.norm**2


def property_through_a_parameter(w):
    """``m.first`` of a parameter: the getter, with ``m`` carrying the gradient."""
    return use_property(Model([Layer(w[:2] * 1.0, w[2]), Layer(w[2:], w[3])]))


@dataclasses.dataclass
class Scaled:
    w: np.ndarray
    k: float

    @property
    def norm(self):
        return np.sqrt(np.sum(self.w**2)) * self.k


def dataclass_property(w):
    return use_property_of(Scaled(w[:3] * w[3], 1.5))


def use_property_of(p):
    return p.norm * p.w[0]


def tuple_made_here(w):
    s = Seq([w[0], w[1], w[2]])
    t = tuple(s)
    a, b, c = s
    return t[0] * t[1] * c + len(t + (w[3],)) * w[3]


OTHERS = [
    zip_seqs, zip_lists, zip_arrays, dict_field, dict_of_seq, nested_seq, nested_list,
    tuple_of_seqs, list_of_seqs, seqs_looped, model_layers, namedtuple_fields,
    collections_namedtuple, dataclass_holding_seq, tuple_made_here,
    property_through_a_parameter, dataclass_property,
]  # fmt: skip

W = np.array([0.7, -1.3, 0.4, 0.9])
PROBES = {
    **{f.__name__: (f, (W,), True) for f in (reading(r, k) for r in READERS for k in KINDS)},
    **{f.__name__: (f, (W,), True) for f in OTHERS},
}

test_probe, test_float32 = probe_tests(PROBES)


# --- with respect to the object itself: a dataclass, a named tuple ----------------------


def _central_on_fields(f, build, values, eps=1e-6):
    flat = np.array(values, dtype=np.float64)
    out = np.zeros_like(flat)
    for k in range(flat.size):
        up, down = flat.copy(), flat.copy()
        up[k] += eps
        down[k] -= eps
        out[k] = (f(build(up)) - f(build(down))) / (2 * eps)
    return out


FIELD_FORMS = {
    "list": lambda u: D([float(x) for x in u]),
    "tuple": lambda u: D(tuple(float(x) for x in u)),
    "array": lambda u: D(np.array(u)),
}


@pytest.mark.parametrize("form", sorted(FIELD_FORMS))
@pytest.mark.parametrize("reader", READERS, ids=[r.__name__ for r in READERS])
def test_gradient_with_respect_to_a_dataclass(reader, form):
    build = FIELD_FORMS[form]
    d = build([0.7, -1.3, 0.4])
    got = grad(reader)(d)
    assert isinstance(got, D)
    want = _central_on_fields(reader, build, [0.7, -1.3, 0.4])
    np.testing.assert_allclose(np.array(got.v, dtype=np.float64), want, rtol=1e-6, atol=1e-8)


def test_hessian_and_jvp_with_respect_to_a_named_tuple():
    def f(p):
        a, b = p
        return a * a * b[0] + np.sum(p.b) * p[0]

    p = NT(0.7, np.array([-1.3, 0.4]))
    g = grad(f)(p)
    build = lambda u: NT(u[0], np.array(u[1:]))  # noqa: E731
    want = _central_on_fields(f, build, [0.7, -1.3, 0.4])
    np.testing.assert_allclose([g.a, *g.b], want, rtol=1e-6, atol=1e-8)
    _, t = jvp(f, (p,), (NT(1.0, np.array([0.5, -2.0])),))
    assert t == pytest.approx(want @ np.array([1.0, 0.5, -2.0]), rel=1e-6)

    def g_of(x):  # the same function of a vector, for the Hessian
        return f(NT(x[0], x[1:]))

    x = np.array([0.7, -1.3, 0.4])
    eps = 1e-5
    rows = [(grad(g_of)(x + eps * e) - grad(g_of)(x - eps * e)) / (2 * eps) for e in np.eye(3)]
    np.testing.assert_allclose(hessian(g_of)(x), np.array(rows), rtol=1e-5, atol=1e-6)


@dataclasses.dataclass
class WithConstant:
    w: np.ndarray
    K = 3.0  # a class attribute (no annotation: no field)


class NTWithConstant(NamedTuple):
    w: np.ndarray
    K = 2.0  # (no annotation: a class attribute, no field)


def reads_a_class_constant(p):
    return np.sum(np.sin(p.w) * p.K) + p.K * p.w[0] ** 2


@pytest.mark.parametrize("cls", [WithConstant, NTWithConstant], ids=["dataclass", "namedtuple"])
def test_a_class_attribute_read_through_a_differentiated_record_is_a_constant(cls):
    """``p.K`` of a dataclass or named tuple argument, a class attribute: a constant that
    just runs (it was refused, PB501), float64 and float32, and in forward mode."""
    x = np.array([0.3, -0.7, 1.1])
    want = _central_on_fields(reads_a_class_constant, lambda u: cls(np.array(u)), list(x))
    got = grad(reads_a_class_constant)(cls(x))
    assert isinstance(got, cls)
    np.testing.assert_allclose(got.w, want, rtol=1e-6, atol=1e-8)
    got32 = grad(reads_a_class_constant)(cls(x.astype(np.float32))).w
    assert got32.dtype == np.float32
    np.testing.assert_allclose(got32, want, rtol=2e-3, atol=2e-4)
    v = np.array([1.0, 0.5, -2.0])
    assert jvp(reads_a_class_constant, (cls(x),), (cls(v),))[1] == pytest.approx(want @ v)

    def of_vector(u):  # the same function of a vector, for the Hessian
        return reads_a_class_constant(cls(u))

    rows = [
        (grad(of_vector)(x + 1e-5 * e) - grad(of_vector)(x - 1e-5 * e)) / 2e-5 for e in np.eye(3)
    ]
    np.testing.assert_allclose(hessian(of_vector)(x), np.array(rows), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("reader", READERS, ids=[r.__name__ for r in READERS])
def test_a_constant_object_just_runs(reader):
    """An object that carries no gradient (wrt another argument): read as written, once."""

    def f(x, h):
        return reader(h) * x * x

    for v in ([0.7, -1.3, 0.4], Seq([0.7, -1.3, 0.4])):
        h = H(v)
        want = (f(0.8 + 1e-6, h) - f(0.8 - 1e-6, h)) / 2e-6
        assert grad(f)(0.8, h) == pytest.approx(want, rel=1e-6)


# --- refused, with the line or the argument and a fix ------------------------------------


def seq_in_a_dataclass(d):
    a, b = d.v
    return a * b


REFUSED = {
    # a plain class's object inside a differentiated dataclass: its gradient has no form
    # (it came back as None, silently)
    "seq_in_a_dataclass": (
        seq_in_a_dataclass,
        (D(Seq([0.7, -1.3])),),
        (
            "cannot differentiate 'seq_in_a_dataclass' with respect to 'd': it holds a Seq "
            "(an object of a plain class) with numbers or arrays in it, whose gradient "
            "pullback cannot give back.\nFix: make Seq a @dataclass (its gradient is then a "
            "Seq), or build the Seq inside the function from arrays passed as arguments; "
            "see docs/limitations.md#PB501.",
        ),
    ),
}

test_refused = refusal_test(REFUSED)
