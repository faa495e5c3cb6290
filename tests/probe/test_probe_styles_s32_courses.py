"""Probe: NumPy deep learning written as courses and textbooks write it.

Naive loops over preallocated outputs (convolution with ``np.pad`` and window sums,
max-pooling with ``np.max`` over windows, im2col index building), affine/ReLU/softmax/SVM
losses with ``np.arange(N), y`` fancy indexing and masked stores, batch and layer norm
returning ``out, cache`` tuples, dropout with a given mask, RNN and LSTM step loops writing
``h[:, t, :]`` with gates sliced from one pre-activation and a hand-written sigmoid, word
embeddings ``W[x]``, a model class keeping its parameters in ``self.params`` whose
``loss(X, y)`` returns ``loss, grads`` (computed by hand beside the loss), textbook
``corr2d``/``pool2d``, a network of column vectors, optimiser steps with config dicts.
Differentiated against central differences (probe_harness.py).
"""

import numpy as np
import s32_layers as layers
from probe_harness import probe_tests, refusal_test
from s32_layers import (
    affine_relu_backward,
    affine_relu_forward,
    batchnorm_forward,
    layernorm_forward,
    lstm_forward,
    rnn_forward,
    sigmoid,
    softmax_loss,
    svm_loss,
    temporal_affine_forward,
    temporal_softmax_loss,
    word_embedding_forward,
)
from s32_textbook import (
    corr2d_loss,
    d2l_loss,
    d2l_rnn_loss,
    nielsen_cost,
    pool2d_loss,
    unrolled_adam,
    unrolled_sgd,
)

# -- linear classifiers, loops and vectorised ---------------------------------------------------


def svm_loss_naive(W, X, y, reg):
    num_classes = W.shape[1]
    num_train = X.shape[0]
    loss = 0.0
    dW = np.zeros(W.shape)
    for i in range(num_train):
        scores = X[i].dot(W)
        correct_class_score = scores[y[i]]
        for j in range(num_classes):
            if j == y[i]:
                continue
            margin = scores[j] - correct_class_score + 1
            if margin > 0:
                loss += margin
                dW[:, j] += X[i]
                dW[:, y[i]] -= X[i]
    loss /= num_train
    loss += reg * np.sum(W * W)
    return loss


def svm_loss_vectorized(W, X, y, reg):
    num_train = X.shape[0]
    scores = X.dot(W)
    correct = scores[np.arange(num_train), y]
    margins = scores - correct[:, np.newaxis] + 1
    margins[margins < 0] = 0
    margins[np.arange(num_train), y] = 0
    loss = margins.sum() / num_train
    loss += 0.5 * reg * np.sum(W ** 2)
    return loss


def softmax_loss_naive(W, X, y, reg):
    loss = 0.0
    num_train = X.shape[0]
    for i in range(num_train):
        scores = X[i].dot(W)
        scores -= np.max(scores)
        p = np.exp(scores) / np.sum(np.exp(scores))
        loss += -np.log(p[y[i]])
    loss /= num_train
    loss += reg * np.sum(W * W)
    return loss


def softmax_loss_vectorized(W, X, y, reg):
    N = X.shape[0]
    scores = X @ W
    scores -= scores.max(axis=1, keepdims=True)
    exp_scores = np.exp(scores)
    probs = exp_scores / np.sum(exp_scores, axis=1, keepdims=True)
    correct_logprobs = -np.log(probs[range(N), y])
    data_loss = np.sum(correct_logprobs) / N
    return data_loss + 0.5 * reg * np.sum(W * W)


def score_gradient_norm(W, X, y):
    """The norm of the hand-made score gradient (probs[range(N), y] -= 1) as a loss."""
    N = X.shape[0]
    scores = X @ W
    exp_scores = np.exp(scores - np.max(scores, axis=1, keepdims=True))
    probs = exp_scores / np.sum(exp_scores, axis=1, keepdims=True)
    dscores = probs
    dscores[range(N), y] -= 1
    dscores /= N
    return np.sum(dscores ** 2)


def relu_backward_of_dout(dout, x):
    dx = layers.relu_backward(dout, x)
    return np.sum(dx * np.cos(dout))


# -- convolution and pooling, naive ---------------------------------------------------------


def conv_forward_naive(x, w, b, conv_param):
    stride, pad = conv_param["stride"], conv_param["pad"]
    N, C, H, W = x.shape
    F, _, HH, WW = w.shape
    x_pad = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), mode="constant")
    H_out = 1 + (H + 2 * pad - HH) // stride
    W_out = 1 + (W + 2 * pad - WW) // stride
    out = np.zeros((N, F, H_out, W_out))
    for n in range(N):
        for f in range(F):
            for i in range(H_out):
                for j in range(W_out):
                    hs, ws = i * stride, j * stride
                    window = x_pad[n, :, hs:hs + HH, ws:ws + WW]
                    out[n, f, i, j] = np.sum(window * w[f]) + b[f]
    cache = (x, w, b, conv_param)
    return out, cache


def conv_loss_w(w, x, b):
    out, _ = conv_forward_naive(x, w, b, {"stride": 1, "pad": 1})
    return np.sum(np.tanh(out) ** 2)


def conv_loss_x(x, w, b):
    out, _ = conv_forward_naive(x, w, b, {"stride": 2, "pad": 1})
    return np.sum(out * np.arange(out.size).reshape(out.shape) / out.size)


def max_pool_forward_naive(x, pool_param):
    N, C, H, W = x.shape
    ph, pw = pool_param["pool_height"], pool_param["pool_width"]
    stride = pool_param["stride"]
    H_out = 1 + (H - ph) // stride
    W_out = 1 + (W - pw) // stride
    out = np.zeros((N, C, H_out, W_out))
    for i in range(H_out):
        for j in range(W_out):
            region = x[:, :, i * stride:i * stride + ph, j * stride:j * stride + pw]
            out[:, :, i, j] = np.max(region, axis=(2, 3))
    return out, (x, pool_param)


def pool_loss(x):
    out, _ = max_pool_forward_naive(x, {"pool_height": 2, "pool_width": 2, "stride": 2})
    return np.sum(out ** 2) + np.sum(np.sin(out))


def max_pool_per_element(x):
    N, C, H, W = x.shape
    out = np.zeros((N, C, H // 2, W // 2))
    for n in range(N):
        for c in range(C):
            for i in range(H // 2):
                for j in range(W // 2):
                    out[n, c, i, j] = np.max(x[n, c, 2 * i:2 * i + 2, 2 * j:2 * j + 2])
    return np.sum(out * out)


def get_im2col_indices(x_shape, field_height, field_width, padding=1, stride=1):
    N, C, H, W = x_shape
    out_height = (H + 2 * padding - field_height) // stride + 1
    out_width = (W + 2 * padding - field_width) // stride + 1
    i0 = np.repeat(np.arange(field_height), field_width)
    i0 = np.tile(i0, C)
    i1 = stride * np.repeat(np.arange(out_height), out_width)
    j0 = np.tile(np.arange(field_width), field_height * C)
    j1 = stride * np.tile(np.arange(out_width), out_height)
    i = i0.reshape(-1, 1) + i1.reshape(1, -1)
    j = j0.reshape(-1, 1) + j1.reshape(1, -1)
    k = np.repeat(np.arange(C), field_height * field_width).reshape(-1, 1)
    return (k.astype(int), i.astype(int), j.astype(int))


def im2col_indices(x, field_height, field_width, padding=1, stride=1):
    p = padding
    x_padded = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), mode="constant")
    k, i, j = get_im2col_indices(x.shape, field_height, field_width, padding, stride)
    cols = x_padded[:, k, i, j]
    C = x.shape[1]
    cols = cols.transpose(1, 2, 0).reshape(field_height * field_width * C, -1)
    return cols


def conv_im2col(x, w, b):
    N, C, H, W = x.shape
    F, _, HH, WW = w.shape
    cols = im2col_indices(x, HH, WW, padding=1, stride=1)
    res = w.reshape(F, -1) @ cols + b.reshape(-1, 1)
    out = res.reshape(F, H, W, N).transpose(3, 0, 1, 2)
    return np.sum(np.tanh(out))


def conv_im2col_w(w, x, b):
    return conv_im2col(x, w, b)


def spatial_batchnorm(x, gamma, beta):
    N, C, H, W = x.shape
    x_flat = x.transpose(0, 2, 3, 1).reshape(-1, C)
    out_flat, _ = batchnorm_forward(x_flat, gamma, beta, {"mode": "train"})
    out = out_flat.reshape(N, H, W, C).transpose(0, 3, 1, 2)
    return np.sum(out ** 3)


def spatial_groupnorm(x, gamma, beta, G=2, eps=1e-5):
    N, C, H, W = x.shape
    xg = x.reshape(N, G, C // G, H, W)
    mean = xg.mean(axis=(2, 3, 4), keepdims=True)
    var = xg.var(axis=(2, 3, 4), keepdims=True)
    x_hat = ((xg - mean) / np.sqrt(var + eps)).reshape(N, C, H, W)
    out = gamma * x_hat + beta
    return np.sum(out * np.cos(out))


def max_pool_reshape(x):
    N, C, H, W = x.shape
    x_reshaped = x.reshape(N, C, H // 2, 2, W // 2, 2)
    out = x_reshaped.max(axis=3).max(axis=4)
    return np.sum(out ** 2)



def max_pool_backward_naive(dout, x):
    """The hand-written backward of max-pooling, as a function of ``dout``: a mask of the
    window's maximum added into a preallocated ``dx``."""
    N, C, H, W = x.shape
    dx = np.zeros_like(x)
    for n in range(N):
        for c in range(C):
            for i in range(H // 2):
                for j in range(W // 2):
                    window = x[n, c, 2 * i:2 * i + 2, 2 * j:2 * j + 2]
                    mask = window == np.max(window)
                    dx[n, c, 2 * i:2 * i + 2, 2 * j:2 * j + 2] += mask * dout[n, c, i, j]
    return np.sum(dx * np.cos(x)) + np.sum(dx ** 2)


def conv_backward_naive(x, w, dout, pad=1):
    """The hand-written backward of the naive convolution; the norm of ``dw`` and ``dx``
    as a function of ``x`` (a gradient penalty)."""
    N, C, H, W = x.shape
    F, _, HH, WW = w.shape
    x_pad = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), "constant")
    dx_pad = np.zeros_like(x_pad)
    dw = np.zeros_like(w)
    H_out, W_out = dout.shape[2], dout.shape[3]
    for n in range(N):
        for f in range(F):
            for i in range(H_out):
                for j in range(W_out):
                    dw[f] += x_pad[n, :, i:i + HH, j:j + WW] * dout[n, f, i, j]
                    dx_pad[n, :, i:i + HH, j:j + WW] += w[f] * dout[n, f, i, j] * x_pad[n, 0, i, j]
    dx = dx_pad[:, :, pad:-pad, pad:-pad]
    return np.sum(dw ** 2) + np.sum(dx * x)


def rnn_view_readback(Wh, x, h0):
    """The state read back from the preallocated ``h`` (a view) for the next step."""
    N, T, D = x.shape
    h = np.zeros((N, T, h0.shape[1]))
    h[:, 0, :] = np.tanh(h0 @ Wh + x[:, 0, :].sum(axis=1, keepdims=True))
    for t in range(1, T):
        prev_h = h[:, t - 1, :]
        h[:, t, :] = np.tanh(prev_h @ Wh + x[:, t, :].sum(axis=1, keepdims=True))
    return np.sum(h[:, -1, :] ** 2) + np.sum(h)


def rnn_inline_readback(Wh, x, h0):
    """The state of the step before read inside the expression that writes the next one."""
    N, T, D = x.shape
    h = np.zeros((N, T + 1, h0.shape[1]))
    h[:, 0, :] = h0
    for t in range(T):
        h[:, t + 1, :] = np.tanh(h[:, t, :] @ Wh + x[:, t, :].sum(axis=1, keepdims=True))
    return np.sum(h[:, -1, :] ** 2) + np.sum(h)


# -- normalisation, dropout -------------------------------------------------------------------


def batchnorm_loss_x(x, gamma, beta):
    bn_param = {"mode": "train", "eps": 1e-5}
    out, cache = batchnorm_forward(x, gamma, beta, bn_param)
    return np.sum(out * np.arange(out.size).reshape(out.shape))


def batchnorm_loss_gamma(gamma, x, beta):
    out, _ = batchnorm_forward(x, gamma, beta, {"mode": "train"})
    return np.sum(np.tanh(out))


def layernorm_loss(x, gamma, beta):
    out, cache = layernorm_forward(x, gamma, beta, {"eps": 1e-5})
    x_hat, std, _ = cache
    return np.sum(out ** 2 * np.linspace(0, 1, out.shape[1])) + 0.1 * np.sum(std)


def dropout_loss(x, mask):
    out, cache = layers.dropout_forward(x, {"p": 0.6, "mode": "train"}, mask)
    _, m = cache
    return np.sum(np.tanh(out) ** 2) + np.sum(m * 0.0)


def affine_relu_dropout(w1, x, w2, mask):
    h, _ = affine_relu_forward(x, w1, np.full(w1.shape[1], 0.1))
    h, _ = layers.dropout_forward(h, {"p": 0.5, "mode": "train"}, mask)
    scores, _ = layers.affine_forward(h, w2, np.zeros(w2.shape[1]))
    loss, dscores = softmax_loss(scores, np.array([0, 2, 1, 2]))
    return loss


# -- recurrent --------------------------------------------------------------------------------


def rnn_loss(Wx, x, h0, Wh, b):
    h, _ = rnn_forward(x, h0, Wx, Wh, b)
    return np.sum(h ** 2) + np.sum(h[:, -1, :])


def rnn_loss_h0(h0, x, Wx, Wh, b):
    return rnn_loss(Wx, x, h0, Wh, b)


def lstm_loss(Wh, x, h0, Wx, b):
    h, _ = lstm_forward(x, h0, Wx, Wh, b)
    return np.sum(h * np.linspace(-1, 1, h.size).reshape(h.shape))


def sigmoid_masked(x):
    return np.sum(sigmoid(x) ** 2)


def rnn_reversed_steps(Wh, xs):
    """A loop run backwards over time with ``reversed(range(T))`` and a preallocated state."""
    T, D = xs.shape
    h = np.zeros((T + 1, Wh.shape[0]))
    for t in reversed(range(T)):
        h[t] = np.tanh(Wh @ h[t + 1] + xs[t].sum())
    return np.sum(h[0] ** 2)


def embedding_loss(W, x):
    out, _ = word_embedding_forward(x, W)
    return np.sum(np.tanh(out).mean(axis=1) ** 2)


def add_at_counts(v, idx):
    """np.add.at into a preallocated buffer, as the embedding backward writes it."""
    acc = np.zeros(4)
    np.add.at(acc, idx, v)
    return np.sum(acc ** 2) + np.sum(np.sin(acc))


def captioning_loss(W_embed, features, captions, W_proj, Wx, Wh, b, W_vocab):
    captions_in = captions[:, :-1]
    captions_out = captions[:, 1:]
    mask = captions_out != 0
    h0 = features.dot(W_proj)
    x, _ = word_embedding_forward(captions_in, W_embed)
    h, _ = rnn_forward(x, h0, Wx, Wh, b)
    scores, _ = temporal_affine_forward(h, W_vocab, np.zeros(W_vocab.shape[1]))
    loss, dscores = temporal_softmax_loss(scores, captions_out, mask)
    return loss


# -- model classes ----------------------------------------------------------------------------


class TwoLayerNet:
    def __init__(self, input_dim=3, hidden_dim=4, num_classes=3, weight_scale=1e-1, reg=0.1):
        self.params = {}
        self.reg = reg
        rng = np.random.RandomState(1)
        self.params["W1"] = weight_scale * rng.randn(input_dim, hidden_dim)
        self.params["b1"] = np.zeros(hidden_dim)
        self.params["W2"] = weight_scale * rng.randn(hidden_dim, num_classes)
        self.params["b2"] = np.zeros(num_classes)

    def loss(self, X, y=None):
        W1, b1 = self.params["W1"], self.params["b1"]
        W2, b2 = self.params["W2"], self.params["b2"]
        h, h_cache = affine_relu_forward(X, W1, b1)
        scores, s_cache = layers.affine_forward(h, W2, b2)
        if y is None:
            return scores
        loss, grads = 0, {}
        loss, dscores = softmax_loss(scores, y)
        loss += 0.5 * self.reg * (np.sum(W1 * W1) + np.sum(W2 * W2))
        dh, grads["W2"], grads["b2"] = layers.affine_backward(dscores, s_cache)
        _, grads["W1"], grads["b1"] = affine_relu_backward(dh, h_cache)
        grads["W2"] += self.reg * W2
        grads["W1"] += self.reg * W1
        return loss, grads


def two_layer_params(params, X, y):
    model = TwoLayerNet()
    model.params = params
    loss, grads = model.loss(X, y)
    return loss


def two_layer_w1(W1, X, y):
    model = TwoLayerNet()
    model.params["W1"] = W1
    loss, _ = model.loss(X, y)
    return loss


class FullyConnectedNet:
    def __init__(self, params, num_layers, reg=0.05):
        self.params = params
        self.num_layers = num_layers
        self.reg = reg

    def loss(self, X, y):
        caches = {}
        out = X
        for i in range(1, self.num_layers):
            out, caches[i] = affine_relu_forward(out, self.params[f"W{i}"], self.params[f"b{i}"])
        W_last = self.params["W%d" % self.num_layers]  # noqa: UP031 - as courses write it
        b_last = self.params["b%d" % self.num_layers]  # noqa: UP031
        scores, _ = layers.affine_forward(out, W_last, b_last)
        loss, dscores = svm_loss(scores, y)
        for key in self.params:
            if key.startswith("W"):
                loss += 0.5 * self.reg * np.sum(self.params[key] ** 2)
        grads = {}
        return loss, grads


def fc_net_loss(params, X, y):
    net = FullyConnectedNet(params, num_layers=3)
    loss, _ = net.loss(X, y)
    return loss


# -- data -------------------------------------------------------------------------------------

_r = np.random.default_rng(32)
XC = _r.standard_normal((4, 3))
YC = np.array([0, 2, 1, 2])
WC = 0.5 * _r.standard_normal((3, 3))
XIMG = _r.standard_normal((2, 2, 5, 5))
WCONV = 0.3 * _r.standard_normal((2, 2, 3, 3))
BCONV = np.array([0.1, -0.2])
XPOOL = _r.standard_normal((2, 2, 4, 4))
XRNN = _r.standard_normal((2, 3, 3))
H0 = 0.3 * _r.standard_normal((2, 4))
WX = 0.4 * _r.standard_normal((3, 4))
WH = 0.4 * _r.standard_normal((4, 4))
BH = 0.1 * _r.standard_normal(4)
WX4 = 0.4 * _r.standard_normal((3, 16))
WH4 = 0.4 * _r.standard_normal((4, 16))
B4 = 0.1 * _r.standard_normal(16)
MASK = _r.random((4, 4))
WEMB = _r.standard_normal((5, 3))
IDX = np.array([[0, 3, 3], [4, 1, 0]])
CAPS = np.array([[1, 2, 3, 0], [4, 1, 0, 0]])
FC_PARAMS = {
    "W1": 0.5 * _r.standard_normal((3, 4)), "b1": np.full(4, 0.1),
    "W2": 0.5 * _r.standard_normal((4, 4)), "b2": np.full(4, 0.1),
    "W3": 0.5 * _r.standard_normal((4, 3)), "b3": np.zeros(3),
}
TWO_PARAMS = {"W1": FC_PARAMS["W1"], "b1": FC_PARAMS["b1"],
              "W2": FC_PARAMS["W3"], "b2": np.array([0.1, 0.0, -0.1])}

PROBES = {
    "svm_loss_naive": (svm_loss_naive, (WC, XC, YC, 0.1), True),
    "svm_loss_vectorized": (svm_loss_vectorized, (WC, XC, YC, 0.1), True),
    "softmax_loss_naive": (softmax_loss_naive, (WC, XC, YC, 0.1), True),
    "softmax_loss_vectorized": (softmax_loss_vectorized, (WC, XC, YC, 0.1), True),
    "score_gradient_norm": (score_gradient_norm, (WC, XC, YC), True),
    "relu_backward_of_dout": (relu_backward_of_dout, (XC[:, ::-1].copy(), XC), True),
    "conv_loss_w": (conv_loss_w, (WCONV, XIMG, BCONV), False),
    "conv_loss_x": (conv_loss_x, (XIMG, WCONV, BCONV), False),
    "pool_loss": (pool_loss, (XPOOL,), True),
    "max_pool_per_element": (max_pool_per_element, (XPOOL,), False),
    "max_pool_backward_naive": (max_pool_backward_naive, (XPOOL[:, :, :2, :2] + 0.3, XPOOL),
                                True),
    "conv_backward_naive": (conv_backward_naive, (XIMG[:1, :, :3, :3], WCONV,
                                                  _r.standard_normal((1, 2, 3, 3))), False),
    "rnn_inline_readback": (rnn_inline_readback, (WH, XRNN, H0), True),
    # the state kept under a name, read up in the expression that writes the next step
    # (read as a copy: nothing reads it after that write)
    "rnn_view_readback": (rnn_view_readback, (WH, XRNN, H0), True),
    "conv_im2col": (conv_im2col, (XIMG[:, :, :4, :4], WCONV, BCONV), True),
    "conv_im2col_w": (conv_im2col_w, (WCONV, XIMG[:, :, :4, :4], BCONV), True),
    "spatial_batchnorm": (spatial_batchnorm, (XPOOL, np.array([1.0, 0.5]),
                                              np.array([0.0, 0.1])), True),
    "spatial_groupnorm": (spatial_groupnorm, (XPOOL[:, :, :2, :2].repeat(2, axis=1),
                                              np.full((1, 4, 1, 1), 0.7), 0.1), True),
    "max_pool_reshape": (max_pool_reshape, (XPOOL,), True),
    "batchnorm_loss_x": (batchnorm_loss_x, (XC, np.array([1.0, 0.5, 2.0]), 0.1), True),
    "batchnorm_loss_gamma": (batchnorm_loss_gamma, (np.array([1.0, 0.5, 2.0]), XC, 0.1), True),
    "layernorm_loss": (layernorm_loss, (XC, np.array([1.0, 0.5, 2.0]), 0.1), True),
    "dropout_loss": (dropout_loss, (XC, MASK[:, :3]), True),
    "affine_relu_dropout": (affine_relu_dropout, (WC[:, [0, 1, 2, 0]] + 0.1, XC,
                                                  0.5 * _r.standard_normal((4, 3)), MASK), True),
    "rnn_loss": (rnn_loss, (WX, XRNN, H0, WH, BH), True),
    "rnn_loss_h0": (rnn_loss_h0, (H0, XRNN, WX, WH, BH), True),
    "lstm_loss": (lstm_loss, (WH4, XRNN, H0, WX4, B4), True),
    "sigmoid_masked": (sigmoid_masked, (np.array([-3.0, -0.5, 0.2, 2.5]),), True),
    "rnn_reversed_steps": (rnn_reversed_steps, (WH, XC), True),
    "embedding_loss": (embedding_loss, (WEMB, IDX), True),
    "add_at_counts": (add_at_counts, (np.array([0.3, -1.2, 0.5, 2.0, 0.7]),
                                      np.array([0, 2, 0, 3, 2])), True),
    "captioning_loss": (captioning_loss, (WEMB, XC[:2], CAPS, WX[:, :4] @ WH, WX, WH, BH,
                                          0.5 * _r.standard_normal((4, 5))), True),
    "fc_net_loss": (fc_net_loss, (FC_PARAMS, XC, YC), False),
    "corr2d_loss": (corr2d_loss, (np.array([[1.0, -1.0], [0.5, 0.2]]), XPOOL[0, 0]), True),
    "pool2d_loss": (pool2d_loss, (XPOOL[0, 1],), True),
    "d2l_loss": (d2l_loss, (WC, np.array([0.1, 0.0, -0.1]), XC, YC), True),
    "d2l_rnn_loss": (d2l_rnn_loss, (WH, XRNN, WX, 0.5 * WH), True),
    "nielsen_cost": (nielsen_cost, (WX.T, XC[0][:, None], np.array([[0.2], [0.9]]), WH[:2]), True),
}

test_probe, test_float32 = probe_tests(PROBES)

# Refused, each with a message naming the line and a fix.
# * the hand-written backward beside the loss adds into an array held by a dict
#   (`grads["W2"] += self.reg * W2`, the array affine_backward returned): Python changes that
#   array in place, and pullback cannot prove no other name holds it (no gradient flows there,
#   but a silent change of a shared array could reach one); refused when it runs;
# * a parameter stored into a dict of a model made inside (`model.params["W1"] = W1`): PB107;
# * optimiser steps keeping their state in a config dict passed from call to call
#   (`config.setdefault(...)`, `config["velocity"] = v`): PB101/PB106, with the copy fix;
REFUSED = {
    "two_layer_params": (two_layer_params, (TWO_PARAMS, XC, YC),
                         ("grads[\"W2\"] += self.reg * W2", "`l[i] = l[i] + v`")),
    "two_layer_w1": (two_layer_w1, (FC_PARAMS["W1"], XC, YC),
                     ("PB107", "model.params", "Fix:")),
    "unrolled_sgd": (unrolled_sgd, (np.array([0.5, -1.0, 2.0]),),
                     ("PB101", "config = {} if config is None else dict(config)", "PB106")),
    "unrolled_adam": (unrolled_adam, (np.array([0.5, -1.0, 2.0]),),
                      ("PB101", "config = {} if config is None else dict(config)",
                       "config[\"t\"] += ...")),
}

test_refused = refusal_test(REFUSED)
