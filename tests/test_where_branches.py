"""No NaN from the branch ``np.where`` did not select (transform/where_branches.py,
transform/reverse_where.py, where_masks.py).

``np.sum(np.where(x > 0, x * np.log(x), 0.0))`` computes 0 where ``x <= 0``: its
derivative there is 0, not the ``0 * inf`` or ``0 * nan`` of the unselected branch's
pullbacks. Each function is checked against its hand-derived gradient at every point (the
switch points included) and against central differences at the points away from them, in
float64 and float32; forward mode, the batched Jacobian and the Hessian agree with
reverse mode."""

import warnings

import numpy as np
import pytest
import where_cases as wc
from fd import check_grad
from hypothesis import given, settings
from hypothesis import strategies as st
from programs import load_program

import pullback
from pullback.where_masks import branch_mask, masked

DTYPES = [np.float64, np.float32]


def quiet(fn, *args, **kwargs):
    """``fn(*args)`` without NumPy's warnings about the unselected branch (the primal
    computes log(-1) too)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*args, **kwargs)


def test_the_three_functions_of_the_issue():
    x = np.array([-1.0, 0.0, 2.0])
    np.testing.assert_allclose(
        quiet(pullback.grad(wc.xlogx), x), [0.0, 0.0, 1.0 + np.log(2.0)], rtol=1e-15
    )
    np.testing.assert_allclose(
        quiet(pullback.grad(wc.root), x), [0.0, 0.0, 0.5 / np.sqrt(2.0)], rtol=1e-15
    )
    want = [(-np.cos(-1.0) - np.sin(-1.0)), 0.0, (2.0 * np.cos(2.0) - np.sin(2.0)) / 4.0]
    np.testing.assert_allclose(quiet(pullback.grad(wc.sinc), x), want, rtol=1e-14)


# (function, points, switch points among them, hand-derived gradient)
FAMILY = [
    (wc.log_only, [-1.5, 0.0, 0.7, 2.0], [0.0], lambda x: np.where(x > 0, 1 / x, 0.0)),
    (wc.root, [-1.5, 0.0, 0.7, 2.0], [0.0], lambda x: np.where(x > 0, 0.5 / np.sqrt(x), 0.0)),
    (wc.reciprocal, [-1.0, 1.0, 1.5, 3.0], [1.0], lambda x: np.where(x != 1, -1 / (x - 1) ** 2, 0)),
    (
        wc.power_three_halves,
        [-2.0, 0.0, 0.5, 2.0],
        [0.0],
        lambda x: np.where(x > 0, 1.5 * np.sqrt(np.abs(x)), 0.0),
    ),
    (
        wc.power_half,
        [-2.0, 0.0, 0.5, 2.0],
        [0.0],
        lambda x: np.where(x > 0, 1 / np.sqrt(np.abs(x) + (x == 0)), 0.0),
    ),
    (
        wc.arcsin_to_one,
        [-0.5, 0.3, 1.0, 1.5],
        [1.0],
        lambda x: np.where(x < 1, 1 / np.sqrt(np.abs(1 - x * x) + (x == 1)), 0.0),
    ),
    (wc.second_branch, [-1.5, 0.0, 0.7, 2.0], [0.0], lambda x: np.where(x > 0, 1 / x, 0.0)),
    (
        wc.stored,
        [-1.0, 0.0, 0.5, 2.0],
        [0.0],
        lambda x: np.where(x > 0, 1 + np.log(np.abs(x) + (x == 0)), 0),
    ),
    (
        wc.used_elsewhere,  # t is read by sum(t) as well: its 1/x stays at every point
        [-1.5, -0.5, 0.5, 1.0, 2.5],
        [1.0],
        lambda x: 1 / x + np.where(x > 1, 0.5 / (x * np.sqrt(np.log(np.abs(x)) + (x <= 1))), 0.0),
    ),
    (
        wc.same_condition_twice,  # t feeds two np.where's of one condition
        [-1.0, 0.0, 0.5, 2.0],
        [0.0],
        lambda x: np.where(
            x > 0, (1 + 2 * np.log(np.abs(x) + (x <= 0))) / np.where(x > 0, x, 1), 0
        ),
    ),
    (
        wc.nested,
        [-1.0, 0.0, 0.5, 2.0, 4.0, 5.0],
        [0.0, 4.0],
        lambda x: np.where(
            (x > 0) & (x < 4),
            np.sqrt(np.abs(4 - x)) / np.where(x > 0, x, 1.0)
            - np.log(np.abs(x) + (x <= 0)) * 0.5 / np.sqrt(np.abs(4 - x) + (x >= 4)),
            0.0,
        ),
    ),
    (
        wc.in_a_loop,
        [-1.0, 0.5, 1.0, 1.5, 3.0],
        [1.0],
        lambda x: sum(
            np.where(x > k, 0.5 / np.sqrt(np.abs(x - k) + (x <= k)), 0.0) for k in range(3)
        ),
    ),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", FAMILY, ids=lambda c: c[0].__name__)
def test_no_nan_from_the_unselected_branch(case, dtype):
    fn, points, switches, derivative = case
    x = np.array(points, dtype=dtype)
    got = quiet(pullback.grad(fn), x)
    assert got.dtype == dtype
    assert np.all(np.isfinite(got)), got
    want = quiet(derivative, np.array(points, dtype=np.float64))
    tol = 1e-5 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    away = np.array([p for p in points if p not in switches], dtype=dtype)
    quiet(check_grad, fn, away)


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_broadcast_scalar_parameter_sums_the_masked_cotangent(dtype):
    x = np.array([-1.0, 0.0, 0.5, 2.0], dtype=dtype)
    a = dtype(3.0)
    dx, da = quiet(pullback.grad(wc.scaled, wrt=(0, 1)), x, a)
    np.testing.assert_allclose(dx, [0.0, 0.0, 6.0, 1.5], rtol=1e-6)
    np.testing.assert_allclose(da, np.log(0.5) + np.log(2.0), rtol=1e-6)
    assert dx.dtype == dtype
    quiet(check_grad, wc.scaled, np.array([-1.0, 0.5, 2.0], dtype=dtype), a, wrt=(0, 1))


def test_a_broadcast_row_sums_the_masked_cotangent():
    x = np.array([[-1.0, 0.5, 2.0], [3.0, -2.0, 0.0]])
    w = np.array([[1.0, 2.0, 3.0]])
    dx, dw = quiet(pullback.grad(wc.scaled, wrt=(0, 1)), x, w)
    assert np.all(np.isfinite(dx)) and np.all(np.isfinite(dw))
    np.testing.assert_allclose(dw, [[np.log(3.0), np.log(0.5), np.log(2.0)]], rtol=1e-14)
    np.testing.assert_allclose(dx, [[0.0, 4.0, 1.5], [1 / 3.0, 0.0, 0.0]], rtol=1e-14)


def test_a_scalar_argument():
    g = pullback.grad(wc.scalar_branch)
    assert quiet(g, -1.0) == 0.0
    assert quiet(g, 0.0) == 0.0
    assert quiet(g, 2.0) == pytest.approx(1.0 + np.log(2.0), rel=1e-15)


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_scalar_inside_the_branch_gets_the_masked_sum(dtype):
    # k = exp(a) has no position of its own: the cotangent it gets sums the masked ones
    x = np.array([-1.0, 0.0, 0.5, 2.0], dtype=dtype)
    dx, da = quiet(pullback.grad(wc.scalar_member, wrt=(0, 1)), x, dtype(0.3))
    k = np.exp(0.3)
    np.testing.assert_allclose(dx, [0.0, 0.0, 2 * k, 0.5 * k], rtol=1e-6)
    np.testing.assert_allclose(da, k * (np.log(0.5) + np.log(2.0)), rtol=1e-6)
    quiet(
        check_grad,
        wc.scalar_member,
        np.array([-1.0, 0.5, 2.0], dtype=dtype),
        dtype(0.3),
        wrt=(0, 1),
    )


def test_jacobian_vjp_and_forward_mode_agree():
    x = np.array([-1.0, 0.0, 0.5, 2.0])
    want = np.diag(np.where(x > 0, 1.0 + np.log(np.abs(x) + (x == 0)), 0.0))
    np.testing.assert_allclose(quiet(pullback.jacobian(wc.elementwise), x), want, rtol=1e-15)
    _, back = quiet(pullback.vjp, wc.elementwise, x)
    np.testing.assert_allclose(quiet(back, np.ones(4))[0], np.diag(want), rtol=1e-15)
    for k in range(4):
        e = np.zeros(4)
        e[k] = 1.0
        _, t = quiet(pullback.jvp, wc.elementwise, (x,), (e,))
        np.testing.assert_allclose(t, want[:, k], rtol=1e-15)


def test_the_masks_fall_back_where_shapes_do_not_allow_them():
    cond = np.array([True, False, True])
    m = branch_mask(cond, np.zeros(3), np.zeros(3), True)
    np.testing.assert_array_equal(m, [False, True, False])
    assert branch_mask(cond, np.zeros(3), 2.0, False) is None
    assert branch_mask(np.ones(4, bool), np.zeros(3), np.zeros(3), False) is None
    row = branch_mask(np.array([True, False]), np.zeros((3, 2)), np.zeros((3, 2)), False)
    assert row.shape == (3, 2)
    ct = np.array([np.nan, 1.0, np.inf], np.float32)
    out = masked(ct, branch_mask(cond, np.zeros(3), np.zeros(3), False))
    np.testing.assert_array_equal(out, [np.nan, 0.0, np.inf])
    assert out.dtype == np.float32
    assert masked(np.ones(2), m) is not None and masked(np.ones(2), m).shape == (2,)
    assert masked(np.float64(np.nan), False) == 0.0
    assert branch_mask(np.float64(-1.0) > 0, 0.0, 1.0, True) is True
    assert masked(pullback.ZERO, m) is pullback.ZERO


# -- generated programs --------------------------------------------------------------------
# (the branch, its domain as a condition on x: the branch is NaN or infinite outside it)
BRANCHES = [
    ("np.log(x - {c})", "x > {c}"),
    ("np.sqrt(x - {c})", "x > {c}"),
    ("(x - {c}) ** 1.5", "x > {c}"),
    ("1.0 / (x - {c})", "x > {c}"),
    ("np.arcsin(0.4 * (x - {c}) - 1.0)", "x > {c}"),
    ("np.arccosh(x - {c} + 1.0)", "x > {c}"),
]
WRAPS = ["{e}", "np.sin({e})", "a * {e}", "{e} * x", "({e}) ** 2", "np.exp(-({e}) ** 2) + x"]


@st.composite
def where_program(draw):
    branch, domain = draw(st.sampled_from(BRANCHES))
    c = draw(st.sampled_from([-0.5, 0.0, 0.5]))
    e = branch.format(c=c)
    for _ in range(draw(st.integers(0, 2))):
        e = draw(st.sampled_from(WRAPS)).format(e=e)
    cond = domain.format(c=c)
    other = draw(st.sampled_from(["0.0", "a * x", "x * x"]))
    lines = ["import numpy as np", "", "", "def f(x, a):"]
    if draw(st.booleans()):  # the branch computed in an earlier statement
        lines.append(f"    b = {e}")
        e = "b"
    if draw(st.booleans()):
        lines.append(f"    y = np.where({cond}, {e}, {other})")
    else:
        lines.append(f"    y = np.where(~({cond}), {other}, {e})")
    lines.append("    return np.sum(y)")
    return "\n".join(lines) + "\n", c


@settings(max_examples=40, deadline=None)
@given(where_program())
def test_generated_where_programs_have_no_nan_where_the_function_is_finite(
    tmp_path_factory, program
):
    source, c = program
    f = load_program(source, tmp_path_factory.mktemp("where_programs"))
    # points at least 0.2 from the switch point c: f is finite and smooth
    # around each of them
    x = np.array([c - 1.7, c - 0.6, c + 0.3, c + 0.55, c + 1.4, c + 2.2])
    a = 0.7
    value = quiet(f, x, a)
    assert np.isfinite(value)
    dx, da = quiet(pullback.grad(f, wrt=(0, 1)), x, a)
    assert np.all(np.isfinite(dx)) and np.isfinite(da), source
    quiet(check_grad, f, x, a, wrt=(0, 1), rtol=1e-5, atol=1e-6)


def test_a_float32_scalar_argument_keeps_its_dtype():
    g = quiet(pullback.grad(wc.scalar_branch), np.float32(-1.0))
    assert g == 0.0 and isinstance(g, np.float32)


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_user_helper_proved_elementwise(dtype):
    x = np.array([-1.0, 0.0, 0.5, 2.0], dtype=dtype)
    got = quiet(pullback.grad(wc.helper_in_branch), x)
    np.testing.assert_allclose(got, [0.0, 0.0, 1 + np.log(0.5), 1 + np.log(2.0)], rtol=1e-6)
    assert got.dtype == dtype
    quiet(check_grad, wc.helper_in_branch, np.array([-1.0, 0.5, 2.0], dtype=dtype))
    # its array argument is masked; its scalar one sums inside the helper (not masked)
    dx = quiet(pullback.grad(wc.helper_with_a_scalar), x, dtype(2.0))
    np.testing.assert_allclose(dx, [0.0, 0.0, 1 / np.sqrt(0.5), 1 / np.sqrt(2.0)], rtol=1e-6)


def test_a_helper_that_is_not_elementwise_is_not_masked():
    x = np.array([0.5, 2.0, 3.0])
    got = check_grad(wc.helper_not_elementwise, x)
    assert got[0] == pytest.approx(5.0)  # unselected, and not zero


# -- second order ---------------------------------------------------------------------------
def test_hessians_of_the_three_functions():
    x = np.array([-1.0, 0.0, 2.0])
    np.testing.assert_allclose(quiet(pullback.hessian(wc.xlogx), x), np.diag([0, 0, 0.5]))
    want = np.diag([0.0, 0.0, -0.25 * 2.0**-1.5])
    np.testing.assert_allclose(quiet(pullback.hessian(wc.root), x), want, rtol=1e-15)
    s, c = np.sin(2.0), np.cos(2.0)
    second = -s / 2 - 2 * c / 4 + 2 * s / 8  # (sin x / x)'' at 2
    want = np.diag([-np.sin(1.0) - 2 * np.cos(1.0) + 2 * np.sin(1.0), 0.0, second])
    np.testing.assert_allclose(quiet(pullback.hessian(wc.sinc), x), want, rtol=1e-14)


# (a where inside a loop too: the members its forward loop saves are kept(member, mask)
# on the tape, see transform/reverse_where.py)
@pytest.mark.parametrize("case", FAMILY, ids=lambda c: c[0].__name__)
def test_hessians_are_finite_and_match_the_gradients_differences(case):
    fn, points, switches, _ = case
    x = np.array(points)
    h = quiet(pullback.hessian(fn), x)
    assert np.all(np.isfinite(h)), h
    g = pullback.grad(fn)
    eps = 1e-6
    for k, p in enumerate(points):
        if any(abs(p - s) < 1e-3 for s in switches):
            continue
        hi, lo = x.copy(), x.copy()
        hi[k] += eps
        lo[k] -= eps
        column = (quiet(g, hi) - quiet(g, lo)) / (2 * eps)
        np.testing.assert_allclose(h[:, k], column, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fn", [wc.xlogx, wc.root, wc.sinc, wc.stored, wc.nested])
def test_hessian_vector_products_agree_with_the_hessian(fn):
    x = np.array([-1.0, 0.0, 0.5, 2.0, 5.0])
    h = quiet(pullback.hessian(fn), x)
    assert np.all(np.isfinite(h)), h
    rows = np.array([quiet(pullback.hvp(fn), x, e) for e in np.eye(5)])
    np.testing.assert_allclose(rows, h, rtol=1e-12, atol=1e-15)


# -- np.select ------------------------------------------------------------------------------
def _select_derivative(x):
    safe = np.where(x > 1, x - 1, 1.0)
    return np.where(x > 1, 1 / safe, np.where(x > 0, 0.5 / np.sqrt(np.abs(x) + (x == 0)), 0))


@pytest.mark.parametrize("dtype", DTYPES)
def test_np_select_choices_that_were_not_taken(dtype):
    points = [-1.0, 0.0, 0.5, 1.0, 2.0]
    x = np.array(points, dtype=dtype)
    got = quiet(pullback.grad(wc.selected), x)
    assert np.all(np.isfinite(got)) and got.dtype == dtype
    tol = 1e-5 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(got, _select_derivative(np.array(points)), rtol=tol, atol=tol)
    quiet(check_grad, wc.selected, np.array([-1.0, 0.5, 2.0], dtype=dtype))
    jac = quiet(pullback.jacobian(wc.selected_elementwise), np.array(points))
    np.testing.assert_allclose(jac, np.diag(_select_derivative(np.array(points))), rtol=1e-13)
    h = quiet(pullback.hessian(wc.selected), np.array(points))
    want = np.diag([0.0, 0.0, -0.25 * 0.5**-1.5, -0.25, -1.0])
    np.testing.assert_allclose(h, want, rtol=1e-13, atol=1e-15)


def test_np_select_default_that_was_not_taken():
    x = np.array([-1.0, -0.5, 2.5, 3.0])
    got = quiet(pullback.grad(wc.selected_default), x)
    np.testing.assert_allclose(got, [-2.0, -1.0, 1 / 1.5, 1 / 2.0], rtol=1e-14)
    check_grad(wc.selected_default, x)
