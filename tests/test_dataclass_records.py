"""Dataclasses as differentiated values (records_dataclasses.py, records_calls.py): passed in
(the gradient is the same dataclass, None in fields that hold no float), built inside
(positional, keywords, defaults, default_factory), fields read by name and nested, methods
called on a differentiated instance, ``dataclasses.replace``/``astuple``/``asdict``, in
reverse and forward mode and to second order, against central finite differences and
hand-derived gradients; and what is refused, at the user's line with a fix."""

from __future__ import annotations

import dataclasses
import typing

import numpy as np
import pytest
from fd import check_grad

from pullback import grad, hessian, hvp, jvp, value_and_grad, vjp
from pullback.errors import (
    ArgumentError,
    NotDifferentiableError,
    UnsupportedSyntaxError,
)
from pullback.testing import check_grads

DTYPES = [np.float64, np.float32]


@dataclasses.dataclass
class Params:
    w: np.ndarray
    b: float
    name: str = "p"
    steps: int = 3


@dataclasses.dataclass(frozen=True, slots=True)
class Layer:
    W: np.ndarray
    bias: np.ndarray
    scale: float = 1.0

    def apply(self, x):
        return np.tanh(self.scale * (x @ self.W) + self.bias)


@dataclasses.dataclass
class Model:
    layer: Layer
    extra: list = dataclasses.field(default_factory=list)
    table: dict = dataclasses.field(default_factory=dict)

    def energy(self, x):
        return np.sum(self.layer.apply(x) ** 2) + sum(np.sum(e * e) for e in self.extra)


def loss(p, X):
    return np.sum((X @ p.w + p.b) ** 2) * p.steps


def model_loss(m, x):
    return m.energy(x) + np.sum(m.table["u"] * m.layer.W)


def _fd(f, theta, eps=1e-6):
    theta = np.asarray(theta, dtype=np.float64)
    out = np.zeros_like(theta)
    for k in range(theta.size):
        e = np.zeros_like(theta)
        e[k] = eps
        out[k] = (f(theta + e) - f(theta - e)) / (2 * eps)
    return out


def _where(fn, line_offset, col):
    return f"{fn.__code__.co_filename}:{fn.__code__.co_firstlineno + line_offset}:{col}"


def _tol(dtype):
    return dict(rtol=2e-3, atol=2e-3) if dtype == np.float32 else dict(rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_dataclass_argument_gets_the_same_dataclass_as_gradient(dtype):
    p = Params(np.array([0.5, -1.0], dtype=dtype), dtype(0.25), "lin", 2)
    X = np.array([[1.0, 2.0], [0.5, -0.5], [3.0, 1.0]], dtype=dtype)
    g = grad(loss)(p, X)
    assert type(g) is Params
    r = X @ p.w + p.b  # hand-derived: 2 * steps * X^T r and 2 * steps * sum(r)
    np.testing.assert_allclose(g.w, 4 * X.T @ r, **_tol(dtype))
    np.testing.assert_allclose(g.b, 4 * np.sum(r), **_tol(dtype))
    assert g.w.dtype == dtype and type(g.b) is dtype
    assert g.name is None and g.steps is None  # fields with no float: None, as named tuples
    assert p.name == "lin" and p.steps == 2  # the argument is untouched
    value, g2 = value_and_grad(loss)(p, X)
    np.testing.assert_allclose(value, loss(p, X))
    np.testing.assert_allclose(g2.w, g.w)


@pytest.mark.parametrize("dtype", DTYPES)
def test_nested_frozen_slots_dataclasses_with_lists_dicts_and_methods(dtype):
    rng = np.random.default_rng(0)
    W = rng.normal(size=(3, 2)).astype(dtype)
    bias = rng.normal(size=2).astype(dtype)
    extra = [rng.normal(size=2).astype(dtype)]
    u = rng.normal(size=(3, 2)).astype(dtype)
    x = rng.normal(size=3).astype(dtype)
    m = Model(Layer(W, bias, dtype(0.5)), extra, {"u": u})
    g = grad(model_loss)(m, x)
    assert type(g) is Model and type(g.layer) is Layer and type(g.extra) is list
    assert g.layer.W.dtype == dtype and g.table["u"].shape == (3, 2)

    def flat(theta):
        theta = theta.astype(np.float64)
        W2 = theta[:6].reshape(3, 2)
        mm = Model(
            Layer(W2, theta[6:8], theta[8]), [theta[9:11]], {"u": theta[11:17].reshape(3, 2)}
        )
        return model_loss(mm, x.astype(np.float64))

    theta = np.concatenate([W.ravel(), bias, [0.5], extra[0], u.ravel()])
    got = np.concatenate(
        [g.layer.W.ravel(), g.layer.bias, [g.layer.scale], g.extra[0], g.table["u"].ravel()]
    )
    np.testing.assert_allclose(got, _fd(flat, theta), **_tol(dtype))
    check_grad(lambda v: model_loss(m, v), x)  # through the method, in x


def built_inside(theta):
    p = Params(b=theta[2], w=theta[:2])  # keywords out of order, defaults for the rest
    layer = Layer(np.outer(theta[:2], theta[1:]), theta[1:])  # scale from its default
    m = Model(layer, extra=[theta[:2] * 2.0], table={"u": np.ones((2, 2))})
    return loss(p, np.eye(2)) + model_loss(m, theta[:2]) + m.layer.scale * p.b


def positional_inside(a, b):
    p = Params(a * b, b)  # name and steps from their defaults
    return np.sum(p.w * p.b) * p.steps


@pytest.mark.parametrize("dtype", DTYPES)
def test_built_inside_with_keywords_defaults_and_factories(dtype):
    theta = np.array([0.3, -0.7, 1.1], dtype=dtype)
    check_grad(built_inside, theta)
    a = np.array([0.5, 2.0, -1.0], dtype=dtype)
    check_grad(positional_inside, a, dtype(1.5), wrt=(0, 1))
    # hand-derived: 3 * sum(a) * b^2 -> (3 b^2, 6 b sum(a))
    ga, gb = grad(positional_inside, (0, 1))(a, dtype(1.5))
    np.testing.assert_allclose(ga, np.full(3, 3 * 1.5**2), **_tol(dtype))
    np.testing.assert_allclose(gb, 6 * 1.5 * np.sum(a), **_tol(dtype))


def test_second_order_and_forward_mode_through_built_dataclasses():
    theta = np.array([0.3, -0.7, 1.1])
    assert check_grads(built_inside, theta, order=2) == "reverse over reverse"
    v = np.array([1.0, 0.0, -1.0])
    _, dy = jvp(built_inside, (theta,), (v,))
    np.testing.assert_allclose(dy, grad(built_inside)(theta) @ v, rtol=1e-10)
    h = hessian(built_inside)(theta)
    np.testing.assert_allclose(h, h.T, atol=1e-10)

    def cubic(a):
        p = Params(a * a, 2.0 * a)
        return np.sum(p.w) * p.b  # 2 a^3 -> 6 a^2 -> 12 a

    assert grad(grad(cubic))(1.5) == pytest.approx(18.0)


class NamedLayer(typing.NamedTuple):
    W: np.ndarray
    bias: np.ndarray

    def apply(self, x):
        return np.tanh(x @ self.W + self.bias)


def through_methods(theta):
    layer = Layer(np.outer(theta[:2], theta[1:]), theta[1:], 0.5)
    named = NamedLayer(np.outer(theta[1:], theta[:2]), theta[:2])
    return np.sum(layer.apply(theta[:2]) ** 2) + np.sum(named.apply(theta[1:]) ** 2)


def test_second_order_through_methods_of_records_differentiates_the_receiver():
    # the receiver of a record's method (a dataclass or a named tuple) carries a gradient:
    # the method's vjp function, differentiated again, gives its cotangent too
    theta = np.array([0.3, -0.7, 1.1])
    assert check_grads(through_methods, theta, order=2) == "reverse over reverse"
    check_grad(through_methods, theta)


def make(a, x):
    return Params(a * x, 3.0 * a, "made", 4)


def test_vjp_and_jvp_take_and_give_the_same_dataclass():
    x = np.array([1.0, -2.0])
    y, pullback = vjp(make, 2.0, x)
    assert type(y) is Params
    da, dx = pullback(Params(np.array([1.0, 1.0]), 1.0, "ignored", 0))
    assert da == pytest.approx(np.sum(x) + 3.0)  # hand-derived
    np.testing.assert_allclose(dx, [2.0, 2.0])
    # the same cotangent given as a tuple of its fields
    da2, _ = pullback((np.array([1.0, 1.0]), 1.0, None, None))
    assert da2 == pytest.approx(da)
    y, dy = jvp(make, (2.0, x), (1.0, np.zeros(2)))
    assert type(dy) is Params and dy.name is None and dy.steps is None
    np.testing.assert_allclose(dy.w, x)
    assert dy.b == pytest.approx(3.0)
    p = Params(np.array([0.5, -1.0]), 0.25)
    X = np.array([[1.0, 2.0], [0.5, -0.5]])
    t = Params(np.array([1.0, 2.0]), -1.0, "t", 0)
    _, d = jvp(loss, (p, X), (t, None))
    g = grad(loss)(p, X)
    assert d == pytest.approx(np.sum(g.w * t.w) + g.b * t.b)


def replaced(p, a):
    q = dataclasses.replace(p, w=a * p.w)
    return np.sum(q.w) * q.b


def replaced_inside(a):
    p = Params(np.array([a, 2.0 * a]), a)
    q = dataclasses.replace(p, b=a * a)
    return np.sum(q.w) * q.b + p.b  # 3 a^3 + a


def as_tuple_and_dict(m, x):
    (W, bias, scale), extra, table = dataclasses.astuple(m)
    d = dataclasses.asdict(m)
    return (
        np.sum(W * scale) + np.sum(extra[0] * bias) + np.sum(d["layer"]["W"] ** 2 * table["u"]) * x
    )


@pytest.mark.parametrize("dtype", DTYPES)
def test_replace_astuple_and_asdict(dtype):
    p = Params(np.array([0.5, -1.0], dtype=dtype), dtype(0.25))
    g = grad(replaced)(p, dtype(3.0))
    assert type(g) is Params
    np.testing.assert_allclose(g.w, [0.75, 0.75], **_tol(dtype))  # a * b
    np.testing.assert_allclose(g.b, 3.0 * -0.5, **_tol(dtype))  # a * sum(w)
    assert grad(replaced, 1)(p, dtype(3.0)) == pytest.approx(-0.5 * 0.25, rel=1e-5)
    assert grad(replaced_inside)(1.5) == pytest.approx(9 * 1.5**2 + 1)
    assert grad(grad(replaced_inside))(1.5) == pytest.approx(18 * 1.5)
    rng = np.random.default_rng(1)
    m = Model(
        Layer(rng.normal(size=(2, 2)).astype(dtype), rng.normal(size=2).astype(dtype), dtype(2.0)),
        [rng.normal(size=2).astype(dtype)],
        {"u": rng.normal(size=(2, 2)).astype(dtype)},
    )
    g = grad(as_tuple_and_dict)(m, dtype(0.5))
    np.testing.assert_allclose(g.layer.W, 2.0 + 2 * m.layer.W * m.table["u"] * 0.5, **_tol(dtype))
    np.testing.assert_allclose(g.layer.bias, m.extra[0], **_tol(dtype))
    np.testing.assert_allclose(g.layer.scale, np.sum(m.layer.W), **_tol(dtype))
    np.testing.assert_allclose(g.table["u"], m.layer.W**2 * 0.5, **_tol(dtype))
    gx = grad(as_tuple_and_dict, 1)(m, dtype(0.5))
    np.testing.assert_allclose(gx, np.sum(m.layer.W**2 * m.table["u"]), **_tol(dtype))


def broadcast(p, X):
    return np.sum(np.sin(X * p.w + p.b))  # w of shape (3,) and b scalar broadcast on X


@pytest.mark.parametrize("dtype", DTYPES)
def test_broadcast_fields_sum_back_to_their_shapes(dtype):
    rng = np.random.default_rng(2)
    p = Params(rng.normal(size=3).astype(dtype), dtype(0.3))
    X = rng.normal(size=(4, 3)).astype(dtype)
    g = grad(broadcast)(p, X)
    c = np.cos(X * p.w + p.b)
    np.testing.assert_allclose(g.w, np.sum(c * X, axis=0), **_tol(dtype))
    np.testing.assert_allclose(g.b, np.sum(c), **_tol(dtype))
    assert g.w.shape == (3,) and g.w.dtype == dtype


def zero_field(p):
    return 2.0 * p.b


def test_fields_that_get_no_cotangent_get_zeros():
    g = grad(zero_field)(Params(np.ones(3), 1.0))
    np.testing.assert_array_equal(g.w, np.zeros(3))
    assert g.b == 2.0


def rewritten(p, a):
    p.w = a  # not read back through p: exact
    return p.w * p.b


def rewritten_and_read(p, a):
    p.w = a * p.w
    return p.w * p.b


def test_a_field_written_is_exact_or_refused():
    assert grad(rewritten, 1)(Params(1.5, 2.0), 3.0) == pytest.approx(2.0)
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(rewritten_and_read, 1)(Params(1.5, 2.0), 3.0)
    assert "PB107 attribute assignment: 'p.w' would store a differentiated value" in str(info.value)


def quadratic(p):
    return np.sum(p.w**2) * p.b


@pytest.mark.parametrize("dtype", DTYPES)
def test_hessian_vector_products_take_and_give_the_same_dataclass(dtype):
    p = Params(np.array([1.0, -2.0], dtype=dtype), dtype(2.0), "q", 4)
    v = Params(np.array([0.5, 1.0], dtype=dtype), dtype(-1.0), "direction", 0)
    hv = hvp(quadratic)(p, v)
    assert type(hv) is Params and hv.name is None and hv.w.dtype == dtype
    # hand-derived: H v = (2 b v_w + 2 w v_b, 2 w . v_w)
    np.testing.assert_allclose(hv.w, 2 * p.b * v.w + 2 * p.w * v.b, **_tol(dtype))
    np.testing.assert_allclose(hv.b, 2 * np.dot(p.w, v.w), **_tol(dtype))


def test_hessian_of_a_dataclass_argument_is_refused_with_a_fix():
    with pytest.raises(ArgumentError) as info:
        hessian(zero_field)(Params(np.ones(2), 1.0))
    assert str(info.value) == (
        "jacobian with respect to 'p', a Params, is not supported.\n"
        "Fix: pass its arrays as separate arguments, or use pullback.vjp."
    )


@dataclasses.dataclass
class Net:
    layers: list
    steps: int = 2
    K: typing.ClassVar[float] = 3.0


@dataclasses.dataclass(frozen=True)
class ScaledLayer(Layer):
    s: float = 2.0

    def apply(self, x):
        return self.s * np.tanh(x @ self.W + self.bias)


def net_loss(net, x):
    for layer in net.layers:
        x = layer.apply(x)
    for _ in range(net.steps):
        x = x * 1.5
    return np.sum(x**2) * Net.K


def net_built_in_a_loop(theta):
    layers = []
    for k in range(2):
        layers.append(Layer(np.outer(theta, theta) * (k + 1), theta))
    return net_loss(Net(layers), theta)


def class_constant(net):
    return np.sum(net.layers[0].W) * net.K


def test_lists_of_dataclasses_subclasses_and_loops():
    rng = np.random.default_rng(3)
    W1, b1, W2, b2 = (rng.normal(size=s) for s in [(2, 2), 2, (2, 2), 2])
    x = rng.normal(size=2)
    net = Net([Layer(W1, b1), ScaledLayer(W2, b2, s=0.7)])
    g = grad(net_loss)(net, x)
    assert type(g) is Net and type(g.layers[1]) is ScaledLayer and g.steps is None
    assert g.layers[1].scale == 0.0  # a float field the function does not read

    def flat(theta):
        layers = [Layer(theta[:4].reshape(2, 2), theta[4:6])]
        layers.append(ScaledLayer(theta[6:10].reshape(2, 2), theta[10:12], s=theta[12]))
        return net_loss(Net(layers), x)

    theta = np.concatenate([W1.ravel(), b1, W2.ravel(), b2, [0.7]])
    got = np.concatenate(
        [g.layers[0].W.ravel(), g.layers[0].bias, g.layers[1].W.ravel(), g.layers[1].bias]
        + [[g.layers[1].s]]
    )
    np.testing.assert_allclose(got, _fd(flat, theta), rtol=1e-6, atol=1e-8)
    assert check_grads(net_built_in_a_loop, x, order=2) == "reverse over reverse"
    check_grad(net_built_in_a_loop, x)


def test_a_class_attribute_read_through_a_differentiated_instance_is_a_constant():
    """``net.K``, a ``ClassVar`` read through the instance: a constant of the class that
    just runs (it was refused, PB501); the fields' gradient against differences."""
    W = np.array([[0.3, -0.2], [0.5, 1.1]])
    g = grad(class_constant)(Net([Layer(W, np.ones(2))]))

    def flat(w):
        return class_constant(Net([Layer(w.reshape(2, 2), np.ones(2))]))

    np.testing.assert_allclose(g.layers[0].W.ravel(), _fd(flat, W.ravel()), rtol=1e-6)


def replaced_through_a_mapping(p, a):
    changes = {"b": a}
    q = dataclasses.replace(p, **changes)
    return q.w * q.b


def test_replace_through_a_mapping_is_exact_or_refused():
    p = Params(3.0, 5.0)
    g = grad(replaced_through_a_mapping)(p, 4.0)
    assert (g.w, g.b) == (4.0, 0.0)
    with pytest.raises(NotDifferentiableError) as info:
        grad(replaced_through_a_mapping, 1)(p, 4.0)
    assert "the keyword argument 'b' of 'replace' carries a gradient" in str(info.value)


@dataclasses.dataclass
class Gapped:
    w: float
    extra: list = dataclasses.field(default_factory=list)
    pair: tuple = (1.0, 2.0)
    scale: float = 1.0


def built_past_defaults(a):
    g = Gapped(a, scale=2.0 * a)  # extra from its factory, pair from its (object) default
    g.extra.append(1.0)  # a fresh list each call, as the constructor makes
    return g.w * g.scale + g.pair[1] * len(g.extra)


def test_a_keyword_after_fields_left_to_their_default_factory():
    # hand-derived: 2 a^2 + 2 -> 4 a
    for _ in range(2):  # the value too: no list shared by calls
        value, g = value_and_grad(built_past_defaults)(1.5)
        assert (value, g) == (pytest.approx(2 * 1.5**2 + 2.0), pytest.approx(6.0))
    assert check_grads(built_past_defaults, 1.5, order=2) == "reverse over reverse"
    _, dy = jvp(built_past_defaults, (1.5,), (1.0,))
    assert dy == pytest.approx(6.0)


def test_check_grads_walks_the_fields_of_dataclass_arguments():
    # pullback.testing moves every float field of a dataclass argument (not the instance
    # as one opaque leaf, which would compare nothing)
    from pullback.testing.numeric import direction, pair

    p = Params(np.array([0.5, -1.0]), 0.25, "lin", 2)
    d = direction(p, np.random.default_rng(0))
    assert type(d) is Params and d.w.shape == (2,) and pair(d, d) > 0
    X = np.array([[1.0, 2.0], [0.5, -0.5], [3.0, 1.0]])
    assert check_grads(loss, p, X) == "reverse"
    m = Model(Layer(np.ones((3, 2)), np.ones(2), 0.5), [np.ones(2)], {"u": np.ones((3, 2))})
    assert check_grads(model_loss, m, np.ones(3), order=2) == "reverse over reverse"


def test_jvp_through_methods_with_a_dataclass_tangent():
    rng = np.random.default_rng(4)

    def model():
        layer = Layer(rng.normal(size=(3, 2)), rng.normal(size=2), rng.normal())
        return Model(layer, [rng.normal(size=2)], {"u": rng.normal(size=(3, 2))})

    m, dm, x = model(), model(), rng.normal(size=3)
    _, dy = jvp(model_loss, (m, x), (dm, None))
    g = grad(model_loss)(m, x)
    want = (
        np.sum(g.layer.W * dm.layer.W)
        + np.sum(g.layer.bias * dm.layer.bias)
        + g.layer.scale * dm.layer.scale
        + np.sum(g.extra[0] * dm.extra[0])
        + np.sum(g.table["u"] * dm.table["u"])
    )
    assert dy == pytest.approx(want, rel=1e-10)


Wide = dataclasses.make_dataclass(
    "Wide", [(f"f{k}", np.ndarray) for k in range(12)] + [("tag", str, "w")]
)


def few_fields_of_a_wide_record(x):
    # a record of 12 fields of which a loop reads three, some twice a step: each read's
    # cotangent holds one field's (records.field_pullback), added into the record's
    r = Wide(*[x * (k + 1.0) for k in range(12)])
    acc = 0.0 * x
    for _ in range(3):
        acc = acc + 0.1 * np.sin(r.f3 * acc + r.f0) * r.f11 + 0.1 * r.f3
    return np.sum(acc**2)


def wide_record_argument(r, x):
    return np.sum(r.f1 * x + np.tanh(r.f7) * r.f1) + np.sum(r.f10**2)


@pytest.mark.parametrize("dtype", DTYPES)
def test_reads_of_a_few_fields_of_a_wide_record(dtype):
    x = np.array([0.3, -0.2, 0.5], dtype=dtype)
    check_grad(few_fields_of_a_wide_record, x)
    r = Wide(*[np.linspace(-0.5, 0.5, 3).astype(dtype) * (k + 1) for k in range(12)])
    check_grad(wide_record_argument, r, x, wrt=1)
    g = grad(wide_record_argument)(r, x)  # by hand: the record's gradient is a Wide
    assert isinstance(g, Wide) and g.tag is None
    tol = 1e-6 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(g.f1, x + np.tanh(r.f7), rtol=tol)
    np.testing.assert_allclose(g.f7, (1 - np.tanh(r.f7) ** 2) * r.f1, rtol=tol)
    np.testing.assert_allclose(g.f10, 2 * r.f10, rtol=tol)
    assert all(not np.any(getattr(g, f"f{k}")) for k in (0, 2, 3, 4, 5, 6, 8, 9, 11))


def test_reads_of_a_wide_record_to_second_order():
    x = np.array([0.3, -0.2, 0.5])
    assert check_grads(few_fields_of_a_wide_record, x, order=2) == "reverse over reverse"
