"""Objects of a user's class met where pullback expects numbers and arrays: whether an
operand runs its class's own operator methods (``Polynomial.__add__``), whether a class is
an array of some library (Dask, an Array API namespace), and the refusals for both, so a
rule's derivative is never applied to what the object's own method computed.

>>> class Money:
...     def __init__(self, v):
...         self.v = v
...     def __add__(self, other):
...         return Money(self.v + other.v)
>>> Money.__module__ = "shop"  # (a user's module; pullback's own count as a library)
>>> is_operator_object(Money(1.0)), is_operator_object(1.0), is_operator_object(np.ones(2))
(True, False, False)
>>> print(user_object_refusal("abs", Money(1.0)))  # doctest: +ELLIPSIS
abs() was applied to an object of class Money: it runs Money.__abs__, ...
"""

from __future__ import annotations

from types import FunctionType as _FunctionType

import numpy as np

from .errors import UnsupportedCallError
from .guards import is_library_module_name
from .records_dataclasses import is_dataclass_value

_ndarray = np.ndarray


_OPERATOR_METHODS = tuple(
    "__add__ __radd__ __sub__ __rsub__ __mul__ __rmul__ __truediv__ __rtruediv__ __pow__ "
    "__neg__ __matmul__".split()
)


def user_object_refusal(what: str, x) -> UnsupportedCallError | None:
    """The error for ``what`` (a function's name, as the user wrote it) applied to ``x``,
    when ``x`` is an object of a user's class (a dataclass, or a class of a user module
    that is not an array of some library): ``abs(v)``, ``round(v)``, ``sum(v)`` run
    that class's own method (``__abs__``, ``__iter__``), which a rule's derivative does
    not describe, so its cotangent would be silently wrong. None for anything else."""
    t = type(x)
    if t in _PLAIN_OPERANDS or isinstance(x, (type, _ndarray, list, tuple, dict)):
        return None
    if not (is_dataclass_value(x) or is_user_class(t)):
        return None
    name = t.__name__
    method = _OWN_METHODS.get(what)
    first = f"call the method by name (`v.{method}()`), or " if method != "__iter__" else ""
    return UnsupportedCallError(
        f"{what}() was applied to an object of class {name}: it runs "
        f"{f'{name}.{method}' if method else f'a method of {name}'}, which the derivative "
        f"of {what}() does not describe.\n"
        f"Fix: {first}if the function's module does not import {name}, import it (`from "
        f"{t.__module__} import {name}`): pullback then runs {name}'s own methods and "
        f"differentiates them; or apply {what}() to the fields."
    )


#: The method each builtin runs on an object (the others run one of its ufunc methods).
_OWN_METHODS = {
    "abs": "__abs__",
    "round": "__round__",
    "float": "__float__",
    "int": "__int__",
    "pow": "__pow__",
    "sum": "__iter__",
    "max": "__iter__",
    "min": "__iter__",
    "sorted": "__iter__",
    "list": "__iter__",
}


# (NumPy's scalars too: the elementwise rules ask on every call, and these answer at once)
_PLAIN_OPERANDS = frozenset(
    {float, int, bool, complex, _ndarray, np.float64, np.float32, np.complex128, np.int64}
)


def is_operator_object(x) -> bool:
    """Whether ``x`` is an object of a user's class that defines arithmetic operators in
    Python (``Polynomial.__add__``): what ``+`` on it computes is that method's."""
    t = type(x)
    if isinstance(x, (type, _ndarray)) or not is_user_class(t):
        return False  # (an array subclass adds as an array)
    return any(type(getattr(t, n, None)) is _FunctionType for n in _OPERATOR_METHODS)


def is_user_class(cls) -> bool:
    """Whether ``cls`` is defined in user code (not a library's module) and is not an
    array class of some library (Dask, an Array API namespace), whose methods compute as
    arrays do: a class whose own Python methods run where pullback expects numbers."""
    if is_library_module_name(getattr(cls, "__module__", None) or "builtins"):
        return False
    return not has_array_protocol(cls)


# What an array of another library defines: its operators compute as arrays do.
_ARRAY_PROTOCOLS = ("__array_namespace__", "__array_function__", "__array_ufunc__", "__array__")


def has_array_protocol(cls) -> bool:
    """Whether ``cls`` is an array class of some library (Dask, an array API namespace):
    it defines one of NumPy's or the Array API's protocols, so its operators compute as
    arrays do, whatever module it comes from."""
    return any(hasattr(cls, n) for n in _ARRAY_PROTOCOLS)


def refuse_operator(x):
    """An operand of ``+ - * / ...`` that is an object of a dataclass or of a plain class:
    the operator ran the class's own method (``__add__``), which the arithmetic's pullback
    knows nothing of, so its cotangent would be wrong."""
    name = type(x).__name__
    raise UnsupportedCallError(
        f"an arithmetic operator was applied to an object of class {name}: it runs {name}'s "
        "own operator method (__add__, __mul__, ...), which pullback does not differentiate "
        "through an operator.\n"
        f"Fix: call the method by name (`a.__add__(b)`, or a method of {name} such as "
        "`a.plus(b)`), which pullback differentiates, or compute with the fields."
    )
