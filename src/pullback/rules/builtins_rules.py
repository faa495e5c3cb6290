"""Python builtins: abs, float, sum, min, max and the non-differentiable ones."""

from __future__ import annotations

import builtins

import numpy as np

from ._util import NO_TANGENT, ZERO

FAMILY = "builtins"


def _abs_derivative(y, x):
    return np.sign(x)


def _float_rrule(x):
    y = float(x)

    def float_pullback(dy):
        return (dy,)

    return y, float_pullback


def _sum_rrule(iterable, start=0):
    items = list(iterable)
    y = builtins.sum(items, start)

    def sum_pullback(dy):
        if dy is ZERO:
            return ZERO, NO_TANGENT
        g = [dy] * len(items)
        return (type(iterable)(g) if isinstance(iterable, (list, tuple)) else g), NO_TANGENT

    return y, sum_pullback


def _extreme_rrule(pick):
    def extreme_rrule(*args):
        items = list(args[0]) if len(args) == 1 else list(args)
        k = pick(range(len(items)), key=lambda i: items[i])
        y = items[k]

        def extreme_pullback(dy):
            g = [ZERO] * len(items)
            g[k] = dy
            if len(args) == 1:
                seq = args[0]
                return ((type(seq)(g) if isinstance(seq, (list, tuple)) else g),)
            return tuple(g)

        return y, extreme_pullback

    return extreme_rrule


def register(reg):
    reg.scalar_rule(builtins.abs, _abs_derivative, family=FAMILY, trusted=True)
    reg.register(builtins.float, _float_rrule, family=FAMILY, trusted=True)
    reg.register(builtins.sum, _sum_rrule, family=FAMILY, trusted=True)
    reg.register(builtins.max, _extreme_rrule(builtins.max), family=FAMILY, trusted=True)
    reg.register(builtins.min, _extreme_rrule(builtins.min), family=FAMILY, trusted=True)
    reg.non_differentiable(
        builtins.len,
        builtins.range,
        builtins.int,
        builtins.bool,
        builtins.round,
        builtins.isinstance,
        builtins.print,
        builtins.type,
        builtins.str,
        builtins.repr,
        builtins.format,
        builtins.id,
        builtins.hash,
        builtins.callable,
        builtins.any,
        builtins.all,
        family=FAMILY,
        trusted=True,
    )
