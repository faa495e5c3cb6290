"""Array methods differentiated as NumPy runs them.

``x.clip(...)`` in every form the ndarray method takes: the method is read as
``np.clip(x, ...)``, whose first bound is not optional the way the method's is, and
``x.clip(0)`` (the top left open) became ``np.clip(x, 0)``, which NumPy 2 refuses with a
TypeError although the user's line runs. Each form is checked against central differences
(float64 and float32), forward mode and the Hessian-vector product. A method arrays do
not have (``x.ptp()`` from NumPy 2 on) fails as Python fails, never as ``np.ptp(x)``;
``x.mT`` (NumPy 2) is ``np.matrix_transpose(x)``.
"""

import numpy as np
import pytest
from fd import check_grad, check_hvp, check_jvp

LO = np.array([-0.3, 0.0, 0.2, -1.0])


def floor_only(x):
    return np.sum(x.clip(0) * x)


def floor_array(x):
    return np.sum(x.clip(LO) ** 2)


def top_only_by_keyword(x):
    return np.sum(np.sin(x.clip(max=0.4)))


def floor_by_keyword(x):
    return np.sum(x.clip(min=-0.2) ** 3)


def top_only_by_position(x):
    return np.sum(x.clip(None, 0.4) * x)


def both_bounds(x):
    return np.sum(x.clip(-0.2, 0.4) ** 2 + x)


FORMS = [
    floor_only,
    floor_array,
    top_only_by_keyword,
    floor_by_keyword,
    top_only_by_position,
    both_bounds,
]
X = np.array([0.35, -0.7, 1.1, -0.15])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("f", FORMS, ids=lambda f: f.__name__)
def test_gradient_matches_finite_differences(f, dtype):
    check_grad(f, X.astype(dtype))


@pytest.mark.parametrize("f", FORMS, ids=lambda f: f.__name__)
def test_forward_and_second_order(f):
    v = np.array([0.5, -1.0, 0.25, 2.0])
    check_jvp(f, (X,), (v,))
    check_hvp(f, X, v, rtol=1e-5, atol=1e-7)


def test_floor_only_by_hand():
    from pullback import grad

    # f = sum(max(x, 0) * x): 2x where x > 0, 0 elsewhere
    np.testing.assert_allclose(grad(floor_only)(X), np.where(X > 0, 2 * X, 0.0))


def peak_to_peak_method(x):
    return x.ptp() * 2.0


@pytest.mark.skipif(hasattr(np.ndarray, "ptp"), reason="NumPy 1 arrays still have ptp")
def test_a_method_arrays_lack_fails_as_python_does():
    # x.ptp() was removed from arrays in NumPy 2: the line raises AttributeError, so the
    # gradient must not quietly run np.ptp(x) instead
    from pullback import grad

    with pytest.raises(AttributeError, match="ptp"):
        peak_to_peak_method(X)
    with pytest.raises(AttributeError, match="ptp"):
        grad(peak_to_peak_method)(X)


def stacked_gram(a):
    # x.mT (NumPy 2) swaps the last two axes of every matrix in the stack
    return np.sum(np.sin(a @ a.mT))


@pytest.mark.skipif(not hasattr(np, "matrix_transpose"), reason="x.mT is NumPy 2")
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matrix_transpose_attribute(dtype):
    a = np.linspace(-1.0, 1.2, 12).reshape(2, 2, 3)
    check_grad(stacked_gram, a.astype(dtype))
    v = np.cos(np.arange(12.0)).reshape(2, 2, 3)
    check_jvp(stacked_gram, (a,), (v,))
    check_hvp(stacked_gram, a, v, rtol=1e-5, atol=1e-7)
