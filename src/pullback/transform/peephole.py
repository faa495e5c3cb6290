"""Clean-ups of a built reverse sweep that make it read like hand-written code.

``d_a = d_b ... d_b = d_a`` pairs (an adjoint handed to another and back) are dropped when
nothing in between writes either: the code in between reads ``d_b`` directly.

>>> from .code import Compound, Line
>>> block = [Line("d_x = d_y"), Line("t = d_x * 2"), Line("d_y = d_x")]
>>> drop_copy_pairs(block, "d_")
>>> [line.text for line in block]
['t = d_y * 2']

A negation next to a scaled product (``d_a = d_t * (t * 2.0)`` then ``d_b = -d_a``, the
adjoint of ``c - t ** 2``) becomes one product with the negated constant, one array
operation less, when the name in between is read nowhere else:

>>> block = [Line("d_a = d_t * (t * 2.0)"), Line("d_b = -d_a"), Line("r = d_b")]
>>> fold_negations(block, "d_")
>>> [line.text for line in block]
['d_b = d_t * (t * -2.0)', 'r = d_b']
"""

from __future__ import annotations

import re

from ..lazy_patterns import LazyPattern
from .code import Compound, Line, mentions
from .sweep_common import IDENTIFIER

_COPY = LazyPattern(r"^([^\W\d]\w*) = ([^\W\d]\w*)$")


def _assigned_name(item):
    if isinstance(item, Line) and " = " in item.text:
        target = item.text.split(" = ", 1)[0]
        if IDENTIFIER.fullmatch(target):
            return target
    return None


def _inner_first(block, rewrite, prefix, whole):
    """Apply ``rewrite`` to the statement lists nested in ``block`` (before ``block``
    itself is rewritten by the caller)."""
    for item in block:
        if isinstance(item, Compound):
            rewrite(item.body, prefix, whole)
            rewrite(item.orelse, prefix, whole)


def drop_copy_pairs(block, prefix, whole=None):
    """Remove ``x = y ... y = x`` between two adjoints when nothing in between writes
    either and ``x`` appears nowhere else in the reverse sweep: the code in between reads
    ``y`` instead."""
    whole = block if whole is None else whole
    _inner_first(block, drop_copy_pairs, prefix, whole)
    i = 0
    while i < len(block):
        item = block[i]
        m = _COPY.match(item.text) if isinstance(item, Line) else None
        if m and m.group(1).startswith(prefix) and m.group(2).startswith(prefix):
            x, y = m.group(1), m.group(2)
            for j in range(i + 1, len(block)):
                other = block[j]
                if not isinstance(other, Line):
                    break
                if other.text == f"{y} = {x}":
                    if mentions(whole, x, alt=True) == mentions(block[i : j + 1], x, alt=True):
                        pattern = re.compile(rf"\b{re.escape(x)}\b")
                        for k in range(i + 1, j):
                            block[k].text = pattern.sub(y, block[k].text)
                            if block[k].alt:
                                block[k].alt = pattern.sub(y, block[k].alt)
                        del block[j]
                        del block[i]
                        i -= 1
                    break
                if _assigned_name(other) in (x, y):
                    break
        i += 1


_NEG = LazyPattern(r"^([^\W\d]\w*) = -([^\W\d]\w*)$")
_SCALED = LazyPattern(r"^([^\W\d]\w*) = ([^\W\d]\w*) \* \(([^\W\d]\w*) \* (\d+\.\d*)\)$")


def _plain(item) -> bool:
    return isinstance(item, Line) and item.alt is None


def fold_negations(block, prefix, whole=None):
    """``a = g * (t * K)`` then ``b = -a`` (``a`` read nowhere else) becomes
    ``b = g * (t * -K)``; ``b = -a`` then ``c = b * (t * K)`` (``b`` read nowhere else)
    becomes ``c = a * (t * -K)``. Only adjoints, plain names and a float literal ``K``; the
    lines in between must not mention the name that moves."""
    whole = block if whole is None else whole
    _inner_first(block, fold_negations, prefix, whole)
    i = 0
    while i < len(block):
        item = block[i]
        m = _NEG.match(item.text) if _plain(item) else None
        if m and m.group(1).startswith(prefix) and m.group(2).startswith(prefix):
            if _fold_into_definition(block, i, m.group(1), m.group(2), whole):
                i -= 1
            elif _fold_into_use(block, i, m.group(1), m.group(2), whole):
                i -= 1
        i += 1


def _fold_into_definition(block, i, b, a, whole) -> bool:
    for j in range(i - 1, -1, -1):
        other = block[j]
        if not isinstance(other, Line):
            return False
        if _assigned_name(other) == a:
            d = _SCALED.match(other.text) if _plain(other) else None
            if d is None or mentions(whole, a, alt=True) != 2:
                return False
            if mentions(block[j:i], b, alt=True) != 0:
                return False
            other.text = f"{b} = {d.group(2)} * ({d.group(3)} * -{d.group(4)})"
            del block[i]
            return True
    return False


def _fold_into_use(block, i, b, a, whole) -> bool:
    for j in range(i + 1, len(block)):
        other = block[j]
        if not isinstance(other, Line):
            return False
        d = _SCALED.match(other.text) if _plain(other) else None
        if d is not None and d.group(2) == b:
            if mentions(whole, b, alt=True) != 2 or mentions(block[i + 1 : j], a, alt=True) != 0:
                return False
            if d.group(1) == a or d.group(3) in (a, b):
                return False
            other.text = f"{d.group(1)} = {a} * ({d.group(3)} * -{d.group(4)})"
            del block[i]
            return True
        if mentions([other], b, alt=True):
            return False
    return False
