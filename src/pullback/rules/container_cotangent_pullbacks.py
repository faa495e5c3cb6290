"""Transformable pullbacks for the cotangent helpers of lists and dicts
(:mod:`pullback.containers`), so that a gradient of code that builds lists and dicts
(appends, comprehensions, ``d[k] = v``) can be differentiated twice and more: a split and
its join are each other's pullback, so every order closes on them.

Registered after :mod:`.container_cotangents` (whose rules of ``dict_set_cotangent`` and
``append_cotangent`` get their pullback functions here).

>>> from pullback.containers import append_cotangent_split, append_joined
>>> append_joined(append_cotangent_split([1.0, 2.0, 3.0]), [0.0, 0.0, 0.0])
[1.0, 2.0, 3.0]
"""

from __future__ import annotations

from .. import containers as c
from .. import dict_views as views
from ..tangents import NO_TANGENT, ZERO

FAMILY = "container_cotangent_pullbacks"


def _linear_rrule(fn, pullback, n):
    """The rule of ``fn`` (``n`` arguments), linear in its first, from its pullback."""

    def linear_rrule(*args):
        def linear_pullback(d):
            if d is ZERO or d is NO_TANGENT:
                return (ZERO,) + (NO_TANGENT,) * (n - 1)
            return pullback(d, *args)

        return fn(*args), linear_pullback

    return linear_rrule


def register(reg):
    for fn, pullback, n in (
        (c.append_cotangent_split, c.append_cotangent_split_pullback, 1),
        (c.append_joined, c.append_joined_pullback, 2),
        (c.dict_joined, c.dict_joined_pullback, 3),
        # a dict view's cotangent (params.items() found at run time) and its transpose
        (views.view_cotangent_dict, views.view_cotangent_dict_pullback, 3),
        (views.dict_cotangent_view, views.dict_cotangent_view_pullback, 3),
    ):
        reg.register(fn, _linear_rrule(fn, pullback, n), family=FAMILY, trusted=True)
        reg.set_pullback_function(fn, pullback)
    reg.set_pullback_function(c.dict_set_cotangent, c.dict_set_cotangent_pullback)
    # append_cotangent pops a list cotangent the reverse sweep made in place: the sweeps
    # keep its rule's closure (which measured the list before the pop); code that is
    # differentiated again calls the function, which refuses such a list
    reg.set_pullback_function(c.append_cotangent, c.append_cotangent_pullback)
    reg.lookup(c.append_cotangent).extra["sweeps_keep_closure"] = True
    reg.non_differentiable(c.require_unpopped, family=FAMILY, trusted=True)
