"""``list(zip(a, b))``, ``tuple(enumerate(xs))``, ``dict(zip(keys, values))`` as comprehensions.

Where ``list``/``tuple``/``dict`` consume a ``zip``/``enumerate``/``reversed`` call whole
(:func:`pullback.iteration.consumed_iterator`), the call is rewritten as the comprehension
that computes the same container, whose loop is then differentiated as every loop over
these iterators is (:mod:`pullback.transform.loop_iterables`)::

    pairs = list(zip(xs, enumerate(ys)))

becomes::

    pairs = [(_item1, (_item2, _item3)) for _item1, (_item2, _item3) in zip(xs, enumerate(ys))]

A nested iterator's items are unpacked to their leaves, so each leaf is one indexed read.

>>> from pullback.transform.normalize import core_source
>>> def f(x):
...     return dict(zip(["a", "b"], x))["b"]
>>> "dict_set" in core_source(f)
True
"""

from __future__ import annotations

import builtins
import copy

import gast

from ..iteration import ORDERING_CONSUMERS, consumed_iterator, first_item, iterator_kind
from ..resolve import resolve_call
from ..tree_walk import walk
from . import nodes as N
from .comprehensions import ScopedRenamer


class IteratorValues:
    """Mixin of :class:`~.normalize.Normalizer`: iterators consumed whole, as comprehensions."""

    def iterator_value(self, e):
        """The expression (a comprehension, or ``tuple`` of one) computing ``e`` when it
        consumes an iterator whole, else None."""

        def resolve(call):
            return resolve_call(self.fs, call, self.locals)

        inner = consumed_iterator(e, resolve)
        if inner is None:
            return None
        target, item = self._items_of(inner, resolve)
        comp = gast.comprehension(target=target, iter=inner, ifs=[], is_async=0)
        consumer = resolve(e).obj
        if consumer is builtins.dict:
            key, value = item.elts
            return N.located(gast.DictComp(key=key, value=value, generators=[comp]), e)
        listed = N.located(gast.ListComp(elt=item, generators=[comp]), e)
        if consumer is builtins.tuple:
            return N.located(gast.Call(func=e.func, args=[listed], keywords=[]), e)
        return listed

    def list_iterator_argument(self, e) -> None:
        """``sorted(zip(w, x), key=k)`` (or ``min``/``max`` of one iterator): its argument
        becomes the list comprehension over the iterator, which the call, with its
        keywords, then orders as any list (transform/higher_order_builtins.py)."""

        def resolve(call):
            return resolve_call(self.fs, call, self.locals)

        inner = consumed_iterator(e, resolve)
        if inner is None or not any(resolve(e).obj is c for c in ORDERING_CONSUMERS):
            return
        target, item = self._items_of(inner, resolve)
        comp = gast.comprehension(target=target, iter=inner, ifs=[], is_async=0)
        e.args[0] = N.located(gast.ListComp(elt=item, generators=[comp]), inner)

    def first_item_value(self, e, stmts):
        """``next(<generator>[, default])`` as the loop that stops at the first item, else
        None. The value is a fresh name; the loop's statements go to ``stmts``."""
        found_call = first_item(e, lambda call: resolve_call(self.fs, call, self.locals))
        if found_call is None:
            return None
        iterable, generator = found_call
        if generator is None:  # next(iter(xs)): the first item of a loop over xs
            name = self.fresh("item")
            target, elt, ifs = N.store(name), N.load(name), []
        else:
            comp = generator.generators[0]
            renames = {
                n.id: self.fresh(n.id.strip("_") or "v")
                for n in walk(comp.target)
                if isinstance(n, gast.Name)
            }

            def renamed(node):
                return ScopedRenamer(renames).visit(copy.deepcopy(node))

            target, elt, ifs = renamed(comp.target), renamed(generator.elt), comp.ifs
            ifs = [renamed(c) for c in ifs]
        result, found = self.fresh("first"), self.fresh("found")
        body = [N.assign(result, elt, e), N.assign(found, N.const(True), e)]
        body.append(N.located(gast.Break(), e))
        for cond in reversed(ifs):
            body = [N.if_(cond, body, where=e)]
        default = e.args[1] if len(e.args) == 2 else N.const(None)
        loop = gast.For(target=target, iter=iterable, body=body, orelse=[], type_comment=None)
        code = [N.assign(found, N.const(False), e), N.assign(result, default, e)]
        code.append(N.located(loop, e))
        if len(e.args) == 1:  # Python's next raises StopIteration with no default
            stop = gast.Raise(exc=N.call("StopIteration"), cause=None)
            code.append(N.if_(N.not_(N.load(found)), [N.located(stop, e)], where=e))
        stmts.extend(self.block(code))
        return N.load(result)

    def _items_of(self, call, resolve):
        """The loop target unpacking one item of ``call`` to its leaves, and the item."""
        kind = iterator_kind(call, resolve)
        if kind is builtins.reversed and len(call.args) == 1:
            return self._items_of(call.args[0], resolve)
        if kind is builtins.enumerate and call.args:
            parts = [self._leaf(), self._items_of(call.args[0], resolve)]
        elif kind is builtins.zip:
            parts = [self._items_of(a, resolve) for a in call.args]
        else:
            return self._leaf()
        targets = [t for t, _ in parts]
        items = [i for _, i in parts]
        return N.tuple_(targets, ctx=gast.Store()), N.tuple_(items)

    def _leaf(self):
        name = self.fresh("item")
        return N.store(name), N.load(name)
