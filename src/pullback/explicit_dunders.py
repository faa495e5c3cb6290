"""The special methods of the operators called by name on numbers and arrays.

``x.__mul__(y)``, ``x.__rsub__(1.0)``, ``x.__pow__(2)``, ``x.__neg__()``,
``x.__getitem__(i)``, ... compute what the operator computes when ``x`` is a number or an
array and the method does not decline (``NotImplemented``). The normalizer writes such a
call (a method of a value whose class is known only at run time:
transform/expressions.py) as a call of the function of this module of the same name,
which pullback transforms like user code: on numbers and arrays it runs the operator
(differentiated by the operator's rules, to any order, in reverse and forward mode); for
anything else (a user's object with its own method, or a method that declines) it calls
the method by name, as the primal does.

>>> import numpy as np
>>> from pullback import grad
>>> def f(x):
...     return x.__rsub__(1.0).__mul__(x)
>>> float(grad(f)(0.25))  # d/dx (1 - x) x = 1 - 2x
0.5
"""

from __future__ import annotations

import numpy as np

from .registry import transformable

# These functions stand in for the user's own call: what the method raises when it runs as
# written (``(1.5).__getitem__(0)``: AttributeError) is the user's error, named at the
# user's line, not a failed step of pullback's (running.py).
__pullback_runs_users_call__ = True

#: the operands whose special methods are the operators' arithmetic
_VALUES = frozenset(
    {float, int, complex, bool, np.ndarray, np.float64, np.float32, np.int64, np.complex128}
)


def computes_operator(a, name: str, others: tuple) -> bool:
    """Whether ``a.name(*others)`` is the operator's own arithmetic on numbers and arrays
    (not a method that declines: ``(2).__mul__(0.5)`` is ``NotImplemented``). Runs the
    method itself only where the operand types differ and ``a`` is no array."""
    if type(a) not in _VALUES or getattr(type(a), name, None) is None:
        return False  # (the method's own call then raises the primal's AttributeError)
    if name == "__getitem__":
        return True
    if any(type(o) not in _VALUES for o in others):
        return False
    if type(a) is np.ndarray or all(type(o) is type(a) for o in others):
        return True
    return getattr(type(a), name)(a, *others) is not NotImplemented


@transformable
def __add__(a, b):
    if computes_operator(a, "__add__", (b,)):
        return a + b
    return a.__add__(b)


@transformable
def __radd__(a, b):
    if computes_operator(a, "__radd__", (b,)):
        return b + a
    return a.__radd__(b)


@transformable
def __sub__(a, b):
    if computes_operator(a, "__sub__", (b,)):
        return a - b
    return a.__sub__(b)


@transformable
def __rsub__(a, b):
    if computes_operator(a, "__rsub__", (b,)):
        return b - a
    return a.__rsub__(b)


@transformable
def __mul__(a, b):
    if computes_operator(a, "__mul__", (b,)):
        return a * b
    return a.__mul__(b)


@transformable
def __rmul__(a, b):
    if computes_operator(a, "__rmul__", (b,)):
        return b * a
    return a.__rmul__(b)


@transformable
def __truediv__(a, b):
    if computes_operator(a, "__truediv__", (b,)):
        return a / b
    return a.__truediv__(b)


@transformable
def __rtruediv__(a, b):
    if computes_operator(a, "__rtruediv__", (b,)):
        return b / a
    return a.__rtruediv__(b)


@transformable
def __floordiv__(a, b):
    if computes_operator(a, "__floordiv__", (b,)):
        return a // b
    return a.__floordiv__(b)


@transformable
def __rfloordiv__(a, b):
    if computes_operator(a, "__rfloordiv__", (b,)):
        return b // a
    return a.__rfloordiv__(b)


@transformable
def __mod__(a, b):
    if computes_operator(a, "__mod__", (b,)):
        return a % b
    return a.__mod__(b)


@transformable
def __rmod__(a, b):
    if computes_operator(a, "__rmod__", (b,)):
        return b % a
    return a.__rmod__(b)


@transformable
def __pow__(a, b):
    if computes_operator(a, "__pow__", (b,)):
        return a**b
    return a.__pow__(b)


@transformable
def __rpow__(a, b):
    if computes_operator(a, "__rpow__", (b,)):
        return b**a
    return a.__rpow__(b)


@transformable
def __matmul__(a, b):
    if computes_operator(a, "__matmul__", (b,)):
        return a @ b
    return a.__matmul__(b)


@transformable
def __rmatmul__(a, b):
    if computes_operator(a, "__rmatmul__", (b,)):
        return b @ a
    return a.__rmatmul__(b)


@transformable
def __neg__(a):
    if computes_operator(a, "__neg__", ()):
        return -a
    return a.__neg__()


@transformable
def __pos__(a):
    if computes_operator(a, "__pos__", ()):
        return +a
    return a.__pos__()


@transformable
def __abs__(a):
    if computes_operator(a, "__abs__", ()):
        return abs(a)
    return a.__abs__()


@transformable
def __getitem__(a, key):
    if computes_operator(a, "__getitem__", (key,)):
        return a[key]
    return a.__getitem__(key)


#: the special methods written by name that the normalizer calls this module's functions for
NAMES = frozenset(
    name
    for name in tuple(globals())
    if name.startswith("__")
    and name.endswith("__")
    and callable(globals()[name])
    and getattr(globals()[name], "__pullback_transformable__", False)
)
