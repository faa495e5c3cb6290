"""The ``operator`` module: add, sub, mul, truediv, neg, pos, pow, matmul, abs, mod,
``itemgetter`` objects (a rule keyed by ``operator.itemgetter.__call__``, whose first
argument is the getter), and the non-differentiable ones (comparisons, floordiv, ...).
``operator.getitem`` is in numpy_indexing.

Each numeric function computes exactly what Python's operator computes (a Python float
stays a float) and takes its cotangents from the rule of the NumPy ufunc it agrees with.
``add`` of two lists or two tuples concatenates and ``mul`` of a sequence by an int
repeats: their pullbacks split or sum the cotangent over the copies.
"""

from __future__ import annotations

import operator

import numpy as np

from ..registry import SCALAR, transformable
from ..tangents import add as add_cotangents
from ._util import NO_TANGENT, ZERO, Registrar, densify, dy_parts, zeros_for
from .linalg_pullbacks import is_zero
from .numpy_indexing_pullbacks import scatter
from .transformable import by_rule

FAMILY = "operator"

_SEQ = (list, tuple)

# operator function -> the NumPy function whose rule gives its cotangents
NUMERIC = {
    operator.add: np.add,
    operator.sub: np.subtract,
    operator.mul: np.multiply,
    operator.truediv: np.divide,
    operator.pow: np.power,
    operator.mod: np.remainder,
    operator.matmul: np.matmul,
    operator.neg: np.negative,
    operator.pos: np.positive,
    operator.abs: np.absolute,
}

NONDIFF = (
    operator.floordiv,
    operator.lt,
    operator.le,
    operator.eq,
    operator.ne,
    operator.ge,
    operator.gt,
    operator.not_,
    operator.truth,
    operator.is_,
    operator.is_not,
    operator.contains,
    operator.index,
    operator.length_hint,
    operator.and_,
    operator.or_,
    operator.xor,
    operator.invert,
    operator.lshift,
    operator.rshift,
    operator.countOf,
    operator.indexOf,
    operator.itemgetter,
    operator.attrgetter,
)


def _numeric_rule(op, ufunc_rule):
    def operator_rrule(*args):
        y = op(*args)
        if len(args) == 2 and (type(args[0]) in _SEQ or type(args[1]) in _SEQ):
            return y, _sequence_pullback(op, args, y)
        _, back = ufunc_rule.rrule(*args)
        return y, back

    operator_rrule.__name__ = f"{op.__name__}_rrule"
    return operator_rrule


def _sequence_pullback(op, args, y):
    """``a + b`` of two lists/tuples (concatenation) or ``seq * n`` (repetition)."""
    a, b = args
    if op is operator.add:

        def concatenation_pullback(dy):
            if dy is ZERO:
                return zeros_for(args)
            parts = list(dy_parts(dy, len(y)))
            return type(a)(parts[: len(a)]), type(b)(parts[len(a) :])

        return concatenation_pullback
    seq, at = (a, 0) if type(a) in _SEQ else (b, 1)

    def repetition_pullback(dy):
        if dy is ZERO:
            return zeros_for(args)
        parts = dy_parts(dy, len(y))
        total = [ZERO] * len(seq)
        for k, part in enumerate(parts):
            total[k % len(seq)] = add_cotangents(total[k % len(seq)], part)
        out = [NO_TANGENT, NO_TANGENT]
        out[at] = type(seq)(total)
        return tuple(out)

    return repetition_pullback


def _itemgetter_rule(getitem_rule):
    """The rule of ``getter(obj)``: each of the getter's items read as ``obj[item]``."""

    def itemgetter_call_rrule(getter, obj):
        y = getter(obj)
        _, keys = getter.__reduce__()

        def itemgetter_pullback(dy):
            if dy is ZERO:
                return (NO_TANGENT,) + zeros_for((obj,))
            parts = (dy,) if len(keys) == 1 else dy_parts(dy, len(keys))
            total = ZERO
            for key, part in zip(keys, parts, strict=True):
                if part is not ZERO:
                    cot = getitem_rule.rrule(obj, key)[1](part)[0]
                    total = add_cotangents(total, cot)
            return (NO_TANGENT, total)

        return y, itemgetter_pullback

    return itemgetter_call_rrule


def getter_items(getter):
    """The items an ``operator.itemgetter`` reads."""
    return getter.__reduce__()[1]


# Reads the getter (no float in it): transformed code calls it as it is.
getter_items.__pullback_opaque__ = True


@transformable
def itemgetter_pullback(dy, getter, obj):
    """The cotangent of an array ``obj`` read by ``getter(obj)`` (every item as
    ``obj[item]``, the cotangents of items read twice summed); other containers: the
    rule's closure."""
    if isinstance(obj, (list, tuple, dict)):
        return by_rule(operator.itemgetter.__call__, dy, getter, obj)
    items = getter_items(getter)
    parts = (dy,) if len(items) == 1 else dy
    total = np.zeros(np.shape(obj), np.result_type(obj, 1.0))
    for k in range(len(items)):
        if not is_zero(parts[k]):
            total = total + scatter(densify(parts[k]), obj, items[k])
    return NO_TANGENT, total


def register(reg):
    r = Registrar(reg, FAMILY)
    for op, ufunc in NUMERIC.items():
        ufunc_rule = reg.lookup(ufunc)
        name = f"operator.{op.__name__}"
        if ufunc_rule.kind == SCALAR:
            # elementwise: the ufunc's partial derivatives serve for inlining and for
            # second derivatives; the rule itself also handles list/tuple operands.
            holomorphic = ufunc_rule.extra.get("holomorphic", True)
            rule = r.scalar(op, *ufunc_rule.derivatives, holomorphic=holomorphic, name=name)
            rule.rrule = _numeric_rule(op, ufunc_rule)
        else:
            r.rule(op, _numeric_rule(op, ufunc_rule), name=name)
            if ufunc_rule.pullback_fn is not None:
                reg.set_pullback_function(op, ufunc_rule.pullback_fn)
    r.rule(
        operator.itemgetter.__call__,
        _itemgetter_rule(reg.lookup(operator.getitem)),
        name="operator.itemgetter.__call__",
        notes="the getter's items, as operator.getitem",
    )
    reg.set_pullback_function(operator.itemgetter.__call__, itemgetter_pullback)
    r.nondiff(*NONDIFF, names=[f"operator.{f.__name__}" for f in NONDIFF])
