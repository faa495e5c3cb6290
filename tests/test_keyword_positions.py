"""Keyword arguments naming a rule's positional parameters (scipy.stats shapes, loc,
scale) are passed by position before the check and the transformation
(transform/keyword_positions.py), so second derivatives reach the rule's pullback function:
Hessians of likelihoods written with keywords against finite differences of the gradient,
and the order in which Python evaluates the arguments kept (keywords out of positional
order move only when their expressions are order-free)."""

from __future__ import annotations

import numpy as np
import pytest
from fd import numerical_grad

stats = pytest.importorskip("scipy.stats")

from pullback import grad, hessian  # noqa: E402

DATA = np.array([0.1, -0.4, 1.3, 0.8])
P = np.array([0.3, 0.2, 1.1])


def central(f, x, h=1e-5):
    """Central differences of ``f`` at ``x`` (tests/fd.py)."""
    return numerical_grad(f, (x,), 0, eps=h)


def student_t(p):
    mu, log_s, nu = p
    return -np.sum(stats.t.logpdf(DATA, df=np.exp(nu) + 1, loc=mu, scale=np.exp(log_s)))


def gamma_cdf(p):
    return np.sum(stats.gamma.logcdf(np.abs(DATA) + 0.5, a=np.exp(p[2]), scale=np.exp(p[1])))


def beta_two_shapes(p):
    x = np.array([0.2, 0.5, 0.7])
    return np.sum(stats.beta.logpdf(x, a=np.exp(p[0]), b=np.exp(p[2])))


def keywords_out_of_order(p):
    # loc before df: nothing moves (Python evaluates them in the written order)
    return np.sum(stats.t.logpdf(DATA, loc=p[0], df=np.exp(p[2]) + 1, scale=np.exp(p[1])))


def test_out_of_order_keywords_keep_their_first_derivative():
    f = keywords_out_of_order
    np.testing.assert_allclose(grad(f)(P), central(f, P, h=1e-6), rtol=1e-6, atol=1e-8)


def test_float32_keyword_call():
    g32 = grad(student_t)(P.astype(np.float32))
    np.testing.assert_allclose(g32, grad(student_t)(P), rtol=1e-4, atol=1e-5)


def t_scale_first(p):
    # every keyword out of positional order, each a name: moved into df, loc, scale
    x, s, nu, m = DATA, np.exp(p[1]), np.exp(p[2]) + 1, p[0]
    return -np.sum(stats.t.logpdf(x, scale=s, df=nu, loc=m))


def gamma_scale_first(p):
    th, k = np.exp(p[1]), np.exp(p[2])
    return np.sum(stats.gamma.cdf(np.abs(DATA) + 0.5, scale=th, a=k))


def t_attribute_and_arithmetic(p):
    # attribute and item reads, arithmetic on them: order-free, moved
    q = np.exp(p)
    return -np.sum(stats.t.logpdf(DATA, loc=p[0], scale=q[1] * 0.5, df=q.T[2] + 1.0))


@pytest.mark.parametrize(
    "f",
    [
        student_t,
        gamma_cdf,
        beta_two_shapes,
        t_scale_first,
        gamma_scale_first,
        t_attribute_and_arithmetic,
    ],
    ids=lambda f: f.__name__,
)
def test_hessian_of_keyword_calls(f):
    np.testing.assert_allclose(grad(f)(P), central(f, P, h=1e-6), rtol=1e-6, atol=1e-8)
    g = grad(f)
    want = np.array([central(lambda z, i=i: g(z)[i], P) for i in range(P.size)])
    np.testing.assert_allclose(hessian(f)(P), want, rtol=1e-5, atol=1e-6)


def test_float32_keywords_out_of_order():
    p32 = P.astype(np.float32)
    g32 = grad(t_scale_first)(p32)
    np.testing.assert_allclose(g32, grad(t_scale_first)(P), rtol=1e-4, atol=1e-5)
    h32 = hessian(gamma_scale_first)(p32)
    np.testing.assert_allclose(h32, hessian(gamma_scale_first)(P), rtol=2e-3, atol=2e-4)


def test_reordering_keeps_evaluation_order_when_it_matters():
    import gast

    from pullback.transform.keyword_positions import keywords_in_place

    declared = lambda call: (("x", "df", "loc", "scale"), None)  # noqa: E731
    for text, want in [
        ("f(x, scale=s, df=nu, loc=m)", "f(x, nu, m, s)"),
        ("f(x, scale=s.v, loc=m[0] + 1, df=-nu)", "f(x, -nu, m[0] + 1, s.v)"),
        ("f(x, scale=s, loc=m)", "f(x, scale=s, loc=m)"),  # df missing: nothing moves
        ("f(x, loc=m, scale=s, df=nu)", "f(x, nu, m, s)"),
        ("f(x, scale=g(s), df=nu, loc=m)", "f(x, scale=g(s), df=nu, loc=m)"),  # a call
        ("f(x, loc=(y := m), df=nu)", "f(x, loc=(y := m), df=nu)"),  # a walrus
        # one call among constants: no evaluation can change a constant, so it moves
        ("f(x, scale=2.0, df=g(s), loc=-1)", "f(x, g(s), -1, 2.0)"),
        # one call and a read (the call could change what the read sees): the order stays
        ("f(x, scale=s[0], df=g(s), loc=1)", "f(x, scale=s[0], df=g(s), loc=1)"),
        ("f(x, scale=g(s), df=h(s), loc=1)", "f(x, scale=g(s), df=h(s), loc=1)"),  # two calls
    ]:
        tree = gast.parse(f"def h(x):\n    return {text}\n").body[0]
        keywords_in_place(tree, declared)
        assert gast.unparse(tree.body[0].value).strip() == want, text


def test_keywords_out_of_order_with_a_call_keep_their_refusal():
    from pullback import HigherOrderError

    with pytest.raises(HigherOrderError):
        hessian(keywords_out_of_order)(P)


KEYS = np.array([0, 1, 1, 3])


def bincount_weights_after_minlength(x):
    return np.sum(np.bincount(KEYS, minlength=5, weights=np.sin(x)) ** 2)


def bincount_in_order(x):
    return np.sum(np.bincount(KEYS, np.sin(x), 5) ** 2)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_call_among_constant_keywords_is_differentiated(dtype):
    # (np.bincount's weights written after minlength was PB502: a keyword gets no gradient)
    x = np.array([0.3, 0.5, 0.7, 1.1], dtype=dtype)
    g = grad(bincount_weights_after_minlength)(x)
    assert g.dtype == dtype
    np.testing.assert_allclose(g, grad(bincount_in_order)(x), rtol=1e-6)
    want = numerical_grad(bincount_weights_after_minlength, (x.astype(np.float64),), 0)
    np.testing.assert_allclose(g, want, rtol=1e-4 if dtype == np.float32 else 1e-6, atol=1e-6)
    if dtype == np.float64:
        np.testing.assert_allclose(
            hessian(bincount_weights_after_minlength)(x), hessian(bincount_in_order)(x), rtol=1e-12
        )
