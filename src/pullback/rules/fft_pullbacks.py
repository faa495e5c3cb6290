"""Transformable pullbacks of numpy.fft (fft.py), written in the differentiable subset so
that second derivatives run through them (see transformable.py).

Each transform is linear; its pullback is the opposite transform with the opposite
normalization, after the adjoint of the output selection and before the adjoint of the
padding or truncation to ``n``/``s`` — the same steps as the rules' closures, and made of
transforms again, so the pullback of a pullback is the forward transform.
"""

from __future__ import annotations

import numpy as np

from ..registry import transformable
from ..tangents import NO_TANGENT, densify, unbroadcast
from .transformable import set_pullbacks

F = np.fft
SWAP = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}
SAME = {None: "backward", "backward": "backward", "forward": "forward", "ortho": "ortho"}


def fft_axes(shape, s, axes, two_d):
    """``(axes, sizes)`` of an n-dimensional transform of an array of ``shape``
    (``two_d``: fft2's default axes). Integer bookkeeping: registered non-differentiable."""
    nd = len(shape)
    if axes is None:
        if s is None:
            axes = [nd - 2, nd - 1] if two_d else list(range(nd))
        else:
            axes = list(range(nd - len(s), nd))
    axes = [a % nd for a in axes]
    if s is None:
        return axes, [shape[a] for a in axes]
    return axes, [shape[a] if n in (None, -1) else int(n) for a, n in zip(axes, s, strict=True)]


HELPERS = (fft_axes,)


@transformable
def fit(z, axis, length):
    """Truncate or zero-pad ``z`` along ``axis`` to ``length``."""
    n = np.shape(z)[axis]
    if n == length:
        return z
    if n > length:
        return z[(slice(None),) * axis + (slice(0, length),)]
    shape = np.shape(z)[:axis] + (length - n,) + np.shape(z)[axis + 1 :]
    return np.concatenate([z, np.zeros(shape, dtype=np.result_type(z))], axis=axis)


@transformable
def fit_all(z, axes, shape):
    for ax in axes:
        z = fit(z, ax, shape[ax])
    return z


@transformable
def fft_pullback(dy, a, n=None, axis=-1, norm=None, out=None):
    ax = axis % max(np.ndim(a), 1)
    size = np.shape(a)[ax] if n is None else n
    z = F.ifft(densify(dy), size, ax, SWAP[norm])
    return (unbroadcast(fit(z, ax, np.shape(a)[ax]), a),) + (NO_TANGENT,) * 4


@transformable
def ifft_pullback(dy, a, n=None, axis=-1, norm=None, out=None):
    ax = axis % max(np.ndim(a), 1)
    size = np.shape(a)[ax] if n is None else n
    z = F.fft(densify(dy), size, ax, SWAP[norm])
    return (unbroadcast(fit(z, ax, np.shape(a)[ax]), a),) + (NO_TANGENT,) * 4


@transformable
def fftn_pullback(dy, a, s=None, axes=None, norm=None, out=None):
    axes, sizes = fft_axes(np.shape(a), s, axes, False)
    z = F.ifftn(densify(dy), s=sizes, axes=axes, norm=SWAP[norm])
    return (unbroadcast(fit_all(z, axes, np.shape(a)), a),) + (NO_TANGENT,) * 4


@transformable
def ifftn_pullback(dy, a, s=None, axes=None, norm=None, out=None):
    axes, sizes = fft_axes(np.shape(a), s, axes, False)
    z = F.fftn(densify(dy), s=sizes, axes=axes, norm=SWAP[norm])
    return (unbroadcast(fit_all(z, axes, np.shape(a)), a),) + (NO_TANGENT,) * 4


@transformable
def fft2_pullback(dy, a, s=None, axes=(-2, -1), norm=None, out=None):
    return fftn_pullback(dy, a, s, axes, norm, out)


@transformable
def ifft2_pullback(dy, a, s=None, axes=(-2, -1), norm=None, out=None):
    return ifftn_pullback(dy, a, s, axes, norm, out)


@transformable
def rfft_adjoint(g, axes, sizes, norm):
    """The adjoint of rfftn (``axes[-1]`` the halved axis) applied to ``g``."""
    z = g
    if len(axes) > 1:
        z = F.ifftn(z, s=sizes[:-1], axes=axes[:-1], norm=norm)
    last = axes[-1]
    n = sizes[-1]
    z = fit(z, last, n)  # the dropped half of the spectrum had no cotangent
    return np.real(F.ifft(z, n=n, axis=last, norm=norm))


@transformable
def rfft_pullback(dy, a, n=None, axis=-1, norm=None, out=None):
    ax = axis % max(np.ndim(a), 1)
    size = np.shape(a)[ax] if n is None else n
    z = rfft_adjoint(densify(dy), [ax], [size], SWAP[norm])
    return (unbroadcast(fit(z, ax, np.shape(a)[ax]), a),) + (NO_TANGENT,) * 4


@transformable
def rfftn_pullback(dy, a, s=None, axes=None, norm=None, out=None):
    axes, sizes = fft_axes(np.shape(a), s, axes, False)
    z = rfft_adjoint(densify(dy), axes, sizes, SWAP[norm])
    return (unbroadcast(fit_all(z, axes, np.shape(a)), a),) + (NO_TANGENT,) * 4


@transformable
def rfft2_pullback(dy, a, s=None, axes=(-2, -1), norm=None, out=None):
    return rfftn_pullback(dy, a, s, axes, norm, out)


@transformable
def irfft_last_adjoint(xbar, axis, n, m, norm):
    """The adjoint of irfft along ``axis`` (input length ``m``, output length ``n``)."""
    half = F.rfft(xbar, n=n, axis=axis, norm=norm)
    k = np.arange(n // 2 + 1)
    weight = np.where((k == 0) | ((n % 2 == 0) & (k == n // 2)), 1.0, 2.0)
    nd = np.ndim(half)
    view = (1,) * axis + (n // 2 + 1,) + (1,) * (nd - axis - 1)
    return fit(half * np.reshape(weight, view), axis, m)


@transformable
def irfft_pullback(dy, a, n=None, axis=-1, norm=None, out=None):
    ax = axis % max(np.ndim(a), 1)
    size = 2 * (np.shape(a)[ax] - 1) if n is None else n
    z = irfft_last_adjoint(densify(dy), ax, size, np.shape(a)[ax], SWAP[norm])
    return (unbroadcast(z, a),) + (NO_TANGENT,) * 4


@transformable
def irfftn_pullback(dy, a, s=None, axes=None, norm=None, out=None):
    g = densify(dy)
    axes, _ = fft_axes(np.shape(a), s, axes, False)
    out_sizes = []
    for ax in axes:
        out_sizes = out_sizes + [np.shape(g)[ax]]
    last = axes[-1]
    z = irfft_last_adjoint(g, last, out_sizes[-1], np.shape(a)[last], SWAP[norm])
    if len(axes) > 1:
        # the adjoint of ifftn over the other axes: fftn with the swapped norm
        z = F.fftn(z, s=out_sizes[:-1], axes=axes[:-1], norm=SWAP[norm])
        z = fit_all(z, axes[:-1], np.shape(a))
    return (unbroadcast(z, a),) + (NO_TANGENT,) * 4


@transformable
def irfft2_pullback(dy, a, s=None, axes=(-2, -1), norm=None, out=None):
    return irfftn_pullback(dy, a, s, axes, norm, out)


@transformable
def hfft_pullback(dy, a, n=None, axis=-1, norm=None, out=None):
    # hfft(a) = irfft(conj(a)) with the opposite normalization.
    ax = axis % max(np.ndim(a), 1)
    size = 2 * (np.shape(a)[ax] - 1) if n is None else n
    z = irfft_last_adjoint(densify(dy), ax, size, np.shape(a)[ax], SAME[norm])
    return (unbroadcast(np.conj(z), a),) + (NO_TANGENT,) * 4


@transformable
def ihfft_pullback(dy, a, n=None, axis=-1, norm=None, out=None):
    # ihfft(a) = conj(rfft(a)) with the opposite normalization.
    ax = axis % max(np.ndim(a), 1)
    size = np.shape(a)[ax] if n is None else n
    z = rfft_adjoint(np.conj(densify(dy)), [ax], [size], SAME[norm])
    return (unbroadcast(fit(z, ax, np.shape(a)[ax]), a),) + (NO_TANGENT,) * 4


@transformable
def fftshift_pullback(dy, x, axes=None):
    return unbroadcast(F.ifftshift(densify(dy), axes), x), NO_TANGENT


@transformable
def ifftshift_pullback(dy, x, axes=None):
    return unbroadcast(F.fftshift(densify(dy), axes), x), NO_TANGENT


def register_pullbacks(reg, family):
    for helper in HELPERS:
        reg.non_differentiable(helper, family=family, trusted=True, notes="axis bookkeeping")
    set_pullbacks(
        reg,
        [
            (F.fft, fft_pullback),
            (F.ifft, ifft_pullback),
            (F.fft2, fft2_pullback),
            (F.ifft2, ifft2_pullback),
            (F.fftn, fftn_pullback),
            (F.ifftn, ifftn_pullback),
            (F.rfft, rfft_pullback),
            (F.rfft2, rfft2_pullback),
            (F.rfftn, rfftn_pullback),
            (F.irfft, irfft_pullback),
            (F.irfft2, irfft2_pullback),
            (F.irfftn, irfftn_pullback),
            (F.hfft, hfft_pullback),
            (F.ihfft, ihfft_pullback),
            (F.fftshift, fftshift_pullback),
            (F.ifftshift, ifftshift_pullback),
        ],
    )
