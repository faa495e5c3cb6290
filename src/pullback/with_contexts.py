"""The run-time side of a differentiated ``with`` block of a general context manager.

A context manager carries no gradient: it runs once, as in the primal, around the forward
body, and the body is differentiated (transform/with_blocks.py). The generated code holds
the user's manager in a :class:`Context`: ``with <context>:`` enters and exits it exactly as
Python's ``with`` would (the special methods looked up on the type, ``__exit__`` given the
exception), and :func:`entered` is the value ``as`` binds.

Two things the holder adds:

* A manager that *suppresses* an exception (``contextlib.suppress``, a user ``__exit__``
  returning true) stops the body midway: the statements after the raise did not run, and a
  gradient built for the whole body would be wrong. The holder raises a pullback error at
  the user's ``with`` line instead, exactly when that happens (a body that completes is not
  affected).
* The reverse sweep does not enter the manager again (a user timer or logger runs once per
  call of the gradient, a lock is not taken twice). It runs under :func:`ambient`: the
  warning filters and NumPy error modes the forward body ended with, so that
  ``warnings.catch_warnings()`` + ``simplefilter("ignore")`` or a manager that sets
  ``np.errstate`` silence the derivative arithmetic of the body as they silenced the body.

>>> import contextlib
>>> c = Context(contextlib.nullcontext(3.0), "f.py:2:5", "with cm as v:")
>>> with c:
...     entered(c)
3.0
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np

from .errors import PullbackError, SuppressedExceptionError


class Context:
    """A user's context manager as the generated forward sweep enters it once."""

    def __init__(self, manager, where: str, line: str):
        kind = type(manager)
        enter = getattr(kind, "__enter__", None)
        leave = getattr(kind, "__exit__", None)
        if enter is None or leave is None:  # as Python's own `with` reports it
            raise TypeError(
                f"'{kind.__name__}' object does not support the context manager protocol"
            )
        self.manager = manager
        self._enter = enter
        self._exit = leave
        self.where = where
        self.line = line
        self.value = None
        self.filters = None
        self.errors = None

    def __enter__(self):
        self.value = self._enter(self.manager)
        return self.value

    def __exit__(self, kind, exc, tb):
        if kind is None:
            # the state the body ended in, for the reverse sweep (ambient)
            self.filters = list(warnings.filters)
            self.errors = np.geterr()
        suppressed = self._exit(self.manager, kind, exc, tb)
        if kind is not None and suppressed and not isinstance(exc, PullbackError):
            raise SuppressedExceptionError(
                f"{self.where}: the context manager of this `with` suppressed "
                f"{kind.__name__}({exc}) raised in its body, so the body stopped midway and "
                f"its gradient is not that of the statements that ran.\n"
                f"        {self.line}\n"
                "Fix: avoid the exception inside the differentiated block (test for the "
                "case first, e.g. with an `if`), or catch it with try/except around the "
                "statement that raises."
            ) from exc
        return False


def entered(context: Context):
    """The value ``with manager as name`` binds to ``name``."""
    return context.value


@contextlib.contextmanager
def ambient(context: Context):
    """Run the reverse of a ``with`` body under the warning filters and NumPy error modes its
    forward body ended with (restored afterwards)."""
    if context.filters is None:  # the body did not complete (its reverse does not run)
        yield
        return
    with warnings.catch_warnings(), np.errstate(**context.errors):
        warnings.filters[:] = context.filters
        warnings.simplefilter("default", _NoSuchWarning)  # tells the module filters changed
        yield


class _NoSuchWarning(Warning):
    """Never raised: adding a filter for it makes ``warnings`` re-read its filters."""


__all__ = ["Context", "SuppressedExceptionError", "ambient", "entered"]
