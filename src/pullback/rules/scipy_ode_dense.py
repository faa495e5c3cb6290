"""The adjoint of ``solve_ivp`` as a linear ODE on the forward solution's own steps.

The adjoint system ``a' = -J_y(t)^T a``, ``g' = -J_p(t)^T a`` (``scipy_ode_adjoint``) is
linear in ``(a, g)`` once the forward trajectory ``y(t)`` is known, and the forward solve
already knows it: ``solve_ivp`` keeps one interpolant per accepted step (``dense_output``; the
values at ``t_eval`` come from the same interpolants). So instead of solving the augmented
system backwards (``y`` again, with one reverse pass of the right-hand side per solver
stage), this module

1. evaluates the Jacobians ``J_y`` and ``J_p`` at Gauss-Legendre nodes of every forward step
   (split at the output times) in ``n`` reverse passes of the right-hand side over all the
   nodes at once: ``y`` of shape ``(n, m)``, ``t`` of shape ``(m,)`` and the parameters
   spread over the nodes, as NumPy broadcasting gives it (the states there from the
   forward's interpolants, RK45's and RK23's in one product: :func:`fast_interpolant`);
2. turns each step into the exact propagator of the Gauss collocation method (4 stages,
   order 8) for ``a`` and the matching increment of ``g`` (one batched linear solve);
3. checks each step against the 3-stage method (order 6): a step whose propagator differs
   by more than ``rtol * |propagator| + atol`` is bisected and evaluated again, until every
   step passes (the caller's tolerances, as the solver holds them for ``y``);
4. sweeps backwards through the propagators, adding each output's cotangent at its time.

It needs a right-hand side that evaluates column by column on such arrays: that is checked
against ordinary calls at a few nodes, and :func:`linear_adjoint` returns ``None`` (the
caller then solves the augmented system) when it does not hold or anything fails, and
for a system whose Jacobians at every step would take more than ``MAX_FLOATS`` floats.
"""

from __future__ import annotations

import functools

import numpy as np

STAGES = 4  # the collocation method of the propagators
CHECK_STAGES = 3  # the lower-order method their error is estimated against
MAX_ROUNDS = 12  # bisections of a step before giving up on this way
# The Jacobians and propagators of all the steps are held at once, (stages * steps) * n *
# (n + parameters) floats: past this many (128 MB) the augmented system, whose memory does
# not grow with the number of steps, is the way.
MAX_FLOATS = 2**24


@functools.lru_cache(maxsize=4)
def collocation(s):
    """``(c, alpha, b)`` of the s-stage Gauss collocation method on [0, 1]: nodes, the
    integrals of the Lagrange basis from 0 to each node, and the weights."""
    x, w = np.polynomial.legendre.leggauss(s)
    c, b = (x + 1) / 2, w / 2
    k = np.arange(s)
    vander = c[:, None] ** k  # V[i, k] = c_i^k
    integrals = c[:, None] ** (k + 1) / (k + 1)  # int_0^{c_i} tau^k
    alpha = integrals @ np.linalg.inv(vander)
    return c, alpha, b


class Jacobians:
    """``J_y`` and ``J_p`` of the right-hand side at many ``(t, y)`` at once."""

    def __init__(self, rhs):
        from ._calculus_util import float_tree, user_vjp_of

        self.rhs = rhs
        self.pack = rhs.pack
        self.trees = [float_tree(rhs.pack.args[k]) for k in rhs.pack.index]
        y_at = 1 if rhs.tfirst else 0
        self.vjp = user_vjp_of(rhs.fn, (y_at,) + tuple(2 + k for k in self.pack.index))

    def __call__(self, t, Y):
        """``(J_y, J_p)`` of shapes ``(m, n, n)`` and ``(m, n, P)`` at ``t`` (m,), ``Y``
        (n, m); ``None`` if the right-hand side does not evaluate column by column."""
        n, m = Y.shape
        args = list(self.pack.args)
        if any(self.trees):
            return None  # a tree of parameters (rules/_args_trees.py): the general path
        for k in self.pack.index:  # each node gets its own copy of the parameters
            v = np.asarray(args[k], dtype=np.float64)
            args[k] = np.broadcast_to(v[..., None], v.shape + (m,)).copy()
        call = ((t, Y) if self.rhs.tfirst else (Y, t)) + tuple(args)
        try:
            f, back = self.vjp(call)
            if np.shape(f) != (n, m) or not self._agrees(f, t, Y):
                return None
            jy = np.empty((m, n, n))
            jp = np.empty((m, n, self.pack.size))
            for i in range(n):
                seed = np.zeros((n, m))
                seed[i] = 1.0
                cots = back(seed)
                jy[:, i, :] = np.asarray(cots[0], dtype=np.float64).T
                parts = [np.reshape(np.asarray(c, dtype=np.float64), (-1, m)) for c in cots[1:]]
                if parts:
                    jp[:, i, :] = np.concatenate(parts, axis=0).T
        except Exception:  # written for one state at a time: the general path
            return None
        return jy, jp

    def _agrees(self, f, t, Y):
        """Whether the columns of the batched call are the ordinary calls (three of them)."""
        m = Y.shape[1]
        for j in sorted({0, m // 2, m - 1}):
            one = self.rhs(t[j], Y[:, j])
            col = np.asarray(f[:, j], dtype=np.float64)
            if not np.allclose(col, one, rtol=1e-10, atol=1e-12 * (1 + np.max(np.abs(one)))):
                return False
        return True


def step_nodes(lo, hi, s):
    """The collocation nodes of every step from ``hi`` back to ``lo``, ``(L * s,)``."""
    c, _, _ = collocation(s)
    return np.ravel(hi[:, None] + c[None, :] * (lo - hi)[:, None])


def step_propagators(jy, jp, lo, hi, s):
    """For each step from ``hi`` back to ``lo``, from the Jacobians at its ``s`` nodes
    (:func:`step_nodes`): the propagator ``Phi`` of ``a`` (``a(lo) = Phi a(hi)``) and
    ``Gam`` with ``g(lo) = g(hi) + Gam a(hi)``, by s-stage Gauss collocation."""
    _, alpha, b = collocation(s)
    h = lo - hi  # backwards: negative for a forward solve that ran up in time
    L, n, P = lo.size, jy.shape[1], jp.shape[2]
    M = -np.swapaxes(jy, 1, 2).reshape(L, s, n, n)  # a' = M a
    N = -np.swapaxes(jp, 1, 2).reshape(L, s, P, n)  # g' = N a
    # Stages A_i = a0 + h sum_l alpha_il M_l A_l:  (I - h alpha (x) M) A = (1 (x) I) a0.
    blocks = h[:, None, None, None, None] * alpha[None, :, :, None, None] * M[:, None, :, :, :]
    system = np.eye(s * n) - blocks.transpose(0, 1, 3, 2, 4).reshape(L, s * n, s * n)
    rhs = np.broadcast_to(np.tile(np.eye(n), (s, 1)), (L, s * n, n))
    K = np.linalg.solve(system, rhs).reshape(L, s, n, n)  # A_i = K_i a0
    hb = h[:, None] * b[None, :]
    phi = np.eye(n) + np.einsum("ls,lsij,lsjk->lik", hb, M, K)
    gam = np.einsum("ls,lspj,lsjk->lpk", hb, N, K)
    return phi, gam


def checked_propagators(jac, interp, lo, hi, rtol):
    """Propagators on steps bisected until the 4- and 3-stage methods agree to ``rtol``
    (relative to the propagator, which is close to the identity): ``(lo, hi, Phi, Gam)``
    sorted by ``lo``, or ``None``."""
    done = []
    for _ in range(MAX_ROUNDS):
        # one batched evaluation at the nodes of both methods
        tau = np.concatenate((step_nodes(lo, hi, STAGES), step_nodes(lo, hi, CHECK_STAGES)))
        found = jac(tau, interp(tau))
        if found is None:
            return None
        cut = lo.size * STAGES
        jy, jp = found
        high = step_propagators(jy[:cut], jp[:cut], lo, hi, STAGES)
        low = step_propagators(jy[cut:], jp[cut:], lo, hi, CHECK_STAGES)
        both = np.concatenate(high, axis=1)  # (L, n + P, n)
        diff = np.max(np.abs(both - np.concatenate(low, axis=1)), axis=(1, 2))
        ok = diff <= rtol * np.max(np.abs(both), axis=(1, 2))
        done.append((lo[ok], hi[ok], high[0][ok], high[1][ok]))
        if ok.all():
            parts = [np.concatenate(p) for p in zip(*done, strict=True)]
            order = np.argsort(parts[0], kind="stable")
            return tuple(p[order] for p in parts)
        mid = (lo[~ok] + hi[~ok]) / 2
        lo, hi = np.concatenate((lo[~ok], mid)), np.concatenate((mid, hi[~ok]))
    return None


def fast_interpolant(dense):
    """``dense`` (the forward solve's ``OdeSolution``) as a function of many times at once,
    with the Runge-Kutta interpolants of RK45 and RK23 evaluated in one product over all
    the times instead of one call per step (the polynomial each interpolant is: ``y_old +
    h Q (x, x^2, ...)``, ``x`` the step's fraction); checked against ``dense`` at three
    times, and ``dense`` itself for any other interpolant."""
    try:
        from scipy.integrate._ivp.rk import RkDenseOutput
    except ImportError:  # pragma: no cover - another SciPy layout: one call per step
        return dense
    items = dense.interpolants
    if not items or any(type(i) is not RkDenseOutput for i in items):
        return dense
    if len({i.Q.shape for i in items}) != 1:
        return dense
    t_old = np.array([i.t_old for i in items], dtype=np.float64)
    h = np.array([i.h for i in items], dtype=np.float64)
    y_old = np.stack([i.y_old for i in items])  # (K, n)
    Q = np.stack([i.Q for i in items])  # (K, n, order + 1)
    last = len(items) - 1

    def evaluate(tau):
        # the step of each time as OdeSolution chooses it
        seg = np.clip(np.searchsorted(dense.ts_sorted, tau, side=dense.side) - 1, 0, last)
        if not dense.ascending:
            seg = last - seg
        x = (tau - t_old[seg]) / h[seg]
        powers = np.cumprod(np.repeat(x[:, None], Q.shape[2], axis=1), axis=1)
        y = h[seg][:, None] * np.einsum("mnk,mk->mn", Q[seg], powers) + y_old[seg]
        return y.T

    probe = dense.ts[0] + (dense.ts[-1] - dense.ts[0]) * np.array([0.1, 0.5, 0.9])
    if not np.allclose(evaluate(probe), dense(probe), rtol=1e-12, atol=0.0):
        return dense
    return evaluate


def linear_adjoint(rhs, interp, steps, ts, ys, dys, rtol):
    """What ``scipy_ode_adjoint.adjoint_sweep`` returns — ``(a(t0), parameter cotangent, time
    cotangents of ts[1:], of ts[0])`` for the states ``ys[k]`` at ``ts[k]`` (``ts[0]``, ``ys[0]``
    the initial ones) with cotangents ``dys[k - 1]`` — on the forward solve's own steps
    (``steps``: its accepted times; ``interp``: its dense output), or ``None`` where this
    way does not apply."""
    ts = np.asarray(ts, dtype=np.float64)
    sign = 1.0 if ts[-1] >= ts[0] else -1.0
    # Work in u = sign * t, increasing: the grid is the steps and the output times.
    u = sign * ts
    grid = np.unique(np.concatenate((sign * np.asarray(steps, dtype=np.float64), u)))
    grid = grid[(grid >= u[0]) & (grid <= u[-1])]
    n = np.size(ys[0])
    if grid.size * (STAGES + CHECK_STAGES) * n * (n + rhs.pack.size) > MAX_FLOATS:
        return None
    a = np.zeros(n)
    g = np.zeros(rhs.pack.size)
    if grid.size >= 2:
        jac = Jacobians(rhs)

        def jac_u(uu, Y):
            found = jac(sign * uu, Y)
            if found is None:
                return None
            return sign * found[0], sign * found[1]  # d/du = sign d/dt

        at = fast_interpolant(interp)
        checked = checked_propagators(jac_u, lambda uu: at(sign * uu), grid[:-1], grid[1:], rtol)
        if checked is None:
            return None
        lo, hi, phi, gam = checked
    else:
        lo = hi = np.zeros(0)
    t_cots = np.zeros(len(ts) - 1)
    jumps = {}  # output k adds its cotangent when the sweep comes down to u[k]
    for k in range(len(ts) - 1, 0, -1):
        jumps.setdefault(u[k], []).append(k)

    def jump(at, a):
        for k in jumps.pop(at, ()):
            d = np.ravel(np.asarray(dys[k - 1], dtype=np.float64))
            if d.any():
                t_cots[k - 1] = d @ rhs(ts[k], ys[k])
                a = a + d
        return a

    for j in range(lo.size - 1, -1, -1):
        a = jump(hi[j], a)
        g = g + gam[j] @ a
        a = phi[j] @ a
    a = jump(u[0], a)  # outputs at the initial time
    if jumps:
        return None
    return a, g, t_cots, -(a @ rhs(ts[0], ys[0]))
