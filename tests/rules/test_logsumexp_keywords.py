"""``scipy.special.logsumexp`` with a differentiated weight passed by keyword.

``logsumexp(logp, b=w)`` (a mixture's weights) was refused (PB502: a keyword argument of
a rule that depends on a differentiated value) although ``logsumexp(logp, None, w)`` was
differentiated: the call now reaches the rule's transformable pullback with the skipped
``axis`` written as its default (transform/keyword_positions.py), to second order and in
forward mode.
"""

import numpy as np
import pytest
from fd import check_grad, check_hvp, check_jvp

special = pytest.importorskip("scipy.special")

X = np.array([[0.3, 1.1, 2.5], [-0.4, 0.2, 0.9]])
W = np.array([1.0, 2.0, 0.5])


def weights_by_keyword(p):
    return special.logsumexp(X[0] * p[0], b=W * np.exp(p[1]))


def axis_then_weights(p):
    return np.sum(special.logsumexp(X * p[0], axis=1, b=W * np.exp(p[1])))


def weights_then_keepdims(p):
    return np.sum(special.logsumexp(X[1] * p[0], b=W * np.exp(p[1]), keepdims=True))


def axis_after_a_computed_weight(p):
    # axis= after b=: filling the skipped axis with its default would be wrong; the
    # keywords move into positional order, as the only one with a call (b) is among
    # constants, whose evaluation nothing can change
    return np.sum(special.logsumexp(X * p[0], b=W * np.exp(p[1]), keepdims=True, axis=0))


def axis_after_a_computed_weight_by_position(p):
    return np.sum(special.logsumexp(X * p[0], 0, W * np.exp(p[1]), True))


def axis_after_a_weight_and_a_read(p):
    # a call (b) and a read (axis=AXES[0]): the call could change what the read sees, so
    # they keep their order, and the keyword its refusal
    return np.sum(special.logsumexp(X * p[0], b=W * np.exp(p[1]), axis=AXES[0]))


AXES = [0]


def mixture_log_likelihood(p):
    # two components with weights softmax(p[1:]) and means p[0], -p[0]
    logw = p[1:] - special.logsumexp(p[1:])
    logp = np.stack([-0.5 * (X[1] - p[0]) ** 2, -0.5 * (X[1] + p[0]) ** 2])
    return np.sum(special.logsumexp(logp, axis=0, b=np.exp(logw)[:, None]))


CASES = [weights_by_keyword, axis_then_weights, weights_then_keepdims]
P = np.array([0.4, -0.3])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_gradient_matches_finite_differences(f, dtype):
    check_grad(f, P.astype(dtype))


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_forward_and_second_order(f):
    v = np.array([0.7, -1.3])
    check_jvp(f, (P,), (v,))
    check_hvp(f, P, v, rtol=1e-5, atol=1e-7)


def test_mixture_weights_by_keyword():
    p = np.array([0.6, 0.2, -0.1])
    check_grad(mixture_log_likelihood, p)
    check_hvp(mixture_log_likelihood, p, np.array([0.3, -0.5, 1.0]), rtol=1e-5, atol=1e-7)


def test_by_hand():
    from pullback import grad

    # d/dp1 log(sum_i w_i e^{p1} e^{a_i}) = 1; d/dp0 = sum_i softmax-weight_i * X0_i
    a = X[0] * P[0]
    s = W * np.exp(P[1]) * np.exp(a)
    np.testing.assert_allclose(
        grad(weights_by_keyword)(P), [np.sum(s * X[0]) / np.sum(s), 1.0], rtol=1e-12
    )


def test_axis_given_after_a_computed_weight_moves_into_place():
    import pullback

    g = pullback.grad(axis_after_a_computed_weight)(P)
    np.testing.assert_allclose(g, pullback.grad(axis_after_a_computed_weight_by_position)(P))
    check_grad(axis_after_a_computed_weight, P)
    np.testing.assert_allclose(
        pullback.hessian(axis_after_a_computed_weight)(P),
        pullback.hessian(axis_after_a_computed_weight_by_position)(P),
        rtol=1e-12,
    )


def test_a_weight_before_a_read_keeps_its_refusal():
    import pullback

    with pytest.raises(pullback.UnsupportedSyntaxError, match="PB502"):
        pullback.grad(axis_after_a_weight_and_a_read)(P)
