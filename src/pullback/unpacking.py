"""Tuple unpacking exactly as Python does it, for the generated code.

``a, b = value`` iterates ``value`` once and raises ``ValueError`` unless it yields exactly
two items; ``first, *rest = value`` needs at least one. The normalizer writes such an
assignment as ``items = unpack_items(value, 2)`` followed by index reads of ``items``, so
a dict unpacks to its keys, a set or a generator to its items, and a value of the wrong
length fails as in the primal instead of being read by index.

Tuples, lists, arrays (their rows), ranges and strings are returned as they are, so the
cotangents of the index reads flow back to ``value`` unchanged; any other iterable is read
once into a list, through which no gradient flows (a gradient reaching it is refused:
``runtime.sequence_cotangent``).

>>> unpack_items((1.0, 2.0), 2)
(1.0, 2.0)
>>> unpack_items({"w": 1, "b": 2}, 2)
['w', 'b']
>>> unpack_items([1.0, 2.0, 3.0], 2)
Traceback (most recent call last):
...
ValueError: too many values to unpack (expected 2)
>>> unpack_items([1.0], 2, at_least=True)
Traceback (most recent call last):
...
ValueError: not enough values to unpack (expected at least 2, got 1)
"""

from __future__ import annotations

import copy
import functools
import itertools
from collections.abc import Iterator

import numpy as np

from .iterators_by_hand import next_position
from .registry import transformable
from .rule_tangents import rule_tangent
from .runtime import _SEQUENCES, checked_count, sequence_cotangent
from .tangents import NO_TANGENT, ZERO

FAMILY = "pullback_runtime"


def unpack_items(value, count, at_least=False):
    """The items of ``value`` for a target of ``count`` names (``at_least``: with a
    starred name too), checked as Python checks them."""
    items = value if isinstance(value, _SEQUENCES) else _read(value)
    return checked_count(items, count, at_least)


def _read(value):
    try:  # a number, a 0-d array: not iterable
        return list(value)
    except TypeError:
        raise TypeError(f"cannot unpack non-iterable {type(value).__name__} object") from None


@transformable
def unpack_items_pullback(g, value, count, at_least=False):
    """The cotangent of ``value`` from the cotangent ``g`` of its items: the same object
    for a sequence (its index reads were reads of ``value``)."""
    return sequence_cotangent(g, value), NO_TANGENT, NO_TANGENT


def _unpack_items_rrule(value, count, at_least=False):
    items = unpack_items(value, count, at_least)

    def unpack_items_closure(g):
        return sequence_cotangent(g, value), NO_TANGENT, NO_TANGENT

    return items, unpack_items_closure


def zip_length(*lengths, strict=False):
    """How many items ``zip`` of sequences of these lengths yields; with ``strict=True``
    unequal lengths raise as ``zip`` raises.

    >>> zip_length(3, 2)
    2
    >>> zip_length(3, 2, strict=True)
    Traceback (most recent call last):
    ...
    ValueError: zip() argument 2 is shorter than argument 1
    """
    shortest = min(lengths)
    if strict and shortest != max(lengths):
        # As zip finds it: the first argument to run out, or, when that is the first
        # argument, the first one still going.
        k = lengths.index(shortest) + 1
        which = "shorter"
        if k == 1:
            k = next(j for j, n in enumerate(lengths, 1) if n != shortest)
            which = "longer"
        before = "argument 1" if k == 2 else f"arguments 1-{k - 1}"
        raise ValueError(f"zip() argument {k} is {which} than {before}")
    return shortest


def nd_index(k, shape) -> tuple:
    """The index ``np.ndenumerate`` yields at its ``k``-th step (C order): a tuple of
    Python ints, as it yields them.

    >>> nd_index(4, (2, 3))
    (1, 1)
    """
    return tuple(int(i) for i in np.unravel_index(k, shape))


def index_table(kind: str, r, *lengths) -> tuple:
    """The positions ``itertools.<kind>`` takes its items from, for iterables of these
    lengths: a loop over ``combinations(xs, 2)`` reads ``xs[i], xs[j]`` for each ``(i, j)``
    of the table (transform/loop_iterables.py), so the gradient reaches the items.
    ``r``: the tuple size (``repeat`` for ``product``; unused for ``pairwise``).

    >>> index_table("combinations", 2, 3)
    ((0, 1), (0, 2), (1, 2))
    >>> index_table("product", 1, 2, 2)
    ((0, 0), (0, 1), (1, 0), (1, 1))
    """
    ranges = [range(n) for n in lengths]
    if kind == "product":
        return tuple(itertools.product(*ranges, repeat=r))
    if kind == "pairwise":
        return tuple(zip(ranges[0], ranges[0][1:], strict=False))
    return tuple(getattr(itertools, kind)(ranges[0], r))


def flat_positions(seqs) -> tuple:
    """The ``(i, j)`` of each item ``itertools.chain.from_iterable(seqs)`` yields:
    ``seqs[i][j]``, read by position (transform/loop_iterables.py) so that the gradient
    reaches the items. An item without a length (an iterator) cannot be read so.

    >>> flat_positions([[1.0, 2.0], [], [3.0]])
    ((0, 0), (0, 1), (2, 0))
    """
    out = []
    for i, s in enumerate(seqs):
        try:
            n = len(s)
        except TypeError:
            raise TypeError(
                f"itertools.chain.from_iterable: item {i} ({type(s).__name__}) has no length; "
                "pullback reads each item by position: make the items lists, tuples or arrays"
            ) from None
        out.extend((i, j) for j in range(n))
    return tuple(out)


_KNOWN = (int, *_SEQUENCES)


def zip_limit(*known):
    """How many items ``zip`` yields at most, from what is known of its arguments: a length
    (an int: an argument whose shape the loop reads by position) or an argument read as it
    is (its length if it is a list, tuple, array, range or string); ``None`` when nothing
    has a length.

    >>> zip_limit([1.0, 2.0, 3.0], iter([]), 2)
    2
    >>> zip_limit(iter([]), itertools.count()) is None
    True
    """
    sized = [n if isinstance(n, int) else len(n) for n in known if isinstance(n, _KNOWN)]
    return min(sized) if sized else None


def zip_bounded(iterable, limit):
    """What a loop reads of an argument of ``zip``: a container as it is (a sequence's
    cotangent flows back); an iterator only its first ``limit`` items, as far as zip goes with
    sequences beside it (``zip(naturals(), xs)`` with a generator that never ends), or
    whole when ``limit`` is None.

    >>> list(zip_bounded(itertools.count(1), 3))
    [1, 2, 3]
    >>> xs = [1.0, 2.0]
    >>> zip_bounded(xs, 1) is xs
    True
    """
    if limit is None or not isinstance(iterable, Iterator):
        return iterable  # (a container is finite, and a user's may have its own __iter__)
    return itertools.islice(iterable, limit)


def register(reg):
    # (the position of an iterator stepped by hand: iterators_by_hand.py; zip_bounded has
    # the identity rule of the runtime helpers, so a gradient reaching the endless iterator
    # is refused at its call, as itertools has no rule)
    reg.non_differentiable(
        zip_limit,
        zip_length,
        nd_index,
        next_position,
        index_table,
        flat_positions,
        family=FAMILY,
        trusted=True,
    )
    rule = reg.register(unpack_items, _unpack_items_rrule, family=FAMILY, trusted=True)
    reg.set_pullback_function(unpack_items, unpack_items_pullback)
    general = copy.copy(rule)
    general.extra = {k: v for k, v in rule.extra.items() if k != "tangent"}
    rule.extra["tangent"] = functools.partial(_unpack_items_tangent, general)


def _unpack_items_tangent(general, args, tangents, kwargs):
    """The tangent of ``unpack_items(value, ...)``: ``value``'s own tangent where the items
    are ``value`` itself (a list, a tuple, an array) and the tangent has its structure --
    the identity, exactly. Pulled back by rows (or by transposing the pullback), an
    infinite tangent at one position (``log(x)`` at 0, on a loop's tape in a gradient that
    forward mode differentiates) made NaN at every other (``0 * inf``). Any other value:
    the general tangent of ``rule_tangents.rule_tangent`` (``general``, the rule without this)."""
    value, t = args[0], tangents[0]
    if t is ZERO or t is NO_TANGENT or isinstance(value, dict):
        return ZERO  # (a dict's items are its keys: no tangent)
    if isinstance(value, _SEQUENCES):
        return t  # the same object: a record's tangent among the items is kept whole
    if type(value) is np.ndarray and type(t) is np.ndarray and t.shape == value.shape:
        return t
    return rule_tangent(general, args, tangents, kwargs)[1]
