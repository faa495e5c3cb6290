"""scipy.signal convolution rules against finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from rule_inputs import FLOATS, make

ss = pytest.importorskip("scipy.signal")

from pullback import ArgumentError, default_registry  # noqa: E402
from pullback.testing import check_grads, check_rrule  # noqa: E402

D = pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
MODES = pytest.mark.parametrize("mode", ["full", "same", "valid"])
SHAPES = [((5,), (3,)), ((3,), (6,)), ((4,), (4,)), ((1,), (1,)), ((4, 5), (2, 3)),
          ((2, 3), (3, 4)), ((3, 2, 4), (2, 2, 2))]  # fmt: skip


@D
@MODES
@pytest.mark.parametrize(
    "fn", [ss.convolve, ss.correlate, ss.fftconvolve], ids=lambda f: f.__name__
)
@pytest.mark.parametrize("s1,s2", SHAPES, ids=str)
def test_convolutions(fn, s1, s2, mode, dtype):
    if mode == "valid" and not (
        all(a >= b for a, b in zip(s1, s2, strict=True))
        or all(a <= b for a, b in zip(s1, s2, strict=True))
    ):
        pytest.skip("valid needs one input at least as large as the other in every axis")
    x, h = make("real", s1, dtype), make("real", s2, dtype, seed=1)
    check_rrule(fn, x, h, mode)
    check_rrule(fn, x, h, mode=mode)


@D
@pytest.mark.parametrize("method", ["direct", "fft"])
def test_methods(method, dtype):
    x, h = make("real", (6,), dtype), make("real", (3,), dtype, seed=1)
    check_rrule(ss.convolve, x, h, "same", method)
    check_rrule(ss.correlate, x, h, method=method)


@D
@MODES
def test_fftconvolve_axes(mode, dtype):
    x = make("real", (3, 6), dtype)
    check_rrule(ss.fftconvolve, x, make("real", (3, 2), dtype, seed=1), mode, axes=1)
    check_rrule(ss.fftconvolve, x, make("real", (1, 2), dtype, seed=1), mode=mode, axes=[-1])


def test_refusals():
    rule = default_registry().lookup(ss.convolve).rrule
    with pytest.raises(ArgumentError, match="real inputs"):
        rule(np.ones(3) * 1j, np.ones(2))
    with pytest.raises(ArgumentError, match="number of dimensions"):
        rule(np.ones((3, 3)), np.ones(2))


def _smooth(x, h):
    y = ss.convolve(x, h, mode="same")
    z = ss.correlate(y, h, mode="valid")
    return np.sum(z**3) + np.sum(ss.fftconvolve(x, h) ** 2)


def test_second_order():
    x, h = make("real", (6,)), make("real", (3,), seed=1)
    for i in (0, 1):
        assert check_grads(_smooth, x, h, wrt=i, order=2) == "reverse over reverse"
    check_grads(_smooth, x, h, wrt=(0, 1))


LFILTERS = [
    ((3,), (1,), (7,)),  # FIR: a = [a0]
    ((2,), (3,), (8,)),  # IIR
    ((4,), (2,), (3,)),  # more taps than samples
    ((1,), (1,), (1,)),  # one of each
]


def _stable(a):
    a = np.asarray(a).copy()
    a[0] = 1.3 + abs(a[0])  # a0 away from 0, the poles inside the unit circle
    a[1:] = 0.3 * a[1:] / max(1.0, float(np.sum(np.abs(a[1:]))))
    return a


@D
@pytest.mark.parametrize("sb,sa,sx", LFILTERS, ids=str)
def test_lfilter(sb, sa, sx, dtype):
    b = make("real", sb, dtype)
    a = _stable(make("real", sa, dtype, seed=1))
    x = make("real", sx, dtype, seed=2)
    check_rrule(ss.lfilter, b, a, x)


@D
def test_lfilter_along_an_axis(dtype):
    b, a = make("real", (2,), dtype), _stable(make("real", (2,), dtype, seed=1))
    check_rrule(ss.lfilter, b, a, make("real", (5, 3), dtype, seed=2), axis=0)
    check_rrule(ss.lfilter, b, a, make("real", (3, 5), dtype, seed=2))


def test_lfilter_refusals():
    rule = default_registry().lookup(ss.lfilter).rrule
    with pytest.raises(ArgumentError, match="initial conditions zi") as info:
        rule(np.ones(2), np.ones(2), np.ones(4), zi=np.zeros(1))
    assert "leave zi out" in str(info.value)
    with pytest.raises(ArgumentError, match="1-D coefficient arrays"):
        rule(np.ones((2, 2)), np.ones(1), np.ones(4))
    with pytest.raises(ArgumentError, match="real inputs"):
        rule(np.ones(2) * 1j, np.ones(1), np.ones(4))


def _filtered(b, a, x):
    y = ss.lfilter(b, a, x)
    return np.sum(y**3) + np.sum(ss.lfilter(b, [1.0], y) ** 2)


def test_lfilter_second_order():
    b, a, x = make("real", (3,)), np.array([1.2, -0.4, 0.1]), make("real", (6,), seed=2)
    for i in (0, 1, 2):
        assert check_grads(_filtered, b, a, x, wrt=i, order=2) == "reverse over reverse"
