"""How :func:`~pullback.testing.check_rrule` compares a rule with what it must compute:
the primal value, the structure, dtypes and values of the cotangents, symbolic zeros,
and the element-by-element report of a mismatch.
"""

from __future__ import annotations

import numpy as np

from ..rule_tangents import rule_tangent
from ..tangents import NO_TANGENT, ZERO, IndexedCotangent
from .numeric import (
    abs_pair,
    at_path,
    direction,
    fd_directional,
    is_container,
    items,
    leaves,
    length,
    map_leaves,
    pair,
    path_text,
    rebuild,
    shift_arg,
)


def check_forward_mode(where, rule, args, kwargs, dy, cots, constants, rng, rtol, atol):
    """``<J v, dy> = sum_i <cot_i, v_i>`` for random tangents ``v``."""

    tangents = []
    for i, a in enumerate(args):
        tangents.append(ZERO if i in constants or not leaves(a) else direction(a, rng))
    _, jv = rule_tangent(rule, tuple(args), tuple(tangents), kwargs)
    forward = pair(jv, dy) if not is_container(jv) or is_container(dy) else 0.0
    if is_container(dy) and is_container(jv):
        forward = sum(pair(x, at_path(dy, (k,))) for k, x in items(jv))
    reverse = sum(pair(c, t) for c, t in zip(cots, tangents, strict=True))
    if not abs(forward - reverse) <= atol + rtol * (abs(forward) + abs(reverse)):
        raise AssertionError(
            f"{where}: forward mode derived from the rule disagrees with its pullback: "
            f"<J v, dy> = {forward:.10g} but <J^T dy, v> = {reverse:.10g}"
        )


def add(a, b):
    if a is ZERO or a is NO_TANGENT or a is None:
        return b
    if b is ZERO or b is NO_TANGENT or b is None:
        return a
    if is_container(a):
        return rebuild(a, [add(x, at_path(b, (k,))) for k, x in items(a)])
    return a + b


def as_indexed(dy):
    """``dy`` with its arrays wrapped as IndexedCotangents (None when it has no arrays)."""
    found = []

    def wrap(_, leaf):
        if isinstance(leaf, np.ndarray) and leaf.ndim:
            found.append(True)
            return IndexedCotangent(leaf.shape, leaf.dtype, Ellipsis, leaf)
        return leaf

    out = map_leaves(dy, wrap)
    return out if found else None


def describe(v) -> str:
    if isinstance(v, np.ndarray):
        return f"array(shape={v.shape}, dtype={v.dtype})"
    if isinstance(v, np.generic):
        return f"{type(v).__name__}({v!r})"
    if is_container(v):
        return f"{type(v).__name__} of {length(v)}"
    return f"{type(v).__name__} {v!r}"


def check_primal(where, y, expected, rtol, path=()):
    what = f"output{path_text(path)}"
    if is_container(expected):
        if type(y) is not type(expected) or length(y) != length(expected):
            raise AssertionError(
                f"{where}: {what} is {describe(y)}, the function returns {describe(expected)}"
            )
        for (k, a), (_, b) in zip(items(y), items(expected), strict=True):
            check_primal(where, a, b, rtol, path + (k,))
        return
    if isinstance(expected, np.ndarray) != isinstance(y, np.ndarray) or (
        np.shape(y) != np.shape(expected)
    ):
        raise AssertionError(
            f"{where}: {what} is {describe(y)}, the function returns {describe(expected)}"
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


def check_cotangent_tuple(where, cots, args):
    if not isinstance(cots, tuple):
        raise AssertionError(
            f"{where}: the pullback must return a tuple (one cotangent per positional "
            f"argument), got {describe(cots)}"
        )
    if len(cots) != len(args):
        raise AssertionError(
            f"{where}: the pullback returned {len(cots)} cotangents for {len(args)} "
            "positional arguments"
        )


def check_cotangent_type(where, what, c, arg):
    if c is ZERO:
        return
    if not leaves(arg):  # no tangent: NO_TANGENT (or anything shaped like the argument)
        if c is NO_TANGENT or c is None:
            return
        if not is_container(arg) and np.shape(c) != np.shape(arg):
            raise AssertionError(
                f"{where}: {what} has no tangent; expected NO_TANGENT, got {describe(c)}"
            )
        return
    if c is None:
        raise AssertionError(f"{where}: {what} is differentiable but got None")
    if isinstance(arg, dict):
        if not isinstance(c, dict) or not set(c) <= set(arg):
            raise AssertionError(
                f"{where}: {what} is a dict; its cotangent must be a dict with some of its "
                f"keys, got {describe(c)}"
            )
        for k, a in arg.items():
            check_cotangent_type(where, f"{what}[{k!r}]", c.get(k, ZERO), a)
        return
    if is_container(arg):
        if not is_container(c) or length(c) != length(arg):
            raise AssertionError(
                f"{where}: {what} is a {type(arg).__name__} of {length(arg)}; its cotangent "
                f"must be one too, got {describe(c)}"
            )
        for k, a in items(arg):
            check_cotangent_type(where, f"{what}[{k!r}]", at_path(c, (k,)), a)
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


def check_zero(where, what, cots, args):
    check_cotangent_tuple(where, cots, args)
    for i, (c, a) in enumerate(zip(cots, args, strict=True)):
        if not leaves(a):
            continue
        check_cotangent_type(where, f"{what}: argument {i}", c, a)
        for p, _ in leaves(a):
            v = at_path(c, p)
            if v is ZERO or v is NO_TANGENT or v is None:
                continue
            if np.any(np.asarray(v) != 0):
                raise AssertionError(
                    f"{where}: {what} gave a nonzero cotangent for argument {i}{path_text(p)}"
                )


def compare(where, what, got, expected, args, rtol, atol):
    check_cotangent_tuple(where, tuple(got), args)
    for i, (g, e, a) in enumerate(zip(got, expected, args, strict=True)):
        for p, _ in leaves(a):
            gv = at_path(g, p)
            ev = at_path(e, p)
            gz = gv is ZERO or gv is NO_TANGENT or gv is None
            ez = ev is ZERO or ev is NO_TANGENT or ev is None
            if gz and ez:
                continue
            gv = np.zeros_like(np.asarray(ev)) if gz else np.asarray(gv)
            ev = np.zeros_like(gv) if ez else np.asarray(ev)
            scale = float(np.max(np.abs(ev))) if ev.size else 0.0
            if gv.shape != ev.shape or not np.allclose(gv, ev, rtol=rtol, atol=atol + rtol * scale):
                raise AssertionError(
                    f"{where}: {what} differs for argument {i}{path_text(p)}:\n"
                    f"  got      {gv!r}\n  expected {ev!r}"
                )


def report_elementwise(where, objective, up_args, i, cot, rtol, atol, h, precision, fallback):
    """Find the worst element of argument ``i`` by one-element finite differences."""
    worst = None
    budget = 600
    for p, leaf in leaves(up_args[i]):
        leaf_cot = at_path(cot, p)
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
                    a[i] = map_leaves(a[i], bump)
                    return objective(a)

                expected = fd_directional(along, h)
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
            f"  worst element: argument {i}{path_text(p)}, index {idx}{part}: "
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


def check_directions(where, objective, up_args, i, cot, n_dirs, step, rtol, atol, precision, rng):
    """``<cot, v> = d/dt objective(args with argument i moved by t v)`` for random ``v``."""
    for _ in range(n_dirs):
        v = direction(up_args[i], rng)
        expected = fd_directional(lambda t, v=v: objective(shift_arg(up_args, i, v, t)), step)
        got = pair(cot, v)
        scale = abs(expected) + abs_pair(cot, v)
        if not abs(got - expected) <= atol + rtol * scale:
            report_elementwise(
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
