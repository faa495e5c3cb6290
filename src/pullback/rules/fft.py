"""numpy.fft: fft/ifft, fft2/ifft2, fftn/ifftn, rfft/irfft, rfft2/irfft2, rfftn/irfftn,
hfft/ihfft, fftshift/ifftshift (fftfreq and rfftfreq are non-differentiable).

Each transform is linear, so its pullback is its adjoint: the opposite transform with the
opposite normalization (``backward`` <-> ``forward``, ``ortho`` stays), preceded by the
adjoint of the output selection (``rfft`` keeps half the spectrum) and followed by the
adjoint of the zero-padding or truncation to ``n``/``s``. Cotangents follow the library's
complex convention; a real input gets the real part. ``irfft`` ignores the imaginary part
of the zero and Nyquist frequencies, so their cotangents are real there.
"""

from __future__ import annotations

import numpy as np

from ._util import NO_TANGENT, ZERO, Registrar, bind, densify, finalize, zeros_for

FAMILY = "fft"
# Deferred until numpy.fft is imported (NumPy loads it on first use of ``np.fft``): a
# gradient that never uses it does not import it.
REQUIRES = "numpy.fft"
F = np.fft

_SWAP = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def _fit(z, axis, length):
    """Truncate or zero-pad ``z`` along ``axis`` to ``length``."""
    n = z.shape[axis]
    if n == length:
        return z
    if n > length:
        index = [slice(None)] * z.ndim
        index[axis] = slice(0, length)
        return z[tuple(index)]
    shape = list(z.shape)
    shape[axis] = length - n
    return np.concatenate([z, np.zeros(shape, dtype=z.dtype)], axis=axis)


def _axes_and_sizes(x, s, axes, default_all):
    nd = np.ndim(x)
    shape = np.shape(x)
    if axes is None:
        if s is None:
            axes = list(range(nd)) if default_all else [nd - 2, nd - 1]
        else:
            axes = list(range(nd - len(s), nd))
    axes = [a % nd for a in axes]
    sizes = (
        [shape[a] for a in axes]
        if s is None
        else [shape[a] if n in (None, -1) else int(n) for a, n in zip(axes, s, strict=True)]
    )
    return axes, sizes


def _plan(a, p, multi, name, default_all):
    """The transformed axes and their lengths for a call's bound parameters ``p``."""
    if multi:
        axes = p["axes"] if name.endswith("n") else (p["axes"] or (-2, -1))
        return _axes_and_sizes(a, p["s"], axes, default_all)
    ax = p["axis"] % max(np.ndim(a), 1)
    return [ax], [np.shape(a)[ax] if p["n"] is None else int(p["n"])]


def _c2c_rule(fn, opposite, multi, default_all=True):
    """fft/ifft (multi=False) and fft2/fftn/ifft2/ifftn (multi=True)."""
    name = fn.__name__
    params = ("s", "axes", "norm", "out") if multi else ("n", "axis", "norm", "out")

    def c2c_rrule(a, *args, **kwargs):
        y = fn(a, *args, **kwargs)
        p = bind(
            args, kwargs, params, (None, None if multi else -1, None, None), name=f"np.fft.{name}"
        )
        axes, sizes = _plan(a, p, multi, name, default_all)
        in_shape = np.shape(a)
        norm = _SWAP[p["norm"]]
        rest = (NO_TANGENT,) * len(args)

        def c2c_pullback(dy):
            if dy is ZERO:
                return zeros_for((a,)) + rest
            g = np.asarray(densify(dy))
            z = opposite(g, s=sizes, axes=axes, norm=norm)
            for ax in axes:
                z = _fit(z, ax, in_shape[ax])
            return (finalize(z, a),) + rest

        c2c_pullback.__name__ = f"{name}_pullback"
        return y, c2c_pullback

    c2c_rrule.__name__ = f"{name}_rrule"
    return c2c_rrule


def _rfft_adjoint(g, axes, sizes, norm):
    """Adjoint of rfftn (axes[-1] is the halved axis) applied to ``g``."""
    z = g
    if len(axes) > 1:
        z = F.ifftn(z, s=sizes[:-1], axes=axes[:-1], norm=norm)
    last, n = axes[-1], sizes[-1]
    z = _fit(z, last, n)  # the dropped half of the spectrum had no cotangent
    return np.real(F.ifft(z, n=n, axis=last, norm=norm))


def _r2c_rule(fn, multi):
    """rfft (multi=False), rfft2/rfftn (multi=True)."""
    name = fn.__name__
    params = ("s", "axes", "norm", "out") if multi else ("n", "axis", "norm", "out")

    def r2c_rrule(a, *args, **kwargs):
        y = fn(a, *args, **kwargs)
        p = bind(
            args, kwargs, params, (None, None if multi else -1, None, None), name=f"np.fft.{name}"
        )
        axes, sizes = _plan(a, p, multi, name, True)
        in_shape = np.shape(a)
        norm = _SWAP[p["norm"]]
        rest = (NO_TANGENT,) * len(args)

        def r2c_pullback(dy):
            if dy is ZERO:
                return zeros_for((a,)) + rest
            z = _rfft_adjoint(np.asarray(densify(dy)), axes, sizes, norm)
            for ax in axes:
                z = _fit(z, ax, in_shape[ax])
            return (finalize(z, a),) + rest

        return y, r2c_pullback

    r2c_rrule.__name__ = f"{name}_rrule"
    return r2c_rrule


def _irfft_last_adjoint(xbar, axis, n, m, norm):
    """Adjoint of irfft (input length m along axis, output length n)."""
    half = np.asarray(F.rfft(xbar, n=n, axis=axis, norm=norm))
    k = np.arange(n // 2 + 1)
    weight = np.where((k == 0) | ((n % 2 == 0) & (k == n // 2)), 1.0, 2.0)
    view = [1] * half.ndim
    view[axis] = k.shape[0]
    half = half * np.reshape(weight, view)
    return _fit(half, axis, m)


def _c2r_rule(fn, multi):
    """irfft (multi=False), irfft2/irfftn (multi=True)."""
    name = fn.__name__
    params = ("s", "axes", "norm", "out") if multi else ("n", "axis", "norm", "out")

    def c2r_rrule(a, *args, **kwargs):
        y = fn(a, *args, **kwargs)
        p = bind(
            args, kwargs, params, (None, None if multi else -1, None, None), name=f"np.fft.{name}"
        )
        in_shape = np.shape(a)
        nd = len(in_shape)
        if multi:
            axes = p["axes"] if name.endswith("n") else (p["axes"] or (-2, -1))
            if axes is None:
                axes = list(range(nd)) if p["s"] is None else list(range(nd - len(p["s"]), nd))
            axes = [ax % nd for ax in axes]
        else:
            axes = [p["axis"] % max(nd, 1)]
        out_sizes = [np.shape(y)[ax] for ax in axes]
        norm = _SWAP[p["norm"]]
        rest = (NO_TANGENT,) * len(args)

        def c2r_pullback(dy):
            if dy is ZERO:
                return zeros_for((a,)) + rest
            xbar = np.asarray(densify(dy))
            last = axes[-1]
            z = _irfft_last_adjoint(xbar, last, out_sizes[-1], in_shape[last], norm)
            if len(axes) > 1:
                # adjoint of ifftn over the other axes: fftn with the swapped norm
                z = F.fftn(z, s=out_sizes[:-1], axes=axes[:-1], norm=norm)
                for ax in axes[:-1]:
                    z = _fit(z, ax, in_shape[ax])
            return (finalize(z, a),) + rest

        return y, c2r_pullback

    c2r_rrule.__name__ = f"{name}_rrule"
    return c2r_rrule


def _hfft_rrule(a, *args, **kwargs):
    # hfft(a) = irfft(conj(a)) with the opposite normalization.
    y = F.hfft(a, *args, **kwargs)
    p = bind(args, kwargs, ("n", "axis", "norm", "out"), (None, -1, None, None), name="np.fft.hfft")
    axis = p["axis"] % max(np.ndim(a), 1)
    n = np.shape(y)[axis]
    m = np.shape(a)[axis]
    rest = (NO_TANGENT,) * len(args)

    def hfft_pullback(dy):
        if dy is ZERO:
            return zeros_for((a,)) + rest
        xbar = np.asarray(densify(dy))
        z = _irfft_last_adjoint(xbar, axis, n, m, _SWAP[_SWAP[p["norm"]]])
        return (finalize(np.conj(z), a),) + rest

    return y, hfft_pullback


def _ihfft_rrule(a, *args, **kwargs):
    # ihfft(a) = conj(rfft(a)) with the opposite normalization.
    y = F.ihfft(a, *args, **kwargs)
    p = bind(
        args, kwargs, ("n", "axis", "norm", "out"), (None, -1, None, None), name="np.fft.ihfft"
    )
    axis = p["axis"] % max(np.ndim(a), 1)
    n = np.shape(a)[axis] if p["n"] is None else int(p["n"])
    in_len = np.shape(a)[axis]
    rest = (NO_TANGENT,) * len(args)

    def ihfft_pullback(dy):
        if dy is ZERO:
            return zeros_for((a,)) + rest
        g = np.conj(np.asarray(densify(dy)))
        z = _rfft_adjoint(g, [axis], [n], _SWAP[_SWAP[p["norm"]]])
        return (finalize(_fit(z, axis, in_len), a),) + rest

    return y, ihfft_pullback


def _shift_rule(fn, inverse):
    def shift_rrule(x, *args, **kwargs):
        y = fn(x, *args, **kwargs)
        axes = bind(args, kwargs, ("axes",), (None,), name=f"np.fft.{fn.__name__}")["axes"]

        def shift_pullback(dy):
            if dy is ZERO:
                return zeros_for((x,)) + (NO_TANGENT,) * len(args)
            return (finalize(inverse(densify(dy), axes), x),) + (NO_TANGENT,) * len(args)

        return y, shift_pullback

    shift_rrule.__name__ = f"{fn.__name__}_rrule"
    return shift_rrule


def register(reg):
    r = Registrar(reg, FAMILY)
    r.rule(F.fft, _c2c_rule(F.fft, lambda g, s, axes, norm: F.ifft(g, s[0], axes[0], norm), False))
    r.rule(F.ifft, _c2c_rule(F.ifft, lambda g, s, axes, norm: F.fft(g, s[0], axes[0], norm), False))
    r.rule(F.fft2, _c2c_rule(F.fft2, F.ifftn, True))
    r.rule(F.ifft2, _c2c_rule(F.ifft2, F.fftn, True))
    r.rule(F.fftn, _c2c_rule(F.fftn, F.ifftn, True))
    r.rule(F.ifftn, _c2c_rule(F.ifftn, F.fftn, True))
    r.rule(F.rfft, _r2c_rule(F.rfft, False))
    r.rule(F.rfft2, _r2c_rule(F.rfft2, True))
    r.rule(F.rfftn, _r2c_rule(F.rfftn, True))
    r.rule(F.irfft, _c2r_rule(F.irfft, False))
    r.rule(F.irfft2, _c2r_rule(F.irfft2, True))
    r.rule(F.irfftn, _c2r_rule(F.irfftn, True))
    r.rule(F.hfft, _hfft_rrule)
    r.rule(F.ihfft, _ihfft_rrule)
    r.rule(F.fftshift, _shift_rule(F.fftshift, F.ifftshift))
    r.rule(F.ifftshift, _shift_rule(F.ifftshift, F.fftshift))
    r.nondiff(
        F.fftfreq,
        F.rfftfreq,
        names=["numpy.fft.fftfreq", "numpy.fft.rfftfreq"],
        notes="frequencies depend only on sizes",
    )
    # Their pullbacks as transformable functions (second derivatives).
    from .fft_pullbacks import register_pullbacks

    register_pullbacks(reg, FAMILY)
