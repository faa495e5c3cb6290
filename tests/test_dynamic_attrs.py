"""Values found only when the function runs (dynamic_calls.py), differentiated where a
gradient flows through them: ``d.get(key, default)`` on a dict whose type the transform
did not know, to second order (its rule's pullback function gives the dict's cotangent
first). Checked against central finite differences of the function (gradients, float64
and float32) and of the gradient (Hessians), and against the gradient (jvp)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from fd import check_grad, numerical_grad

from pullback import grad, hessian, jvp

X = np.array([0.5, 1.2, 0.3])


def hessian_by_differences(f, x, *rest):
    """Central differences (tests/fd.py) of each entry of pullback's gradient."""
    g = grad(f)
    rows = [numerical_grad(lambda z, i=i: g(z, *rest)[i], (x,), 0, eps=1e-5) for i in range(x.size)]
    return np.array(rows)


def entry_cubed(x):
    d = {f"w{i}": v for i, v in enumerate(x)}
    return d.get("w1", 0.0) ** 3


def missing_key_default(x):
    d = {f"w{i}": v for i, v in enumerate(x)}
    return d.get("zz", x[0] * x[2]) ** 2 + d.get("w0") * d.get("w2", 1.0)


def in_a_loop(x):
    d = {f"w{i}": x[i] * x[i] for i in range(3)}
    s = 0.0
    for k in ("w0", "w1", "w9"):
        s = s + np.sin(d.get(k, x[1])) * d.get("w2")
    return s


def array_entries(x):
    d = {"a": x, "b": 2.0 * x}
    return np.sum(d.get("a") * d.get("b") ** 2)


def _helper(x, d):
    return np.sum(np.tanh(d.get("a") * x) * d.get("b", x))


def through_a_helper(x):
    return _helper(x, {"a": x * 2.0})


DICT_GET = [entry_cubed, missing_key_default, in_a_loop, array_entries, through_a_helper]


@pytest.mark.parametrize("f", DICT_GET, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_dict_get_gradient(f, dtype):
    check_grad(f, X.astype(dtype))


@pytest.mark.parametrize("f", DICT_GET, ids=lambda f: f.__name__)
def test_dict_get_hessian(f):
    want = hessian_by_differences(f, X)
    assert np.any(want != 0.0)
    np.testing.assert_allclose(hessian(f)(X), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("f", DICT_GET, ids=lambda f: f.__name__)
def test_dict_get_jvp(f):
    v = np.array([1.0, 0.5, -2.0])
    _, t = jvp(f, (X,), (v,))
    np.testing.assert_allclose(t, np.dot(grad(f)(X), v), rtol=1e-10)


# -- third derivatives through a bound method: its record is reached (it was silently lost)
@dataclass
class _Cubic:
    w: float
    b: float

    def apply(self, z):
        return np.sin(self.w * z) * self.b + self.w * z**3


@dataclass
class _Holder:
    act: object
    scale: float


def _held_method_cubic(x):
    m = _Cubic(x * 2.0, x + 1.0)
    h = m.apply
    return h(x)


def _method_by_name_cubic(x):
    m = _Cubic(x * 2.0, x + 1.0)
    return getattr(m, "ap" + "ply")(x)


def _method_in_a_field_cubic(x):
    outer = _Holder(_Cubic(x * 2.0, x + 1.0).apply, x)
    return outer.act(x) * outer.scale


def _direct_method_cubic(x):
    m = _Cubic(x * 2.0, x + 1.0)
    return m.apply(x)


def _cubic_by_hand(x):
    w, b = x * 2.0, x + 1.0
    return np.sin(w * x) * b + w * x**3


@pytest.mark.parametrize(
    "f, scaled",
    [
        (_direct_method_cubic, False),
        (_held_method_cubic, False),
        (_method_by_name_cubic, False),
        (_method_in_a_field_cubic, True),
    ],
    ids=lambda v: getattr(v, "__name__", str(v)),
)
def test_third_derivative_through_a_bound_method(f, scaled):
    ref = (lambda x: _cubic_by_hand(x) * x) if scaled else _cubic_by_hand
    for x in (0.7, -0.4):
        assert grad(grad(f))(x) == pytest.approx(grad(grad(ref))(x), rel=1e-12)
        assert grad(grad(grad(f)))(x) == pytest.approx(grad(grad(grad(ref)))(x), rel=1e-10)
