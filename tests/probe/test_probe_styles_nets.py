"""Probe: network pieces in the style of small transformer and layer-list tutorials.

Scaled dot-product attention with a causal mask holding ``-inf`` above the diagonal, a
softmax written through transposes, and a layer-list perceptron whose layers receive their
weights through a setter method. Gradients, jvp, hvp and the Hessian are checked against
central differences (probe_harness.py); the setter style is refused with its reason.
"""

import math

import numpy as np
from probe_harness import probe_tests, refusal_test


def row_softmax(scores):
    # normalise each row; the transposes let a 1-d sum broadcast over the rows
    e = np.exp(scores)
    return (e.T / e.sum(axis=-1)).T


def attend(queries, keys, values, causal=None):
    width = queries.shape[-1]
    logits = queries @ keys.T / math.sqrt(width)
    if causal is not None:
        logits = logits + causal
    weights = row_softmax(logits)
    return weights @ values, weights


def attention_by_queries(queries, keys, values, causal):
    mixed, _ = attend(queries, keys, values, causal)
    return np.sum(mixed ** 2)


def attention_by_values(values, queries, keys, causal):
    mixed, weights = attend(queries, keys, values, causal)
    return np.sum(mixed ** 2) + np.sum(weights[-1] * values[:, 0])


class Dense:
    def __init__(self, n_in, n_out):
        self.weight = np.zeros((n_in, n_out))
        self.bias = np.zeros(n_out)

    def set_weights(self, pair):
        self.weight, self.bias = pair[0], pair[1]

    def __call__(self, x):
        self.last_input = x
        return x @ self.weight + self.bias


class Rectifier:
    def __call__(self, x):
        return np.maximum(x, 0.0)


class Stack:
    def __init__(self, parts):
        self.parts = parts

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x


def class_nll(logits, labels):
    picked = logits[np.arange(len(logits)), labels]
    return np.mean(np.log(np.sum(np.exp(logits), axis=-1)) - picked)


def stack_loss_via_setter(w_in, b_in, w_out, b_out, x, labels):
    first, second = Dense(3, 4), Dense(4, 2)
    first.set_weights([w_in, b_in])
    second.set_weights([w_out, b_out])
    return class_nll(Stack([first, Rectifier(), second])(x), labels)


_g = np.random.default_rng(31)
SEQ_LEN = 4
CAUSAL = np.where(np.tril(np.ones((SEQ_LEN, SEQ_LEN))) > 0, 0.0, -np.inf)
QS, KS, VS = _g.standard_normal((3, SEQ_LEN, 6))
BATCH = _g.standard_normal((5, 3))
CLASSES = np.array([1, 0, 1, 1, 0])

PROBES = {
    "attention_by_queries": (attention_by_queries, (QS, KS, VS, CAUSAL), True),
    "attention_by_values": (attention_by_values, (VS, QS, KS, CAUSAL), True),
}


test_probe, test_float32 = probe_tests(PROBES)


# Refused: the setter stores the differentiated weights on a layer object that the forward
# pass reads back later (PB107).
REFUSED = {
    "stack_loss_via_setter": (
        stack_loss_via_setter,
        (0.5 * _g.standard_normal((3, 4)), np.zeros(4), 0.5 * _g.standard_normal((4, 2)),
         np.zeros(2), BATCH, CLASSES),
        ("PB107", "reads back", "stored outside the differentiated variables")),
}


test_refused = refusal_test(REFUSED)
