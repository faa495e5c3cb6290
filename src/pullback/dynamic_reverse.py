"""The reverse of the reverse of a call found at run time, written in the differentiable
subset, so that derivatives of any order run through it.

A gradient that is differentiated again computes the reverse of ``fn(*args)`` (and of
``obj.name(*args)``) found at run time with :func:`~.dynamic_vjps.function_vjp`
(:func:`~.dynamic_vjps.method_vjp`): ``F(g, *args)``, with ``F`` the callee's vjp
function, its cotangents laid out one per argument. Their pullbacks below are again a
``function_vjp``, of ``F`` itself: ``F``'s generated vjp function (a vjp of a vjp) runs.
A derivative of those pullbacks meets ``function_vjp`` again, so the derivatives of every
order close on these few functions (each order adds one level of generated vjp): the
fixed point a third or fourth derivative through a call found at run time needs.

Between the cotangents laid out per argument and those ``F`` itself returns (only the
arguments it differentiates, a ``*args`` parameter's as one tuple) stand two linear maps,
each the other's transpose: :func:`vjp_layout` (``F``'s output laid out) and
:func:`vjp_output` (back). Their pullbacks are each other, so they close too.
"""

from __future__ import annotations

from .call_cotangents import bound_arguments, gather_cotangents, spread_cotangents
from .dynamic_attrs import method_receiver
from .dynamic_calls import _found_without_receiver, array_method_value
from .dynamic_vjps import gives_receiver_cotangent, vjp_function
from .registry import transformable
from .tangents import NO_TANGENT, ZERO, is_zero


def vjp_layout(function, c, pad, drop):
    """``function``'s own cotangents ``c`` laid out one per argument (see
    :func:`~.call_cotangents.spread_cotangents`), the first ``pad`` dropped (the leading
    arguments of a bound callable) and ``drop`` ``NO_TANGENT`` slots put first (the
    receiver of a method whose vjp function gives it none)."""
    if is_zero(c):
        return ZERO
    return (NO_TANGENT,) * drop + spread_cotangents(function, c)[pad:]


def vjp_output(function, dy, pad, drop):
    """The transpose of :func:`vjp_layout`: cotangents laid out per argument as those of
    ``function``'s own output."""
    if is_zero(dy):
        return ZERO
    return gather_cotangents(function, (ZERO,) * pad + tuple(dy)[drop:])


@transformable
def vjp_layout_pullback(d, function, c, pad, drop):
    return NO_TANGENT, vjp_output(function, d, pad, drop), NO_TANGENT, NO_TANGENT


@transformable
def vjp_output_pullback(d, function, dy, pad, drop):
    return NO_TANGENT, vjp_layout(function, d, pad, drop), NO_TANGENT, NO_TANGENT


def function_reverse(site, fn, args, kwargs):
    """``(F, leading arguments, keywords)`` for ``function_vjp(site, g, fn, *args)``:
    ``F(g, *leading, *args, **keywords)`` is the callee's vjp function (a callable object,
    bound method or partial: its Python function with its own arguments first)."""
    bound_array = array_method_value(fn)
    if bound_array is not None:  # f = W.dot: the method's, W a bound argument
        function, head, keywords, _, drop = method_reverse(site, *bound_array, args, kwargs)
        if drop == 0:  # (its rule's pullback function gives W a slot, as bound ones get)
            return function, head, keywords
    bound = bound_arguments(fn, site.registry)
    if bound is None:
        return vjp_function(site, None, fn, args, kwargs), (), kwargs
    target, head, fixed = bound
    keywords = {**fixed, **kwargs}
    return vjp_function(site, None, target, (*head, *args), keywords), head, keywords


def method_reverse(site, obj, name, args, kwargs):
    """``(F, leading arguments, keywords, pad, drop)`` for ``method_vjp(site, g, obj,
    name, *args)``: as :func:`function_reverse`; ``method_vjp``'s value is
    ``vjp_layout(F, F(g, *leading, *args), pad, drop)``."""
    receiver = method_receiver(obj, name)
    if receiver is not None:  # a record's bound method called as a value: its method
        return method_reverse(site, *receiver, args, kwargs)
    alone = _found_without_receiver(site, obj, name)
    if alone is not None:  # type(self).f(self, x), self.act_fn(z): Python passes no obj
        function, head, keywords = function_reverse(site, alone, args, kwargs)
        return function, head, keywords, len(head), 1
    function = vjp_function(site, obj, name, args, kwargs)
    slot = gives_receiver_cotangent(site, obj, name, function)
    slot = slot or getattr(function, "__pullback_record_receiver__", False)  # a record's
    return function, (obj,), kwargs, 0, 0 if slot else 1


def vjp_apply(site, dy, function, inputs, keywords):
    """``function(dy, *inputs, **keywords)`` (a vjp function) laid out one cotangent per
    input: :func:`~.dynamic_vjps.function_vjp` once the vjp function is known, its
    arguments in one tuple (so that its own pullback, below, needs no star-call)."""
    return spread_cotangents(function, function(dy, *inputs, **keywords))


def outer_function(site, function, inputs, keywords):
    """The vjp function of the vjp function ``function`` called with ``inputs``."""
    return vjp_function(site, None, function, inputs, keywords)


@transformable
def vjp_apply_pullback(d, site, dy, function, inputs, keywords):
    return raw_vjp_pullback(vjp_output(function, d, 0, 0), site, dy, function, inputs, keywords)


@transformable
def raw_vjp_pullback(own, site, dy, function, inputs, keywords):
    # function(dy, *inputs) pulled back from ``own`` (a cotangent of its own output): by
    # function's own vjp function, through vjp_apply again (one level of generated vjp
    # more per order), the cotangents of (site, dy, function, inputs, keywords).
    arguments = (dy,) + inputs
    outer = outer_function(site, function, arguments, keywords)
    c = vjp_apply(site, own, outer, arguments, keywords)
    return NO_TANGENT, c[0], NO_TANGENT, c[1:], NO_TANGENT


@transformable
def reverse_through(dy, site, g, function, head, args, keywords, pad, drop):
    """``(cotangent of g, cotangents of head + args)`` of ``vjp_layout(function,
    function(g, *head, *args, **keywords), pad, drop)`` pulled back from ``dy``."""
    own = vjp_output(function, dy, pad, drop)
    c = raw_vjp_pullback(own, site, g, function, head + args, keywords)
    return c[1], c[3]


def is_own_receiver(head, fn) -> bool:
    """Whether the leading arguments ``head`` of a callable ``fn`` are ``fn`` itself: a
    library object called through its class's rule (call_cotangents.bound_arguments),
    whose cotangent is then the receiver's the rule's pullback gives."""
    return len(head) == 1 and fn is not None and head[0] is fn


@transformable
def function_vjp_pullback(dy, site, g, fn, *args, **kwargs):
    # function_vjp(site, g, fn, *args) is vjp_layout(F, F(g, *args)), F the callee's vjp
    # function: its pullback is F's own vjp (raw_vjp_pullback), of the cotangent dy
    # brought back to F's output. A library object called through its class's rule (an
    # interp1d's f(q)) gets its receiver's cotangent.
    function, head, keywords = function_reverse(site, fn, args, kwargs)
    own = is_own_receiver(head, fn)
    if own:  # named here, not through function_reverse (which has no derivative), so
        head = (fn,)  # that a derivative of this reverse reaches fn
    dg, dinputs = reverse_through(dy, site, g, function, head, args, keywords, len(head), 0)
    dfn = NO_TANGENT
    if own:
        dfn = dinputs[0]
    return (NO_TANGENT, dg, dfn) + dinputs[len(head) :]
