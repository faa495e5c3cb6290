"""scipy.stats.multivariate_normal in every call form scipy takes, to first and second
order (the transformable pullback covers them all): no mean or a scalar one, a scalar
(``c I``), 1-D (diagonal) or 2-D ``cov``, one point, a stack of points, ``d == 1``,
keywords, ``allow_singular=True`` (a singular cov refused with a pullback error), float64
and float32."""

from __future__ import annotations

import numpy as np
import pytest

st = pytest.importorskip("scipy.stats")
from rule_inputs import spd  # noqa: E402

from pullback import hessian  # noqa: E402
from pullback.errors import NotDifferentiableError  # noqa: E402
from pullback.testing import check_grads, check_rrule, check_rrule_second_order  # noqa: E402

G = np.random.default_rng(3)
MEAN = G.normal(size=3)
STACK = G.normal(size=(2, 4, 3))
POINT = G.normal(size=3)
FORMS = {
    "stack": (STACK, MEAN, spd(3)),
    "one point": (POINT, MEAN, spd(3, seed=1)),
    "scalar cov": (STACK, MEAN, 1.3),
    "diagonal cov": (STACK, MEAN, np.array([1.2, 0.8, 1.5])),
    "no mean": (POINT, None, spd(3, seed=2)),
    "d == 1": (np.array([0.3, -0.2, 1.1]), 0.4, 1.7),
    "d == 1, a scalar point": (np.float64(0.3), 0.4, 1.7),
    "allow_singular": (POINT, MEAN, spd(3, seed=3), True),
    "x only": (np.array([0.3, -0.2, 1.1]),),
}


def _cast(args, dtype):
    return tuple(
        v.astype(dtype) if isinstance(v, np.ndarray) else dtype(v) if isinstance(v, float) else v
        for v in args
    )


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("method", ["logpdf", "pdf"])
@pytest.mark.parametrize("form", list(FORMS))
def test_every_form_to_second_order(form, method, dtype):
    fn = getattr(st.multivariate_normal, method)
    args = _cast(FORMS[form], dtype)
    check_rrule(fn, *args)
    check_rrule_second_order(fn, *args)


def with_keywords(x, m, c):
    return np.sum(st.multivariate_normal.logpdf(x, mean=m, cov=c) * np.arange(1.0, 5.0))


def test_keywords_twice():
    x = G.normal(size=(4, 3))
    assert check_grads(with_keywords, x, MEAN, spd(3, seed=4), order=2) == (
        "reverse over reverse"
    )


SINGULAR = np.array([[1.0, 1.0], [1.0, 1.0]])


def test_a_singular_cov_is_refused():
    def unfrozen(x):
        return st.multivariate_normal.logpdf(x, np.zeros(2), SINGULAR, True)

    def frozen(x):
        return st.multivariate_normal(np.zeros(2), SINGULAR, allow_singular=True).logpdf(x)

    for f in (unfrozen, frozen):
        with pytest.raises(NotDifferentiableError, match="singular covariance"):
            hessian(f)(np.array([0.3, 0.3]))
