"""Boundary conditions written as copies between parts of one array, as PDE solvers write them.

The "12 steps to Navier-Stokes" course and the heat, wave and Poisson solvers written after
it set a Neumann edge by copying the next row or column into it (``p[:, -1] = p[:, -2]``,
``u[0] = u[1]``), a periodic edge from the other end (``u[0] = u[-2]``), an edge by
extrapolation (``A[0, :] = 2 * A[1, :] - A[2, :]``), every time step of a
``for n in range(nt)`` loop after ``un = u.copy()`` and a stencil update. Each store reads a
view of the array it writes; NumPy reads the value before it writes (through a temporary
where the two overlap, ``a[1:] = a[:-1]``), and the gradient follows that. The programs are
differentiated in the initial field and a scalar coefficient: gradients in float64 and
float32, Hessian-vector products in both, and forward-mode jvps, against central
differences. The cavity flow of step 11 calls helpers between the writes, which only read
``u`` and ``v`` (no name keeps them); a helper returning a view of the array written stays
refused (golden).
"""

import os

import numpy as np
import pytest
from fd import check_grad, check_jvp
from sweeps import sweep

import pullback
from pullback.errors import UnsupportedCallError, UnsupportedSyntaxError

HERE = os.path.basename(__file__)


def burgers_1d(u0, nu):
    """CFD step 4 shape: nonlinear convection and diffusion, Neumann edges."""
    u = u0.copy()
    dt, dx = 0.01, 0.2
    for _ in range(4):
        un = u.copy()
        u[1:-1] = (
            un[1:-1]
            - un[1:-1] * dt / dx * (un[1:-1] - un[:-2])
            + nu * dt / dx**2 * (un[2:] - 2 * un[1:-1] + un[:-2])
        )
        u[0] = u[1]
        u[-1] = u[-2]
    return np.sum(u**2)


def diffusion_2d(u0, nu):
    """CFD step 7 shape: 2-D diffusion with Neumann edges on all four sides."""
    u = u0.copy()
    dt = 0.05
    for _ in range(3):
        un = u.copy()
        u[1:-1, 1:-1] = un[1:-1, 1:-1] + nu * dt * (
            un[2:, 1:-1]
            - 2 * un[1:-1, 1:-1]
            + un[0:-2, 1:-1]
            + un[1:-1, 2:]
            - 2 * un[1:-1, 1:-1]
            + un[1:-1, 0:-2]
        )
        u[0, :] = u[1, :]
        u[-1, :] = u[-2, :]
        u[:, 0] = u[:, 1]
        u[:, -1] = u[:, -2]
    return np.sum(u**3) / u.size


def laplace_jacobi(p0, w):
    """CFD step 9 shape: Jacobi sweeps of Laplace's equation, p = 0 at the bottom, Neumann
    at the top and the right, a source scaled by ``w`` on the left."""
    p = p0 * 1.0
    y = np.linspace(0.0, 1.0, p.shape[0])
    for _ in range(3):
        pn = p.copy()
        p[1:-1, 1:-1] = 0.25 * (pn[1:-1, 2:] + pn[1:-1, 0:-2] + pn[2:, 1:-1] + pn[0:-2, 1:-1])
        p[:, 0] = w * y
        p[:, -1] = p[:, -2]
        p[0, :] = p[1, :]
        p[-1, :] = 0
    return np.sum(np.sin(p) * p)


def heat_periodic(u0, alpha):
    """The heat equation on a ring: two ghost cells copied from the other end."""
    u = u0 * 1.0
    for _ in range(3):
        un = u.copy()
        u[1:-1] = un[1:-1] + alpha * (un[2:] - 2 * un[1:-1] + un[:-2])
        u[0] = u[-2]
        u[-1] = u[1]
    return np.sum(np.exp(u) * u)


def heat_periodic_2d(u0, alpha):
    """Heat on a torus, the ghost rows and columns set by tuple stores (each value read
    before the stores: rows and columns that do not overlap the earlier targets)."""
    u = u0 * 1.0
    for _ in range(2):
        un = u.copy()
        u[1:-1, 1:-1] = un[1:-1, 1:-1] + alpha * (
            un[2:, 1:-1] + un[:-2, 1:-1] + un[1:-1, 2:] + un[1:-1, :-2] - 4 * un[1:-1, 1:-1]
        )
        u[0], u[-1] = u[-2], u[1]
        u[:, 0], u[:, -1] = u[:, -2], u[:, 1]
    return np.sum(np.cos(u) * u)


def wave_extrapolated(u0, c):
    """The wave equation, three levels, edges extrapolated from the two cells inside."""
    prev = u0.copy()
    u = u0 * np.cos(c)
    for _ in range(3):
        nxt = np.zeros_like(u)
        nxt[1:-1] = 2 * u[1:-1] - prev[1:-1] + c**2 * (u[2:] - 2 * u[1:-1] + u[:-2])
        nxt[0] = 2 * nxt[1] - nxt[2]
        nxt[-1] = 2 * nxt[-2] - nxt[-3]
        prev, u = u, nxt
    return np.sum(u**2 * prev)


def upwind_shift(u0, c):
    """Advection by one cell a step (Courant number 1), written as the overlapping shift it
    is, with an inflow scaled by ``c``; then a smoothing of every other cell from its
    neighbour (``u[::2] = u[1::2]``, disjoint strided parts)."""
    u = u0 * 1.0
    for _ in range(3):
        u[1:] = u[:-1]
        u[0] = c * u[1] ** 2
    u[::2] = u[1::2]
    return np.sum(u**3)


def batched_edges(x0, k, i, j):
    """A batch of 1-D fields (the last axis the grid) with their edge copied in through
    ``...``, and one cell copied from another at integers known only when it runs."""
    x = np.tanh(x0 * k)
    x[..., 0] = x[..., 1]
    x[..., -1] = 2 * x[..., -2] - x[..., -3]
    x[i] = x[j]
    return np.sum(x**2 * x0)


PRESSURE_SWEEPS = 2


def build_up_b(b, rho, dt, u, v, dx, dy):
    """CFD step 11: the source of the pressure equation, written into ``b`` (a helper that
    writes into its argument and only reads ``u`` and ``v``)."""
    dudx = (u[1:-1, 2:] - u[1:-1, 0:-2]) / (2 * dx)
    dvdy = (v[2:, 1:-1] - v[0:-2, 1:-1]) / (2 * dy)
    b[1:-1, 1:-1] = rho * (
        1 / dt * (dudx + dvdy)
        - dudx**2
        - 2 * ((u[2:, 1:-1] - u[0:-2, 1:-1]) / (2 * dy) * (v[1:-1, 2:] - v[1:-1, 0:-2]) / (2 * dx))
        - dvdy**2
    )
    return b


def pressure_poisson(p, dx, dy, b):
    """CFD step 11: Jacobi sweeps of the pressure, Neumann on three sides, p = 0 on top."""
    pn = np.empty_like(p)
    for _ in range(PRESSURE_SWEEPS):
        pn = p.copy()
        p[1:-1, 1:-1] = (
            (pn[1:-1, 2:] + pn[1:-1, 0:-2]) * dy**2 + (pn[2:, 1:-1] + pn[0:-2, 1:-1]) * dx**2
        ) / (2 * (dx**2 + dy**2)) - dx**2 * dy**2 / (2 * (dx**2 + dy**2)) * b[1:-1, 1:-1]
        p[:, -1] = p[:, -2]
        p[0, :] = p[1, :]
        p[:, 0] = p[:, 1]
        p[-1, :] = 0
    return p


def cavity_flow(u0, nu):
    """CFD step 11: lid-driven cavity, as the course writes it (helpers called each step
    between the writes into ``u`` and ``v``, walls and lid set by slice stores)."""
    dt, dx, dy, rho = 0.05, 0.5, 0.5, 1.0
    u = u0.copy()
    v = np.zeros_like(u0)
    p = np.zeros_like(u0)
    b = np.zeros_like(u0)
    for _ in range(2):
        un = u.copy()
        vn = v.copy()
        b = build_up_b(b, rho, dt, u, v, dx, dy)
        p = pressure_poisson(p, dx, dy, b)
        u[1:-1, 1:-1] = (
            un[1:-1, 1:-1]
            - un[1:-1, 1:-1] * dt / dx * (un[1:-1, 1:-1] - un[1:-1, 0:-2])
            - vn[1:-1, 1:-1] * dt / dy * (un[1:-1, 1:-1] - un[0:-2, 1:-1])
            - dt / (2 * rho * dx) * (p[1:-1, 2:] - p[1:-1, 0:-2])
            + nu * dt / dx**2 * (un[1:-1, 2:] - 2 * un[1:-1, 1:-1] + un[1:-1, 0:-2])
            + nu * dt / dy**2 * (un[2:, 1:-1] - 2 * un[1:-1, 1:-1] + un[0:-2, 1:-1])
        )
        v[1:-1, 1:-1] = (
            vn[1:-1, 1:-1]
            - un[1:-1, 1:-1] * dt / dx * (vn[1:-1, 1:-1] - vn[1:-1, 0:-2])
            - vn[1:-1, 1:-1] * dt / dy * (vn[1:-1, 1:-1] - vn[0:-2, 1:-1])
            - dt / (2 * rho * dy) * (p[2:, 1:-1] - p[0:-2, 1:-1])
            + nu * dt / dx**2 * (vn[1:-1, 2:] - 2 * vn[1:-1, 1:-1] + vn[1:-1, 0:-2])
            + nu * dt / dy**2 * (vn[2:, 1:-1] - 2 * vn[1:-1, 1:-1] + vn[0:-2, 1:-1])
        )
        u[0, :] = 0
        u[:, 0] = 0
        u[:, -1] = 0
        u[-1, :] = 1
        v[0, :] = 0
        v[-1, :] = 0
        v[:, 0] = 0
        v[:, -1] = 0
    return np.sum(u**2) + np.sum(v**2) + np.sum(p**2)


RNG = np.random.default_rng(7)
F1 = RNG.uniform(0.5, 1.5, 7)
F2 = RNG.uniform(0.0, 1.0, (5, 4))
F8 = RNG.uniform(-0.8, 0.8, 8)

PROGRAMS = [
    (burgers_1d, F1, 0.07, ()),
    (diffusion_2d, F2, 0.3, ()),
    (laplace_jacobi, F2, 0.6, ()),
    (heat_periodic, F1 - 1.0, 0.2, ()),
    (heat_periodic_2d, F2, 0.15, ()),
    (wave_extrapolated, F1 - 1.0, 0.4, ()),
    (upwind_shift, F8, 0.7, ()),
    (batched_edges, F2, 0.9, (1, 3)),
    (cavity_flow, RNG.uniform(0.0, 1.0, (5, 5)), 0.1, ()),
]
IDS = [p[0].__name__ for p in PROGRAMS]


@pytest.mark.parametrize(("f", "field", "coef", "rest"), PROGRAMS, ids=IDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gradient_in_field_and_coefficient(f, field, coef, rest, dtype):
    got = check_grad(f, field.astype(dtype), dtype(coef), *rest, wrt=(0, 1))
    assert got[0].dtype == dtype


def _hvp_against_differences(f, args, k, v, rtol, h=1e-4):
    """``hvp(f, wrt=k)`` along ``v`` against central differences of the float64 gradient."""
    g = pullback.grad(f, wrt=k)
    wide = [np.asarray(a, np.float64) if isinstance(a, np.ndarray) else a for a in args]

    def moved(s):
        out = list(wide)
        out[k] = wide[k] + s * np.float64(v)
        return g(*out)

    want = (moved(h) - moved(-h)) / (2 * h)
    got = pullback.hvp(f, wrt=k)(*args, v)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * 1e-1 * np.max(np.abs(want)))
    return got


@pytest.mark.parametrize(("f", "field", "coef", "rest"), PROGRAMS, ids=IDS)
def test_hessian_vector_products_in_the_field(f, field, coef, rest):
    direction = RNG.standard_normal(field.shape)
    _hvp_against_differences(f, (field, coef, *rest), 0, direction, 1e-5)


SAMPLED = sweep(PROGRAMS, quick=3)


@pytest.mark.parametrize(
    ("f", "field", "coef", "rest"), SAMPLED, ids=[p[0].__name__ for p in SAMPLED]
)
def test_hessian_vector_products_in_the_coefficient_and_in_float32(f, field, coef, rest):
    _hvp_against_differences(f, (field, coef, *rest), 1, 1.0, 1e-5)
    direction = RNG.standard_normal(field.shape)
    low = pullback.hvp(f)(
        field.astype(np.float32), np.float32(coef), *rest, direction.astype(np.float32)
    )
    assert low.dtype == np.float32
    want = pullback.hvp(f)(field, coef, *rest, direction)
    np.testing.assert_allclose(low, want, rtol=2e-3, atol=2e-3 * np.max(np.abs(want)))


@pytest.mark.parametrize(("f", "field", "coef", "rest"), PROGRAMS, ids=IDS)
def test_jvp_in_field_and_coefficient(f, field, coef, rest):
    tangent = RNG.standard_normal(field.shape)

    def at(x, c):  # the integers stay fixed: jvp takes a tangent for every argument
        return f(x, c, *rest)

    check_jvp(at, (field, coef), (tangent, 0.5))


def test_the_overlapping_shift_is_numpys():
    """``u[1:] = u[:-1]`` moves every cell one place on (NumPy reads the right side
    first): the gradient is the one of the same program with the copy written out."""

    def shifted_copy(u0, c):
        u = u0 * 1.0
        for _ in range(3):
            u[1:] = u[:-1].copy()
            u[0] = c * u[1] ** 2
        u[::2] = u[1::2].copy()
        return np.sum(u**3)

    assert upwind_shift(F8, 0.7) == shifted_copy(F8, 0.7)
    want = pullback.grad(shifted_copy, wrt=(0, 1))(F8, 0.7)
    got = pullback.grad(upwind_shift, wrt=(0, 1))(F8, 0.7)
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1] == want[1]


def _interior(u):
    return u[1:-1]


def interior_kept(x):
    u = x * 2.0
    inside = _interior(u)
    u[0] = u[1]
    return np.sum(inside * x[1:-1])


def test_a_view_a_helper_returns_is_kept_and_refused():
    """A helper may read the array between boundary writes; one that returns a view of
    it hands the caller another name of the array, which the write would change."""
    with pytest.raises(UnsupportedSyntaxError) as info:
        pullback.grad(interior_kept)(F1)
    line = interior_kept.__code__.co_firstlineno
    assert str(info.value).endswith(
        f"{HERE}:{line + 3}:5: PB101 array mutation: assignment to an element of 'u'\n"
        "        u[0] = u[1]\n"
        "        ^^^^\n"
        f"    'u' is also used on line {line + 2} in a way that may let another name (an alias "
        "or a view such as `v = b[1:3]`, `b.T`, `b.reshape(...)`) or a call keep its array, "
        "and a write would change what that name sees.\n"
        "    Fix: copy what that line keeps (`v = b[1:3].copy()`), or build a new array, e.g. "
        "`u = np.where(np.arange(u.size) == 0, u[1], u)` (see docs/limitations.md#PB101)."
    )


def edge_swaps(u0, c):
    u = np.sin(u0 * c)
    u[0], u[-1] = u[-1], u[0]  # numbers: read first, a swap
    u[1], u[2] = 2 * u[2], u[1]
    return np.sum(u**3 * np.arange(u.size))


def row_swap(p0, c):
    p = p0 * c
    p[0], p[1] = p[1], p[0]
    return np.sum(p**3 * np.arange(p.size).reshape(p.shape))


def test_a_tuple_store_of_numbers_of_the_array_swaps():
    check_grad(edge_swaps, F1, 0.8, wrt=(0, 1))
    check_grad(edge_swaps, F1.astype(np.float32), np.float32(0.8), wrt=(0, 1))


def test_a_tuple_store_of_overlapping_rows_is_refused_when_it_runs():
    """NumPy copies ``p[0]`` (a view) after ``p[0] = p[1]`` ran: both rows end equal, not
    swapped; reading first would differ, so that is refused, with the integer-array fix."""
    line = row_swap.__code__.co_firstlineno + 2
    with pytest.raises(UnsupportedCallError) as info:
        pullback.grad(row_swap, wrt=(0, 1))(F2, 0.3)
    assert str(info.value) == (
        f"{row_swap.__code__.co_filename}:{line}: a tuple store whose value is a view of the "
        "array it writes, overlapping a part an earlier target writes: NumPy copies that view "
        "after the earlier store, so it shows the new values (`p[0], p[1] = p[1], p[0]` "
        "leaves both rows equal), which pullback does not model. Fix: write the stores one "
        "per line in the order NumPy runs them, or index with integer arrays to read first "
        "(`p[[0, 1]] = p[[1, 0]]` swaps the rows).\n"
        "        p[0], p[1] = p[1], p[0]"
    )


def copyto_edges(x):
    """The edges written by ``np.copyto`` into parts of the array, as ``u[0] = u[-2]``."""
    u = np.zeros((4, 3))
    u[1:-1] = x.reshape(2, 3)
    for _ in range(2):
        u[1:-1] = u[1:-1] * u[2:] + u[:-2]
        np.copyto(u[0], u[-2])
        np.copyto(u[:, -1], 2 * u[:, 1])
    return np.sum(u[0] * u[-1]) + np.sum(u[1:-1] ** 2)


def copyto_into_ints(x):
    u = np.zeros((2, 3), dtype=int)
    np.copyto(u[0], x[:3])  # NumPy refuses float into int (casting="same_kind")
    return np.sum(u * x[3:])


def copyto_masked_part(x):
    u = x.reshape(2, 3) * 1.0
    np.copyto(u[0], u[1], where=u[1] > 0.5)
    return np.sum(u**3)


def test_copyto_into_a_part_is_the_store():
    x = F1[:6]
    check_grad(copyto_edges, x)
    check_grad(copyto_edges, x.astype(np.float32))
    want = pullback.hessian(copyto_edges)(x)
    h = 1e-5
    eye = np.eye(x.size)
    diff = [
        (pullback.grad(copyto_edges)(x + h * e) - pullback.grad(copyto_edges)(x - h * e)) / (2 * h)
        for e in eye
    ]
    np.testing.assert_allclose(want, np.array(diff), rtol=1e-5, atol=1e-7)


def test_copyto_into_a_part_raises_what_numpy_raises():
    with pytest.raises(TypeError) as primal:
        copyto_into_ints(F1[:6])
    with pytest.raises(TypeError) as info:
        pullback.grad(copyto_into_ints)(F1[:6])
    assert str(info.value) == str(primal.value)


def test_copyto_into_a_part_with_a_mask_is_refused_with_the_store():
    with pytest.raises(UnsupportedSyntaxError) as info:
        pullback.grad(copyto_masked_part)(F1[:6])
    line = copyto_masked_part.__code__.co_firstlineno + 2
    assert str(info.value).endswith(
        f"{HERE}:{line}:5: PB104 array mutation: 'numpy.copyto' writes into its argument\n"
        "        np.copyto(u[0], u[1], where=u[1] > 0.5)\n"
        "        ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
        "    This call writes into an existing array, which a differentiated function may not "
        "do.\n"
        "    Fix: write the store `u[0] = np.where(u[1] > 0.5, u[1], u[0])` (a part of an "
        "array), or rebind the name instead: `u[0] = u[1] * np.ones_like(u[0])` (see "
        "docs/limitations.md#PB104)."
    )
