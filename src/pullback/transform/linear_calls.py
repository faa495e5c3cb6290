"""Calls whose tangent is the call itself applied to the tangent (forward mode's shortcut).

A function linear in its first argument (``np.sum``, ``np.reshape``, ``np.fft.fft``...)
maps the tangent as it maps the value: ``d np.sum(x, 0) = np.sum(dx, 0)``. The tables
name them; the predicate says when a call is such a use: no offset added
(``np.sum(initial=)``, ``np.diff(prepend=)``). (A ``dtype`` that makes integer results
gives a zero tangent before this is asked: transform/integer_dtypes.py.)

>>> import numpy as np
>>> _linear(np.sum), _linear(np.exp)
(True, False)
"""

from __future__ import annotations

import sys

import numpy as np

from .. import where_masks

# Functions linear in their first argument (the others are shapes, axes, flags).
LINEAR = {
    np.sum,
    np.mean,
    np.transpose,
    np.reshape,
    np.ravel,
    np.squeeze,
    np.expand_dims,
    np.broadcast_to,
    np.cumsum,
    np.flip,
    np.roll,
    np.swapaxes,
    np.moveaxis,
    np.diagonal,
    np.trace,
    np.atleast_1d,
    np.atleast_2d,
    np.real,
    np.imag,
    np.conj,
    np.conjugate,
    np.negative,
    np.positive,
    np.diff,
    np.tile,
    np.repeat,
    where_masks.masked,  # (in a generated gradient: a np.where branch's contribution)
    where_masks.kept,  # (and a branch's value on a loop's tape: the identity)
}
# Arguments that add values to a LINEAR function's result (np.diff's prepend/append, by
# position or keyword; np.sum's initial): given, the function is affine in its first
# argument, and its tangent is no call of it on the tangent (the rule's is).
OFFSETS = {np.diff: (3, ("prepend", "append")), np.sum: (None, ("initial",))}


def _offset_given(fn, v) -> bool:
    found = next((o for f, o in OFFSETS.items() if f is fn), None)
    if found is None:
        return False
    position, names = found
    if position is not None and len(v.args) > position:
        return True
    return any(k.arg in names for k in v.keywords)


# numpy.fft's linear transforms, by name: naming them here would import numpy.fft with
# pullback; a function that calls one has loaded it (see _linear).
LINEAR_FFT = ("fft", "ifft", "rfft", "fft2", "ifft2")
# Functions linear in a list of arrays (their first argument).
LINEAR_IN_LIST = {np.concatenate, np.stack, np.hstack, np.vstack, np.column_stack}
# Functions bilinear in their first two arguments.
BILINEAR = {np.matmul, np.dot, np.outer, np.inner, np.kron, np.cross, np.multiply}


def _linear(fn) -> bool:
    """Whether ``fn`` is linear in its first argument (LINEAR or numpy.fft's LINEAR_FFT)."""
    if _member(fn, LINEAR):
        return True
    fft = sys.modules.get("numpy.fft")
    return fft is not None and any(fn is getattr(fft, name, None) for name in LINEAR_FFT)


def _member(fn, table) -> bool:
    try:
        return fn in table
    except TypeError:
        return False
