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
