"""Probe: machine-learning and statistics code in the styles of courses and tutorials.

A character-level recurrent model keeping its steps in dicts keyed by time, an LSTM cell
object stepped in a loop, batch normalisation with a parameter dict and running averages,
a logistic loss that writes into an ``empty_like`` through masks, softmax and hinge losses
written as double loops (which also build a hand gradient that is thrown away), logistic
regression by a generator over ``zip``, layer objects chained into a network, a net object
whose parameters are replaced after it is built (refused), AR(1) and GARCH(1,1) likelihoods
filled into preallocated arrays, a Poisson GLM through ``scipy.special.gammaln``, a link
class hierarchy, and Huber and log-cosh losses. Gradients (and for some jvp, hvp and the
Hessian) are checked against central differences (probe_harness.py); refusals with their
reason and place, and the fix a message names is shown to work.
"""

import numpy as np
from probe_harness import probe_tests
from scipy import special


def char_model_loss(w_in, w_rec, w_out, b_hid, b_out, seq, nxt, h0, n_sym=4):
    onehot, hidden, logits, probs = {}, {}, {}, {}
    hidden[-1] = np.copy(h0)
    total = 0
    for step in range(len(seq)):
        onehot[step] = np.zeros((n_sym, 1))
        onehot[step][seq[step]] = 1  # written through the dict, which holds it alone
        hidden[step] = np.tanh(w_in @ onehot[step] + w_rec @ hidden[step - 1] + b_hid)
        logits[step] = w_out @ hidden[step] + b_out
        probs[step] = np.exp(logits[step]) / np.sum(np.exp(logits[step]))
        total += -np.log(probs[step][nxt[step], 0])
    return total


def char_model_loss_fixed(w_in, w_rec, w_out, b_hid, b_out, seq, nxt, h0, n_sym=4):
    onehot, hidden, logits, probs = {}, {}, {}, {}
    hidden[-1] = np.copy(h0)
    total = 0
    for step in range(len(seq)):
        code = np.zeros((n_sym, 1))
        code[seq[step]] = 1
        onehot[step] = code
        hidden[step] = np.tanh(w_in @ onehot[step] + w_rec @ hidden[step - 1] + b_hid)
        logits[step] = w_out @ hidden[step] + b_out
        probs[step] = np.exp(logits[step]) / np.sum(np.exp(logits[step]))
        total += -np.log(probs[step][nxt[step], 0])
    return total


def char_model_by_recurrent(w_rec, w_in, w_out, b_hid, b_out, seq, nxt, h0):
    return char_model_loss_fixed(w_in, w_rec, w_out, b_hid, b_out, seq, nxt, h0)


def logistic(z):
    return 1.0 / (1.0 + np.exp(-z))


class GatedCell:
    """An LSTM cell: the four gates come from one affine map, sliced by width."""

    def __init__(self, w_x, w_h, bias):
        self.params = [w_x, w_h, bias]
        self.saved = None

    def forward(self, x, h, c):
        w_x, w_h, bias = self.params
        width = h.shape[1]
        pre = x @ w_x + h @ w_h + bias
        forget = logistic(pre[:, :width])
        cand = np.tanh(pre[:, width:2 * width])
        inp = logistic(pre[:, 2 * width:3 * width])
        out = logistic(pre[:, 3 * width:])
        c_new = forget * c + cand * inp
        h_new = out * np.tanh(c_new)
        self.saved = (x, h, c, c_new)
        return h_new, c_new


def gated_rollout(w_x, w_h, bias, xs, h, c):
    cell = GatedCell(w_x, w_h, bias)
    for x in xs:
        h, c = cell.forward(x, h, c)
    return np.sum(h ** 2) + np.sum(c)


def batch_norm(x, scale, shift, state):
    mode = state["mode"]
    momentum = state.get("momentum", 0.9)
    cols = x.shape[1]
    run_mean = state.get("run_mean", np.zeros(cols, dtype=x.dtype))
    run_std = state.get("run_std", np.zeros(cols, dtype=x.dtype))
    if mode == "train":
        mean = np.mean(x, axis=0)
        spread = np.std(x, axis=0)
        out = scale * (x - mean) / spread + shift
        run_mean = momentum * run_mean + (1 - momentum) * mean
        run_std = momentum * run_std + (1 - momentum) * spread
    elif mode == "test":
        out = scale * (x - run_mean) / run_std + shift
    else:
        raise ValueError(f"unknown mode {mode!r}")
    state["run_mean"] = run_mean
    state["run_std"] = run_std
    return out, (x, scale, shift)


def batch_norm_loss(x, scale, shift, weights):
    out, _ = batch_norm(x, scale, shift, {"mode": "train"})
    return np.sum(out * weights)


def logistic_loss_masked(coef_icpt, X, signs, penalty):
    coef, icpt = coef_icpt[:-1], coef_icpt[-1]
    z = X @ coef
    z += icpt
    margin = signs * z
    per = np.empty_like(margin)
    pos = margin > 0
    per[pos] = np.log(1 + np.exp(-margin[pos]))
    per[~pos] = -margin[~pos] + np.log(1 + np.exp(margin[~pos]))
    return per.sum() + 0.5 * penalty * coef.dot(coef)


def softmax_double_loop(W, X, labels, reg):
    loss = 0.0
    hand = np.zeros_like(W)
    n_cls, n_obs = W.shape[1], X.shape[0]
    for a in range(n_obs):
        s = X[a] @ W
        s = s - max(s)
        lse = np.log(np.sum(np.exp(s)))
        loss += lse - s[labels[a]]
        for b in range(n_cls):
            p = np.exp(s[b]) / sum(np.exp(s))
            hand[:, b] += (p - (b == labels[a])) * X[a]
    loss = loss / n_obs + reg * np.sum(W * W)
    return loss, hand / n_obs + 2 * reg * W


def softmax_double_loop_loss(W, X, labels, reg):
    return softmax_double_loop(W, X, labels, reg)[0]


def hinge_double_loop(W, X, labels, reg):
    hand = np.zeros(W.shape)
    loss = 0.0
    for a in range(X.shape[0]):
        s = X[a].dot(W)
        right = s[labels[a]]
        for b in range(W.shape[1]):
            if b == labels[a]:
                continue
            gap = s[b] - right + 1
            if gap > 0:
                loss += gap
                hand[:, b] += X[a]
                hand[:, labels[a]] -= X[a]
    loss /= X.shape[0]
    loss += reg * np.sum(W * W)
    hand /= X.shape[0]
    hand += 2 * reg * W
    return loss, hand


def hinge_double_loop_loss(W, X, labels, reg):
    value, _ = hinge_double_loop(W, X, labels, reg)
    return value


def linear_score(X, coef):
    return X @ coef


def bernoulli_nll_generator(coef, X, bits):
    return -sum(-z * (1 - b) - np.log(1 + np.exp(-z))
                for z, b in zip(linear_score(X, coef), bits, strict=True)) / X.shape[0]


def bernoulli_nll_vector(coef, X, bits):
    z = linear_score(X, coef)
    return -np.mean(-z * (1 - bits) - np.log(1 + np.exp(-z)))


def bernoulli_nll_log1p(coef, X, bits):
    z = X @ coef
    return np.mean(bits * np.log1p(np.exp(-z)) + (1 - bits) * np.log1p(np.exp(z)))


def stable_softmax(a):
    a = a - np.max(a, axis=-1, keepdims=True)
    return np.exp(a) / np.sum(np.exp(a), axis=-1, keepdims=True)


def picked_nll(probs, target):
    if probs.ndim == 1:
        probs = probs.reshape(1, probs.size)
        target = target.reshape(1, target.size)
    if target.size == probs.size:  # one-hot rows become class indices
        target = target.argmax(axis=1)
    rows = probs.shape[0]
    return -np.sum(np.log(probs[np.arange(rows), target] + 1e-7)) / rows


def softmax_nll(logits, target):
    return picked_nll(stable_softmax(logits), target)


class Clamp:
    def __init__(self):
        self.off = None

    def forward(self, x):
        self.off = x <= 0
        y = x.copy()
        y[self.off] = 0
        return y


class Affine:
    def __init__(self, W, b):
        self.W, self.b = W, b
        self.seen_shape = None

    def forward(self, x):
        self.seen_shape = x.shape
        flat = x.reshape(x.shape[0], -1)
        return flat @ self.W + self.b


class NllHead:
    def __init__(self):
        self.value = None

    def forward(self, logits, target):
        self.value = softmax_nll(logits, target)
        return self.value


def chained_layers_loss(W1, b1, W2, b2, x, target):
    first, clamp, second, head = Affine(W1, b1), Clamp(), Affine(W2, b2), NllHead()
    return head.forward(second.forward(clamp.forward(first.forward(x))), target)


class ShallowNet:
    def __init__(self, n_in, n_hid, n_out, spread=0.01):
        self.params = {"W1": spread * np.ones((n_in, n_hid)), "b1": np.zeros(n_hid),
                       "W2": spread * np.ones((n_hid, n_out)), "b2": np.zeros(n_out)}

    def predict(self, x):
        p = self.params
        return stable_softmax(logistic(x @ p["W1"] + p["b1"]) @ p["W2"] + p["b2"])

    def loss(self, x, target):
        return picked_nll(self.predict(x), target)


def shallow_net_swapped(params, x, target):
    net = ShallowNet(3, 4, 2)
    net.params = params  # replaced after construction: a version of net (object_stores.py)
    return net.loss(x, target)


def ar1_terms(theta, series):
    c, phi, var = theta[0], theta[1], theta[2]
    terms = np.zeros(len(series))
    stat_var = var / (1 - phi ** 2)
    terms[0] = (-0.5 * np.log(2 * np.pi) - 0.5 * np.log(stat_var)
                - 0.5 * (series[0] - c / (1 - phi)) ** 2 / stat_var)
    for t in range(1, len(series)):
        resid = series[t] - c - phi * series[t - 1]
        terms[t] = -0.5 * np.log(2 * np.pi * var) - 0.5 * resid ** 2 / var
    return terms


def ar1_negloglik(theta, series):
    return -np.sum(ar1_terms(theta, series))


def garch_terms(theta, rets):
    mu, omega, alpha, beta = theta[0], theta[1], theta[2], theta[3]
    shock = rets - mu
    var = np.zeros(len(rets))
    var[0] = shock[0] ** 2
    for t in range(1, len(rets)):
        var[t] = omega + alpha * shock[t - 1] ** 2 + beta * var[t - 1]
    terms = np.zeros(len(rets))
    terms[0] = -0.5 * np.log(2 * np.pi) - 0.5 * shock[0] ** 2 / var[0]
    for t in range(1, len(rets)):
        terms[t] = -0.5 * (np.log(2 * np.pi) + np.log(var[t]) + shock[t] ** 2 / var[t])
    return terms


def garch_negloglik(theta, rets):
    return -garch_terms(theta, rets).sum()


def poisson_terms(counts, rate, weight=1.0, dispersion=1.0):
    return weight / dispersion * (counts * np.log(rate) - rate - special.gammaln(counts + 1))


def poisson_regression_ll(beta, X, counts):
    return np.sum(poisson_terms(counts, np.exp(X @ beta)))


TINY = np.finfo(float).eps


class LinkBase:
    def __call__(self, p):
        raise NotImplementedError

    def inverse(self, z):
        raise NotImplementedError


class LogitLink(LinkBase):
    def trim(self, p):
        return np.clip(p, TINY, 1.0 - TINY)

    def __call__(self, p):
        p = self.trim(p)
        return np.log(p / (1.0 - p))

    def inverse(self, z):
        return 1.0 / (1.0 + np.exp(-np.asarray(z)))


def link_penalised_nll(beta, X, bits):
    link = LogitLink()
    p = link.trim(link.inverse(X @ beta))
    nll = -np.sum(bits * np.log(p) + (1 - bits) * np.log(1 - p))
    return nll + 0.01 * np.sum(link(p) ** 2)


def huber_total(truth, guess, knee):
    err = np.abs(truth - guess)
    return np.sum(np.where(err < knee, 0.5 * (truth - guess) ** 2, knee * err - 0.5 * knee ** 2))


def logcosh_total(truth, guess):
    return np.sum(np.log(np.cosh(guess - truth)))


def huber_by_guess(guess, truth):
    return huber_total(truth, guess, 1.0)


def logcosh_by_guess(guess, truth):
    return logcosh_total(truth, guess)


_g = np.random.default_rng(7)
N_SYM, N_HID = 4, 3
CHAR = [0.3 * _g.standard_normal(s) for s in ((N_HID, N_SYM), (N_HID, N_HID), (N_SYM, N_HID))]
CHAR += [0.1 * _g.standard_normal((N_HID, 1)), 0.1 * _g.standard_normal((N_SYM, 1))]
TEXT = ([0, 2, 1, 3, 1], [2, 1, 3, 1, 0], 0.1 * _g.standard_normal((N_HID, 1)))
X = _g.standard_normal((6, 3))
W = _g.standard_normal((3, 4))
LABELS = np.array([0, 2, 3, 1, 1, 0])
SIGNS = np.array([1.0, -1, -1, 1, 1, -1])
BITS = np.array([0.0, 1, 1, 0, 1, 0])
TWO = np.array([1, 0, 1, 1, 0, 0])
CELL = (0.5 * _g.standard_normal((3, 8)), 0.5 * _g.standard_normal((2, 8)),
        0.1 * _g.standard_normal(8))
CELL_X = [_g.standard_normal((2, 3)) for _ in range(3)]
NET = {"W1": 0.5 * _g.standard_normal((3, 4)), "b1": 0.1 * _g.standard_normal(4),
       "W2": 0.5 * _g.standard_normal((4, 2)), "b2": 0.1 * _g.standard_normal(2)}
LEVELS = np.cumsum(_g.standard_normal(12)) * 0.3
RETS = _g.standard_normal(15) * 0.5

PROBES = {
    "char_model_loss": (char_model_loss, (*CHAR, *TEXT), False),
    "char_model_loss_fixed": (char_model_loss_fixed, (*CHAR, *TEXT), False),
    "char_model_by_recurrent": (char_model_by_recurrent, (CHAR[1], CHAR[0], *CHAR[2:], *TEXT),
                                True),
    "gated_rollout": (gated_rollout, (*CELL, CELL_X, np.zeros((2, 2)), np.zeros((2, 2))), False),
    "batch_norm_loss": (batch_norm_loss, (X, np.array([1.0, 2, 0.5]), np.zeros(3), X[::-1]),
                        True),
    "logistic_loss_masked": (logistic_loss_masked,
                             (np.array([0.3, -0.5, 0.8, 0.1]), X, SIGNS, 0.1), True),
    "softmax_double_loop_loss": (softmax_double_loop_loss, (W, X, LABELS, 0.1), False),
    "hinge_double_loop_loss": (hinge_double_loop_loss, (W, X, LABELS, 0.1), False),
    "bernoulli_nll_generator": (bernoulli_nll_generator, (np.array([0.3, -0.5, 0.8]), X, BITS),
                                True),
    "bernoulli_nll_vector": (bernoulli_nll_vector, (np.array([0.3, -0.5, 0.8]), X, BITS), False),
    "bernoulli_nll_log1p": (bernoulli_nll_log1p, (np.array([0.3, -0.5, 0.8]), X, BITS), True),
    "softmax_nll": (softmax_nll, (X[:, :2] * 2, TWO), True),
    "softmax_nll_one_hot": (softmax_nll, (X[:, :2] * 2, np.eye(2)[TWO]), False),
    "chained_layers_loss": (chained_layers_loss, (*NET.values(), X, np.eye(2)[TWO]), False),
    "ar1_negloglik": (ar1_negloglik, (np.array([0.1, 0.5, 0.8]), LEVELS), True),
    "garch_negloglik": (garch_negloglik, (np.array([0.05, 0.1, 0.15, 0.7]), RETS), True),
    "poisson_regression_ll": (poisson_regression_ll, (np.array([0.2, -0.1, 0.3]), X,
                                                      np.array([0.0, 2, 1, 4, 0, 3])), True),
    # (a field-less object whose method calls another: its hvp once failed in the reverse sweep)
    "link_penalised_nll": (link_penalised_nll, (np.array([0.2, -0.4, 0.3]), X, BITS), True),
    "huber_by_guess": (huber_by_guess, (np.array([0.1, 2.0, -1.5, 0.4]), np.zeros(4)), False),
    "logcosh_by_guess": (logcosh_by_guess, (np.array([0.1, 2.0, -1.5, 0.4]), np.zeros(4)), True),
    "shallow_net_swapped": (shallow_net_swapped, (NET, X, np.eye(2)[TWO]), False),
}


test_probe, test_float32 = probe_tests(PROBES)


# (The two refused styles of this module, char_model_loss's write through a dict and
# shallow_net_swapped's store on its own object, are probes now.)
