"""Functions with complex intermediates (real inputs and outputs)."""

import numpy as np


def power_spectrum(x):
    z = np.fft.fft(x)
    w = z * np.conj(z) * (1 + 2j)
    return np.sum(np.abs(w))


def complex_product(x):
    c = x * (1.0 + 2.0j)
    d = c * c * x / (c + 3.0)
    return np.real(np.sum(d * np.exp(c)))


def real_of_complex_argument(z):
    return np.sum(np.abs(z * (2 + 1j)) ** 2 + np.real(z) * 3.0)
