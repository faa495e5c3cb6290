"""np.piecewise, np.apply_along_axis and np.vectorize objects over user functions,
against finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from rule_inputs import FLOATS, make

from pullback.errors import UnsupportedCallError
from pullback.registry import default_registry
from pullback.testing import check_grads, check_rrule

D = pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)


def cube(t):
    return t**3


def scaled(t, s):
    return np.sin(t) * s


@D
def test_piecewise(dtype):
    x = make("distinct", (7,), dtype)
    neg = x < 0
    check_rrule(np.piecewise, x, [neg, ~neg], [lambda t: -t * t, cube])
    check_rrule(np.piecewise, x, [neg], [np.sin, 0.5])  # a rule, a constant otherwise
    check_rrule(np.piecewise, x, [neg, x > 0.5], [cube, lambda t: 2.0, np.exp])
    check_rrule(np.piecewise, x, [x > -9.0, neg], [cube, np.tanh])  # the later one wins
    check_rrule(np.piecewise, x, [neg], [scaled, lambda t, s: t * s], dtype(1.5))  # a float arg
    m = make("distinct", (2, 3), dtype, seed=1)
    check_rrule(np.piecewise, m, [m > 0], [np.cos, lambda t: t])
    check_rrule(np.piecewise, dtype(0.3), [True, False], [cube, np.sin])
    check_rrule(np.piecewise, make("real", (0,), dtype), [np.zeros(0, bool)], [cube])


def test_piecewise_keywords_are_refused():
    x = make("real", (3,))
    with pytest.raises(UnsupportedCallError, match="functools.partial"):
        default_registry().lookup(np.piecewise).rrule(x, [x > 0], [scaled], s=2.0)


def _mix(v):
    return np.array([np.sum(v**2), v[0] * v[-1]])


@D
def test_apply_along_axis(dtype):
    m = make("real", (3, 4), dtype)
    check_rrule(np.apply_along_axis, np.sum, 0, m)
    check_rrule(np.apply_along_axis, lambda v: np.sum(v**2), 1, m)
    check_rrule(np.apply_along_axis, _mix, 1, m)
    check_rrule(np.apply_along_axis, _mix, 0, make("real", (3, 2, 2), dtype))
    check_rrule(np.apply_along_axis, lambda v, s: v * s, -1, m, dtype(0.7))
    check_rrule(np.apply_along_axis, lambda v: np.outer(v, v), 0, make("real", (2, 3), dtype))


class Vectorized(np.vectorize):
    """A np.vectorize that copies as itself (check_rrule compares the arguments before
    and after with copies; np.vectorize objects compare by identity)."""

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


@D
def test_vectorize(dtype):
    vf = Vectorized(lambda a, b: a * a * b if a > 0 else b - a)
    x, y = make("distinct", (2, 3), dtype), make("real", (3,), dtype, seed=1)
    check_rrule(np.vectorize.__call__, vf, x, y)
    check_rrule(np.vectorize.__call__, vf, x, 1.5)
    check_rrule(np.vectorize.__call__, Vectorized(cube, otypes=[dtype]), make("real", (0,), dtype))
    check_rrule(np.vectorize.__call__, Vectorized(np.sin), dtype(0.4))


def test_vectorize_with_a_signature_is_refused():
    vf = np.vectorize(lambda v: np.sum(v), signature="(n)->()")
    with pytest.raises(UnsupportedCallError, match="signature"):
        default_registry().lookup(np.vectorize.__call__).rrule(vf, make("real", (2, 3)))


def test_second_order_through_user_functions():
    # the per-piece pullbacks are closures: a second derivative is refused or runs
    # through pullback.vjp; first order through the generated code:
    def f(x):
        return np.sum(np.piecewise(x, [x < 0], [cube, np.sin]) + np.apply_along_axis(np.sum, 0, x))

    check_grads(f, make("distinct", (5,)))


# -- second order: Hessians of user code through these rules ------------------------------
def normalized(v):
    return v / np.sqrt(np.sum(v * v) + 1.0)


def along_rows(m):
    return np.sum(np.apply_along_axis(normalized, 1, m) * m)


def scaled_cube(t, s):
    return s * t**3


def by_pieces(x, s):
    return np.sum(np.piecewise(x, [x < 0.1], [scaled_cube, scaled], s) ** 2)


def hessian_inputs(dtype):
    return make("real", (3, 4), dtype), make("real", (5,), dtype, seed=1), dtype(1.3)


@D
def test_hessians_run_through_the_user_functions(dtype):
    m, x, s = hessian_inputs(dtype)
    assert check_grads(along_rows, m, order=2) == "reverse over reverse"
    assert check_grads(by_pieces, x, s, wrt=(0, 1), order=2) == "reverse over reverse"
