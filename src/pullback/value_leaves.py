"""The leaves of a value given to a differentiated function: the numbers, arrays and other
atoms inside its tuples, lists, dicts and records, which decide whether an argument is
differentiated (arguments.py, adjoints.LazyAdjoint) -- and, for a call found at run time,
what a bound method in it carries (:func:`held_leaves`).

>>> list(leaves(([1.5, {"k": 2}], "s")))
[1.5, 2, 's']
>>> import dataclasses
>>> @dataclasses.dataclass
... class Box:
...     v: float
...     def get(self):
...         return self.v
>>> list(held_leaves([Box(1.5).get, 2]))
[1.5, 2]
"""

from __future__ import annotations

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
    """:func:`leaves`, with what a bound method among them carries: its receiver's
    (``o.energy`` with ``o``'s fields differentiated). An argument of a call found at run
    time holding one is differentiated, as the same call written by name is: its cotangent
    then reaches the receiver's fields (left out, they would silently get none). (A
    ``functools.partial`` binding differentiated values and passed on is refused before
    running, PB301: one that reaches a call is made of constants, and stays one.)"""
    for v in leaves(value):
        if isinstance(v, types.MethodType):
            yield from held_leaves(v.__self__)
        else:
            yield v
