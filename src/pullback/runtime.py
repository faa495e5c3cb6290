"""Helpers that generated adjoints call at run time."""

from __future__ import annotations

import functools
import inspect
import math
import types

import numpy as np

from . import backends
from .backends import as_array
from .call_cotangents import bound_arguments
from .callables import library_call_function
from .dict_views import dict_view_tangent, is_dict_view_call
from .dynamic_calls import _call_namespace_function, lookup_attribute
from .errors import (
    NonScalarOutputError,
    NotDifferentiableError,
    NotIterableError,
    PullbackError,
    RuleError,
)
from .records_dataclasses import fields_of, is_dataclass_value, swept
from .registry import ENTRY_POINTS, NONDIFF, REFUSED_WHEN_VARIED, qualified_name, transformable
from .tangents import (
    NO_TANGENT,
    ZERO,
    add,
    densify,
    is_operator_object,
    is_zero,
    materialize,
    refuse_operator,
    unbroadcast,
)

_SEQUENCES = (list, tuple, np.ndarray, range, str)


def as_sequence(iterable):
    """Something with ``len()`` and ``[k]`` that iterates like ``iterable``.

    Lists, tuples and arrays are returned as they are (so their cotangents flow back);
    any other iterable (a dict, a generator) is read once into a list.
    """
    if isinstance(iterable, _SEQUENCES):
        return iterable
    try:
        return list(iterable)
    except TypeError:
        raise NotIterableError(
            f"a for loop iterates over a {type(iterable).__name__}, which is not iterable "
            "(Python would raise the same TypeError).\n"
            "Fix: loop over a list, tuple, array or range(...)."
        ) from None


def scalar_seed(y, name: str, what: str = "grad"):
    """The cotangent ``1`` for the real scalar output ``y`` of the function ``name``, in
    ``y``'s precision; a clear error for anything else (an array, a tuple, a complex number:
    the gradient of a complex-valued function is not defined without a convention)."""
    t = type(y)
    if t is float:
        return 1.0
    if t is np.float64 or t is np.float32:
        return t(1.0)
    foreign = backends.is_foreign_array(y)  # a Dask or array-API array
    if (
        isinstance(y, (complex, np.complexfloating))
        or (isinstance(y, np.ndarray) and y.dtype.kind == "c")
        or (foreign and backends.is_complex(y))
    ):
        raise NotDifferentiableError(
            f"{what} needs '{name}' to return a real number, but it returned a complex one "
            f"({type(y).__name__}); the gradient of a complex-valued function is not "
            "defined without choosing a convention.\n"
            f"Fix: return a real scalar: np.real(...), np.abs(...) or np.abs(...) ** 2 of the "
            "result; for complex outputs use pullback.vjp with a complex cotangent."
        )
    if isinstance(y, bool) or not (foreign or isinstance(y, (float, int, np.ndarray, np.generic))):
        raise NonScalarOutputError(
            f"{what} needs '{name}' to return a scalar, but it returned a "
            f"{type(y).__name__}.\n"
            "Fix: return a float (e.g. np.sum(...) of your result); for tuple or array "
            "outputs use pullback.vjp or pullback.jacobian (or has_aux=True to return extra "
            "values)."
        )
    shape = backends.shape_of(y)  # np.size would compute a Dask array
    if math.prod(shape) != 1 or (what != "grad" and len(shape) != 0):
        raise NonScalarOutputError(
            f"{what} needs '{name}' to return a scalar, but it returned an array of shape "
            f"{shape}.\n"
            + (
                "Fix: reduce it to a scalar (np.sum, np.mean, ...), or use pullback.vjp / "
                "pullback.jacobian for non-scalar outputs."
                if what == "grad"
                else "Fix: differentiate a scalar function (for one output of a vector "
                "function h: hessian(lambda x: h(x)[i])); if "
                f"'{name}' is already a gradient (decorated with @grad), pass the function "
                "it differentiates instead."
            )
        )
    if isinstance(y, np.ndarray):
        dtype = y.dtype if y.dtype.kind == "f" else np.float64
        return np.ones(y.shape, dtype=dtype)
    if foreign:  # a 0-d (or one-element) Dask or array-API array: its own lazy one
        return backends.ones_like(y, dtype=None if backends.is_float_array(y) else float)
    if isinstance(y, np.generic) and y.dtype.kind == "f":
        return y.dtype.type(1.0)
    return 1.0


def zero_cotangent(x):
    """A concrete zero gradient for ``x`` (the fused gradient function never returns ZERO
    for a float or array; a ``ZERO`` among ``x``'s items, an entry of a list cotangent
    that a derivative of a gradient takes, keeps ``ZERO``: it has no shape to fill)."""
    return materialize(ZERO, x)


def vjp_zero(x):
    """The cotangent a generated vjp function (``f__vjp``) returns for a parameter that no
    use reached: zeros like ``x`` as :func:`zero_cotangent` gives them, but ``NO_TANGENT``
    (not ``None``) where ``x`` holds no float. Differentiable code calls the vjp as a
    pullback and adds its cotangents to others (a flag passed on to two helpers gets one
    from each), so a zero that is no float must stay the symbolic zero.

    A record's zero is given as the reverse sweep holds a record's cotangent: the tuple of
    its fields' (records.py), not the record :func:`materialize` rebuilds for a user's
    gradient, which the sweep cannot add to another cotangent (the field-less object
    ``h`` of ``h.half(p)`` twice: ``unsupported operand + for Halver and Halver``)."""
    return swept(materialize(ZERO, x, NO_TANGENT))


@transformable
def concrete_cotangent(g, x):
    """``g``, or a concrete zero gradient for ``x`` where ``g`` is ``ZERO`` at run time (an
    adjoint that no use reached on this call): what the fused gradient function returns,
    so that the gradient a second derivative differentiates has ``x``'s shape."""
    if g is ZERO:
        return zero_cotangent(x)
    return g


def tuple_item(g, k):
    """The cotangent of item ``k`` of a tuple/list whose cotangent is ``g``."""
    if g is ZERO or g is NO_TANGENT:
        return ZERO
    return g[k]


def dict_item(g, key):
    """The cotangent of entry ``key`` of a dict whose cotangent is ``g``."""
    if g is ZERO or g is NO_TANGENT:
        return ZERO
    return g.get(key, ZERO)


def sequence_cotangent(g, iterable):
    """Pass the cotangent of ``as_sequence(iterable)`` back to ``iterable``."""
    if g is ZERO or g is NO_TANGENT:
        return ZERO
    if isinstance(iterable, _SEQUENCES):
        if isinstance(iterable, tuple) and isinstance(g, list):
            return tuple(g)
        return g
    raise NotDifferentiableError(
        f"a gradient flows back through the items of a {type(iterable).__name__}, which "
        "pullback reads once into a list when a loop or an unpacking (`a, b = ...`) goes "
        "over it: its items have no place to send the gradient to.\n"
        "Fix: loop over or unpack a list, tuple or array of the differentiated values "
        "(or loop over range(len(...)))."
    )


def sequence_tangent(t, iterable):
    """The tangent of ``as_sequence(iterable)`` in forward mode: a loop over a dict goes
    over its keys, which carry no tangent (``for k in params: ... params[k]`` reads the
    values by key, with their tangents); anything else as :func:`sequence_cotangent`."""
    if isinstance(iterable, dict):
        return ZERO
    return sequence_cotangent(t, iterable)


def plus_cotangents(g, a, b):
    """Cotangents of ``a`` and ``b`` in ``a + b``: split for concatenated tuples and lists,
    summed over broadcast axes for numbers and arrays."""
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        if g is ZERO or g is NO_TANGENT:
            return ZERO, ZERO
        n = len(a)
        return type(a)(g[:n]), type(b)(g[n:])
    for operand in (a, b):  # (whatever the cotangent: a zero may be the method's doing)
        if is_dataclass_value(operand) or is_operator_object(operand):
            refuse_operator(operand)
    return unbroadcast(g, a), unbroadcast(g, b)


@transformable
def times_cotangents(g, a, b):
    """Cotangents of ``a`` and ``b`` in ``a * b`` when their kinds are not known: a tuple or
    list repeated ``n`` times (``[d] * n``, ``n * (x, y)``) gets the sum of its copies'
    cotangents, and ``n`` none; numbers and arrays the product rule (conjugated, summed over
    broadcast axes). Written in the differentiable subset: second order transforms it.

    >>> times_cotangents([1.0, 2.0, 3.0], [0.5], 3)
    ([6.0], ZERO)
    >>> da, db = times_cotangents(np.ones(2), np.array([1.0, 2.0]), 3.0)
    >>> da, float(db)
    (array([3., 3.]), 3.0)
    """
    if isinstance(a, (tuple, list)) and not isinstance(b, np.ndarray):
        return repeat_cotangent(g, a, b), ZERO
    if isinstance(b, (tuple, list)) and not isinstance(a, np.ndarray):
        return ZERO, repeat_cotangent(g, b, a)
    if isinstance(a, (tuple, list)) or isinstance(b, (tuple, list)):
        # a sequence times a NumPy array is NumPy's elementwise product of np.stack(seq)
        return sequence_times_array_cotangents(g, a, b)
    # A zero operand (a cotangent, when a gradient is differentiated again) gives the
    # other operand a zero cotangent.
    da = ZERO if b is ZERO else unbroadcast(g * conjugate(b), a)
    db = ZERO if a is ZERO else unbroadcast(conjugate(a) * g, b)
    return da, db


@transformable
def conjugate(v):
    """The conjugate of a factor in a product rule (here and in generated adjoints). A
    symbolic zero stays one: in a gradient that is differentiated again a factor may be a
    cotangent that is ``ZERO`` at run time (``d_t * g`` after a branch that set ``d_t =
    ZERO``), and it must not reach ``np.conj``. A real Python number is its own conjugate
    (and keeps an array of another namespace that it multiplies in its namespace).

    >>> conjugate(ZERO), conjugate(2.0), conjugate(np.array([1 + 2j]))
    (ZERO, 2.0, array([1.-2.j]))
    """
    if v is ZERO:
        return v
    if isinstance(v, (int, float)):
        return v
    return np.conj(v)


@transformable
def sequence_times_array_cotangents(g, a, b):
    """Cotangents of ``a`` and ``b`` in ``a * b`` where one is a list or tuple and the other
    a NumPy array (NumPy multiplies ``np.stack`` of the sequence): the sequence's as a
    list of its elements' cotangents."""
    sa = a
    if isinstance(a, (tuple, list)):
        sa = np.stack(a)
    sb = b
    if isinstance(b, (tuple, list)):
        sb = np.stack(b)
    da, db = times_cotangents(g, sa, sb)
    if isinstance(a, (tuple, list)) and da is not ZERO:
        da = list(np.unstack(da)) if hasattr(np, "unstack") else list(da)
    if isinstance(b, (tuple, list)) and db is not ZERO:
        db = list(np.unstack(db)) if hasattr(np, "unstack") else list(db)
    return da, db


def repeat_cotangent(g, seq, n):
    """The cotangent of ``seq`` in ``seq * n``: the sum of the cotangents of its copies.

    >>> repeat_cotangent((1.0, 2.0, 3.0, 4.0), (0.0, 0.0), 2)
    (4.0, 6.0)
    """
    if g is ZERO or g is NO_TANGENT:
        return ZERO
    k = len(seq)
    total = [ZERO] * k
    for i in range(max(int(n), 0)):
        for j in range(k):
            total[j] = add(total[j], g[i * k + j])
    return tuple(total) if isinstance(seq, tuple) else total


def pow_exponent_cotangent(g, base, result):
    """The cotangent of ``b`` in ``a ** b``: ``g * a**b * log(a)``, 0 where ``a**b`` is 0."""
    if g is ZERO:
        return ZERO
    if backends.is_array_api(base) or backends.is_array_api(result):
        return backends.pow_exponent_cotangent(g, base, result)
    if np.iscomplexobj(base) or np.iscomplexobj(result):
        return g * np.conj(result * np.log(base))
    if isinstance(base, (float, int)) and isinstance(result, (float, int)):
        if base > 0:
            return g * result * math.log(base)
        return g * 0.0
    base = as_array(base)
    with np.errstate(divide="ignore", invalid="ignore"):
        log = np.log(np.where(base > 0, base, 1.0))
    return g * np.where(base > 0, result * log, 0.0)


def check_cotangents(cotangents, args, rule_name):
    """Check what a user's rule returned: one cotangent per argument, each of its shape."""
    if not isinstance(cotangents, (tuple, list)):
        raise RuleError(
            f"the pullback of the rule for {rule_name} returned a {type(cotangents).__name__}; "
            f"it must return a tuple with one cotangent per positional argument "
            f"({len(args)} here)."
        )
    if len(cotangents) != len(args):
        raise RuleError(
            f"the pullback of the rule for {rule_name} returned {len(cotangents)} cotangents "
            f"for {len(args)} positional arguments.\n"
            "Fix: return one cotangent per positional argument, NO_TANGENT for those that "
            "have none."
        )
    for k, (c, a) in enumerate(zip(cotangents, args, strict=True)):
        if is_zero(c) or not hasattr(a, "shape") and not isinstance(a, (float, int, complex)):
            continue
        cshape = np.shape(densify(c))
        ashape = np.shape(a)
        try:
            out = np.broadcast_shapes(cshape, ashape)
        except ValueError:
            out = None
        if out != ashape and not _sums_to(cshape, ashape):
            raise RuleError(
                f"the pullback of the rule for {rule_name} returned a cotangent of shape "
                f"{cshape} for argument {k}, which has shape {ashape}.\n"
                "Fix: return a cotangent with the argument's shape."
            )
    return cotangents


def _sums_to(cshape, ashape) -> bool:
    """True when a cotangent of ``cshape`` can be summed (unbroadcast) to ``ashape``."""
    if len(cshape) < len(ashape):
        return False
    tail = cshape[len(cshape) - len(ashape) :]
    return all(a == c or a == 1 for a, c in zip(ashape, tail, strict=True))


# -- matrix products, one side at a time -------------------------------------------------
# The reverse sweep asks only for the cotangents of active operands, so x @ w with only w
# differentiated costs one product, not two. A cotangent that is one value broadcast
# (np.sum's pullback gives such a view) turns the product into a sum.


def _broadcast_scalar(g):
    """The value of ``g`` when it is one number broadcast to a shape (all strides 0)."""
    if type(g) is np.ndarray and g.ndim and g.size > 1 and not any(g.strides):
        return g.flat[0]
    return None


def matmul_lhs_cotangent(g, a, b):
    """The cotangent of ``a`` in ``a @ b``."""
    if g is ZERO:
        return ZERO
    g = as_array(densify(g))
    a_, b_ = as_array(a), np.conj(b) if np.iscomplexobj(b) else as_array(b)
    if a_.ndim == 2 and b_.ndim == 2:
        c = _broadcast_scalar(g)
        if c is not None:
            return unbroadcast(np.broadcast_to(c * b_.sum(axis=1), a_.shape), a)
        return unbroadcast(g @ b_.T, a)
    if a_.ndim == 1 and b_.ndim == 1:
        return unbroadcast(g * b_, a)
    if a_.ndim == 1:
        return unbroadcast(np.matmul(b_, g[..., None])[..., 0], a)
    if b_.ndim == 1:
        return unbroadcast(g[..., None] * b_, a)
    return unbroadcast(np.matmul(g, np.swapaxes(b_, -1, -2)), a)


def matmul_rhs_cotangent(g, a, b):
    """The cotangent of ``b`` in ``a @ b``."""
    if g is ZERO:
        return ZERO
    g = as_array(densify(g))
    a_, b_ = np.conj(a) if np.iscomplexobj(a) else as_array(a), as_array(b)
    if a_.ndim == 2 and b_.ndim == 2:
        c = _broadcast_scalar(g)
        if c is not None:
            return unbroadcast(np.broadcast_to((c * a_.sum(axis=0))[:, None], b_.shape), b)
        return unbroadcast(a_.T @ g, b)
    if a_.ndim == 1 and b_.ndim == 1:
        return unbroadcast(g * a_, b)
    if a_.ndim == 1:
        return unbroadcast(a_[:, None] * g[..., None, :], b)
    if b_.ndim == 1:
        return unbroadcast(np.matmul(np.swapaxes(a_, -1, -2), g[..., None])[..., 0], b)
    return unbroadcast(np.matmul(np.swapaxes(a_, -1, -2), g), b)


# -- forward mode -------------------------------------------------------------------------


def list_tangent(tangents, primals):
    """The tangent of a list of arrays, with zeros where an entry has no tangent."""
    if is_zero(tangents):
        tangents = [ZERO] * len(primals)
    return [np.zeros_like(p) if is_zero(d) else d for d, p in zip(tangents, primals, strict=True)]


def same_sequence(like, items):
    """A tuple, list or named tuple of ``like``'s type holding ``items``."""
    items = list(items)
    if hasattr(like, "_fields"):
        return type(like)(*items)
    return type(like)(items)


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
            return y, back(tuple(w))
        except PullbackError:
            pass  # a case the transformable pullback leaves to the rule: by rows below
    # the closure returns (*positional, {keyword: cotangent}) for differentiated keywords
    every = tuple(tangents) + ((moving,) if moving else ())
    attributes = rule.extra.get("result_attributes")
    return y, _tangent_by_rows(y, pullback, args, every, attributes)


def closure_cotangents(cots, nargs, keyword_places):
    """A rule's closure pullback's ``(*positional, {keyword: cotangent})`` in its pullback
    function's layout (one cotangent per parameter, a keyword's at its parameter's place):
    the sweeps of a rule that keeps its closure read the cotangents where the
    differentiable-again code, which calls the function, reads them."""
    if not keyword_places:
        return cots
    if len(keyword_places) == 1 and type(cots) is tuple and len(cots) == nargs + 1:
        keyword, place = keyword_places[0]
        if place == nargs:  # (quad(f, a, b, args=...): the keyword's place is next)
            return cots[:nargs] + (cots[nargs].get(keyword, NO_TANGENT),)
    size = max(nargs, max(place for _, place in keyword_places) + 1)
    out = list(cots[:nargs]) + [NO_TANGENT] * (size - nargs)
    given = cots[nargs] if len(cots) > nargs else {}
    for keyword, place in keyword_places:
        out[place] = given.get(keyword, NO_TANGENT)
    return tuple(out)


def parameter_places(pullback_fn) -> dict:
    """``{name: place}`` of a pullback function's parameters after ``dy`` that a keyword can
    name: such a function returns one cotangent per parameter, in their order, so a
    keyword argument's cotangent is at its parameter's place."""
    params = list(inspect.signature(pullback_fn).parameters.values())[1:]
    return {p.name: k for k, p in enumerate(params) if p.kind == p.POSITIONAL_OR_KEYWORD}


def _tangent_by_rows(y, pullback, args, tangents, attributes=None):
    if isinstance(y, dict) and attributes is not None:
        # a solver's result read by attribute (sol.y): the entries its rule declares
        # differentiable, each from pullbacks of a cotangent holding that entry alone
        out = {}
        for key in attributes:
            if key in y:

                def entry_pullback(dyk, key=key):
                    return pullback({key: dyk})

                out[key] = _tangent_by_rows(y[key], entry_pullback, args, tangents)
        return out
    if isinstance(y, (tuple, list)):
        parts = []
        for k, yk in enumerate(y):

            def part_pullback(dyk, k=k):
                dy = [ZERO] * len(y)
                dy[k] = dyk
                return pullback(same_sequence(y, dy))

            parts.append(_tangent_by_rows(yk, part_pullback, args, tangents))
        return same_sequence(y, parts)
    if isinstance(y, (str, bytes)):  # a key among the values (dict.items()): no tangent
        return ZERO
    if not _is_number_or_array(y):  # a range, None, an object in a tuple: no tangent
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


def _inner(c, d):
    """``Re sum(conj(c) * d)`` over matching leaves of a cotangent and a tangent (zeros
    skipped): the real inner product a complex cotangent (dL/dx + i dL/dy) pairs with."""
    if is_zero(c) or is_zero(d) or c is None or d is None:
        return 0.0
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
    if isinstance(fn, functools.partial):  # its function, the bound arguments first
        n = len(fn.args)
        keywords = {**fn.keywords, **kwargs}
        bound = (ZERO,) * n + tuple(tangents)
        return function_tangent(site, fn.func, (*fn.args, *args), bound, keywords)
    if isinstance(fn, types.FunctionType):
        return site.adjoint_of(fn)(args, tangents, kwargs)
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
    raise site.missing(f"'{getattr(fn, '__name__', fn)}'", qualified_name(fn))


def method_tangent(site, obj, dobj, name, args, tangents, kwargs):
    """``(y, dy)`` for ``obj.name(*args)`` found at run time."""
    if is_dict_view_call(obj, name, args, kwargs):  # params.items()
        return dict_view_tangent(obj, dobj, name)
    method = getattr(type(obj), name, None)
    if method is None and isinstance(obj, types.ModuleType):
        return _call_namespace_function(site, obj, name, args, kwargs)
    if method is None or isinstance(obj, type):
        # type(obj).method(obj, x), self.act_fn(z): the attribute as Python finds it
        return function_tangent(site, lookup_attribute(obj, name), args, tangents, kwargs)
    raw = inspect.getattr_static(type(obj), name, None)
    if isinstance(raw, (staticmethod, classmethod)) and site.registry.lookup(method) is None:
        # self.sigmoid(z) of a @staticmethod: Python passes no 'self' (as reverse mode)
        return function_tangent(site, getattr(obj, name), args, tangents, kwargs)
    if isinstance(obj, (np.ndarray, np.generic)) and site.registry.lookup(method) is None:
        # As call_method does: x.copy() is np.copy(x).
        function = getattr(np, name, None)
        if callable(function) and site.registry.lookup(function) is not None:
            method = function
    return function_tangent(site, method, (obj,) + tuple(args), (dobj,) + tuple(tangents), kwargs)
