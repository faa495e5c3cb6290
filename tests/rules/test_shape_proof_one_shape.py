"""Shape keys through ufunc calls and for parameters a caller made of one shape
(pullback.transform.shape_proof, kinds.ONE_SHAPE): one key must still mean one shape. The
node pass of quad's rule (rules/_quad_nodes.py) is such a caller: its integrand's adjoint
has no ``unbroadcast`` left, and its gradients still agree with central differences."""

from __future__ import annotations

import gast
import numpy as np
import pytest
from fd import numerical_grad
from rule_inputs import FLOATS

import pullback
from pullback.resolve import Callee
from pullback.transform.kinds import ONE_SHAPE
from pullback.transform.shape_proof import shape_keys

si = pytest.importorskip("scipy.integrate")

from test_quad_nodes import spy  # noqa: E402 - (node pass sizes, per-node integrals)

from pullback.rules import _quad_nodes  # noqa: E402
from pullback.rules._user_vjp import user_vjp_of  # noqa: E402

KINDS = {"g": ("array", 2), "h": ("array", 2), "s": "scalar", "x": ("array", 1)}
CALLS = {"sin": np.sin, "hypot": np.hypot, "matmul": np.matmul, "sum": np.sum, "add": np.add}


def keys_of(body, kinds=KINDS, params="g, h, s, x"):
    source = f"def f({params}):\n" + "".join(f"    {line}\n" for line in body)
    tree = gast.parse(source)
    for node in gast.walk(tree):  # (what resolve attaches to each call)
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Name):
            node.pb_callee = Callee("object", CALLS[node.func.id])
    return shape_keys(tree, kinds)


def same(body, a="a", b="b", **options):
    keys = keys_of(body, **options)
    return keys.get(a) is not None and keys.get(a) == keys.get(b)


@pytest.mark.parametrize(
    "body",
    [
        ["c = g[1:]", "a = sin(c)", "b = g[:-1]"],
        ["c = g[1:]", "d = g[:-1]", "a = hypot(c, d)", "b = d * 2.0"],
        ["c = g[1:]", "a = hypot(c, s)", "b = sin(a)"],  # a scalar broadcasts
        ["c = g[1:]", "d = g[:-1]", "a = add(c, 2.0)", "b = d * s"],
    ],
)
def test_ufunc_results_keep_the_key(body):
    assert same(body)


@pytest.mark.parametrize(
    "body",
    [
        ["c = g[1:]", "d = h[1:]", "a = hypot(c, d)", "b = c"],  # two arrays
        ["c = g[0]", "a = matmul(c, c)", "b = c"],  # a core signature
        ["c = g[0]", "a = sum(c)", "b = c"],  # not a ufunc
        ["c = g[0]", "a = sin(c, out=c)", "b = c"],  # a keyword
        ["c = g[0]", "a = sin(s)", "b = c"],  # a scalar's ufunc
        ["a = sin(x)", "b = x"],  # x has no key of its own
    ],
)
def test_ufunc_results_not_proved(body):
    assert not same(body)


ONE = {**KINDS, "p": ("array", 2), "q": ("array", 3), "c": ("array", 1)}


def one_shape(*entries):
    return {**ONE, ONE_SHAPE: frozenset(entries)}


@pytest.mark.parametrize(
    "body, a, b",
    [
        (["a = c * x", "b = sin(a)"], "a", "b"),
        (["a = p[0]"], "a", "x"),
        (["a = p[-1]", "e = q[1, 0]", "b = e * a"], "a", "b"),
        (["u = -c", "a = u * x", "b = p[1]"], "a", "b"),
    ],
)
def test_parameters_of_one_shape(body, a, b):
    kinds = one_shape(("x", 0), ("c", 0), ("p", 1), ("q", 2))
    assert same(body, a, b, kinds=kinds, params="x, c, p, q")


@pytest.mark.parametrize(
    "body, kinds",
    [
        (["a = c * 1.0"], one_shape(("x", 0))),  # c not declared
        (["a = p[0, 1]"], one_shape(("x", 0), ("p", 1))),  # too many indices
        (["a = p[0:1]"], one_shape(("x", 0), ("p", 1))),  # a slice keeps its axis
        (["a = q[0]"], one_shape(("x", 0), ("q", 2))),  # too few
        (["x = c * 2.0", "a = c * 1.0"], one_shape(("x", 0), ("c", 0))),  # x rebound
        (["a = s * 1.0"], one_shape(("x", 0), ("s", 0))),  # s a scalar
        (["a = c * 1.0"], {**ONE, "c": None, ONE_SHAPE: frozenset({("x", 0), ("c", 0)})}),
    ],
)
def test_parameters_of_one_shape_not_proved(body, kinds):
    assert not same(body, "a", "x", kinds=kinds, params="x, c, p, q, s")


def test_ufunc_keys_agree_with_numpy():
    parts = ["1:", ":-1", "1:-1", "0", "1"]
    body = [f"r{k} = g[{p}]" for k, p in enumerate(parts)]
    body += [f"u{k} = sin(r{k})" for k in range(len(parts))]
    body += [f"v{k} = hypot(r{k}, u{j})" for k in range(len(parts)) for j in range(len(parts))]
    keys = keys_of(body)
    rng = np.random.default_rng(0)
    for _ in range(10):
        g = np.ones(tuple(rng.integers(2, 5, 2)))
        shapes = {}
        for line in body:
            name, expr = line.split(" = ")
            names = {"g": g, "sin": np.sin, "hypot": np.hypot, **shapes}
            try:
                shapes[name] = eval(expr, names)  # noqa: S307 - the test's own text
            except ValueError:  # operands that do not broadcast: no key may claim one shape
                assert keys.get(name) is None, name
        for a in shapes:
            for b in shapes:
                if keys.get(a) is not None and keys.get(a) == keys.get(b):
                    assert shapes[a].shape == shapes[b].shape, (a, b)


# -- quad's node pass ----------------------------------------------------------------------
def gauss_cos(x, c, k):
    return np.exp(-c * x * x) * np.cos(k * x)


def unread(x, c, k):
    return np.sin(c * x) + 0.5 * x


def two_inputs(x, c, k):
    return np.hypot(c, x) * np.arctan2(k, 1.0 + x)


def node_adjoint_source(fn):
    vjp = user_vjp_of(fn, (1, 2))
    (adj,) = [a for key, a in vjp._keyed.items() if key[2][0] == _quad_nodes._NODES]
    return adj.source


@pytest.mark.parametrize("fn", [gauss_cos, unread, two_inputs])
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
def test_node_pass_without_unbroadcast(monkeypatch, fn, dtype):
    calls, general = spy(monkeypatch)  # (a parameter not read: its rows are zeros)

    def loss(c, k):
        return si.quad(fn, 0.0, 2.5, args=(c, k))[0]

    c, k = dtype(0.7), dtype(1.3)
    got = pullback.grad(loss, wrt=(0, 1))(c, k)
    want = [numerical_grad(loss, (0.7, 1.3), j) for j in (0, 1)]
    np.testing.assert_allclose(np.array(got, dtype=float), want, rtol=1e-6, atol=1e-8)
    assert "unbroadcast" not in node_adjoint_source(fn)
    assert calls and not general


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
def test_broadcast_arguments_keep_unbroadcast(dtype):
    # the same integrand called by the user on arrays that broadcast: no one-shape claim
    x = np.linspace(0.1, 2.0, 5)  # (float64: a float32 x would make the differences float32)

    def total(c, k):
        return np.sum(gauss_cos(x, c, k))

    c, k = np.array([0.7], dtype=dtype), dtype(1.3)
    dc, dk = pullback.grad(total, wrt=(0, 1))(c, k)
    assert dc.shape == (1,)
    tol = 1e-7 if dtype is np.float64 else 2e-3
    np.testing.assert_allclose(dc, numerical_grad(total, (c, k), 0), rtol=tol, atol=tol)
    np.testing.assert_allclose(dk, numerical_grad(total, (c, k), 1), rtol=tol, atol=tol)
