"""Check one rule of a registry against finite differences (:func:`check_rrule`)."""

from __future__ import annotations

import copy

import numpy as np

from ..registry import NONDIFF, SCALAR, default_registry, qualified_name
from ..tangents import NO_TANGENT, ZERO, unbroadcast
from .comparisons import (
    add,
    as_indexed,
    check_cotangent_tuple,
    check_cotangent_type,
    check_directions,
    check_forward_mode,
    check_primal,
    check_zero,
    compare,
    describe,
)
from .numeric import (
    PRIMAL_RTOL,
    SEQUENCES,
    TOLERANCES,
    is_container,
    leaves,
    pair,
    precision_of,
    random_like,
    readonly,
    same,
    upcast,
    upcast_dtype,
)
from .second_order import check_rrule_second_order


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
    ro_args = readonly(args)
    expected_y = fn(*copy.deepcopy(args), **kwargs)
    result = rule.rrule(*ro_args, **kwargs)
    if not (isinstance(result, tuple) and len(result) == 2 and callable(result[1])):
        raise AssertionError(f"{where}: a rule must return (y, pullback), got {result!r}")
    y, pullback = result

    precision = precision_of(args, y)
    d_rtol, d_atol = TOLERANCES[precision]
    rtol = d_rtol if rtol is None else rtol
    atol = d_atol if atol is None else atol
    check_primal(where, y, expected_y, PRIMAL_RTOL[precision])
    if not leaves(y):
        raise AssertionError(f"{where}: the output {describe(y)} carries no tangent")

    dy = output_cotangent if output_cotangent is not None else random_like(y, rng)
    saved_dy = copy.deepcopy(dy)
    if any(k in rule.extra.get("keyword_cotangents", ()) for k in kwargs):
        pullback = _positional_cotangents(pullback, len(args))
    cots = pullback(dy)
    check_cotangent_tuple(where, cots, args)
    if not same(ro_args, saved_args):
        raise AssertionError(f"{where}: the rule or its pullback changed its arguments")
    if not same(dy, saved_dy):
        raise AssertionError(f"{where}: the pullback changed the output cotangent dy")
    constants = tuple(k % len(args) for k in constants) if args else ()
    for i, (c, a) in enumerate(zip(cots, args, strict=True)):
        if i in constants:
            if not (c is NO_TANGENT or c is ZERO or c is None):
                raise AssertionError(
                    f"{where}: argument {i} is a constant setting; expected NO_TANGENT, "
                    f"got {describe(c)}"
                )
            continue
        check_cotangent_type(where, f"argument {i}", c, a)

    # 5. values against finite differences
    up_args = upcast(list(args))
    up_dy = upcast(dy)
    up_kwargs = {k: upcast_dtype(v) for k, v in kwargs.items()}

    def objective(a):
        return pair(fn(*a, **up_kwargs), up_dy)

    for i, arg in enumerate(args):
        if not leaves(arg) or i in constants:
            continue
        check_directions(
            where, objective, up_args, i, cots[i], n_directions, fd_step, rtol, atol, precision, rng
        )

    # 6. symbolic zeros (constant settings are left out of the comparisons)
    args = tuple(None if i in constants else a for i, a in enumerate(args))
    check_zero(where, "pullback(ZERO)", pullback(ZERO), args)
    if is_container(y) and not isinstance(y, dict):
        zeros = type(dy)(ZERO for _ in dy) if type(dy) in SEQUENCES else tuple(ZERO for _ in dy)
        check_zero(where, "pullback(tuple of ZEROs)", pullback(zeros), args)
        parts = [k for k, d in enumerate(dy) if d is not ZERO]
        if len(parts) > 1:
            total = None
            for k in parts:
                single = [ZERO] * len(dy)
                single[k] = dy[k]
                single = type(dy)(single) if type(dy) in SEQUENCES else tuple(single)
                out = pullback(single)
                check_cotangent_tuple(where, out, args)
                total = (
                    out if total is None else [add(t, o) for t, o in zip(total, out, strict=True)]
                )
            compare(
                where, "the sum of pullbacks of one output at a time", total, cots, args, rtol, atol
            )

    # 7. an IndexedCotangent dy must give what the dense dy gives
    if check_indexed:
        indexed = as_indexed(dy)
        if indexed is not None:
            compare(where, "pullback(IndexedCotangent)", pullback(indexed), cots, args, rtol, atol)

    # 8. the inline form of an elementwise rule
    if rule.kind == SCALAR:
        for k, d in enumerate(rule.derivatives):
            if d is None or k >= len(args) or not leaves(args[k]):
                continue
            if any(np.iscomplexobj(leaf) for _, leaf in leaves(args)):
                break
            values = [np.asarray(a) if type(a) in SEQUENCES else a for a in ro_args]
            inline = unbroadcast(dy * d(y, *values), args[k])
            compare(where, f"the inline derivative {k}", [inline], [cots[k]], [args[k]], rtol, atol)

    # 9. forward mode derived from the rule (what jvp uses) is its transpose
    # (not with a given output_cotangent, which may avoid directions the rule refuses)
    real = not any(np.iscomplexobj(leaf) for _, leaf in leaves((ro_args, y)))
    if check_forward and output_cotangent is None and real:
        check_forward_mode(where, rule, ro_args, kwargs, dy, cots, constants, rng, rtol, atol)

    # 10. second order
    if second_order:
        wrt = tuple(k for k in range(len(args)) if k not in constants) if constants else None
        check_rrule_second_order(fn, *args, wrt=wrt, registry=reg, rng=rng, **kwargs)


def _positional_cotangents(pullback, nargs):
    """``pullback`` without the dict of keyword cotangents a rule returns after the
    positional ones (``rule.extra["keyword_cotangents"]``): check_rrule holds keywords
    constant (check_grads differentiates them through a function)."""

    def positional(dy):
        cots = pullback(dy)
        if isinstance(cots, tuple) and len(cots) == nargs + 1 and isinstance(cots[-1], dict):
            return cots[:-1]
        return cots

    return positional
