"""pullback: source-to-source reverse-mode automatic differentiation for Python and NumPy.

>>> import numpy as np
>>> from pullback import grad
>>> @grad
... def f(x):
...     return np.sum(np.tanh(x) ** 2)
>>> f(np.zeros(3))
array([0., 0., 0.])
"""

import gc as _gc

# Importing pullback makes tens of thousands of objects (functions, classes, tables) that
# live as long as the program; with the collector on, they start about thirty collections
# that find nothing to free (some 2% of the instructions of a cold start, counted with
# valgrind). The collector is paused for the import only (garbage made meanwhile waits for
# the next collection after it), and a program that turned it off keeps it off.


def _settle_imported_objects(gc):
    """Move what the import made (all of it in the youngest generation: the collector was
    paused) to the oldest generation without a collection, as surviving two collections
    would: the first collection after the import would otherwise walk its twenty thousand
    objects (functions, classes, rule tables, all alive for the program's life), and the
    one after that again. ``freeze`` then ``unfreeze`` is that move; it also ages the
    program's own young objects (a cycle among them waits for a full collection: later,
    never wrong). Skipped when the program froze objects itself (``unfreeze`` would thaw
    them), and where the collector has no ``freeze`` (PyPy's)."""
    frozen = getattr(gc, "get_freeze_count", None)
    if frozen is not None and frozen() == 0:
        gc.freeze()
        gc.unfreeze()


_collecting = _gc.isenabled()
_gc.disable()
try:
    from .api import grad, value_and_grad, vjp
    from .check import check
    from .errors import (
        AdjointRuntimeError,
        ArgumentError,
        Diagnostic,
        HigherOrderError,
        MissingRuleError,
        NonScalarOutputError,
        NotDifferentiableError,
        NotIterableError,
        PullbackError,
        RuleError,
        ShapeMismatchError,
        SourceUnavailableError,
        SuppressedExceptionError,
        UnsupportedSyntaxError,
    )
    from .jacobian import hessian, hvp, jacobian
    from .registry import (
        RuleRegistry,
        default_registry,
        non_differentiable,
        rrule,
        scalar_rule,
        use_registry,
    )
    from .tangents import NO_TANGENT, ZERO
finally:
    _settle_imported_objects(_gc)
    if _collecting:
        _gc.enable()
del _gc, _collecting, _settle_imported_objects

__version__ = "0.1.0"


def __getattr__(name):
    """``jvp`` and ``stacked_jvp``, imported on first use: forward mode (forward_mode.py and
    transform/forward.py) is bytecode that a reverse-mode gradient's cold start never runs.
    Once read, the name is bound here like the others."""
    if name in ("jvp", "stacked_jvp"):
        from . import forward_mode

        value = getattr(forward_mode, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | {"jvp", "stacked_jvp"})


__all__ = [
    "grad",
    "value_and_grad",
    "vjp",
    "jvp",
    "stacked_jvp",
    "jacobian",
    "hessian",
    "hvp",
    "check",
    "rrule",
    "scalar_rule",
    "non_differentiable",
    "RuleRegistry",
    "default_registry",
    "use_registry",
    "ZERO",
    "NO_TANGENT",
    "PullbackError",
    "UnsupportedSyntaxError",
    "SourceUnavailableError",
    "ArgumentError",
    "NotDifferentiableError",
    "ShapeMismatchError",
    "NonScalarOutputError",
    "MissingRuleError",
    "NotIterableError",
    "SuppressedExceptionError",
    "RuleError",
    "HigherOrderError",
    "AdjointRuntimeError",
    "Diagnostic",
]
