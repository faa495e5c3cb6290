"""What ``import pullback`` leaves unloaded (numpy.random, numpy.fft: each costs every
start) and that the checks which used to name those modules at import still see them."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from pullback.check.mutation_fixes import is_inplace_numpy
from pullback.errors import PullbackError
from pullback.forward_mode import jvp
from pullback.registry import qualified_name
from pullback.transform.forward import _linear


def test_import_leaves_numpy_random_and_fft_unloaded():
    code = (
        "import sys, numpy, pullback\n"
        "print(sorted(m for m in ('numpy.random', 'numpy.fft') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_random_shuffle_is_still_an_inplace_numpy_function():
    assert is_inplace_numpy(np.random.shuffle)
    assert not is_inplace_numpy(np.random.permutation)
    assert not is_inplace_numpy(None)


def test_shuffle_in_a_differentiated_function_is_refused():
    from pullback import grad

    def f(x):
        y = x * 2.0
        np.random.shuffle(y)
        return np.sum(y)

    with pytest.raises(PullbackError, match="shuffle"):
        grad(f)(np.ones(3))


def test_fft_functions_are_linear_in_forward_mode():
    for name in ("fft", "ifft", "rfft", "fft2", "ifft2"):
        assert _linear(getattr(np.fft, name))
    assert not _linear(np.fft.fftfreq)
    assert _linear(np.sum)


def fft_energy(x):
    return np.fft.rfft(x * x)


def test_jvp_through_rfft_matches_finite_differences():
    x = np.linspace(0.1, 1.0, 6)
    v = np.cos(np.arange(6.0))
    _, dy = jvp(fft_energy, (x,), (v,))
    h = 1e-6
    want = (fft_energy(x + h * v) - fft_energy(x - h * v)) / (2 * h)
    np.testing.assert_allclose(dy, want, rtol=1e-6, atol=1e-8)


def test_qualified_names_of_numpy_submodule_functions():
    assert qualified_name(np.fft.fft) == "numpy.fft.fft"
    assert qualified_name(np.linalg.solve) == "numpy.linalg.solve"
    assert qualified_name(np.sin) == "numpy.sin"
