"""Calls whose callee is known only at run time, as the generated code makes them:
``f(*args)`` with ``f`` a variable (:func:`call_function`), ``obj.name(*args)``
(:func:`call_method`), each giving ``(y, pullback)``. Where a gradient must be
differentiated again, their reverse goes through the callee's vjp function instead
(dynamic_vjps.py, which finds the callee with this module's lookups).

The callee is looked up as Python looks it up when the call runs: a method of the class
gets ``obj`` first; a callable stored on the instance, a static method and an attribute of
a class are called without it; ``functools.partial`` objects, bound methods and callable
objects run their Python function with the bound arguments first. A :class:`CallSite`
carries what the transform knows (the place, the registry, how to build adjoints and vjp
functions), so this module imports nothing from the api.
"""

from __future__ import annotations

import functools
import inspect
import types

import numpy as np

from . import explicit_dunders
from .call_sites import CallSite
from .callables import as_bound_call, library_call_function, ruled_method
from .dict_views import dict_view_rrule, is_dict_view_call
from .dynamic_attrs import held_cotangent, held_method, method_receiver
from .errors import RuleError, describe
from .guards import is_library_module_name
from .operator_dispatch import is_operator_name, operator_call
from .plain_classes import constructor_of
from .records_dataclasses import field_position, field_slots, is_dataclass_value
from .records_named import record_method_call
from .records_plain import is_plain_record
from .registry import NONDIFF, REFUSED_WHEN_VARIED, qualified_name
from .resolve import ARRAY_INPLACE_METHODS
from .tangents import NO_TANGENT, ZERO, getitem_cotangent


def array_method_value(fn):
    """``(array, name)`` when ``fn`` is a method of an array bound to it, held as a value
    (``f = W.dot``, ``helper(W.dot, x)`` with ``W`` a global array), else None: calling it
    is ``W.dot(...)``, which :func:`call_method` runs by the array's rules (the array,
    bound before the call, gets no cotangent from it, as any bound argument)."""
    if not isinstance(fn, types.BuiltinMethodType):
        return None
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, (np.ndarray, np.generic)) and isinstance(fn.__name__, str):
        return owner, fn.__name__
    return None


def _rrule_for(site: CallSite, fn, nargs: int, label: str):
    if getattr(fn, "gradient_function", None) is not None and hasattr(fn, "wrt"):
        # grad(f) made inside the differentiated function: differentiate its generated
        # gradient (a second derivative; f's arguments are explicit, so nothing is hidden).
        return _given_constants(site, site.adjoint_of(fn, None))
    rule = site.registry.lookup(fn)
    if rule is not None:
        if rule.kind == NONDIFF:
            return _nondiff_rrule(fn, nargs, _refusal(site, rule))
        return rule.rrule
    if isinstance(fn, functools.partial):
        return lambda *args, **kwargs: _partial_call(site, fn, args, kwargs)
    if isinstance(fn, type):  # a plain class found at run time: its constructor function
        made = constructor_of(fn)
        if isinstance(made, tuple):  # (why, fix): its construction cannot be followed
            raise site.refused_class(fn, *made)
        fn = made if isinstance(made, types.FunctionType) else fn
    method = library_call_function(fn)
    rule = site.registry.lookup(method) if method is not None else None
    if rule is not None and rule.kind != NONDIFF:
        # a np.vectorize object: the rule of type(fn).__call__, with fn first
        def library_object_rrule(*args, **kwargs):
            y, pb = rule.rrule(fn, *args, **kwargs)
            return y, lambda dy: tuple(pb(dy))[1:]

        return library_object_rrule
    found = ruled_method(fn, site.registry)
    if found is not None:  # solve = splu(A).solve: the class's function, its object first
        return _ruled_method_rrule(site, *found)
    if isinstance(fn, types.FunctionType):
        if _library_function(fn):
            raise site.library(label, fn)
        if fn.__closure__ and getattr(fn, "__module__", "").startswith("pullback."):
            # A rule's pullback, met while differentiating a generated gradient again.
            raise RuleError(
                f"{site.where()}: a second derivative here needs the derivative of the "
                f"pullback '{fn.__name__}' of a rule, which pullback cannot differentiate yet "
                "(its closure holds the values it differentiates at).\n"
                f"        {site.source_line.strip()}\n"
                "Fix: for now, second derivatives work through arithmetic, indexing, math and "
                "the elementwise NumPy functions written inline; write this step with those, or "
                "use finite differences of the gradient."
            )
        return _given_constants(site, site.adjoint_of(fn, None))
    bound_array = array_method_value(fn)
    if bound_array is not None:

        def array_method_rrule(*args, **kwargs):
            y, pb = call_method(site, *bound_array, *args, **kwargs)
            return y, lambda dy: tuple(pb(dy))[1:]

        return array_method_rrule
    made = _DERIVATIVE_OBJECTS.get(type(fn).__qualname__)
    if made is not None and type(fn).__module__.startswith("pullback."):
        inner = getattr(fn, "fn", None) or getattr(getattr(fn, "grad", None), "fn", None)
        raise site.derivative_inside(made, describe(inner) if inner is not None else "f")
    bound = as_bound_call(fn)
    if bound is not None and _library_function(bound.target):
        raise site.library(label, bound.target)
    if bound is not None:
        # A bound method or a callable object found at run time: its
        # Python function with the bound arguments first (they get no cotangent here).
        adjoint = site.adjoint_of(bound.target, None)
        skipped = len(bound.args)

        def bound_call_rrule(*args, **kwargs):
            full_args, full_kwargs = bound.arguments(args, kwargs)
            y, pb = adjoint(*full_args, **full_kwargs)

            def bound_call_pullback(dy):
                return tuple(pb(dy))[skipped:]

            return y, bound_call_pullback

        return bound_call_rrule
    raise site.missing(label, qualified_name(fn), fn)


def _ruled_method_rrule(site: CallSite, function, receiver):
    rule = site.registry.lookup(function)
    if rule.kind == NONDIFF:  # (draw = rng.normal; draw(mu): a moving draw is refused)
        refused = _refusal(site, rule)
        return lambda *args, **kwargs: _nondiff_rrule(function, len(args) + 1, refused)(
            receiver, *args, **kwargs
        )

    def ruled_method_rrule(*args, **kwargs):
        y, pb = rule.rrule(receiver, *args, **kwargs)
        return y, lambda dy: tuple(pb(dy))[1:]

    return ruled_method_rrule


def as_constructed(fn):
    """What a call of ``fn`` runs in code that is differentiated again: a plain class's
    constructor function (whose object is a record, records_plain.py; the class itself
    would make one whose fields carry no gradient), anything else as it is."""
    if isinstance(fn, type):
        made = constructor_of(fn)
        if isinstance(made, types.FunctionType):
            return made
    return fn


# The derivative objects of pullback's api (by class name: this module is below the api)
# that a differentiated function may call but pullback cannot differentiate through.
_DERIVATIVE_OBJECTS = {
    "JacobianFunction": "jacobian",
    "HessianFunction": "hessian",
    "HVPFunction": "hvp",
}


def _library_function(fn) -> bool:
    """A Python function of the standard library, NumPy or SciPy (found at run time):
    never transformed, so that no diagnostic points into library code."""
    module = getattr(fn, "__module__", None) or ""
    return (
        isinstance(fn, types.FunctionType)
        and is_library_module_name(module)
        and not module.startswith("pullback")
    )


def _refusal(site: CallSite, rule):
    """For a non-differentiable rule that a differentiated value may not reach (a random
    draw that moves with its parameters), the refusal its pullback raises, else None."""
    if not rule.extra.get(REFUSED_WHEN_VARIED):
        return None
    return lambda: site.varied_random_draw(rule)


def _nondiff_rrule(fn, nargs, refusal=None):
    """``(y, pullback)`` of a function without gradient. With ``refusal``, its pullback,
    which runs only where a differentiated argument reaches the call, raises it."""

    def nondiff_rrule(*args, **kwargs):
        y = fn(*args, **kwargs)

        def nondiff_pullback(dy):
            if refusal is not None and dy is not ZERO and dy is not NO_TANGENT:
                raise refusal()
            return (NO_TANGENT,) * len(args)

        return y, nondiff_pullback

    return nondiff_rrule


def _given_constants(site: CallSite, lazy):
    """``lazy`` (a LazyAdjoint found at run time) told which arguments of the call carry
    no gradient (``CallSite.constants``)."""
    if not site.constants:
        return lazy
    return functools.partial(lazy.call_given_constants, site.constants)


def call_function(site: CallSite, fn, *args, **kwargs):
    """``(y, pullback)`` for a call whose function is a run-time value."""
    label = f"'{describe(fn)}'"
    rrule = _rrule_for(site, fn, len(args), label)
    return rrule(*args, **kwargs)


def unbound_class_callable(raw) -> bool:
    """Whether a class attribute ``raw`` is called as it is through an object: callable
    and no descriptor (a ufunc, a builtin, a ``functools.partial`` held by the class),
    so Python passes no ``self``."""
    return callable(raw) and not isinstance(raw, type) and not hasattr(type(raw), "__get__")


def _found_without_receiver(site: CallSite, obj, name: str):
    """What ``obj.name(...)`` calls when Python does not pass ``obj`` first: a callable
    stored on the instance (``self.act_fn(z)``), an attribute of a class
    (``type(self).helper(x)``), a static or class method, an attribute the class does not
    define (``__getattr__``). ``None`` for a method of ``obj``'s class (and for a
    namespace's function, which :func:`call_method` handles apart)."""
    if isinstance(obj, types.ModuleType):
        return None
    instance_attributes = getattr(obj, "__dict__", None)
    if isinstance(instance_attributes, dict) and name in instance_attributes:
        return instance_attributes[name]
    if isinstance(obj, type):
        # cls.__call__(w), as a class held in a loop variable is called: the class
        return obj if name == "__call__" else getattr(obj, name)
    cls = type(obj)
    method = getattr(cls, name, None)
    if type(method) is types.FunctionType and cls.__dict__.get(name) is method:
        return None  # a function of the class's own: a method (the loop's common case)
    if name == "__call__" and type(method) is not types.FunctionType and callable(obj):
        # f.__call__(x) of a function, a lambda or a builtin held in a variable (code
        # differentiated again calls a callable of unknown kind so): the call f(x)
        return obj
    raw = inspect.getattr_static(cls, name, None)
    if isinstance(raw, staticmethod) or unbound_class_callable(raw):
        # (act = staticmethod(np.tanh), or act = np.tanh: no descriptor binds obj; the
        # function, with or without a rule, is called without obj: its rule given obj
        # first would take x for tanh's `out`)
        return getattr(obj, name)
    if isinstance(raw, classmethod) and site.registry.lookup(method) is None:
        return getattr(obj, name)
    if method is None:
        return lookup_attribute(obj, name)
    return None


# Array methods whose NumPy function of the same name takes the array second
# (x.compress(c) is np.compress(c, x)): never run as that function with x first.
ARRAY_SECOND_METHODS = frozenset({"compress"})


def array_method_function(site: CallSite, obj, name):
    """The function whose rule :func:`_array_method_rule` gives (``np.ndarray.astype``
    itself, ``np.clip`` for ``x.clip``), or None."""
    rule = _array_method_rule(site, obj, name)
    if rule is None:
        return None
    own = getattr(type(obj), name, None)
    return own if site.registry.lookup(own) is rule else getattr(np, name, None)


def _array_method_rule(site: CallSite, obj, name):
    """The rule :func:`call_method` runs for the array method ``obj.name``: the method's
    own rule (``x.astype`` is ``np.ndarray.astype``'s, a method descriptor that is no
    Python function), else that of ``np.name`` (``x.copy()`` is ``np.copy(x)``); None for
    anything else. Both take the array first, so their pullback functions (``F(g, obj,
    *args)``) give the array its cotangent first."""
    if not isinstance(obj, (np.ndarray, np.generic)) or not isinstance(name, str):
        return None
    own = site.registry.lookup(getattr(type(obj), name, None))
    if own is not None or name in ARRAY_SECOND_METHODS:
        return own
    function = getattr(np, name, None)
    return site.registry.lookup(function) if callable(function) else None


# f(y) with f varied is made f.__call__(y) (transform/problems.py): a closure cannot
_FUNCTION_VALUES = (
    types.FunctionType,
    types.MethodType,
    types.BuiltinFunctionType,
    functools.partial,
)


def call_method(site: CallSite, obj, name: str, *args, **kwargs):
    """``(y, pullback)`` for ``obj.name(*args)``; the pullback covers ``obj`` first."""
    if is_operator_name(name):  # `a + b` of unknown kinds, as Python dispatches it
        return operator_call(site, call_method, obj, name, args)
    if is_dict_view_call(obj, name, args, kwargs):
        return dict_view_rrule(obj, name)
    receiver = method_receiver(obj, name)
    if receiver is not None:  # f(x), f = self.layer1 of a differentiated record: the
        return call_method(site, *receiver, *args, **kwargs)  # record's cotangent is f's
    if name == "__call__" and isinstance(obj, _FUNCTION_VALUES):
        raise site.varied_function_value(describe(obj))
    substitute = record_method_call(obj, name, args, kwargs)
    if substitute is not None:  # p._replace(w=v), p._asdict() (records_named.py)
        fn, positional = substitute
        y, pullback = call_function(site, fn, *positional)
        return y, lambda g: tuple(pullback(g))[:1]
    callee = _found_without_receiver(site, obj, name)
    if callee is not None and held_method(obj, name, callee):
        return _held_method_call(site, obj, name, callee, args, kwargs)
    if callee is not None:
        k = record_field_object(obj, name, callee)
        if k is not None:  # self.layer(x): the layer's fields carry a gradient
            return _call_field_object(site, obj, k, callee, args, kwargs)
        return _call_without_receiver(site, callee, args, kwargs)
    method = getattr(type(obj), name, None)
    if method is None:  # a module: ``xp.sum(x)`` on a namespace found at run time
        return _call_namespace_function(site, obj, name, args, kwargs)
    label = f"the method '{type(obj).__name__}.{name}'"
    rule = site.registry.lookup(method)
    if rule is not None:
        if rule.kind == NONDIFF:
            refused = _refusal(site, rule)
            return _nondiff_rrule(method, len(args) + 1, refused)(obj, *args, **kwargs)
        return rule.rrule(obj, *args, **kwargs)
    if isinstance(method, types.FunctionType):
        if _library_function(method):
            raise site.library(label, method)
        # (its bound __call__: calling the object counts against CPython 3.12's C recursion
        # limit, which sys.setrecursionlimit does not raise)
        return site.adjoint_of(method, None).__call__(obj, *args, **kwargs)
    if isinstance(obj, np.ndarray) and name in ARRAY_INPLACE_METHODS:
        # the check let `r.sort()` through because r's class was not known before running
        # (or was a user class then); np.sort's rule would return a sorted copy where the
        # method sorts r in place and returns None
        raise site.inplace_array_method(name)
    if isinstance(obj, (np.ndarray, np.generic)) and name not in ARRAY_SECOND_METHODS:
        # Most array methods are the NumPy function of the same name: x.copy() is np.copy(x).
        function = getattr(np, name, None)
        rule = site.registry.lookup(function) if function is not None else None
        if rule is not None and callable(function):
            if rule.kind == NONDIFF:
                return _nondiff_rrule(function, len(args) + 1)(obj, *args, **kwargs)
            return rule.rrule(obj, *args, **kwargs)
    if name in explicit_dunders.NAMES and explicit_dunders.computes_operator(obj, name, args):
        # x.__mul__(y) where a class of the module defines __mul__ (the normalizer left
        # the call as a method): the operator, as explicit_dunders computes it
        return site.adjoint_of(getattr(explicit_dunders, name), None).__call__(obj, *args)
    raise site.missing(label, f"{type(obj).__module__}.{type(obj).__qualname__}.{name}")


def _held_method_call(site: CallSite, obj, name, callee, args, kwargs):
    """``obj.name(*args)`` with ``obj.name`` a record's bound method held in a field of the
    record ``obj`` (dynamic_attrs.held_method): the method's call, its record's cotangent
    given to that field of ``obj``."""
    y, pullback = call_method(site, callee, "__call__", *args, **kwargs)

    def held_method_pullback(dy):
        c = pullback(dy)
        return (held_cotangent(c[0], obj, name), *c[1:])

    return y, held_method_pullback


def _call_without_receiver(site: CallSite, fn, args, kwargs):
    """``fn(*args)`` found on an object: the receiver gets no cotangent."""
    y, pullback = call_function(site, fn, *args, **kwargs)

    def receiverless_pullback(dy):
        return (NO_TANGENT, *pullback(dy))

    return y, receiverless_pullback


def record_field_object(obj, name: str, callee):
    """Where ``callee``, the field ``name`` of the record ``obj``, sits in ``obj``'s
    cotangent when it is itself a record called through its class's ``__call__`` (a
    layer held by a model): else None."""
    if not (is_plain_record(callee) or is_dataclass_value(callee)):
        return None
    if not isinstance(inspect.getattr_static(type(callee), "__call__", None), types.FunctionType):
        return None
    return field_position(obj, name)


def _call_field_object(site: CallSite, obj, k: int, callee, args, kwargs):
    """``obj.name(*args)`` with ``obj.name`` a record with its own ``__call__``: the call
    ``callee.__call__(*args)``, whose cotangent for ``callee`` becomes the cotangent of
    ``obj``'s field ``k`` (before, the callee's fields got none: a silent zero gradient)."""
    y, pullback = call_method(site, callee, "__call__", *args, **kwargs)

    def field_object_pullback(dy):
        cots = tuple(pullback(dy))
        own = cots[0]
        if own is ZERO or own is NO_TANGENT:
            return (ZERO, *cots[1:])
        return (getitem_cotangent(ZERO, field_slots(obj), k, own), *cots[1:])

    return y, field_object_pullback


def _call_namespace_function(site: CallSite, module, name: str, args, kwargs):
    """``xp.name(*args)`` for a namespace ``xp`` found at run time (``xp =
    array_namespace(x)``): the rule of that module's function; the module itself gets
    no tangent."""
    function = getattr(module, name)
    rule = site.registry.lookup(function)
    if rule is None:
        raise site.missing(f"the function '{module.__name__}.{name}'", f"{module.__name__}.{name}")
    if rule.kind == NONDIFF:  # (np.random.normal(mu, s): a moving draw is refused)
        y, pullback = _nondiff_rrule(function, len(args), _refusal(site, rule))(*args, **kwargs)
    else:
        y, pullback = rule.rrule(*args, **kwargs)

    def namespace_function_pullback(dy):
        return (NO_TANGENT, *pullback(dy))

    return y, namespace_function_pullback


def _partial_call(site: CallSite, fn, args, kwargs):
    """``(y, pullback)`` of calling the ``functools.partial`` ``fn``: its function with the
    bound arguments first; the pullback gives the cotangents of the call's own positional
    arguments."""
    n = len(fn.args)
    y, pullback = call_function(site, fn.func, *fn.args, *args, **{**fn.keywords, **kwargs})

    def partial_call_pullback(dy):
        return tuple(pullback(dy))[n:]

    return y, partial_call_pullback


def lookup_attribute(obj, name):
    """``obj.name`` as Python looks it up when the call runs."""
    try:
        return getattr(obj, name)
    except AttributeError:
        raise AttributeError(f"{type(obj).__name__!r} object has no attribute {name!r}") from None


def refuse_varied_draw(site: CallSite, g, obj, fn) -> None:
    """Raise PB506 where a cotangent ``g`` pulls back through ``obj.fn(...)`` (``fn(...)``
    with ``obj`` None), found at run time, that is a random draw moving with its
    parameters (``rng.normal(mu, s)``, ``np.random.normal``, ``draw = rng.normal``): the
    reverse that a gradient differentiated again writes for it (dynamic_vjps) refuses it
    as the first-order pullback does (:func:`_nondiff_rrule`)."""
    if g is ZERO or g is NO_TANGENT:
        return
    if obj is None:
        found = ruled_method(fn, site.registry)
        callee = found[0] if found is not None else fn
    elif isinstance(obj, types.ModuleType):
        callee = getattr(obj, fn, None)
    else:
        callee = getattr(type(obj), fn, None) if isinstance(fn, str) else None
    try:
        rule = site.registry.lookup(callee)
    except TypeError:  # unhashable
        return
    if rule is not None and rule.kind == NONDIFF and rule.extra.get(REFUSED_WHEN_VARIED):
        raise site.varied_random_draw(rule)
