"""Rules for the helpers that generated adjoints call, so that a generated gradient can be
differentiated again (grad of grad, Hessians).

Most helpers are linear in the cotangent they move (``unbroadcast``, ``fold_reads``,
``getitem_cotangent``, ``tuple_item``); the matrix-product and power helpers are bilinear or
smooth in the primal values they read.
"""

from __future__ import annotations

import builtins
import inspect

import numpy as np

from .. import (
    call_cotangents,
    callables,
    dynamic_attrs,
    dynamic_calls,
    dynamic_reverse,
    dynamic_vjps,
    explicit_dunders,
    inplace_fields,
    operator_dispatch,
    read_folds,
    runtime,
    tangents,
    unpacking,
    where_masks,
    with_contexts,
)
from ..list_operands import cotangent_like, stacked_like
from ..registry import ENTRY_POINTS, transformable
from ..unfollowed_objects import refused_slots
from ..zero_safe import zero_safe_product, zero_safe_tangent
from ._elementwise import elementwise_in_x
from ._util import NO_TANGENT, ZERO, densify, unbroadcast
from .transformable import set_pullbacks

FAMILY = "pullback_runtime"


def _identity_rrule(fn):
    def identity_rrule(x, *rest):
        y = fn(x, *rest)

        def identity_pullback(dy):
            return (dy,) + (NO_TANGENT,) * len(rest)

        return y, identity_pullback

    return identity_rrule


def _add_rrule(a, b):
    def add_pullback(dy):
        # (each operand's in its own form: a list's and an array's may be added)
        return cotangent_like(dy, a), cotangent_like(dy, b)

    return tangents.add(a, b), add_pullback


def _unbroadcast_rrule(g, x):
    shape = np.shape(densify(g))

    def unbroadcast_pullback(dy):
        if dy is ZERO:
            return ZERO, NO_TANGENT
        return tangents.broadcast_cotangent(dy, shape) if shape else dy, NO_TANGENT

    return unbroadcast(g, x), unbroadcast_pullback


def _entries(chain):
    out = []
    while chain is not None:
        index, value, chain = chain
        out.append((index, value))
    return out


def _fold_reads_rrule(acc, x, chain):
    entries = _entries(chain)

    def fold_reads_pullback(dy):
        if dy is ZERO:
            return ZERO, NO_TANGENT, ZERO
        g = densify(dy)
        cot = ZERO  # the cotangent of the chain: the same nesting, one value per read
        for index, value in reversed(entries):
            dv = ZERO if tangents.is_zero(value) else _read(g, x, index, value)
            cot = (NO_TANGENT, dv, cot)
        return (ZERO if tangents.is_zero(acc) else dy), NO_TANGENT, cot

    return read_folds.fold_reads(acc, x, chain), fold_reads_pullback


_read = tangents.read_cotangent  # batch-aware: a Hessian pushes all its rows at once


@transformable
def read_cotangent_pullback(dy, g, x, index, value):
    # Linear in g: its adjoint puts dy back at x[index] (broadcast to the read's shape).
    if dy is ZERO or g is ZERO or g is NO_TANGENT:
        return ZERO, NO_TANGENT, NO_TANGENT, NO_TANGENT
    dg = tangents.getitem_cotangent(ZERO, densify(g), index, dy)
    return dg, NO_TANGENT, NO_TANGENT, NO_TANGENT


@transformable
def broadcast_cotangent_pullback(dy, d, shape):
    # The adjoint of a broadcast is the sum back to the broadcast operand's shape.
    if dy is ZERO:
        return ZERO, NO_TANGENT
    return unbroadcast(dy, d), NO_TANGENT


def _linear_rrule(fn, pullback_fn):
    """The rule of a helper ``fn`` that is linear in its first argument, from its
    transformable pullback ``pullback_fn(dy, *args)``."""

    def linear_rrule(*args):
        return fn(*args), lambda dy: pullback_fn(dy, *args)

    return linear_rrule


def _bilinear_rrule(fn, pullback_fn):
    """The rule of a helper ``fn(a, b)`` from its transformable pullback
    ``pullback_fn(dy, a, b)``."""

    def bilinear_rrule(a, b):
        def bilinear_pullback(dy):
            if dy is ZERO:
                return ZERO, ZERO
            return pullback_fn(dy, a, b)

        return fn(a, b), bilinear_pullback

    return bilinear_rrule


def _getitem_cotangent_rrule(acc, x, index, g):
    def getitem_cotangent_pullback(dy):
        if dy is ZERO:
            return ZERO, NO_TANGENT, NO_TANGENT, ZERO
        dg = ZERO if tangents.is_zero(g) else _read(densify(dy), x, index, g)
        return (ZERO if tangents.is_zero(acc) else dy), NO_TANGENT, NO_TANGENT, dg

    return tangents.getitem_cotangent(acc, x, index, g), getitem_cotangent_pullback


def _tuple_item_rrule(g, k):
    size = None if tangents.is_zero(g) else len(g)

    def tuple_item_pullback(dy):
        if size is None or dy is ZERO:
            return ZERO, NO_TANGENT
        parts = [ZERO] * size
        parts[k] = dy
        # an array's cotangent is an array (a list display of an array's items)
        return stacked_like(parts, g) if type(g) is np.ndarray else tuple(parts), NO_TANGENT

    return runtime.tuple_item(g, k), tuple_item_pullback


def _dict_item_rrule(g, key):
    def dict_item_pullback(dy):
        if tangents.is_zero(g) or dy is ZERO:
            return ZERO, NO_TANGENT
        return {key: dy}, NO_TANGENT

    return runtime.dict_item(g, key), dict_item_pullback


def _plus_cotangents_rrule(g, a, b):
    out = runtime.plus_cotangents(g, a, b)
    shape = None if isinstance(a, (tuple, list)) else np.shape(densify(g))

    def plus_cotangents_pullback(dy):
        da, db = dy if not tangents.is_zero(dy) else (ZERO, ZERO)
        if shape is None:  # concatenated sequences: put the parts back together
            if tangents.is_zero(da) and tangents.is_zero(db):
                return ZERO, NO_TANGENT, NO_TANGENT
            left = [ZERO] * len(a) if tangents.is_zero(da) else list(da)
            right = [ZERO] * len(b) if tangents.is_zero(db) else list(db)
            return tuple(left + right), NO_TANGENT, NO_TANGENT
        total = ZERO
        for part in (da, db):
            if not tangents.is_zero(part):
                total = tangents.add(
                    total, np.broadcast_to(densify(part), shape) if shape else part
                )
        return total, NO_TANGENT, NO_TANGENT

    return out, plus_cotangents_pullback


def _repeat_cotangent_rrule(g, seq, n):
    from .pullback_runtime_pullbacks import repeat_cotangent_pullback

    def pullback(dy):
        return repeat_cotangent_pullback(dy, g, seq, n)

    return runtime.repeat_cotangent(g, seq, n), pullback


def _array_method_value_rrule(site, g, bound_array, args, kwargs):
    """The derivative of ``function_vjp(site, g, W.dot, *args)`` (a method bound to an
    array, held as a value): that of ``method_vjp(site, g, W, "dot", *args)`` without the
    array's slot (it is bound, as function_vjp gives it)."""
    y, inner = _method_vjp_rrule(site, g, *bound_array, *args, **kwargs)

    def array_method_value_pullback(dy):
        full = ZERO if tangents.is_zero(dy) else (ZERO, *dy)
        c = tuple(inner(full))  # site, g, obj, name, *args
        return (c[0], c[1], NO_TANGENT, *c[4:])

    return tuple(y)[1:], array_method_value_pullback


def _vjp_function_rrule(skip_receiver):
    # The derivative of a vjp function found at run time (dynamic_vjps.method_vjp
    # and function_vjp): the adjoint of that generated function, g first, then the arguments.
    def rrule(site, g, callee, *rest, **kwargs):
        if skip_receiver:  # method_vjp(site, g, obj, name, *args)
            obj, name, args = callee, rest[0], rest[1:]
            # a record's bound method called as a value: its method on the record, whose
            # cotangent (in the receiver's slot) is the bound method's
            obj, name = dynamic_attrs.method_receiver(obj, name) or (obj, name)
            alone = dynamic_calls._found_without_receiver(site, obj, name)
            if alone is not None:  # Python passes no obj: function_vjp's derivative
                return _alone_rrule(site, g, obj, name, alone, args, kwargs)
            function = dynamic_vjps.vjp_function(site, obj, name, args, kwargs)
            inputs = (g, obj, *args)
        else:  # function_vjp(site, g, fn, *args)
            args = rest
            bound_array = dynamic_calls.array_method_value(callee)
            if bound_array is not None:  # f = W.dot: method_vjp's derivative, W bound
                return _array_method_value_rrule(site, g, bound_array, args, kwargs)
            bound = call_cotangents.bound_arguments(callee, site.registry)
            if bound is not None:  # layer(x): Dense.__call__(layer, x)
                return _bound_rrule(site, g, bound, args, kwargs, callee)
            function = dynamic_vjps.vjp_function(site, None, callee, args, kwargs)
            inputs = (g, *args)
        parameters = list(inspect.signature(function).parameters.values())
        names = [p.name for p in parameters]
        starred = bool(parameters) and parameters[-1].kind is inspect.Parameter.VAR_POSITIONAL
        # The receiver is an object, not a differentiated value, unless the pullback
        # function gives it a cotangent (a frozen distribution: its parameters' tuple).
        marked = getattr(function, "__pullback_receiver_cotangent__", False)
        receiver = skip_receiver and marked
        # A rule's pullback function returns a slot for the receiver itself (one cotangent
        # per positional argument); the generated vjp of a method gives the arguments' only.
        slot = skip_receiver and dynamic_vjps.gives_receiver_cotangent(site, obj, name, function)
        # A record's method (an object the function built, a dataclass, a named tuple):
        # its vjp function differentiates the receiver and returns its cotangent first.
        if skip_receiver and getattr(function, "__pullback_record_receiver__", False):
            receiver = slot = True
        # The inputs differentiated: not the receiver (unless it gets a cotangent), nor an
        # object argument (a model passed to a helper); a *args parameter takes the rest.
        selected = [
            i
            for i in range(len(inputs))
            if not (skip_receiver and not receiver and i == 1)
            and (
                starred
                or i == 0
                or (marked and i == 1)  # a frozen distribution: its parameters' tuple
                or not dynamic_attrs.is_object(inputs[i])
                or (
                    dynamic_vjps.carries_gradient(inputs[i], site.registry)  # o.energy, interp1d
                    and (skip_receiver or not dynamic_vjps.constant_object(site, inputs, i))
                )
            )
        ]
        wrt = list(names) if starred else [names[i] for i in selected]
        if starred and skip_receiver and not receiver:
            wrt = names[:1] + names[2:]
        y, pullback = site.adjoint_of(function, tuple(wrt))(*inputs, **kwargs)
        label = f"{type(obj).__name__}.{name}" if skip_receiver else ""
        refused = refused_slots(function, names, inputs, label)
        refused = {i: c for i, c in refused.items() if i not in selected}
        # Its value: the cotangents of obj then each argument (a receiver's from the
        # function itself, else NO_TANGENT), as the generated code reads them; an object
        # argument the function does not differentiate gets NO_TANGENT in its place.
        y = call_cotangents.spread_cotangents(function, y)
        y = (NO_TANGENT, *y) if skip_receiver and not slot else tuple(y)
        if skip_receiver and getattr(function, "__pullback_record_receiver__", False):
            y = dynamic_vjps.undeclared_receiver(site, obj, name, y)

        def per_input(cotangents):
            """One cotangent per input (NO_TANGENT for those not differentiated), a
            ``*args`` parameter's tuple spread out."""
            cotangents = tuple(cotangents)
            if starred:
                last = cotangents[-1]
                n_star = len(selected) - len(cotangents) + 1
                last = (ZERO,) * n_star if tangents.is_zero(last) else tuple(last)
                cotangents = cotangents[:-1] + last
            full = [NO_TANGENT] * len(inputs)
            for i, c in refused.items():  # an object the function reads as constants
                full[i] = c
            for i, c in zip(selected, cotangents, strict=True):
                full[i] = c
            return full

        def vjp_function_pullback(dy):
            if tangents.is_zero(dy):
                fixed = (NO_TANGENT, NO_TANGENT) if skip_receiver else (NO_TANGENT,)
                return (NO_TANGENT, ZERO) + fixed + (ZERO,) * len(args)
            if receiver or slot:  # the function's own value has the receiver's slot
                own = tuple(dy)
            else:
                own = call_cotangents.gather_cotangents(
                    function, tuple(dy[1:]) if skip_receiver else tuple(dy)
                )
            full = per_input(pullback(own))
            if skip_receiver:  # of site, g, the receiver, the name, each argument
                return (NO_TANGENT, full[0], full[1], NO_TANGENT, *full[2:])
            return (NO_TANGENT, full[0], NO_TANGENT, *full[1:])  # of site, g, fn, arguments

        return y, vjp_function_pullback

    return rrule


_plain_method_vjp_rrule = _vjp_function_rrule(skip_receiver=True)


def _method_vjp_rrule(site, g, obj, name, *args, **kwargs):
    """method_vjp's rule; for an operator found at run time (`a + b` of unknown kinds,
    operator_dispatch.py) that of the method Python runs or of the operator itself."""
    if operator_dispatch.is_operator_name(name):
        return operator_dispatch.operator_vjp_rrule(
            _plain_method_vjp_rrule, vjp_function_rrule, site, g, obj, name, *args
        )
    return _plain_method_vjp_rrule(site, g, obj, name, *args, **kwargs)


def _bound_rrule(site, g, bound, args, kwargs, callee=None):
    """The rule of ``function_vjp`` for a callable that calls a Python function with
    arguments of its own first (a callable object, a bound method, a partial): that
    function's, those leading arguments' cotangents dropped -- but for a library object
    called through its class's rule (``f(q)`` of an interp1d, head ``(f,)``), whose own
    cotangent is its receiver's."""
    target, head, fixed = bound
    y, inner = vjp_function_rrule(site, g, target, *head, *args, **{**fixed, **kwargs})
    n = len(head)
    own = dynamic_reverse.is_own_receiver(head, callee)

    def bound_vjp_pullback(dy):
        if tangents.is_zero(dy):
            return (NO_TANGENT, ZERO, NO_TANGENT) + (ZERO,) * len(args)
        c = inner((ZERO,) * n + tuple(dy))  # site, g, target, *head, *arguments
        return (NO_TANGENT, c[1], c[3] if own else NO_TANGENT, *c[3 + n :])

    return tuple(y)[n:], bound_vjp_pullback


def _alone_rrule(site, g, obj, name, alone, args, kwargs):
    """The rule of ``method_vjp`` for ``obj.name(*args)`` where Python calls ``alone``
    without ``obj`` (``type(self).f(self, x)``, ``self.act_fn(z)``): ``function_vjp``'s,
    with ``obj`` and the name in their places."""
    y, inner = vjp_function_rrule(site, g, alone, *args, **kwargs)

    def method_vjp_pullback(dy):
        if tangents.is_zero(dy):
            return (NO_TANGENT, ZERO, NO_TANGENT, NO_TANGENT) + (ZERO,) * len(args)
        c = inner(tuple(dy[1:]))  # site, g, fn, *arguments
        return (NO_TANGENT, c[1], NO_TANGENT, NO_TANGENT, *c[3:])

    return (NO_TANGENT, *y), method_vjp_pullback


#: The rule of ``function_vjp(site, g, fn, *args)`` (rules that call user functions in
#: their transformable pullbacks use it: see user_function_calls.py).
vjp_function_rrule = _vjp_function_rrule(skip_receiver=False)


def _as_constructed_rrule(fn):
    # the function a call of a plain class runs (its constructor: no gradient flows into
    # the class), else fn itself, whose cotangent passes: a callable value inactive in the
    # gradient that wrote this call may vary in the next derivative (an interpolant made
    # from the data called at q, differentiated in q and then in the data)
    made = dynamic_calls.as_constructed(fn)
    if made is not fn:
        return made, lambda dy: (NO_TANGENT,)
    return fn, lambda dy: (dy,)


def _as_constructed_tangent(args, tangents, kwargs):
    (fn,) = args
    return ZERO if dynamic_calls.as_constructed(fn) is not fn else tangents[0]


@transformable
def as_constructed_pullback(dy, fn):
    if dynamic_calls.as_constructed(fn) is not fn:
        return (NO_TANGENT,)
    return (dy,)


def _matmul_lhs_rrule(g, a, b):
    # y = g @ conj(b).T (the adjoint of a -> a @ b), any shapes matmul takes: its adjoint in
    # g is that product again, dy @ b; in b, the cotangent of b in dy @ b.
    def matmul_lhs_pullback(dy):
        if dy is ZERO:
            return ZERO, NO_TANGENT, ZERO
        d = densify(dy)
        dg = ZERO if tangents.is_zero(g) else unbroadcast(d @ b, densify(g))
        return dg, NO_TANGENT, runtime.matmul_rhs_cotangent(g, d, b)

    return runtime.matmul_lhs_cotangent(g, a, b), matmul_lhs_pullback


def _matmul_rhs_rrule(g, a, b):
    # y = conj(a).T @ g (the adjoint of b -> a @ b): in g, a @ dy; in a, the cotangent of
    # a in a @ dy.
    def matmul_rhs_pullback(dy):
        if dy is ZERO:
            return ZERO, ZERO, NO_TANGENT
        d = densify(dy)
        dg = ZERO if tangents.is_zero(g) else unbroadcast(a @ d, densify(g))
        return dg, runtime.matmul_lhs_cotangent(g, a, d), NO_TANGENT

    return runtime.matmul_rhs_cotangent(g, a, b), matmul_rhs_pullback


def _pow_exponent_rrule(g, base, result):
    y = runtime.pow_exponent_cotangent(g, base, result)

    def pow_exponent_pullback(dy):
        if dy is ZERO or g is ZERO:
            return ZERO, ZERO, ZERO
        b = np.asarray(base)
        positive = b > 0
        log = np.log(np.where(positive, b, 1.0))
        dg = dy * np.where(positive, result * log, 0.0)
        dbase = dy * np.where(positive, g * result / np.where(positive, b, 1.0), 0.0)
        dresult = dy * np.where(positive, g * log, 0.0)
        return (
            unbroadcast(dg, g),
            unbroadcast(dbase, base),
            unbroadcast(dresult, result),
        )

    return y, pow_exponent_pullback


def register(reg):
    def r(fn, rule):
        reg.register(fn, rule, family=FAMILY, trusted=True)

    r(tangents.densify, _identity_rrule(tangents.densify))
    r(runtime.as_sequence, _identity_rrule(runtime.as_sequence))
    r(unpacking.zip_bounded, _identity_rrule(unpacking.zip_bounded))
    r(runtime.sequence_cotangent, _identity_rrule(runtime.sequence_cotangent))
    r(tangents.add, _add_rrule)
    r(tangents.unbroadcast, _unbroadcast_rrule)
    r(read_folds.fold_reads, _fold_reads_rrule)
    r(tangents.getitem_cotangent, _getitem_cotangent_rrule)
    r(tangents.read_cotangent, _linear_rrule(tangents.read_cotangent, read_cotangent_pullback))
    r(
        tangents.broadcast_cotangent,
        _linear_rrule(tangents.broadcast_cotangent, broadcast_cotangent_pullback),
    )
    r(runtime.tuple_item, _tuple_item_rrule)
    r(runtime.dict_item, _dict_item_rrule)
    r(runtime.plus_cotangents, _plus_cotangents_rrule)
    r(runtime.repeat_cotangent, _repeat_cotangent_rrule)
    r(dynamic_vjps.method_vjp, _method_vjp_rrule)
    r(dynamic_calls.as_constructed, _as_constructed_rrule)
    reg.set_pullback_function(dynamic_calls.as_constructed, as_constructed_pullback)
    reg.lookup(dynamic_calls.as_constructed).extra["tangent"] = _as_constructed_tangent
    r(dynamic_vjps.function_vjp, vjp_function_rrule)
    r(runtime.matmul_lhs_cotangent, _matmul_lhs_rrule)
    r(runtime.matmul_rhs_cotangent, _matmul_rhs_rrule)
    r(runtime.pow_exponent_cotangent, _pow_exponent_rrule)
    from .pullback_runtime_pullbacks import (
        masked_pullback,
        register_pullbacks,
        zero_safe_product_pullback,
    )

    # g * d made zero-safe (zero_safe.py): its pullback is itself zero-safe
    r(zero_safe_product, _bilinear_rrule(zero_safe_product, zero_safe_product_pullback))
    reg.lookup(zero_safe_product).extra["tangent"] = zero_safe_tangent

    r(where_masks.masked, _linear_rrule(where_masks.masked, masked_pullback))
    # the identity whose cotangent is masked (a branch's member on a loop's tape)
    r(where_masks.kept, _linear_rrule(where_masks.kept, masked_pullback))

    register_pullbacks(reg)
    set_pullbacks(
        reg,
        (
            (tangents.read_cotangent, read_cotangent_pullback),
            (tangents.broadcast_cotangent, broadcast_cotangent_pullback),
        ),
    )
    reg.non_differentiable(
        runtime.zero_cotangent,
        runtime.integer_results,  # (a guard of the generated code: transform/integer_dtypes)
        runtime.vjp_zero,
        runtime.scalar_seed,
        where_masks.branch_mask,
        where_masks.selection_mask,
        where_masks.select_mask,
        where_masks.inner_mask,
        elementwise_in_x,
        dynamic_vjps.no_cotangents,  # the vjp of xs.index(v) found at run time
        callables.super_method_function,  # the function super().name(x) runs, self first
        with_contexts.Context,  # a context manager runs once around a with body
        explicit_dunders.computes_operator,  # (x.__mul__(y): the branch it runs)
        with_contexts.entered,  # (`with cm(x) as y` with y from x is refused: with_blocks)
        inplace_fields.inplace_snapshot,  # (around a method call run as written)
        inplace_fields.inplace_verify,
        family=FAMILY,
        trusted=True,
    )
    # grad(f) and friends inside a differentiated function build functions (no gradient
    # flows into them); calling the result is differentiated at run time, through the
    # generated gradient of f.
    entry = ENTRY_POINTS
    reg.non_differentiable(
        entry.grad,
        entry.value_and_grad,
        entry.jacobian,
        entry.hessian,
        entry.hvp,
        family=FAMILY,
        trusted=True,
    )
    # An attribute store (obj.n += 1) runs as a setattr statement; the transformation
    # refuses one that a gradient would have to flow through.
    if reg.lookup(builtins.setattr) is None:
        reg.non_differentiable(builtins.setattr, family=FAMILY, trusted=True)
    # Index expressions in generated code build slice objects: no gradient flows there.
    if reg.lookup(builtins.slice) is None:
        reg.non_differentiable(builtins.slice, family=FAMILY, trusted=True)
