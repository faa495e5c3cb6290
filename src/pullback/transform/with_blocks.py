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
resolved), without ``as``, is accepted; so is ``np.printoptions(option=constant, ...)``,
which changes only how arrays print and catches nothing either. Anything else stays PB202.
"""

from __future__ import annotations

import gast
import numpy as np

from ..resolve import resolve_expr

#: the keywords of np.errstate that only choose an error mode (``call=`` runs user code)
MODES = frozenset({"all", "divide", "over", "under", "invalid"})
_VALUES = frozenset({None, "ignore", "warn", "raise", "call", "print", "log"})
#: np.printoptions' keywords whose values are plain constants (not formatter functions)
PRINT_OPTIONS = frozenset(
    {
        "precision",
        "threshold",
        "edgeitems",
        "linewidth",
        "suppress",
        "nanstr",
        "infstr",
        "sign",
        "floatmode",
        "legacy",
    }
)
#: the names generated code calls (bound in codegen's runtime namespace)
ERRSTATE = "_pb_errstate"
PRINTOPTIONS = "_pb_printoptions"


class WithBlock(gast.stmt):
    """A block run inside ``with _pb_errstate(...)`` (or ``_pb_printoptions(...)``);
    ``manager`` is the text of the header's calls."""

    _fields = ("body",)

    def __init__(self, body, manager, where):
        super().__init__()
        self.body = body
        self.manager = manager
        gast.copy_location(self, where)


def with_problem(fs, node, locals_) -> tuple[str, str] | None:
    """None when the ``with`` statement ``node`` is accepted, else ``(why, fix)``."""
    return _managers(fs, node, locals_)[1]


def manager_text(fs, node, locals_) -> str:
    """The generated ``with`` header's calls, from an accepted ``with`` statement."""
    names, _ = _managers(fs, node, locals_)
    parts = []
    for name, item in zip(names, node.items, strict=True):
        keywords = ", ".join(f"{k.arg}={k.value.value!r}" for k in item.context_expr.keywords)
        parts.append(f"{name}({keywords})")
    return ", ".join(parts)


def _managers(fs, node, locals_):
    """``(generated names of the managers, None)`` or ``(None, (why, fix))``."""
    names = []
    for item in node.items:
        call = item.context_expr
        if not isinstance(call, gast.Call):
            return None, _refused()
        found, value = resolve_expr(fs, call.func, locals_)
        if found and value is np.errstate:
            name, problem = ERRSTATE, _errstate_problem(call)
        elif found and value is np.printoptions:
            name, problem = PRINTOPTIONS, _printoptions_problem(call)
        else:
            return None, _refused()
        if problem is None and item.optional_vars is not None:
            problem = (
                "`with ... as name` binds a name the transform does not follow",
                "drop `as name` (the manager's value is not needed)",
            )
        if problem is not None:
            return None, problem
        names.append(name)
    return names, None


def _errstate_problem(call):
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
    return None


def _printoptions_problem(call):
    if call.args or any(
        k.arg not in PRINT_OPTIONS or not isinstance(k.value, gast.Constant) for k in call.keywords
    ):
        return (
            "np.printoptions takes only constant keyword options here",
            "write each option as a keyword with a constant value, e.g. "
            "`np.printoptions(precision=3)` (no formatter functions)",
        )
    return None


def _refused():
    return (
        "with statement cannot be differentiated",
        "for floating-point warnings use `with np.errstate(...)`, the one context manager "
        "supported inside besides `np.printoptions(...)`; else move the `with` block outside "
        "the differentiated function, or register a rule for a helper that contains it",
    )


def as_with(block) -> gast.With:
    """The ``with`` statement a :class:`WithBlock` stands for (to show the core language)."""
    if hasattr(block, "as_try"):  # a step of a try body (try_blocks.py)
        return block.as_try()
    managers = gast.parse(f"({block.manager},)").body[0].value.elts
    items = [gast.withitem(context_expr=m, optional_vars=None) for m in managers]
    return gast.copy_location(gast.With(items=items, body=block.body, type_comment=None), block)


def compound(block, body, line):
    """The generated ``with`` around ``body``: a list of :class:`~.code.Compound`."""
    from .code import Compound

    if not body:
        return []
    return [Compound(f"with {block.manager}:", body, src=line)]


__all__ = [
    "ERRSTATE",
    "PRINTOPTIONS",
    "WithBlock",
    "as_with",
    "compound",
    "manager_text",
    "with_problem",
]
