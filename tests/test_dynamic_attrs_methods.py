"""Attributes of differentiated records read when the function runs (dynamic_attrs.py):
``getattr(params, name)`` with ``name`` a variable (a dataclass, a named tuple, a plain
object built inside), ``getattr(np, fname)(x)``, and a record's bound method held in a
variable (``f = self.layer1``, ``step = model.layer2``, ``ops = [self.a, self.b]``), whose
cotangent is the record's. Gradients against central finite differences in float64 and
float32, Hessians against differences of the gradient, jvp against the gradient."""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass

import numpy as np
import pytest
from fd import check_grad, numerical_grad

from pullback import grad, hessian, jvp
from pullback.errors import PullbackError

X = np.array([0.3, 0.7])


@dataclass
class Model:
    a: np.ndarray
    b: np.ndarray

    def layer1(self, x):
        return np.tanh(self.a * x)

    def layer2(self, x):
        return self.b * x**2

    def run(self, x):
        f = self.layer1
        y = f(x)
        return np.sum(y)

    def run2(self, x):
        ops = [self.layer1, self.layer2]
        for op in ops:
            x = op(x)
        return np.sum(x)


class Pair(typing.NamedTuple):
    w1: np.ndarray
    w2: np.ndarray

    def scaled(self, x):
        return self.w1 * x + self.w2


@dataclass
class Weights:
    w1: np.ndarray
    w2: np.ndarray


class Plain:
    def __init__(self, a):
        self.a = a

    def predict(self, x):
        return np.sin(self.a * x)


def squares_by_name(params):
    total = 0.0
    for name in ("w1", "w2"):
        total += np.sum(getattr(params, name) ** 2)
    return total


def numpy_function_by_name(x):
    total = 0.0
    for fname in ("sin", "cos", "tanh"):
        total += np.sum(getattr(np, fname)(x) * x)
    return total


def model_methods(m, x):
    return m.run(x) + m.run2(x)


def method_in_a_variable(m, x):
    step = m.layer2
    return np.sum(step(x) * m.a)


def built_inside(x):
    m = Model(x, x * x)
    step = m.layer2
    return m.run2(x) + m.run(x) + np.sum(step(x) * m.a)


def fields_by_name(x):
    m = Model(x, 3.0 * x)
    total = 0.0
    for name in ("a", "b"):
        total = total + np.sum(np.sin(getattr(m, name)) ** 2)
    return total


def method_by_name(x):
    p = Plain(x)
    q = Pair(x, x * x)
    total = 0.0
    for name in ("predict",):
        total = total + np.sum(getattr(p, name)(x))
    for op in [q.scaled, q.scaled]:
        total = total + np.sum(np.sin(op(x)))
    return total


def default_when_missing(x):
    p = Pair(x, x * x)
    return np.sum(getattr(p, "w3" if x[0] > 10.0 else "w2", x) * getattr(p, "w9"[:2], x))


def record_differences(f, record, *rest):
    """Central differences of ``f(record, *rest)`` in each field of ``record`` (a
    dataclass instance or a named tuple), computed in float64, as a dict by field."""
    if dataclasses.is_dataclass(record):
        names = [f.name for f in dataclasses.fields(record)]
    else:
        names = record._fields
    up = {n: np.asarray(getattr(record, n), np.float64) for n in names}

    def value(n, v):
        made = {**up, n: v}
        other = type(record)(**made)
        return float(f(other, *rest))

    return {n: numerical_grad(lambda v, n=n: value(n, v), (up[n],), 0) for n in names}


def assert_record_gradient(got, record, want, dtype):
    assert type(got) is type(record)
    tol = 2e-3 if dtype == np.float32 else 1e-6
    for n, w in want.items():
        g = getattr(got, n)
        assert g.dtype == dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol * 0.1, err_msg=n)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("make", [Weights, Pair], ids=["dataclass", "namedtuple"])
def test_getattr_of_a_record_by_a_name_known_when_it_runs(make, dtype):
    params = make(X.astype(dtype), np.array([-1.5, 0.5], dtype=dtype))
    got = grad(squares_by_name)(params)
    assert_record_gradient(got, params, record_differences(squares_by_name, params), dtype)
    np.testing.assert_allclose(got.w1, 2 * X, rtol=2e-6)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(
    "f",
    [numpy_function_by_name, built_inside, fields_by_name, method_by_name, default_when_missing],
    ids=lambda f: f.__name__,
)
def test_gradient(f, dtype):
    check_grad(f, X.astype(dtype))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("f", [model_methods, method_in_a_variable], ids=lambda f: f.__name__)
def test_bound_methods_of_a_record_argument(f, dtype):
    m = Model(np.array([1.5, 0.5], dtype=dtype), np.array([2.0, -3.0], dtype=dtype))
    x = X.astype(dtype)
    got, gx = grad(f, wrt=(0, 1))(m, x)
    assert_record_gradient(got, m, record_differences(f, m, x), dtype)
    assert np.any(got.b != 0.0)
    check_grad(lambda x, m: f(m, x), x, m)


@pytest.mark.parametrize(
    "f",
    [numpy_function_by_name, built_inside, fields_by_name, method_by_name, default_when_missing],
    ids=lambda f: f.__name__,
)
def test_hessian_and_jvp(f):
    g = grad(f)
    want = np.array([numerical_grad(lambda z, i=i: g(z)[i], (X,), 0, eps=1e-5) for i in range(2)])
    assert np.any(want != 0.0)
    np.testing.assert_allclose(hessian(f)(X), want, rtol=1e-5, atol=1e-6)
    v = np.array([1.0, -0.5])
    np.testing.assert_allclose(jvp(f, (X,), (v,))[1], np.dot(g(X), v), rtol=1e-10)


def attribute_of_an_array_by_name(x):
    name = "T" if x.size > 0 else "real"
    return np.sum(getattr(x, name) ** 2)


def test_getattr_of_a_differentiated_array_is_refused_not_zero():
    # x.T read by a name known when it runs: its gradient would be lost, so a refusal
    # naming the line, in reverse and forward mode
    line = attribute_of_an_array_by_name.__code__.co_firstlineno + 2
    with pytest.raises(PullbackError, match="PB501 getattr of a differentiated ndarray") as info:
        grad(attribute_of_an_array_by_name)(X)
    assert f"{__file__}:{line}" in str(info.value)
    with pytest.raises(PullbackError, match="write the attribute in the code"):
        jvp(attribute_of_an_array_by_name, (X,), (X,))


@dataclass
class WithProperty:
    a: np.ndarray

    @property
    def doubled(self):
        return 2.0 * self.a


def property_read(p):
    return np.sum(p.doubled)


def test_a_property_of_a_record_parameter_runs_its_getter():
    """``p.doubled`` of a dataclass argument (its class known only when it runs): the
    getter, differentiated with ``p`` carrying the gradient (it was refused, PB501)."""
    got = grad(property_read)(WithProperty(X))
    assert isinstance(got, WithProperty)
    want = numerical_grad(lambda a: property_read(WithProperty(a)), [X], 0)
    np.testing.assert_allclose(got.a, want, rtol=1e-6, atol=1e-8)
    v = np.array([1.0, -2.0])
    assert jvp(property_read, (WithProperty(X),), (WithProperty(v),))[1] == pytest.approx(
        want @ v, rel=1e-6
    )
