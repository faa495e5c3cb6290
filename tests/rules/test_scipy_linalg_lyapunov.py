"""The Lyapunov and Riccati solvers of scipy.linalg against finite differences of SciPy:
every array argument, float64 and float32, first and second order, the degenerate 1 x 1
case and the refusals."""

from __future__ import annotations

import numpy as np
import pytest
from rule_inputs import FLOATS, make

sl = pytest.importorskip("scipy.linalg")

from pullback import ArgumentError, default_registry, grad  # noqa: E402
from pullback.testing import check_grads, check_rrule  # noqa: E402

D = pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
STABLE = -2.0 * np.eye(3) + 0.3 * make("real", (3, 3), seed=1)
CONTRACT = 0.4 * make("real", (3, 3), seed=2)
A = make("real", (3, 3), seed=3)
B = make("real", (3, 2), seed=4)
QC = make("real", (3, 3), seed=5)  # q = QC QC^T + I
RC = make("real", (2, 2), seed=6)  # r = RC RC^T + I


@D
def test_lyapunov_rules(dtype):
    q = make("real", (3, 3), dtype, seed=7)
    check_rrule(sl.solve_continuous_lyapunov, STABLE.astype(dtype), q)
    check_rrule(sl.solve_discrete_lyapunov, CONTRACT.astype(dtype), q)
    check_rrule(sl.solve_discrete_lyapunov, CONTRACT.astype(dtype), q, method="bilinear")
    # 1 x 1: a x + x a = q, x = q / (2 a); a^2 x - x + q = 0, x = q / (1 - a^2)
    one = np.array([[-0.7]], dtype)
    check_rrule(sl.solve_continuous_lyapunov, one, np.array([[0.3]], dtype))
    check_rrule(sl.solve_discrete_lyapunov, -one, np.array([[0.3]], dtype))


@D
def test_riccati_rules_in_a_and_b(dtype):
    q = (QC @ QC.T + np.eye(3)).astype(dtype)
    r = (RC @ RC.T + np.eye(2)).astype(dtype)
    for fn in (sl.solve_continuous_are, sl.solve_discrete_are):
        # q and r by keyword, held: SciPy refuses them unless symmetric (see the next test)
        check_rrule(fn, A.astype(dtype), B.astype(dtype), q=q, r=r)


def _care(a, b, qc, rc):
    q = qc @ qc.T + np.eye(3)
    r = rc @ rc.T + np.eye(2)
    return np.sum(np.sin(sl.solve_continuous_are(a, b, q, r)))


def _dare(a, b, qc, rc):
    q = qc @ qc.T + np.eye(3)
    r = rc @ rc.T + np.eye(2)
    return np.sum(np.sin(sl.solve_discrete_are(a, b, q, r)))


def _lyapunovs(a, q):
    x = sl.solve_continuous_lyapunov(-2.0 * np.eye(3) + 0.3 * a, q)
    y = sl.solve_discrete_lyapunov(0.4 * a, x)
    return np.sum(y**2)


@pytest.mark.parametrize("fn", [_care, _dare], ids=["care", "dare"])
def test_riccati_every_argument_and_second_order(fn):
    # q and r along symmetric directions, through a symmetric parametrization
    assert check_grads(fn, A, B, QC, RC, wrt=(0, 1, 2, 3)) == "reverse"
    for i in (0, 2):
        assert check_grads(fn, A, B, QC, RC, wrt=i, order=2) == "reverse over reverse"


def test_lyapunov_second_order_and_float32():
    a, q = make("real", (3, 3), seed=8), make("real", (3, 3), seed=9)
    for i in (0, 1):
        assert check_grads(_lyapunovs, a, q, wrt=i, order=2) == "reverse over reverse"
    check_grads(_lyapunovs, a.astype(np.float32), q.astype(np.float32), wrt=(0, 1))


def test_scalar_riccati_closed_form():
    # 1 x 1 continuous: 2 a x - b^2 x^2 / r + q = 0, x = r (a + sqrt(a^2 + b^2 q / r)) / b^2
    def x_of(a):
        return sl.solve_continuous_are(a, np.array([[1.0]]), np.array([[2.0]]), np.eye(1))[0, 0]

    a = np.array([[0.5]])
    expected = 1.0 + 0.5 / np.sqrt(0.25 + 2.0)
    assert np.isclose(grad(x_of)(a)[0, 0], expected, rtol=1e-10)


def test_generalized_riccati_refused():
    rule = default_registry().lookup(sl.solve_discrete_are)
    q, r = QC @ QC.T + np.eye(3), np.eye(2)
    with pytest.raises(ArgumentError) as err:
        rule.rrule(A, B, q, r, np.eye(3))
    assert str(err.value) == (
        "pullback cannot differentiate scipy.linalg.solve_discrete_are: its generalized form "
        "(e= or s=) has no rule.\n    Fix: remove s by solving with a - b @ solve(r, s.T) and "
        "q - s @ solve(r, s.T), and e by solving with solve(e, a) and solve(e, b), then X = "
        "inv(e).T @ X @ inv(e)"
    )
    with pytest.raises(ArgumentError, match="real matrices only"):
        default_registry().lookup(sl.solve_continuous_lyapunov).rrule(STABLE + 0j, QC)
