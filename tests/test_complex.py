"""Complex values: intermediates of real functions, and complex arguments (the gradient is
dL/dx + i dL/dy for z = x + iy, the direction of steepest ascent)."""

import numpy as np
from complex_cases import complex_product, power_spectrum, real_of_complex_argument
from fd import check_grad

import pullback


def test_complex_intermediates_of_a_real_function():
    x = np.random.default_rng(3).uniform(0.1, 1.0, size=5)
    check_grad(power_spectrum, x)
    check_grad(complex_product, x)


def test_gradient_with_respect_to_a_complex_argument():
    z = np.array([1 + 2j, 0.5 - 1j])
    got = pullback.grad(real_of_complex_argument)(z)
    eps = 1e-6
    want = []
    for e in np.eye(2):
        dx = real_of_complex_argument(z + eps * e) - real_of_complex_argument(z - eps * e)
        dy = real_of_complex_argument(z + 1j * eps * e) - real_of_complex_argument(z - 1j * eps * e)
        want.append(dx / (2 * eps) + 1j * dy / (2 * eps))
    np.testing.assert_allclose(got, want, rtol=1e-7)
    assert got.dtype == np.complex128
