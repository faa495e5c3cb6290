"""The public differentiation API: grad, value_and_grad and vjp.

>>> import numpy as np
>>> from pullback import grad
>>> @grad
... def loss(w):
...     return np.sum(w ** 2)
>>> loss(np.array([1.0, 2.0]))
array([2., 4.])
"""

from __future__ import annotations

import contextlib
import sys
import types

import numpy as np

from . import backends
from .adjoints import LazyAdjoint, VJPRef, get_adjoint
from .api_errors import carries_numbers, refuse_keywords, refuse_output
from .arguments import (
    _bound_values,
    _check_differentiable,
    _positional_indices,
    fast_kinds,
    kinds_key,
    parameter_groups,
    resolve_wrt,
)
from .batched import stacked_pullback
from .cache import function_entries
from .callables import as_bound_call
from .errors import ShapeMismatchError, user_facing
from .records_dataclasses import as_cotangent, fields_of, is_dataclass_value
from .registry import _active, _builtin, default_registry, install_entry_points
from .running import (
    deeper_recursion,
    run_forward,
    run_pullback,
)
from .tangents import NO_TANGENT, ZERO, materialize
from .transform.inline import inline_form
from .transformed import GradFunction, ValueAndGradFunction, _Transformed, write_into

__all__ = ["grad", "value_and_grad", "vjp", "vjp_resolved", "get_adjoint", "write_into", "VJPRef"]


def grad(fn=None, wrt=0, *, has_aux=False, registry=None, **unknown):
    """The gradient of a scalar function, as a function of the same arguments.

    Use as ``@grad``, ``@grad(wrt=(0, 2))`` or ``grad(f, wrt="w")``. ``wrt`` takes an
    argument index, a parameter name, or a tuple of them (then a tuple of gradients is
    returned). Each gradient has the structure, shape and dtype of its argument.
    """
    refuse_keywords("grad", unknown)
    if fn is None:
        return lambda f: GradFunction(f, wrt, has_aux, registry)
    return GradFunction(fn, wrt, has_aux, registry)


def value_and_grad(fn=None, wrt=0, *, has_aux=False, registry=None, **unknown):
    """Like :func:`grad`, but returns ``(value, gradient)``."""
    refuse_keywords("value_and_grad", unknown)
    if fn is None:
        return lambda f: ValueAndGradFunction(f, wrt, has_aux, registry)
    return ValueAndGradFunction(fn, wrt, has_aux, registry)


class VJPPullback:
    """The pullback returned by :func:`vjp`: ``pullback(dy)`` -> cotangents of ``wrt``."""

    def __init__(self, fn, y, pullback, values, wrt, single):
        self.fn = fn
        self.y = y
        self._pullback = pullback
        self._values = values
        self.wrt = wrt
        self.single = single

    deep = False  # the sweeps call user functions: recursion needs a higher limit
    concrete = None  # Dask values the forward sweep computed (branch conditions)
    plain = False  # the arguments were floats and NumPy arrays only (api._planned_vjp)

    @user_facing
    def __call__(self, dy):
        # a float or array output of a call with NumPy values only (api._planned_vjp):
        # no dataclass to unpack, no Dask value for the guard to watch
        plain = self.plain and type(dy) in _PLAIN_VALUES and type(self.y) in _PLAIN_VALUES
        if plain:
            y = self.y
            if (dy.shape if type(dy) is np.ndarray else ()) != (
                y.shape if type(y) is np.ndarray else ()
            ):
                _check_cotangent(y, dy)  # (it says what is wrong)
        elif is_dataclass_value(self.y) or is_dataclass_value(dy):
            # a dataclass's cotangent: the tuple of its fields (records_dataclasses.py)
            dy = as_cotangent(dy)
            _check_cotangent(as_cotangent(self.y), dy)
        else:
            if dy is not None and not carries_numbers(self.y):  # None, a str: no derivative
                refuse_output("the pullback of vjp", self.fn, self.y, _NO_COTANGENT_FIX)
            _check_cotangent(self.y, dy)
        guard = _NO_GUARD
        if not plain:
            guard = backends.compute_guard(self._values, {"dy": dy}, self.concrete)
        with guard:
            if self.deep:
                with deeper_recursion(self.fn):
                    cotangents = run_pullback(self._pullback, dy)
            else:
                cotangents = run_pullback(self._pullback, dy)
            grads = tuple(materialize(c, v) for c, v in zip(cotangents, self._values, strict=True))
        return grads[0] if self.single else grads

    def stacked(self, dys):
        """The cotangents of a stack of output cotangents ``dys`` (shape ``(k,) +
        y.shape``): one array of shape ``(k,) + x.shape`` per argument in ``wrt``. One
        batched reverse sweep where every step can follow the batch axis, one pullback per
        row elsewhere; the result is the same (see :mod:`pullback.batched`)."""
        return stacked_pullback(self, dys)


_PLAIN_VALUES = frozenset({float, np.float64, np.ndarray})
_NO_COTANGENT_FIX = (
    "return the value whose cotangent you pull back (a number or an array, or a tuple, "
    "list or dict of them), and pass the rest of what the function makes out alongside it."
)
_NO_GUARD = contextlib.nullcontext()  # (reentrant: it keeps no state)


def _check_cotangent(y, dy, path="dy"):
    if y is ZERO or y is NO_TANGENT:
        return  # a symbolic zero (an entry of a pullback's list cotangent): any shape
    if is_dataclass_value(y) and isinstance(dy, tuple):
        y = fields_of(y)  # a record's cotangent: the tuple of its fields' (an item of a list)
    if isinstance(y, (tuple, list)):
        if not isinstance(dy, (tuple, list)) or len(dy) != len(y):
            raise ShapeMismatchError(
                f"{path} must be a tuple of {len(y)} cotangents (one per output), "
                f"got {type(dy).__name__}."
            )
        for k, (a, b) in enumerate(zip(y, dy, strict=True)):
            _check_cotangent(a, b, f"{path}[{k}]")
        return
    if isinstance(y, dict):
        if not isinstance(dy, dict) or set(dy) - set(y):
            raise ShapeMismatchError(f"{path} must be a dict with the keys of the output.")
        for k in dy:
            _check_cotangent(y[k], dy[k], f"{path}[{k!r}]")
        return
    if dy is ZERO or dy is NO_TANGENT:
        return
    dshape, yshape = backends.shape_of(dy), backends.shape_of(y)
    if dshape != yshape:
        raise ShapeMismatchError(
            f"{path} has shape {dshape} but the output has shape {yshape}; a "
            "cotangent must have its output's shape."
        )


@user_facing
def vjp(fn, *args, wrt=None, registry=None, **kwargs):
    """Evaluate ``fn(*args, **kwargs)`` and return ``(y, pullback)``.

    ``pullback(dy)`` (``dy`` shaped like ``y``: a tuple for tuple outputs) returns the
    cotangent of each argument in ``wrt`` — a tuple, or a single value when ``wrt`` is a
    single index or name. By default ``wrt`` is every positional argument given.

    ``pullback`` may be called any number of times, so it keeps what its reverse sweep
    reads (a loop's tape: a few values per iteration) for as long as it lives. ``grad``
    and ``value_and_grad`` run their reverse sweep once: called again with arguments of
    the same kinds, they run fused sweeps, which free a tape as they walk it.
    """
    if not kwargs and type(fn) is types.FunctionType:
        fast = _planned_vjp(fn, args, wrt, registry)
        if fast is not None:
            return fast
    if wrt is None:
        wrt = tuple(range(len(args)))
    names, single = resolve_wrt(fn, wrt)
    return vjp_resolved(fn, args, kwargs, names, single, registry)


def _planned_vjp(fn, args, wrt, registry):
    """``vjp(fn, *args, wrt=wrt)`` for a plain Python function called with floats, ints and
    real arrays only, the differentiated ones floats or float arrays: what
    :func:`vjp_resolved` finds at every call (``wrt`` as parameter names, where they stand,
    the adjoint through its cache) is kept on the function as a plan per (``wrt``, the
    arguments' fast kinds, which say which arguments are floats), as ``grad``'s hot path
    keeps it. A plan is used only while the registry and its version are those it was
    made with, the function has the code it was planned on and no ``__wrapped__``, and its
    adjoint's guard holds (the code, defaults and whatever the adjoint baked in); None for
    any other call (the general path, which says why it refuses what it refuses)."""
    if not _plain_wrt(wrt):
        return None
    kinds = fast_kinds(args)
    if kinds is None:
        return None
    if registry is None:  # default_registry(), inlined (as grad's hot entry does)
        registry = _active.get()
        if registry is None:
            registry = _builtin[0] if _builtin else default_registry()
    key = ("vjp", tuple(wrt) if type(wrt) is list else wrt, kinds)
    entries = function_entries(fn)
    plan = entries.get(key)
    if (
        plan is None
        or plan[1] is not registry
        or plan[2] != registry.version
        or plan[3] is not fn.__code__
        or "__wrapped__" in fn.__dict__
        or not plan[0].guard()
    ):
        plan = _vjp_plan(fn, args, wrt, registry)
        if plan is None:
            return None
        entries[key] = plan
    adj, _, _, _, names, single, positions = plan
    values = [args[p] for p in positions]  # floats or float arrays, as the kinds say
    if adj.calls_user_code:
        with deeper_recursion(fn):
            y, pullback = run_forward(adj, args, {})
    else:
        y, pullback = run_forward(adj, args, {})
    back = VJPPullback(fn, y, pullback, values, names, single)
    back.deep = adj.calls_user_code
    back.plain = True
    return y, back


def _plain_wrt(wrt) -> bool:
    """Whether ``wrt`` is None, an index or a name, or a tuple or list of them (exactly
    ``int`` and ``str``: ``True`` equals ``1`` as a key, but is refused)."""
    if wrt is None or type(wrt) is int or type(wrt) is str:
        return True
    return type(wrt) in (tuple, list) and all(type(w) is int or type(w) is str for w in wrt)


def _vjp_plan(fn, args, wrt, registry):
    """``(adjoint, registry, version, code, names, single, positions)`` of a plain call of
    ``fn`` (see :func:`_planned_vjp`), or None where the general path must decide."""
    if "__wrapped__" in fn.__dict__ or "__signature__" in fn.__dict__:
        return None  # a decorator's wrapper: its parameters are read from its target
    call = as_bound_call(fn)
    if call is None or not call.is_plain or call.target is not fn:
        return None
    names, single = resolve_wrt(fn, tuple(range(len(args))) if wrt is None else wrt)
    positions = _positional_indices(fn, names)
    if positions is None or any(p >= len(args) for p in positions):
        return None
    for p in positions:
        v = args[p]
        if not (type(v) is float or (type(v) is np.ndarray and v.dtype.kind == "f")):
            return None  # the general path checks it (and says why it refuses)
    adj = get_adjoint(fn, names, registry, kinds_key(args, {}))
    return (adj, registry, registry.version, fn.__code__, names, single, positions)


def vjp_resolved(fn, args, kwargs, names, single, registry=None, values=None):
    """:func:`vjp` with ``wrt`` already resolved to parameter ``names`` (and, if given,
    their ``values`` already bound): what jacobian and hessian call once per call."""
    reg = registry if registry is not None else default_registry()
    if values is None:
        values = _bound_values(fn, args, kwargs, names)
    for name, value in zip(names, values, strict=True):
        _check_differentiable(fn, name, value)
    call = as_bound_call(fn) if not isinstance(fn, (_Transformed, VJPRef)) else None
    target = fn
    if call is not None:
        target = call.target
        args, kwargs = call.arguments(args, kwargs)
    elif isinstance(fn, _Transformed) and fn.call is not None and not fn.call.is_plain:
        # grad of a method, partial or callable object, differentiated again: the gradient
        # of its Python function, with the bound arguments (self, ...) first.
        given = len(args)
        args, kwargs = fn._target_arguments(args, kwargs)
        target = type(fn)(fn.target, fn.wrt, fn.has_aux, fn._registry)
        names = _target_names(fn, target, names, len(args) - given)
    adj = get_adjoint(target, names, reg, kinds_key(args, kwargs))
    with backends.compute_guard(args, kwargs) as concrete:
        if adj.calls_user_code:
            with deeper_recursion(fn):
                y, pullback = run_forward(adj, args, kwargs)
        else:
            y, pullback = run_forward(adj, args, kwargs)
    back = VJPPullback(fn, y, pullback, values, names, single)
    back.deep = adj.calls_user_code
    back.concrete = concrete
    return y, back


def _target_names(fn, target, names, bound: int) -> tuple:
    """``names`` (parameters of ``fn``, a bound method's or partial's gradient) as the
    parameters of ``target``, the gradient of its function, which takes ``bound``
    arguments first: a decorator's ``def wrapper(*args)`` receives the caller's first
    argument as ``args[bound]``."""
    shown, own = parameter_groups(fn), parameter_groups(target)
    out = []
    for name in names:
        if name not in own.named and name in shown.positional and own.vararg is not None:
            name = resolve_wrt(target, shown.positional.index(name) + bound)[0][0]
        out.append(name)
    return tuple(out)


def _shipped_rules():
    from .rules import build_default_registry  # a lower layer, loaded on first gradient

    return build_default_registry()


def _items_version(cls):
    from .transform.iter_items import items_version  # (loaded when an object is iterated)

    return items_version(cls)


# The layers below this one (registry, runtime helpers, rules, transform) reach these
# through registry.ENTRY_POINTS instead of importing upward (docs/design.md, "Layers").
install_entry_points(
    vjp=vjp,
    grad=grad,
    value_and_grad=value_and_grad,
    get_adjoint=get_adjoint,
    VJPRef=VJPRef,
    LazyAdjoint=LazyAdjoint,
    resolve_wrt=resolve_wrt,
    kinds_key=kinds_key,
    run_forward=run_forward,
    run_pullback=run_pullback,
    inline_form=inline_form,
    items_version=_items_version,
    build_default_registry=_shipped_rules,
)


def _version_info():  # pragma: no cover - for bug reports
    return f"pullback on Python {sys.version.split()[0]}, NumPy {np.__version__}"
