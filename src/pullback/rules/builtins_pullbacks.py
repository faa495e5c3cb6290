"""Transformable pullbacks of the builtins rules (builtins_rules.py): ``float``, ``sum``,
``max``/``min`` (without ``key``/``default``), ``sorted``, ``list`` and ``tuple``, written in the
differentiable subset so that second derivatives run through them (see transformable.py).
A sequence argument gets a tuple of cotangents, one per item.
"""

from __future__ import annotations

import builtins
import copy
import typing

import numpy as np

from ..records_dataclasses import holds_record
from ..registry import transformable
from ..tangents import NO_TANGENT, ZERO, densify, unbroadcast
from ._util import refuse_user_objects
from .transformable import set_pullbacks


@transformable
def float_pullback(dy, x=0.0):
    return (unbroadcast(np.reshape(densify(dy), np.shape(x)), x),)


@transformable
def sum_pullback(dy, iterable, start=0):
    # sum(v) of a user's object went over its own __iter__: its items' cotangents are not
    # the object's (they would land on its fields in order)
    refuse_user_objects("sum", iterable)
    if isinstance(iterable, np.ndarray):
        g = np.broadcast_to(densify(dy), np.shape(iterable))
        return unbroadcast(g, iterable), unbroadcast(dy, start)
    parts = ()
    for v in iterable:
        parts = parts + (unbroadcast(densify(dy), v),)
    return parts, unbroadcast(dy, start)


@transformable
def _picked(dy, items, index):
    """One cotangent per item: ``dy`` for the picked one, ``ZERO`` for the others."""
    parts = ()
    for k in range(len(items)):
        if k == index and holds_record(items[k]):
            parts = parts + (dy,)  # a record's cotangent (a tuple of its fields') whole
        elif k == index:
            parts = parts + (unbroadcast(densify(dy), items[k]),)
        else:
            parts = parts + (ZERO,)
    return parts


def extreme_index(which, items, key) -> int:
    """Where ``which(items, key=key)`` (builtins max or min) found its item: the first
    whose score is extreme, as Python picks it. The key only chooses: non-differentiable
    (registered so in builtins_rules.py), so the pullback below stays transformable.

    Without a key, numbers are compared by value and anything else (tuples, compared
    item by item) as Python compares them: ``min([(0.3, 1), (-0.7, 2)])`` is the second.

    >>> extreme_index(min, [(0.3, 0.09), (-0.7, 0.49), (1.1, 1.21)], None)
    1
    """
    if key is None and (isinstance(items, np.ndarray) or all(np.ndim(v) == 0 for v in items)):
        # the first of the extreme items, as max/min pick it (their values are real)
        values = np.real(np.asarray(items))
        return int(np.argmax(values) if which is builtins.max else np.argmin(values))
    scores = list(items) if key is None else [key(v) for v in items]
    return which(range(len(scores)), key=scores.__getitem__)


@transformable
def _extreme_pullback(dy, which, a, b=None, c=None, d=None, key=None):
    items = a
    if b is None:
        refuse_user_objects(which.__name__, a)  # (max(v) went over v's own __iter__)
    else:
        items = (a, b) if c is None else ((a, b, c) if d is None else (a, b, c, d))
    if isinstance(items, np.ndarray) and np.ndim(items) != 1:
        # the rows of an array (by a key, or compared as arrays: one element each): the
        # chosen row gets the cotangent
        index = extreme_index(which, list(items), key)
        rows = np.arange(np.shape(items)[0]) == index
        pick = np.reshape(rows, (np.shape(items)[0],) + (1,) * (np.ndim(items) - 1))
        return (np.where(pick, densify(dy), 0.0),)
    index = extreme_index(which, items, key)
    if isinstance(items, np.ndarray):
        return (np.where(np.arange(np.shape(items)[0]) == index, densify(dy), 0.0),)
    if b is None:
        return (_picked(dy, items, index),)
    return _picked(dy, items, index)


@transformable
def max_pullback(dy, a, b=None, c=None, d=None, key=None):
    return _extreme_pullback(dy, builtins.max, a, b, c, d, key)


@transformable
def min_pullback(dy, a, b=None, c=None, d=None, key=None):
    return _extreme_pullback(dy, builtins.min, a, b, c, d, key)


def sorted_positions(items, key, reverse) -> list:
    """``positions[k]``: where item ``k`` of ``items`` went in ``sorted(items, key=key,
    reverse=reverse)`` (stable, as Python sorts). The order only chooses: non-differentiable
    (registered so in builtins_rules.py)."""
    order = builtins.sorted(
        range(len(items)),
        key=lambda i: items[i] if key is None else key(items[i]),
        reverse=reverse,
    )
    positions = [0] * len(order)
    for pos, i in enumerate(order):
        positions[i] = pos
    return positions


@transformable
def sorted_pullback(dy, iterable, key=None, reverse=False):
    refuse_user_objects("sorted", iterable)
    # item k's cotangent is the one of the place sorted put it in
    positions = sorted_positions(list(iterable), key, reverse)
    return sequence_pullback(tuple([dy[p] for p in positions]), iterable)


@transformable
def sequence_pullback(dy, iterable=()):
    refuse_user_objects("list", iterable)  # (list(v) and tuple(v) alike)
    if isinstance(iterable, np.ndarray):
        if len(dy) == 0:
            return (np.zeros(np.shape(iterable), np.result_type(iterable, 1.0)),)
        # An element no gradient reached has a ZERO cotangent: a zero of the row's shape.
        rows = [
            np.zeros(np.shape(iterable[k]), np.result_type(iterable, 1.0))
            if dy[k] is ZERO or dy[k] is NO_TANGENT
            else densify(dy[k])
            for k in range(len(dy))
        ]
        return (unbroadcast(np.stack(rows), iterable),)
    parts = ()
    for k in range(len(iterable)):
        item = iterable[k]
        if (
            dy[k] is ZERO
            or dy[k] is NO_TANGENT
            or isinstance(item, (tuple, list, dict))
            or holds_record(item)
        ):
            parts = parts + (dy[k],)  # a container or a record (a layer): its own cotangent
        else:
            parts = parts + (unbroadcast(densify(dy[k]), item),)
    return (parts,)


@transformable
def dict_get_pullback(dy, d, key, default=None):
    if key in d:
        return {key: dy}, NO_TANGENT, ZERO
    return ZERO, NO_TANGENT, dy


@transformable
def copy_pullback(dy, x, memo=None):
    return dy, NO_TANGENT


@transformable
def cast_pullback(dy, typ, value):
    return NO_TANGENT, dy


@transformable
def dict_copy_pullback(dy, d):
    return (dy,)


@transformable
def dict_pullback(dy, *source):
    """``dict(m)``: a mapping's cotangent passes through; pairs get theirs from the entry
    each one's value became (the last pair with its key); keys carry none."""
    if len(source) == 0:
        return ()
    m = source[0]
    if isinstance(m, dict):
        return (dy,)
    if not isinstance(m, (list, tuple)):
        return (NO_TANGENT,)
    keep = {}
    for k in range(len(m)):
        keep[m[k][0]] = k
    parts = ()
    for k in range(len(m)):
        key = m[k][0]
        if keep[key] == k and key in dy:
            parts = parts + ((NO_TANGENT, dy[key]),)
        else:
            parts = parts + ((NO_TANGENT, ZERO),)
    return (parts,)


def register(reg):
    set_pullbacks(
        reg,
        [
            (builtins.float, float_pullback),
            (copy.copy, copy_pullback),
            (builtins.dict, dict_pullback),
            (dict.copy, dict_copy_pullback),
            (typing.cast, cast_pullback),
            (dict.get, dict_get_pullback),
            (copy.deepcopy, copy_pullback),
            (builtins.sum, sum_pullback),
            (builtins.max, max_pullback),
            (builtins.min, min_pullback),
            (builtins.sorted, sorted_pullback),
            (builtins.list, sequence_pullback),
            (builtins.tuple, sequence_pullback),
        ],
    )
