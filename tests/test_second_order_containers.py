"""Second derivatives through code that builds lists and dicts: comprehensions, generator
expressions, ``map``/``filter``, appends in loops, dict comprehensions, loops over arrays.

The gradient of such code calls the cotangent helpers ``append_cotangent`` and
``dict_set_cotangent`` (rules in pullback/rules/container_cotangents.py) and the building
helpers ``list_append``/``dict_set`` (the normalizer's own calls at every order).
Hessians (reverse over reverse, batched), ``grad`` of a gradient's element, Hessian-vector
products and ``jvp`` of the gradient (forward over reverse) are compared with central
differences of pullback's own gradient; the rules' own tangents (forward mode through the
helpers) with the helpers' linearity."""

from __future__ import annotations

import numpy as np
import pytest
from fd import numerical_grad

import pullback
from pullback.containers import append_cotangent, dict_set_cotangent
from pullback.rule_tangents import rule_tangent
from pullback.tangents import ZERO
from pullback.testing import check_rrule


def comprehension(x):
    return sum([v * v * x[0] for v in x])


def generator_of_rules(x):
    return sum(np.sin(v) * v for v in x)


def mapped(x):
    return sum(map(lambda t: t**3, x)) + sum(filter(lambda t: t > 0, x * x))


def nested(x):
    rows = [[a * b for b in x] for a in x]
    return np.sum(np.array(rows) ** 2) * 0.1


def appended(x):
    out = []
    for k in range(len(x)):
        out.append(np.tanh(x[k]) * x[k - 1])
    return np.sum(np.stack(out) ** 2)


def dict_built(x):
    d = {k: x[k] ** 2 for k in range(len(x))}
    e = {name: np.sum(v * x) for name, v in (("a", x), ("b", x * x))}
    return d[0] * e["b"] + d[len(x) - 1] * e["a"]


def loop_over_array(x):
    total = 0.0
    for v in x:
        total = total + np.exp(0.3 * v) * v
    return total


CASES = [
    comprehension,
    generator_of_rules,
    mapped,
    nested,
    appended,
    dict_built,
    loop_over_array,
]
X = np.array([0.7, -0.4, 1.3, 0.2])


def _hessian_by_differences(f, x):
    g = pullback.grad(f)
    return np.stack([numerical_grad(lambda v: g(v)[k], (x,), 0) for k in range(x.size)])


@pytest.mark.parametrize("f", CASES)
def test_hessian_against_differences_of_the_gradient(f):
    want = _hessian_by_differences(f, X)
    np.testing.assert_allclose(pullback.hessian(f)(X), want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(
        pullback.grad(lambda v: pullback.grad(f)(v)[1])(X), want[1], rtol=1e-6, atol=1e-7
    )


@pytest.mark.parametrize("f", CASES)
def test_hessian_vector_products(f):
    v = np.array([1.0, -0.5, 0.25, 2.0])
    want = _hessian_by_differences(f, X) @ v
    np.testing.assert_allclose(pullback.hvp(f)(X, v), want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("f", CASES)
def test_jvp_of_the_gradient(f):
    # forward over reverse: jvp(grad(f)) transforms the generated gradient in forward mode
    t = np.array([1.0, -0.5, 0.25, 2.0])
    g, hv = pullback.jvp(pullback.grad(f), (X,), (t,))
    np.testing.assert_allclose(g, pullback.grad(f)(X), rtol=1e-12)
    np.testing.assert_allclose(hv, _hessian_by_differences(f, X) @ t, rtol=1e-6, atol=1e-7)


def test_float32_hessian():
    x = X.astype(np.float32)
    h = pullback.hessian(comprehension)(x)
    assert h.dtype == np.float32
    np.testing.assert_allclose(h, _hessian_by_differences(comprehension, X), rtol=2e-3, atol=2e-3)


def test_the_cotangent_helpers_against_finite_differences():
    check_rrule(append_cotangent, [0.3, -1.1, 0.7])
    check_rrule(append_cotangent, [np.array([0.5, 2.0]), np.array([1.5, -1.0])])
    check_rrule(dict_set_cotangent, {"a": 0.3, "b": np.array([1.0, 2.0])}, "b")
    check_rrule(dict_set_cotangent, {"a": 0.3}, "missing")


def test_append_cotangent_pullback_function_refuses_a_list_popped_in_place():
    # The pullback function agrees with the rule on a list the call left as it was (the
    # second-order cases, so_runtime_calls.py); a list cotangent the reverse sweep made
    # and append_cotangent popped in place has lost the length the call saw: refused,
    # where the rule's closure (which the sweeps keep) measured it before the pop.
    from pullback.containers import append_cotangent_pullback
    from pullback.errors import HigherOrderError

    rule = pullback.default_registry().lookup(append_cotangent)
    assert rule.pullback_fn is append_cotangent_pullback
    rest, last = append_cotangent([0.3, -1.1, 0.7])  # rest: the sweep's own list
    _, closure = rule.rrule(rest)  # pops rest in place, as the sweeps do
    assert closure(([1.0], 2.0)) == ([1.0, 2.0],)
    assert closure((ZERO, 2.0)) == ([ZERO, 2.0],)
    with pytest.raises(HigherOrderError, match="popped"):
        append_cotangent_pullback((ZERO, 2.0), rest)
    assert append_cotangent_pullback((ZERO, 2.0), [0.3, -1.1]) == ([ZERO, 2.0],)


@pytest.mark.parametrize(
    "helper, args",
    [
        (append_cotangent, ([0.3, -1.1, 0.7],)),
        (append_cotangent, ([np.array([0.5, 2.0]), np.array([1.5, -1.0])],)),
        (dict_set_cotangent, ({"a": 0.3, "b": np.array([1.0, 2.0])}, "b")),
    ],
)
def test_the_tangents_the_rules_give(helper, args):
    # Forward mode through these helpers uses the rule's own tangent: the helper is linear
    # in its first argument, so its tangent along t is the helper applied to t, and the
    # tangent t itself is left as it was.
    rule = pullback.default_registry().lookup(helper)
    t = _scaled(args[0], 0.5)
    kept = _leaves(t)
    _, got = rule_tangent(rule, args, (t,) + (ZERO,) * (len(args) - 1), {})
    want = helper(_scaled(args[0], 0.5), *args[1:])
    for g, w in zip(_leaves(got), _leaves(want), strict=True):
        np.testing.assert_array_equal(g, w)
    for before, after in zip(kept, _leaves(t), strict=True):
        np.testing.assert_array_equal(before, after)


def _scaled(g, s):
    if isinstance(g, dict):
        return {k: v * s for k, v in g.items()}
    return [v * s for v in g]


def _leaves(v):
    if isinstance(v, dict):
        return [x for k in sorted(v) for x in _leaves(v[k])]
    if isinstance(v, (list, tuple)):
        return [x for item in v for x in _leaves(item)]
    return [v]


def _dict_of_parameters(m, b):
    params = {"a": m, "b": b}
    return np.sum(params["a"] ** 2 * b) + params["b"] ** 3


def test_hessian_through_a_dict_of_an_array_and_a_float():
    # Reading one entry's cotangent from a dict cotangent that holds only the other entry
    # raised KeyError inside the second sweep (tangents.read_cotangent).
    m, b = np.array([0.3, -0.5]), 0.8
    np.testing.assert_allclose(pullback.hessian(_dict_of_parameters, wrt=1)(m, b), 6 * b)
    np.testing.assert_allclose(
        pullback.hessian(_dict_of_parameters, wrt=0)(m, b), 2 * b * np.eye(2), rtol=1e-12
    )
