# ruff: noqa: B006, B007, B008, B905, E731 - written the way public code is written
"""Programs for test_probe_combined.py (part 1): GP regression with a Cholesky jitter
loop, model classes, optimizer loops with callbacks, physics classes, np.where guards,
Newton steps, config dicts of lambdas, a Kalman filter class, ODE integrator objects and
mixture models, written the way public repositories write them."""

import math
import statistics

import numpy as np

import pullback

RNG = np.random.default_rng(7)
X6 = RNG.standard_normal((6, 2))
Y6 = RNG.standard_normal(6)
K_PD = np.array([[2.0, 0.5, 0.1], [0.5, 1.5, 0.2], [0.1, 0.2, 1.0]])
K_BAD = np.array([[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]])


# -- Gaussian processes: kernels, cholesky with a jitter loop ------------------------------
def rbf_kernel(X1, X2, lengthscale=1.0, variance=1.0):
    sqdist = np.sum(X1 ** 2, 1).reshape(-1, 1) + np.sum(X2 ** 2, 1) - 2 * X1 @ X2.T
    return variance * np.exp(-0.5 / lengthscale ** 2 * sqdist)


def jitter_cholesky(K, max_tries=5):
    jitter = 1e-9 * np.mean(np.diag(K))
    for i in range(max_tries):
        try:
            return np.linalg.cholesky(K + jitter * np.eye(K.shape[0]))
        except np.linalg.LinAlgError:
            jitter *= 10
    raise np.linalg.LinAlgError("not positive definite, even with jitter")


def gp_nll(log_params, X=X6, y=Y6):
    ell, sf, sn = np.exp(log_params)
    K = rbf_kernel(X, X, ell, sf ** 2) + sn ** 2 * np.eye(len(X))
    L = jitter_cholesky(K)
    alpha = np.linalg.solve(L.T, np.linalg.solve(L, y))
    return 0.5 * y @ alpha + np.sum(np.log(np.diag(L))) + 0.5 * len(X) * np.log(2 * np.pi)


def gp_nll_while_jitter(log_params, X=X6, y=Y6):
    ell, sf, sn = np.exp(log_params)
    K = rbf_kernel(X, X, ell, sf ** 2) + sn ** 2 * np.eye(len(X))
    jitter = 0.0
    while True:
        try:
            L = np.linalg.cholesky(K + jitter * np.eye(len(X)))
            break
        except np.linalg.LinAlgError:
            jitter = 1e-6 if jitter == 0.0 else 10 * jitter
    return np.sum(np.log(np.diag(L))) + 0.5 * np.sum(np.linalg.solve(L, y) ** 2)


def logdet_retry_else_finally(s, K=K_BAD):
    calls = []
    try:
        L = np.linalg.cholesky(s * K)
    except np.linalg.LinAlgError as err:
        calls.append(str(err))
        L = np.linalg.cholesky(s * K + 5.0 * np.eye(len(K)))
    else:
        calls.append("ok")
    finally:
        calls.append("done")
    return 2.0 * np.sum(np.log(np.diag(L))) + 0.0 * len(calls)


class GaussianProcess:
    def __init__(self, lengthscale, variance, noise=0.1):
        self.lengthscale = lengthscale
        self.variance = variance
        self.noise = noise

    def kernel(self, A, B):
        d2 = np.sum((A[:, None, :] - B[None, :, :]) ** 2, axis=-1)
        return self.variance * np.exp(-0.5 * d2 / self.lengthscale ** 2)

    def fit(self, X, y):
        self.X = X
        K = self.kernel(X, X) + self.noise ** 2 * np.eye(len(X))
        try:
            self.L = np.linalg.cholesky(K)
        except np.linalg.LinAlgError:
            self.L = np.linalg.cholesky(K + 1e-6 * np.eye(len(X)))
        self.alpha = np.linalg.solve(self.L.T, np.linalg.solve(self.L, y))
        return self

    def predict(self, Xs):
        return self.kernel(Xs, self.X) @ self.alpha

    @property
    def log_marginal(self):
        return -np.sum(np.log(np.diag(self.L)))


def gp_class_predict(theta, X=X6, y=Y6):
    gp = GaussianProcess(np.exp(theta[0]), np.exp(theta[1])).fit(X, y)
    return np.sum(gp.predict(X[:3] + 0.1) ** 2) + gp.log_marginal


# -- models with a forward method and a loss --------------------------------------------------
class Linear:
    def __init__(self, W, b):
        self.W = W
        self.b = b

    def __call__(self, x):
        return x @ self.W + self.b


class MLP:
    def __init__(self, params, activation=np.tanh):
        self.layers = [Linear(W, b) for W, b in params]
        self.activation = activation

    def forward(self, x):
        for layer in self.layers[:-1]:
            x = self.activation(layer(x))
        return self.layers[-1](x)

    def loss(self, x, y):
        pred = self.forward(x)
        return np.mean((pred.ravel() - y) ** 2)


def mlp_loss(w, X=X6, y=Y6):
    params = [(w[:6].reshape(2, 3), w[6:9]), (w[9:12].reshape(3, 1), w[12:13])]
    return MLP(params).loss(X, y)


class LogisticRegression:
    def __init__(self, w, l2=0.01):
        self.w = w
        self.l2 = l2

    @staticmethod
    def sigmoid(z):
        return 1.0 / (1.0 + np.exp(-z))

    def predict_proba(self, X):
        return self.sigmoid(X @ self.w)

    def loss(self, X, y):
        p = np.clip(self.predict_proba(X), 1e-12, 1 - 1e-12)
        ce = -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))
        return ce + self.l2 * np.dot(self.w, self.w)


def logreg_loss(w, X=X6, y=(Y6 > 0).astype(float)):
    return LogisticRegression(w).loss(X, y)


class Module:
    def __init__(self):
        self.training = True

    def __call__(self, *args):
        return self.forward(*args)


class Affine(Module):
    def __init__(self, a, b):
        super().__init__()
        self.a = a
        self.b = b

    def forward(self, x):
        return self.a * x + self.b


def module_subclass(p, x=np.linspace(-1, 1, 5)):
    m = Affine(p[0], p[1])
    out = m(x)
    return np.sum(np.sin(out) ** 2)


class Softmax:
    def __init__(self, temperature=1.0):
        self.temperature = temperature

    def __call__(self, z):
        z = z / self.temperature
        z = z - np.max(z)
        e = np.exp(z)
        return e / np.sum(e)


def softmax_cross_entropy(z, label=2):
    p = Softmax(0.7)(z)
    return -np.log(p[label])


# -- optimizer loops with callbacks -----------------------------------------------------------
def unrolled_gd_with_callback(theta, steps=5, lr=0.1):
    history = []

    def callback(k, x):
        history.append(float(np.sum(x ** 2)))

    def loss_grad(x):
        return 2 * (x - 1.0) + 0.1 * np.cos(x)

    x = theta
    for k in range(steps):
        x = x - lr * loss_grad(x)
        callback(k, x)
    return np.sum(x ** 2)


def make_schedule(lr0, decay):
    return lambda k: lr0 / (1.0 + decay * k)


def gd_with_schedule(theta):
    schedule = make_schedule(0.2, 0.5)
    x = theta
    for k in range(4):
        x = x - schedule(k) * (x ** 3 - x)
    return np.sum(x)


def momentum_with_hooks(theta):
    hooks = {"pre": lambda v: v * 0.9, "post": lambda v: np.clip(v, -1.0, 1.0)}
    v = np.zeros_like(theta)
    x = theta
    for _ in range(3):
        g = np.tanh(x) + 0.5 * x
        v = hooks["pre"](v) + g
        x = x - 0.1 * hooks["post"](v)
    return np.sum(x ** 2)


def loss_factory(kind):
    def mse(p, t):
        return np.mean((p - t) ** 2)

    def huber(p, t, delta=1.0):
        r = np.abs(p - t)
        return np.mean(np.where(r < delta, 0.5 * r ** 2, delta * (r - 0.5 * delta)))

    return {"mse": mse, "huber": huber}[kind]


def configured_losses(w, t=np.array([0.3, -2.0, 1.5])):
    total = 0.0
    for kind in ("mse", "huber"):
        fn = loss_factory(kind)
        total = total + fn(w * 2.0, t)
    return total


# -- physics classes with methods and properties ----------------------------------------------
class Particle:
    def __init__(self, pos, vel, mass=1.0):
        self.pos = pos
        self.vel = vel
        self.mass = mass

    @property
    def kinetic(self):
        return 0.5 * self.mass * np.dot(self.vel, self.vel)

    @property
    def momentum(self):
        return self.mass * self.vel

    def step(self, force, dt):
        self.vel = self.vel + force / self.mass * dt
        self.pos = self.pos + self.vel * dt


def spring_sim(x0, k=2.0, dt=0.05, n=20):
    p = Particle(x0, np.zeros_like(x0))
    for _ in range(n):
        p.step(-k * p.pos, dt)
    return p.kinetic + 0.5 * k * np.dot(p.pos, p.pos)


class Pendulum:
    g = 9.81

    def __init__(self, length, theta, omega=0.0):
        self.length = length
        self.theta = theta
        self.omega = omega

    def derivs(self, theta, omega):
        return omega, -self.g / self.length * math.sin(theta)

    def rk4(self, dt):
        th, om = self.theta, self.omega
        k1 = self.derivs(th, om)
        k2 = self.derivs(th + 0.5 * dt * k1[0], om + 0.5 * dt * k1[1])
        k3 = self.derivs(th + 0.5 * dt * k2[0], om + 0.5 * dt * k2[1])
        k4 = self.derivs(th + dt * k3[0], om + dt * k3[1])
        self.theta = th + dt / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
        self.omega = om + dt / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])

    @property
    def energy(self):
        kinetic = 0.5 * self.length ** 2 * self.omega ** 2
        return kinetic + self.g * self.length * (1 - math.cos(self.theta))


def pendulum_energy(theta0, length=1.2):
    p = Pendulum(length, theta0)
    for _ in range(10):
        p.rk4(0.02)
    return p.energy


class NBody:
    def __init__(self, pos, masses, soft=0.1):
        self.pos = pos
        self.masses = masses
        self.soft = soft

    def potential(self):
        d = self.pos[:, None, :] - self.pos[None, :, :]
        r = np.sqrt(np.sum(d ** 2, axis=-1) + self.soft ** 2)
        m = self.masses[:, None] * self.masses[None, :]
        return -0.5 * np.sum(np.where(np.eye(len(self.masses)) > 0, 0.0, m / r))


def nbody_potential(pos, masses=np.array([1.0, 2.0, 0.5])):
    return NBody(pos, masses).potential()


# -- np.where guards -------------------------------------------------------------------------------
def safe_log(x, eps=1e-12):
    return np.sum(np.where(x > eps, np.log(np.where(x > eps, x, 1.0)), np.log(eps)))


def sinc(x):
    return np.sum(np.where(x == 0, 1.0, np.sin(x) / np.where(x == 0, 1.0, x)))


def naive_sinc(x):
    # the unselected branch divides by zero: its NaN must not reach the gradient
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sum(np.where(x == 0, 1.0, np.sin(x) / x))


def safe_sqrt_norm(x):
    r2 = np.sum(x ** 2, axis=-1)
    return np.sum(np.where(r2 > 0, np.sqrt(np.where(r2 > 0, r2, 1.0)), 0.0))


def xlogx_entropy(p):
    with np.errstate(divide="ignore", invalid="ignore"):
        return -np.sum(np.where(p > 0, p * np.log(p), 0.0))


def softplus_stable(x):
    return np.sum(np.where(x > 20, x, np.log1p(np.exp(np.minimum(x, 20)))))


# -- Newton's method with the Hessian / Jacobian of a vector residual ------------------------------
def residual(x):
    return np.array([x[0] ** 2 + x[1] ** 2 - 4.0, np.exp(x[0]) + x[1] - 1.0])


def newton_one_step_vec_hessian(x):
    H = pullback.hessian(residual)(x)  # (2, 2, 2)
    J = pullback.jacobian(residual)(x)
    return float(np.sum(H ** 2) + np.sum(J))


def gauss_newton_step(x):
    J = pullback.jacobian(residual)(x)
    r = residual(x)
    dx = np.linalg.solve(J.T @ J + 1e-3 * np.eye(2), J.T @ r)
    return np.sum((x - dx) ** 2)


# -- config dicts of lambdas, dict views ------------------------------------------------------
ACTIVATIONS = {
    "relu": lambda x: np.maximum(x, 0.0),
    "tanh": np.tanh,
    "softplus": lambda x: np.log1p(np.exp(x)),
    "swish": lambda x: x / (1.0 + np.exp(-x)),
}


def activation_sweep(x):
    return sum(np.sum(fn(x) ** 2) for name, fn in ACTIVATIONS.items())


def local_config_lambdas(x):
    cfg = {
        "scale": 2.0,
        "transform": lambda v: v ** 2 + np.sin(v),
        "reduce": lambda v: np.sum(v) / len(v),
    }
    return cfg["reduce"](cfg["transform"](cfg["scale"] * x))


def params_dict_loss(params):
    hidden = np.tanh(X6 @ params["W"] + params["b"])
    return np.mean((hidden @ params["v"] - Y6) ** 2) + 0.01 * sum(
        np.sum(p ** 2) for p in params.values())


def dict_values_second(x):
    terms = {"a": x[0] ** 2 * x[1], "b": np.sin(x[1]), "c": x[0] * x[1] ** 3}
    return sum(terms.values()) + sum(v for k, v in terms.items() if k != "b")


# -- Kalman filter class ------------------------------------------------------------------------
class KalmanFilter:
    def __init__(self, F, H, Q, R, x0, P0):
        self.F, self.H, self.Q, self.R = F, H, Q, R
        self.x, self.P = x0, P0

    def predict(self):
        self.x = self.F @ self.x
        self.P = self.F @ self.P @ self.F.T + self.Q

    def update(self, z):
        S = self.H @ self.P @ self.H.T + self.R
        K = self.P @ self.H.T @ np.linalg.inv(S)
        innov = z - self.H @ self.x
        self.x = self.x + K @ innov
        self.P = (np.eye(len(self.x)) - K @ self.H) @ self.P
        return innov, S


ZS = np.array([[0.1], [0.35], [0.5], [0.9]])


def kalman_nll(log_q, zs=ZS):
    dt = 1.0
    F = np.array([[1.0, dt], [0.0, 1.0]])
    H = np.array([[1.0, 0.0]])
    kf = KalmanFilter(F, H, np.exp(log_q) * np.eye(2), np.array([[0.1]]), np.zeros(2), np.eye(2))
    nll = 0.0
    for z in zs:
        kf.predict()
        innov, S = kf.update(z)
        nll += 0.5 * (np.log(np.linalg.det(S)) + innov @ np.linalg.solve(S, innov))
    return nll


# -- ODE integrator objects -----------------------------------------------------------------------
class RK4Integrator:
    def __init__(self, rhs, dt):
        self.rhs = rhs
        self.dt = dt

    def step(self, t, y):
        dt, f = self.dt, self.rhs
        k1 = f(t, y)
        k2 = f(t + dt / 2, y + dt / 2 * k1)
        k3 = f(t + dt / 2, y + dt / 2 * k2)
        k4 = f(t + dt, y + dt * k3)
        return y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)

    def integrate(self, y0, n):
        y, t = y0, 0.0
        for _ in range(n):
            y = self.step(t, y)
            t += self.dt
        return y


def lotka_volterra_final(y0, a=1.0, b=0.4, c=0.4, d=0.1):
    rhs = lambda t, y: np.array([a * y[0] - b * y[0] * y[1], d * y[0] * y[1] - c * y[1]])
    return np.sum(RK4Integrator(rhs, 0.05).integrate(y0, 10))


def ode_params_closure(p, y0=np.array([1.0, 0.0])):
    k, damp = p[0], p[1]

    def oscillator(t, y):
        return np.array([y[1], -k * y[0] - damp * y[1]])

    return RK4Integrator(oscillator, 0.1).integrate(y0, 8)[0]


class EulerSolver:
    def __init__(self, f, h=0.01):
        self.f = f
        self.h = h
        self.ts = []

    def solve(self, y0, t_end):
        y, t = y0, 0.0
        while t < t_end - 1e-12:
            y = y + self.h * self.f(y)
            t += self.h
            self.ts.append(t)
        return y


def euler_decay(y0):
    return np.sum(EulerSolver(lambda y: -0.5 * y + np.sin(y), 0.05).solve(y0, 0.5) ** 2)


# -- mixture models: statistics and logsumexp
def logsumexp(a, axis=None):
    a_max = np.max(a, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(a - a_max), axis=axis, keepdims=True)) + a_max
    return np.squeeze(out, axis=axis) if axis is not None else out.item()


class GaussianMixture1D:
    def __init__(self, logits, means, log_stds):
        self.log_w = logits - logsumexp(logits)
        self.means = means
        self.stds = np.exp(log_stds)

    def log_prob(self, x):
        z = (x[:, None] - self.means[None, :]) / self.stds[None, :]
        comp = -0.5 * z ** 2 - np.log(self.stds) - 0.5 * np.log(2 * np.pi)
        return logsumexp(comp + self.log_w, axis=1)

    def nll(self, x):
        return -np.mean(self.log_prob(x))


DATA1D = np.array([-1.2, -0.8, 0.1, 0.5, 1.7, 2.2])


def gmm_nll(theta, x=DATA1D):
    return GaussianMixture1D(theta[:2], theta[2:4], theta[4:6]).nll(x)


def statistics_summary(x):
    xs = list(x)
    m = statistics.mean(xs)
    s = statistics.stdev(xs)
    v = statistics.pvariance(xs)
    return m + s + v


def statistics_fmean_median(x):
    xs = [float(v) for v in x]
    return statistics.fmean(xs) * statistics.median(xs)


def zscore_with_statistics(x):
    mu = statistics.mean(x)
    sd = statistics.pstdev(x)
    return sum(((v - mu) / sd) ** 3 for v in x)


def em_responsibilities(means, x=DATA1D):
    log_r = -0.5 * (x[:, None] - means[None, :]) ** 2
    log_r = log_r - logsumexp(log_r, axis=1)[:, None]
    r = np.exp(log_r)
    return np.sum(r * (x[:, None] - means[None, :]) ** 2)
