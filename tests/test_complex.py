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


def spectrum_without_dc(x):
    s = np.fft.rfft(x)
    s = s - s[0]
    return np.sum(np.abs(s) ** 2)


def rotated(x):
    return np.sum(np.abs(x * (1 + 1j)) ** 2)


def complex_output(z):
    return np.fft.fft(z) * np.exp(1j * np.abs(z))


def _central(f, x, v, h):
    return (f(x + h * v) - f(x - h * v)) / (2 * h)


def test_forward_mode_through_complex_intermediates():
    # The tangent of a rule's complex output by rows of J needs both parts of each row (a
    # cotangent 1 gives Re dy_k, 1j gives Im dy_k): with the real part alone forward mode
    # gave a silently wrong derivative (rotated: 0 for 2 * |1 + 1j|^2 * <x, v>).
    rng = np.random.default_rng(7)
    for f, x in [
        (spectrum_without_dc, rng.uniform(0.2, 1.0, 8)),
        (rotated, rng.uniform(0.2, 1.0, 5)),
        (complex_of_two_entries, np.array([0.6, -0.4])),
        (complex_output, rng.normal(size=4) + 1j * rng.normal(size=4)),
        (complex_output, rng.normal(size=4)),
    ]:
        v = rng.normal(size=x.shape) + (1j * rng.normal(size=x.shape) if x.dtype.kind == "c" else 0)
        _, dy = pullback.jvp(f, (x,), (v,))
        np.testing.assert_allclose(dy, _central(f, x, v, 1e-6), rtol=1e-6, atol=1e-8)
    x = rng.uniform(0.2, 1.0, 5)
    v = rng.normal(size=5)
    _, dy = pullback.jvp(rotated, (x,), (v,))
    np.testing.assert_allclose(dy, 4 * x @ v, rtol=1e-12)  # |1 + 1j|^2 = 2, d|x|^2 = 2<x, v>


def test_forward_mode_through_complex_intermediates_float32():
    x = np.array([0.3, 0.9, 0.5, 0.7, 0.2, 0.8], dtype=np.float32)
    v = np.array([1.0, -0.5, 0.25, 0.5, -1.0, 0.3], dtype=np.float32)
    _, dy = pullback.jvp(spectrum_without_dc, (x,), (v,))
    want = _central(spectrum_without_dc, x.astype(np.float64), v.astype(np.float64), 1e-6)
    np.testing.assert_allclose(dy, want, rtol=1e-4)


# A scalar loop in complex arithmetic (a characteristic-function price by a midpoint sum,
# the style probe3 found): Python complex numbers, NumPy complex128 scalars and floats mixed;
# their cotangents take the scalar fast paths (tangents.unbroadcast, sweep_cotangents).
def complex_midpoint_sum(v, n=40):
    total = 0
    for i in range(1, n):
        phi = 0.1 * (2 * i + 1) / 2
        z = np.exp(1j * phi * v) * (1 - v * 1j) ** 2 + np.complex128(0.5j) * phi
        total += 0.1 * z / (1j * phi + v)
    return np.real(total) + np.imag(total) * v


def test_a_complex_scalar_loop_against_finite_differences():
    v, h = 0.7, 1e-6
    want = (complex_midpoint_sum(v + h) - complex_midpoint_sum(v - h)) / (2 * h)
    np.testing.assert_allclose(pullback.grad(complex_midpoint_sum)(v), want, rtol=1e-6)
