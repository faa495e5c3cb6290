"""Forward mode through calls: the tangent of a call through a rule (from its pullback,
exactly), and of a call whose function or method is found only when it runs (split from
:mod:`pullback.runtime`, whose sequence helpers it uses).

>>> import numpy as np
>>> from pullback.registry import default_registry
>>> y, t = rule_tangent(default_registry().lookup(np.sin), (0.0,), (2.0,), {})
>>> float(y), float(t)
(0.0, 2.0)
"""

from __future__ import annotations

import functools
import inspect
import types

import numpy as np

from .backends import as_array
from .call_cotangents import bound_arguments
from .callables import library_call_function
from .dict_views import dict_view_tangent, is_dict_view_call
from .dynamic_attrs import attribute_tangent, held_method, is_object, method_receiver
from .dynamic_calls import (
    _call_namespace_function,
    array_method_value,
    lookup_attribute,
    record_field_object,
    unbound_class_callable,
)
from .errors import PullbackError
from .object_tangents import ObjectTangent
from .operator_dispatch import is_operator_name, operator_tangent
from .plain_classes import constructor_of
from .records_dataclasses import fields_of, is_dataclass_value
from .records_named import record_method_call
from .registry import ENTRY_POINTS, NONDIFF, REFUSED_WHEN_VARIED, qualified_name
from .runtime import parameter_places, same_sequence
from .tangents import NO_TANGENT, ZERO, CotangentList, densify, is_zero


def _zeros_like_output(y):
    if isinstance(y, (tuple, list)):
        return same_sequence(y, (_zeros_like_output(v) for v in y))
    if isinstance(y, dict):  # a dict's cotangent: one per key
        return {k: _zeros_like_output(v) for k, v in y.items()}
    if is_dataclass_value(y):  # a record's (a plain class's object): the tuple of its fields'
        return tuple(_zeros_like_output(v) for v in fields_of(y))
    if isinstance(y, np.ndarray):
        return np.zeros_like(y)
    if isinstance(y, (int, float, complex, np.number)) and not isinstance(y, bool):
        return 0.0 * y
    # what carries no tangent: a solver result's message, flags, None, a callable
    return NO_TANGENT


def rule_tangent(rule, args, tangents, kwargs, keyword_tangents=None):
    """``(y, J v)`` for a call through a rule, from its pullback (exact).

    With a transformable pullback function, ``J v`` is the pullback transposed (reverse
    mode on the pullback, which is linear in its cotangent). Otherwise each output element's
    row of ``J`` comes from pulling back a basis cotangent. ``keyword_tangents`` holds the
    tangents of differentiated keywords (``rule.extra["keyword_cotangents"]``).
    """
    y, pullback = rule.rrule(*args, **kwargs)
    moving = {k: d for k, d in (keyword_tangents or {}).items() if not is_zero(d)}
    if all(is_zero(d) for d in tangents) and not moving:
        return y, ZERO
    tangent = rule.extra.get("tangent")
    if tangent is not None and not moving:  # a rule that gives its tangent itself
        return y, tangent(args, tangents, kwargs)
    tangent = rule.extra.get("output_tangent")
    if tangent is not None:  # the same, from its output and the keywords' tangents too
        return y, tangent(y, args, tangents, kwargs, moving)
    places = parameter_places(rule.pullback_fn) if rule.pullback_fn is not None else {}
    if (
        rule.pullback_fn_accepts(len(args), kwargs)
        and not isinstance(y, (tuple, list))
        and all(k in places for k in moving)
        and not any(type(d) is ObjectTangent for d in tangents)
    ):
        try:
            dy0 = _zeros_like_output(y)
            cots, back = ENTRY_POINTS.vjp(rule.pullback_fn, dy0, *args, wrt=0, **kwargs)
            # The pullback gives one cotangent per positional parameter it has; a keyword's
            # is at its parameter's place.
            w = [ZERO] * len(cots)
            for k, d in list(enumerate(tangents)) + [(places[n], d) for n, d in moving.items()]:
                if k < len(w) and not is_zero(d) and not is_zero(cots[k]):
                    w[k] = d
            return y, back(tuple(_unowned(d) for d in w))
        except PullbackError:
            pass  # a case the transformable pullback leaves to the rule: by rows below
    # the closure returns (*positional, {keyword: cotangent}) for differentiated keywords
    every = tuple(tangents) + ((moving,) if moving else ())
    attributes = rule.extra.get("result_attributes")
    return y, _tangent_by_rows(y, pullback, args, every, attributes)


def _unowned(d):
    """A tangent handed to a reverse sweep as a cotangent, with each list the forward sweep
    built by appends (a :class:`CotangentList`, which a reverse sweep may ``pop`` from) as a
    plain list: the sweep copies it before taking items off, and the tangent stays whole for
    its later reads (``statistics.mean(vals) + vals[1]``)."""
    if type(d) is CotangentList:
        return [_unowned(v) for v in d]
    if type(d) is tuple or type(d) is list:
        return type(d)(_unowned(v) for v in d)
    return d


def _tangent_by_rows(y, pullback, args, tangents, attributes=None, nested=False):
    if attributes is not None and not isinstance(y, (tuple, list)) and is_object(y):
        y = {key: getattr(y, key) for key in attributes if hasattr(y, key)}  # its data
    if isinstance(y, dict) and attributes is not None:
        # a solver's result read by attribute (sol.y), an object whose class's rule
        # declares its data (records.declared_attribute): the entries the rule declares
        # differentiable, each from pullbacks of a cotangent holding that entry alone
        out = {}
        for key in attributes:
            if key in y:

                def entry_pullback(dyk, key=key):
                    return pullback({key: dyk})

                out[key] = _tangent_by_rows(y[key], entry_pullback, args, tangents)
        return out
    if type(y) is dict:  # a dict (a declared object's cotangent, of a rule's pullback
        # differentiated again): each entry's rows, from a cotangent one per key
        entries = {}
        for key in y:

            def item_pullback(dyk, key=key):
                return pullback({k: dyk if k == key else ZERO for k in y})

            entries[key] = _tangent_by_rows(y[key], item_pullback, args, tangents)
        return entries
    if isinstance(y, (tuple, list)):
        parts = []
        for k, yk in enumerate(y):

            def part_pullback(dyk, k=k):
                dy = [ZERO] * len(y)
                dy[k] = dyk
                return pullback(same_sequence(y, dy))

            parts.append(_tangent_by_rows(yk, part_pullback, args, tangents, nested=True))
        return same_sequence(y, parts)
    if type(y) is types.MethodType and is_dataclass_value(y.__self__):
        # a record's bound method in a list ([o.energy]): its tangent is the record's
        return _tangent_by_rows(y.__self__, pullback, args, tangents)
    if is_dataclass_value(y):  # a record in a list (list(layers)): its fields' tangents
        fields = fields_of(y)
        parts = []
        for k, v in enumerate(fields):

            def field_pullback(dvk, k=k):
                dv = [ZERO] * len(fields)
                dv[k] = dvk
                return pullback(tuple(dv))

            parts.append(_tangent_by_rows(v, field_pullback, args, tangents, nested=True))
        return tuple(parts)
    if isinstance(y, (str, bytes)):  # a key among the values (dict.items()): no tangent
        return ZERO
    if not nested and _holds_data(y):  # an object the rule returns, its data undeclared
        # (an object inside a list or a record a rule gives back, list(layers), is the
        # caller's own value passed through: its fields' tangents travel with it there)
        if all(is_zero(d) for d in tangents):
            return ZERO
        return ObjectTangent.placed(type(y).__name__, pullback, tangents)
    if not _is_number_or_array(y):  # a range, None, a function: no tangent
        return ZERO
    shape = np.shape(y)
    dtype = np.result_type(y) if np.result_type(y).kind in "fc" else np.dtype(np.float64)
    out = np.zeros(shape, dtype=dtype)
    flat = out.reshape(-1)
    # A cotangent e_k gives Re(dy_k) (<c, d> = Re sum conj(c) d); for a complex y, 1j e_k
    # gives Im(dy_k): a real-linear pullback sees the two parts apart.
    units = (1.0, 1j) if dtype.kind == "c" else (1.0,)
    for k in range(flat.size):
        for unit in units:
            e = np.zeros(shape, dtype=dtype)
            e.flat[k] = unit
            cots = pullback(e if shape else dtype.type(unit))
            total = 0.0
            for c, d in zip(cots, tangents, strict=False):
                total = total + _inner(c, d)
            flat[k] += total if unit == 1.0 else 1j * total
    return out if shape else out[()]


def _is_number_or_array(y) -> bool:
    if isinstance(y, (bool, np.bool_)):
        return False
    if isinstance(y, (int, float, complex, np.number)):
        return True
    return isinstance(y, np.ndarray) and y.dtype.kind in "iufc"


def _holds_data(y) -> bool:
    """An instance of a class with fields (a ``__dict__`` or ``__slots__``), whose data may
    move with the rule's arguments: not a function, module, class or builtin value."""
    if not is_object(y) or isinstance(y, (type, types.ModuleType, range, slice)):
        return False
    if isinstance(y, (types.FunctionType, types.BuiltinFunctionType, types.MethodType)):
        return False
    return hasattr(y, "__dict__") or bool(getattr(type(y), "__slots__", ()))


def _inner(c, d):
    """``Re sum(conj(c) * d)`` over matching leaves of a cotangent and a tangent (zeros
    skipped): the real inner product a complex cotangent (dL/dx + i dL/dy) pairs with."""
    if is_zero(c) or is_zero(d) or c is None or d is None:
        return 0.0
    if type(d) is ObjectTangent:  # an object's tangent pairs through its rule's pullback
        return d.paired_with(c, _inner)
    if isinstance(c, (tuple, list)):
        return sum(_inner(ci, di) for ci, di in zip(c, d, strict=False))
    if isinstance(c, dict):
        return sum(_inner(v, d.get(k, ZERO)) for k, v in c.items())
    c, d = as_array(densify(c)), as_array(d)
    if c.dtype.kind == "c" or d.dtype.kind == "c":
        return np.real(np.sum(np.conj(c) * d))
    return np.sum(c * d)


def function_tangent(site, fn, args, tangents, kwargs):
    """``(y, dy)`` for a call whose function is known only at run time."""
    rule = site.registry.lookup(fn)
    if rule is not None:
        if rule.kind == NONDIFF:
            if rule.extra.get(REFUSED_WHEN_VARIED) and not all(is_zero(t) for t in tangents):
                raise site.varied_random_draw(rule)  # rng.normal(mu, s): a zero is wrong
            return fn(*args, **kwargs), ZERO
        return rule_tangent(rule, args, tangents, kwargs)
    bound_array = array_method_value(fn)
    if bound_array is not None:  # f = W.dot: W.dot(...), W bound (no tangent)
        array, name = bound_array
        return method_tangent(site, array, ZERO, name, args, tangents, kwargs)
    if isinstance(fn, functools.partial):  # its function, the bound arguments first
        n = len(fn.args)
        keywords = {**fn.keywords, **kwargs}
        bound = (ZERO,) * n + tuple(tangents)
        return function_tangent(site, fn.func, (*fn.args, *args), bound, keywords)
    if isinstance(fn, type):  # a plain class found at run time (Lin(*c)): its constructor
        made = constructor_of(fn)  # function, as reverse mode runs it (plain_classes.py)
        if isinstance(made, tuple):  # (why, fix): its construction cannot be followed
            raise site.refused_class(fn, *made)
        fn = made if isinstance(made, types.FunctionType) else fn
    if isinstance(fn, types.FunctionType):
        return site.adjoint_of(fn)(args, tangents, kwargs)
    if isinstance(fn, type):  # cls(w) of a plain class found at run time (a @classmethod)
        made = constructor_of(fn)  # its constructor function, as reverse mode runs it
        if isinstance(made, tuple):
            raise site.refused_class(fn, *made)
        if isinstance(made, types.FunctionType):
            return site.adjoint_of(made)(args, tangents, kwargs)
    method = library_call_function(fn)
    rule = site.registry.lookup(method) if method is not None else None
    if rule is not None and rule.kind != NONDIFF:
        # a np.vectorize object: the rule of type(fn).__call__, fn first (as call_function)
        return rule_tangent(rule, (fn, *args), (ZERO, *tangents), kwargs)
    if isinstance(fn, types.MethodType) and isinstance(fn.__func__, types.FunctionType):
        return site.adjoint_of(fn.__func__)(
            (fn.__self__,) + tuple(args), (ZERO,) + tuple(tangents), kwargs
        )
    bound = bound_arguments(fn, site.registry)
    if bound is not None:  # obj(x) with a Python __call__, as reverse mode runs it
        target, head, fixed = bound
        lead = (ZERO,) * len(head)
        return site.adjoint_of(target)(
            (*head, *args), (*lead, *tangents), {**fixed, **(kwargs or {})}
        )
    raise site.missing(f"'{getattr(fn, '__name__', fn)}'", qualified_name(fn), fn)


def method_tangent(site, obj, dobj, name, args, tangents, kwargs):
    """``(y, dy)`` for ``obj.name(*args)`` found at run time."""
    if is_operator_name(name):  # `a + b` of unknown kinds, as Python dispatches it
        return operator_tangent(
            site, method_tangent, function_tangent, obj, dobj, name, args, tangents
        )
    if is_dict_view_call(obj, name, args, kwargs):  # params.items()
        return dict_view_tangent(obj, dobj, name)
    receiver = method_receiver(obj, name)
    if receiver is not None:  # f(x), f = self.layer1 of a record: dobj is the record's
        return method_tangent(site, receiver[0], dobj, receiver[1], args, tangents, kwargs)
    substitute = record_method_call(obj, name, args, kwargs)
    if substitute is not None:  # p._replace(w=v), p._asdict() (records_named.py)
        fn, positional = substitute
        spread = (dobj, NO_TANGENT, *(ZERO for _ in positional[2:]))[: len(positional)]
        return function_tangent(site, fn, positional, spread, {})
    method = getattr(type(obj), name, None)
    if method is None and isinstance(obj, types.ModuleType):
        return _call_namespace_function(site, obj, name, args, kwargs)
    if method is None or isinstance(obj, type):
        # type(obj).method(obj, x), self.act_fn(z): the attribute as Python finds it
        callee = lookup_attribute(obj, name)
        k = None if isinstance(obj, type) else record_field_object(obj, name, callee)
        if k is not None:  # self.layer(x): the layer's tangent is that of obj's field k
            dfield = ZERO if is_zero(dobj) or dobj is NO_TANGENT else dobj[k]
            return method_tangent(site, callee, dfield, "__call__", args, tangents, kwargs)
        if held_method(obj, name, callee):  # self.act = inner.apply: the field's tangent
            held = attribute_tangent(dobj, obj, name) if not is_zero(dobj) else ZERO
            return method_tangent(site, callee, held, "__call__", args, tangents, kwargs)
        return function_tangent(site, callee, args, tangents, kwargs)
    raw = inspect.getattr_static(type(obj), name, None)
    if (
        isinstance(raw, staticmethod)
        or unbound_class_callable(raw)
        or (isinstance(raw, classmethod) and site.registry.lookup(method) is None)
    ):
        # self.sigmoid(z) of a @staticmethod, act = staticmethod(np.tanh) too: Python
        # passes no 'self' (as reverse mode, dynamic_calls._found_without_receiver)
        return function_tangent(site, getattr(obj, name), args, tangents, kwargs)
    if isinstance(obj, (np.ndarray, np.generic)) and site.registry.lookup(method) is None:
        # As call_method does: x.copy() is np.copy(x).
        function = getattr(np, name, None)
        if callable(function) and site.registry.lookup(function) is not None:
            method = function
    return function_tangent(site, method, (obj,) + tuple(args), (dobj,) + tuple(tangents), kwargs)
