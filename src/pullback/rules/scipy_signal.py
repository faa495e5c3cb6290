"""scipy.signal: convolve, correlate and fftconvolve, every mode, any number of dimensions,
with respect to both inputs; lfilter with respect to b, a and x.

Every mode is a window of the full convolution ``y = x * h`` (``same`` centred on ``x``,
``valid`` where the inputs overlap completely; SciPy centres both the same way). The
pullback pads ``dy`` back to the full size and correlates it with the other input:
``dx = convolve(dy_full, flip(h), 'valid')`` and ``dh = convolve(dy_full, flip(x),
'valid')``. ``correlate(x, h)`` is ``convolve(x, flip(h))``. ``fftconvolve``'s ``axes``
convolve along some axes and broadcast along the others; the cotangents are summed over
the broadcast axes. The pullbacks call the same SciPy function (and ``method``), so they
are transformable and second derivatives run through them. Real inputs only.

``lfilter(b, a, x)`` solves ``A y = B x`` along ``axis``, with ``A`` and ``B`` the lower
triangular Toeplitz matrices of ``a`` and ``b``. With ``u = A^-T dy`` (the all-pole filter
run backwards in time, ``A^T`` being ``A`` with time reversed): ``dx = B^T u`` (the FIR
filter backwards), ``db[k] = sum_n u[n] x[n - k]`` and ``da[k] = -sum_n u[n] y[n - k]``.
"""

from __future__ import annotations

import numpy as np

from ..registry import transformable
from ..tangents import unbroadcast
from ._util import Registrar
from .scipy_linalg import real_only, refuse, register_transformable

FAMILY = "scipy_signal"
REQUIRES = "scipy.signal"

# scipy.signal, bound by register() (the module must not import SciPy on import).
ss = None


@transformable
def conv_axes(ndim, axes):
    """The convolved axes, as a tuple of non-negative ints."""
    if axes is None:
        return tuple(range(ndim))
    if isinstance(axes, int):
        return (axes % ndim,)
    out = ()
    for a in axes:
        out = out + (a % ndim,)
    return out


@transformable
def full_cotangent(dy, in1, in2, axes):
    """``dy`` padded with zeros to the shape of the full convolution, at the place its
    mode's window takes (SciPy centres ``same`` and ``valid``)."""
    # (tuples, not a list: pullback transforms this function for second derivatives)
    widths = ()
    for k in range(np.ndim(dy)):
        width = (0, 0)
        if k in axes:
            full = np.shape(in1)[k] + np.shape(in2)[k] - 1
            start = (full - np.shape(dy)[k]) // 2
            width = (start, full - start - np.shape(dy)[k])
        widths = widths + (width,)
    return np.pad(dy, widths)


@transformable
def convolve_pullback(dy, in1, in2, mode="full", method="auto"):
    g = full_cotangent(dy, in1, in2, conv_axes(np.ndim(dy), None))
    d1 = ss.convolve(g, np.flip(in2), mode="valid", method=method)
    d2 = ss.convolve(g, np.flip(in1), mode="valid", method=method)
    return d1, d2


@transformable
def correlate_pullback(dy, in1, in2, mode="full", method="auto"):
    # correlate(x, h) = convolve(x, flip(h))
    g = full_cotangent(dy, in1, in2, conv_axes(np.ndim(dy), None))
    d1 = ss.convolve(g, in2, mode="valid", method=method)
    d2 = np.flip(ss.convolve(g, np.flip(in1), mode="valid", method=method))
    return d1, d2


@transformable
def fftconvolve_pullback(dy, in1, in2, mode="full", axes=None):
    ax = conv_axes(np.ndim(dy), axes)
    g = full_cotangent(dy, in1, in2, ax)
    d1 = ss.fftconvolve(g, np.flip(in2, ax), mode="valid", axes=ax)
    d2 = ss.fftconvolve(g, np.flip(in1, ax), mode="valid", axes=ax)
    return unbroadcast(d1, in1), unbroadcast(d2, in2)


@transformable
def lag_products(u, v, count, axis):
    """``out[k] = sum_n u[n] * v[n - k]`` along ``axis`` (summed over the other axes too),
    for ``k`` below ``count``: 0 for a lag past the signal's end."""
    u = np.moveaxis(u, axis, -1)
    v = np.moveaxis(v, axis, -1)
    n = np.shape(u)[-1]
    out = ()
    for k in range(count):
        if k < n:
            out = out + (np.sum(u[..., k:] * v[..., : n - k]),)
        else:
            out = out + (0.0 * np.sum(u),)
    return np.stack(out)


@transformable
def lfilter_pullback(dy, b, a, x, axis=-1, zi=None):
    one = np.ones(1)
    u = np.flip(ss.lfilter(one, a, np.flip(dy, axis), axis=axis), axis)
    dx = np.flip(ss.lfilter(b, one, np.flip(u, axis), axis=axis), axis)
    y = ss.lfilter(b, a, x, axis=axis)
    db = lag_products(u, x, np.shape(b)[0], axis)
    da = -lag_products(u, y, np.shape(a)[0], axis)
    return db, da, dx


def _lfilter_check(b, a, x, axis=-1, zi=None):
    where = "scipy.signal.lfilter"
    real_only(where, b, a, x, what="inputs", fix="filter the real and imaginary parts apart")
    if zi is not None:
        refuse(
            where,
            "with initial conditions zi it returns (y, zf), which its rule does not give",
            "leave zi out (a filter at rest), or write the recursion y[n] = ... as a loop",
        )
    if np.ndim(b) != 1 or np.ndim(a) != 1:
        refuse(where, "its rule needs 1-D coefficient arrays b and a", "pass b and a as 1-D arrays")


def _check(name):
    def check(in1, in2, *args, **kwargs):
        where = f"scipy.signal.{name}"
        fix = "convolve the real and imaginary parts separately"
        real_only(where, in1, in2, what="inputs", fix=fix)
        if np.ndim(in1) != np.ndim(in2):
            refuse(
                where,
                "in1 and in2 must have the same number of dimensions, got "
                f"{np.ndim(in1)} and {np.ndim(in2)}",
                "add axes of length 1 (np.expand_dims) to the smaller one",
            )

    return check


def register(reg):
    global ss
    try:
        import scipy.signal
    except ImportError:  # pragma: no cover - scipy is optional
        return
    ss = scipy.signal
    r = Registrar(reg, FAMILY)
    for fn, pullback_fn in (
        (ss.convolve, convolve_pullback),
        (ss.correlate, correlate_pullback),
        (ss.fftconvolve, fftconvolve_pullback),
    ):
        register_transformable(r, fn, pullback_fn, _check(fn.__name__), "real; every mode")
    register_transformable(r, ss.lfilter, lfilter_pullback, _lfilter_check, "real; zi=None")
