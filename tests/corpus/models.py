"""Model code in the style of autograd's examples: parameters as lists of tuples or
dicts, helper functions, log-likelihoods written with NumPy and SciPy."""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

RNG = np.random.default_rng(7)
INPUTS = RNG.normal(size=(6, 3))
TARGETS = (RNG.uniform(size=6) > 0.5).astype(float)
COUNTS = np.array([0.0, 2.0, 1.0, 4.0, 0.0, 3.0])
SERIES = RNG.normal(size=(5, 2))


def sigmoid(x):
    return 0.5 * (np.tanh(x / 2.0) + 1)


def logistic_predictions(weights, inputs):
    return sigmoid(np.dot(inputs, weights))


def training_loss(weights):
    preds = logistic_predictions(weights, INPUTS)
    label_probabilities = preds * TARGETS + (1 - preds) * (1 - TARGETS)
    return -np.sum(np.log(label_probabilities))


def init_random_params(scale, layer_sizes, rs=np.random.default_rng(0)):
    return [
        (scale * rs.standard_normal((m, n)), scale * rs.standard_normal(n))
        for m, n in zip(layer_sizes[:-1], layer_sizes[1:])
    ]


def neural_net_predict(params, inputs):
    for W, b in params:
        outputs = np.dot(inputs, W) + b
        inputs = np.tanh(outputs)
    return outputs - logsumexp(outputs, axis=1, keepdims=True)


def log_posterior(params, inputs, targets, l2=0.1):
    log_prior = -l2 * sum(np.sum(w**2) + np.sum(b**2) for w, b in params)
    log_lik = np.sum(neural_net_predict(params, inputs) * targets)
    return log_prior + log_lik


def mlp_objective(params):
    onehot = np.eye(2)[TARGETS.astype(int)]
    return -log_posterior(params, INPUTS, onehot)


def rnn_predict(params, series):
    h = np.zeros(params["W_h"].shape[0])
    hiddens = []
    for t in range(series.shape[0]):
        h = np.tanh(params["W_x"] @ series[t] + params["W_h"] @ h + params["b"])
        hiddens.append(h)
    return np.stack(hiddens)


def rnn_loss(params):
    hs = rnn_predict(params, SERIES)
    return np.sum((hs @ params["W_out"]) ** 2)


def poisson_regression(beta):
    eta = INPUTS @ beta
    return -np.sum(COUNTS * eta - np.exp(eta))


def softmax_regression(W):
    logits = INPUTS @ W
    logp = logits - logsumexp(logits, axis=1, keepdims=True)
    labels = TARGETS.astype(int)
    return -np.mean(logp[np.arange(len(labels)), labels])


def gaussian_mixture_nll(means, log_sigma=0.1):
    x = INPUTS[:, 0]
    d = x[:, None] - means[None, :]
    log_probs = -0.5 * (d / np.exp(log_sigma)) ** 2 - log_sigma - 0.5 * np.log(2 * np.pi)
    return -np.sum(logsumexp(log_probs - np.log(len(means)), axis=1))


def gp_negative_log_likelihood(log_params):
    lengthscale, noise = np.exp(log_params[0]), np.exp(log_params[1])
    x = INPUTS[:, 0]
    sq = (x[:, None] - x[None, :]) ** 2
    K = np.exp(-0.5 * sq / lengthscale**2) + noise * np.eye(len(x))
    L = np.linalg.cholesky(K)
    alpha = np.linalg.solve(K, TARGETS)
    return 0.5 * TARGETS @ alpha + np.sum(np.log(np.diag(L)))


def elbo(var_params, eps=RNG.normal(size=(4, 3))):
    mean, log_std = var_params[:3], var_params[3:]
    samples = mean + np.exp(log_std) * eps
    log_density = -0.5 * np.sum(samples**2, axis=1)
    entropy = np.sum(log_std)
    return -(np.mean(log_density) + entropy)


def bayesian_linear_regression(w, prior_var=2.0, noise_var=0.5):
    resid = TARGETS - INPUTS @ w
    return 0.5 * resid @ resid / noise_var + 0.5 * w @ w / prior_var


def lotka_volterra_euler(theta, steps=20, dt=0.05):
    a, b, c, d = theta
    prey, predator = 1.0, 0.5
    trajectory = []
    for _ in range(steps):
        dprey = a * prey - b * prey * predator
        dpred = d * prey * predator - c * predator
        prey, predator = prey + dt * dprey, predator + dt * dpred
        trajectory.append(prey + predator)
    return sum(trajectory) / steps


MLP_PARAMS = init_random_params(0.5, [3, 4, 2])
RNN_PARAMS = {
    "W_x": RNG.normal(size=(3, 2)) * 0.5,
    "W_h": RNG.normal(size=(3, 3)) * 0.5,
    "b": RNG.normal(size=3) * 0.1,
    "W_out": RNG.normal(size=(3, 2)),
}

# (function, arguments): differentiated with respect to the first argument.
CASES = [
    (training_loss, (RNG.normal(size=3),)),
    (mlp_objective, (MLP_PARAMS,)),
    (rnn_loss, (RNN_PARAMS,)),
    (poisson_regression, (RNG.normal(size=3) * 0.3,)),
    (softmax_regression, (RNG.normal(size=(3, 2)),)),
    (gaussian_mixture_nll, (np.array([-0.5, 0.2, 0.9]),)),
    (gp_negative_log_likelihood, (np.array([0.1, -1.0]),)),
    (elbo, (RNG.normal(size=6) * 0.3,)),
    (bayesian_linear_regression, (RNG.normal(size=3),)),
    (lotka_volterra_euler, (np.array([1.1, 0.4, 0.4, 0.1]),)),
]
