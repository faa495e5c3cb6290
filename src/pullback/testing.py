"""Tools to test rules and gradients against finite differences.

* :func:`check_rrule` checks one rule of a registry: the value it computes, the shapes,
  dtypes and values of its cotangents (against central finite differences), that it
  changes neither its arguments nor the incoming cotangent, and that it accepts a
  symbolic ``ZERO`` cotangent.
* :func:`check_grads` checks what :func:`pullback.vjp` computes for a whole function.
* :func:`arrays`, :func:`broadcastable_shapes`, :func:`distinct_arrays` and
  :data:`DOMAINS` are `hypothesis <https://hypothesis.readthedocs.io>`_ strategies for
  inputs inside a function's domain (hypothesis is needed only for these).

>>> import numpy as np
>>> check_rrule(np.tanh, np.linspace(-1.0, 1.0, 5))

How the comparison works
------------------------
For an output cotangent ``dy`` (random, with the structure, shapes and dtypes of the
output) a rule's cotangent ``dx`` must satisfy ``<dx, v> = d/dt <f(x + t v), dy>`` for
every direction ``v``. Both sides are computed for a few random directions per argument;
the right side with a fourth-order central difference in float64 (float32 and complex64
inputs are promoted for the finite differences, so the reference is accurate and the
tolerance only has to absorb the rule's own rounding). Complex values are paired as
``<a, b> = Re(sum(conj(a) * b))``: the cotangent of ``z = u + iw`` is ``dL/du + i dL/dw``.

A mismatch is reported element by element: the worst ``(argument, index, expected, got)``.

Tolerances (``|got - expected| <= atol + rtol * scale`` where ``scale`` is the size of the
terms summed in ``<dx, v>``) are chosen from the lowest precision among the inputs and
outputs, see :data:`TOLERANCES`. float32 is looser because the rule computes in float32:
its cotangents carry about ``1e-7`` relative rounding per operation, more through a
matrix factorization (the shipped rules' largest float32 errors are about a tenth of
the tolerance; float64 ones about a hundredth).
"""

from __future__ import annotations

import copy
import math

import numpy as np

from .registry import NONDIFF, SCALAR, default_registry, qualified_name
from .second_order_check import check_rrule_second_order
from .tangents import NO_TANGENT, ZERO, IndexedCotangent, is_differentiable_value, unbroadcast

__all__ = [
    "DOMAINS",
    "TOLERANCES",
    "arrays",
    "broadcastable_shapes",
    "check_grads",
    "check_rrule",
    "check_rrule_second_order",
    "distinct_arrays",
    "random_like",
]

#: ``(rtol, atol)`` for cotangents, by the lowest precision among inputs and outputs.
TOLERANCES = {
    "float64": (1e-6, 1e-9),
    "float32": (1e-4, 1e-5),
}
#: Relative tolerance for comparing a rule's primal output with the function's own.
PRIMAL_RTOL = {"float64": 1e-10, "float32": 1e-5}

_SEQ = (list, tuple)


# -- nested values: tuples, lists, dicts of scalars and arrays ---------------------------
def _is_container(x) -> bool:
    return isinstance(x, (list, tuple, dict))


def _items(x):
    if isinstance(x, dict):
        return list(x.items())
    return list(enumerate(x))


def _rebuild(x, values):
    if isinstance(x, dict):
        return dict(zip(x.keys(), values, strict=True))
    if type(x) in _SEQ:
        return type(x)(values)
    if isinstance(x, tuple):  # a namedtuple
        return type(x)(*values)
    return list(values)


def _leaves(x, path=()):
    """``(path, leaf)`` for every differentiable leaf of a nested value."""
    if _is_container(x):
        out = []
        for k, v in _items(x):
            out.extend(_leaves(v, path + (k,)))
        return out
    if is_differentiable_value(x):
        return [(path, x)]
    return []


def _map_leaves(x, f, path=()):
    """``x`` with every differentiable leaf replaced by ``f(path, leaf)``."""
    if _is_container(x):
        return _rebuild(x, [_map_leaves(v, f, path + (k,)) for k, v in _items(x)])
    if is_differentiable_value(x):
        return f(path, x)
    return x


def _get(x, path):
    for k in path:
        if x is ZERO or x is NO_TANGENT or x is None:
            return ZERO
        x = x[k] if not isinstance(x, dict) else x.get(k, ZERO)
    return x


def _path_text(path) -> str:
    return "".join(f"[{k!r}]" for k in path)


def _precision(*values) -> str:
    for v in values:
        for _, leaf in _leaves(v):
            dt = np.result_type(leaf) if not isinstance(leaf, (float, complex)) else None
            if dt is not None and dt.itemsize <= (4 if dt.kind == "f" else 8):
                return "float32"
    return "float64"


def _upcast(x):
    """``x`` with float32/complex64 leaves promoted (for the finite differences)."""

    def up(_, leaf):
        if isinstance(leaf, np.ndarray):
            if leaf.dtype == np.float32 or leaf.dtype == np.float16:
                return leaf.astype(np.float64)
            if leaf.dtype == np.complex64:
                return leaf.astype(np.complex128)
            return leaf
        if isinstance(leaf, (np.float32, np.float16)):
            return np.float64(leaf)
        if isinstance(leaf, np.complex64):
            return np.complex128(leaf)
        return leaf

    return _map_leaves(x, up)


def _upcast_dtype(v):
    """A float32/complex64 dtype argument promoted (finite differences run in float64)."""
    try:
        dt = np.dtype(v) if isinstance(v, (type, np.dtype)) else None
    except TypeError:
        return v
    if dt == np.float32 or dt == np.float16:
        return np.float64
    if dt == np.complex64:
        return np.complex128
    return v


def _readonly(x):
    """A deep copy of ``x`` whose arrays cannot be written."""

    def ro(v):
        if isinstance(v, np.ndarray):
            c = v.copy(order="K")  # keep the memory layout (ravel(order="K") reads it)
            c.setflags(write=False)
            return c
        if _is_container(v):
            return _rebuild(v, [ro(item) for _, item in _items(v)])
        return copy.copy(v)

    return ro(x)


def _same(a, b) -> bool:
    """Exact equality of two nested values (NaNs equal), for the mutation checks."""
    if _is_container(a) or _is_container(b):
        if type(a) is not type(b) or len(a) != len(b):
            return False
        return all(_same(x, y) for (_, x), (_, y) in zip(_items(a), _items(b), strict=True))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a = np.asarray(a)
        b = np.asarray(b)
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        if a.dtype.kind in "fc":
            return bool(np.array_equal(a, b, equal_nan=True))
        return bool(np.array_equal(a, b))
    try:
        return bool(a == b) or (a != a and b != b)
    except (TypeError, ValueError):
        return a is b


def random_like(x, rng):
    """A random value with the structure, shapes and dtypes of ``x``.

    Leaves without a tangent become ``ZERO``; arrays are read-only.
    """

    def rnd(_, leaf):
        shape = np.shape(leaf)
        dt = np.result_type(leaf)
        if dt.kind == "c":
            v = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)) / math.sqrt(2)
        else:
            v = rng.standard_normal(shape)
        if isinstance(leaf, np.ndarray):
            v = np.asarray(v, dtype=dt)
            v.setflags(write=False)
            return v
        if isinstance(leaf, np.generic):
            return dt.type(v)
        return complex(v) if isinstance(leaf, complex) else float(v)

    def walk(v):
        if _is_container(v):
            # A cotangent of a tuple output is a plain tuple (never a namedtuple).
            parts = [walk(item) for _, item in _items(v)]
            if isinstance(v, dict):
                return dict(zip(v.keys(), parts, strict=True))
            return list(parts) if isinstance(v, list) else tuple(parts)
        if is_differentiable_value(v):
            return rnd((), v)
        return ZERO

    return walk(x)


def _direction(x, rng):
    """A random direction for every differentiable leaf of ``x`` (entries in [-1, 1])."""

    def rnd(_, leaf):
        shape = np.shape(leaf)
        v = rng.standard_normal(shape)
        if np.iscomplexobj(leaf):
            v = v + 1j * rng.standard_normal(shape)
        m = np.max(np.abs(v)) if np.size(v) else 1.0
        v = v / (m if m > 0 else 1.0)
        if isinstance(leaf, np.ndarray):
            return np.asarray(v)
        return complex(v) if np.iscomplexobj(v) else float(v)

    return _map_leaves(x, rnd)


def _pair(a, b) -> float:
    """``Re(sum(conj(a) * b))`` summed over matching differentiable leaves, in float64."""
    if a is ZERO or b is ZERO or a is NO_TANGENT or b is NO_TANGENT or a is None:
        return 0.0
    if _is_container(a):
        return sum(_pair(x, _get(b, (k,))) for k, x in _items(a))
    if not is_differentiable_value(a) or not (
        is_differentiable_value(b) or isinstance(b, np.ndarray)
    ):
        return 0.0
    a = np.asarray(a)
    b = np.asarray(b)
    if a.dtype.kind == "c" or b.dtype.kind == "c":
        return float(np.real(np.vdot(a.astype(np.complex128), b.astype(np.complex128))))
    return float(np.vdot(a.astype(np.float64), b.astype(np.float64)))


def _abs_pair(a, b) -> float:
    """``sum(|a| * |b|)`` over matching leaves: the size of the terms of ``_pair``."""
    if a is ZERO or b is ZERO or a is NO_TANGENT or b is NO_TANGENT or a is None:
        return 0.0
    if _is_container(a):
        return sum(_abs_pair(x, _get(b, (k,))) for k, x in _items(a))
    a = np.asarray(a)
    b = np.asarray(b)
    if a.dtype.kind not in "fc" or b.dtype.kind not in "fcb":
        return 0.0
    return float(np.sum(np.abs(a.astype(np.complex128)) * np.abs(b.astype(np.complex128))))


def _fd_directional(L, h):
    """The derivative at 0 of ``t -> L(t)`` by the fourth-order central difference."""
    return (8.0 * (L(h) - L(-h)) - (L(2 * h) - L(-2 * h))) / (12.0 * h)


def _shift_arg(args, i, direction, t):
    """``args`` with argument ``i`` moved by ``t * direction``."""

    def shift(p, leaf):
        moved = leaf + t * _get(direction, p)
        if isinstance(leaf, np.ndarray):  # keep the memory layout (for order="K"/"A")
            out = np.empty_like(leaf, dtype=moved.dtype)
            out[...] = moved
            return out
        return moved

    args = list(args)
    args[i] = _map_leaves(args[i], shift)
    return args


# -- check_rrule -------------------------------------------------------------------------
def check_rrule(
    fn,
    *args,
    registry=None,
    rtol=None,
    atol=None,
    rng=None,
    fkwargs=None,
    fd_step=1e-3,
    n_directions=2,
    output_cotangent=None,
    check_indexed=True,
    check_forward=True,
    constants=(),
    second_order=False,
    **kwargs,
):
    """Check the rule registered for ``fn`` at ``fn(*args, **kwargs)``.

    Raises ``AssertionError`` naming the problem (for a wrong cotangent: the argument,
    the element, the finite-difference value and the rule's value). Checks, in order:

    1. ``fn`` has a rule (not a non-differentiable entry) in ``registry`` (default: the
       default registry);
    2. the rule's output equals ``fn(*args, **kwargs)`` (type, shape, dtype, values);
    3. the pullback returns a tuple with one cotangent per positional argument: for a
       float or complex argument ``ZERO`` or a value of its shape and dtype (a real
       cotangent for a real argument; a list/tuple for a list/tuple argument), for any
       other argument ``NO_TANGENT`` (``ZERO``, ``None`` or a value of the right shape
       are accepted);
    4. neither the arguments nor ``dy`` were changed (arrays are passed read-only);
    5. each cotangent matches central finite differences of ``<fn(...), dy>`` along
       ``n_directions`` random directions;
    6. ``pullback(ZERO)`` (and a tuple of ``ZERO``\\ s for a tuple output) gives zeros,
       and a tuple cotangent with ``ZERO`` in some places gives what zeros would;
    7. an :class:`~pullback.tangents.IndexedCotangent` ``dy`` gives what the dense one
       gives (``check_indexed``);
    8. for an elementwise (``scalar``) rule, the partial derivatives that the code
       generator inlines agree with the rule's pullback;
    9. (real values, random ``dy``) the forward mode that :func:`pullback.jvp` derives
       from the rule is the transpose of its pullback: ``<J v, dy> = <J^T dy, v>``
       (``check_forward``);
    10. with ``second_order=True``, :func:`check_rrule_second_order`: the rule has a
        second-order path, its pullback function agrees with its pullback, and reverse
        over reverse through it agrees with finite differences of the gradient.

    ``rng`` is a seed or a ``numpy.random.Generator`` (default seed 0). Keyword arguments
    of ``fn`` whose names clash with these parameters go in ``fkwargs``.
    ``output_cotangent`` replaces the random ``dy``. ``constants`` lists the positions of
    float arguments that are settings, not inputs (``ord=inf`` of a norm, ``rcond``):
    their cotangent must be ``NO_TANGENT`` or ``ZERO`` and is not compared with finite
    differences.
    """
    kwargs = {**(fkwargs or {}), **kwargs}
    reg = registry if registry is not None else default_registry()
    rule = reg.lookup(fn)
    label = rule.name if rule is not None else qualified_name(fn)
    where = f"check_rrule({label})"
    if rule is None:
        raise AssertionError(f"{where}: no rule is registered for {label}")
    if rule.kind == NONDIFF:
        raise AssertionError(
            f"{where}: {label} is registered as non-differentiable; there is no rule to check"
        )
    if not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(0 if rng is None else rng)

    saved_args = copy.deepcopy(args)
    ro_args = _readonly(args)
    expected_y = fn(*copy.deepcopy(args), **kwargs)
    result = rule.rrule(*ro_args, **kwargs)
    if not (isinstance(result, tuple) and len(result) == 2 and callable(result[1])):
        raise AssertionError(f"{where}: a rule must return (y, pullback), got {result!r}")
    y, pullback = result

    precision = _precision(args, y)
    d_rtol, d_atol = TOLERANCES[precision]
    rtol = d_rtol if rtol is None else rtol
    atol = d_atol if atol is None else atol
    _check_primal(where, y, expected_y, PRIMAL_RTOL[precision])
    if not _leaves(y):
        raise AssertionError(f"{where}: the output {_describe(y)} carries no tangent")

    dy = output_cotangent if output_cotangent is not None else random_like(y, rng)
    saved_dy = copy.deepcopy(dy)
    cots = pullback(dy)
    _check_cotangent_tuple(where, cots, args)
    if not _same(ro_args, saved_args):
        raise AssertionError(f"{where}: the rule or its pullback changed its arguments")
    if not _same(dy, saved_dy):
        raise AssertionError(f"{where}: the pullback changed the output cotangent dy")
    constants = tuple(k % len(args) for k in constants) if args else ()
    for i, (c, a) in enumerate(zip(cots, args, strict=True)):
        if i in constants:
            if not (c is NO_TANGENT or c is ZERO or c is None):
                raise AssertionError(
                    f"{where}: argument {i} is a constant setting; expected NO_TANGENT, "
                    f"got {_describe(c)}"
                )
            continue
        _check_cotangent_type(where, f"argument {i}", c, a)

    # 5. values against finite differences
    up_args = _upcast(list(args))
    up_dy = _upcast(dy)
    up_kwargs = {k: _upcast_dtype(v) for k, v in kwargs.items()}

    def objective(a):
        return _pair(fn(*a, **up_kwargs), up_dy)

    for i, arg in enumerate(args):
        if not _leaves(arg) or i in constants:
            continue
        _check_directions(
            where, objective, up_args, i, cots[i], n_directions, fd_step, rtol, atol, precision, rng
        )

    # 6. symbolic zeros (constant settings are left out of the comparisons)
    args = tuple(None if i in constants else a for i, a in enumerate(args))
    _check_zero(where, "pullback(ZERO)", pullback(ZERO), args)
    if _is_container(y) and not isinstance(y, dict):
        zeros = type(dy)(ZERO for _ in dy) if type(dy) in _SEQ else tuple(ZERO for _ in dy)
        _check_zero(where, "pullback(tuple of ZEROs)", pullback(zeros), args)
        parts = [k for k, d in enumerate(dy) if d is not ZERO]
        if len(parts) > 1:
            total = None
            for k in parts:
                single = [ZERO] * len(dy)
                single[k] = dy[k]
                single = type(dy)(single) if type(dy) in _SEQ else tuple(single)
                out = pullback(single)
                _check_cotangent_tuple(where, out, args)
                total = (
                    out if total is None else [_add(t, o) for t, o in zip(total, out, strict=True)]
                )
            _compare(
                where, "the sum of pullbacks of one output at a time", total, cots, args, rtol, atol
            )

    # 7. an IndexedCotangent dy must give what the dense dy gives
    if check_indexed:
        indexed = _indexed(dy)
        if indexed is not None:
            _compare(where, "pullback(IndexedCotangent)", pullback(indexed), cots, args, rtol, atol)

    # 8. the inline form of an elementwise rule
    if rule.kind == SCALAR:
        for k, d in enumerate(rule.derivatives):
            if d is None or k >= len(args) or not _leaves(args[k]):
                continue
            if any(np.iscomplexobj(leaf) for _, leaf in _leaves(args)):
                break
            values = [np.asarray(a) if type(a) in _SEQ else a for a in ro_args]
            inline = unbroadcast(dy * d(y, *values), args[k])
            _compare(
                where, f"the inline derivative {k}", [inline], [cots[k]], [args[k]], rtol, atol
            )

    # 9. forward mode derived from the rule (what jvp uses) is its transpose
    # (not with a given output_cotangent, which may avoid directions the rule refuses)
    real = not any(np.iscomplexobj(leaf) for _, leaf in _leaves((ro_args, y)))
    if check_forward and output_cotangent is None and real:
        _check_forward(where, rule, ro_args, kwargs, dy, cots, constants, rng, rtol, atol)

    # 10. second order
    if second_order:
        wrt = tuple(k for k in range(len(args)) if k not in constants) if constants else None
        check_rrule_second_order(fn, *args, wrt=wrt, registry=reg, rng=rng, **kwargs)


def _check_forward(where, rule, args, kwargs, dy, cots, constants, rng, rtol, atol):
    """``<J v, dy> = sum_i <cot_i, v_i>`` for random tangents ``v``."""
    from .runtime import rule_tangent

    tangents = []
    for i, a in enumerate(args):
        tangents.append(ZERO if i in constants or not _leaves(a) else _direction(a, rng))
    _, jv = rule_tangent(rule, tuple(args), tuple(tangents), kwargs)
    forward = _pair(jv, dy) if not _is_container(jv) or _is_container(dy) else 0.0
    if _is_container(dy) and _is_container(jv):
        forward = sum(_pair(x, _get(dy, (k,))) for k, x in _items(jv))
    reverse = sum(_pair(c, t) for c, t in zip(cots, tangents, strict=True))
    if not abs(forward - reverse) <= atol + rtol * (abs(forward) + abs(reverse)):
        raise AssertionError(
            f"{where}: forward mode derived from the rule disagrees with its pullback: "
            f"<J v, dy> = {forward:.10g} but <J^T dy, v> = {reverse:.10g}"
        )


def _add(a, b):
    if a is ZERO or a is NO_TANGENT or a is None:
        return b
    if b is ZERO or b is NO_TANGENT or b is None:
        return a
    if _is_container(a):
        return _rebuild(a, [_add(x, _get(b, (k,))) for k, x in _items(a)])
    return a + b


def _indexed(dy):
    """``dy`` with its arrays wrapped as IndexedCotangents (None when it has no arrays)."""
    found = []

    def wrap(_, leaf):
        if isinstance(leaf, np.ndarray) and leaf.ndim:
            found.append(True)
            return IndexedCotangent(leaf.shape, leaf.dtype, Ellipsis, leaf)
        return leaf

    out = _map_leaves(dy, wrap)
    return out if found else None


def _describe(v) -> str:
    if isinstance(v, np.ndarray):
        return f"array(shape={v.shape}, dtype={v.dtype})"
    if isinstance(v, np.generic):
        return f"{type(v).__name__}({v!r})"
    if _is_container(v):
        return f"{type(v).__name__} of {len(v)}"
    return f"{type(v).__name__} {v!r}"


def _check_primal(where, y, expected, rtol, path=()):
    what = f"output{_path_text(path)}"
    if _is_container(expected):
        if type(y) is not type(expected) or len(y) != len(expected):
            raise AssertionError(
                f"{where}: {what} is {_describe(y)}, the function returns {_describe(expected)}"
            )
        for (k, a), (_, b) in zip(_items(y), _items(expected), strict=True):
            _check_primal(where, a, b, rtol, path + (k,))
        return
    if isinstance(expected, np.ndarray) != isinstance(y, np.ndarray) or (
        np.shape(y) != np.shape(expected)
    ):
        raise AssertionError(
            f"{where}: {what} is {_describe(y)}, the function returns {_describe(expected)}"
        )
    if isinstance(expected, (np.ndarray, np.generic)) and np.result_type(y) != np.result_type(
        expected
    ):
        raise AssertionError(
            f"{where}: {what} has dtype {np.result_type(y)}, the function returns "
            f"{np.result_type(expected)}"
        )
    try:
        ye = np.asarray(expected)
        yr = np.asarray(y)
    except Exception:  # noqa: BLE001 - not an array: compare as objects
        if y != expected:
            raise AssertionError(f"{where}: {what} is {y!r}, expected {expected!r}") from None
        return
    if ye.dtype.kind in "fc":
        big = float(np.max(np.abs(ye))) if ye.size else 0.0
        close = np.isclose(yr, ye, rtol=rtol, atol=rtol * big, equal_nan=True)
        if not np.all(close):
            idx = np.unravel_index(int(np.argmin(close)), ye.shape) if ye.ndim else ()
            raise AssertionError(
                f"{where}: {what} differs from the function's at index {idx}: "
                f"{yr[idx]!r} != {ye[idx]!r}"
            )
    elif not np.array_equal(yr, ye):
        raise AssertionError(f"{where}: {what} differs from the function's")


def _check_cotangent_tuple(where, cots, args):
    if not isinstance(cots, tuple):
        raise AssertionError(
            f"{where}: the pullback must return a tuple (one cotangent per positional "
            f"argument), got {_describe(cots)}"
        )
    if len(cots) != len(args):
        raise AssertionError(
            f"{where}: the pullback returned {len(cots)} cotangents for {len(args)} "
            "positional arguments"
        )


def _check_cotangent_type(where, what, c, arg):
    if c is ZERO:
        return
    if not _leaves(arg):  # no tangent: NO_TANGENT (or anything shaped like the argument)
        if c is NO_TANGENT or c is None:
            return
        if not _is_container(arg) and np.shape(c) != np.shape(arg):
            raise AssertionError(
                f"{where}: {what} has no tangent; expected NO_TANGENT, got {_describe(c)}"
            )
        return
    if c is None:
        raise AssertionError(f"{where}: {what} is differentiable but got None")
    if isinstance(arg, dict):
        if not isinstance(c, dict) or not set(c) <= set(arg):
            raise AssertionError(
                f"{where}: {what} is a dict; its cotangent must be a dict with some of its "
                f"keys, got {_describe(c)}"
            )
        for k, a in arg.items():
            _check_cotangent_type(where, f"{what}[{k!r}]", c.get(k, ZERO), a)
        return
    if _is_container(arg):
        if not _is_container(c) or len(c) != len(arg):
            raise AssertionError(
                f"{where}: {what} is a {type(arg).__name__} of {len(arg)}; its cotangent "
                f"must be one too, got {_describe(c)}"
            )
        for k, a in _items(arg):
            _check_cotangent_type(where, f"{what}[{k!r}]", _get(c, (k,)), a)
        return
    if isinstance(c, IndexedCotangent):
        raise AssertionError(f"{where}: {what}: a rule must return dense cotangents")
    if np.shape(c) != np.shape(arg):
        raise AssertionError(
            f"{where}: {what} has shape {np.shape(arg)}, its cotangent {np.shape(c)}"
        )
    cdt = np.result_type(c)
    adt = np.result_type(arg)
    if cdt.kind not in "fc":
        raise AssertionError(f"{where}: {what}: cotangent of dtype {cdt}, expected {adt}")
    if adt.kind == "f" and cdt.kind == "c":
        raise AssertionError(f"{where}: {what} is real, its cotangent is complex ({cdt})")
    if isinstance(arg, (np.ndarray, np.generic)) and cdt != adt:
        if not (isinstance(c, (float, complex)) and adt.itemsize >= 8):
            raise AssertionError(f"{where}: {what} has dtype {adt}, its cotangent {cdt}")


def _check_zero(where, what, cots, args):
    _check_cotangent_tuple(where, cots, args)
    for i, (c, a) in enumerate(zip(cots, args, strict=True)):
        if not _leaves(a):
            continue
        _check_cotangent_type(where, f"{what}: argument {i}", c, a)
        for p, _ in _leaves(a):
            v = _get(c, p)
            if v is ZERO or v is NO_TANGENT or v is None:
                continue
            if np.any(np.asarray(v) != 0):
                raise AssertionError(
                    f"{where}: {what} gave a nonzero cotangent for argument {i}{_path_text(p)}"
                )


def _compare(where, what, got, expected, args, rtol, atol):
    _check_cotangent_tuple(where, tuple(got), args)
    for i, (g, e, a) in enumerate(zip(got, expected, args, strict=True)):
        for p, _ in _leaves(a):
            gv = _get(g, p)
            ev = _get(e, p)
            gz = gv is ZERO or gv is NO_TANGENT or gv is None
            ez = ev is ZERO or ev is NO_TANGENT or ev is None
            if gz and ez:
                continue
            gv = np.zeros_like(np.asarray(ev)) if gz else np.asarray(gv)
            ev = np.zeros_like(gv) if ez else np.asarray(ev)
            scale = float(np.max(np.abs(ev))) if ev.size else 0.0
            if gv.shape != ev.shape or not np.allclose(gv, ev, rtol=rtol, atol=atol + rtol * scale):
                raise AssertionError(
                    f"{where}: {what} differs for argument {i}{_path_text(p)}:\n"
                    f"  got      {gv!r}\n  expected {ev!r}"
                )


def _report_elementwise(where, objective, up_args, i, cot, rtol, atol, h, precision, fallback):
    """Find the worst element of argument ``i`` by one-element finite differences."""
    worst = None
    budget = 600
    for p, leaf in _leaves(up_args[i]):
        leaf_cot = _get(cot, p)
        dense = (
            np.zeros(np.shape(leaf))
            if leaf_cot is ZERO or leaf_cot is None
            else np.asarray(leaf_cot, dtype=np.complex128)
        )
        parts = (1.0, 1j) if np.iscomplexobj(leaf) else (1.0,)
        for idx in np.ndindex(*np.shape(leaf)):
            for unit in parts:
                if budget <= 0:
                    break
                budget -= 1

                def along(t, p=p, idx=idx, unit=unit):
                    def bump(q, lf):
                        if q != p:
                            return lf
                        if isinstance(lf, np.ndarray):
                            e = np.zeros(lf.shape, dtype=np.result_type(lf, type(unit)))
                            e[idx] = unit
                            return lf + t * e
                        return lf + t * unit

                    a = list(up_args)
                    a[i] = _map_leaves(a[i], bump)
                    return objective(a)

                expected = _fd_directional(along, h)
                g = dense[idx] if np.ndim(dense) else dense
                got = float(np.real(g)) if unit == 1.0 else float(np.imag(g))
                err = abs(got - expected)
                tol = atol + rtol * (abs(expected) + abs(got))
                ratio = err / tol
                if worst is None or ratio > worst[0]:
                    part = "" if len(parts) == 1 else (" (real part)" if unit == 1.0 else " (imag)")
                    worst = (ratio, p, idx, expected, got, part)
    lines = [f"{where}: the cotangent of argument {i} does not match finite differences"]
    if worst is not None and worst[0] > 1:
        _, p, idx, expected, got, part = worst
        lines.append(
            f"  worst element: argument {i}{_path_text(p)}, index {idx}{part}: "
            f"expected {expected:.10g} (finite differences), got {got:.10g} (rule)"
        )
    else:
        expected, got = fallback
        lines.append(
            f"  along a random direction: expected {expected:.10g} (finite differences), "
            f"got {got:.10g} (rule)"
        )
    lines.append(f"  (rtol={rtol:g}, atol={atol:g}, precision {precision}, step {h:g})")
    raise AssertionError("\n".join(lines))


# -- check_grads -------------------------------------------------------------------------
def check_grads(
    f,
    *args,
    wrt=0,
    order=1,
    rtol=None,
    atol=None,
    rng=None,
    registry=None,
    fd_step=1e-3,
    n_directions=2,
):
    """Compare what :func:`pullback.vjp` computes for ``f`` with finite differences.

    ``wrt`` is an argument index or a tuple of them. For ``order=1``: with a random output
    cotangent ``dy``, each cotangent ``dx`` that ``vjp(f, *args, wrt=wrt)`` returns must
    satisfy ``<dx, v> = d/dt <f(x + t v), dy>`` for random directions ``v``.

    For ``order=2`` and a scalar ``f``: the Hessian-vector product ``H u`` (``u`` random)
    from :func:`pullback.hvp` (reverse over reverse: the generated gradient differentiated
    again) is compared with finite differences of the reverse-mode gradient along random
    directions. For a non-scalar ``f``, or where pullback refuses the second derivative (a
    ``PullbackError``), the check compares finite differences of the reverse-mode
    gradient with a fourth-order mixed second difference of ``<f, dy>``: that checks the
    gradient to second order, but not a reverse-over-reverse code path. Tolerances for
    order 2 are ten times looser.

    Returns how the derivatives were checked: ``"reverse"`` (order 1),
    ``"reverse over reverse"`` or ``"finite differences of the gradient"`` (order 2).
    Raises ``AssertionError`` with the worst mismatch.
    """
    from . import vjp

    if not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(0 if rng is None else rng)
    single = isinstance(wrt, (int, np.integer))
    wrt_t = (int(wrt),) if single else tuple(wrt)
    precision = _precision(args)
    d_rtol, d_atol = TOLERANCES[precision]
    rtol = d_rtol if rtol is None else rtol
    atol = d_atol if atol is None else atol
    label = f"check_grads({getattr(f, '__qualname__', f)!s})"
    options = {} if registry is None else {"registry": registry}

    if order == 1:
        y, back = vjp(f, *args, wrt=wrt, **options)
        dy = random_like(y, rng)
        cots = back(dy)
        cots = (cots,) if single else tuple(cots)
        _check_against_fd(
            label, f, args, wrt_t, dy, cots, rtol, atol, rng, fd_step, n_directions, precision
        )
        return "reverse"
    if order != 2:
        raise ValueError("check_grads supports order=1 and order=2")
    return _check_second_order(
        label, f, args, wrt_t, rtol * 10, atol * 10, rng, fd_step, precision, options
    )


def _check_against_fd(label, f, args, wrt_t, dy, cots, rtol, atol, rng, h, n_dirs, precision):
    if len(cots) != len(wrt_t):
        raise AssertionError(f"{label}: got {len(cots)} cotangents for wrt={wrt_t}")
    up_args = _upcast(list(args))
    up_dy = _upcast(dy)

    def objective(a):
        return _pair(f(*a), up_dy)

    for k, i in enumerate(wrt_t):
        _check_cotangent_type(label, f"argument {i}", cots[k], args[i])
        _check_directions(
            label, objective, up_args, i, cots[k], n_dirs, h, rtol, atol, precision, rng
        )


def _check_directions(where, objective, up_args, i, cot, n_dirs, step, rtol, atol, precision, rng):
    """``<cot, v> = d/dt objective(args with argument i moved by t v)`` for random ``v``."""
    for _ in range(n_dirs):
        v = _direction(up_args[i], rng)
        expected = _fd_directional(lambda t, v=v: objective(_shift_arg(up_args, i, v, t)), step)
        got = _pair(cot, v)
        scale = abs(expected) + _abs_pair(cot, v)
        if not abs(got - expected) <= atol + rtol * scale:
            _report_elementwise(
                where,
                objective,
                up_args,
                i,
                cot,
                rtol,
                atol,
                step,
                precision,
                fallback=(expected, got),
            )


def _inner(y, dy):
    """``Re <dy, y>``, written with NumPy calls that pullback can differentiate."""
    return np.real(np.vdot(dy, y))


def _check_second_order(label, f, args, wrt_t, rtol, atol, rng, h, precision, options):
    from . import grad
    from .errors import PullbackError

    y0 = f(*args)
    if isinstance(y0, (tuple, list, dict)):
        raise ValueError("check_grads(order=2) needs a function with one array output")
    dy = random_like(y0, rng)
    us = tuple(_direction(args[i], rng) for i in wrt_t)
    # Reverse over reverse, for a function with one scalar output: the Hessian-vector
    # product of f (through its generated gradient) against finite differences of the
    # reverse-mode gradient.
    if np.ndim(y0) == 0:
        from . import hvp

        try:
            products = [hvp(f, wrt=i, **options)(*args, us[k]) for k, i in enumerate(wrt_t)]
        except PullbackError:
            products = None
        if products is not None:
            up_args = _upcast(list(args))
            for k, i in enumerate(wrt_t):

                def grad_along(a, i=i, k=k):
                    return _pair(grad(f, wrt=i, **options)(*a), us[k])

                for _ in range(2):
                    w = _direction(args[i], rng)
                    expected = _fd_directional(
                        lambda t, i=i, w=w: grad_along(_shift_arg(up_args, i, w, t)), h
                    )
                    got = _pair(products[k], w)
                    scale = abs(expected) + _abs_pair(products[k], w)
                    if not abs(got - expected) <= atol + rtol * scale:
                        raise AssertionError(
                            f"{label} (order 2, reverse over reverse): argument {i}: "
                            f"<H u, w> is {got:.10g} by reverse over reverse, {expected:.10g} "
                            "by differencing the reverse-mode gradient"
                        )
            return "reverse over reverse"

    # Fallback: finite differences of the reverse-mode gradient against a fourth-order
    # mixed second difference of <f, dy>.
    from . import vjp

    def reverse_along_u(a):
        _, back = vjp(f, *a, wrt=wrt_t, **options)
        gs = back(dy)
        return sum(_pair(g, u) for g, u in zip(gs, us, strict=True))

    up_args = _upcast(list(args))
    up_dy = _upcast(dy)
    weights = ((-2, 1.0), (-1, -8.0), (1, 8.0), (2, -1.0))
    hh = max(h, 1e-2)
    for i in wrt_t:
        w = _direction(args[i], rng)
        fd_of_grad = _fd_directional(
            lambda t, i=i, w=w: reverse_along_u(_shift_arg(up_args, i, w, t)), h
        )
        mixed = 0.0
        for p, cp in weights:
            for q, cq in weights:
                a = _shift_arg(up_args, i, w, p * hh)
                for k, j in enumerate(wrt_t):
                    a = _shift_arg(a, j, us[k], q * hh)
                mixed += cp * cq * _pair(f(*a), up_dy)
        mixed /= 144.0 * hh * hh
        if not abs(mixed - fd_of_grad) <= atol + rtol * (abs(mixed) + abs(fd_of_grad)):
            raise AssertionError(
                f"{label} (order 2, finite differences of the gradient): argument {i}: the "
                f"derivative of <grad, u> along a random direction is {fd_of_grad:.10g} by "
                f"differencing the reverse-mode gradient, {mixed:.10g} by a mixed second "
                "difference of f"
            )
    return "finite differences of the gradient"


# -- hypothesis strategies ---------------------------------------------------------------
#: Named input domains ``(low, high)``; each stays clear of its function's singular points.
DOMAINS = {
    "real": (-2.0, 2.0),
    "small": (-0.5, 0.5),
    "positive": (0.2, 3.0),
    "unit": (-0.9, 0.9),
    "open01": (0.05, 0.95),
    "above1": (1.1, 3.0),
    "nonzero": (-2.0, 2.0),  # with ``avoid=(0.0,)`` by default
}
_DEFAULT_AVOID = {"nonzero": (0.0,)}


def _domain(domain):
    if isinstance(domain, str):
        return DOMAINS[domain], _DEFAULT_AVOID.get(domain, ())
    return tuple(domain), ()


def arrays(dtype=np.float64, shape=(3,), domain="real", avoid=(), margin=0.1):
    """A hypothesis strategy for arrays of ``dtype`` and ``shape`` (a tuple or a strategy)
    whose elements lie in ``domain`` (a name from :data:`DOMAINS` or ``(low, high)``) and at
    least ``margin`` away from each point of ``avoid`` (non-differentiable points).
    """
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp

    (lo, hi), default_avoid = _domain(domain)
    avoid = tuple(avoid) + tuple(default_avoid)
    dtype = np.dtype(dtype)
    width = 32 if dtype in (np.float32, np.complex64) else 64
    if width == 32:  # bounds exactly representable in float32, inside the domain
        lo32, hi32 = np.float32(lo), np.float32(hi)
        lo = float(lo32 if lo32 >= lo else np.nextafter(lo32, np.float32(np.inf)))
        hi = float(hi32 if hi32 <= hi else np.nextafter(hi32, np.float32(-np.inf)))
    real = st.floats(lo, hi, width=width, allow_nan=False, allow_infinity=False)
    if avoid:
        real = real.filter(lambda v: all(abs(v - p) >= margin for p in avoid))
    elements = real
    if dtype.kind == "c":
        elements = st.builds(complex, real, real)
    return hnp.arrays(dtype, shape, elements=elements)


def distinct_arrays(dtype=np.float64, shape=(4,), domain="real", gap=0.05):
    """Arrays whose elements differ pairwise by at least ``gap`` (no ties: for sort,
    max, median...)."""
    from hypothesis import strategies as st

    (lo, hi), _ = _domain(domain)
    dtype = np.dtype(dtype)
    n = int(np.prod(shape))
    if n * gap > hi - lo:
        raise ValueError("the domain is too small for that many distinct elements")
    slack = (hi - lo) - n * gap

    @st.composite
    def build(draw):
        cuts = sorted(draw(st.lists(st.floats(0, slack), min_size=n, max_size=n)))
        values = [lo + c + k * gap for k, c in enumerate(cuts)]
        order = draw(st.permutations(range(n)))
        return np.asarray([values[j] for j in order], dtype=dtype).reshape(shape)

    return build()


def broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, min_side=1, max_side=4):
    """A hypothesis strategy for ``num_shapes`` shapes that broadcast together."""
    from hypothesis.extra import numpy as hnp

    return hnp.mutually_broadcastable_shapes(
        num_shapes=num_shapes,
        min_dims=min_dims,
        max_dims=max_dims,
        min_side=min_side,
        max_side=max_side,
    ).map(lambda b: b.input_shapes)
