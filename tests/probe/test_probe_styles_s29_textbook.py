"""Probe: textbook and tutorial numerical code, written the way course notes write it.

Newton iterations with a fixed count, Horner's rule in a loop over reversed coefficients,
Simpson's and the trapezoid rule by hand, Runge-Kutta 4 with a list of stages, Gauss-Seidel
sweeps writing into a preallocated array, cumulative products with an early exit,
least-squares fits through ``np.linalg``, softmax and cross-entropy by hand, bisection by
hand with a fixed count. Gradients (and for most jvp, hvp and the Hessian) are checked
against central differences (probe_harness.py).
"""

import math

import numpy as np
from probe_harness import probe_tests


def newton_cube_root(a, iters=25):
    # x_{k+1} = x_k - f(x_k) / f'(x_k) for f(x) = x^3 - a, a fixed number of steps
    x = 1.0
    for _ in range(iters):
        fx = x ** 3 - a
        dfx = 3 * x ** 2
        x = x - fx / dfx
    return x


def newton_system(p):
    # Newton for a 2x2 system with the Jacobian written out and solved by np.linalg.solve
    x = np.array([1.0, 1.0])
    for _ in range(12):
        F = np.array([x[0] ** 2 + x[1] ** 2 - p[0], x[0] - x[1] ** 3 - p[1]])
        J = np.array([[2 * x[0], 2 * x[1]], [1.0, -3 * x[1] ** 2]])
        x = x - np.linalg.solve(J, F)
    return x[0] * 2 + x[1]


def horner(coeffs, x):
    # coefficients highest degree first, as in numpy.polyval
    result = 0.0
    for c in coeffs:
        result = result * x + c
    return result


def horner_at_x(x, coeffs):
    return horner(coeffs, x)


def horner_reversed(x):
    a = [1.0, -2.0, 0.5, 3.0, -1.5]  # lowest degree first
    y = 0.0
    for c in reversed(a):
        y = y * x + c
    return y


def horner_array_points(xs):
    coeffs = np.array([0.3, -1.0, 2.0, 0.5])
    p = np.zeros_like(xs)
    for c in coeffs:
        p = p * xs + c
    return np.sum(p ** 2)


def simpson_by_hand(k, a=0.0, b=2.0, n=10):
    # composite Simpson's rule, n even, weights 1 4 2 4 ... 4 1
    h = (b - a) / n
    total = math.exp(-k * a) * math.sin(a) + math.exp(-k * b) * math.sin(b)
    for i in range(1, n):
        x = a + i * h
        w = 4 if i % 2 == 1 else 2
        total += w * math.exp(-k * x) * math.sin(x)
    return total * h / 3


def simpson_vector(params):
    a, b = params
    xs = np.linspace(0.0, 1.0, 11)
    f = np.exp(a * xs) * np.cos(b * xs)
    h = xs[1] - xs[0]
    return h / 3 * (f[0] + 4 * np.sum(f[1:-1:2]) + 2 * np.sum(f[2:-1:2]) + f[-1])


def trapezoid_upper(b, n=20):
    # the integration bound is the variable
    h = b / n
    s = 0.5 * (0.0 + math.sqrt(1 + b ** 2))
    for i in range(1, n):
        t = i * h
        s += math.sqrt(1 + t ** 2)
    return s * h


def rk4_stages(k, y0=1.0, h=0.1, steps=10):
    # Runge-Kutta 4 with the Butcher tableau written as lists and the stages kept in a list
    a = [[], [0.5], [0.0, 0.5], [0.0, 0.0, 1.0]]
    b = [1 / 6, 1 / 3, 1 / 3, 1 / 6]
    c = [0.0, 0.5, 0.5, 1.0]
    y = y0
    t = 0.0
    for _ in range(steps):
        stages = []
        for i in range(4):
            yi = y + h * sum(a[i][j] * stages[j] for j in range(i))
            stages.append(-k * yi + math.sin(t + c[i] * h))
        y = y + h * sum(bi * si for bi, si in zip(b, stages, strict=True))
        t += h
    return y


def rk4_vector(theta):
    # a damped oscillator as a first-order system, the stages as arrays
    def rhs(s):
        return np.array([s[1], -theta[0] * s[0] - theta[1] * s[1]])

    s = np.array([1.0, 0.0])
    h = 0.1
    for _ in range(20):
        k1 = rhs(s)
        k2 = rhs(s + h / 2 * k1)
        k3 = rhs(s + h / 2 * k2)
        k4 = rhs(s + h * k3)
        s = s + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return s[0] ** 2 + s[1]


def gauss_seidel(b, A, sweeps=25):
    n = len(b)
    x = np.zeros(n)
    for _ in range(sweeps):
        for i in range(n):
            s = 0.0
            for j in range(n):
                if j != i:
                    s += A[i, j] * x[j]
            x[i] = (b[i] - s) / A[i, i]
    return np.sum(x ** 2)


def gauss_seidel_matrix(A, b, sweeps=25):
    # the matrix is the variable, the sweep uses slices and dot products
    n = A.shape[0]
    x = np.zeros(n)
    for _ in range(sweeps):
        for i in range(n):
            x[i] = (b[i] - A[i, :i] @ x[:i] - A[i, i + 1:] @ x[i + 1:]) / A[i, i]
    return x @ x


def cumprod_early_exit(r):
    # survival probabilities until they drop below a threshold
    surv = 1.0
    total = 0.0
    for ri in r:
        surv *= 1.0 - ri
        total += surv
        if surv < 0.2:
            break
    return total


def cumprod_array_exit(r, floor=0.3):
    out = np.ones(len(r) + 1)
    for i in range(len(r)):
        out[i + 1] = out[i] * (1 - r[i])
        if out[i + 1] < floor:
            out[i + 2:] = out[i + 1]
            break
    return np.sum(out)


def lstsq_fit(y, X):
    beta, *_ = np.linalg.lstsq(X, y, rcond=None)
    resid = y - X @ beta
    return resid @ resid + 0.1 * beta @ beta


def normal_equations(w, x, y):
    # a weighted polynomial fit through the normal equations and np.linalg.inv
    V = np.vander(x, 3)
    W = np.diag(w)
    beta = np.linalg.inv(V.T @ W @ V) @ V.T @ W @ y
    return np.sum((V @ beta - y) ** 2)


def pinv_fit(y, X):
    beta = np.linalg.pinv(X) @ y
    return np.sum(beta ** 2)


def softmax_by_hand(z):
    e = np.exp(z - np.max(z))
    return e / e.sum()


def cross_entropy_by_hand(logits, labels):
    # per-row softmax by hand, picked out with fancy indexing, averaged
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    n = logits.shape[0]
    return -np.mean(log_probs[np.arange(n), labels])


def cross_entropy_onehot(W, X, Y):
    scores = X @ W
    probs = np.exp(scores)
    probs /= np.sum(probs, axis=1, keepdims=True)
    loss = -np.sum(Y * np.log(probs)) / X.shape[0]
    loss += 0.5 * 1e-2 * np.sum(W * W)
    return loss


def softmax_loop(z):
    # a list comprehension and a python sum over the entries
    m = max(z)
    exps = [math.exp(v - m) for v in z]
    s = sum(exps)
    probs = [e / s for e in exps]
    return -math.log(probs[1]) + probs[0] ** 2


def bisection_fixed(c):
    # root of x^3 + x - c by 40 halvings: piecewise constant in c, so the gradient is 0
    lo, hi = 0.0, 10.0
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        if mid ** 3 + mid - c > 0:
            hi = mid
        else:
            lo = mid
    return 0.5 * (lo + hi) * 0.0 + c ** 2


def power_iteration(A, iters=60):
    v = np.ones(A.shape[0]) / math.sqrt(A.shape[0])
    for _ in range(iters):
        w = A @ v
        v = w / np.linalg.norm(w)
    return v @ A @ v


def secant_method(a):
    # root of x^2 - a by the secant rule, fixed count
    x0, x1 = 1.0, 2.0
    for _ in range(12):
        f0, f1 = x0 * x0 - a, x1 * x1 - a
        if f1 == f0:
            break
        x0, x1 = x1, x1 - f1 * (x1 - x0) / (f1 - f0)
    return x1


_g = np.random.default_rng(29)
A_SPD = np.array([[4.0, 1.0, 0.5], [1.0, 5.0, 1.0], [0.5, 1.0, 3.0]])
Xd = _g.standard_normal((8, 3))
yd = Xd @ np.array([0.7, -0.2, 1.1]) + 0.1 * _g.standard_normal(8)
LOG = _g.standard_normal((5, 4))
LAB = np.array([0, 3, 1, 1, 2])
Xs = _g.standard_normal((6, 3))
Ys = np.eye(4)[[0, 1, 2, 3, 1, 0]]

PROBES = {
    "newton_cube_root": (newton_cube_root, (2.7,), True),
    "newton_system": (newton_system, (np.array([2.0, 0.3]),), True),
    "horner_at_x": (horner_at_x, (0.7, [2.0, -1.0, 0.5, 3.0]), True),
    "horner_coeffs": (horner, (np.array([2.0, -1.0, 0.5, 3.0]), 0.7), True),
    "horner_reversed": (horner_reversed, (1.3,), True),
    "horner_array_points": (horner_array_points, (np.linspace(-1, 1, 5),), True),
    "simpson_by_hand": (simpson_by_hand, (0.8,), True),
    "simpson_vector": (simpson_vector, (np.array([0.4, 2.0]),), True),
    "trapezoid_upper": (trapezoid_upper, (1.5,), True),
    "rk4_stages": (rk4_stages, (0.9,), True),
    "rk4_vector": (rk4_vector, (np.array([4.0, 0.3]),), True),
    "gauss_seidel": (gauss_seidel, (np.array([1.0, 2.0, -1.0]), A_SPD), True),
    "gauss_seidel_matrix": (gauss_seidel_matrix, (A_SPD, np.array([1.0, 2.0, -1.0])), False),
    "cumprod_early_exit": (cumprod_early_exit, (np.array([0.1, 0.3, 0.2, 0.4, 0.1]),), True),
    "cumprod_array_exit": (cumprod_array_exit, (np.array([0.1, 0.3, 0.4, 0.4, 0.1]),), True),
    "lstsq_fit": (lstsq_fit, (yd, Xd), True),
    "normal_equations": (normal_equations, (np.array([1.0, 2.0, 0.5, 1.5, 1.0]),
                                            np.linspace(0, 1, 5), np.array([0.1, 0.5, 0.2, 0.9,
                                                                            1.4])), True),
    "pinv_fit": (pinv_fit, (yd, Xd), True),
    "softmax_by_hand": (lambda z: softmax_by_hand(z)[1] ** 2, (np.array([0.3, 1.2, -0.5]),), True),
    "cross_entropy_by_hand": (cross_entropy_by_hand, (LOG, LAB), True),
    "cross_entropy_onehot": (cross_entropy_onehot, (_g.standard_normal((3, 4)), Xs, Ys), True),
    "softmax_loop": (softmax_loop, (np.array([0.3, 1.2, -0.5]),), True),
    "bisection_fixed": (bisection_fixed, (3.0,), True),
    "power_iteration": (power_iteration, (A_SPD,), False),
    "secant_method": (secant_method, (3.0,), True),
}


test_probe, test_float32 = probe_tests(PROBES)
