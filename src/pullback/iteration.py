"""Which uses of Python's iterators pullback differentiates, decided in one place.

``zip``/``enumerate``/``reversed`` (and the itertools iterators loops differentiate,
:func:`loop_itertools`) consumed whole, as a loop would consume them, and ``next`` of a
generator expression (:func:`first_item`).

``zip(a, b)`` is a lazy iterator. Where the call is the single argument of ``list``,
``tuple``, ``dict``, ``sorted``, ``min`` or ``max``, Python consumes it at once and all of
it, so it computes exactly what a list comprehension over the same call computes::

    list(zip(a, b))          ==  [(t1, t2) for t1, t2 in zip(a, b)]
    dict(zip(keys, values))  ==  {k: v for k, v in zip(keys, values)}
    sorted(zip(a, b), key=k) ==  sorted([(t1, t2) for t1, t2 in zip(a, b)], key=k)

(``min`` and ``max`` of one iterator, with their keywords, as ``sorted``)

and the comprehension is differentiated as the loop it is (``for`` over nested
``zip``/``enumerate``/``reversed`` reads its sequences by index,
:mod:`pullback.transform.loop_iterables`). An iterator kept in a variable and consumed
later (or twice: the second time it is empty) is not such a use, and stays refused where
a gradient would flow through it.

The check (which accepts these uses) and the transform (which rewrites them,
:mod:`pullback.transform.iterator_values`) both ask :func:`consumed_iterator`, so they
cannot disagree.

>>> import builtins, gast
>>> call = gast.parse("dict(zip(k, v))").body[0].value
>>> class Callee:
...     kind = "object"
...     def __init__(self, obj): self.obj = obj
>>> resolve = lambda c: Callee(getattr(builtins, c.func.id))
>>> consumed_iterator(call, resolve).func.id
'zip'
"""

from __future__ import annotations

import builtins
import itertools

import gast

ITERATORS = (builtins.zip, builtins.enumerate, builtins.reversed)
CONSUMERS = (builtins.list, builtins.tuple, builtins.dict)
# Consumers that take keywords too (``key=``, ``reverse=``, ``default=``) and read their
# one iterable whole before anything else: ``sorted(zip(x, w), key=...)`` is ``sorted`` of
# the list comprehension, and so are ``min`` and ``max`` of one iterable.
ORDERING_CONSUMERS = (builtins.sorted, builtins.min, builtins.max)


def iterator_kind(call, resolve):
    """``zip``, ``enumerate`` or ``reversed`` when ``call`` is a plain call of one, else None.

    A starred argument (``zip(*rows)``, a transpose with its own rule) is not plain."""
    if not isinstance(call, gast.Call) or any(isinstance(a, gast.Starred) for a in call.args):
        return None
    callee = resolve(call)
    if callee.kind != "object":
        return None
    for obj in ITERATORS:
        if callee.obj is obj:
            return obj
    return None


def consumed_iterator(call, resolve):
    """The iterator call that ``call`` (``list``/``tuple``/``dict`` of it, or ``sorted``/
    ``min``/``max`` of it with their keywords) consumes whole."""
    if not isinstance(call, gast.Call) or len(call.args) != 1:
        return None
    inner = call.args[0]
    kind = iterator_kind(inner, resolve)
    if kind is None and not loop_itertools(inner, resolve):
        return None
    callee = resolve(call)
    if callee.kind != "object":
        return None
    consumers = ORDERING_CONSUMERS if call.keywords else CONSUMERS + ORDERING_CONSUMERS
    if not any(callee.obj is c for c in consumers):
        return None
    if callee.obj is builtins.dict and not yields_pairs(inner, kind):
        return None  # dict(zip(a, b, c)) raises ValueError in Python: left as written
    return inner


def loop_itertools(call, resolve) -> bool:
    """Whether ``call`` is a plain call of an itertools iterator that pullback
    differentiates where a loop goes over it (``accumulate``, ``chain``,
    ``chain.from_iterable``, ``combinations``, ``product``, ``pairwise``, ...:
    transform/loop_iterables.py): consumed whole (``list(accumulate(xs))``), it is the list
    comprehension over it, item by item."""
    if not isinstance(call, gast.Call) or any(isinstance(a, gast.Starred) for a in call.args):
        return False
    callee = resolve(call)
    if callee.kind != "object":
        return False
    obj = callee.obj
    return (
        obj is itertools.accumulate
        or obj is itertools.chain
        or is_from_iterable(obj)
        or any(obj is f for f in _INDEXED_ITERTOOLS)
    )


def yields_pairs(call, kind) -> bool:
    """Whether every item of the iterator call is a pair (what ``dict`` needs)."""
    if kind is builtins.enumerate:
        return True
    if kind is builtins.zip:
        return len(call.args) == 2
    return False


def first_item(call, resolve):
    """``(iterable, generator)`` when ``call`` is ``next`` of a generator expression with one
    ``for`` (``next(v for v in xs if v > 0)``) or of ``iter(xs)`` (then ``generator`` is
    None and ``iterable`` is ``xs``), with no default or a constant or name as default —
    the first item, found by a loop with ``break`` exactly as ``next`` runs the generator.
    Else None."""
    if not isinstance(call, gast.Call) or call.keywords or not 1 <= len(call.args) <= 2:
        return None
    if any(isinstance(a, gast.Starred) for a in call.args):
        return None
    if len(call.args) == 2 and not isinstance(call.args[1], (gast.Constant, gast.Name)):
        return None  # a default with effects would run before the generator's first step
    callee = resolve(call)
    if callee.kind != "object" or callee.obj is not builtins.next:
        return None
    source = call.args[0]
    if isinstance(source, gast.GeneratorExp):
        if len(source.generators) != 1 or source.generators[0].is_async:
            return None
        return source.generators[0].iter, source
    if isinstance(source, gast.Call) and len(source.args) == 1 and not source.keywords:
        if isinstance(source.args[0], gast.Starred):
            return None
        inner = resolve(source)
        if inner.kind == "object" and inner.obj is builtins.iter:
            return source.args[0], None
    return None


_INDEXED_ITERTOOLS = tuple(
    f
    for f in (
        itertools.combinations,
        itertools.combinations_with_replacement,
        itertools.permutations,
        itertools.product,
        getattr(itertools, "pairwise", None),
    )
    if f is not None
)


def is_from_iterable(obj) -> bool:
    """``itertools.chain.from_iterable`` (a class method: a new bound object per read)."""
    return (
        getattr(obj, "__self__", None) is itertools.chain
        and getattr(obj, "__name__", None) == "from_iterable"
    )


def iterator_refusal(obj):
    """``(what, fix)`` for PB301 when a gradient would flow through a kept iterator, or None.

    The fixes are the forms pullback differentiates: a loop or comprehension over the call
    where it is made, the container built at once, or indexing instead of ``iter``/``next``.
    """
    if any(obj is it for it in (*ITERATORS, builtins.map, builtins.filter)):
        name = obj.__name__
        return (
            f"a lazy iterator kept as a value: pullback differentiates '{name}(...)' where it "
            "is consumed at once",
            f"loop over it where it is made (`for item in {name}(...)`, or a comprehension), "
            f"or build the container at once: `items = list({name}(...))`",
        )
    if obj in _INDEXED_ITERTOOLS:  # loops over them read by position: loop_iterables.py
        name = obj.__name__
        example = (
            "pairwise(xs)"
            if name == "pairwise"
            else ("product(a, b)" if name == "product" else f"{name}(xs, 2)")
        )
        return (
            f"itertools.{name} is differentiated where a for loop or a comprehension goes "
            "over it and the size of its tuples is written in the call",
            f"loop over it where it is made, with the size written as a number "
            f"(`for a, b in itertools.{example}:`, `permutations(xs, 3)`, "
            f"`product(xs, repeat=2)`)",
        )
    if obj is itertools.accumulate:  # loops over it step the running value: loop_iterables.py
        return (
            "itertools.accumulate is differentiated where a for loop or a comprehension goes "
            "over it in order (directly, or inside zip or enumerate), with its function a "
            "name or a lambda written in the call",
            "loop over it where it is made (`for s in itertools.accumulate(xs):`, "
            "`accumulate(xs, operator.mul)`, `accumulate(xs, max, initial=0.0)`), or keep the "
            "running value in the loop yourself (`s = s + v` in `for v in xs:`)",
        )
    if obj is itertools.chain or is_from_iterable(obj):
        return (
            "itertools.chain is differentiated where a for loop or a comprehension goes over "
            "it: `chain(a, b)`, `chain(*xss)` or `chain.from_iterable(xss)`",
            "loop over it where it is made (`for v in itertools.chain(a, b):`, "
            "`for v in itertools.chain.from_iterable(rows):`), or build the sequence at once: "
            "`items = [*a, *b]`",
        )
    if obj is builtins.iter or obj is builtins.next:
        return (
            "an iterator stepped by hand and used other than by `next(it)`, "
            "`next(it, default)` and `for v in it:` without `break` in this function: "
            "pullback differentiates sequences read by index",
            "step it only those ways, or index the sequence instead: `first = xs[0]` and "
            "`for v in xs[1:]:` for `it = iter(xs); first = next(it); for v in it:`, or "
            "`next(v for v in xs if c)` as a loop with `break`",
        )
    return None
