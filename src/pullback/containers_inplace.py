"""Changes of a local list made in place, at O(1) a change, and their rules (issue 11).

:mod:`pullback.transform.list_mutation` writes ``l[i] = v``, ``del l[i]``, ``l.pop(i)`` and
``l.insert(i, v)`` as calls of these functions when
:meth:`~pullback.transform.list_analysis.ContainerAnalysis.in_place` has proved that no
earlier state of the list is read again (by the forward sweep, or by a pullback holding
it); otherwise as rebindings to new lists (slices and concatenation), which keep every
state. For the changes of length the position ``p`` is already checked and made
non-negative by the caller (``range(len(l))[i]``), so each function does exactly what the
list method does.

The pullbacks need no value of the list — only the position and, for ``pop``, the length
before it — so a later change of the same object cannot alter them. They turn the
cotangent of the list after the change into the one before it by the inverse change on the
cotangent list: zero the written slot, take the inserted one out, put a zero back where an
item left. That cotangent is a :class:`~pullback.tangents.CotangentList`, which only the
reverse sweep makes and which one adjoint variable holds at a time (the convention
:func:`pullback.containers.append_cotangent` already pops by): it is changed in place, and
any other list is copied into one first, once. Every pullback is a transformable function
written with these same operations, so second derivatives run through it; there (inside a
rule being differentiated) :func:`own_cotangent` always copies. :func:`expect_kind` refuses,
when it runs, a change the check took for one of a list or dict but whose object is
something else; :func:`list_set` asks it only when the object is not a list.

>>> xs = [1.0, 2.0, 3.0]
>>> list_set(xs, 1, 5.0) is xs, xs
(True, [1.0, 5.0, 3.0])
>>> list_pop(xs, 0, 3)
([5.0, 3.0], 1.0)
>>> g, _, dv = list_set_pullback([0.5, 0.25, 0.125], xs, 1, 5.0)
>>> list(g), dv
([0.5, ZERO, 0.125], 0.25)
"""

from __future__ import annotations

from .errors import UnsupportedCallError
from .registry import transformable
from .tangents import NO_TANGENT, ZERO, CotangentList, add

FAMILY = "containers_mutation"


def expect_kind(container, kind):
    """Refuse, when it runs, a change that the check took for a change of a ``kind``
    ("list" or "dict") but whose object is something else (an array made by ``a + [..]``
    with an array ``a``): the rewrite would compute something else than Python."""
    if type(container) is not (list if kind == "list" else dict):
        raise UnsupportedCallError(
            f"a change of a {kind} ran on a {type(container).__name__}: pullback rewrote it as "
            f"a change of a {kind}, which this value is not. Fix: build the {kind} with "
            f"`{kind}(...)` before changing it (see docs/limitations.md#PB106)."
        )


# -- the changes (the primal) ------------------------------------------------------------
def list_set(xs, p, value):
    """``xs[p] = value`` in place, returning ``xs`` (the normalizer rebinds the name).

    ``p`` may be the user's own index, negative too: the cotangent list has the list's
    length at the write, so ``g[p]`` is the written slot. The check that ``xs`` is the list
    the normalizer took it for is here (once a store, not a statement of its own)."""
    if type(xs) is not list and type(xs) is not CotangentList:
        expect_kind(xs, "list")
    xs[p] = value
    return xs


def list_insert(xs, p, value):
    """``xs.insert(p, value)`` in place (``p`` already clipped as list.insert clips)."""
    xs.insert(p, value)
    return xs


def list_delete(xs, p):
    """``del xs[p]`` in place, returning ``xs``."""
    del xs[p]
    return xs


def list_pop(xs, p, n):
    """``(xs, xs.pop(p))`` in place; ``n`` is ``len(xs)`` before the pop (the pullback's
    cotangent of the list before it, when nothing used the list after)."""
    return xs, xs.pop(p)


def list_take(xs, p):
    """``(xs, xs[p])``: the item ``l[i] op= v`` reads, taken with the list it stays in (the
    store that follows overwrites it), so that its cotangent goes back into that one slot
    (O(1)) instead of through a read's cotangent of the whole list."""
    return xs, xs[p]


def list_add_at(g, p, d):
    """``g[p] += d`` on a cotangent list, in place (``add``: zeros are free)."""
    g[p] = add(g[p], d)
    return g


def pair_first(pair):
    """``pair[0]`` of ``list_pop``'s or ``list_take``'s result: a call whose pullback is the
    pair ``(dy, ZERO)``, so the list's cotangent passes through without being folded."""
    return pair[0]


def pair_second(pair):
    """``pair[1]``: see :func:`pair_first`."""
    return pair[1]


# -- cotangent lists ----------------------------------------------------------------------
def _is_zero(g) -> bool:
    return g is ZERO or g is NO_TANGENT


def own_cotangent(dy, n):
    """``dy`` as a :class:`CotangentList` the caller may change: ``dy`` itself when it is
    one already (the reverse sweep's own), else a copy (``n`` zeros for a zero)."""
    if type(dy) is CotangentList:
        return dy
    if _is_zero(dy):
        return CotangentList([ZERO] * n)
    return CotangentList(dy)


def _own_cotangent_rrule(dy, n):
    # Differentiated again: a copy always (the outer sweep may still read dy).
    y = CotangentList([ZERO] * n) if _is_zero(dy) else CotangentList(dy)

    def own_cotangent_closure(ddy):
        return own_cotangent_pullback(ddy, dy, n)

    return y, own_cotangent_closure


@transformable
def own_cotangent_pullback(ddy, dy, n):
    """``own_cotangent`` is the identity on values."""
    return ddy, NO_TANGENT


# -- pullbacks (transformable: written with the operations above) -----------------------
@transformable
def list_set_pullback(dy, xs, p, value):
    """Cotangents of ``list_set(xs, p, value)``: the written slot's goes to the value, and
    the list before the write gets a zero there (what it held was overwritten)."""
    g = own_cotangent(dy, len(xs))
    dv = g[p]
    g = list_set(g, p, ZERO)
    return g, NO_TANGENT, dv


def list_set_pullback_sweep(dy, xs, p, value):
    """:func:`list_set_pullback` as the sweeps call it (not differentiated again): the
    reverse sweep's own cotangent list changed in place without the helper calls."""
    if type(dy) is CotangentList:
        dv = dy[p]
        dy[p] = ZERO
        return dy, NO_TANGENT, dv
    return list_set_pullback(dy, xs, p, value)


@transformable
def list_insert_pullback(dy, xs, p, value):
    """Cotangents of ``list_insert(xs, p, value)``: the inserted slot's goes to the value."""
    g = own_cotangent(dy, len(xs))
    g, dv = list_pop(g, p, len(g))
    return g, NO_TANGENT, dv


@transformable
def list_delete_pullback(dy, xs, p):
    """The cotangent of the list before ``del xs[p]``: a zero where the item was."""
    g = own_cotangent(dy, len(xs))
    return list_insert(g, p, ZERO), NO_TANGENT


@transformable
def list_pop_pullback(dy, xs, p, n):
    """Cotangents of ``(xs, item) = list_pop(xs, p, n)``: the item's goes back in its slot."""
    dl, dv = dy
    g = own_cotangent(dl, n - 1)
    return list_insert(g, p, dv), NO_TANGENT, NO_TANGENT


@transformable
def list_take_pullback(dy, xs, p):
    """The item's cotangent goes back into its slot (which may have one of its own)."""
    dl, dv = dy
    g = own_cotangent(dl, len(xs))
    return list_add_at(g, p, dv), NO_TANGENT


@transformable
def list_add_at_pullback(dy, g, p, d):
    """``list_add_at`` is linear: the list's cotangent passes, the slot's goes to ``d``."""
    return dy, NO_TANGENT, dy[p]


@transformable
def pair_first_pullback(dy, pair):
    return ((dy, ZERO),)


@transformable
def pair_second_pullback(dy, pair):
    return ((ZERO, dy),)


# -- rules ----------------------------------------------------------------------------------
def _zeros(k):
    return (ZERO,) + (NO_TANGENT,) * k


def _list_set_rrule(xs, p, value):
    def list_set_closure(dy):
        return _zeros(2) if _is_zero(dy) else list_set_pullback(dy, xs, p, value)

    return list_set(xs, p, value), list_set_closure


def _list_insert_rrule(xs, p, value):
    def list_insert_closure(dy):
        return _zeros(2) if _is_zero(dy) else list_insert_pullback(dy, xs, p, value)

    return list_insert(xs, p, value), list_insert_closure


def _list_delete_rrule(xs, p):
    def list_delete_closure(dy):
        return _zeros(1) if _is_zero(dy) else list_delete_pullback(dy, xs, p)

    return list_delete(xs, p), list_delete_closure


def _list_pop_rrule(xs, p, n):
    def list_pop_closure(dy):
        if _is_zero(dy):
            return _zeros(2)
        return list_pop_pullback(dy, xs, p, n)

    return list_pop(xs, p, n), list_pop_closure


def _list_take_rrule(xs, p):
    def list_take_closure(dy):
        return _zeros(1) if _is_zero(dy) else list_take_pullback(dy, xs, p)

    return list_take(xs, p), list_take_closure


def _list_add_at_rrule(g, p, d):
    # Differentiated again (second order): a copy, never the caller's list.
    y = list_add_at(CotangentList(g), p, d)

    def list_add_at_closure(dy):
        return _zeros(2) if _is_zero(dy) else list_add_at_pullback(dy, g, p, d)

    return y, list_add_at_closure


def _pair_rrule(getter, pullback):
    def pair_rrule(pair):
        def pair_closure(dy):
            return (ZERO,) if _is_zero(dy) else pullback(dy, pair)

        return getter(pair), pair_closure

    return pair_rrule


def register(reg):
    """Rules and transformable pullbacks of the in-place list changes."""
    table = (
        (list_set, _list_set_rrule, list_set_pullback),
        (list_insert, _list_insert_rrule, list_insert_pullback),
        (list_delete, _list_delete_rrule, list_delete_pullback),
        (list_pop, _list_pop_rrule, list_pop_pullback),
        (own_cotangent, _own_cotangent_rrule, own_cotangent_pullback),
        (list_take, _list_take_rrule, list_take_pullback),
        (list_add_at, _list_add_at_rrule, list_add_at_pullback),
        (pair_first, _pair_rrule(pair_first, pair_first_pullback), pair_first_pullback),
        (pair_second, _pair_rrule(pair_second, pair_second_pullback), pair_second_pullback),
    )
    for fn, rrule, pullback in table:
        reg.register(fn, rrule, family=FAMILY, trusted=True)
        reg.set_pullback_function(fn, pullback)
