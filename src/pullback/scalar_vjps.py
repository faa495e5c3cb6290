"""The vjp functions of elementwise rules of several arguments, in the differentiable subset.

A gradient runs an elementwise rule inline where the kinds of its arguments prove them
real (``g * d_maximum_0(y, a, b)``, differentiable again), and its closure pullback where
they are not known (a value from ``rng.standard_normal(n)`` or a global array). The closure
cannot be differentiated again, so where such a gradient is differentiated again
(``hessian``, ``hvp``: Monte Carlo payoffs ``np.maximum(ST - K, 0.0)``) it calls the
function made here instead: the same partial derivatives, conjugated for a holomorphic
rule, each cotangent summed back to its argument's shape.

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
from .registry import SCALAR, qualified_name
from .source import FunctionSource
from .tangents import unbroadcast
from .zero import ZERO

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
    key = (fn, derivatives, holomorphic)
    if key not in _MADE:
        _MADE[key] = _compile(fn, derivatives, holomorphic)
    return _MADE[key]


def _compile(fn, derivatives, holomorphic):
    name = f"{getattr(fn, '__name__', 'function')}_vjp"
    xs = [f"x{k}" for k in range(len(derivatives))]
    args = ", ".join(xs)
    body = [f"    y = function({args})"]
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
        outs.append(f"unbroadcast(g * d{k}, x{k})")
    body.append(f"    return ({', '.join(outs)},)")
    text = f"def {name}(g, {args}):\n" + "\n".join(body) + "\n"
    namespace = {"function": fn, "_np": np, "_math": math, "unbroadcast": unbroadcast}
    namespace.update(require_real=require_real, ZERO=ZERO)
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
