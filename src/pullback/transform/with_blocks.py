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
which changes only how arrays print and catches nothing either.

Any other context manager (a user ``@contextlib.contextmanager`` timer, ``warnings.
catch_warnings()``, ``contextlib.suppress(...)``, a lock, an open file, an object with
``__enter__``/``__exit__``) carries no gradient either: it runs once, as in the primal,
around the forward body (:mod:`pullback.with_contexts`). The normalizer evaluates the
manager's expression as an ordinary statement and holds it in a
:class:`~pullback.with_contexts.Context` (the block's ``holder``); the forward sweep writes
``with <holder>:`` around the body, ``as`` binds the entered value by a statement at the
top of the body, and the reverse sweep runs the body's reverse, without entering the
manager again, under ``with _pb_ambient(<holder>):`` -- the warning filters and NumPy error
modes the forward body ended with. Several items are nested blocks, as Python nests them.
A manager that suppresses an exception of its body raises a pullback error at run time
(the body stopped midway). Refused (PB202): ``as`` binding a value computed from the
differentiated input (``with cm(x) as y``: ``y`` would carry no gradient).

>>> import numpy as np
>>> from pullback import grad
>>> import contextlib
>>> def f(x):
...     with contextlib.nullcontext(2.0) as k:
...         y = np.sin(x) * k
...     return y
>>> float(grad(f)(0.0))
2.0
"""

from __future__ import annotations

import gast
import numpy as np

from ..resolve import resolve_expr
from ..tree_walk import walk

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
AMBIENT = "_pb_ambient"


class WithBlock(gast.stmt):
    """A block run inside ``with _pb_errstate(...)`` (or ``_pb_printoptions(...)``);
    ``manager`` is the text of the header's calls; ``holder``: for a general context
    manager, the ``Name`` of its :class:`~pullback.with_contexts.Context` (``manager`` is
    then None)."""

    _fields = ("body",)

    def __init__(self, body, manager, where, holder=None):
        super().__init__()
        self.body = body
        self.manager = manager
        self.holder = holder
        gast.copy_location(self, where)


def with_problem(fs, node, locals_, tainted=frozenset()) -> tuple[str, str] | None:
    """None when the ``with`` statement ``node`` is accepted, else ``(why, fix)``;
    ``tainted``: the names that carry the gradient (the check's)."""
    if is_general(fs, node, locals_):
        for item in node.items:
            if item.optional_vars is not None and _reads(item.context_expr) & tainted:
                return (
                    "`with ... as name` binds a value computed from the differentiated input "
                    "(the gradient does not flow through a context manager)",
                    "compute the value before the `with` (`y = g(x)`) and use it inside; keep "
                    "only what carries no gradient in the `with` line",
                )
        return None
    return _managers(fs, node, locals_)[1]


def is_general(fs, node, locals_) -> bool:
    """Whether ``node`` is a ``with`` of general context managers (run once around the
    forward body), not one of np.errstate / np.printoptions written as constants."""
    names, problem = _managers(fs, node, locals_)
    return problem is _REFUSED_MARK


def _reads(node) -> set:
    return {n.id for n in walk(node) if isinstance(n, gast.Name)}


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
            return None, _REFUSED_MARK
        found, value = resolve_expr(fs, call.func, locals_)
        if found and value is np.errstate:
            name, problem = ERRSTATE, _errstate_problem(call)
        elif found and value is np.printoptions:
            name, problem = PRINTOPTIONS, _printoptions_problem(call)
        else:
            return None, _REFUSED_MARK
        if problem is not None or item.optional_vars is not None:
            return None, _REFUSED_MARK  # run as a general manager
        names.append(name)
    return names, None


#: what _managers returns for a ``with`` that is not all constant errstate/printoptions
_REFUSED_MARK = ("general", "general")


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


def as_with(block) -> gast.With:
    """The ``with`` statement a :class:`WithBlock` stands for (to show the core language)."""
    if hasattr(block, "as_try"):  # a step of a try body (try_blocks.py)
        return block.as_try()
    if block.holder is not None:
        item = gast.withitem(context_expr=block.holder, optional_vars=None)
        return gast.copy_location(
            gast.With(items=[item], body=block.body, type_comment=None), block
        )
    managers = gast.parse(f"({block.manager},)").body[0].value.elts
    items = [gast.withitem(context_expr=m, optional_vars=None) for m in managers]
    return gast.copy_location(gast.With(items=items, body=block.body, type_comment=None), block)


def compound(block, body, line, reverse=False):
    """The generated ``with`` around ``body``: a list of :class:`~.code.Compound`; for a
    general manager, the forward sweep enters its holder, the reverse (``reverse``) runs
    under the state the forward body ended in (see the module docstring)."""
    from .code import Compound

    if block.holder is not None and not reverse:  # entered even around an empty body
        from .code import Line

        body = body or [Line("pass", src=line)]
    if not body:
        return []
    if block.holder is None:
        return [Compound(f"with {block.manager}:", body, src=line)]
    holder = block.holder.id
    header = f"with {AMBIENT}({holder}):" if reverse else f"with {holder}:"
    return [Compound(header, body, reads=frozenset({holder}), src=line)]


__all__ = [
    "AMBIENT",
    "ERRSTATE",
    "PRINTOPTIONS",
    "WithBlock",
    "as_with",
    "compound",
    "is_general",
    "manager_text",
    "with_problem",
]
