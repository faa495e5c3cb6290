"""Transformable pullbacks for the reverse of calls found at run time
(``dynamic_vjps.function_vjp``/``method_vjp``, see :mod:`pullback.dynamic_reverse`):
with them a gradient differentiated twice (a third derivative, and any order after it)
runs through a call whose callee is known only when it runs.

Registered by :mod:`.star_call_rules` after the closure rules of ``function_vjp`` and
``method_vjp`` (rules/pullback_runtime.py), which these functions agree with.
"""

from __future__ import annotations

import numpy as np

from .. import dynamic_attrs, dynamic_calls, dynamic_vjps, runtime, scalar_vjps
from .. import dynamic_reverse as rev
from ..object_items import is_items_name, items_function
from ..operator_dispatch import (
    chosen_method,
    is_keys_name,
    is_operator_name,
    is_slice_name,
    key_cotangents,
    plain_function,
    slice_of,
)
from ..records import field_of
from ..records_dataclasses import field_slots
from ..registry import transformable
from ..tangents import NO_TANGENT, ZERO, getitem_cotangent
from .scipy_stats_frozen_pullbacks import frozen_parameters, register_parameters
from .user_function_calls import has_tangent, user_function_vjp


def receives_cotangent(site, obj, name, args, kwargs):
    """Whether ``obj.name(...)``'s vjp function gives the receiver a cotangent through a
    form in its parameters (a frozen distribution's). A dict view's vjp function gives the
    dict one too, but is itself transformable: the general reverse covers it."""
    if dynamic_calls._found_without_receiver(site, obj, name) is not None:
        return False
    function = dynamic_vjps.vjp_function(site, obj, name, args, kwargs)
    return hasattr(function, "__pullback_parameter_form__")


def parameter_form(site, obj, name, args, kwargs):
    """``(form, extra)`` of the pullback function ``F`` of ``obj.name(x)`` whose receiver
    gets a cotangent (a frozen distribution's method): ``F(g, obj, x)`` is
    ``form(g, x, frozen_parameters(obj), obj, extra)`` (the unfrozen method's pullback);
    where ``F`` names keywords (``__pullback_parameter_keywords__``), ``extra`` is
    ``(extra, their values in this call)``."""
    function = dynamic_vjps.vjp_function(site, obj, name, args, kwargs)
    form, extra = function.__pullback_parameter_form__
    keywords = getattr(function, "__pullback_parameter_keywords__", None)
    if keywords is not None:  # the method's keywords reach the form too (a frozen cdf's rng=)
        extra = (extra, tuple(kwargs.get(k) for k in keywords))
    return form, extra


def output_zeros(obj, name, args):
    """Zeros shaped like ``obj.name(*args)``, in place of a ``ZERO`` cotangent of it (the
    pullback functions of frozen methods compute with their cotangent)."""
    return np.zeros_like(np.asarray(getattr(obj, name)(*args), dtype=float))


@transformable
def receiver_method_reverse(dy, site, g, obj, name, args, kwargs):
    """method_vjp's pullback where the receiver gets a cotangent (a frozen distribution,
    ``norm(loc, scale).logpdf(x)``): the vjp of its method's pullback taken through the
    form in the parameters (``norm.logpdf(x, loc, scale)``'s pullback), so the object
    itself is no differentiated value; its cotangent is the parameters' tuple, which
    ``frozen_parameters``'s rule gives it where this function is differentiated again."""
    form, extra = parameter_form(site, obj, name, args, kwargs)
    params = frozen_parameters(obj)
    if g is ZERO:  # a cotangent no use reached: zeros the pullback takes (its g's is c[0])
        g = output_zeros(obj, name, args)
    c = user_function_vjp(dy, form, g, args[0], params, obj, extra)
    dparams = c[2]
    out = tuple(
        dparams[k] if has_tangent(params[k]) and dparams is not ZERO else NO_TANGENT
        for k in range(len(params))
    )
    return NO_TANGENT, c[0], out, NO_TANGENT, c[1]


def field_object_place(site, obj, name):
    """Where ``obj.name`` sits in ``obj``'s cotangent when it is a record with its own
    ``__call__`` (``self.layer(x)``, dynamic_calls.record_field_object), else None."""
    alone = dynamic_calls._found_without_receiver(site, obj, name)
    return None if alone is None else dynamic_calls.record_field_object(obj, name, alone)


@transformable
def field_object_reverse(dy, site, g, obj, name, k, args, kwargs):
    # method_vjp_pullback for self.layer(x): that of layer.__call__(x), the layer's
    # cotangents moved to and from place k of obj's
    inner = ZERO
    if dy is not ZERO and dy is not NO_TANGENT:
        inner = (runtime.tuple_item(dy[0], k),) + tuple(dy[1:])
    field = field_of(obj, name)  # (its rule: a derivative of this reverse reaches obj)
    c = method_vjp_pullback(inner, site, g, field, "__call__", *args, **kwargs)
    dobj = getitem_cotangent(ZERO, field_slots(obj), k, c[2])
    return (NO_TANGENT, c[1], dobj, NO_TANGENT) + tuple(c[4:])


@transformable
def method_vjp_pullback(dy, site, g, obj, name, *args, **kwargs):
    # As dynamic_reverse.function_vjp_pullback, for method_vjp(site, g, obj, name, *args);
    # the receiver gets one where the vjp function differentiates it.
    if is_operator_name(name):  # `a + b` of unknown kinds: the method Python runs
        return operator_vjp_reverse(dy, site, g, obj, name, *args)
    if receives_cotangent(site, obj, name, args, kwargs):
        return receiver_method_reverse(dy, site, g, obj, name, args, kwargs)
    k = field_object_place(site, obj, name)
    if k is not None:  # self.layer(x): the layer's __call__, its cotangent obj's field k
        return field_object_reverse(dy, site, g, obj, name, k, args, kwargs)
    holder = obj
    field = name
    alone = dynamic_attrs.held_callee(site, obj, name)
    if alone is not None:  # self.act = inner.apply: the bound method's, moved to the field
        dy = dynamic_attrs.held_field(dy, holder, field)
        obj = dynamic_attrs.attribute_of(holder, field)  # alone, read with a derivative
        name = "__call__"
    function, head, keywords, pad, drop = rev.method_reverse(site, obj, name, args, kwargs)
    # head is the receiver (a record): named here, not through method_reverse (which has
    # no derivative), so that a derivative of this reverse reaches obj -- or, for a bound
    # method (held in a field or found by name), the record it runs on
    if pad == 0 and len(head) == 1 and head[0] is obj:
        head = (obj,)
    elif pad == 0 and len(head) == 1 and dynamic_attrs.is_bound_to(obj, head[0]):
        head = (dynamic_attrs.bound_self(obj),)
    dg, dinputs = rev.reverse_through(dy, site, g, function, head, args, keywords, pad, drop)
    dobj = NO_TANGENT
    if pad < len(head):  # head is the receiver (alone, Python passes none: pad is all)
        dobj = dinputs[0]
    if alone is not None:
        dobj = dynamic_attrs.held_cotangent(dobj, holder, field)
    return (NO_TANGENT, dg, dobj, NO_TANGENT) + dinputs[len(head) :]


@transformable
def operator_vjp_reverse(dy, site, g, obj, name, *args):
    """method_vjp_pullback for an operator (operator_dispatch.py): that of the method
    Python runs (the operands' places swapped for a reflected one), or function_vjp's of
    the operator as a Python function."""
    if is_items_name(name):  # for c in v: the items version of v's __iter__ (object_items)
        if dy is not ZERO and dy is not NO_TANGENT:
            dy = (dy[0],)
        c = rev.function_vjp_pullback(dy, site, g, items_function(obj, name), obj)
        return (NO_TANGENT, c[1], c[3], NO_TANGENT) + (NO_TANGENT,) * len(args)
    if is_keys_name(name):  # d[i, j]: d.__getitem__((i, j)), the key's items' cotangents
        if dy is not ZERO and dy is not NO_TANGENT:
            dy = (dy[0], tuple(dy[1:]))
        c = operator_vjp_reverse(dy, site, g, obj, "__pb_getitem__", tuple(args))
        return (NO_TANGENT, c[1], c[2], NO_TANGENT) + key_cotangents(c[4], len(args))
    if is_slice_name(name):  # d[lo:hi:step]: d.__getitem__(slice(lo, hi, step))
        if dy is not ZERO and dy is not NO_TANGENT:
            dy = (dy[0], NO_TANGENT)
        c = operator_vjp_reverse(dy, site, g, obj, "__pb_getitem__", slice_of(args))
        return (NO_TANGENT, c[1], c[2], NO_TANGENT, NO_TANGENT, NO_TANGENT, NO_TANGENT)
    found = chosen_method(obj, name, args)
    if found is None:
        c = rev.function_vjp_pullback(dy, site, g, plain_function(name), obj, *args)
        return (NO_TANGENT, c[1], c[3], NO_TANGENT) + tuple(c[4:])
    method, swapped = found
    if not swapped:
        return method_vjp_pullback(dy, site, g, obj, method, *args)
    if dy is not ZERO and dy is not NO_TANGENT:
        dy = (dy[1], dy[0])
    c = method_vjp_pullback(dy, site, g, args[0], method, obj)
    return (NO_TANGENT, c[1], c[4], NO_TANGENT, c[2])


FAMILY = "star_call_rules"


def _linear_rrule(fn, pullback):
    """The rule of a helper linear in its second argument (``fn(function, c, *rest)``)."""

    def linear_rrule(function, c, *rest):
        y = fn(function, c, *rest)

        def linear_pullback(d):
            if d is ZERO or d is NO_TANGENT:
                return (NO_TANGENT, ZERO) + (NO_TANGENT,) * len(rest)
            return pullback(d, function, c, *rest)

        return y, linear_pullback

    return linear_rrule


def _vjp_apply_rrule(site, dy, function, inputs, keywords):
    y = rev.vjp_apply(site, dy, function, inputs, keywords)

    def vjp_apply_closure(d):
        if d is ZERO or d is NO_TANGENT:
            return NO_TANGENT, ZERO, NO_TANGENT, ZERO, NO_TANGENT
        return rev.vjp_apply_pullback(d, site, dy, function, inputs, keywords)

    return y, vjp_apply_closure


def register_pullbacks(reg):
    for fn, pullback in (
        (rev.vjp_layout, rev.vjp_layout_pullback),
        (rev.vjp_output, rev.vjp_output_pullback),
    ):
        reg.register(fn, _linear_rrule(fn, pullback), family=FAMILY, trusted=True)
        reg.set_pullback_function(fn, pullback)
    reg.register(rev.vjp_apply, _vjp_apply_rrule, family=FAMILY, trusted=True)
    reg.set_pullback_function(rev.vjp_apply, rev.vjp_apply_pullback)
    reg.set_pullback_function(dynamic_vjps.function_vjp, rev.function_vjp_pullback)
    reg.set_pullback_function(dynamic_vjps.method_vjp, method_vjp_pullback)
    helpers = (
        rev.function_reverse,
        rev.method_reverse,
        rev.is_own_receiver,
        rev.outer_function,
        receives_cotangent,
        field_object_place,
        parameter_form,
        output_zeros,
        scalar_vjps.require_real,
        is_operator_name,
        chosen_method,
        plain_function,
        is_slice_name,
        slice_of,
        is_items_name,
        items_function,
        is_keys_name,
    )
    reg.non_differentiable(*helpers, family=FAMILY, trusted=True)
    register_parameters(reg)  # receiver_method_reverse reads it (SciPy imported or not)
