"""Lists and dicts that a differentiated function builds itself, and their cotangents.

The normalizer writes ``out.append(v)`` on a list the function created (and the hidden
accumulator of a comprehension) as ``out = list_append(out, v)``. When no earlier state of
the list is read again — neither later in the forward sweep nor by the reverse sweep —
the append happens in place, as Python runs it (``list_append``); otherwise each append
makes a new list (``list_appended``), so every state the reverse sweep reads stays as it
was. The reverse sweep takes the last cotangent off the list's cotangent
(``append_cotangent``): one copy of the cotangent list, then one ``pop`` per append.

>>> xs = []
>>> xs = list_append(xs, 1.0)
>>> xs = list_append(xs, 2.0)
>>> xs
[1.0, 2.0]
>>> rest, last = append_cotangent([0.5, 0.25])
>>> list(rest), last
([0.5], 0.25)
"""

from __future__ import annotations

from .errors import HigherOrderError
from .list_operands import stacked_like
from .registry import transformable
from .tangents import NO_TANGENT, ZERO
from .tangents import CotangentList as _OwnedCotangents


def list_append(xs, value):
    """``xs.append(value)``, returning ``xs`` (the normalizer rebinds the name to it)."""
    xs.append(value)
    return xs


def list_appended(xs, value):
    """A new list: ``xs`` followed by ``value`` (``xs`` is left as it was)."""
    out = list(xs)
    out.append(value)
    return out


def append_cotangent(g):
    """``(cotangent of the list before the append, cotangent of the appended value)``."""
    if g is ZERO or g is NO_TANGENT:
        return ZERO, ZERO
    if type(g) is not _OwnedCotangents:
        g = _OwnedCotangents(g)
    if not g:  # pragma: no cover - a list cotangent is as long as its list
        return g, ZERO
    last = g.pop()
    return g, last


def append_tangent(dxs, xs, dvalue):
    """The tangent of ``list_append(xs, value)`` (``xs`` already holds the new value)."""
    if (dxs is ZERO or dxs is NO_TANGENT) and (dvalue is ZERO or dvalue is NO_TANGENT):
        return ZERO
    if dxs is ZERO or dxs is NO_TANGENT:
        out = _OwnedCotangents([ZERO] * (len(xs) - 1))
    elif type(dxs) is _OwnedCotangents:
        out = dxs
    else:
        out = _OwnedCotangents(dxs)
    out.append(dvalue)
    return out


def appended_tangent(dxs, xs, dvalue):
    """The tangent of ``list_appended(xs, value)`` (a new list, so a new tangent)."""
    if (dxs is ZERO or dxs is NO_TANGENT) and (dvalue is ZERO or dvalue is NO_TANGENT):
        return ZERO
    head = [ZERO] * len(xs) if dxs is ZERO or dxs is NO_TANGENT else list(dxs)
    return head + [dvalue]


def dict_set(d, key, value):
    """``d[key] = value`` on a dict the function created, returning ``d``."""
    d[key] = value
    return d


def dict_set_cotangent(g, key):
    """``(cotangent of the dict before d[key] = v, cotangent of v)``."""
    if g is ZERO or g is NO_TANGENT:
        return ZERO, ZERO
    if key not in g:
        return g, ZERO
    rest = dict(g)
    value = rest.pop(key)
    return rest, value


def dict_set_tangent(dd, d, key, dvalue):
    """The tangent of ``dict_set(d, key, value)``."""
    if (dd is ZERO or dd is NO_TANGENT) and (dvalue is ZERO or dvalue is NO_TANGENT):
        return ZERO
    out = {} if dd is ZERO or dd is NO_TANGENT else dict(dd)
    out[key] = dvalue
    return out


# The functions generated code calls by these names (see transform.normalize).
BUILDERS = {
    "list_append": list_append,
    "list_appended": list_appended,
    "dict_set": dict_set,
}


# -- the cotangent helpers as a gradient that is differentiated again calls them ---------
# Their pullbacks read the list or dict cotangent ``g``, so ``g`` must stay as it was: the
# differentiable-again gradient splits a list's cotangent without popping in place
# (``append_cotangent_split``; ``dict_set_cotangent`` copies already). Each split and its
# join are the other's transpose: derivatives of any order close on these functions.


def append_cotangent_split(g):
    """:func:`append_cotangent` that leaves ``g`` as it was (a new list for the rest)."""
    if g is ZERO or g is NO_TANGENT:
        return ZERO, ZERO
    if not len(g):  # pragma: no cover - a list cotangent is as long as its list
        return list(g), ZERO
    return list(g[:-1]), g[-1]


def append_joined(dy, g):
    """The transpose of :func:`append_cotangent_split`: ``(cotangent of the list before
    the append, cotangent of the value)`` as that of the list ``g`` is the cotangent of."""
    if dy is ZERO or dy is NO_TANGENT or g is ZERO or g is NO_TANGENT:
        return ZERO
    rest, last = dy
    head = [ZERO] * (len(g) - 1) if rest is ZERO or rest is NO_TANGENT else list(rest)
    # (an array's cotangent is an array: see list_operands.stacked_like)
    return stacked_like(head + [last], g)


def dict_joined(dy, g, key):
    """The transpose of :func:`dict_set_cotangent`: ``(cotangent of the dict before
    d[key] = v, cotangent of v)`` as one with the keys of ``g``."""
    if dy is ZERO or dy is NO_TANGENT or g is ZERO or g is NO_TANGENT:
        return ZERO
    rest, value = dy
    out = dict.fromkeys(g, ZERO)
    if rest is not ZERO and rest is not NO_TANGENT:
        out.update(rest)
    if key in out and value is not ZERO and value is not NO_TANGENT:
        out[key] = value
    return out


@transformable
def append_cotangent_pullback(dy, g):
    """The pullback of :func:`append_cotangent` as a transformable function (the split's:
    the two agree wherever ``g`` is a list the call left as it was)."""
    require_unpopped(g)
    return (append_joined(dy, g),)


def require_unpopped(g):
    """Refuse a list cotangent that :func:`append_cotangent` popped in place (one the
    reverse sweep made itself): its length is no longer the one the call saw, which the
    pullback needs. Generated code that is differentiated again never passes one (it
    splits with :func:`append_cotangent_split`); the fast sweeps keep the rule's closure,
    which measured the list before the pop."""
    if type(g) is _OwnedCotangents:
        raise HigherOrderError(
            "pullback: a derivative through append_cotangent of a list cotangent it popped "
            "in place is not supported.\n"
            "Fix: call pullback.containers.append_cotangent_split, which leaves the list as "
            "it was."
        )


@transformable
def append_cotangent_split_pullback(dy, g):
    return (append_joined(dy, g),)


@transformable
def append_joined_pullback(d, dy, g):
    return append_cotangent_split(d), ZERO


@transformable
def dict_set_cotangent_pullback(dy, g, key):
    return dict_joined(dy, g, key), NO_TANGENT


@transformable
def dict_joined_pullback(d, dy, g, key):
    return dict_set_cotangent(d, key), ZERO, NO_TANGENT
