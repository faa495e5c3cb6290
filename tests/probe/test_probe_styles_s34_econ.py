# ruff: noqa: B905 - written the way public code is written
"""Probe s34: economics and control code as lecture notes and course scripts write it.

QuantEcon-lecture style models: value function iteration of a cake-eating problem with
``np.interp`` on a grid and ``np.max`` over a choice axis, an optimal-growth Bellman operator
kept as a class (``__init__`` storing the primitives, ``u``/``f`` methods and a ``T(v)``
method looping over the grid), McCall job search iterated to its reservation wage, Euler
equation residuals of a CRRA growth model, the stationary distribution of a Markov chain by
``np.linalg.solve`` of ``I - P.T`` with a normalisation row, a Tauchen discretisation filled
entry by entry with ``scipy.stats.norm.cdf``, a Lucas tree price-dividend ratio, a Kalman
filter object for a local-level model, present values of cash-flow streams by discount loops,
Cobb-Douglas and CES utilities and production, a Solow path, a Gini coefficient and GMM
moments of an Euler equation; and control written by hand: LQR by a Riccati iteration, a
finite-horizon rollout ``x = A @ x + B @ u``, an MPC cost with clipped controls, a PID loop
over a simulated first-order plant and a steady-state Kalman gain. Each is differentiated
with respect to the model parameters (beta, gamma, alpha, sigma, gains) against central
differences (probe_harness.py).
"""

import functools
from collections import namedtuple

import numpy as np
from probe_harness import probe_tests, refusal_test
from scipy.interpolate import interp1d
from scipy.linalg import expm, solve_discrete_are
from scipy.optimize import brentq, fminbound
from scipy.stats import norm

# -- dynamic programming -----------------------------------------------------------------------


def cake_eating_vfi(beta, x_grid, n_iter=8):
    """Cake eating: v(x) = max_c u(c) + beta v(x - c), choices on the grid itself."""
    v = np.log(x_grid)
    c = x_grid[:, None] - x_grid[None, :]          # consume down to each grid point
    feasible = c > 0
    u = np.where(feasible, np.log(np.where(feasible, c, 1.0)), -1e10)
    for _ in range(n_iter):
        next_v = np.interp(x_grid - np.where(feasible, c, 0.0), x_grid, v)
        v = np.max(u + beta * next_v, axis=1)
    return np.sum(v)


class OptimalGrowthModel:
    """The stochastic optimal growth model, primitives kept on the instance."""

    def __init__(self, alpha=0.4, beta=0.96, gamma=1.5, grid_max=4.0, grid_size=12,
                 shock_size=5, seed=1234):
        self.alpha, self.beta, self.gamma = alpha, beta, gamma
        self.grid = np.linspace(1e-2, grid_max, grid_size)
        rng = np.random.default_rng(seed)
        self.shocks = np.exp(0.1 * rng.standard_normal(shock_size))

    def u(self, c):
        return (c ** (1 - self.gamma) - 1) / (1 - self.gamma)

    def f(self, k):
        return k ** self.alpha

    def T(self, v):
        """The Bellman operator on a grid of consumption shares."""
        v_new = np.empty_like(v)
        shares = np.linspace(0.1, 0.9, 9)
        for i, y in enumerate(self.grid):
            c = shares * y
            k_next = y - c
            y_next = self.f(k_next)[:, None] * self.shocks[None, :]
            ev = np.mean(np.interp(y_next, self.grid, v), axis=1)
            v_new[i] = np.max(self.u(c) + self.beta * ev)
        return v_new


def growth_value(alpha):
    og = OptimalGrowthModel(alpha=alpha)
    v = og.u(og.grid)
    for _ in range(4):
        v = og.T(v)
    return np.mean(v)


def growth_value_beta(beta):
    og = OptimalGrowthModel(beta=beta, gamma=2.0)
    v = og.u(og.grid)
    for _ in range(4):
        v = og.T(v)
    return v[-1] - v[0]


def mccall_reservation_wage(c, w, q, beta=0.96, tol=1e-9, max_iter=200):
    """McCall job search: value of accepting, of rejecting; iterate to the fixed point."""
    v = w / (1 - beta)
    i = 0
    error = tol + 1
    while i < max_iter and error > tol:
        v_next = np.maximum(w / (1 - beta), c + beta * np.sum(v * q))
        error = np.max(np.abs(v_next - v))
        i += 1
        v = v_next
    return (1 - beta) * (c + beta * np.sum(v * q))


def euler_residuals(theta, k_grid, policy_coef):
    """Euler equation errors of a deterministic growth model with a linear-in-logs policy."""
    alpha, beta, gamma = theta
    delta = 0.1

    def policy(k):
        return np.exp(policy_coef[0] + policy_coef[1] * np.log(k))

    c = policy(k_grid)
    k_next = k_grid ** alpha + (1 - delta) * k_grid - c
    c_next = policy(k_next)
    R = alpha * k_next ** (alpha - 1) + 1 - delta
    resid = beta * R * (c_next / c) ** (-gamma) - 1
    return np.sum(resid ** 2)


def gmm_euler_moments(theta, cons, returns):
    """Hansen-Singleton moments: E[beta (c'/c)^-gamma R - 1] times instruments."""
    beta, gamma = theta
    growth = cons[1:] / cons[:-1]
    m = beta * growth ** (-gamma) * returns[1:] - 1
    instruments = np.column_stack([np.ones_like(m), growth, returns[:-1]])
    g = instruments.T @ m / len(m)
    return g @ g


# -- Markov chains -----------------------------------------------------------------------------


def stationary_distribution(P):
    n = P.shape[0]
    A = np.vstack([(np.eye(n) - P.T)[:-1], np.ones((1, n))])
    b = np.zeros(n)
    b[-1] = 1.0
    return np.linalg.solve(A, b)


def two_state_mean(pq, values):
    p, q = pq
    P = np.array([[1 - p, p], [q, 1 - q]])
    psi = stationary_distribution(P)
    return psi @ values


def softmax_chain_moment(logits, values):
    P = np.exp(logits)
    P = P / P.sum(axis=1, keepdims=True)
    psi_star = stationary_distribution(P)
    return psi_star @ values ** 2


def tauchen(rho, sigma_u, m=3, n=5):
    """Tauchen's method: an n-state chain approximating an AR(1) process."""
    std_y = np.sqrt(sigma_u ** 2 / (1 - rho ** 2))
    x_max = m * std_y
    x = np.linspace(-x_max, x_max, n)
    step = (x_max - (-x_max)) / (n - 1)
    half_step = 0.5 * step
    P = np.empty((n, n))
    for i in range(n):
        P[i, 0] = norm.cdf((x[0] - rho * x[i] + half_step) / sigma_u)
        P[i, n - 1] = 1 - norm.cdf((x[n - 1] - rho * x[i] - half_step) / sigma_u)
        for j in range(1, n - 1):
            z = x[j] - rho * x[i]
            P[i, j] = norm.cdf((z + half_step) / sigma_u) - norm.cdf((z - half_step) / sigma_u)
    return x, P


def tauchen_variance(params):
    rho, sigma = params
    x, P = tauchen(rho, sigma)
    psi = stationary_distribution(P)
    return psi @ x ** 2


def lucas_tree_price(gamma, beta=0.95):
    """Price-dividend ratio of a Lucas tree with a two-state dividend growth chain."""
    growth = np.array([0.97, 1.05])
    P = np.array([[0.8, 0.2], [0.3, 0.7]])
    J = P * growth[None, :] ** (1 - gamma)
    I = np.identity(2)
    v = np.linalg.solve(I - beta * J, beta * J @ np.ones(2))
    return v[0] + 2 * v[1]


def markov_path_value(beta, P, r):
    """Expected discounted reward by powers of P, as the lecture writes it."""
    psi = np.array([1.0, 0.0, 0.0])
    total = 0.0
    for t in range(6):
        total += beta ** t * psi @ np.linalg.matrix_power(P, t) @ r
    return total


# -- state space models ------------------------------------------------------------------------


class Kalman:
    """A local-level model y_t = x_t + v_t, x_t+1 = x_t + w_t, filtered step by step."""

    def __init__(self, A, G, Q, R):
        self.A, self.G, self.Q, self.R = A, G, Q, R

    def set_state(self, x_hat, Sigma):
        self.x_hat = x_hat
        self.Sigma = Sigma

    def prior_to_filtered(self, y):
        G, R = self.G, self.R
        S = G @ self.Sigma @ G.T + R
        K = self.Sigma @ G.T @ np.linalg.inv(S)
        innovation = y - G @ self.x_hat
        self.x_hat = self.x_hat + K @ innovation
        self.Sigma = self.Sigma - K @ G @ self.Sigma
        return innovation, S

    def filtered_to_forecast(self):
        A, Q = self.A, self.Q
        self.x_hat = A @ self.x_hat
        self.Sigma = A @ self.Sigma @ A.T + Q


def local_level_loglik(q, ys):
    kn = Kalman(A=np.eye(1), G=np.eye(1), Q=q * np.eye(1), R=0.5 * np.eye(1))
    kn.set_state(np.zeros(1), np.eye(1))
    loglik = 0.0
    for y in ys:
        e, S = kn.prior_to_filtered(np.atleast_1d(y))
        loglik += -0.5 * (np.log(2 * np.pi * S[0, 0]) + e[0] ** 2 / S[0, 0])
        kn.filtered_to_forecast()
    return loglik


def linear_state_space_moments(a, C, G, T=10):
    """The unconditional moments of x' = A x + C w by their recursions."""
    A = np.array([[a, 0.1], [0.0, 0.5]])
    mu_x = np.array([1.0, 0.0])
    Sigma_x = np.zeros((2, 2))
    for _ in range(T):
        mu_x = A @ mu_x
        Sigma_x = A @ Sigma_x @ A.T + C @ C.T
    mu_y = G @ mu_x
    Sigma_y = G @ Sigma_x @ G.T
    return mu_y @ mu_y + np.trace(Sigma_y)


# -- present values, utility and production ----------------------------------------------------


def present_value(r, cash_flows):
    pv = 0.0
    for t, cf in enumerate(cash_flows):
        pv += cf / (1 + r) ** t
    return pv


def bond_price_from_forwards(forwards, coupon=0.05, face=100.0):
    discount = 1.0
    price = 0.0
    for t, f in enumerate(forwards):
        discount /= 1 + f
        cf = coupon * face + (face if t == len(forwards) - 1 else 0.0)
        price += cf * discount
    return price


def npv_with_growth(g, r=0.08, c0=10.0, years=12):
    flows = [c0 * (1 + g) ** t for t in range(1, years + 1)]
    discounts = [(1 + r) ** -t for t in range(1, years + 1)]
    return sum(c * d for c, d in zip(flows, discounts))


def cobb_douglas_utility(alphas, x):
    return np.prod(x ** alphas)


def ces_production(params, k, l):
    a, sigma = params
    rho = (sigma - 1) / sigma
    return np.sum((a * k ** rho + (1 - a) * l ** rho) ** (1 / rho))


def crra_expected_utility(gamma, c, probs):
    if gamma == 1:
        u = np.log(c)
    else:
        u = (c ** (1 - gamma) - 1) / (1 - gamma)
    return probs @ u


def solow_path(alpha, s=0.3, delta=0.1, k0=1.0, T=20):
    k = np.empty(T)
    k[0] = k0
    for t in range(T - 1):
        k[t + 1] = s * k[t] ** alpha + (1 - delta) * k[t]
    return k[-1]


def gini(wealth):
    w = np.sort(wealth)
    n = len(w)
    idx = np.arange(1, n + 1)
    return (2 * np.sum(idx * w)) / (n * np.sum(w)) - (n + 1) / n


# -- control by hand ---------------------------------------------------------------------------


def lqr_riccati_cost(a, B, Q, R, n_iter=40):
    """Iterate the discrete Riccati equation; the value matrix's trace."""
    A = np.array([[1.0, a], [0.0, 1.0]])
    P = Q.copy()
    for _ in range(n_iter):
        F = np.linalg.solve(R + B.T @ P @ B, B.T @ P @ A)
        P = Q + A.T @ P @ (A - B @ F)
    return np.trace(P)


def lqr_gain_closed_loop(q, A, B, x0):
    Q = q * np.eye(2)
    R = np.array([[1.0]])
    P = np.eye(2)
    for _ in range(30):
        K = np.linalg.inv(R + B.T @ P @ B) @ (B.T @ P @ A)
        P = Q + A.T @ P @ A - A.T @ P @ B @ K
    x = x0
    cost = 0.0
    for _ in range(10):
        u = -K @ x
        cost += x @ x + u @ u
        x = A @ x + B @ u
    return cost


def shooting_rollout(u_seq, A, B, x0, x_target):
    x = x0
    cost = 0.0
    for u in u_seq:
        x = A @ x + B @ u
        cost += 0.01 * (u @ u)
    return cost + np.sum((x - x_target) ** 2)


def mpc_cost(u_seq, A, B, x0, u_max=0.8):
    T = u_seq.shape[0]
    x = x0.copy()
    Q, R, Qf = np.diag([1.0, 0.1]), 0.05, 10 * np.eye(2)
    J = 0.0
    for t in range(T):
        u = np.clip(u_seq[t], -u_max, u_max)
        J += x @ Q @ x + R * u ** 2
        x = A @ x + B[:, 0] * u
    J += x @ Qf @ x
    return J


def pid_tracking_cost(gains, setpoint=1.0, dt=0.05, steps=60, tau=0.5):
    kp, ki, kd = gains
    y = 0.0
    integral = 0.0
    prev_error = setpoint - y
    cost = 0.0
    for _ in range(steps):
        error = setpoint - y
        integral += error * dt
        derivative = (error - prev_error) / dt
        u = kp * error + ki * integral + kd * derivative
        y += dt * (-y + u) / tau
        prev_error = error
        cost += error ** 2 * dt
    return cost


def steady_state_kalman_gain(q, A, C, r=0.3):
    Q = q * np.eye(2)
    P = np.eye(2)
    for _ in range(25):
        P = A @ P @ A.T + Q
        S = C @ P @ C.T + r
        K = P @ C.T @ np.linalg.inv(S)
        P = (np.eye(2) - K @ C) @ P
    return np.sum(K ** 2)


# -- lecture idioms: Greek names, namedtuple models, solvers, endogenous grids ----------------

Model = namedtuple("Model", ("β", "c", "w_grid", "q"))


def create_job_search_model(β=0.96, c=25.0, n=8):
    w_grid = np.linspace(10, 60, n)
    q = np.exp(-0.5 * ((w_grid - 30) / 12) ** 2)
    return Model(β=β, c=c, w_grid=w_grid, q=q / q.sum())


def mccall_greek(β):
    """QuantEcon's spelling: Greek parameters unpacked from a namedtuple model."""
    model = create_job_search_model(β=β)
    β, c, w_grid, q = model.β, model.c, model.w_grid, model.q
    v = w_grid / (1 - β)
    for _ in range(60):
        h = c + β * v @ q
        v = np.maximum(w_grid / (1 - β), h)
    return (1 - β) * h


def reservation_wage_brentq(c, w, q, beta=0.96):
    def excess(wbar):
        return wbar - c - beta / (1 - beta) * np.sum(np.maximum(w - wbar, 0) * q)

    return brentq(excess, 1e-3, w.max())


def stationary_by_eig(pq, values):
    p, q = pq
    P = np.array([[1 - p, p], [q, 1 - q]])
    vals, vecs = np.linalg.eig(P.T)
    k = np.argmin(np.abs(vals - 1))
    v = np.real(vecs[:, k])
    return (v / v.sum()) @ values


def egm_consumption(gamma, grid, R=1.02, beta=0.95):
    """Endogenous grid method: invert the Euler equation, interpolate back on the grid."""
    c = grid.copy()
    for _ in range(3):
        c_endog = (beta * R * c ** (-gamma)) ** (-1 / gamma)
        a_endog = (grid + c_endog) / R
        c = np.interp(grid, a_endog, c_endog)
    return np.sum(c)


def grid_interp_by_hand(scale, grid, x):
    v = scale * np.sqrt(grid)
    i = np.clip(np.searchsorted(grid, x) - 1, 0, len(grid) - 2)
    t = (x - grid[i]) / (grid[i + 1] - grid[i])
    return np.sum((1 - t) * v[i] + t * v[i + 1])


def discretized_oscillator(k, x0):
    """Zero-order-hold discretisation by expm, then a rollout."""
    Ac = np.array([[0.0, 1.0], [-k, -0.3]])
    Ad = expm(Ac * 0.1)
    x = x0
    for _ in range(10):
        x = Ad @ x
    return x @ x


def transition_power_by_reduce(a, n=4):
    A = np.array([[a, 1 - a], [0.3, 0.7]])
    M = functools.reduce(np.dot, [A] * n)
    return M[0] @ np.array([1.0, 2.0])


# Refused, each naming the line and a fix (see the report of probe10):


def bellman_fminbound(beta, grid):
    w = np.log(grid)
    Tw = np.empty_like(w)
    for i, y in enumerate(grid):
        def objective(c):
            return -np.log(c) - beta * np.interp(y - c, grid, w)
        c_star = fminbound(objective, 1e-6, y - 1e-6)
        Tw[i] = -objective(c_star)
    return np.sum(Tw)


def lqr_by_dare(q, A, B):
    P = solve_discrete_are(A, B, q * np.eye(2), np.array([[1.0]]))
    return np.trace(P)


def vfi_interp1d(beta, grid):
    v = np.log(grid)
    for _ in range(4):
        vf = interp1d(grid, v, kind="linear", fill_value="extrapolate")
        v = np.log(grid) + beta * vf(0.5 * grid)
    return v.sum()


# -- data --------------------------------------------------------------------------------------

_r = np.random.default_rng(34)
XG = np.linspace(0.05, 1.0, 10)
WAGES = np.linspace(10, 60, 8)
QW = np.exp(-0.5 * ((WAGES - 30) / 12) ** 2)
QW = QW / QW.sum()
KG = np.linspace(0.5, 4.0, 7)
CONS = np.exp(np.cumsum(0.02 + 0.01 * _r.standard_normal(12)))
RETS = 1.03 + 0.05 * _r.standard_normal(12)
P3 = np.array([[0.9, 0.05, 0.05], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6]])
YS = np.cumsum(0.5 * _r.standard_normal(8))
A2 = np.array([[1.0, 0.1], [0.0, 1.0]])
B2 = np.array([[0.005], [0.1]])
C2 = np.array([[1.0, 0.0]])

PROBES = {
    "cake_eating_vfi": (cake_eating_vfi, (0.9, XG), False),
    "growth_value": (growth_value, (0.37,), False),
    "growth_value_beta": (growth_value_beta, (0.93,), False),
    "mccall_reservation_wage": (mccall_reservation_wage, (25.0, WAGES, QW), True),
    "euler_residuals": (euler_residuals, (np.array([0.33, 0.95, 2.0]), KG,
                                          np.array([-0.3, 0.6])), True),
    "gmm_euler_moments": (gmm_euler_moments, (np.array([0.97, 1.8]), CONS, RETS), True),
    "two_state_mean": (two_state_mean, (np.array([0.2, 0.35]), np.array([1.0, 3.0])), True),
    "softmax_chain_moment": (softmax_chain_moment, (0.3 * _r.standard_normal((3, 3)),
                                                    np.array([1.0, 2.0, -0.5])), True),
    "tauchen_variance": (tauchen_variance, (np.array([0.8, 0.3]),), True),
    "lucas_tree_price": (lucas_tree_price, (2.5,), True),
    "markov_path_value": (markov_path_value, (0.9, P3, np.array([1.0, 0.5, -0.2])), True),
    "local_level_loglik": (local_level_loglik, (0.4, YS), True),
    "linear_state_space_moments": (linear_state_space_moments,
                                   (0.8, np.array([[0.3, 0.0], [0.1, 0.2]]),
                                    np.array([[1.0, 0.5]])), True),
    "present_value": (present_value, (0.05, [-100.0, 20.0, 30.0, 40.0, 50.0]), True),
    "bond_price_from_forwards": (bond_price_from_forwards,
                                 (np.array([0.02, 0.025, 0.03, 0.032]),), True),
    "npv_with_growth": (npv_with_growth, (0.03,), True),
    "cobb_douglas_utility": (cobb_douglas_utility, (np.array([0.3, 0.5, 0.2]),
                                                    np.array([2.0, 1.5, 3.0])), True),
    "ces_production": (ces_production, (np.array([0.4, 0.7]), np.array([1.0, 2.0]),
                                        np.array([1.5, 0.8])), True),
    "crra_expected_utility": (crra_expected_utility, (2.0, np.array([0.8, 1.0, 1.3]),
                                                      np.array([0.2, 0.5, 0.3])), True),
    "solow_path": (solow_path, (0.33,), True),
    "gini": (gini, (np.array([3.0, 1.0, 7.0, 2.5, 0.4]),), True),
    "lqr_riccati_cost": (lqr_riccati_cost, (0.1, B2, np.eye(2), np.array([[0.5]])), True),
    "lqr_gain_closed_loop": (lqr_gain_closed_loop, (2.0, A2, B2, np.array([1.0, 0.0])), False),
    "shooting_rollout": (shooting_rollout, (0.1 * _r.standard_normal((6, 1)), A2, B2,
                                            np.array([1.0, 0.0]), np.array([0.0, 0.0])), True),
    "mpc_cost": (mpc_cost, (np.array([0.5, -0.3, 0.2, 1.2, -0.1]), A2, B2,
                            np.array([1.0, -0.5])), True),
    "pid_tracking_cost": (pid_tracking_cost, (np.array([2.0, 1.0, 0.05]),), True),
    "steady_state_kalman_gain": (steady_state_kalman_gain, (0.1, A2, C2), True),
    "mccall_greek": (mccall_greek, (0.95,), True),
    "reservation_wage_brentq": (reservation_wage_brentq, (25.0, WAGES, QW), True),
    "stationary_by_eig": (stationary_by_eig, (np.array([0.2, 0.35]), np.array([1.0, 3.0])),
                          True),
    "egm_consumption": (egm_consumption, (2.0, np.linspace(0.5, 3.0, 8)), True),
    "grid_interp_by_hand": (grid_interp_by_hand, (1.3, np.linspace(0.5, 3.0, 8),
                                                  np.array([0.7, 1.9, 2.6])), True),
    "discretized_oscillator": (discretized_oscillator, (2.0, np.array([1.0, 0.0])), True),
    "transition_power_by_reduce": (transition_power_by_reduce, (0.6,), True),
    "lqr_by_dare": (lqr_by_dare, (1.0, A2, B2), True),
    # refused (PB301) before interp1d's rules: the points, data and queries all move
    "vfi_interp1d": (vfi_interp1d, (0.9, np.linspace(0.5, 3.0, 6)), True),
}

test_probe, test_float32 = probe_tests(PROBES, quick=6)

REFUSED = {
    # the minimum of np.interp's piecewise-linear objective sits on a kink: no derivative
    "bellman_fminbound": (bellman_fminbound, (0.9, np.linspace(0.5, 3.0, 6)),
                          ("fminbound", "not 0 within the solver's tolerance", "np.polyfit")),
}

test_refused = refusal_test(REFUSED)
