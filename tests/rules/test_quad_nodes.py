"""quad's gradient on its own subintervals (rules/_quad_nodes.py) and the proof it rests on
(rules/_elementwise.py): the one-pass path is taken only for integrands proved elementwise
in ``x``; every other integrand takes the per-node path. Both are checked against central
finite differences of the integral."""

from __future__ import annotations

import math

import numpy as np
import pytest
from rule_inputs import FLOATS

si = pytest.importorskip("scipy.integrate")

import pullback  # noqa: E402
from pullback.rules import _quad_leibniz, _quad_nodes, scipy_quad  # noqa: E402
from pullback.rules._elementwise import elementwise_in_x  # noqa: E402
from pullback.testing import check_rrule  # noqa: E402

D = pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
VALUE_ONLY = (1.3, 0.0)

SCALE = 2.0  # a global scalar an integrand reads
WEIGHTS = np.array([1.0, 2.0])  # a global array


# -- integrands ------------------------------------------------------------------------------
def gauss_cos(x, c, k):
    """Straight-line NumPy: proved elementwise."""
    return np.exp(-c * x * x) * np.cos(k * x)


def with_locals(x, c, k):
    """Locals, a docstring, a global scalar, np.pi, a two-input ufunc, ** and unary -."""
    u = -c * x**2
    v = np.hypot(k, x) / (SCALE * np.pi)
    return np.exp(u) * v


def with_where(x, c):
    """A branch written as np.where on a comparison: elementwise (smooth where the
    branches meet, so that quad integrates it to full accuracy)."""
    return np.where(x > 0.5, np.sin(c * x * x), np.sin(c * (x - 0.25)))


def with_math(x, c, k):
    """math.* works on scalars only: the per-node path."""
    return math.exp(-c * x * x) * math.cos(k * x)


def branch_on_x(x, c):
    """An if on x: not proved (and not vectorizable)."""
    if x < 0.5:
        return np.exp(-c * x)
    return np.exp(-c * x) * (2.0 - x) / 1.5


def cancelling_mean(x, c):
    """On scalars ``c * x * x`` (the mean of a scalar is itself). With ``c`` spread over
    the nodes its values agree at every node, but the means couple the nodes, so one pass
    over all nodes at once would add ``x_i**2 - mean(x**2)`` to each node's derivative
    (the check of values at the nodes that came before the proof gave 2.248 for 8/3):
    agreeing values are no proof."""
    return c * x * x + (np.mean(c * x * x) - c * np.mean(x * x))


def counts_steps(x, c):
    """Booleans added: 2 past 0.7 in Python, but NumPy's ``True + True`` is ``True``."""
    return c * ((x > 0.5) + (x > 0.7))


def where_of_booleans(x, c):
    """np.where of two constants makes a boolean array: not proved."""
    return c * (np.where(x > 0.5, True, False) + np.where(x > 0.7, True, False))


def boolean_ufunc(x, c):
    return c * x + np.signbit(x - 1.0)


def read_before_assigned(x, c):
    y = c * z  # noqa: F821 - assigned below: an UnboundLocalError when called
    z = x
    return y + z


def reads_array_global(x, c):
    """A global array (indexed): not proved."""
    return np.exp(-c * x) * WEIGHTS[1]


def calls_helper(x, c):
    """A call of another Python function: not proved."""
    return helper(x, c) + 1.0


def helper(x, c):
    return np.exp(-c * x)


def augmented(x, c):
    """An augmented assignment (in place on an array, a rebinding on a float)."""
    y = c * x
    y += x
    return y


def with_default(x, c, k=3.0):
    return np.exp(-c * x) * k


def make_closure(scale):
    def integrand(x, c):
        return np.exp(-c * x) * scale

    return integrand


def make_indexing_closure(coefficients):
    def integrand(x, c):
        return np.exp(-c * x) * coefficients[0]

    return integrand


def without_first_step(monkeypatch):
    """Leave out the vectorized first step (``_quad_first``, tests/rules/test_quad_first.py),
    which answers a smooth integral before QUADPACK runs: the tests that spy on the node
    pass behind QUADPACK's subintervals (what serves every integral the first step does
    not) see it serve these ones too."""
    monkeypatch.setattr(scipy_quad, "first_step", lambda *a: None)


def spy(monkeypatch):
    """``calls``: the sizes of the passes over nodes; ``general``: the per-node integrals
    (the first step left out: :func:`without_first_step`)."""
    without_first_step(monkeypatch)
    calls, general = [], []
    real_nodes, real_general = _quad_nodes._node_derivatives, _quad_leibniz.parameter_integral

    def counted(*a):
        calls.append(a[3].size)  # (the nodes, the fourth argument)
        return real_nodes(*a)

    def counted_general(*a):
        general.append(a)
        return real_general(*a)

    monkeypatch.setattr(_quad_nodes, "_node_derivatives", counted)
    monkeypatch.setattr(_quad_leibniz, "parameter_integral", counted_general)
    return calls, general


# -- the proof -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "fn, args",
    [
        (gauss_cos, (0.7, 1.3)),
        (with_locals, (0.7, 1.3)),
        (with_where, (0.7,)),
        (make_closure(2.0), (0.7,)),
        (lambda x, c: np.exp(-c * x), (0.7,)),
        (gauss_cos, (np.float32(0.7), 3)),  # a NumPy scalar and an int
    ],
)
def test_proved_elementwise(fn, args):
    assert elementwise_in_x(fn, args)


@pytest.mark.parametrize(
    "fn, args",
    [
        (with_math, (0.7, 1.3)),
        (branch_on_x, (0.7,)),
        (cancelling_mean, (0.7,)),
        (reads_array_global, (0.7,)),
        (calls_helper, (0.7,)),
        (augmented, (0.7,)),
        (counts_steps, (0.7,)),
        (where_of_booleans, (0.7,)),
        (boolean_ufunc, (0.7,)),
        (read_before_assigned, (0.7,)),
        (with_default, (0.7,)),  # k taken from the default
        (make_closure(np.array([1.0, 2.0])), (0.7,)),  # an array in the cell
        (make_indexing_closure([2.0]), (0.7,)),
        (gauss_cos, (0.7, np.array([1.3]))),  # an array parameter
        (gauss_cos, (0.7,)),  # the wrong number of arguments
        (np.cos, ()),  # no source
        (lambda x, c: np.matmul(x, c), (0.7,)),  # a ufunc with a core signature
    ],
)
def test_not_proved(fn, args):
    assert not elementwise_in_x(fn, args)


def test_the_proof_reads_free_names_at_each_call(monkeypatch):
    assert elementwise_in_x(with_locals, (0.7, 1.3))
    monkeypatch.setattr(__import__(__name__), "SCALE", np.array([1.0, 2.0]))
    assert not elementwise_in_x(with_locals, (0.7, 1.3))  # rebound to an array
    monkeypatch.setattr(np, "hypot", lambda a, b: np.sqrt(a * a + b * b))
    monkeypatch.setattr(__import__(__name__), "SCALE", 2.0)
    assert not elementwise_in_x(with_locals, (0.7, 1.3))  # no longer a ufunc


# -- gradients on both paths -----------------------------------------------------------------
@D
@pytest.mark.parametrize("fn", [gauss_cos, with_locals])
def test_node_path(monkeypatch, fn, dtype):
    calls, general = spy(monkeypatch)
    a, b = dtype(0.1), dtype(2.5)
    check_rrule(si.quad, fn, a, b, (dtype(0.7), dtype(1.3)), output_cotangent=VALUE_ONLY)
    check_rrule(si.quad, fn, b, a, (0.7, dtype(4.0)), output_cotangent=VALUE_ONLY)
    assert calls and not general


@D
def test_node_path_np_where_and_closure(monkeypatch, dtype):
    calls, general = spy(monkeypatch)
    c = (dtype(0.9),)
    check_rrule(si.quad, with_where, dtype(0.0), dtype(1.0), c, output_cotangent=VALUE_ONLY)
    closure = make_closure(3.0)
    check_rrule(si.quad, closure, dtype(0.2), dtype(1.7), c, output_cotangent=VALUE_ONLY)
    assert calls and not general


@D
@pytest.mark.parametrize(
    "fn, args",
    [
        (with_math, (0.7, 1.3)),
        (branch_on_x, (0.8,)),
        (calls_helper, (0.8,)),
        (augmented, (0.8,)),
        (make_indexing_closure([2.0]), (0.8,)),
    ],
)
def test_per_node_path(monkeypatch, fn, args, dtype):
    calls, general = spy(monkeypatch)
    args = tuple(dtype(v) for v in args)
    check_rrule(si.quad, fn, dtype(0.0), dtype(2.0), args, output_cotangent=VALUE_ONLY)
    assert general and not calls


def test_cancelling_reduction_gets_the_true_derivative(monkeypatch):
    calls, general = spy(monkeypatch)
    check_rrule(si.quad, cancelling_mean, 0.0, 2.0, (0.8,), output_cotangent=VALUE_ONLY)
    _, back = pullback.default_registry().lookup(si.quad).rrule(cancelling_mean, 0.0, 2.0, (0.8,))
    (dc,) = back((1.0, 0.0))[3]
    assert dc == pytest.approx(8 / 3, rel=1e-10)  # d/dc of the integral of c x^2 on [0, 2]
    assert general and not calls


def test_booleans_added_get_the_true_derivative(monkeypatch):
    calls, general = spy(monkeypatch)
    _, back = pullback.default_registry().lookup(si.quad).rrule(counts_steps, 0.0, 2.0, (0.8,))
    (dc,) = back((1.0, 0.0))[3]
    assert dc == pytest.approx(1.5 + 1.3, rel=1e-6)  # the lengths of x > 0.5 and x > 0.7
    assert general and not calls


def loss(c, k):
    return si.quad(gauss_cos, 0.0, 3.0, args=(c, k))[0] ** 2


def loss_math(c, k):
    return si.quad(with_math, 0.0, 3.0, args=(c, k))[0] ** 2


@pytest.mark.parametrize("fn", [loss, loss_math])
def test_grad_matches_central_differences(fn):
    g = pullback.grad(fn, wrt=(0, 1))(0.7, 1.3)
    h = 1e-6
    fd = [
        (fn(0.7 + h, 1.3) - fn(0.7 - h, 1.3)) / (2 * h),
        (fn(0.7, 1.3 + h) - fn(0.7, 1.3 - h)) / (2 * h),
    ]
    assert np.allclose(g, fd, rtol=1e-6, atol=1e-9)


def test_oscillatory_integrand_is_bisected_for_its_derivative(monkeypatch):
    calls, general = spy(monkeypatch)
    c, k = 0.035, 26.0
    check_rrule(
        si.quad, gauss_cos, 0.0, 8.0, (c, k), limit=200, output_cotangent=VALUE_ONLY, fd_step=1e-5
    )
    assert calls and not general
