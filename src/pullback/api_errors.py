"""Refusals at the API's entry points that Python or the arithmetic would otherwise raise
raw: a function's output that carries no derivative (``None``, a string, a dict of
strings), which ``jvp`` and a ``vjp``'s pullback name at the user's ``return`` with a fix,
and keywords the entry points do not take (``argnums=``, JAX's name for ``wrt=``).

>>> carries_numbers(None), carries_numbers({"a": "b"}), carries_numbers((1.0, "info"))
(False, False, True)
"""

from __future__ import annotations

import inspect

import gast
import numpy as np

from .errors import ArgumentError, NonScalarOutputError, PullbackError, location_text
from .records_dataclasses import fields_of, is_dataclass_value
from .source import load_source
from .tree_walk import walk


def carries_numbers(y) -> bool:
    """Whether ``y`` holds a number or an array anywhere (a tuple, list or dict of them, a
    dataclass's fields): what a derivative of it can be about."""
    if isinstance(y, (tuple, list)):
        return any(carries_numbers(v) for v in y)
    if isinstance(y, dict):
        return any(carries_numbers(v) for v in y.values())
    if is_dataclass_value(y):
        return carries_numbers(fields_of(y))
    if isinstance(y, (str, bytes)) or y is None:
        return False
    return isinstance(y, (int, float, complex, np.ndarray, np.generic)) or hasattr(y, "shape")


def output_place(fn) -> str:
    """``file:line:col`` of the last ``return`` of ``fn``'s body (its ``def`` where it has
    none), or the empty string where ``fn`` has no source."""
    try:
        fs = load_source(getattr(fn, "__func__", fn))
    except (PullbackError, TypeError, OSError):
        return ""
    returns = [
        n
        for n in walk(fs.tree)
        if isinstance(n, gast.Return)
        or (isinstance(n, gast.Lambda) and n is fs.tree)  # a lambda's body is its return
    ]
    node = max(returns, key=lambda n: (n.lineno, n.col_offset), default=fs.tree)
    if isinstance(node, gast.Lambda):
        node = node.body
    return location_text(*fs.location(node))


def refuse_output(what: str, fn, y, fix: str):
    """Raise the error for ``what`` (``jvp``, a ``vjp``'s pullback) of ``fn``, whose output
    ``y`` carries no number or array."""
    place = output_place(fn)
    name = getattr(fn, "__name__", type(fn).__name__)
    raise NonScalarOutputError(
        f"{place + ': ' if place else ''}{what} needs '{name}' to return numbers or arrays "
        f"(or a tuple, list or dict holding some), but it returned {_described(y)}, which "
        f"has no derivative.\nFix: {fix}"
    )


def _described(y) -> str:
    if y is None:
        return "None"
    if isinstance(y, dict):
        kinds = sorted({type(v).__name__ for v in y.values()}) or ["nothing"]
        return "a dict of " + ", ".join(kinds)
    if isinstance(y, (tuple, list)):
        kinds = sorted({type(v).__name__ for v in y}) or ["nothing"]
        return f"a {type(y).__name__} of " + ", ".join(kinds)
    return f"a {type(y).__name__}"


def refuse_keywords(what: str, unknown: dict) -> None:
    """Refuse keywords ``what`` (``grad``, ``hessian``, ...) does not take, naming the one
    it has for JAX's ``argnums``."""
    if not unknown:
        return
    name = sorted(unknown)[0]
    if name == "argnums":
        fix = (
            f"pass the argument index (or parameter name, or a tuple of them) as wrt: "
            f"{what}(f, wrt={unknown[name]!r})."
        )
    else:
        fix = f"call {what}(f, wrt=..., ...) with the keywords it takes (see help({what}))."
    raise ArgumentError(f"{what}() takes no keyword '{name}'.\nFix: {fix}")


def check_jvp_keywords(fn, primals, kwargs) -> None:
    """Refuse keywords ``jvp`` would hand on to ``fn`` that ``fn`` does not take (before the
    generated code raises Python's ``TypeError``)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return  # no signature to read: the call says what is wrong
    try:
        sig.bind(*primals, **kwargs)
    except TypeError as exc:
        name = getattr(fn, "__name__", type(fn).__name__)
        fix = (
            "jvp differentiates along the tangents given: give pullback.ZERO (or None) as the "
            "tangent of each argument that does not move"
            if "argnums" in kwargs
            else f"pass only the keyword arguments '{name}' takes"
        )
        raise ArgumentError(
            f"jvp cannot call '{name}' with these arguments: {exc}.\nFix: {fix}."
        ) from None
