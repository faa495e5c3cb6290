"""Python builtins: abs, pow, float, sum, min, max, sorted, list, tuple, and the
non-differentiable ones (round, int, len, range, ...).

Choices where a function is not differentiable: ``abs(0)`` -> 0; ``min``/``max`` give the
whole cotangent to the element Python returns (the first of equal ones; over an array,
the row or scalar the iteration over its first axis returns), ``sorted`` to
the elements in Python's stable order; ``round`` has a zero gradient.
"""

from __future__ import annotations

import builtins
import copy
import math
import typing

import numpy as np

from ..errors import UnsupportedCallError
from ..match_cases import match_mapping, match_sequence
from ..records_dataclasses import holds_record, is_record_value
from ..records_plain import adopt_copies
from ..registry import transformable
from ._util import (
    NO_TANGENT,
    ZERO,
    Registrar,
    densify,
    differentiable,
    dy_parts,
    finalize,
    refuse_user_objects,
    zeros_for,
)
from .builtins_pullbacks import dict_pullback, extreme_index, sorted_positions

FAMILY = "builtins"

_SEQ = (list, tuple)


def _abs_derivative(y, x):
    # abs'(0) = 0; for a complex number the cotangent factor is z / |z|.
    return np.sign(x)


@transformable  # the pow derivatives below are differentiated again
def _is_array(v):
    return isinstance(v, np.ndarray)


def _pow_base(y, a, b, mod=None):
    if _is_array(a) or _is_array(b):
        return b * np.power(np.where((b == 0) & (a == 0), 1, a), b - 1)  # 0 ** 0: as np.power
    if a != 0:
        return b * a ** (b - 1)
    return 0.0 if b != 1 else 1.0  # at a = 0: 1 for b = 1, else 0 (chosen)


def _pow_exponent(y, a, b, mod=None):
    if _is_array(a) or _is_array(b):
        pos = a > 0
        return np.where(pos, y * np.log(np.where(pos, a, 1.0)), 0.0)
    return y * math.log(a) if a > 0 else 0.0


def _float_rrule(x=0.0):
    y = float(x)

    def float_pullback(dy):
        if dy is ZERO:
            return zeros_for((x,))
        return (finalize(dy, x),)

    return y, float_pullback


def _check_iterable(name, iterable, items):
    """Refuse an iterable the pullback cannot give a cotangent to (a generator, a map, a
    dict view...) when its items carry tangents: their cotangent would be lost."""
    if not isinstance(iterable, (list, tuple, np.ndarray)) and differentiable(list(items)):
        raise UnsupportedCallError(
            f"pullback: {name}() over a {type(iterable).__name__} of floats cannot pass a "
            f"gradient back to where its items came from; fix: call {name}() on a list, "
            "a tuple or an array (e.g. list(...) of it inside the differentiated function)"
        )


def _seq_like(values, like):
    return type(like)(values) if type(like) in _SEQ else list(values)


def _sum_rrule(iterable, *args, **kwargs):
    items = list(iterable) if not isinstance(iterable, np.ndarray) else iterable
    _check_iterable("sum", iterable, items)
    y = builtins.sum(items, *args, **kwargs)
    start = args[0] if args else kwargs.get("start", 0)

    def sum_pullback(dy):
        if dy is ZERO:
            return zeros_for((iterable,) + args)
        rest = tuple(finalize(dy, start) for _ in args)
        if isinstance(iterable, np.ndarray):
            g = np.broadcast_to(np.asarray(densify(dy)), iterable.shape)
            return (finalize(g, iterable),) + rest
        if type(iterable) not in _SEQ:
            return (NO_TANGENT,) + rest
        g = [finalize(dy, v) for v in items]
        return (_seq_like(g, iterable),) + rest

    return y, sum_pullback


def _extreme_rrule(pick):
    name = pick.__name__

    def extreme_rrule(*args, **kwargs):
        key = kwargs.get("key")
        single = len(args) == 1
        items = list(args[0]) if single else list(args)
        if single:
            _check_iterable(name, args[0], items)
        if not items and "default" in kwargs:
            y = kwargs["default"]
            index = None
        else:
            index = pick(
                range(len(items)), key=lambda i: items[i] if key is None else key(items[i])
            )
            y = items[index]

        def extreme_pullback(dy):
            if dy is ZERO or index is None:
                return zeros_for(args)
            g = [ZERO if differentiable(v) or holds_record(v) else NO_TANGENT for v in items]
            picked = items[index]
            # a record (an object, a dataclass, a named tuple), or a tuple or list holding
            # one, takes its cotangent whole
            g[index] = dy if holds_record(picked) else finalize(dy, picked)
            if single:
                seq = args[0]
                if isinstance(seq, np.ndarray):  # the iteration runs over the first axis
                    if not differentiable(seq):
                        return (NO_TANGENT,)
                    rows = np.zeros(seq.shape, seq.dtype)
                    rows[index] = np.real(densify(dy)) if seq.dtype.kind == "f" else densify(dy)
                    return (finalize(rows, seq),)
                return (_seq_like(g, seq),)
            return tuple(g)

        extreme_pullback.__name__ = f"{name}_pullback"
        return y, extreme_pullback

    extreme_rrule.__name__ = f"{name}_rrule"
    return extreme_rrule


def _sorted_rrule(iterable, **kwargs):
    """``sorted(iterable, key=..., reverse=...)``: the items, reordered; each item's
    cotangent is the one of the place it went to, and then as for ``list(iterable)`` (an
    array's rows stacked back, a list's or tuple's items in a sequence like it)."""
    items, as_list_pullback = _sequence_rule(builtins.list)(iterable)
    positions = sorted_positions(items, kwargs.get("key"), kwargs.get("reverse", False))
    y = list(items)
    for k, p in enumerate(positions):
        y[p] = items[k]

    def sorted_pullback(dy):
        if dy is ZERO:
            return as_list_pullback(ZERO)
        parts = dy_parts(dy, len(y))
        return as_list_pullback([parts[p] for p in positions])

    return y, sorted_pullback


def _sequence_rule(kind):
    def sequence_rrule(iterable=()):
        y = kind(iterable)
        _check_iterable(kind.__name__, iterable, y)

        def sequence_pullback(dy):
            if dy is ZERO:
                return zeros_for((iterable,))
            parts = dy_parts(dy, len(y))
            if isinstance(iterable, np.ndarray):
                if not differentiable(iterable):
                    return (NO_TANGENT,)
                rows = [
                    np.zeros(np.shape(v), dtype=iterable.dtype) if p is ZERO else densify(p)
                    for p, v in zip(parts, y, strict=True)
                ]
                stacked = np.stack(rows) if rows else np.zeros(iterable.shape, iterable.dtype)
                return (finalize(stacked, iterable),)
            if type(iterable) in _SEQ or isinstance(iterable, dict):
                return (_seq_like(parts, iterable),) if type(iterable) in _SEQ else (NO_TANGENT,)
            return (NO_TANGENT,)

        return y, sequence_pullback

    sequence_rrule.__name__ = f"{kind.__name__}_rrule"
    return sequence_rrule


def _copy_rrule(which):
    """``copy.copy(x)``/``copy.deepcopy(x)`` of differentiated values (an array, a list or
    dict of them): the copy holds the same values, so the cotangent passes through."""

    def copy_rrule(x, *args):
        memo = None
        if which is copy.deepcopy and (not args or isinstance(args[0], dict)):
            memo = args[0] if args else {}
            y = which(x, memo)
        else:
            y = which(x, *args)
        adopt_copies(x, y, memo)  # a copy of an object's record is a record too

        def copy_pullback(dy):
            return (dy,) + (NO_TANGENT,) * len(args)

        return y, copy_pullback

    copy_rrule.__name__ = f"{which.__name__}_rrule"
    return copy_rrule


def _cast_rrule(typ, value):
    """``typing.cast(typ, value)`` returns ``value`` itself: its cotangent passes through."""

    def cast_pullback(dy):
        return NO_TANGENT, dy

    return value, cast_pullback


def _dict_rrule(*source):
    """``dict(m)`` of a mapping (a copy: the cotangent, a dict of the entries'
    cotangents, passes through) or of a list or tuple of pairs (each entry's cotangent goes
    to the last pair with its key, the one ``dict`` keeps). ``dict()`` has no input."""
    y = dict(*source)
    if not source:
        return y, _no_inputs_pullback
    m = source[0]
    if isinstance(m, dict):
        return y, _dict_copy_pullback
    if type(m) not in _SEQ:  # an iterator: consumed, nothing to give a cotangent to
        _check_iterable("dict", m, list(y.values()))
        return y, _dict_of_nothing_pullback

    def dict_of_pairs_pullback(dy):
        return zeros_for((m,)) if dy is ZERO else dict_pullback(dy, m)

    return y, dict_of_pairs_pullback


def _no_inputs_pullback(dy):
    return ()


def _dict_copy_pullback(dy):
    return (dy,)


def _dict_of_nothing_pullback(dy):
    return (NO_TANGENT,)


def _dict_copy_rrule(d):
    """``d.copy()``: the copy holds the same entries, so the cotangent passes through."""
    return d.copy(), _dict_copy_pullback


def _dict_get_rrule(d, key, *default):
    """``d.get(key, default)``: the entry's cotangent reaches ``d``'s entry, or the default."""
    found = key in d
    y = d[key] if found else (default[0] if default else None)

    def dict_get_pullback(dy):
        if found:
            return ({key: dy}, NO_TANGENT) + (ZERO,) * len(default)
        return (ZERO, NO_TANGENT) + (dy,) * len(default)

    return y, dict_get_pullback


def register(reg):
    r = Registrar(reg, FAMILY)
    r.rule(dict.get, _dict_get_rrule, notes="the entry read, or the default")
    r.rule(builtins.dict, _dict_rrule, notes="of a mapping or of pairs: the kept entries")
    r.rule(dict.copy, _dict_copy_rrule, notes="the cotangent passes through")
    r.rule(typing.cast, _cast_rrule, notes="returns its value: the cotangent passes through")
    for which in (copy.copy, copy.deepcopy):
        rule = r.rule(which, _copy_rrule(which), notes="the cotangent passes through")
        # the sweeps run the rule, whose copy of an object's record is a record too
        rule.extra["sweeps_keep_closure"] = True
        # its result is its argument's kind, no result object of a rule's: an attribute
        # of a copy of a record is its field (transform/reverse_attributes.py)
        rule.extra["passes_value"] = True
    r.scalar(builtins.abs, _abs_derivative, holomorphic=False, notes="abs(0) -> 0")
    r.scalar(builtins.pow, _pow_base, _pow_exponent, notes="pow(0, b<1): 0 for the base")
    r.rule(builtins.float, _float_rrule)
    r.rule(builtins.sum, _sum_rrule)
    r.rule(builtins.max, _extreme_rrule(builtins.max), notes="the returned element")
    r.rule(builtins.min, _extreme_rrule(builtins.min), notes="the returned element")
    r.rule(builtins.sorted, _sorted_rrule, notes="the permutation applied to the cotangent")
    r.rule(builtins.list, _sequence_rule(builtins.list))
    r.rule(builtins.tuple, _sequence_rule(builtins.tuple))
    r.nondiff(extreme_index)  # where max/min with key= found the item (a choice)
    r.nondiff(refuse_user_objects)  # a check that raises (sum_pullback's first line)
    r.nondiff(is_record_value, holds_record)  # whether max/min picked a record (its type)
    r.nondiff(sorted_positions)  # where sorted put each item (a choice)
    r.nondiff(match_sequence, match_mapping)  # which case of a match (match_cases.py)
    # positions and counts of items (integers): xs.index(v), xs.count(v)
    r.nondiff(
        list.index,
        list.count,
        tuple.index,
        tuple.count,
        names=["list.index", "list.count", "tuple.index", "tuple.count"],
    )
    r.nondiff(
        builtins.round,
        builtins.len,
        builtins.range,
        builtins.int,
        builtins.bool,
        builtins.isinstance,
        builtins.issubclass,
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
        builtins.ord,
        builtins.chr,
        builtins.hasattr,
        notes="zero gradient",
    )
    # the pullbacks second derivatives run through
    from .builtins_pullbacks import register as register_pullbacks

    register_pullbacks(reg)
