"""quad's one-pass gradient for array parameters read at constant indices (``p[0]``,
``p[1, -1]``, ``a, b = p``): the proof (rules/_elementwise.py, ``arrays=True``) accepts
them, the pass (rules/_quad_nodes.py) spreads each array to ``p.shape + (nodes,)``, and
every other use of an array (whole, sliced, reduced, indexed by a variable) keeps the
exact per-node path. Checked against central finite differences of the integral and
against the per-node path's result."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest
from fd import numerical_grad
from rule_inputs import FLOATS

si = pytest.importorskip("scipy.integrate")

from test_quad_nodes import spy  # noqa: E402 - (node pass sizes, per-node integrals)

import pullback  # noqa: E402
from pullback.rules import _quad_nodes  # noqa: E402
from pullback.rules._elementwise import elementwise_in_x  # noqa: E402
from pullback.testing import check_rrule  # noqa: E402

D = pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
VALUE_ONLY = (1.3, 0.0)
P = np.array([0.7, 1.3])
M = np.array([[0.7, 1.3, 0.2], [0.4, -0.9, 1.1]])


# -- integrands ------------------------------------------------------------------------------
def indexed(x, p):
    return np.exp(-p[0] * x * x) * np.cos(p[1] * x)


def negative_index(x, p):
    return np.exp(-p[-2] * x) * p[-1]


def matrix_entries(x, m):
    return np.sin(m[0, 1] * x) * m[1, -1] + m[1, 0] * x * x


def unpacked(x, p):
    a, b = p
    return np.exp(-a * x) * np.sin(b * x)


def mixed(x, c, p, k):
    """A float and two arrays, one of them unpacked and indexed."""
    u, v = p
    return c * np.exp(-u * x) + v * np.cos(k[0] * x) * k[1] + p[0] * k[2]


def not_read(x, p, c):
    return np.exp(-c * x) * 2.0


def whole(x, p):
    return np.exp(-x) * np.dot(p, p)


def sliced(x, p):
    return np.exp(-p[0:1] * x)


def reduced(x, p):
    return np.exp(-x) * np.sum(p)


def row_of_matrix(x, m):
    """``m[0]`` is a row, not one element: not proved."""
    return np.exp(-x) * m[0] * 2.0


def chained_index(x, m):
    return np.exp(-x) * m[0][0]


def variable_index(x, p, i):
    return np.exp(-p[i] * x) * p[1 - i]


def index_and_whole(x, p):
    return p[0] * x + p


def rebound(x, p):
    p = p * 2.0
    return np.exp(-p[0] * x)


def bool_index(x, p):
    return np.exp(-p[True] * x)


PROVED = [
    (indexed, (P,)),
    (negative_index, (P,)),
    (matrix_entries, (M,)),
    (unpacked, (P,)),
    (mixed, (0.5, P, np.array([1.0, 2.0, 3.0]))),
    (not_read, (P, 0.6)),
]


# -- the proof -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "fn, args", PROVED + [(lambda x, p: p[0] * x, (np.array([2.0], dtype=np.float32),))]
)
def test_proved_with_arrays(fn, args):
    assert elementwise_in_x(fn, args, arrays=True)
    assert not elementwise_in_x(fn, args)  # (quad's pass alone spreads arrays)


@pytest.mark.parametrize(
    "fn, args",
    [
        (whole, (P,)),
        (sliced, (P,)),
        (reduced, (P,)),
        (row_of_matrix, (M,)),
        (chained_index, (M,)),
        (variable_index, (P, 0)),
        (index_and_whole, (P,)),
        (rebound, (P,)),
        (bool_index, (P,)),
        (indexed, (np.array([0.7]),)),  # p[1] out of range
        (indexed, (M,)),  # p[0] is a row
        (unpacked, (np.array([0.7, 1.3, 2.0]),)),  # the wrong length
        (unpacked, (M[:, :2],)),  # rows, not elements
        (indexed, (np.array([1, 2]),)),  # an integer array
        (indexed, (0.7,)),  # a float indexed
        (not_read, (np.array([1, 2]), 0.6)),  # an integer array, even not read
    ],
)
def test_not_proved_with_arrays(fn, args):
    assert not elementwise_in_x(fn, args, arrays=True)


# -- gradients -------------------------------------------------------------------------------
@D
@pytest.mark.parametrize("fn, args", PROVED, ids=lambda v: getattr(v, "__name__", ""))
def test_node_path_for_arrays(monkeypatch, fn, args, dtype):
    calls, general = spy(monkeypatch)
    args = tuple(np.asarray(a, dtype=dtype) if np.ndim(a) else dtype(a) for a in args)
    check_rrule(si.quad, fn, dtype(0.1), dtype(2.5), args, output_cotangent=VALUE_ONLY)
    check_rrule(si.quad, fn, dtype(2.0), dtype(-0.5), args, output_cotangent=VALUE_ONLY)
    assert calls and not general


def cotangents(fn, a, b, args, **options):
    _, back = pullback.default_registry().lookup(si.quad).rrule(fn, a, b, args, **options)
    return back((1.0, 0.0))


def per_node_cotangents(monkeypatch, fn, a, b, args, **options):
    with monkeypatch.context() as m:
        m.setattr(_quad_nodes, "elementwise_in_x", lambda fn, args, **options: False)
        return cotangents(fn, a, b, args, **options)


@pytest.mark.parametrize(
    "fn, args, limits",
    [
        (indexed, (P,), (0.0, 3.0)),
        (matrix_entries, (M,), (-1.0, 2.0)),
        (mixed, (0.5, P, np.array([1.0, 2.0, 3.0])), (2.0, 0.25)),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_node_path_matches_the_per_node_path(monkeypatch, fn, args, limits):
    calls, general = spy(monkeypatch)
    fast = cotangents(fn, *limits, args)
    assert calls and not general
    exact = per_node_cotangents(monkeypatch, fn, *limits, args)
    assert general
    assert fast[1] == pytest.approx(exact[1], rel=1e-12)  # f(a): the same call
    assert fast[2] == pytest.approx(exact[2], rel=1e-12)
    for mine, theirs in zip(fast[3], exact[3], strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-8, atol=1e-12)


def test_oscillatory_array_parameter_is_bisected(monkeypatch):
    calls, general = spy(monkeypatch)
    args = (np.array([0.035, 26.0]),)
    fast = cotangents(indexed, 0.0, 8.0, args, limit=200)
    assert len(calls) > 1 and not general  # (bisected for the derivative)
    exact = per_node_cotangents(monkeypatch, indexed, 0.0, 8.0, args, limit=200)
    np.testing.assert_allclose(fast[3][0], exact[3][0], rtol=1e-6)
    check_rrule(
        si.quad, indexed, 0.0, 8.0, args, limit=200, output_cotangent=VALUE_ONLY, fd_step=1e-5
    )


@pytest.mark.parametrize(
    "fn, args",
    [
        (variable_index, (P, 0)),
        (whole, (np.array([0.7]),)),
        (reduced, (P,)),
        (chained_index, (np.array([[0.7]]),)),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_rejected_arrays_take_the_exact_per_node_path(monkeypatch, fn, args):
    calls, general = spy(monkeypatch)
    check_rrule(si.quad, fn, 0.0, 2.0, args, output_cotangent=VALUE_ONLY)
    assert general and not calls


# -- closures over arrays (rewritten so the array travels through args) ----------------------
def closure_loss(p, a, b):
    return si.quad(lambda t: np.exp(-p[0] * t * t) * np.cos(p[1] * t), a, b)[0] ** 2


def closure_mixed_loss(p, c, b):
    def integrand(t):
        u, v = p
        return np.exp(-u * t) * np.sin(v * t) * c + p[-1]

    return si.quad(integrand, 0.0, b)[0]


def closure_variable_index_loss(p, i):
    return si.quad(lambda t: np.exp(-p[i] * t) * p[1 - i], 0.0, 2.0)[0]


@pytest.mark.parametrize(
    "loss, args, wrt",
    [
        (closure_loss, (P, 0.2, 2.5), (0, 1, 2)),
        (closure_loss, (P, 2.5, -0.3), (0, 1, 2)),
        (closure_mixed_loss, (P, 0.5, 1.5), (0, 1, 2)),
    ],
    ids=["forward", "reversed", "mixed"],
)
def test_closure_gradient_matches_central_differences(monkeypatch, loss, args, wrt):
    calls, general = spy(monkeypatch)
    g = pullback.grad(loss, wrt=wrt)(*args)
    assert calls and not general
    for k, gk in zip(wrt, g, strict=True):
        np.testing.assert_allclose(gk, numerical_grad(loss, args, k), rtol=1e-6, atol=1e-9)


def test_closure_variable_index_takes_the_per_node_path(monkeypatch):
    calls, general = spy(monkeypatch)
    g = pullback.grad(closure_variable_index_loss)(P, 0)
    assert general and not calls
    np.testing.assert_allclose(
        g, numerical_grad(closure_variable_index_loss, (P, 0), 0), rtol=1e-6, atol=1e-9
    )


def test_hessian_of_a_closure_over_an_array():
    h = pullback.hessian(closure_loss)(P, 0.2, 2.5)
    step = 1e-5
    rows = []
    for j in range(2):
        e = np.zeros(2)
        e[j] = step
        up = pullback.grad(closure_loss)(P + e, 0.2, 2.5)
        down = pullback.grad(closure_loss)(P - e, 0.2, 2.5)
        rows.append((up - down) / (2 * step))
    np.testing.assert_allclose(h, np.array(rows), rtol=1e-5, atol=1e-8)


def first(x, p):
    return np.exp(-p[0] * x)


def scaled(x, c):
    return np.exp(-c * x)


@pytest.mark.parametrize(
    "fn, arg",
    [(first, np.array([0.7])), (scaled, np.array(0.7)), (first, np.array([[0.7]])[0])],
    ids=["one element", "0-d", "a view"],
)
def test_cotangent_keeps_the_shape_of_a_small_array(fn, arg):
    """A float64 array of one element (or none of its axes) keeps its shape in its
    cotangent: ``args`` of Python floats and float64 arrays are taken as they are."""
    check_rrule(si.quad, fn, 0.1, 1.7, (arg,), output_cotangent=VALUE_ONLY)
    _, back = pullback.default_registry().lookup(si.quad).rrule(fn, 0.1, 1.7, (arg,))
    (d,) = back((1.0, 0.0))[3]
    assert type(d) is np.ndarray and d.shape == arg.shape and d.dtype == np.float64


# -- tuples, lists and named tuples of floats in args ----------------------------------------
Pair = namedtuple("Pair", "rate scale")


def by_index(x, p):
    return np.exp(-p[0] * x * x) * np.cos(p[-1] * x)


def by_attribute(x, p):
    return np.exp(-p.rate * x * x) * np.cos(p.scale * x)


def tuple_loss(c, k):
    return si.quad(by_index, 0.0, 2.0, args=((c, k),))[0]


def list_loss(c, k):
    return si.quad(by_index, 2.0, 0.5, args=([c, k],))[0]


def named_loss(c, k):
    return si.quad(by_index, 0.0, 2.0, args=(Pair(c, k),))[0]


def named_attribute_loss(c, k):
    return si.quad(by_attribute, 0.0, 2.0, args=(Pair(c, k),))[0]


@pytest.mark.parametrize(
    "loss, node_path",
    [(tuple_loss, True), (list_loss, True), (named_loss, True), (named_attribute_loss, False)],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_sequence_of_floats_in_args(monkeypatch, loss, node_path):
    """Their floats are parameters (they had no gradient before): read at constant
    indices, the node pass reads the sequence as an array; read by attribute, the
    per-node path."""
    calls, general = spy(monkeypatch)
    g = pullback.grad(loss, wrt=(0, 1))(0.7, 1.3)
    assert bool(calls) is node_path and bool(general) is not node_path
    for k in range(2):
        fd = numerical_grad(loss, (0.7, 1.3), k)
        np.testing.assert_allclose(g[k], fd, rtol=1e-6, atol=1e-9)


def entries_loss(v):
    """A tuple of NumPy floats (entries of an array)."""
    return si.quad(by_index, 0.0, 2.0, args=((v[0], v[1]),))[0]


@D
def test_tuple_of_numpy_floats_in_args(dtype):
    v = np.array([0.7, 1.3], dtype=dtype)
    g = pullback.grad(entries_loss)(v)
    assert g.dtype == dtype
    fd = numerical_grad(entries_loss, (v.astype(np.float64),), 0)
    rtol = 1e-6 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(g, fd, rtol=rtol, atol=1e-7)


def test_named_tuple_cotangent_is_one_like_it():
    _, back = (
        pullback.default_registry().lookup(si.quad).rrule(by_index, 0.0, 2.0, (Pair(0.7, 1.3),))
    )
    (d,) = back((1.0, 0.0))[3]
    assert type(d) is Pair
    assert d.rate == pytest.approx(numerical_grad(tuple_loss, (0.7, 1.3), 0), rel=1e-6)


def decay(t, y, p):
    return -p[0] * y + p[1]


def ode_tuple_loss(c, k):
    """The ODE solvers' rules share quad's ArgsPack: a tuple of floats in their ``args`` is
    a parameter there too (its gradient was zero)."""
    sol = si.solve_ivp(decay, (0.0, 1.0), np.array([1.0]), args=((c, k),), rtol=1e-10, atol=1e-10)
    return sol.y[0, -1]


def test_solve_ivp_tuple_of_floats_in_args():
    g = pullback.grad(ode_tuple_loss, wrt=(0, 1))(0.7, 1.3)
    for k in range(2):
        fd = numerical_grad(ode_tuple_loss, (0.7, 1.3), k)
        np.testing.assert_allclose(g[k], fd, rtol=1e-6, atol=1e-9)


def unpacked_and_indexed(x, p):
    a, b = p
    return np.exp(-a * x) * p[1] * b


def ranks_differ(x, p):
    return p[0] * x + p[0, 0]


@pytest.mark.parametrize(
    "fn, args, proved",
    [
        (negative_index, (np.array([0.7, 1.3, 2.0]),), True),  # p[-2], p[-1] of three
        (negative_index, (np.array([0.7]),), False),  # p[-2] out of range
        (matrix_entries, (np.ones((2, 1)),), False),  # no column 1
        (matrix_entries, (np.ones((2, 2)),), True),
        (matrix_entries, (np.ones((1, 3)),), False),  # no row 1
        (matrix_entries, (np.ones(3),), False),  # another rank
        (unpacked_and_indexed, (P,), True),
        (unpacked_and_indexed, (np.array([0.7, 1.3, 2.0]),), False),  # unpacked to two
        (ranks_differ, (M,), False),
        (ranks_differ, (P,), False),
    ],
)
def test_index_bounds_decided_once_per_plan(fn, args, proved):
    """The reads' bounds are reduced to a rank and the least length of each axis when the
    plan is made (_elementwise._fits_of): each shape is then checked against them."""
    assert elementwise_in_x(fn, args, arrays=True) is proved
    assert elementwise_in_x(fn, args, arrays=True) is proved  # (the kept plan)
