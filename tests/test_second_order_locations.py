"""Second derivatives through the 2-norm along an axis, and refusals of a second derivative
that name the user's line (not a line of pullback's own rule code)."""

import numpy as np
import pytest

from pullback import HigherOrderError, grad, hessian
from pullback.testing import check_grads


def row_lengths(x):
    return np.sum(np.linalg.norm(x.reshape(2, 3), axis=1) ** 3)


def column_lengths(x):
    return np.sum(np.linalg.norm(x.reshape(2, 3), None, 0, True) * x.reshape(2, 3))


def power_spectrum(x):
    return np.sum(np.abs(np.fft.fft(x)) ** 2)


def digamma_spectrum(x):
    import scipy.special as sc

    return np.sum(np.real(sc.psi(np.fft.fft(x) + 3.0)))


@pytest.mark.parametrize("fn", [row_lengths, column_lengths])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_hessian_through_norms_along_an_axis(fn, dtype):
    x = np.array([0.3, -0.7, 1.2, 0.5, -0.4, 0.9], dtype=dtype)
    check_grads(fn, x, order=2)
    h = 1e-6
    cols = [
        (grad(fn)(x.astype(float) + h * e) - grad(fn)(x.astype(float) - h * e)) / (2 * h)
        for e in np.eye(6)
    ]
    np.testing.assert_allclose(hessian(fn)(x.astype(float)), np.stack(cols, 1), atol=1e-6)


def test_a_refused_second_derivative_names_the_users_line():
    # (psi of a complex value: not holomorphic, and its factor is written for real values)
    with pytest.raises(HigherOrderError) as info:
        hessian(digamma_spectrum)(np.array([0.3, -0.7, 1.2, 0.5]))
    text = str(info.value)
    assert text.startswith(f"{__file__}:")
    assert "return np.sum(np.real(sc.psi(np.fft.fft(x) + 3.0)))" in text
    assert "np.hypot" in text


def test_the_power_spectrum_has_a_second_derivative():
    # (np.abs of a complex value: it was the refused example above; Parseval: n sum x^2)
    x = np.array([0.3, -0.7, 1.2, 0.5])
    np.testing.assert_allclose(hessian(power_spectrum)(x), 8.0 * np.eye(4), rtol=1e-12)
