"""The vjp functions of elementwise rules, in the differentiable subset.

A gradient runs an elementwise rule inline where the kinds of its arguments prove them
real (``g * d_maximum_0(y, a, b)``, differentiable again), and its closure pullback where
they are not known (a value from ``rng.standard_normal(n)`` or a global array). The closure
cannot be differentiated again, so where such a gradient is differentiated again
(``hessian``, ``hvp``: Monte Carlo payoffs ``np.maximum(ST - K, 0.0)``) it calls the
function made here instead: the same partial derivatives, conjugated for a holomorphic
rule, each cotangent summed back to its argument's shape. A one-argument elementwise
function held in a variable or stored on an object (``act = np.tanh``, ``self.act_fn``)
gets its vjp function here too (:func:`scalar_vjp`, what dynamic_calls.py gives for it).

>>> import numpy as np
>>> from pullback.registry import default_registry
>>> f = elementwise_vjp(default_registry(), np.maximum, 2)
>>> f(np.ones(2), np.array([0.0, -1.0]), 0.0)  # a tie splits the cotangent
(array([0.5, 0. ]), np.float64(1.5))
"""

from __future__ import annotations

import math

import gast
import numpy as np

from .errors import HigherOrderError
from .list_operands import dense_operand
from .registry import ENTRY_POINTS, SCALAR, qualified_name
from .source import FunctionSource
from .tangents import unbroadcast
from .zero import ZERO
from .zero_safe import zero_safe_product

_MADE: dict = {}  # (fn, its derivatives) -> the compiled vjp function


def elementwise_vjp(registry, fn, nargs: int):
    """``F(g, x0, ..., x{nargs-1})`` returning one cotangent per argument for the trusted
    elementwise rule of ``fn``, or None where the rule is not one or a derivative it needs
    is not a function pullback transforms."""
    rule = registry.lookup(fn)
    if rule is None or rule.kind != SCALAR or not rule.trusted or nargs < 2:
        return None
    derivatives = tuple(rule.derivatives[:nargs])
    if len(derivatives) < nargs:
        derivatives += (None,) * (nargs - len(derivatives))
    if not any(derivatives) or not all(
        d is None or getattr(d, "__pullback_transformable__", False) for d in derivatives
    ):
        return None
    holomorphic = rule.extra.get("holomorphic", True)
    singular = rule.extra.get("singular", False)
    key = (fn, derivatives, holomorphic, singular)
    if key not in _MADE:
        _MADE[key] = _compile(fn, derivatives, holomorphic, singular)
    return _MADE[key]


def _product(g: str, d: str, singular: bool) -> str:
    """``g * d`` in a vjp's text; zero-safe where the rule's derivative may be infinite
    (pullback.zero_safe: 0 where the cotangent is 0)."""
    return f"zero_safe_product({g}, {d})" if singular else f"{g} * {d}"


def _compile(fn, derivatives, holomorphic, singular=False):
    name = f"{getattr(fn, '__name__', 'function')}_vjp"
    xs = [f"x{k}" for k in range(len(derivatives))]
    args = ", ".join(xs)
    # A list argument as the array NumPy makes of it: the formulas below use operators.
    body = [f"    {x} = dense_operand({x})" for x in xs]
    body.append(f"    y = function({args})")
    if not holomorphic:
        body += [f"    require_real({x}, {qualified_name(fn)!r})" for x in xs]
    outs = []
    for k, d in enumerate(derivatives):
        if d is None:
            outs.append("ZERO")
            continue
        body.append(f"    d{k} = derivative{k}(y, {args})")
        if holomorphic:  # a holomorphic function's pullback: g * conj(f'(x))
            body += [f"    if _np.iscomplexobj(d{k}):", f"        d{k} = _np.conj(d{k})"]
        outs.append(f"unbroadcast({_product('g', f'd{k}', singular)}, x{k})")
    body.append(f"    return ({', '.join(outs)},)")
    text = f"def {name}(g, {args}):\n" + "\n".join(body) + "\n"
    namespace = {"function": fn, "_np": np, "_math": math, "unbroadcast": unbroadcast}
    namespace["dense_operand"] = dense_operand
    namespace.update(require_real=require_real, ZERO=ZERO, zero_safe_product=zero_safe_product)
    namespace.update({f"derivative{k}": d for k, d in enumerate(derivatives)})
    return compile_transformable(text, name, namespace, f"<pullback: vjp of {qualified_name(fn)}>")


def compile_transformable(text, name, namespace, filename):
    """The function ``name`` defined by our own template ``text``, marked transformable and
    carrying its source, so that a derivative of code calling it transforms it."""
    exec(compile(text, filename, "exec"), namespace)  # noqa: S102 - our own template
    made = namespace[name]
    made.__pullback_transformable__ = True
    lines = text.splitlines(keepends=True)

    def source():
        tree = gast.parse(text).body[0]
        return FunctionSource(
            fn=made, filename=filename, first_line=1, indent=0, lines=lines, tree=tree
        )

    made.__pullback_source__ = source
    return made


def require_real(x, name):
    """Refuse a complex ``x`` in the vjp of a non-holomorphic elementwise function (SciPy's
    ``psi``): its pullback ``g * d(y, x)`` holds, but a derivative of that text would
    treat ``d`` as analytic in ``x``, which it is not (the second derivative of ``abs`` of
    a complex value came out wrong, before its factor was written for complex values:
    a rule with ``extra["complex_factor"]`` is not refused)."""
    if np.iscomplexobj(x):
        raise HigherOrderError(
            f"pullback: a second derivative through {name} of a complex value is not "
            "supported (the function is not holomorphic).\n"
            "Fix: differentiate a real form of it, a function of z.real and z.imag (as "
            "np.hypot(z.real, z.imag) is of abs)."
        )


_SCALAR_VJPS: dict = {}


def scalar_vjp(registry, fn):
    """The vjp function ``F(g, x)`` of the one-argument elementwise rule of ``fn``, written
    in the differentiable subset (see :func:`_scalar_rule_vjp`): what a gradient that is
    differentiated again calls where the argument's kind is not known (so the rule's
    closure pullback ran). None where the rule has neither an inline derivative nor a
    transformable derivative function."""
    return _scalar_rule_vjp(registry, fn, False, 1, {})


def _scalar_rule_vjp(registry, fn, receiver: bool, nargs: int, kwargs):
    """For an elementwise function with an inline derivative (``np.tanh``, ``math.exp``,
    ...) held in a variable or stored on an object (``act = np.tanh``, ``self.act_fn``):
    its vjp function ``F(g, x)`` (``F(g, obj, x)`` with the receiver), written in the
    differentiable subset from the derivative's inline form (or a call of its derivative
    function, where that is transformable: ``psi``'s), so that a second derivative
    transforms it. None for any other callee."""
    if fn is None or kwargs or nargs != 1 + receiver:
        return None
    try:
        rule = registry.lookup(fn)
    except TypeError:  # an unhashable value: not a rule
        return None
    if rule is None or rule.kind != SCALAR:
        return None
    # A holomorphic rule's pullback is g * conj(f'(x)); another's (abs) is g * d(y, x) with
    # its derivative function d, as its closure computes it (not the inline form).
    holomorphic = rule.extra.get("holomorphic", True)
    form = ENTRY_POINTS.inline_form(rule) if holomorphic else None
    derivative = None
    if not form:  # its derivative function, where it is one pullback transforms (psi's)
        derivative = rule.derivatives[0] if rule.derivatives else None
        if not getattr(derivative, "__pullback_transformable__", False):
            return None
    singular = rule.extra.get("singular", False)
    key = (fn, receiver, form or derivative, singular)
    if key not in _SCALAR_VJPS:
        # (a complex argument is refused unless the rule's factor is right for one)
        checked = holomorphic or rule.extra.get("complex_factor", False)
        _SCALAR_VJPS[key] = _compiled_scalar_vjp(
            fn, form, receiver, derivative, holomorphic, checked, singular
        )
    return _SCALAR_VJPS[key]


def _compiled_scalar_vjp(
    fn, form, receiver: bool, derivative=None, holomorphic=True, complex_ok=True, singular=False
):
    """The text of the vjp function, compiled, carrying its source for the transform: the
    derivative from its inline ``form``, or (``form`` None) a call of ``derivative(y, x)``;
    conjugated for a holomorphic function."""
    name = f"{getattr(fn, '__name__', 'function')}_vjp"
    params = "g, obj, x" if receiver else "g, x"
    d = form.format("x", y="y") if form else "derivative(y, x)"
    text = (
        f"def {name}({params}):\n"
        "    x = dense_operand(x)  # (a list as the array NumPy makes of it: see below)\n"
        "    y = function(x)\n"
        + ("" if complex_ok else f"    require_real(x, {qualified_name(fn)!r})\n")
        + f"    d = {d}\n"
        + (
            "    if _np.iscomplexobj(d):  # a holomorphic function's pullback: g * conj(f'(x))\n"
            "        d = _np.conj(d)\n"
            if holomorphic
            else ""
        )
        + f"    return ({_product('g', 'd', singular)},)\n"
    )
    namespace = {"function": fn, "derivative": derivative, "_np": np, "_math": math}
    namespace["zero_safe_product"] = zero_safe_product
    namespace["dense_operand"] = dense_operand
    namespace["require_real"] = require_real
    made = compile_transformable(text, name, namespace, f"<pullback: vjp of {qualified_name(fn)}>")
    # (one cotangent, elementwise in g and x: a np.where branch's member, where_branches)
    made.__pullback_elementwise_vjp__ = not receiver
    return made
