"""The callees star-calls run themselves (star_runtime.py): ``zip(*rows)``,
``sorted(xs, key=...)``, a dict display ``{**a, **b}`` (:func:`merge_dicts`) and a
lambda key bound to local values (:func:`bind_front`). Each is a permutation of its
items (or carries no gradient): its rule sends each cotangent back to where its item came
from, and its tangent is the same permutation of the tangents.

>>> merge_dicts({"a": 1.0}, {"b": 2.0, "a": 3.0})
{'a': 3.0, 'b': 2.0}
"""

from __future__ import annotations

import functools

import numpy as np

from .tangents import NO_TANGENT, ZERO, densify, is_zero


def _like(parts, seq):
    """Cotangents of the items of ``seq`` as the cotangent of ``seq``: a tuple, a list, or
    (for an array, iterated over its first axis) an array of rows."""
    if isinstance(seq, np.ndarray):
        out = np.zeros(seq.shape, dtype=seq.dtype if seq.dtype.kind in "fc" else float)
        for k, p in enumerate(parts):
            if not is_zero(p):
                out[k] = densify(p)
        return out
    return tuple(parts) if isinstance(seq, tuple) else list(parts)


def _zip_rrule(args, kwargs):
    """``zip(*seqs)`` as the list it yields: a transpose, whose pullback transposes back."""
    lengths = [len(s) for s in args]
    y = list(zip(*args, strict=bool(kwargs.get("strict", False))))

    def zip_pullback(g):
        if is_zero(g):
            return tuple(ZERO for _ in args)
        n = len(y)
        cols = []
        for j, length in enumerate(lengths):
            col = [g[i][j] if not is_zero(g[i]) else ZERO for i in range(n)]
            col += [ZERO] * (length - n)
            cols.append(_like(col, args[j]))
        return tuple(cols)

    return y, zip_pullback


def bind_front(fn, *values):
    """``fn`` with its first parameters bound to ``values``: a lambda key that captures
    local values (transform/higher_order_builtins.py). It chooses, so it carries no
    gradient."""
    return functools.partial(fn, *values)


def _sort_order(items, key, reverse) -> list[int]:
    """Where each item of ``sorted(items, key=key, reverse=reverse)`` came from."""
    chosen = items.__getitem__ if key is None else (lambda i: key(items[i]))
    return sorted(range(len(items)), key=chosen, reverse=reverse)


def _sorted_rrule(iterable, key=None, reverse=False):
    """``sorted`` as a permutation of its items: the pullback sends each cotangent back to
    the item that landed there (the key and its values carry no gradient)."""
    items = list(iterable)
    order = _sort_order(items, key, reverse)
    y = [items[i] for i in order]

    def sorted_pullback(g):
        if is_zero(g):
            return (ZERO,)
        back = [ZERO] * len(items)
        for pos, i in enumerate(order):
            back[i] = g[pos]
        return (_like(back, iterable),)

    return y, sorted_pullback


def merged_keywords(keywords, mappings) -> dict:
    """``{**keywords, **mapping...}`` of a call's keyword arguments: a key given twice is
    Python's own TypeError for ``f(k=1, **{"k": 2})``."""
    out = dict(keywords)
    for m in mappings:
        for key, value in m.items():
            if key in out:
                raise TypeError(f"got multiple values for keyword argument {key!r}")
            out[key] = value
    return out


def merge_dicts(*dicts):
    """``{**a, **b, ...}``: later keys win, as in a dict display."""
    out = {}
    for d in dicts:
        out.update(d)
    return out


def _merge_rrule(dicts):
    y = merge_dicts(*dicts)
    # The cotangent of each key goes to the dict whose value the display kept.
    owner = {}
    for k, d in enumerate(dicts):
        for key in d:
            owner[key] = k

    def merge_pullback(g):
        parts = [{} for _ in dicts]
        if not is_zero(g):
            for key, c in g.items():
                parts[owner[key]][key] = c
        return tuple(p if p else ZERO for p in parts)

    return y, merge_pullback


def _own_rrule(fn, args, kwargs):
    """``(y, pullback)`` for the callees star-calls handle themselves, or None."""
    if fn is merge_dicts and not kwargs:
        return _merge_rrule(args)
    if fn is zip and set(kwargs) <= {"strict"}:
        y, pb = _zip_rrule(args, kwargs)
        return y, pb
    if fn is sorted and set(kwargs) <= {"key", "reverse"} and len(args) == 1:
        y, pb = _sorted_rrule(args[0], **kwargs)
        return y, pb
    if fn is bind_front:
        return bind_front(*args), lambda g: tuple(NO_TANGENT for _ in args)
    return None


def _tangent_items(d, keys):
    if is_zero(d) or d is None:
        return [ZERO] * len(keys)
    return [d.get(k, ZERO) for k in keys]


def _permuted_tangent(fn, args, dargs, kwargs):
    """The tangent of ``zip``/``sorted``: the same permutation applied to the tangents."""
    if fn is zip:
        seqs = [[ZERO] * len(a) if is_zero(d) else d for a, d in zip(args, dargs, strict=True)]
        return list(zip(*seqs, strict=False))
    if fn is merge_dicts:
        out = {}
        for d, dd in zip(args, dargs, strict=True):
            out.update(zip(d, _tangent_items(dd, list(d)), strict=True))
        return out
    items = list(args[0])
    d = [ZERO] * len(items) if is_zero(dargs[0]) else list(dargs[0])
    order = _sort_order(items, kwargs.get("key"), kwargs.get("reverse", False))
    return [d[i] for i in order]
