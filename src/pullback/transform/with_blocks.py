"""``with np.errstate(...):`` blocks, kept as a block construct of the core language.

``np.errstate`` changes no value: only how NumPy reports floating-point errors inside the
block (ignored, warned, raised as ``FloatingPointError``, ...), and it catches no exception.
So the block is a block that always runs. The normalizer turns each accepted ``with`` into a
:class:`WithBlock` (its body normalized like any block: returns, breaks and continues
inside it become the usual flags), SSA and the analyses walk its body as straight-line code,
and each builder writes ``with _pb_errstate(<the same modes>):`` around the statements it
generates for the body -- the forward sweep around the primal statements, the reverse sweep
around their derivative arithmetic (so ``1/x`` of ``np.log`` at ``x = 0``, masked by a
``np.where``, is handled as the user chose for the primal), forward mode around the tangents.
Python's own ``with`` restores the error state on every exit, an exception included.

The check and the transform ask one question, :func:`with_problem`: a ``with`` whose every
item is ``np.errstate(mode=constant, ...)`` (however numpy is imported: the callee is
resolved), without ``as``, is accepted; anything else stays PB202.
"""

from __future__ import annotations

import gast
import numpy as np

from ..resolve import resolve_expr

#: the keywords of np.errstate that only choose an error mode (``call=`` runs user code)
MODES = frozenset({"all", "divide", "over", "under", "invalid"})
_VALUES = frozenset({None, "ignore", "warn", "raise", "call", "print", "log"})
#: the name generated code calls (bound in codegen's runtime namespace)
ERRSTATE = "_pb_errstate"


class WithBlock(gast.stmt):
    """A block run inside ``with _pb_errstate(...)``; ``manager`` is that call's text."""

    _fields = ("body",)

    def __init__(self, body, manager, where):
        super().__init__()
        self.body = body
        self.manager = manager
        gast.copy_location(self, where)


def with_problem(fs, node, locals_) -> tuple[str, str] | None:
    """None when the ``with`` statement ``node`` is accepted, else ``(why, fix)``."""
    for item in node.items:
        call = item.context_expr
        if not isinstance(call, gast.Call):
            return _refused(node)
        found, value = resolve_expr(fs, call.func, locals_)
        if not found or value is not np.errstate:
            return _refused(node)
        if call.args or any(k.arg not in MODES for k in call.keywords):
            return (
                "np.errstate takes only error modes here",
                "pass the modes as keywords (`np.errstate(divide='ignore', invalid='ignore')`); "
                "`call=` and positional arguments are not supported",
            )
        for k in call.keywords:
            if not isinstance(k.value, gast.Constant) or k.value.value not in _VALUES:
                return (
                    "np.errstate modes must be string constants",
                    f"write the mode of `{k.arg}` as a constant, e.g. `{k.arg}='ignore'`",
                )
        if item.optional_vars is not None:
            return (
                "`with np.errstate(...) as name` binds a name the transform does not follow",
                "drop `as name` (np.errstate's value is not needed)",
            )
    return None


def _refused(node):
    return (
        "with statement cannot be differentiated",
        "for floating-point warnings use `with np.errstate(...)`, the one context manager "
        "supported inside; else move the `with` block outside the differentiated function, "
        "or register a rule for a helper that contains it",
    )


def manager_text(node) -> str:
    """The generated ``with`` header's managers, from an accepted ``with`` statement."""
    parts = []
    for item in node.items:
        modes = ", ".join(f"{k.arg}={k.value.value!r}" for k in item.context_expr.keywords)
        parts.append(f"{ERRSTATE}({modes})")
    return ", ".join(parts)


def as_with(block) -> gast.With:
    """The ``with`` statement a :class:`WithBlock` stands for (to show the core language)."""
    managers = gast.parse(f"({block.manager},)").body[0].value.elts
    items = [gast.withitem(context_expr=m, optional_vars=None) for m in managers]
    return gast.copy_location(gast.With(items=items, body=block.body, type_comment=None), block)


def compound(block, body, line):
    """The generated ``with`` around ``body``: a list of :class:`~.code.Compound`."""
    from .code import Compound

    if not body:
        return []
    return [Compound(f"with {block.manager}:", body, src=line)]


__all__ = ["ERRSTATE", "WithBlock", "as_with", "compound", "manager_text", "with_problem"]
