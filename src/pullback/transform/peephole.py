"""Clean-ups of a built reverse sweep that make it read like hand-written code.

``d_a = d_b ... d_b = d_a`` pairs (an adjoint handed to another and back) are dropped when
nothing in between writes either: the code in between reads ``d_b`` directly.

>>> from .code import Compound, Line
>>> block = [Line("d_x = d_y"), Line("t = d_x * 2"), Line("d_y = d_x")]
>>> drop_copy_pairs(block, "d_")
>>> [line.text for line in block]
['t = d_y * 2']
"""

from __future__ import annotations

import re

from .code import Compound, Line
from .sweep_common import IDENTIFIER

_COPY = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*) = ([A-Za-z_][A-Za-z0-9_]*)$")


def _assigned_name(item):
    if isinstance(item, Line) and " = " in item.text:
        target = item.text.split(" = ", 1)[0]
        if IDENTIFIER.fullmatch(target):
            return target
    return None


def _count_mentions(items, name) -> int:
    pattern = re.compile(rf"\b{re.escape(name)}\b")
    total = 0
    for item in items:
        if isinstance(item, Line):
            total += len(pattern.findall(item.text))
            total += len(pattern.findall(item.alt)) if item.alt else 0
        else:
            total += len(pattern.findall(item.header))
            total += _count_mentions(item.body, name) + _count_mentions(item.orelse, name)
    return total


def drop_copy_pairs(block, prefix, whole=None):
    """Remove ``x = y ... y = x`` between two adjoints when nothing in between writes
    either and ``x`` appears nowhere else in the reverse sweep: the code in between reads
    ``y`` instead."""
    whole = block if whole is None else whole
    for item in block:
        if isinstance(item, Compound):
            drop_copy_pairs(item.body, prefix, whole)
            drop_copy_pairs(item.orelse, prefix, whole)
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
                    if _count_mentions(whole, x) == _count_mentions(block[i : j + 1], x):
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
