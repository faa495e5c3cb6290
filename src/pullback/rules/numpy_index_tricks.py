"""The index-trick objects: ``np.r_[...]`` and ``np.c_[...]`` (differentiable),
``np.s_[...]`` and ``np.index_exp[...]`` (index expressions: no gradient).

The engine turns a subscript of such an object into a call of its bound ``__getitem__``
with one argument, the key; these rules are keyed by those bound methods (a bound method
compares and hashes equal across attribute reads).

``np.r_``/``np.c_`` concatenate their items (arrays, scalars, ranges written as slices,
after a string directive such as ``'0,2'``, ``'r'`` or ``'c'``). Whatever the directive,
the result is a linear function of the array and scalar items in which each of their
elements appears once. Rather than re-implementing NumPy's placement rules, the rule asks
NumPy itself where each element goes: it evaluates the same key with every
differentiable item replaced by complex labels (``_util.position_labels``) and every other
item left as it is (their values are real, so their label is 0). The cotangent of an item is
then the output cotangent read at its labels. Slices with non-integer bounds (their
values depend on floats the rule cannot differentiate through) are refused.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..errors import UnsupportedCallError
from ..registry import transformable
from ._util import (
    NO_TANGENT,
    ZERO,
    Registrar,
    cotangents_from_labels,
    differentiable,
    position_labels,
)
from .numpy_assemble_pullbacks import gather_labelled, labelled_part

FAMILY = "numpy_index_tricks"


def _integer(bound) -> bool:
    return bound is None or (isinstance(bound, numbers.Integral) and not isinstance(bound, bool))


def _check_slice(s, name):
    """A range item must have integer bounds (its values are then constants); the step
    may be an integer or a complex number of points (``0:1:5j``)."""
    step_ok = _integer(s.step) or isinstance(s.step, (complex, np.complexfloating))
    if not (_integer(s.start) and _integer(s.stop) and step_ok):
        raise UnsupportedCallError(
            f"pullback: np.{name}[...] with the range {s.start}:{s.stop}:{s.step} (non-integer "
            "bounds) has no rule; fix: write the range as an item, e.g. "
            "np.linspace(start, stop, num) or np.arange(start, stop, step)"
        )


def _labelled(items, name):
    """The items with each differentiable one replaced by position labels, and
    ``(index in items, first label, item)`` for each of those."""
    out, where, start = [], [], 1
    for k, item in enumerate(items):
        if isinstance(item, slice):
            _check_slice(item, name)
        if isinstance(item, (slice, str)) or not differentiable(item):
            out.append(item)
            continue
        out.append(position_labels(item, start))
        where.append((k, start, item))
        start += int(np.size(item))
    return out, where


def _concatenator_rule(obj, name):
    def concatenator_rrule(key):
        y = obj[key]
        single = not isinstance(key, tuple)
        items = (key,) if single else key
        labelled, where = _labelled(items, name)
        ids = obj[labelled[0] if single else tuple(labelled)] if where else None

        def concatenator_pullback(dy):
            if dy is ZERO or not where:
                return (ZERO if differentiable(key) else NO_TANGENT,)
            found = cotangents_from_labels(ids, dy, [(start, item) for _, start, item in where])
            cots = [NO_TANGENT] * len(items)
            for (k, _, _), c in zip(where, found, strict=True):
                cots[k] = c
            return (cots[0] if single else tuple(cots),)

        concatenator_pullback.__name__ = f"{name}_getitem_pullback"
        return y, concatenator_pullback

    concatenator_rrule.__name__ = f"{name}_getitem_rrule"
    return concatenator_rrule


def concatenator_labels(obj, name, items):
    """The labels of ``obj[items]`` with its differentiable items labelled (flat), their
    count, and each item's first label (0 for the items without a cotangent)."""
    labelled, where = _labelled(items, name)
    starts = [0] * len(items)
    for k, start, _ in where:
        starts[k] = start
    ids = obj[tuple(labelled)] if where else np.zeros(0)
    keys = np.ravel(np.rint(np.imag(ids)).astype(np.intp))
    return keys, 1 + sum(int(np.size(item)) for _, _, item in where), tuple(starts)


@transformable
def concatenator_cotangent(dy, obj, name, key):
    """The cotangent of the key of ``obj[key]`` (``np.r_``, ``np.c_``): one per item, none
    for directives, ranges and integer items."""
    single = not isinstance(key, tuple)
    items = (key,) if single else key
    keys, n, starts = concatenator_labels(obj, name, items)
    flat = gather_labelled(dy, keys, n)
    cots = ()
    for k in range(len(items)):
        if starts[k] == 0:
            cots = cots + (NO_TANGENT,)
        else:
            cots = cots + (labelled_part(flat, starts[k], items[k]),)
    return (cots[0] if single else cots,)


@transformable
def r_getitem_pullback(dy, key):
    return concatenator_cotangent(dy, np.r_, "r_", key)


@transformable
def c_getitem_pullback(dy, key):
    return concatenator_cotangent(dy, np.c_, "c_", key)


def register(reg):
    r = Registrar(reg, FAMILY)
    for obj, name, pullback_fn in (
        (np.r_, "r_", r_getitem_pullback),
        (np.c_, "c_", c_getitem_pullback),
    ):
        r.rule(
            obj.__getitem__,
            _concatenator_rule(obj, name),
            name=f"numpy.{name}.__getitem__",
            notes="integer-bounded ranges only",
        )
        reg.set_pullback_function(obj.__getitem__, pullback_fn)
    # integer bookkeeping of the pullback functions: no gradient flows through it
    r.nondiff(
        concatenator_labels,
        names=["pullback.rules.numpy_index_tricks.concatenator_labels"],
        notes="labels of np.r_/np.c_ items (integers)",
    )
    r.nondiff(
        np.s_.__getitem__,
        np.index_exp.__getitem__,
        names=["numpy.s_.__getitem__", "numpy.index_exp.__getitem__"],
        notes="an index expression",
    )
