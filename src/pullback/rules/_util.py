"""Small helpers shared by the rule families.

A family module defines ``FAMILY`` and ``register(reg)``; inside, a :class:`Registrar`
registers its entries with the family name, marks them trusted and gives them readable
names. The cotangent helpers here implement the conventions every rule follows:

* a cotangent has the shape and floating dtype of its argument (:func:`finalize`);
* a real argument gets a real cotangent even when the computation went through complex
  numbers; a complex argument ``z = a + ib`` gets ``dL/da + i dL/db``, so that a
  holomorphic ``f`` pulls ``dy`` back to ``conj(f'(z)) * dy``;
* arguments without a tangent (ints, bools, axes, flags, dtypes) get ``NO_TANGENT``;
* a symbolic ``ZERO`` cotangent in gives ``ZERO`` cotangents out.
"""

from __future__ import annotations

import math

import numpy as np

from ..backends import as_array, keys_like
from ..errors import UnsupportedCallError
from ..refused import Refused
from ..tangents import (
    NO_TANGENT,
    ZERO,
    densify,
    is_differentiable_value,
    unbroadcast,
    user_object_refusal,
)
from ..zero_safe import zero_safe_product

# The subscript letters of einsum (``string.ascii_letters``, spelled out: importing
# ``string`` compiles its Template pattern, half a millisecond of every cold start).
EINSUM_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

__all__ = [
    "NO_TANGENT",
    "as_array",
    "ZERO",
    "Registrar",
    "conj",
    "densify",
    "differentiable",
    "dy_parts",
    "expand_reduced",
    "finalize",
    "finalize_like",
    "no_tangents",
    "normalize_axis",
    "position_labels",
    "axes_last",
    "refuse_integer_dtype",
    "refuse_out",
    "cotangents_from_labels",
    "unbroadcast",
    "zeros_for",
]

_SEQUENCES = (list, tuple)


def differentiable(x) -> bool:
    """True when ``x`` can carry a tangent: a float or complex scalar or array, or a
    list, tuple or dict holding at least one such value."""
    if type(x) in _SEQUENCES:
        return any(differentiable(v) for v in x)
    if type(x) is dict:
        return any(differentiable(v) for v in x.values())
    return is_differentiable_value(x)


def conj(x):
    """``np.conj(x)`` for complex values; real values are returned as they are."""
    if np.iscomplexobj(x):
        return np.conj(x)
    return x


def finalize(g, x):
    """The cotangent ``g`` made to fit the primal argument ``x``.

    Dense (no :class:`~pullback.tangents.IndexedCotangent`), real when ``x`` is real,
    summed over the axes broadcasting added, in ``x``'s floating dtype. A list or tuple
    ``x`` (an ``array_like`` argument) gets a list or tuple of cotangents, one per element.
    ``NO_TANGENT`` when ``x`` has no tangent, ``ZERO`` stays ``ZERO``, a :class:`Refused`
    stays refused (it raises where a value is needed, not here).
    """
    if g is ZERO or g is NO_TANGENT:
        return g
    if type(g) is Refused:
        return g.placed() if differentiable(x) else NO_TANGENT
    if type(x) in _SEQUENCES:
        if not differentiable(x):
            return NO_TANGENT
        g = as_array(densify(g))
        g = unbroadcast(g, np.empty(np.shape(x), dtype=g.dtype))
        return type(x)(finalize(g[k], v) for k, v in enumerate(x))
    if not is_differentiable_value(x):
        return NO_TANGENT
    g = densify(g)
    if not np.iscomplexobj(x) and np.iscomplexobj(g):
        g = np.real(g)
    return unbroadcast(g, x)


def finalize_like(g, x):
    """Like :func:`finalize`, for a ``g`` that has ``x``'s number of elements but maybe
    another shape (a reshaped or flattened cotangent)."""
    if g is ZERO or g is NO_TANGENT or type(g) is Refused:
        return finalize(g, x)
    if type(x) in _SEQUENCES or is_differentiable_value(x):
        return finalize(np.reshape(densify(g), np.shape(x)), x)
    return NO_TANGENT


def no_tangents(n: int) -> tuple:
    """``n`` times ``NO_TANGENT``, for the trailing positional arguments of a rule."""
    return (NO_TANGENT,) * n


def zeros_for(args) -> tuple:
    """The cotangents of ``args`` for a ``ZERO`` output cotangent."""
    return tuple(ZERO if differentiable(a) else NO_TANGENT for a in args)


def dy_parts(dy, n: int) -> tuple:
    """The ``n`` components of the cotangent of a tuple output (``ZERO`` gives n ZEROs)."""
    if dy is ZERO or dy is NO_TANGENT:
        return (ZERO,) * n
    return tuple(ZERO if d is NO_TANGENT or d is None else d for d in dy)


def normalize_axis(axis, ndim):
    """``axis`` as a sorted tuple of non-negative ints (``None`` means every axis)."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)):
        axis = (int(axis),)
    return tuple(sorted(a % ndim if ndim else 0 for a in axis))


def expand_reduced(g, shape, axis, keepdims):
    """Broadcast the cotangent of a reduction back to the shape of its input."""
    g = as_array(densify(g))
    if not keepdims:
        for a in normalize_axis(axis, len(shape)):
            g = np.expand_dims(g, a)
    return np.broadcast_to(g, shape)


def bind(args, kwargs, names, defaults, *, name=None, known=()):
    """The values of a NumPy function's optional parameters, given positionally or by name.

    Strict, so that an option a rule does not know cannot silently change the value or
    the derivative: a keyword outside ``names`` and ``known``, or more positional options
    than ``names``, raises :class:`UnsupportedCallError`. ``known`` declares the keywords
    the rule reads itself or knowingly ignores (value-only ones: ``dtype``, ``casting``,
    ``subok``...). ``name`` is the function's name for the message.

    >>> bind((0,), {"keepdims": True}, ("axis", "keepdims"), (None, False))
    {'axis': 0, 'keepdims': True}
    >>> bind((), {"where": True}, ("axis",), (None,), name="np.nansum")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pullback.errors.UnsupportedCallError: pullback: np.nansum(..., where=) has no rule ...
    """
    out = dict(zip(names, defaults, strict=True))
    fname = name or "this function"
    if len(args) > len(names):
        raise UnsupportedCallError(
            f"pullback: {fname} got {len(args)} positional options and its rule reads only "
            f"{len(names)} ({', '.join(names) or 'none'}); fix: pass the others by keyword"
        )
    for key in kwargs:
        if key not in names and key not in known:
            raise UnsupportedCallError(
                f"pullback: {fname}(..., {key}=) has no rule for this keyword; fix: drop "
                f"{key}= (or apply it to the input yourself, e.g. with np.where)"
            )
    for key, value in zip(names, args, strict=False):
        out[key] = value
    for key in names:
        if key in kwargs:
            out[key] = kwargs[key]
    return out


def choice_picks(a, n, mode):
    """Which of the ``n`` choices each element of ``np.choose(a, choices, mode=mode)``
    takes: ``a`` wrapped or clipped as ``mode`` says (``"raise"`` has already checked it)."""
    picks = np.asarray(a)
    if mode == "wrap":
        return np.mod(picks, n)
    if mode == "clip":
        return np.clip(picks, 0, n - 1)
    return picks


class Registrar:
    """Registers one family's entries: trusted, with the family name and readable names."""

    def __init__(self, reg, family: str):
        self.reg = reg
        self.family = family

    def rule(self, fn, rrule, name=None, notes=""):
        """Register ``rrule`` (returning ``(y, pullback)``) for ``fn``."""
        rule = self.reg.register(fn, rrule, family=self.family, trusted=True, name=name)
        rule.notes = notes
        return rule

    def scalar(self, fn, *derivatives, holomorphic=True, singular=False, name=None, notes=""):
        """Register an elementwise ``fn`` from its partial derivatives ``d(y, *args)``.

        The derivatives are what the code generator inlines for real scalars. The rule
        itself also handles complex values: for a ``holomorphic`` function the partial
        derivative is conjugated (``dz = conj(f'(z)) * dy``); a non-holomorphic one
        (``abs``) gives its cotangent factor directly. Arguments without a tangent get
        ``NO_TANGENT`` and are never differentiated. A ``singular`` derivative may be
        infinite or NaN where the function is finite (``sqrt`` at 0): its product with a
        cotangent is zero-safe (pullback.zero_safe), in the rule and in generated code.
        """
        rule = self.reg.scalar_rule(fn, *derivatives, family=self.family, trusted=True)
        rule.rrule = _elementwise_rrule(fn, tuple(derivatives), holomorphic, singular)
        if singular:
            rule.extra["singular"] = True
        if name:
            rule.name = name
        rule.notes = notes
        rule.extra["holomorphic"] = holomorphic
        return rule

    def nondiff(self, *fns, names=None, notes=""):
        """Declare ``fns`` non-differentiable (``names`` optionally gives their names)."""
        self.reg.non_differentiable(*fns, family=self.family, trusted=True, notes=notes)
        if names is not None:
            for fn, name in zip(fns, names, strict=True):
                self.reg.lookup(fn).name = name


def refuse_user_objects(what, *args) -> None:
    """Refuse ``what(*args)`` when an argument is an object of a user's class (see
    :func:`~pullback.tangents.user_object_refusal`): the function ran the object's own
    method, which no rule's derivative describes. Non-differentiable (a check)."""
    for a in args:
        error = user_object_refusal(what, a)
        if error is not None:
            raise error


def _elementwise_rrule(fn, derivatives, holomorphic, singular=False):
    fname = getattr(fn, "__name__", "elementwise")

    def elementwise_rrule(*args, **kwargs):
        refuse_user_objects(fname, *args)  # (abs(v) ran v's own __abs__)
        y = fn(*args, **kwargs)

        def elementwise_pullback(dy):
            if dy is ZERO:
                return zeros_for(args)
            dy = densify(dy)
            values = tuple(as_array(a) if type(a) in _SEQUENCES else a for a in args)
            out = []
            for k, arg in enumerate(args):
                d = derivatives[k] if k < len(derivatives) else None
                if not differentiable(arg):
                    out.append(NO_TANGENT)
                    continue
                if d is None:  # a float argument the function does not vary with
                    out.append(ZERO)
                    continue
                partial = d(y, *values)
                if holomorphic:
                    partial = conj(partial)
                if singular:  # (0 * inf: 0 where the cotangent is 0, zero_safe.py)
                    out.append(finalize(zero_safe_product(dy, partial), arg))
                else:
                    out.append(finalize(dy * partial, arg))
            return tuple(out)

        elementwise_pullback.__name__ = f"{fname}_pullback"
        return y, elementwise_pullback

    elementwise_rrule.__name__ = f"{fname}_rrule"
    return elementwise_rrule


def segment_sum(values, ids, n):
    """``out[k] = sum(values[j] for j where ids[j] == k)`` along the first axis of
    ``values``, for ``k < n`` (the adjoint of ``values = out[ids]``).

    Written with ``np.bincount`` (which has a rule), so it stays differentiable.
    """
    values = as_array(values)
    ids = np.ravel(as_array(ids))
    rest = values.shape[1:]
    width = 1
    for m in rest:
        width *= m
    if width == 0 or n == 0 or ids.shape[0] == 0:
        return np.zeros((n,) + rest, dtype=np.result_type(values.dtype, np.float64))
    flat = np.reshape(values, (ids.shape[0], width))
    keys = keys_like(np.ravel(ids[:, None] * width + np.arange(width)), flat)
    if np.iscomplexobj(values):
        re = np.bincount(keys, weights=np.ravel(np.real(flat)), minlength=n * width)
        im = np.bincount(keys, weights=np.ravel(np.imag(flat)), minlength=n * width)
        out = re + 1j * im
    else:
        out = np.bincount(keys, weights=np.ravel(flat), minlength=n * width)
    return np.reshape(out, (n,) + rest)


def position_labels(x, start):
    """``x`` replaced by complex labels ``1j * (start + k)`` for its elements (a Python
    complex for a scalar, an array of ``x``'s shape otherwise).

    Functions that only move and copy elements (``np.r_``, ``np.insert``) map labels to
    labels: running them on labels tells where each element went, without re-implementing
    their placement rules; values they make themselves are real (label 0).
    """
    labels = 1j * (start + np.arange(int(np.size(x)), dtype=np.float64))
    if np.ndim(x) == 0 and not isinstance(x, np.ndarray):
        return complex(labels[0])
    return np.reshape(labels, np.shape(x))


def cotangents_from_labels(ids, dy, parts):
    """The cotangent of each labelled input from the output cotangent ``dy`` and the
    output's labels ``ids``: ``parts`` is ``[(start, x), ...]`` as given to
    :func:`position_labels`; an element copied several times gets the sum."""
    g = np.ravel(as_array(densify(dy)))
    keys = np.ravel(np.rint(np.imag(ids)).astype(np.intp))
    n = 1 + max((start + int(np.size(x)) for start, x in parts), default=0)
    if np.iscomplexobj(g):
        flat = np.bincount(keys, np.real(g), n) + 1j * np.bincount(keys, np.imag(g), n)
    else:
        flat = np.bincount(keys, g, n)
    return [
        finalize(np.reshape(flat[start : start + int(np.size(x))], np.shape(x)), x)
        for start, x in parts
    ]


def axes_last(xa, axes):
    """``xa`` with ``axes`` moved last, the kept shape, and the moved axes flattened into
    one: ``(moved, lead, flat, last)``. The flattened length is computed, not ``-1``, so
    that zero-size arrays reshape too."""
    nd = xa.ndim
    last = tuple(range(nd - len(axes), nd))
    moved = np.moveaxis(xa, axes, last)
    lead = moved.shape[: nd - len(axes)]
    flat = np.reshape(moved, lead + (math.prod(moved.shape[nd - len(axes) :]),))
    return moved, lead, flat, last


def refuse_out(name, p):
    """Refuse ``out=`` (a rule never writes into its arguments)."""
    if p.get("out") is not None:
        raise UnsupportedCallError(
            f"pullback: {name}(..., out=...) writes into an array and cannot be "
            "differentiated; drop out= and use the returned value"
        )


def refuse_integer_dtype(name, p):
    """Refuse ``dtype=`` an integer or bool type: the data are rounded before they are
    reduced, so the value is piecewise constant and the rule's derivative would be wrong."""
    dtype = p.get("dtype")
    if dtype is not None and np.dtype(dtype).kind not in "fc":
        raise UnsupportedCallError(
            f"pullback: {name}(..., dtype={np.dtype(dtype).name}) rounds the data before "
            "reducing them and has no derivative; fix: drop dtype= and convert the result "
            "(or round the input explicitly, e.g. np.floor, if that is what is meant)"
        )
