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


def complex_of_two_entries(x):
    z = x[0] + 1j * x[1]  # x[0], x[1]: NumPy scalars whose cotangents come back complex
    w = z**3 + np.exp(z)
    return np.abs(w) ** 2


def test_real_scalar_entries_take_the_real_part_without_a_warning():
    import warnings

    for dtype in (np.float64, np.float32):
        x = np.array([0.6, -0.4], dtype=dtype)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # np.float64(complex) would warn ComplexWarning
            g = pullback.grad(complex_of_two_entries)(x)
        assert g.dtype == dtype and not np.iscomplexobj(g)
        check_grad(complex_of_two_entries, x)
    # hand-derived: f = |w|^2, df/dx0 = 2 Re(conj(w) w'), df/dx1 = 2 Re(conj(w) i w')
    z = 0.6 - 0.4j
    w, dw = z**3 + np.exp(z), 3 * z**2 + np.exp(z)
    want = [2 * (np.conj(w) * dw).real, 2 * (np.conj(w) * 1j * dw).real]
    got = pullback.grad(complex_of_two_entries)(np.array([0.6, -0.4]))
    np.testing.assert_allclose(got, want, rtol=1e-12)
