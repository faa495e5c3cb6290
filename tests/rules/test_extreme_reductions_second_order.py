"""np.max, np.min, np.nanmax and np.nanmin share one transformable pullback, the reducer a
value (rules/transformable.py ``extreme_reduction_pullback``): their gradients and
second derivatives, with ``axis=``, ``keepdims=``, ``where=`` and ``initial=``, against
central differences where no two elements tie, and against the tie rule (ties share
the cotangent equally, an ``initial`` equal to the extreme counting as one) where they
do, to second order."""

import numpy as np
import pytest
from fd import check_grad, check_hvp, check_jvp

from pullback import grad, hessian

REDUCERS = [np.max, np.min, np.amax, np.amin, np.nanmax, np.nanmin]
MASK = np.array([[True, False, True], [True, True, False]])
# The keyword forms and their keywords (written out in `reduction`: ``reduce(y, **kw)``
# would be a star call, another path).
VARIANTS = {
    "all": {},
    "axis0": {"axis": 0},
    "axis1-keepdims": {"axis": 1, "keepdims": True},
    "where-initial-low": {"axis": 1, "where": MASK, "initial": -5.0},
    "where-initial-high": {"axis": 0, "where": MASK, "initial": 7.0},
}


def reduction(reduce, variant):
    """``y -> reduce(y, <the variant's keywords>)``."""
    if variant == "all":

        def r(y):
            return reduce(y)
    elif variant == "axis0":

        def r(y):
            return reduce(y, axis=0)
    elif variant == "axis1-keepdims":

        def r(y):
            return reduce(y, axis=1, keepdims=True)
    elif variant == "where-initial-low":

        def r(y):
            return reduce(y, axis=1, where=MASK, initial=-5.0)
    else:

        def r(y):
            return reduce(y, axis=0, where=MASK, initial=7.0)

    return r


@pytest.mark.parametrize("reduce", REDUCERS, ids=lambda r: r.__name__)
@pytest.mark.parametrize("variant", VARIANTS)
def test_against_central_differences_without_ties(reduce, variant):
    r = reduction(reduce, variant)
    c = np.sin(np.arange(1.0, 4.0))

    def f(x):
        return np.sum(c[: np.size(r(x))] * np.ravel(r(x * x * x)) ** 2)

    x = np.array([[0.3, -1.7, 1.1], [0.9, 1.4, -0.4]])
    check_grad(f, x)
    check_grad(f, x.astype(np.float32))
    check_jvp(f, (x,), (np.cos(np.arange(6.0)).reshape(2, 3),))
    check_hvp(f, x, np.sin(np.arange(6.0)).reshape(2, 3), rtol=1e-5, atol=1e-6)


def tie_weights(reduce, x, kw):
    """What each element of ``x`` gets of its reduction's cotangent: 1/k on the k elements
    that equal the extreme (with an equal ``initial`` among the k), 0 elsewhere."""
    axis = kw.get("axis")
    kept = kw.get("where", True) & ~np.isnan(x)
    given = {k: kw[k] for k in ("where", "initial") if k in kw}
    m = reduce(x, axis=axis, keepdims=True, **given)
    mask = (x == m) & kept
    won = (m == kw["initial"]) if "initial" in kw else 0
    return mask / np.maximum(np.sum(mask, axis=axis, keepdims=True) + won, 1)


TIED = np.array([[2.0, -2.0, 2.0], [1.5, 1.5, -1.5]])


@pytest.mark.parametrize("reduce", REDUCERS, ids=lambda r: r.__name__)
@pytest.mark.parametrize("variant", VARIANTS)
def test_ties_share_the_cotangent_to_second_order(reduce, variant):
    kw = VARIANTS[variant]
    r = reduction(reduce, variant)
    m = r(TIED)
    c = np.arange(1.0, 1.0 + np.size(m))

    def f(x):  # the weighted reduction of x*x: dx = 2 x w c, d2x = diag(2 w c)
        return np.sum(c * np.ravel(r(x * x)))

    w = tie_weights(reduce, TIED * TIED, kw)
    shape = np.shape(reduce(TIED, axis=kw.get("axis"), keepdims=True))
    spread = np.broadcast_to(np.reshape(c, shape), TIED.shape)
    np.testing.assert_allclose(grad(f)(TIED), 2 * TIED * w * spread, rtol=1e-12)
    np.testing.assert_allclose(
        hessian(f)(TIED).reshape(6, 6), np.diag(np.ravel(2 * w * spread)), atol=1e-12
    )


@pytest.mark.parametrize("reduce", [np.nanmax, np.nanmin], ids=lambda r: r.__name__)
def test_nan_elements_get_nothing_to_second_order(reduce):
    x = np.array([[np.nan, 0.5, -3.0], [2.0, np.nan, 2.0]])
    c = np.array([1.0, 3.0])

    def f(x):  # m = w . x in each row: dx = 2 c m w, d2x = 2 c w w^T in each row's block
        return np.sum(c * reduce(x, axis=1) ** 2)

    w = tie_weights(reduce, x, {"axis": 1})
    m = reduce(x, axis=1)
    np.testing.assert_allclose(grad(f)(x), 2 * (c * m)[:, None] * w, rtol=1e-12)
    want = np.zeros((6, 6))
    for row in range(2):
        block = slice(3 * row, 3 * row + 3)
        want[block, block] = 2 * c[row] * np.outer(w[row], w[row])
    np.testing.assert_allclose(hessian(f)(x).reshape(6, 6), want, atol=1e-12)
