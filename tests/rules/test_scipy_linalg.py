"""scipy.linalg solve-type and structured-matrix rules against finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from rule_inputs import FLOATS, make, spd, well_conditioned

sl = pytest.importorskip("scipy.linalg")

from pullback import ArgumentError, default_registry  # noqa: E402
from pullback.testing import check_grads, check_rrule  # noqa: E402

D = pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
_SCIPY = tuple(int(p) for p in __import__("scipy").__version__.split(".")[:2])
# SciPy's own behaviour, not the rules': its linalg functions take stacks of matrices from
# 1.16 on, and inv takes assume_a/lower from 1.17 on (before, the primal itself refuses).
BATCHES = _SCIPY >= (1, 16)
INV_ASSUME = _SCIPY >= (1, 17)
ASSUME = [
    None,
    "gen",
    "diagonal",
    "tridiagonal",
    "banded",
    "upper triangular",
    "lower triangular",
    "sym",
    "her",
    "pos",
]


def rule_of(fn):
    return default_registry().lookup(fn)


@D
@pytest.mark.parametrize("assume_a", ASSUME)
@pytest.mark.parametrize("lower", [False, True])
def test_solve_assume_a(assume_a, lower, dtype):
    a = spd(4, dtype) + 0.2 * make("real", (4, 4), dtype, seed=2)
    if assume_a == "pos":
        a = spd(4, dtype)
    b = make("real", (4, 2), dtype, seed=1)
    check_rrule(sl.solve, a, b, lower=lower, assume_a=assume_a)
    check_rrule(sl.solve, a, b[:, 0], lower, assume_a=assume_a)


@D
@pytest.mark.parametrize(
    "ashape,bshape",
    [((3, 3), (3,)), ((3, 3), (3, 2)), ((2, 3, 3), (3,)), ((2, 3, 3), (2, 3, 4))],
    ids=str,
)
def test_solve_shapes_and_transposed(ashape, bshape, dtype):
    if len(ashape) > 2 and not BATCHES:
        pytest.skip("SciPy < 1.16 solves no stacks of matrices")
    a = well_conditioned(ashape, dtype)
    b = make("real", bshape, dtype, seed=1)
    check_rrule(sl.solve, a, b)
    check_rrule(sl.solve, a, b, transposed=True)


def test_solve_degenerate_and_refusals():
    check_rrule(sl.solve, well_conditioned((3, 3)), np.zeros((3, 0)) + 0.0)
    with pytest.raises(ArgumentError, match="real matrices only"):
        rule_of(sl.solve).rrule(np.eye(2) + 0j, np.ones(2))
    with pytest.raises(ArgumentError, match="assume_a='nonsense'"):
        rule_of(sl.solve).rrule(np.eye(2), np.ones(2), assume_a="nonsense")


@D
@pytest.mark.parametrize("trans", [0, 1, "T", "C"])
@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("unit", [False, True])
def test_solve_triangular(trans, lower, unit, dtype):
    a = well_conditioned((4, 4), dtype) + 0.3 * make("real", (4, 4), dtype, seed=3)
    b = make("real", (4, 3), dtype, seed=1)
    check_rrule(sl.solve_triangular, a, b, trans, lower, unit)
    check_rrule(sl.solve_triangular, a, b[:, 0], trans=trans, lower=lower, unit_diagonal=unit)
    if BATCHES:
        batch = well_conditioned((2, 3, 3), dtype)
        check_rrule(sl.solve_triangular, batch, make("real", (2, 3, 2), dtype), lower=lower)


@D
@pytest.mark.parametrize("assume_a", [None, "pos", "sym", "upper triangular", "lower triangular"])
@pytest.mark.parametrize("lower", [False, True])
def test_inv(assume_a, lower, dtype):
    if (assume_a is not None or lower) and not INV_ASSUME:
        pytest.skip("SciPy < 1.17's inv has no assume_a or lower")
    a = spd(3, dtype) + 0.1 * make("real", (3, 3), dtype, seed=2)
    if assume_a == "pos":
        a = spd(3, dtype)
    if assume_a is None and not lower:  # the plain call, the only one before SciPy 1.17
        check_rrule(sl.inv, a)
    else:
        check_rrule(sl.inv, a, assume_a=assume_a, lower=lower)


@D
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (1, 1)], ids=str)
def test_inv_det_batches(shape, dtype):
    if len(shape) > 2 and not BATCHES:
        pytest.skip("SciPy < 1.16 inverts no stacks of matrices")
    a = well_conditioned(shape, dtype)
    check_rrule(sl.inv, a)
    check_rrule(sl.det, a)
    check_rrule(sl.det, -a)


def test_det_refuses_non_square():
    with pytest.raises(ArgumentError, match="square matrix"):
        rule_of(sl.det).rrule(np.ones((2, 3)))


@D
def test_solve_sylvester(dtype):
    a = well_conditioned((3, 3), dtype)
    b = well_conditioned((2, 2), dtype, seed=1)
    q = make("real", (3, 2), dtype, seed=2)
    check_rrule(sl.solve_sylvester, a, b, q)


@D
@pytest.mark.parametrize("lu", [(1, 1), (0, 2), (2, 0), (1, 2)], ids=str)
@pytest.mark.parametrize("bshape", [(5,), (5, 2)], ids=str)
def test_solve_banded(lu, bshape, dtype):
    lo, up = lu
    ab = make("real", (lo + up + 1, 5), dtype) * 0.3
    ab[up] = 3.0  # a dominant diagonal
    check_rrule(sl.solve_banded, lu, ab, make("real", bshape, dtype, seed=1))


@D
@pytest.mark.parametrize("bshape", [(5,), (5, 2)], ids=str)
def test_lstsq(bshape, dtype):
    a = well_conditioned((5, 3), dtype)
    check_rrule(sl.lstsq, a, make("real", bshape, dtype, seed=1))
    check_rrule(sl.lstsq, well_conditioned((3, 3), dtype), make("real", (3,), dtype, seed=2))


def test_lstsq_rank_deficient_refused():
    a = np.ones((3, 2))
    with pytest.raises(ArgumentError, match="rank 1"):
        rule_of(sl.lstsq).rrule(a, np.ones(3))


@D
@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4), (2, 3, 2)], ids=str)
def test_pinv(shape, dtype):
    if len(shape) > 2 and not BATCHES:
        pytest.skip("SciPy < 1.16 takes no stacks of matrices")
    a = well_conditioned(shape, dtype)
    check_rrule(sl.pinv, a)
    check_rrule(sl.pinv, a, return_rank=True)
    with pytest.raises(ArgumentError, match="rank deficient"):
        rule_of(sl.pinv).rrule(np.ones((3, 2)))
    with pytest.raises(ArgumentError, match="with these tolerances"):
        rule_of(sl.pinv).rrule(np.diag([1.0, 1e-3]), rtol=1e-2)


@D
def test_block_diag(dtype):
    check_rrule(
        sl.block_diag,
        make("real", (2, 2), dtype),
        make("real", (3,), dtype, seed=1),
        make("real", (1, 2), dtype, seed=2),
    )
    if BATCHES:
        check_rrule(sl.block_diag, make("real", (2, 1, 2), dtype), make("real", (2, 2, 1), dtype))
    check_rrule(sl.block_diag, make("real", (2, 2), dtype), np.float64(1.5), np.zeros((0, 2)))


@D
def test_toeplitz(dtype):
    c = make("real", (4,), dtype)
    check_rrule(sl.toeplitz, c)
    check_rrule(sl.toeplitz, c, make("real", (3,), dtype, seed=1))
    check_rrule(sl.toeplitz, c[:1], make("real", (5,), dtype, seed=1))
    if BATCHES:
        batch = make("real", (2, 3), dtype)
        check_rrule(sl.toeplitz, batch)
        check_rrule(sl.toeplitz, batch, make("real", (2, 4), dtype, seed=1))
    with pytest.raises(ArgumentError, match="by position"):
        rule_of(sl.toeplitz).rrule(c, r=c)


def _solves(a, b):
    x = sl.solve(a, b)
    y = sl.solve_triangular(a, x, lower=True)
    z = sl.solve(a, y, assume_a="pos")
    return np.sum(z**3) + sl.det(a) + np.sum(sl.inv(a) ** 2)


def _sylvester(a, q):
    return np.sum(sl.solve_sylvester(a, a.T, q) ** 2)


def test_second_order_runs_through_the_pullbacks():
    a, b = spd(3) + 0.5 * np.eye(3), make("real", (3, 2), seed=1)
    for i in (0, 1):
        assert check_grads(_solves, a, b, wrt=i, order=2) == "reverse over reverse"
    q = make("real", (3, 3), seed=2)
    for i in (0, 1):
        assert check_grads(_sylvester, well_conditioned((3, 3)), q, wrt=i, order=2) == (
            "reverse over reverse"
        )
    check_grads(_solves, a, b, wrt=(0, 1))


def _toeplitz_cubes(c, r):
    return np.sum(sl.toeplitz(c, r) ** 3) + np.sum(sl.toeplitz(c) ** 3)


def _blocks(c, r):
    return np.sum(sl.block_diag(sl.toeplitz(c, r), c, 2.0 * r[0]) ** 3)


def test_second_order_through_structured_matrices():
    c, r = make("real", (3,)), make("real", (4,), seed=1)
    for i in (0, 1):
        assert check_grads(_toeplitz_cubes, c, r, wrt=i, order=2) == "reverse over reverse"
        # block_diag's pullback function takes up to 8 blocks by position
        assert check_grads(_blocks, c, r, wrt=i, order=2) == "reverse over reverse"
        check_grads(_blocks, c, r, wrt=i)
