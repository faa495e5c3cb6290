"""Rule calls whose ``dtype`` makes integer or boolean results have no derivative.

``np.sum(x, dtype=np.int64)``, ``np.linspace(a, b, 5, dtype=int)``, ``np.full_like(x, v,
dtype=bool)``: the result is piecewise constant in the float inputs, so every argument's
cotangent is zero and the result's tangent is zero. Rather than each rule's pullback
testing its ``dtype`` (they once passed the cotangent on as for a float result: a silent
wrong gradient), both builders guard the one place every rule call goes through:

* the reverse sweep runs a rule call's contributions only ``if not integer_results(d)``
  (:func:`guard_contributions`; the other branch leaves the arguments' adjoints as they
  were), and the differentiated-again gradient keeps that ``if`` (``integer_results`` is
  registered as non-differentiable), so second derivatives are zero there too;
* forward mode computes the value alone and a ``ZERO`` tangent when the dtype is an
  integer one (:func:`guard_tangent`).

(Rules that ship with pullback: a user's rule keeps its own pullback.) Only calls that
spell a ``dtype`` pay: it is found in the call's source when it is
transformed (:func:`dtype_argument`: the ``dtype=`` keyword, or the positional argument at
the callee's ``dtype`` parameter), and a call without one is generated as before.

>>> import gast, numpy as np
>>> call = gast.parse("np.sum(x, 0, np.int64)", mode="eval").body
>>> gast.unparse(dtype_argument(np.sum, call)).strip()
'np.int64'
>>> dtype_argument(np.sum, gast.parse("np.sum(x, 0)", mode="eval").body) is None
True
"""

from __future__ import annotations

import inspect

from .. import runtime
from ..registry import NONDIFF
from .analyze import names_in
from .code import Compound, Line
from .sweep_common import src

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def rule_dtype(builder, call):
    """The node the call ``call`` through a rule (of ``builder.registry``) passes as
    ``dtype``, or None (no rule, a non-differentiable one, no ``dtype`` given). The
    positions of callees' ``dtype`` parameters are kept on ``builder`` (one transform).
    Only the rules that ship with pullback (trusted) are guarded: their ``dtype`` is the
    result's (NumPy's and SciPy's); a user's rule says itself what its ``dtype`` means
    and what its pullback gives."""
    callee = getattr(call, "pb_callee", None)
    if callee is None or callee.kind != "object" or (not call.keywords and len(call.args) < 2):
        return None
    try:
        rule = builder.registry.lookup(callee.obj)
    except TypeError:  # (an unhashable callee)
        return None
    if rule is None or rule.kind == NONDIFF or not rule.trusted:
        return None
    return dtype_argument(callee.obj, call, builder.__dict__.setdefault("_dtype_positions", {}))


def dtype_argument(fn, call, positions=None):
    """The node ``call`` (of ``fn``) passes as ``dtype``, or None: its ``dtype=`` keyword,
    else the positional argument at ``fn``'s ``dtype`` parameter (``np.sum(x, 0, int)``);
    ``positions`` memoizes ``fn -> position``."""
    for k in call.keywords:
        if k.arg == "dtype":
            return k.value
    if len(call.args) < 2:  # (dtype is never a function's first parameter)
        return None
    if positions is None:
        positions = {}
    key = id(fn)  # (fn lives while the transform that holds ``positions`` runs)
    if key not in positions:
        positions[key] = _dtype_position(fn)
    position = positions[key]
    if position is None or len(call.args) <= position:
        return None
    return call.args[position]


def _dtype_position(fn):
    """The position of ``fn``'s ``dtype`` parameter when it may be given by position."""
    try:
        parameters = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # (a builtin without a signature)
        return None
    for k, (name, p) in enumerate(parameters.items()):
        if p.kind not in _POSITIONAL:
            return None
        if name == "dtype":
            return k
    return None


def guard_contributions(builder, dtype, state, out, line, emit) -> None:
    """Reverse sweep: ``emit(state, body)`` (a rule call's contributions to its arguments'
    adjoints) under ``if not integer_results(<dtype>):``, the two branches' adjoint states
    joined as an ``if`` statement's are."""
    test = f"not {builder.bind('integer_results', runtime.integer_results)}({src(dtype)})"
    builder.flush_aliases(out, line)
    inside = state.copy()
    body: list = []
    emit(inside, body)
    builder.flush_aliases(body, line)
    if not body:  # (nothing runs either way: the states the emission left stand)
        state.update(inside)
        return
    skipped = state.copy()
    orelse: list = []
    builder.merge_states(state, inside, body, skipped, orelse, line)
    out.append(Compound(f"if {test}:", body, orelse, frozenset(names_in(dtype)), line))


def guard_tangent(builder, t, v, dtype, lines, line) -> list:
    """Forward mode: ``lines`` (the value of ``t = v`` and its tangent) unless ``dtype`` is
    an integer one, where the value alone is computed and the tangent is ``ZERO``."""
    test = f"{builder.bind('integer_results', runtime.integer_results)}({src(dtype)})"
    constant = [Line(f"{t} = {src(v)}", src=line), Line(f"{builder.prefix}{t} = ZERO", src=line)]
    return [Compound(f"if {test}:", constant, lines, src=line)]
