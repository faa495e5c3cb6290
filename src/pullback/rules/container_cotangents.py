"""Rules for the cotangent helpers of lists and dicts that generated gradients call.

A gradient of code that builds a list (a comprehension, ``out.append(v)``, a generator
expression consumed by ``sum``) takes the cotangent of each appended value off the list's
cotangent with ``append_cotangent``, and a dict's with ``dict_set_cotangent``. Both are
linear in that cotangent. With these rules a generated gradient through them can be
differentiated again (``hessian``, ``grad(grad(f))``, ``jvp`` of a gradient); the building
calls themselves (``list_append``, ``dict_set``) are the normalizer's own in the gradient's
code too (transform/free_values.py).

Each rule also gives its tangent (``extra["tangent"]``, see ``rule_tangents.rule_tangent``): the
same split of the tangent list or dict, on a copy, since a tangent list may be read again.

>>> from pullback.containers import append_cotangent
>>> y, back = _append_cotangent_rrule([1.0, 2.0, 3.0])
>>> back(([0.5, 0.25], 4.0))
([0.5, 0.25, 4.0],)
"""

from __future__ import annotations

from ..containers import append_cotangent, dict_set_cotangent
from ..list_operands import stacked_like
from ..tangents import NO_TANGENT, ZERO

FAMILY = "container_cotangents"


def _is_zero(v) -> bool:
    return v is ZERO or v is NO_TANGENT


def _append_cotangent_rrule(g):
    n = None if _is_zero(g) else len(g)  # before the pop (an owned list is popped in place)
    y = append_cotangent(g)

    def append_cotangent_pullback(dy):
        if n is None or _is_zero(dy):
            return (ZERO,)
        rest, last = dy
        head = [ZERO] * (n - 1) if _is_zero(rest) else list(rest)
        # an array's cotangent is an array (a list g, popped or not, gets the list)
        return (stacked_like(head + [last], g),)

    return y, append_cotangent_pullback


def _append_cotangent_tangent(args, tangents, kwargs):
    (d,) = tangents
    if _is_zero(d) or not len(d):
        return ZERO
    d = list(d)
    return d[:-1], d[-1]


def _dict_set_cotangent_rrule(g, key):
    keys = () if _is_zero(g) else tuple(g)  # a dict's cotangent has the dict's keys
    y = dict_set_cotangent(g, key)

    def dict_set_cotangent_pullback(dy):
        if not keys or _is_zero(dy):
            return ZERO, NO_TANGENT
        rest, value = dy
        out = dict.fromkeys(keys, ZERO)
        if not _is_zero(rest):
            out.update(rest)
        if key in out and not _is_zero(value):
            out[key] = value
        return out, NO_TANGENT

    return y, dict_set_cotangent_pullback


def _dict_set_cotangent_tangent(args, tangents, kwargs):
    d = tangents[0]
    if _is_zero(d):
        return ZERO
    rest = dict(d)
    return rest, rest.pop(args[1], ZERO)


def register(reg):
    for fn, rrule, tangent in (
        (append_cotangent, _append_cotangent_rrule, _append_cotangent_tangent),
        (dict_set_cotangent, _dict_set_cotangent_rrule, _dict_set_cotangent_tangent),
    ):
        rule = reg.register(fn, rrule, family=FAMILY, trusted=True)
        rule.extra["tangent"] = tangent
