# ruff: noqa: B006, B007, B008, B905, E731 - written the way public code is written
"""Programs for test_probe_combined.py (part 3): a functional Kalman filter, the
statistics module, callbacks, ODE model objects, Newton iterations with a Jacobian."""

import math
import statistics

import numpy as np

import pullback


def kalman_functional(q, zs=np.array([0.1, 0.35, 0.5, 0.9])):
    F = np.array([[1.0, 1.0], [0.0, 1.0]])
    H = np.array([1.0, 0.0])
    x, P, Q, R = np.zeros(2), np.eye(2), q * np.eye(2), 0.1
    nll = 0.0
    for z in zs:
        x = F @ x
        P = F @ P @ F.T + Q
        S = H @ P @ H + R
        K = P @ H / S
        innov = z - H @ x
        x = x + K * innov
        P = P - np.outer(K, H @ P)
        nll = nll + 0.5 * (math.log(S) + innov ** 2 / S)
    return nll

def stats_geo_harm(x):
    xs = list(x)
    return statistics.geometric_mean(xs) + statistics.harmonic_mean(xs)

def stats_variance_list(x):
    return statistics.variance([v * 2.0 for v in x]) + statistics.median_low(list(x))

def normal_dist_logpdf(mu):
    d = statistics.NormalDist(mu, 1.5)
    return math.log(d.pdf(0.3)) + d.cdf(0.1)

def stats_quantiles(x):
    q = statistics.quantiles(list(x), n=4)
    return q[1]

def stats_correlation(x, y=[1.0, 2.0, 3.5, 3.9]):
    return statistics.correlation(list(x), y) + statistics.covariance(list(x), y)

def stats_linreg(x, y=[1.0, 2.0, 3.5, 3.9]):
    slope, intercept = statistics.linear_regression(list(x), y)
    return slope + intercept

def config_lambdas_try(x):
    cfg = {"act": lambda v: np.tanh(v), "norm": lambda v: v / np.linalg.norm(v)}
    out = x
    for key in ("act", "missing", "norm"):
        try:
            fn = cfg[key]
        except KeyError:
            continue
        out = fn(out)
    return np.sum(out ** 3)

def dict_items_second(x):
    d = {"a": x[0], "b": x[1] ** 2, "c": x[0] * x[1]}
    total = 0.0
    for k, v in d.items():
        total = total + v ** 2 * (1.0 if k != "c" else 0.5)
    return total + sum(d.values()) * len(d.keys())

class ActLayer:
    def __init__(self, W, act=None):
        self.W = W
        self.act = act or (lambda z: z)  # PB404: stored lambda
    def __call__(self, x):
        return self.act(x @ self.W)

def sequential_layers(w):
    layers = [ActLayer(w[:4].reshape(2, 2), np.tanh), ActLayer(w[4:6].reshape(2, 1))]
    h = np.array([[0.5, -1.0], [1.5, 0.3]])
    for layer in layers:
        h = layer(h)
    return np.sum(h ** 2)

class Optimizer:
    def __init__(self, lr):
        self.lr = lr
    def step(self, x, g):
        return x - self.lr * g

def optimizer_object(x0):
    opt = Optimizer(0.1)
    x = x0
    for _ in range(5):
        g = 4 * x ** 3 - 2 * x
        x = opt.step(x, g)
    return np.sum(x ** 2)

def make_callbacks():
    log = []
    def on_step(i, loss):
        log.append((i, float(loss)))
    return on_step, log

def training_with_callback(w):
    on_step, log = make_callbacks()
    x = w
    for i in range(3):
        loss = np.sum((x - 1.0) ** 2)
        on_step(i, loss)
        x = x - 0.2 * 2 * (x - 1.0)
    return np.sum(x ** 3)

def logsumexp_where(a):
    m = np.max(a)
    s = np.sum(np.where(np.isfinite(a), np.exp(a - m), 0.0))
    return m + np.log(s)

def safe_divide_where(x, y=np.array([0.0, 2.0, -1.0])):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sum(np.where(y != 0, x / y, 0.0) ** 2)

class ODEModel:
    def __init__(self, k):
        self.k = k
    def rhs(self, y):
        return -self.k * y + np.sin(y)
    def simulate(self, y0, dt=0.1, n=10):
        y = y0
        traj = []
        for _ in range(n):
            y = y + dt * self.rhs(y)
            traj.append(y)
        return np.array(traj)

def ode_model_loss(k, y0=np.array([1.0, -0.5])):
    return np.sum(ODEModel(k).simulate(y0) ** 2)

def try_else_finally_loop(x):
    total = 0.0
    for d in [2.0, 0.0, -1.0]:
        try:
            r = x / d
        except ZeroDivisionError:
            r = x ** 2
        else:
            r = r * 2.0
        finally:
            total = total + 0.0
        total = total + r
    return total

def gp_predict_with_jitter(ell, X=np.linspace(0, 1, 5), y=np.sin(np.linspace(0, 1, 5))):
    K = np.exp(-0.5 * (X[:, None] - X[None, :]) ** 2 / ell ** 2)
    jitter = 1e-10
    while True:
        try:
            L = np.linalg.cholesky(K + jitter * np.eye(len(X)))
            break
        except np.linalg.LinAlgError:
            jitter *= 10
    alpha = np.linalg.solve(L.T, np.linalg.solve(L, y))
    return float(alpha @ y)

def hessian_vector_top(x):
    return np.array([x[0] ** 2 * x[1], np.exp(x[0]) - x[1] ** 3])

def newton_solve(x0):
    # Newton iterations with jacobian from pullback, differentiated at the top
    J = pullback.jacobian(hessian_vector_top)
    x = x0
    for _ in range(3):
        x = x - np.linalg.solve(J(x), hessian_vector_top(x))
    return x



def identity(z):
    return z


class ActLayerDef(ActLayer):
    def __init__(self, W, act=None):
        self.W = W
        self.act = act or identity  # the fix PB404 names


def sequential_layers_fixed(w):
    layers = [ActLayerDef(w[:4].reshape(2, 2), np.tanh), ActLayerDef(w[4:6].reshape(2, 1))]
    h = np.array([[0.5, -1.0], [1.5, 0.3]])
    for layer in layers:
        h = layer(h)
    return np.sum(h ** 2)
