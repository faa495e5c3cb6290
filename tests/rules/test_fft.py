"""numpy.fft rules against finite differences (complex cotangents)."""

from __future__ import annotations

import numpy as np
import pytest
from rule_inputs import FLOATS, make, make_complex

from pullback.registry import NONDIFF, default_registry
from pullback.testing import check_rrule

F = np.fft
NORMS = [None, "backward", "ortho", "forward"]


@pytest.mark.parametrize("norm", NORMS, ids=str)
@pytest.mark.parametrize("fn", [F.fft, F.ifft], ids=lambda f: f.__name__)
def test_c2c_1d(fn, norm):
    z = make_complex((3, 6))
    check_rrule(fn, z, norm=norm)
    check_rrule(fn, z, 8, 0, norm)
    check_rrule(fn, z, n=4, axis=-1, norm=norm)
    check_rrule(fn, make("real", (6,)), norm=norm)
    check_rrule(fn, make("real", (6,), np.float32), 5, norm=norm)


@pytest.mark.parametrize("norm", NORMS, ids=str)
@pytest.mark.parametrize("fn", [F.fft2, F.ifft2, F.fftn, F.ifftn], ids=lambda f: f.__name__)
def test_c2c_nd(fn, norm):
    z = make_complex((2, 3, 4))
    check_rrule(fn, z, norm=norm)
    check_rrule(fn, z, (4, 2), (0, 2), norm)
    check_rrule(fn, z, axes=(1,), norm=norm)
    check_rrule(fn, make("real", (3, 4)), s=(5, 3), axes=(0, 1), norm=norm)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("norm", NORMS, ids=str)
def test_rfft_irfft(norm, dtype):
    x = make("real", (3, 6), dtype)
    check_rrule(F.rfft, x, norm=norm)
    check_rrule(F.rfft, x, 5, 0, norm)
    check_rrule(F.rfft, x, n=8, norm=norm)
    h = make_complex((3, 4))
    check_rrule(F.irfft, h, norm=norm)
    check_rrule(F.irfft, h, 7, norm=norm)
    check_rrule(F.irfft, h, n=4, axis=0, norm=norm)
    check_rrule(F.irfft, h, 10, norm=norm)
    check_rrule(F.irfft, make("real", (4,), dtype), norm=norm)


@pytest.mark.parametrize("norm", NORMS, ids=str)
def test_rfftn_irfftn(norm):
    x = make("real", (2, 3, 4))
    for fn in (F.rfft2, F.rfftn):
        check_rrule(fn, x, norm=norm)
        check_rrule(fn, x, (4, 6), (0, 2), norm)
        check_rrule(fn, x, axes=(2, 1), norm=norm)
    h = make_complex((2, 3, 4))
    for fn in (F.irfft2, F.irfftn):
        check_rrule(fn, h, norm=norm)
        check_rrule(fn, h, (4, 5), (0, 2), norm)
        check_rrule(fn, h, s=(3, 7), axes=(1, 2), norm=norm)


@pytest.mark.parametrize("norm", NORMS, ids=str)
def test_hfft_ihfft(norm):
    check_rrule(F.hfft, make_complex((2, 4)), norm=norm)
    check_rrule(F.hfft, make_complex((2, 4)), 7, 0, norm)
    check_rrule(F.ihfft, make("real", (2, 6)), norm=norm)
    check_rrule(F.ihfft, make("real", (2, 6)), 5, norm=norm)


def test_shifts():
    x = make("real", (3, 4))
    for fn in (F.fftshift, F.ifftshift):
        check_rrule(fn, x)
        check_rrule(fn, x, 1)
        check_rrule(fn, x, axes=(0,))
        check_rrule(fn, make_complex((5,)))


def test_frequencies_are_not_differentiable():
    for fn in (F.fftfreq, F.rfftfreq):
        assert default_registry().lookup(fn).kind == NONDIFF
