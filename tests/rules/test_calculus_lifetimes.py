"""A user function differentiated by a calculus rule (quad's integrand, solve_ivp's
right-hand side) dies with the last reference to it: the rule's per-function state
(rules/_calculus_util.UserVJP) is kept on the function, not in a table that holds it."""

import gc
import weakref

import numpy as np
import pytest

from pullback import grad

# gc.collect() and gc.get_objects() here scan only this file's objects (see conftest).
pytestmark = pytest.mark.usefixtures("own_heap")

integrate = pytest.importorskip("scipy.integrate")


def _integrand_of(k):
    big = np.full(1000, float(k))

    def integrand(x, a):
        return np.exp(-a * x * x) * big[0]

    return integrand


def _rhs_of(k):
    big = np.full(1000, float(k))

    def rhs(t, y, a):
        return -a * y * big[0]

    return rhs


def _quad_loss(fn):
    def loss(p):
        return integrate.quad(fn, 0.0, 1.0, args=(p[0],))[0]

    return loss


def _ivp_loss(fn):
    def loss(p):
        sol = integrate.solve_ivp(fn, (0.0, 1.0), np.array([1.0]), args=(p[0],), rtol=1e-8)
        return sol.y[0, -1]

    return loss


@pytest.mark.parametrize(
    ("make", "loss_of", "exact"),
    [
        # d/da of k * int_0^1 exp(-a x^2) dx = -k * int_0^1 x^2 exp(-a x^2) dx
        (
            _integrand_of,
            _quad_loss,
            lambda k, a: -k * integrate.quad(lambda x: x * x * np.exp(-a * x * x), 0, 1)[0],
        ),
        # y(1) = exp(-a k): d/da = -k exp(-a k)
        (_rhs_of, _ivp_loss, lambda k, a: -k * np.exp(-a * k)),
    ],
    ids=["quad", "solve_ivp"],
)
def test_the_user_function_dies_after_its_gradient(make, loss_of, exact):
    refs = []
    for k in (1, 2, 3):
        fn = make(k)
        refs.append(weakref.ref(fn))
        g = grad(loss_of(fn))(np.array([0.5]))
        np.testing.assert_allclose(g[0], exact(k, 0.5), rtol=1e-5)
        del fn
    gc.collect()
    assert [r() for r in refs] == [None, None, None]
