"""The arguments of a differentiated call: which parameters ``wrt`` names, their values,
what can be differentiated, and the kinds an adjoint is specialized on.

>>> def f(w, x, scale=1.0):
...     return scale * w * x
>>> resolve_wrt(f, (0, "scale"))
(('w', 'scale'), False)
"""

from __future__ import annotations

import inspect

import numpy as np

from . import backends
from .callables import as_bound_call
from .errors import ArgumentError, NotDifferentiableError, describe
from .tangents import is_differentiable_value
from .transform.kinds import kind_of


def kinds_key(args, kwargs):
    """What the adjoint is specialized on: the kinds (scalar, array rank) of the arguments."""
    pos = tuple(kind_of(a) for a in args)
    if None in pos:  # containers, objects, complex or subclassed arrays: the slow path
        for a in args:
            refuse_array_subclass(a)
    if not kwargs:
        return pos, ()
    for v in kwargs.values():
        refuse_array_subclass(v)
    return pos, tuple(sorted((k, kind_of(v)) for k, v in kwargs.items()))


_ndarray = np.ndarray
_float64 = np.float64


def fast_kinds(args):
    """A cheap key for positional arguments that are all floats, ints or real NumPy arrays
    (``float``, ``int``, ``np.float64`` or ``(ndim, dtype kind)`` each): it decides the
    kinds the adjoint is specialized on, and which arguments are float. ``None`` for
    anything else."""
    key = []
    for a in args:
        t = type(a)
        if t is float or t is int or t is _float64:
            key.append(t)
        elif t is _ndarray and a.dtype.kind in "fiub":
            key.append((a.ndim, a.dtype.kind))
        else:
            return None
    return tuple(key)


# ndarray subclasses whose arithmetic is NumPy's own (np.matrix's `*` is matmul, and the
# rules follow the operators as they run).
_PLAIN_ARRAY_TYPES = (np.ndarray, np.matrix, np.memmap)


def refuse_array_subclass(value, name=None):
    """Refuse an argument (or a leaf of one) that is an ndarray subclass with semantics of
    its own: a masked array's mask would be ignored by the gradient while the primal
    honours it."""
    for leaf in _leaves(value):
        if isinstance(leaf, np.ndarray) and type(leaf) not in _PLAIN_ARRAY_TYPES:
            what = f"'{name}' is" if name else "an argument is"
            if isinstance(leaf, np.ma.MaskedArray):
                raise NotDifferentiableError(
                    f"{what} a numpy.ma.MaskedArray: NumPy honours its mask, but "
                    "pullback's gradients follow plain arrays and would ignore it.\n"
                    "Fix: pass the data and the mask as plain arrays and apply the mask in "
                    "the function, e.g. `np.where(mask, 0.0, x.data)` or `x.filled(0.0)`."
                )
            raise NotDifferentiableError(
                f"{what} a {type(leaf).__module__}.{type(leaf).__name__}, an ndarray "
                "subclass whose operations may differ from NumPy's; pullback's rules "
                "follow plain NumPy arrays.\n"
                "Fix: pass np.asarray(...) of it."
            )


def _signature(fn):
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def _param_names(fn) -> list[str]:
    sig = _signature(fn)
    if sig is None:
        return []
    return [
        p.name for p in sig.parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]


def resolve_wrt(fn, wrt) -> tuple[tuple[str, ...], bool]:
    """``wrt`` (index, name or tuple of them) as parameter names; and whether it was single."""
    names = _param_names(fn)
    sig = _signature(fn)
    if sig is not None and any(
        p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in sig.parameters.values()
    ):
        # *args/**kwargs are outside the subset: say so (PB410) rather than "no parameter".
        from .check import raise_if_unsupported

        call = as_bound_call(fn)
        raise_if_unsupported(fn if call is None else call.target)
    single = not isinstance(wrt, (tuple, list))
    items = [wrt] if single else list(wrt)
    if not items:
        raise ArgumentError(
            "wrt=() asks for no gradient; give at least one argument index or name."
        )
    out = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, str, np.integer)):
            raise ArgumentError(
                f"wrt={wrt!r}: each entry must be an argument index or a parameter name, "
                f"not {type(item).__name__}."
            )
        if isinstance(item, str):
            if item not in names:
                raise ArgumentError(
                    f"wrt={item!r} names no parameter of '{_name(fn)}'; its parameters are "
                    f"{', '.join(names) or '(none)'}."
                )
            out.append(item)
        else:
            k = int(item)
            if not -len(names) <= k < len(names):
                raise ArgumentError(
                    f"wrt={item} is out of range: '{_name(fn)}' has {len(names)} parameter"
                    f"{'' if len(names) == 1 else 's'} ({', '.join(names) or 'none'})."
                )
            out.append(names[k])
    if len(set(out)) != len(out):
        raise ArgumentError(f"wrt={wrt!r} names the same parameter twice.")
    return tuple(out), single


def _name(fn) -> str:
    name = getattr(fn, "__name__", None)
    return name if isinstance(name, str) else describe(fn)


def _bound_values(fn, args, kwargs, names):
    sig = _signature(fn)
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as exc:
        raise ArgumentError(f"cannot call '{_name(fn)}' with these arguments: {exc}") from None
    bound.apply_defaults()
    return [bound.arguments[n] for n in names]


def _positional_indices(fn, names):
    """Where each parameter in ``names`` stands among the positional parameters, or None."""
    sig = _signature(fn)
    if sig is None:
        return None
    positional = [
        p.name
        for p in sig.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    if any(n not in positional for n in names):
        return None
    return [positional.index(n) for n in names]


def _check_differentiable(fn, name, value):
    """Refuse an argument with nothing to differentiate (an int, a bool, a string)."""
    t = type(value)
    if t is float or (t is np.ndarray and value.dtype.kind in "fc"):
        return
    refuse_array_subclass(value, name)
    leaves = list(_leaves(value))
    if any(is_differentiable_value(v) for v in leaves):
        return
    kind = type(value).__name__
    if isinstance(value, (np.ndarray, np.generic)):
        kind = f"{kind} of dtype {value.dtype}"
    elif backends.is_foreign_array(value):
        kind = f"{type(value).__module__}.{kind} of dtype {value.dtype}"
    article = "an" if kind[0] in "aeiou" else "a"
    raise NotDifferentiableError(
        f"cannot differentiate '{_name(fn)}' with respect to '{name}': it is {article} {kind}, "
        "which has no gradient.\n"
        f"Fix: pass a floating-point value (e.g. float({name}) or "
        f"np.asarray({name}, dtype=float)), or leave '{name}' out of wrt."
    )


def _leaves(value):
    if isinstance(value, (tuple, list)):
        for v in value:
            yield from _leaves(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    else:
        yield value
