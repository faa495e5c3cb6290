"""Slice stores and slice deletes on local lists, as gathers (issue 11, PB106).

:mod:`pullback.transform.list_mutation` writes ``l[a:b:c] = s`` and ``del l[a:b:c]`` as a
gather of the list's items (and the new ones) in the order Python leaves them::

    l[a:b:c] = s     _v = list(s); _o = slice_order(len(l), a, b, c, len(_v))
                     l = list_gather(l + _v, _o)
    del l[a:b:c]     _o = slice_keep(len(l), a, b, c); l = list_gather(l, _o)

``slice_order`` and ``slice_keep`` compute the positions (integers: no derivative) with
Python's own rules — a slice of step 1 may change the list's length, an extended slice
needs as many items as it has places (else the ``ValueError`` Python raises), a step of
zero is a ``ValueError``. ``list_gather`` is a new list, so every earlier state stays as
it was; its pullback scatters the cotangents back (``list_scatter``), and each is the
other's transpose, so second derivatives run through them.

>>> slice_order(4, 1, 3, None, 1)
[0, 4, 3]
>>> slice_order(4, None, None, 2, 2)
[4, 1, 5, 3]
>>> slice_keep(5, None, None, -2)
[1, 3]
>>> list_gather([1.0, 2.0, 3.0], [2, 0])
[3.0, 1.0]
>>> list_scatter([0.5, 0.25], [2, 0], 3)
[0.25, ZERO, 0.5]
"""

from __future__ import annotations

from .registry import transformable
from .tangents import NO_TANGENT, ZERO, add

FAMILY = "containers_mutation"


def slice_order(n, lower, upper, step, m):
    """Where each item of ``l[lower:upper:step] = s`` comes from, in ``l + list(s)``
    (``n`` items then the ``m`` new ones)."""
    start, stop, stride = slice(lower, upper, step).indices(n)
    if stride == 1:
        stop = max(stop, start)
        return [*range(start), *range(n, n + m), *range(stop, n)]
    places = range(start, stop, stride)
    if len(places) != m:
        raise ValueError(
            f"attempt to assign sequence of size {m} to extended slice of size {len(places)}"
        )
    order = list(range(n))
    for k, q in enumerate(places):
        order[q] = n + k
    return order


def slice_keep(n, lower, upper, step):
    """The positions ``del l[lower:upper:step]`` keeps, in order."""
    gone = set(range(*slice(lower, upper, step).indices(n)))
    return [q for q in range(n) if q not in gone]


def list_gather(xs, order):
    """``[xs[q] for q in order]``: a new list."""
    return [xs[q] for q in order]


def list_scatter(dy, order, n):
    """The transpose of :func:`list_gather` on cotangents: ``n`` slots, ``dy[k]`` added to
    slot ``order[k]``."""
    out = [ZERO] * n
    for k, q in enumerate(order):
        out[q] = add(out[q], dy[k])
    return out


@transformable
def list_gather_pullback(dy, xs, order):
    return list_scatter(dy, order, len(xs)), NO_TANGENT


@transformable
def list_scatter_pullback(ddy, dy, order, n):
    return list_gather(ddy, order), NO_TANGENT, NO_TANGENT


def _is_zero(g) -> bool:
    return g is ZERO or g is NO_TANGENT


def _list_gather_rrule(xs, order):
    def list_gather_closure(dy):
        return (ZERO, NO_TANGENT) if _is_zero(dy) else list_gather_pullback(dy, xs, order)

    return list_gather(xs, order), list_gather_closure


def _list_scatter_rrule(dy, order, n):
    def list_scatter_closure(ddy):
        if _is_zero(ddy):
            return ZERO, NO_TANGENT, NO_TANGENT
        return list_scatter_pullback(ddy, dy, order, n)

    return list_scatter(dy, order, n), list_scatter_closure


def register(reg):
    """The gather and its transpose (differentiable), the positions (not)."""
    reg.register(list_gather, _list_gather_rrule, family=FAMILY, trusted=True)
    reg.set_pullback_function(list_gather, list_gather_pullback)
    reg.register(list_scatter, _list_scatter_rrule, family=FAMILY, trusted=True)
    reg.set_pullback_function(list_scatter, list_scatter_pullback)
    reg.non_differentiable(slice_order, family=FAMILY, trusted=True)
    reg.non_differentiable(slice_keep, family=FAMILY, trusted=True)
