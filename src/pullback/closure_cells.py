"""The value a closure that captures differentiated values becomes: a callable record.

A closure is a function together with the cells it reads. pullback converts one that
escapes as a value (returned by a factory, passed to a user function that keeps or returns
it, stored in a container) into an object of :class:`Closure`: ``fn`` is the closure's body
lifted into a function that takes the captured values first (it captures nothing itself),
``cells`` the tuple of the captured values, ``defaults`` (:class:`ClosureWithDefaults`)
the values of defaults that read the enclosing function's variables. Calling the object
calls ``fn`` with the cells first, as the closure would have read them. A
``functools.partial`` that escapes so is a :class:`Partial`, the same record with the
attributes of a partial (``func``, ``args``, ``keywords``).

Both classes are plain classes written in the differentiable subset, so pullback's plain
class records differentiate them like any user's class: a closure's cotangent is the
cotangent of its cells (the record's fields), gradients flow from each call through the
cells back to the values the enclosing function captured, and second order runs through
the same code. The transformation module :mod:`pullback.transform.closure_cells` says when
the conversion is exact and writes it.

Their ``__module__`` is not pullback's (a library module, whose classes pullback never
looks into): :data:`MODULE`.

(integers below: a doctest runs as pullback's own code, which calling a record holding
floats refuses, :func:`called_natively`)

>>> def scaled(w, x):
...     return w * x
>>> Closure(scaled, (3,))(2)
6
>>> def shifted(x, b=1):
...     return x + b
>>> g = ClosureWithDefaults(shifted, (), (5,), ("b",), 1)
>>> g(1), g(1, 2), g(x=1), g(1, b=0)
(6, 3, 6, 1)
>>> Partial(shifted, (1,), {"b": 2})(), Partial(shifted, (1,), {"b": 2})(b=7)
(3, 8)
"""

import sys

from .errors import NotDifferentiableError
from .guards import is_library_module_name
from .tangents import is_differentiable_value

MODULE = "pullback_closures"
FAMILY = "closure_cells"


def called_natively(record, captured) -> None:
    """Refuse a record called by a library's code (a SciPy solver, ``np.piecewise``, a
    rule) while what it captured ``captured`` holds floats: pullback differentiates a
    record's calls in the code it generates, and a library calling it natively would
    drop the gradient through its cells (a silently wrong gradient). Called first by
    each record's ``__call__``; where pullback differentiates the call (its generated
    code calls the ``__call__`` it made), nothing happens."""
    frame = sys._getframe(1)
    if frame.f_code not in _CALL_CODES:
        return  # the generated __call__: differentiated
    caller = frame.f_back
    module = caller.f_globals.get("__name__", "") if caller is not None else ""
    if not is_library_module_name(module or "") or not _holds_floats(captured):
        return
    raise NotDifferentiableError(
        f"a closure that captures differentiated values was called by {module!r} "
        f"({caller.f_code.co_name}), which pullback does not differentiate through: the "
        "gradient through what it captured would be lost.\n"
        "Fix: pass what the closure reads as arguments where the callee takes them "
        "(SciPy's `args=`: `quad(lambda t, p: ..., lo, hi, args=(p,))`), or write the "
        "closure in the function that calls the library (see docs/limitations.md#PB404)."
    )


def _holds_floats(value) -> bool:
    if isinstance(value, (list, tuple)):
        return any(_holds_floats(v) for v in value)
    if isinstance(value, dict):
        return any(_holds_floats(v) for v in value.values())
    if isinstance(value, (Closure, ClosureWithDefaults, Partial)):
        return _holds_floats(_captured(value))
    return is_differentiable_value(value)


def _captured(record):
    if isinstance(record, Partial):
        return (record.args, record.keywords)
    return record.cells if isinstance(record, Closure) else (record.cells, record.defaults)


class Closure:
    """A closure as a record of the values it captured (its cells)."""

    def __init__(self, fn, cells):
        self.fn = fn
        self.cells = cells

    def __call__(self, *args, **kwargs):
        called_natively(self, self.cells)
        fn = self.fn  # a function value's call: keywords found at run time take their places
        return fn(*self.cells, *args, **kwargs)


class ClosureWithDefaults:
    """A closure whose trailing positional parameters ``names`` take defaults computed
    from the enclosing function's variables where it was made: ``required`` parameters
    come first. A call passes the defaults of the parameters it leaves out by name."""

    def __init__(self, fn, cells, defaults, names, required):
        self.fn = fn
        self.cells = cells
        self.defaults = defaults
        self.names = names
        self.required = required

    def __call__(self, *args, **kwargs):
        called_natively(self, (self.cells, self.defaults))
        fn = self.fn
        left = {}
        for k in range(max(len(args) - self.required, 0), len(self.names)):
            if self.names[k] not in kwargs:
                left[self.names[k]] = self.defaults[k]
        return fn(*self.cells, *args, **left, **kwargs)


class Partial:
    """``functools.partial(func, *args, **keywords)`` as a record of what it binds (the
    attributes a partial has): a call's keywords win over the bound ones, as there."""

    def __init__(self, func, args, keywords):
        self.func = func
        self.args = args
        self.keywords = keywords

    def __call__(self, *args, **kwargs):
        called_natively(self, (self.args, self.keywords))
        func = self.func
        return func(*self.args, *args, **{**self.keywords, **kwargs})


for _cls in (Closure, ClosureWithDefaults, Partial):
    _cls.__module__ = MODULE
    _cls.__init__.__module__ = MODULE
    _cls.__call__.__module__ = MODULE
_CALL_CODES = frozenset(c.__call__.__code__ for c in (Closure, ClosureWithDefaults, Partial))


def register(reg) -> None:
    """The guard carries no gradient (it returns nothing or refuses)."""
    reg.non_differentiable(called_natively, family=FAMILY, trusted=True)
