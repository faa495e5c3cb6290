"""The leaves of a value given to a differentiated function: the numbers, arrays and other
atoms inside its tuples, lists, dicts and records, which decide whether an argument is
differentiated (arguments.py, adjoints.LazyAdjoint) -- and, for a call found at run time,
what a callable in it carries (:func:`held_leaves`).

>>> import functools
>>> list(leaves(([1.5, {"k": 2}], "s")))
[1.5, 2, 's']
>>> list(held_leaves([functools.partial(max, 1.5), 2]))
[1.5, 2]
"""

from __future__ import annotations

import functools
import types

from .records_dataclasses import fields_of, is_dataclass_value


def leaves(value):
    """The atoms of ``value``, through its tuples, lists, dicts and records' fields."""
    if isinstance(value, (tuple, list)):
        for v in value:
            yield from leaves(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from leaves(v)
    elif is_dataclass_value(value):  # its fields (records_dataclasses.py)
        yield from leaves(fields_of(value))
    else:
        yield value


def held_leaves(value):
    """:func:`leaves`, with what a callable among them carries: a bound method's receiver
    (``o.energy`` with ``o``'s fields differentiated), a ``functools.partial``'s bound
    arguments. An argument of a call found at run time holding such a callable is
    differentiated, as the same call written by name is: its cotangent then reaches the
    receiver's fields (left out, they would silently get none)."""
    for v in leaves(value):
        if isinstance(v, types.MethodType):
            yield from held_leaves(v.__self__)
        elif isinstance(v, functools.partial):
            yield from held_leaves((v.args, v.keywords))
        else:
            yield v
