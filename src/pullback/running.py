"""Running generated sweeps so that every error names the user's line, and recursion
reaches the depth the function itself reaches.

>>> deeper_recursion(len).previous is None
True
"""

from __future__ import annotations

import sys
import traceback

from .arguments import _name
from .errors import AdjointRuntimeError, ArgumentError, PullbackError
from .transform.build import Adjoint


def _user_frame(exc):
    """The innermost traceback entry inside generated code: (line_map, fs, lineno, func)."""
    found = None
    tb = exc.__traceback__
    while tb is not None:
        g = tb.tb_frame.f_globals
        if "__pullback_line_map__" in g:
            found = (
                g["__pullback_line_map__"],
                g["__pullback_source__"],
                tb.tb_lineno,
                tb.tb_frame.f_code.co_name,
            )
        tb = tb.tb_next
    return found


def _locate(exc):
    found = _user_frame(exc)
    if found is None:
        return None
    line_map, fs, lineno, func = found
    k = lineno - 1
    user_line = line_map[k] if 0 <= k < len(line_map) else None
    # Generated code differentiated again (a Hessian): follow its own map to the user.
    for _ in range(8):
        if user_line is None:
            return None
        outer = getattr(getattr(fs, "fn", None), "__globals__", {})
        if "__pullback_line_map__" not in outer:
            break
        line_map, fs = outer["__pullback_line_map__"], outer["__pullback_source__"]
        k = user_line - 1
        user_line = line_map[k] if 0 <= k < len(line_map) else None
    if user_line is None:
        return None
    return fs.filename, user_line, fs.file_line(user_line).strip(), func


def _relocated(exc: PullbackError, filename, line, text) -> PullbackError:
    """``exc`` with the user's line in front of its message (a new exception of the same
    class where its constructor takes a message; otherwise ``exc`` itself with a note,
    e.g. an UnsupportedSyntaxError, whose diagnostics already name their lines)."""
    try:
        return type(exc)(f"{filename}:{line}: {exc}\n        {text}")
    except TypeError:
        if hasattr(exc, "add_note"):
            exc.add_note(f"  while running {filename}:{line}: {text}")
        return exc


# A gradient takes about three Python frames per level of a user function's recursion where
# the function takes one: while one runs, the limit is raised so that any depth the primal
# reaches at Python's default limit (1000) is reached by its gradient too.
_GRADIENT_RECURSION_LIMIT = 4000


class deeper_recursion:
    """Raise the recursion limit to what generated code needs (never lower it), and turn an
    overflow into a pullback error that says why and how to go deeper."""

    __slots__ = ("fn", "previous")

    def __init__(self, fn):
        self.fn = fn
        self.previous = None

    def __enter__(self):
        current = sys.getrecursionlimit()
        if current < _GRADIENT_RECURSION_LIMIT:
            self.previous = current
            sys.setrecursionlimit(_GRADIENT_RECURSION_LIMIT)
        return self

    def __exit__(self, kind, exc, tb):
        if self.previous is not None:
            sys.setrecursionlimit(self.previous)
        if kind is RecursionError:
            limit = self.previous or sys.getrecursionlimit()
            raise AdjointRuntimeError(
                f"the gradient of '{_name(self.fn)}' recursed deeper than the recursion limit "
                f"allows: generated code takes about three frames per level of recursion "
                f"where the function takes one (the limit was raised to "
                f"{max(limit, _GRADIENT_RECURSION_LIMIT)} while it ran).\n"
                "Fix: raise it further with sys.setrecursionlimit(...) before differentiating, "
                "or write the recursion as a loop."
            ) from exc
        return False


def run_forward(adj: Adjoint, args, kwargs):
    try:
        return adj.forward(*args, **kwargs)
    except Exception as exc:
        forward_failed(adj, exc)
        raise


def forward_failed(adj: Adjoint, exc: Exception) -> None:
    """Called from an ``except`` clause around a forward sweep: raise the pullback error
    that names the user's line, or add a note naming it to ``exc`` and return (the caller
    re-raises ``exc`` itself, keeping its traceback)."""
    if isinstance(exc, RecursionError):
        return
    if isinstance(exc, PullbackError):
        where = _locate(exc)
        if where is not None and f"{where[0]}:{where[1]}" not in str(exc):
            relocated = _relocated(exc, *where[:3])
            if relocated is not exc:
                raise relocated from None
        return
    if isinstance(exc, TypeError) and exc.__traceback__.tb_next is None:
        # The call itself did not bind: say it with the user's function's name.
        name = getattr(adj.fn, "__name__", "f")
        message = str(exc).replace(getattr(adj.forward, "__name__", "?"), name)
        raise ArgumentError(f"cannot call '{name}' with these arguments: {message}") from None
    where = _locate(exc)
    if where is not None and hasattr(exc, "add_note"):
        filename, line, text, _ = where
        exc.add_note(f"  raised by {filename}:{line}: {text}  (in pullback's forward sweep)")


def run_pullback(pullback, dy):
    try:
        return pullback(dy)
    except Exception as exc:
        pullback_failed(exc)
        raise


def pullback_failed(exc: Exception) -> None:
    """Called from an ``except`` clause around a reverse sweep: raise the pullback error
    that names the user's line, or return (the caller re-raises ``exc``)."""
    if isinstance(exc, RecursionError):
        return
    where = _locate(exc)
    if where is None:
        return
    filename, line, text, _ = where
    if isinstance(exc, PullbackError):
        if f"{filename}:{line}" not in str(exc):
            relocated = _relocated(exc, filename, line, text)
            if relocated is not exc:
                raise relocated from exc
        return
    detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    raise AdjointRuntimeError(
        f"{filename}:{line}: the reverse sweep failed while differentiating\n"
        f"        {text}\n"
        f"    {detail}\n"
        "    This usually means a rule got inputs it does not support (check shapes and "
        "dtypes there), or a custom rule's pullback raised."
    ) from exc
