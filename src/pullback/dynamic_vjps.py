"""The reverse of calls found at run time, in a gradient that is differentiated again:
``obj.name(*args)`` (:func:`method_vjp`) and ``f(*args)`` with ``f`` a variable
(:func:`function_vjp`) pulled back through the callee's vjp function
(:func:`vjp_function`: a user function's generated vjp, a rule's transformable pullback
function), a function in the differentiable subset that the next derivative transforms in
turn.

Apart from dynamic_calls.py, which makes the forward call (``(y, pullback)`` with a
closure pullback): this module is the second-order path only, and it finds the callee the
same way (``_found_without_receiver``, ``record_field_object``), so it imports that module
and never the reverse.
"""

from __future__ import annotations

import functools
import inspect
import types

import numpy as np

from .call_cotangents import bound_arguments, spread_cotangents
from .call_sites import CallSite
from .callables import library_call_function
from .dict_views import DICT_VIEW_VJPS, is_dict_view_call
from .dynamic_attrs import held_cotangent, held_method, method_receiver
from .dynamic_attrs import is_object as _is_object
from .dynamic_calls import (
    _array_method_rule,
    _found_without_receiver,
    array_method_value,
    record_field_object,
    refuse_varied_draw,
)
from .errors import HigherOrderError, describe
from .operator_dispatch import is_operator_name, operator_vjp
from .plain_classes import constructor_of
from .records_dataclasses import field_slots, is_dataclass_value
from .records_named import record_method_call
from .records_plain import adopt_object
from .registry import ENTRY_POINTS, NONDIFF
from .ruled_objects import UndeclaredObject, declared_object, undeclared_object
from .scalar_vjps import _scalar_rule_vjp
from .signatures import signature_of
from .tangents import NO_TANGENT, ZERO, getitem_cotangent, is_differentiable_value
from .unfollowed_objects import mark_vjp
from .value_leaves import held_leaves


def method_vjp(site: CallSite, g, obj, name: str, *args, **kwargs):
    """``(cotangent of obj, cotangent of each argument)`` of ``obj.name(*args)`` pulled
    back from ``g``, by the generated vjp function of the method found at run time.

    A gradient that is itself differentiated (``hessian``, ``grad(grad(f))``) writes the
    reverse of a call found at run time this way (and :func:`function_vjp` for a function
    held in a variable) instead of calling the pullback that :func:`call_method` returned,
    so that the next derivative differentiates that vjp function in turn (the rules are
    in rules/pullback_runtime.py). ``obj`` gets no cotangent: objects are not
    differentiated values, only their methods' arguments are.
    """
    if is_operator_name(name):  # `a + b` of unknown kinds: the method Python runs
        return operator_vjp(site, method_vjp, function_vjp, g, obj, name, args)
    receiver = method_receiver(obj, name)
    if receiver is not None:  # a record's bound method called as a value: its method
        return method_vjp(site, g, *receiver, *args, **kwargs)
    substitute = record_method_call(obj, name, args, kwargs)
    if substitute is not None:  # p._replace(w=v), p._asdict() (records_named.py)
        return tuple(function_vjp(site, g, substitute[0], *substitute[1]))[:1]
    refuse_varied_draw(site, g, obj, name)
    alone = _found_without_receiver(site, obj, name)
    k = record_field_object(obj, name, alone) if alone is not None else None
    if k is not None:  # self.layer(x): the layer's cotangent is that of obj's field k
        own, *rest = method_vjp(site, g, alone, "__call__", *args, **kwargs)
        if own is ZERO or own is NO_TANGENT:
            return (ZERO, *rest)
        return (getitem_cotangent(ZERO, field_slots(obj), k, own), *rest)
    if alone is not None and held_method(obj, name, alone):  # self.act = inner.apply
        c = method_vjp(site, g, alone, "__call__", *args, **kwargs)
        return (held_cotangent(c[0], obj, name), *c[1:])
    if alone is not None:  # type(self).f(self, x), self.act_fn(z): Python passes no obj
        return (NO_TANGENT, *function_vjp(site, g, alone, *args, **kwargs))
    function = vjp_function(site, obj, name, args, kwargs)
    if (g is ZERO or g is NO_TANGENT) and getattr(function, "__pullback_receiver_cotangent__", 0):
        return (ZERO,) * (1 + len(args))  # a frozen method's pullback takes no ZERO
    cotangents = spread_cotangents(function, function(g, obj, *args, **kwargs))
    if gives_receiver_cotangent(site, obj, name, function):
        return cotangents  # a rule's pullback function: one per positional, obj first
    if getattr(function, "__pullback_record_receiver__", False):
        # a record's method: the receiver's cotangent first
        return undeclared_receiver(site, obj, name, cotangents)
    return (NO_TANGENT, *cotangents)


def undeclared_receiver(site: CallSite, obj, name: str, cotangents) -> tuple:
    """``cotangents`` (the receiver's first, as a record's tuple of fields), but for an
    object a rule made declaring none of its data: its cotangent has the rule's own form,
    not that tuple, so it refuses where used (ruled_objects.UndeclaredObject)."""
    if not undeclared_object(obj, site.registry):
        return cotangents
    own = UndeclaredObject.placed(type(obj).__name__, f"{type(obj).__name__}.{name}")
    return (own, *tuple(cotangents)[1:])


def function_vjp(site: CallSite, g, fn, *args, **kwargs):
    """``(cotangent of each argument)`` of ``fn(*args)`` pulled back from ``g``, for a
    function found at run time (see :func:`method_vjp`)."""
    bound_array = array_method_value(fn)
    if bound_array is not None:  # f = W.dot: W.dot(...), W bound (no cotangent)
        return tuple(method_vjp(site, g, *bound_array, *args, **kwargs))[1:]
    bound = bound_arguments(fn, site.registry)
    if bound is not None:  # a callable object, a bound method or partial in a variable
        target, head, fixed = bound
        cots = function_vjp(site, g, target, *head, *args, **{**fixed, **kwargs})
        return cots[len(head) :]
    refuse_varied_draw(site, g, None, fn)
    function = vjp_function(site, None, fn, args, kwargs)
    return spread_cotangents(function, function(g, *args, **kwargs))


def _is_record(v) -> bool:
    """A named tuple or a dataclass instance: a differentiated value whose methods are
    differentiated with the receiver (records.py, records_dataclasses.py)."""
    return isinstance(v, tuple) and hasattr(type(v), "_fields") or is_dataclass_value(v)


def gives_receiver_cotangent(site: CallSite, obj, name: str, function) -> bool:
    """Whether ``function`` (what :func:`vjp_function` gave for ``obj.name(...)``) returns
    a cotangent for ``obj`` too: a rule's pullback function does (one per positional
    argument of the rule's function, ``obj`` first, by the rule convention); the generated
    vjp of a user method and a scalar rule's vjp give the arguments' only."""
    if getattr(function, "__pullback_receiver_cotangent__", False):
        return True
    array_rule = _array_method_rule(site, obj, name)
    if array_rule is not None and array_rule.pullback_fn is function:
        return True  # np.name's pullback function: the array (obj) is its first argument
    raw = inspect.getattr_static(type(obj), name, None)
    if isinstance(obj, types.ModuleType):
        return False
    if isinstance(raw, _BUILTIN_METHODS):  # d.get(k): dict.get's pullback function
        rule = site.registry.lookup(raw)
        return rule is not None and rule.pullback_fn is function
    if not isinstance(raw, types.FunctionType):
        return False
    rule = site.registry.lookup(getattr(type(obj), name))
    return rule is not None and rule.pullback_fn is function


# Methods of built-in types (list.index, tuple.count): their rules are keyed by these.
_BUILTIN_METHODS = (types.MethodDescriptorType, types.WrapperDescriptorType)


def no_cotangents(g, *args):
    """The vjp function of a call whose result carries no gradient, found at run time
    (``xs.index(v)``): no cotangent for any argument. Declared non-differentiable itself
    (rules/pullback_runtime.py): a derivative of it is zero."""
    return (NO_TANGENT,) * len(args)


# The atoms whose tangent is the question tangents.is_differentiable_value answers: numbers
# and NumPy values (an object array may hold anything: not among them).
_ATOMS = (int, float, complex, np.generic, np.ndarray)


def _no_tangent(value) -> bool:
    """An argument that carries no tangent: None, a string, or a number or NumPy value
    that is no differentiable value (an integer, a flag, an integer or boolean array), or
    a plain tuple of such (an ``axis=(0, 1)``: immutable, so its items decide). Other
    containers, records and objects are not judged here: a list or an object may hold
    floats, or be given them (``_is_object`` decides the objects)."""
    if value is None or isinstance(value, str):
        return True
    if type(value) is tuple:
        return bool(value) and all(_no_tangent(v) for v in value)
    if isinstance(value, _ATOMS) and getattr(getattr(value, "dtype", None), "kind", "") != "O":
        return not is_differentiable_value(value)
    return False


def carries_gradient(value, registry) -> bool:
    """An object argument that holds differentiated values: a bound method of a record
    whose fields do, an object a rule made whose rule declares its data (ruled_objects.py).
    Differentiated, as the first-order call differentiates it (adjoints.LazyAdjoint._plan),
    so that the next derivative reaches them too."""
    if declared_object(value, registry):
        return True
    if not isinstance(value, types.MethodType):
        return False
    return any(map(is_differentiable_value, held_leaves(value)))


def _constant_parameters(site: CallSite, signature, bound, npositional) -> frozenset:
    """The parameters bound to the call's arguments that its activity analysis knows
    carry no gradient (``CallSite.constants``): an object a rule made there is a constant
    to the callee, as at first order (``adjoints.LazyAdjoint._plan``). (Only such objects:
    a bound method's activity is not followed by the analysis, its receiver's fields are.)"""
    if not site.constants:
        return frozenset()
    params = list(signature.parameters.values())
    plain = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    fixed = {c for c in site.constants if type(c) is str and c in bound.arguments}
    for k in site.constant_positions(npositional):
        if k < len(params) and params[k].kind in plain:
            fixed.add(params[k].name)
    return frozenset(fixed)


def constant_object(site: CallSite, inputs, i: int) -> bool:
    """Whether ``inputs[i]`` (the call's positional arguments are the last of ``inputs``)
    is an object a rule made, at a position of the call its activity analysis knows
    carries no gradient (``CallSite.constants``): a constant to the callee."""
    return i in site.constant_positions(len(inputs)) and declared_object(inputs[i], site.registry)


def vjp_function(site: CallSite, obj, fn, args, kwargs):
    """A function ``F(g, *arguments)`` in the differentiable subset (so that it can be
    differentiated again) returning the cotangents of the call's positional arguments:
    for ``obj.fn(*args)`` (``obj`` not None, ``fn`` a name) those of ``obj`` then
    ``args``; for ``fn(*args)`` those of ``args``. A Python function's generated vjp
    function, or a rule's transformable pullback function."""
    label = f"'{type(obj).__name__}.{fn}'" if obj is not None else f"'{describe(fn)}'"
    if obj is not None and is_dict_view_call(obj, fn, args, kwargs):
        return DICT_VIEW_VJPS[fn]  # params.items(): dict_views.py
    target = fn
    if obj is None and isinstance(fn, type) and site.registry.lookup(fn) is None:
        made = constructor_of(fn)  # a plain class found at run time: its constructor
        target = made if isinstance(made, types.FunctionType) else fn
    if obj is not None:
        raw = inspect.getattr_static(type(obj), fn, None)
        ordinary = isinstance(raw, types.FunctionType) and not isinstance(obj, types.ModuleType)
        if not ordinary or _found_without_receiver(site, obj, fn) is not None:
            target = None
        else:
            target = getattr(type(obj), fn)
        args = (obj, *args)
        if isinstance(raw, _BUILTIN_METHODS) and not isinstance(obj, types.ModuleType):
            declared = site.registry.lookup(raw)  # xs.index(v), xs.count(v): integers
            if declared is not None and declared.kind == NONDIFF:
                return no_cotangents
            if declared is not None and declared.pullback_fn is not None:
                return declared.pullback_fn  # d.get(k, v): the rule of dict.get
    rule = site.registry.lookup(target) if target is not None else None
    if rule is not None and rule.pullback_fn is not None:
        return rule.pullback_fn
    array_rule = _array_method_rule(site, obj, fn)
    if array_rule is not None and array_rule.pullback_fn is not None:
        return array_rule.pullback_fn  # x.astype(t), x.copy() as call_method runs them
    value = fn if obj is None else _found_without_receiver(site, obj, fn)
    scalar = _scalar_rule_vjp(site.registry, value, obj is not None, len(args), kwargs)
    if scalar is not None:
        return scalar
    vjp_ref = ENTRY_POINTS.VJPRef
    if rule is None and isinstance(target, (types.FunctionType, vjp_ref)) and site.vjp_of:
        # a VJPRef: the vjp function of a vjp function (a third derivative, dynamic_reverse)
        signature = signature_of(target)
        bound = signature.bind(*args, **kwargs)
        # The receiver of a method is not differentiated (it is an object), nor is any
        # other object argument (a model passed to a helper): its cotangent is NO_TANGENT.
        # A record (a named tuple or a dataclass instance, records.py) is a differentiated
        # value: its method's vjp gives the receiver's cotangent first.
        # (an object of a plain record class that a helper run as written made: a record;
        # one without fields too: its zero is the empty tuple, runtime.vjp_zero)
        record = obj is not None and (_is_record(obj) or adopt_object(obj))
        names = tuple(bound.arguments)[1 if obj is not None and not record else 0 :]
        # (a rule's pullback function that gives the receiver a cotangent, called with
        # it as an argument for a third derivative, differentiates it: dynamic_reverse)
        receiver = getattr(target, "__pullback_receiver_cotangent__", False) and obj is None
        kept = names[1:2] if receiver else ()
        # (and the vjp function of such a vjp function, for the next order, the objects
        # that one differentiated: __pullback_followed__, set below)
        kept += tuple(n for n in names if n in getattr(target, "__pullback_followed__", ()))
        # (nor is an integer, flag, string or None: a star-call's keyword moved to its
        # position, ddof=1, is such an argument of a rule's pullback function)
        fixed = _constant_parameters(site, signature, bound, len(args)) if obj is None else ()
        wrt = tuple(
            n
            for n in names
            if n in kept
            or not (_is_object(bound.arguments[n]) or _no_tangent(bound.arguments[n]))
            or (
                carries_gradient(bound.arguments[n], site.registry)
                and not (n in fixed and declared_object(bound.arguments[n], site.registry))
            )
        )
        function = site.vjp_of(target, wrt)
        function.__pullback_record_receiver__ = record
        # the vjp of a rule's pullback function that reads an object as constants
        # (unfollowed_objects.py): that object's cotangent refuses where it is used
        mark_vjp(function, target, names, [bound.arguments[n] for n in names], wrt)
        function.__pullback_followed__ = tuple(
            n for n in wrt if n in kept and _is_object(bound.arguments[n])
        )
        if wrt != names:
            function.__pullback_spread__ = (len(names), tuple(names.index(n) for n in wrt))

        star = next(
            (p.name for p in signature.parameters.values() if p.kind is p.VAR_POSITIONAL),
            None,
        )
        if star in names:  # its tuple's cotangent, one per argument it took
            function.__pullback_star__ = (names.index(star), len(bound.arguments[star]))
        return function
    library = _library_rule(site, value if obj is None else None) is not None
    if library:  # a np.vectorize object: named as it was made
        package = type(value).__module__.split(".")[0]
        label = f"'{package}.{type(value).__name__}({describe(value)})'"
    if rule is not None or library:
        # a rule whose pullback is a closure: naming the callee would not change that
        raise HigherOrderError(
            f"{site.where()}: a second derivative through {label}, found at run time, "
            "needs the derivative of its rule's pullback, which is a closure pullback "
            "cannot differentiate again.\n"
            f"        {site.source_line.strip()}\n"
            "Fix: write that step with operations that have second derivatives "
            "(arithmetic, np.where, elementwise NumPy functions), or use finite differences "
            "of the gradient (pullback.testing.check_grads(order=2) shows how)."
        )
    if isinstance(value, functools.partial):  # of a library function: no Python source
        raise HigherOrderError(
            f"{site.where()}: a second derivative through the functools.partial of "
            f"'{describe(value.func)}', found at run time, needs the derivative of that "
            "function's rule with its bound arguments, which pullback does not build.\n"
            f"        {site.source_line.strip()}\n"
            f"Fix: use a Python function in its place (`{_as_lambda(value)}` or a def "
            "making that call), which is differentiated again."
        )
    raise HigherOrderError(
        f"{site.where()}: a second derivative through {label}, found at run time, needs "
        "it to be a Python function or method (not a static or class method, a callable "
        "stored on an object, or a rule without a transformable pullback).\n"
        f"        {site.source_line.strip()}\n"
        "Fix: call the function by its name (`helper(x)`) so that pullback sees which "
        "function it is."
    )


def _as_lambda(partial) -> str:
    """The lambda that makes the call of ``partial`` (``lambda z: np.sum(z, axis=0)``),
    its bound values shown where they are short."""

    def shown(v):
        text = repr(v)
        return text if isinstance(v, (int, float, str, bool, type(None))) else "..."

    func = partial.func
    module = getattr(func, "__module__", None) or ""
    name = getattr(func, "__name__", describe(func))
    name = f"np.{name}" if module.split(".")[0] == "numpy" else name
    parts = [shown(a) for a in partial.args] + ["z"]
    parts += [f"{k}={shown(v)}" for k, v in partial.keywords.items()]
    return f"lambda z: {name}({', '.join(parts)})"


def _library_rule(site: CallSite, fn):
    """The rule of a library object's ``__call__`` (a ``np.vectorize`` object), or None."""
    method = library_call_function(fn) if fn is not None else None
    return site.registry.lookup(method) if method is not None else None
