"""Probe: numerical idioms of scientific scripts, many ways of writing one step.

``np.add.at`` and ufunc methods, ``out=``, ``einsum`` with ellipses and ``tensordot``,
``fftshift``/``irfft(n=)``, Kabsch alignment by SVD, PCA by ``eigh``, ``np.interp`` in
either argument, ``diff(prepend=)``, ``polyfit``, ``piecewise``, dataclass states replaced
or rebound in a loop, ``np.block``/``kron``, ``float()``/``.item()``, a DTFT with complex
exponentials, swapped stencil buffers, ``sort``/``fill``/``copyto``/``fill_diagonal`` on
local arrays, implicit and Crank-Nicolson heat steps (``solve``, ``solve_banded``),
``functools.reduce``/``partial``, ``staticmethod`` activations on a class, ``math`` and
``scipy.special`` functions, ``np.vectorize``, parameter dicts updated by comprehension,
the reparameterisation trick, batched ``solve``, table lookup by ``searchsorted``,
``lu_factor``/``lu_solve``, ``eigh`` of a stiffness matrix. Each against central
differences (probe_harness.py), and six refusals with their messages.
"""

import dataclasses
import functools
import math
import operator
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import scipy.signal as ss
import scipy.stats as st
from probe_harness import probe_tests, refusal_test
from scipy.special import erf, gammaln


def add_at(x):
    out = np.zeros(4)
    np.add.at(out, [0, 1, 1, 3], x[:4])
    return np.sum(out ** 2)


def ufunc_reduce(x):
    return np.add.reduce(x ** 2) + np.multiply.reduce(x) + np.sum(np.multiply.outer(x, x))


def out_kw(x):
    c = np.empty_like(x)
    np.multiply(x, x, out=c)
    return np.sum(c)


def einsum_ellipsis(x):
    A = x.reshape(2, 2)
    B = np.stack([A, A.T])
    return np.sum(np.einsum("...ij,...jk->...ik", B, B)) + np.tensordot(A, A, axes=([0], [1])).sum()


def fftshift_freq(x):
    X = np.fft.fftshift(np.fft.fft(x))
    f = np.fft.fftfreq(len(x))
    back = np.fft.irfft(np.fft.rfft(x), n=len(x))
    return np.sum(np.abs(X) ** 2 * np.fft.fftshift(f) ** 2) + np.sum(back ** 3)


def kabsch(P, Q):
    H = P.T @ Q
    U, S, Vt = np.linalg.svd(H)
    d = np.sign(np.linalg.det(Vt.T @ U.T))
    D = np.diag([1.0, 1.0, d])
    R = Vt.T @ D @ U.T
    return np.sum((P @ R.T - Q) ** 2)


def pca_var(X):
    Xc = X - X.mean(0)
    w, V = np.linalg.eigh(Xc.T @ Xc / len(X))
    return w[-1] + np.abs(V[:, -1] @ np.array([1.0, 2.0, 3.0]))


def interp_y(y):
    xp = np.linspace(0, 1, len(y))
    return np.sum(np.interp(np.array([0.1, 0.33, 0.77]), xp, y) ** 2)


def interp_x(xq):
    xp = np.linspace(0, 1, 6)
    return np.sum(np.interp(xq, xp, np.sin(3 * xp)) ** 2)


def diff_prepend(x):
    return np.sum(np.diff(x, prepend=0.0) ** 2) + np.sum(np.diff(x, n=2, append=x[-1]) ** 2)


def polyfit_y(y):
    xs = np.linspace(-1, 1, len(y))
    c = np.polyfit(xs, y, 2)
    return np.polyval(c, 0.3) + np.sum(c ** 2)


def piecewise(x):
    return np.sum(np.piecewise(x, [x < 0, x >= 0], [lambda t: t ** 2, lambda t: np.sin(t)]))


def chained_compare(x):
    mask = (-0.5 < x) & (x < 0.8)
    return np.sum(np.where(mask, x ** 2, x))


@dataclass
class State:
    x: np.ndarray
    v: np.ndarray


def dataclass_replace_loop(x0):
    s = State(x0, np.zeros_like(x0))
    for _ in range(5):
        s = dataclasses.replace(s, v=s.v - 0.1 * s.x)
        s = dataclasses.replace(s, x=s.x + 0.1 * s.v)
    return np.sum(s.x ** 2 + s.v)


def dataclass_augassign(x0):
    s = State(x0.copy(), np.zeros_like(x0))
    for _ in range(5):
        s.v = s.v - 0.1 * s.x
        s.x = s.x + 0.1 * s.v
    return np.sum(s.x ** 2 + s.v)


def neg_power(x):
    return np.sum((x ** 2 + 1.0) ** -1.5) + np.sum(np.abs(x) ** 0.5 * np.sign(x))


def hypot_atan(x):
    return np.sum(np.hypot(x, 1.5) + np.arctan2(x, 0.7) + np.arctan2(0.3, x))


def block_kron(x):
    A = x.reshape(2, 2)
    B = np.block([[A, np.eye(2)], [np.zeros((2, 2)), A.T]])
    return np.sum(np.kron(A, B)) + np.trace(B @ B) + np.sum(np.diagonal(B, offset=1))


def item_float(x):
    s = float(np.sum(x ** 2))
    t = np.sum(x).item()
    return s * t + math.sqrt(s)


def dtft(w):
    n = np.arange(8)
    h = w[0] ** n * np.cos(w[1] * n)
    freqs = np.linspace(0, np.pi, 5)
    H = np.exp(-1j * np.outer(freqs, n)) @ h
    return np.sum(np.abs(H) ** 2)


def sorted_key(x):
    pairs = sorted(zip(x, [3, 1, 2, 0], strict=True), key=lambda p: p[1])
    return sum(v * (i + 1) for i, (v, _) in enumerate(pairs))


def matrix_power(x):
    A = x.reshape(2, 2) * 0.5
    return np.sum(np.linalg.matrix_power(A, 3)) + np.sum(np.linalg.inv(A + 2 * np.eye(2)))


def logdet_expm(x):
    import scipy.linalg as sla
    A = x.reshape(2, 2) * 0.3
    return np.sum(sla.expm(A)) + np.linalg.slogdet(A @ A.T + np.eye(2))[1]


def sum_where(x):
    m = x > 0
    return np.sum(x ** 2, where=m) + np.mean(np.exp(x), where=~m) + np.max(x, initial=-10.0)


def norms(x):
    A = x.reshape(2, 2)
    vector = np.linalg.norm(x, 1) + np.linalg.norm(x, np.inf)
    return vector + np.linalg.norm(A, "fro") + np.linalg.norm(A, 2) + np.linalg.norm(A, ord="nuc")


def lfilter_use(b):
    x = np.sin(np.arange(10.0))
    y = ss.lfilter(b, [1.0, -0.5], x)
    return np.sum(y ** 2)


def view_inplace(x):
    a = x.copy()
    v = a[1:]
    v *= 2.0
    return np.sum(a ** 2)


def heat_swap_buffers(u0, alpha=0.3, steps=6):
    u = u0.copy()
    u_new = np.zeros_like(u)
    for _ in range(steps):
        u_new[1:-1] = u[1:-1] + alpha * (u[2:] - 2 * u[1:-1] + u[:-2])
        u_new[0] = u[0]
        u_new[-1] = u[-1]
        u, u_new = u_new, u
    return np.sum(u ** 2 * np.arange(len(u)))


def sort_in_place(x):
    y = x.copy()
    y.sort()
    return np.sum(y * np.arange(4))


def fill_then(x):
    y = np.empty(4)
    y.fill(2.0)
    y[1:3] = x[:2]
    return np.sum(y ** 2)


def copyto(x):
    y = np.zeros(4)
    np.copyto(y, x * 2)
    return np.sum(y ** 3)


def slice_assign_then_use(x):
    b = x * 2
    a = np.zeros(4)
    a[:] = b
    a[0] = 0.0
    return np.sum(a * b)


def nested_list_grid(x):
    grid = [[0.0 for _ in range(3)] for _ in range(3)]
    for i in range(3):
        for j in range(3):
            grid[i][j] = x[i] * x[j]
    grid[1][1] += x[2]
    return sum(sum(r) for r in grid) + grid[1][1] ** 2


def transposed_copy_write(x):
    A = np.outer(x, x).T.copy()
    A[0, 1] = 0.0
    return np.sum(A * np.arange(16).reshape(4, 4))


def diag_write(x):
    A = np.outer(x, x)
    A[np.diag_indices(4)] = 1.0
    return np.sum(A ** 2)


def fill_diagonal_on_copy(x):
    A = np.outer(x, x)
    np.fill_diagonal(A, x ** 3)
    return np.sum(A ** 2)


def aliased_rows(x):
    rows = [[0.0] * 3] * 3
    rows[0][1] = x[0]
    return sum(r[1] for r in rows) * x[1]


def asarray_alias(x):
    y = np.array(x)
    z = np.asarray(y)
    z[1] = 0.0
    return np.sum(y * x)


def implicit_heat(u0, r=0.4, steps=5):
    n = len(u0)
    A = (1 + 2 * r) * np.eye(n) - r * np.eye(n, k=1) - r * np.eye(n, k=-1)
    u = u0
    for _ in range(steps):
        u = np.linalg.solve(A, u)
    return np.sum(u ** 2)


def crank_nicolson_banded(u0, r=0.4, steps=4):
    n = len(u0)
    ab = np.zeros((3, n))
    ab[0, 1:] = -r / 2
    ab[1, :] = 1 + r
    ab[2, :-1] = -r / 2
    u = u0
    for _ in range(steps):
        rhs = (1 - r) * u
        rhs[1:] += r / 2 * u[:-1]
        rhs[:-1] += r / 2 * u[1:]
        u = sla.solve_banded((1, 1), ab, rhs)
    return np.sum(u ** 3)


def reduce_dot(theta):
    mats = [np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]]) for t in theta]
    M = functools.reduce(np.dot, mats)
    return M[0, 1] + np.trace(M)


def operator_reduce(x):
    return functools.reduce(operator.mul, x, 1.0) + functools.reduce(operator.add, map(np.sin, x))


def partial_norm(X):
    rownorm = functools.partial(np.linalg.norm, axis=1)
    return np.sum(rownorm(X) ** 3)


class Net:
    act = staticmethod(np.tanh)
    def __init__(self, W):
        self.W = W
    def __call__(self, x):
        return self.act(x @ self.W)


def staticmethod_attr(W, X):
    return np.sum(Net(W)(X) ** 2)


def math_special(x):
    return sum(math.erf(v) + math.lgamma(2 + v * v) + math.gamma(1.5 + v * v) for v in x)


def scipy_special(x):
    return np.sum(erf(x) * gammaln(2 + x ** 2))


def clipped_log(p):
    q = 1 / (1 + np.exp(-p))
    return -np.sum(np.log(np.clip(q, 1e-12, 1.0)) + np.log(np.clip(1 - q, 1e-12, None)))


def norm_ppf(p):
    q = 1 / (1 + np.exp(-p))
    return np.sum(st.norm.ppf(q) ** 2) + np.sum(st.norm(0.0, 2.0).ppf(q))


@np.vectorize
def vec_softplus(v):
    return math.log1p(math.exp(v)) if v < 30 else v


def vectorized_decorated(x):
    return np.sum(vec_softplus(x) ** 2)


def param_dict_gd(params, X, y, lr=0.1, steps=3):
    p = dict(params)
    for _ in range(steps):
        pred = X @ p["w"] + p["b"]
        r = pred - y
        grads = {"w": X.T @ r / len(y), "b": np.mean(r)}
        p = {k: v - lr * grads[k] for k, v in p.items()}
    return np.mean((X @ p["w"] + p["b"] - y) ** 2)


def dict_param_items(params):
    total = 0.0
    for name, value in sorted(params.items()):
        total = total + (2.0 if name == "a" else 1.0) * np.sum(value ** 2)
    return total


def reparam(theta, n=50):
    rng = np.random.default_rng(5)
    mu, log_s = theta
    eps = rng.standard_normal(n)
    z = mu + np.exp(log_s) * eps
    return np.mean(z ** 2) - log_s


def draw_with_param(theta):
    rng = np.random.default_rng(5)
    z = rng.normal(theta[0], 1.0, size=10)
    return np.mean(z ** 2)


def batched_solve(x):
    A = np.stack([np.eye(2) * (2 + x[0]), np.array([[3.0, x[1]], [x[1], 2.0]])])
    b = np.stack([x[:2], x[2:]])[..., None]
    return np.sum(np.linalg.solve(A, b) ** 2)


def searchsorted_table(x):
    grid = np.linspace(-2, 2, 9)
    vals = np.sin(grid)
    i = np.clip(np.searchsorted(grid, x) - 1, 0, len(grid) - 2)
    t = (x - grid[i]) / (grid[i + 1] - grid[i])
    return np.sum((1 - t) * vals[i] + t * vals[i + 1])


def cubic_spline(y):
    from scipy.interpolate import CubicSpline
    cs = CubicSpline(np.linspace(0, 1, len(y)), y)
    return np.sum(cs(np.array([0.1, 0.45, 0.8])) ** 2)


def lu_solve_loop(b):
    A = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
    lu, piv = sla.lu_factor(A)
    x = b
    for _ in range(3):
        x = sla.lu_solve((lu, piv), x) + 0.1 * x
    return np.sum(x ** 2)


def eigh_energy(k):
    K = np.diag(k[:-1] + k[1:]) - np.diag(k[1:-1], 1) - np.diag(k[1:-1], -1)
    w, v = np.linalg.eigh(K)
    return np.sum(np.sqrt(w)) + v[0, 0] ** 2


X4 = np.array([0.3, -0.7, 1.2, 0.5])
_r = np.random.default_rng(3107)
P = _r.standard_normal((5, 3))
_th = 0.4
_RZ = np.array([[np.cos(_th), -np.sin(_th), 0], [np.sin(_th), np.cos(_th), 0], [0, 0, 1]])
Q = P @ _RZ.T + 0.05 * _r.standard_normal((5, 3))
XR = _r.standard_normal((8, 3))
YR = _r.standard_normal(8)
U6 = np.sin(np.linspace(0, 3, 6))

PROBES = {
    "add_at": (add_at, (X4,), True),
    "ufunc_reduce": (ufunc_reduce, (X4,), True),
    "out_kw": (out_kw, (X4,), True),
    "einsum_ellipsis": (einsum_ellipsis, (X4,), True),
    "fftshift_freq": (fftshift_freq, (_r.standard_normal(8),), True),
    "kabsch": (kabsch, (P, Q), True),
    "pca_var": (pca_var, (P,), True),
    "interp_y": (interp_y, (X4,), True),
    "interp_x": (interp_x, (np.array([0.15, 0.52, 0.9]),), True),
    "diff_prepend": (diff_prepend, (X4,), True),
    "polyfit_y": (polyfit_y, (_r.standard_normal(6),), True),
    "piecewise": (piecewise, (X4,), True),
    "chained_compare": (chained_compare, (X4,), True),
    "dataclass_replace_loop": (dataclass_replace_loop, (X4,), True),
    "dataclass_augassign": (dataclass_augassign, (X4,), True),
    "neg_power": (neg_power, (X4,), True),
    "sum_where": (sum_where, (X4,), False),
    "norms": (norms, (X4,), False),
    "hypot_atan": (hypot_atan, (X4,), True),
    "block_kron": (block_kron, (X4,), True),
    "item_float": (item_float, (X4,), True),
    "dtft": (dtft, (np.array([0.7, 0.4]),), True),
    "sorted_key": (sorted_key, (X4,), True),
    "matrix_power": (matrix_power, (X4,), True),
    "logdet_expm": (logdet_expm, (X4,), True),
    "heat_swap_buffers": (heat_swap_buffers, (np.sin(np.linspace(0, 3, 7)),), True),
    "sort_in_place": (sort_in_place, (X4,), True),
    "fill_then": (fill_then, (X4,), True),
    "copyto": (copyto, (X4,), True),
    "slice_assign_then_use": (slice_assign_then_use, (X4,), True),
    "nested_list_grid": (nested_list_grid, (X4,), True),
    "transposed_copy_write": (transposed_copy_write, (X4,), True),
    "diag_write": (diag_write, (X4,), True),
    "fill_diagonal_on_copy": (fill_diagonal_on_copy, (X4,), True),
    "implicit_heat": (implicit_heat, (U6,), True),
    "crank_nicolson_banded": (crank_nicolson_banded, (U6,), True),
    "reduce_dot": (reduce_dot, (np.array([0.3, 0.5, -0.2]),), True),
    "operator_reduce": (operator_reduce, (X4,), True),
    "partial_norm": (partial_norm, (XR,), True),
    "staticmethod_attr": (staticmethod_attr, (0.5 * _r.standard_normal((3, 2)), XR), True),
    "math_special": (math_special, (X4,), True),
    "scipy_special": (scipy_special, (X4,), True),
    "clipped_log": (clipped_log, (X4,), True),
    "norm_ppf": (norm_ppf, (X4,), True),
    "vectorized_decorated": (vectorized_decorated, (X4,), True),
    "param_dict_gd": (param_dict_gd, ({"w": np.array([0.1, 0.2, -0.1]), "b": 0.3}, XR, YR),
                      False),
    "dict_param_items": (dict_param_items, ({"a": np.array([1.0, 2.0]), "b": np.array([0.5])},),
                         False),
    "reparam": (reparam, (np.array([0.2, -0.3]),), True),
    "batched_solve": (batched_solve, (X4,), True),
    "searchsorted_table": (searchsorted_table, (np.array([0.13, -1.1, 1.7]),), True),
    "lu_solve_loop": (lu_solve_loop, (np.array([1.0, -0.5, 0.3]),), True),
    "eigh_energy": (eigh_energy, (np.array([1.0, 1.5, 0.7, 2.0]),), True),
    "lfilter_use": (lfilter_use, (np.array([0.5, 0.3]),), True),  # refused until stop 33
    "cubic_spline": (cubic_spline, (X4,), True),  # refused (PB301) before its rules
}

test_probe, test_float32 = probe_tests(PROBES)

REFUSED = {
    "draw_with_param": (draw_with_param, (np.array([0.2, -0.3]),), ("PB506",)),
    "aliased_rows": (aliased_rows, (X4,), ("PB106", "[[0.0] * n for _ in range(m)]")),
    "view_inplace": (view_inplace, (X4,), ("PB105", "v = v * 2.0")),
    "asarray_alias": (asarray_alias, (X4,), ("PB101", "z = z.copy()")),
}

test_refused = refusal_test(REFUSED)
