"""Helpers that generated adjoints call at run time."""

from __future__ import annotations

import inspect
import itertools
import math
from types import FunctionType as _FunctionType

import numpy as np

from . import backends, sparse_values
from .backends import as_array
from .errors import (
    NonScalarOutputError,
    NotDifferentiableError,
    NotIterableError,
    RuleError,
)
from .records_dataclasses import is_dataclass_value, swept
from .refused import refuse_refused
from .registry import transformable
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
    if _endless(iterable):  # list() would never return
        raise NotIterableError(
            f"a loop goes over itertools.{type(iterable).__name__}(...), which never ends, and "
            "pullback reads what a loop goes over into a list before the loop runs.\n"
            "Fix: loop over a range of the steps instead (`for k in range(max_iter):` with "
            "the same break), count with enumerate (`enumerate(xs, start=1)` for "
            "`zip(itertools.count(1), xs)`), use the repeated value itself (for "
            "`zip(xs, itertools.repeat(c))`) or index the cycled sequence (`ys[k % len(ys)]`)."
        )
    try:
        return list(iterable)
    except TypeError:
        raise NotIterableError(
            f"a for loop iterates over a {type(iterable).__name__}, which is not iterable "
            "(Python would raise the same TypeError).\n"
            "Fix: loop over a list, tuple, array or range(...)."
        ) from None


def _endless(iterable) -> bool:
    """Whether ``iterable`` is one of itertools' iterators that never end: ``count``,
    ``cycle`` (of a non-empty iterable: an empty one ends, but its length is unknown until
    read, so every cycle is taken as endless) and ``repeat`` without ``times``."""
    if isinstance(iterable, (itertools.count, itertools.cycle)):
        return True
    if isinstance(iterable, itertools.repeat):
        try:
            iterable.__length_hint__()
        except TypeError:  # repeat(value) has no length: it never ends
            return True
    return False


def checked_count(items, count, at_least=False):
    """``items`` (a sequence) for an unpacking target of ``count`` names (``at_least``:
    with a starred name too), or Python's ``ValueError`` for another number of items."""
    n = len(items)
    if n == count or (at_least and n > count):
        return items
    if at_least or n < count:
        expected = f"at least {count}" if at_least else f"{count}"
        raise ValueError(f"not enough values to unpack (expected {expected}, got {n})")
    raise ValueError(f"too many values to unpack (expected {count})")


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
        refuse_refused(y)  # a gradient differentiated again that needed a refused cotangent
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


def integer_results(dtype) -> bool:
    """Whether a call's ``dtype`` makes its results integers or booleans: piecewise
    constant in float inputs, so their derivative is zero. The generated code of a rule
    call that passes a ``dtype`` asks this before its pullback runs (reverse mode) and
    before its tangent is computed (forward mode): transform/integer_dtypes.py."""
    if dtype is None:
        return False
    try:
        return np.dtype(dtype).kind in "biu"
    except TypeError:  # another library's dtype object (array_api_strict.int64): its name
        name = str(dtype).rsplit(".", 1)[-1]
        try:
            return np.dtype(name).kind in "biu"
        except TypeError:
            return False  # a dtype of no NumPy name: its results are taken as floats


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
    name = type(iterable).__name__
    if isinstance(inspect.getattr_static(type(iterable), "__iter__", None), _FunctionType):
        # a user's class with its own __iter__, met in a function whose module neither
        # defines nor imports it (the dispatch goes only where such a class is in sight)
        fix = (
            f"Fix: import {name} into the module of the function that loops over or unpacks "
            f"it (`from {type(iterable).__module__} import {name}`): pullback then runs "
            f"{name}.__iter__ and differentiates it; or loop over a list of its items."
        )
    else:
        fix = (
            "Fix: loop over or unpack a list, tuple or array of the differentiated values "
            "(or loop over range(len(...)))."
        )
    raise NotDifferentiableError(
        f"a gradient flows back through the items of a {name}, which "
        "pullback reads once into a list when a loop or an unpacking (`a, b = ...`) goes "
        "over it: its items have no place to send the gradient to.\n" + fix
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


@transformable  # the generated code of a ** b calls it; second derivatives run through it
def pow_base_derivative(a, b):
    """``d(a ** b) / da``: ``b * a ** (b - 1)``, and 0 where ``b`` is 0, ``a ** 0`` being 1
    for every ``a``. The formula alone reads ``0 * 0 ** -1`` there: NaN for arrays (a
    mass-action rate ``np.prod(c ** orders)`` with a zero concentration at order 0), and
    ZeroDivisionError for Python floats. The base is made 1 only where both are 0, so the
    derivative in ``b`` (``a ** (b - 1) * (1 + b log a)``) stays right wherever ``a`` is not 0.

    >>> pow_base_derivative(0.0, 0.0), pow_base_derivative(2.0, 3.0)
    (0.0, 12.0)
    >>> pow_base_derivative(np.array([0.0, 0.0, 3.0]), np.array([0.0, 1.0, 2.0]))
    array([0., 1., 6.])
    """
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return b * np.power(np.where((b == 0) & (a == 0), 1, a), b - 1)
    numbers = (int, float, complex, np.number)
    # (another library's arrays, Dask's or the array API's, keep the formula: no truth test)
    if isinstance(a, numbers) and isinstance(b, numbers) and b == 0 and a == 0:
        return 0.0 * a  # at a = 0 only: elsewhere the formula's derivative in b is needed
    return b * a ** (b - 1)


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


def _other_product(a, b) -> bool:
    """Whether ``a @ b`` has an operand that is no NumPy value: a SciPy sparse matrix
    (True: :mod:`pullback.sparse_values` gives the cotangents) or an object with no array
    form, refused by name (its ``@`` is its own code, which no rule covers)."""
    found = False
    for x in (a, b):
        if type(x) is np.ndarray or isinstance(x, _NUMPY_VALUES) or backends.is_foreign_array(x):
            continue
        if sparse_values.is_sparse(x):
            found = True
        elif not (hasattr(x, "__array__") or hasattr(x, "__array_interface__")):
            sparse_values.refuse_operand(x, "@")
    return found


_NUMPY_VALUES = (np.ndarray, np.generic, float, int, complex, bool, list, tuple)


def matmul_lhs_cotangent(g, a, b):
    """The cotangent of ``a`` in ``a @ b``."""
    if g is ZERO:
        return ZERO
    if (type(a) is not np.ndarray or type(b) is not np.ndarray) and _other_product(a, b):
        return sparse_values.sparse_lhs_cotangent(g, a, b)
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
    if (type(a) is not np.ndarray or type(b) is not np.ndarray) and _other_product(a, b):
        return sparse_values.sparse_rhs_cotangent(g, a, b)
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
