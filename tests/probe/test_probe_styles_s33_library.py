"""Probe: library-style NumPy code, written as estimator and model libraries write it.

Estimator classes from "ML from scratch" projects (``__init__`` keeping hyperparameters,
``fit`` loops writing ``self.w``), loss classes with ``__call__`` and ``gradient``
methods, activation and regularizer objects (``l2 = L2(alpha); l2(w)``), a ``Sequential``
list of layers; astropy.modeling / lmfit style models (``evaluate`` as a staticmethod,
parameters objects with ``.value``, composite models summed, residuals
``(data - model(params, x)) / err``); scikit-learn-like losses with ``sample_weight``,
``np.where``-masked Huber and quantile losses, a clipped log-loss, an RBF kernel by
broadcasting; filterpy-style unscented and extended Kalman filters (sigma points from a
Cholesky factor, ``np.outer`` loops, weight vectors, transition functions passed in).
Each differentiated with respect to its first argument against central differences
(probe_harness.py).
"""

import numpy as np
from probe_harness import probe_tests, refusal_test

# -- ML-from-scratch estimators, losses, activations, regularizers -----------------------------


class Sigmoid:
    def __call__(self, x):
        return 1 / (1 + np.exp(-x))

    def gradient(self, x):
        return self.__call__(x) * (1 - self.__call__(x))


class TanH:
    def __call__(self, x):
        return 2 / (1 + np.exp(-2 * x)) - 1

    def gradient(self, x):
        return 1 - np.power(self.__call__(x), 2)


class LeakyReLU:
    def __init__(self, alpha=0.2):
        self.alpha = alpha

    def __call__(self, x):
        return np.where(x >= 0, x, self.alpha * x)

    def gradient(self, x):
        return np.where(x >= 0, 1, self.alpha)


class Softmax:
    def __call__(self, x):
        e_x = np.exp(x - np.max(x, axis=-1, keepdims=True))
        return e_x / np.sum(e_x, axis=-1, keepdims=True)


class Loss:
    def loss(self, y_true, y_pred):
        raise NotImplementedError()

    def gradient(self, y, y_pred):
        raise NotImplementedError()


class SquareLoss(Loss):
    def __init__(self):
        pass

    def loss(self, y, y_pred):
        return 0.5 * np.power((y - y_pred), 2)

    def gradient(self, y, y_pred):
        return -(y - y_pred)


class CrossEntropy(Loss):
    def __init__(self):
        pass

    def loss(self, y, p):
        p = np.clip(p, 1e-15, 1 - 1e-15)
        return -y * np.log(p) - (1 - y) * np.log(1 - p)

    def gradient(self, y, p):
        p = np.clip(p, 1e-15, 1 - 1e-15)
        return -(y / p) + (1 - y) / (1 - p)


class l1_regularization:
    def __init__(self, alpha):
        self.alpha = alpha

    def __call__(self, w):
        return self.alpha * np.linalg.norm(w)

    def grad(self, w):
        return self.alpha * np.sign(w)


class l2_regularization:
    def __init__(self, alpha):
        self.alpha = alpha

    def __call__(self, w):
        return self.alpha * 0.5 * w.T.dot(w)

    def grad(self, w):
        return self.alpha * w


class l1_l2_regularization:
    def __init__(self, alpha, l1_ratio=0.5):
        self.alpha = alpha
        self.l1_ratio = l1_ratio

    def __call__(self, w):
        l1_contr = self.l1_ratio * np.linalg.norm(w)
        l2_contr = (1 - self.l1_ratio) * 0.5 * w.T.dot(w)
        return self.alpha * (l1_contr + l2_contr)


class Regression:
    def __init__(self, n_iterations, learning_rate):
        self.n_iterations = n_iterations
        self.learning_rate = learning_rate

    def initialize_weights(self, n_features):
        limit = 1 / np.sqrt(n_features)
        self.w = np.linspace(-limit, limit, n_features)

    def fit(self, X, y):
        X = np.insert(X, 0, 1, axis=1)
        self.training_errors = []
        self.initialize_weights(n_features=X.shape[1])
        for _ in range(self.n_iterations):
            y_pred = X.dot(self.w)
            mse = np.mean(0.5 * (y - y_pred) ** 2 + self.regularization(self.w))
            self.training_errors.append(mse)
            grad_w = -(y - y_pred).dot(X) + self.regularization.grad(self.w)
            self.w -= self.learning_rate * grad_w

    def predict(self, X):
        X = np.insert(X, 0, 1, axis=1)
        return X.dot(self.w)


class RidgeRegression(Regression):
    def __init__(self, reg_factor, n_iterations=3, learning_rate=0.01):
        self.regularization = l2_regularization(alpha=reg_factor)
        super().__init__(n_iterations, learning_rate)


def ridge_fit_predict(X, y):
    """The prediction of a ridge model trained by its own ``fit`` loop, as a function of
    the training inputs."""
    model = RidgeRegression(reg_factor=0.1, n_iterations=3, learning_rate=0.05)
    model.fit(X, y)
    return np.sum(model.predict(X) ** 2)


def ridge_loss_of_weights(w, X, y):
    """The training objective of the ridge model at given weights."""
    model = RidgeRegression(reg_factor=0.3)
    X = np.insert(X, 0, 1, axis=1)
    y_pred = X.dot(w)
    return np.mean(0.5 * (y - y_pred) ** 2) + model.regularization(w)


def elastic_net_objective(w, X, y):
    reg = l1_l2_regularization(alpha=0.2, l1_ratio=0.3)
    return np.mean(SquareLoss().loss(y, X @ w)) + reg(w)


class LogisticRegression:
    def __init__(self, learning_rate=0.1, n_iterations=4):
        self.param = None
        self.learning_rate = learning_rate
        self.n_iterations = n_iterations
        self.sigmoid = Sigmoid()

    def _initialize_parameters(self, X):
        n_features = np.shape(X)[1]
        limit = 1 / np.sqrt(n_features)
        self.param = np.linspace(-limit, limit, n_features)

    def fit(self, X, y):
        self._initialize_parameters(X)
        for _ in range(self.n_iterations):
            y_pred = self.sigmoid(X.dot(self.param))
            self.param -= self.learning_rate * -(y - y_pred).dot(X)

    def predict_proba(self, X):
        return self.sigmoid(X.dot(self.param))


def logistic_trained_proba(X, y):
    clf = LogisticRegression(learning_rate=0.2, n_iterations=3)
    clf.fit(X, y)
    p = clf.predict_proba(X)
    return np.sum(CrossEntropy().loss(y, p))


def logistic_loss(w, X, y):
    act = Sigmoid()
    p = act(X @ w)
    return np.mean(CrossEntropy().loss(y, p))


class Dense:
    def __init__(self, W, w0, activation=None):
        self.W = W
        self.w0 = w0
        self.activation = activation

    def forward_pass(self, X):
        out = X.dot(self.W) + self.w0
        if self.activation is not None:
            out = self.activation(out)
        return out


class NeuralNetwork:
    def __init__(self, loss):
        self.layers = []
        self.loss_function = loss()

    def add(self, layer):
        self.layers.append(layer)

    def _forward_pass(self, X):
        layer_output = X
        for layer in self.layers:
            layer_output = layer.forward_pass(layer_output)
        return layer_output

    def test_on_batch(self, X, y):
        y_pred = self._forward_pass(X)
        return np.mean(self.loss_function.loss(y, y_pred))


def sequential_loss(W1, X, y, W2):
    net = NeuralNetwork(loss=SquareLoss)
    net.add(Dense(W1, np.full(W1.shape[1], 0.1), activation=TanH()))
    net.add(Dense(W2, np.zeros(W2.shape[1]), activation=LeakyReLU(0.1)))
    return net.test_on_batch(X, y)


def activation_gradients(x):
    """The activations' hand-written gradients, themselves differentiated."""
    s, t = Sigmoid(), TanH()
    return np.sum(s.gradient(x) * t(x)) + np.sum(t.gradient(x) ** 2)


def softmax_nll(W, X, Y):
    probs = Softmax()(X @ W)
    return -np.sum(Y * np.log(probs)) / X.shape[0]


# -- astropy.modeling / lmfit style models -----------------------------------------------------


class Parameter:
    def __init__(self, name, value, vary=True):
        self.name = name
        self.value = value
        self.vary = vary


class Parameters(dict):
    def add(self, name, value=0.0, vary=True):
        self[name] = Parameter(name, value, vary)

    def valuesdict(self):
        return {name: par.value for name, par in self.items()}


class Gaussian1D:
    def __init__(self, amplitude=1.0, mean=0.0, stddev=1.0):
        self.amplitude = amplitude
        self.mean = mean
        self.stddev = stddev

    @staticmethod
    def evaluate(x, amplitude, mean, stddev):
        return amplitude * np.exp(-0.5 * (x - mean) ** 2 / stddev ** 2)

    def __call__(self, x):
        return self.evaluate(x, self.amplitude, self.mean, self.stddev)


class Const1D:
    def __init__(self, amplitude=0.0):
        self.amplitude = amplitude

    @staticmethod
    def evaluate(x, amplitude):
        return amplitude * np.ones_like(x)

    def __call__(self, x):
        return self.evaluate(x, self.amplitude)


class CompoundModel:
    def __init__(self, left, right):
        self.left = left
        self.right = right

    def __call__(self, x):
        return self.left(x) + self.right(x)


def gaussian_staticmethod_chi2(theta, x, data, err):
    amplitude, mean, stddev = theta
    model = Gaussian1D.evaluate(x, amplitude, mean, stddev)
    return np.sum(((data - model) / err) ** 2)


def compound_model_chi2(theta, x, data):
    g1 = Gaussian1D(theta[0], theta[1], theta[2])
    g2 = Gaussian1D(theta[3], -1.0, 0.5)
    model = CompoundModel(CompoundModel(g1, g2), Const1D(theta[4]))
    return np.sum((data - model(x)) ** 2)


def lmfit_model(params, x):
    amp = params["amp"].value
    cen = params["cen"].value
    wid = params["wid"].value
    return amp * np.exp(-((x - cen) ** 2) / (2 * wid ** 2))


def lmfit_residual(amp, x, data, err):
    params = Parameters()
    params.add("amp", value=amp)
    params.add("cen", value=0.3)
    params.add("wid", value=1.2)
    resid = (data - lmfit_model(params, x)) / err
    return np.sum(resid ** 2)


def lmfit_plain_dict(amp, x, data, err):
    """The fix of the refused Parameters.add: a plain dict of Parameter objects, one of
    them made of constants only."""
    params = {}
    params["amp"] = Parameter("amp", amp)
    params["cen"] = Parameter("cen", 0.3)
    params["wid"] = Parameter("wid", 1.2, vary=False)
    resid = (data - lmfit_model(params, x)) / err
    return np.sum(resid**2)


def lmfit_display_values(theta, x, data):
    params = {"amp": Parameter("amp", theta[0]), "decay": Parameter("decay", theta[1]),
              "shift": Parameter("shift", 0.7, vary=False)}
    v = {name: par.value for name, par in params.items()}
    model = v["amp"] * np.sin(x * v["shift"]) * np.exp(-x * x * v["decay"])
    return np.sum((model - data) ** 2)


def lmfit_valuesdict(theta, x, data):
    params = Parameters()
    params.add("amp", value=theta[0])
    params.add("decay", value=theta[1])
    params.add("shift", value=theta[2], vary=False)
    v = params.valuesdict()
    model = v["amp"] * np.sin(x * v["shift"]) * np.exp(-x * x * v["decay"])
    return np.sum((model - data) ** 2)


# -- scikit-learn-like losses and kernels ------------------------------------------------------


def huber_loss(y_pred, y_true, sample_weight, delta=1.0):
    diff = y_true - y_pred
    abs_diff = np.abs(diff)
    loss = np.where(abs_diff <= delta, 0.5 * diff ** 2, delta * (abs_diff - 0.5 * delta))
    return np.average(loss, weights=sample_weight)


def quantile_loss(y_pred, y_true, sample_weight, alpha=0.3):
    diff = y_true - y_pred
    mask = y_true > y_pred
    loss = alpha * diff[mask].dot(sample_weight[mask]) - (1 - alpha) * diff[~mask].dot(
        sample_weight[~mask])
    return loss / sample_weight.sum()


def log_loss(y_prob, y_true, sample_weight=None, eps=1e-15):
    y_prob = np.clip(y_prob, eps, 1 - eps)
    losses = -(y_true * np.log(y_prob) + (1 - y_true) * np.log(1 - y_prob))
    return np.average(losses, weights=sample_weight)


def multinomial_log_loss(raw, Y, sample_weight):
    raw = raw - raw.max(axis=1)[:, np.newaxis]
    log_prob = raw - np.log(np.exp(raw).sum(axis=1))[:, np.newaxis]
    return -np.sum(sample_weight * np.sum(Y * log_prob, axis=1)) / np.sum(sample_weight)


def rbf_kernel(X, Y=None, gamma=None):
    if Y is None:
        Y = X
    if gamma is None:
        gamma = 1.0 / X.shape[1]
    sq = np.sum(X ** 2, axis=1)[:, None] + np.sum(Y ** 2, axis=1)[None, :] - 2 * X @ Y.T
    np.maximum(sq, 0, out=sq)
    return np.exp(-gamma * sq)


def kernel_ridge_fit(X, y, alpha=0.1):
    K = rbf_kernel(X, gamma=0.5)
    dual = np.linalg.solve(K + alpha * np.eye(K.shape[0]), y)
    return np.sum((K @ dual - y) ** 2) + dual @ K @ dual


def rbf_cdist_loss(length_scale, X, Z):
    dists = np.sqrt(((X[:, None, :] - Z[None, :, :]) ** 2).sum(-1))
    K = np.exp(-0.5 * (dists / length_scale) ** 2)
    return np.sum(K)


def hinge_sample_weight(w, X, y, sample_weight, C=1.0):
    margin = y * (X @ w)
    loss = np.maximum(0, 1 - margin)
    return 0.5 * np.dot(w, w) + C * np.sum(sample_weight * loss)


# -- filterpy-style Kalman filters -------------------------------------------------------------


class MerweScaledSigmaPoints:
    def __init__(self, n, alpha, beta, kappa):
        self.n = n
        self.alpha = alpha
        self.beta = beta
        self.kappa = kappa
        self._compute_weights()

    def num_sigmas(self):
        return 2 * self.n + 1

    def sigma_points(self, x, P):
        n = self.n
        lambda_ = self.alpha ** 2 * (n + self.kappa) - n
        U = np.linalg.cholesky((lambda_ + n) * P).T
        sigmas = np.zeros((2 * n + 1, n))
        sigmas[0] = x
        for k in range(n):
            sigmas[k + 1] = x + U[k]
            sigmas[n + k + 1] = x - U[k]
        return sigmas

    def _compute_weights(self):
        n = self.n
        lambda_ = self.alpha ** 2 * (n + self.kappa) - n
        c = 0.5 / (n + lambda_)
        self.Wc = np.full(2 * n + 1, c)
        self.Wm = np.full(2 * n + 1, c)
        self.Wc[0] = lambda_ / (n + lambda_) + (1 - self.alpha ** 2 + self.beta)
        self.Wm[0] = lambda_ / (n + lambda_)


def unscented_transform(sigmas, Wm, Wc, noise_cov=None):
    kmax, n = sigmas.shape
    x = np.dot(Wm, sigmas)
    P = np.zeros((n, n))
    for k in range(kmax):
        y = sigmas[k] - x
        P += Wc[k] * np.outer(y, y)
    if noise_cov is not None:
        P += noise_cov
    return x, P


def fx_pendulum(x, dt):
    return np.array([x[0] + dt * x[1], x[1] - dt * np.sin(x[0])])


def hx_range(x):
    return np.array([np.sqrt(x[0] ** 2 + 1.0)])


def ukf_predict_update(x, P, z, fx, hx, dt, Q, R):
    points = MerweScaledSigmaPoints(2, alpha=0.5, beta=2.0, kappa=1.0)
    sigmas = points.sigma_points(x, P)
    sigmas_f = np.zeros_like(sigmas)
    for i in range(points.num_sigmas()):
        sigmas_f[i] = fx(sigmas[i], dt)
    x_prior, P_prior = unscented_transform(sigmas_f, points.Wm, points.Wc, Q)
    sigmas_h = np.array([hx(s) for s in sigmas_f])
    zp, S = unscented_transform(sigmas_h, points.Wm, points.Wc, R)
    Pxz = np.zeros((2, 1))
    for i in range(points.num_sigmas()):
        Pxz += points.Wc[i] * np.outer(sigmas_f[i] - x_prior, sigmas_h[i] - zp)
    K = Pxz @ np.linalg.inv(S)
    x_post = x_prior + K @ (z - zp)
    P_post = P_prior - K @ S @ K.T
    return x_post, P_post


def ukf_step_loss(x0, P0, zs):
    x, P = x0, P0
    for z in zs:
        x, P = ukf_predict_update(x, P, z, fx_pendulum, hx_range, 0.1,
                                  0.01 * np.eye(2), np.array([[0.05]]))
    return np.sum(x ** 2) + np.trace(P)


def ekf_loglik(q, zs, x0):
    """An extended Kalman filter's log-likelihood as a function of its process noise, with
    the Jacobians written by hand."""
    x = x0.copy()
    P = np.eye(2)
    Q = np.diag(q)
    R = np.array([[0.1]])
    ll = 0.0
    dt = 0.1
    for z in zs:
        F = np.array([[1.0, dt], [-dt * np.cos(x[0]), 1.0]])
        x = fx_pendulum(x, dt)
        P = F @ P @ F.T + Q
        H = np.array([[x[0] / np.sqrt(x[0] ** 2 + 1.0), 0.0]])
        y = z - hx_range(x)
        S = H @ P @ H.T + R
        K = P @ H.T @ np.linalg.inv(S)
        x = x + K @ y
        P = (np.eye(2) - K @ H) @ P
        ll += -0.5 * (np.log(2 * np.pi * S[0, 0]) + y[0] ** 2 / S[0, 0])
    return ll


_r = np.random.default_rng(33)
XR = _r.standard_normal((6, 2))
YR = XR @ np.array([0.5, -1.0]) + 0.3
YB = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 0.0])
W3 = np.array([0.2, -0.4, 0.1])
W1 = 0.5 * _r.standard_normal((2, 3))
W2 = 0.5 * _r.standard_normal((3, 2))
YS = _r.standard_normal((6, 2))
XG = np.linspace(-3, 3, 9)
DG = 2.0 * np.exp(-0.5 * (XG - 0.4) ** 2 / 0.8 ** 2) + 0.1 * _r.standard_normal(9)
ERR = np.full(9, 0.2) + 0.05 * np.arange(9) / 9
SW = np.array([1.0, 2.0, 0.5, 1.0, 3.0, 1.5])
YONE = np.eye(3)[[0, 2, 1, 1, 0, 2]]
ZS = np.array([[1.1], [1.05], [1.2]])

PROBES = {
    "ridge_fit_predict": (ridge_fit_predict, (XR, YR), False),
    "ridge_loss_of_weights": (ridge_loss_of_weights, (W3, XR, YR), False),
    "elastic_net_objective": (elastic_net_objective, (W3[:2], XR, YR), False),
    "logistic_trained_proba": (logistic_trained_proba, (XR, YB), False),
    "logistic_loss": (logistic_loss, (W3[:2], XR, YB), True),
    "sequential_loss": (sequential_loss, (W1, XR, YS, W2), False),
    "activation_gradients": (activation_gradients, (np.array([-1.5, -0.2, 0.3, 2.0]),), False),
    "softmax_nll": (softmax_nll, (0.5 * _r.standard_normal((2, 3)), XR, YONE), True),
    "gaussian_staticmethod_chi2": (gaussian_staticmethod_chi2,
                                   (np.array([1.8, 0.3, 0.9]), XG, DG, ERR), True),
    "compound_model_chi2": (compound_model_chi2,
                            (np.array([1.8, 0.3, 0.9, 0.4, 0.05]), XG, DG), False),
    "lmfit_plain_dict": (lmfit_plain_dict, (1.7, XG, DG, ERR), True),
    "lmfit_display_values": (lmfit_display_values, (np.array([1.5, 0.2]), XG, DG), True),
    "huber_loss": (huber_loss, (YR + np.array([0.3, -2.0, 0.1, 1.7, -0.4, 0.0]) + 0.05, YR, SW),
                   True),
    "quantile_loss": (quantile_loss, (YR + np.array([0.3, -2.0, 0.1, 1.7, -0.4, 0.2]), YR, SW),
                      True),
    "log_loss": (log_loss, (np.array([0.9, 0.2, 0.6, 0.7, 0.4, 0.1]), YB, SW), True),
    "multinomial_log_loss": (multinomial_log_loss, (_r.standard_normal((6, 3)), YONE, SW), True),
    "kernel_ridge_fit": (kernel_ridge_fit, (XR, YR), False),
    "rbf_cdist_loss": (rbf_cdist_loss, (0.8, XR, XR[:3] + 0.2), True),
    "hinge_sample_weight": (hinge_sample_weight, (W3[:2], XR, 2 * YB - 1, SW), True),
    "ukf_step_loss": (ukf_step_loss, (np.array([0.6, 0.1]), np.diag([0.2, 0.1]), ZS), False),
    "ekf_loglik": (ekf_loglik, (np.array([0.02, 0.03]), ZS, np.array([0.6, 0.1])), False),

}

test_probe, test_float32 = probe_tests(PROBES, quick=6)

# Refused, each with a message naming the line and a fix that works (lmfit_plain_dict):
# * lmfit's Parameters, a dict subclass whose own method `add` stores items into the
#   object: PB106 at the call, naming Parameters.add.
REFUSED = {
    "lmfit_residual": (lmfit_residual, (1.7, XG, DG, ERR),
                       ("PB106", "calls Parameters.add, a method of a dict subclass",
                        "`params = {}` and `params[key] = value`")),
    "lmfit_valuesdict": (lmfit_valuesdict, (np.array([1.5, 0.2, 0.7]), XG, DG),
                         ("PB106", "Parameters.add")),
}

test_refused = refusal_test(REFUSED)
