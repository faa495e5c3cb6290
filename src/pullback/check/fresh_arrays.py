"""Which NumPy calls always return a NEW array, and which may return a view of an argument
or the argument itself (issue 11: what counts as a local array).

A name bound to a new array is *local*: the function may write into it (``s = np.sort(x);
s[0] = 0.0``, ``d = np.diff(x); d[d < 0] = 0``). A name bound to a view or to the argument
itself (``r = x.reshape(...)``, ``np.asarray(x)``, ``x.ravel()``, ``x.T``, ``x[::2]``) shares
its memory with the caller's array, so a write into it is refused. The classification is
data, below, read by the check (:mod:`pullback.check.aliasing` and ``_returns_fresh`` of
:mod:`pullback.check.call_checks`); the normalizer rewrites only the writes the check let
through, so both sides go by the same table. A function in neither table is not known to
return a new array: a write into its result is refused (never a guess that can be wrong).

Every ufunc without ``out=`` returns a new array. ``copy=`` / ``out=`` keywords make any
call non-fresh (``x.astype(t, copy=False)`` may return ``x``), and a few functions return
their input for particular arguments (``np.diff(x, n=0)`` is ``x``): see
:data:`FRESH_UNLESS`.

>>> import numpy as np
>>> call_returns_new(np.sort, {}), call_returns_new(np.reshape, {})
(True, False)
>>> call_returns_new(np.diff, {"n": 0}), call_returns_new(np.diff, {"n": 2})
(False, True)
>>> call_returns_new(np.exp, {}), call_returns_new(np.exp, {"out": None})
(True, False)
>>> call_returns_new(np.sum, {}, (NOT_LITERAL, 0, None, NOT_LITERAL))  # positional out
False
"""

from __future__ import annotations

import functools
import inspect
import math

import gast
import numpy as np

from ..resolve import ARRAY_METHODS

_LINALG_NEW = (
    "norm inv solve det slogdet eigh eigvalsh eig eigvals pinv cholesky qr svd lstsq multi_dot"
)
_FFT_NEW = (
    "fft ifft rfft irfft fft2 ifft2 rfft2 irfft2 fftn ifftn rfftn irfftn hfft ihfft "
    "fftfreq rfftfreq fftshift ifftshift"
)

# NumPy functions whose result is always a new array (or a new number / tuple of new arrays),
# never one of their arguments nor a view of one.
NEW_ARRAY_FUNCTIONS = frozenset(
    # constructors
    "zeros ones full empty eye identity arange linspace logspace geomspace zeros_like "
    "ones_like full_like empty_like copy tri vander diagflat "
    # reductions and scans
    "sum mean prod std var max min amax amin argmax argmin median average ptp nansum nanmean "
    "nanprod nanmax nanmin cumsum cumprod nancumsum nancumprod trace count_nonzero "
    # products
    "dot matmul inner outer vdot kron tensordot cross convolve correlate "
    # sorting and searching
    "sort argsort lexsort searchsorted unique nonzero argwhere flatnonzero "
    # assembling, repeating, reordering (each copies)
    "concatenate stack vstack hstack dstack column_stack append insert delete pad tile "
    "repeat roll take take_along_axis compress extract choose select piecewise where "
    "triu tril "
    # element-wise functions that are not ufuncs
    "clip round around diff ediff1d gradient interp polyval nan_to_num angle sinc i0".split()
    # numpy.linalg and numpy.fft (each computes a new array; out= is checked as above)
    + [f"linalg.{n}" for n in _LINALG_NEW.split()]
    + [f"fft.{n}" for n in _FFT_NEW.split()]
)

# NumPy functions that may return a view of an argument, or the argument itself.
VIEW_FUNCTIONS = frozenset(
    "reshape ravel transpose asarray asanyarray ascontiguousarray asfortranarray "
    "squeeze swapaxes moveaxis rollaxis expand_dims diagonal diag real imag "
    "broadcast_to broadcast_arrays atleast_1d atleast_2d atleast_3d flip fliplr flipud "
    "rot90 split array_split hsplit vsplit dsplit einsum require matrix_transpose "
    "permute_dims unstack".split()
)

# Array methods (``x.name(...)``) that return a new array, and those that may return a view
# of the receiver or the receiver itself (``x.conj()`` of a real array is ``x``).
NEW_ARRAY_METHODS = frozenset(
    "copy sum mean prod std var dot cumsum cumprod clip round max min argmax argmin "
    "astype tolist item flatten argsort repeat take compress trace ptp nonzero "
    "searchsorted all any".split()
)
VIEW_METHODS = frozenset(
    "reshape ravel transpose squeeze swapaxes view diagonal conj conjugate "
    "__array__".split()
)

# Attributes that are views of the array: x.T, x.real, ...

# Arguments for which a NEW_ARRAY_FUNCTIONS entry returns its input: np.diff(x, n=0) is
# x, np.nan_to_num(x, copy=False) is x. ``name: (parameter, value)``: the call is fresh only
# when that argument is absent or a literal other than ``value``.
FRESH_UNLESS = {"diff": ("n", 0), "nan_to_num": ("copy", False)}

# Parameters that may make any call return an existing array (by keyword or by position).
SHARING_PARAMETERS = frozenset({"out", "copy"})

NOT_LITERAL = object()  # the value of an argument that is not a literal


def _numpy_name(obj) -> str | None:
    """The name under which ``obj`` is a public function of NumPy (``"linalg.norm"`` for
    one of numpy.linalg or numpy.fft), else None."""
    name = getattr(obj, "__name__", None)
    if name is None:
        return None
    if getattr(np, name, None) is obj:
        return name
    for module in ("linalg", "fft"):
        if getattr(getattr(np, module), name, None) is obj:
            return f"{module}.{name}"
    return None


# The parameters, in order, of the NumPy functions above written in C that have no
# signature inspect can read before NumPy 2.3 (from their documentation; 2.3 adds these
# very signatures). Without them ``z = np.zeros(3); z += y`` was refused on NumPy 2.2.
C_PARAMETERS = {
    "zeros": ("shape", "dtype", "order"),
    "empty": ("shape", "dtype", "order"),
    "empty_like": ("prototype", "dtype", "order", "subok", "shape"),
    "arange": ("start_or_stop", "stop", "step"),
    "concatenate": ("arrays", "axis", "out"),
    "dot": ("a", "b", "out"),
    "inner": ("a", "b"),
    "vdot": ("a", "b"),
    "lexsort": ("keys", "axis"),
    "where": ("condition", "x", "y"),
}


@functools.cache
def _parameters(obj) -> tuple | None:
    try:
        return tuple(inspect.signature(obj).parameters)
    except (TypeError, ValueError):
        return C_PARAMETERS.get(_numpy_name(obj))


def call_returns_new(obj, keywords: dict, positional: tuple = ()) -> bool:
    """Whether calling the NumPy function ``obj`` returns a new array that holds no
    argument's memory. ``keywords`` maps keyword names to their literal values and
    ``positional`` lists the positional arguments' literal values (:data:`NOT_LITERAL`
    where an argument is not a literal). False when not known."""
    if any(k in SHARING_PARAMETERS for k in keywords):
        if not (obj is np.array and keywords.get("copy") is True):
            return False
    if isinstance(obj, np.ufunc):
        return len(positional) <= obj.nin  # a further positional argument is out
    if obj is np.array:  # np.array(x, dtype, copy): copies unless told not to
        return len(positional) < 3 or positional[2] is True
    name = _numpy_name(obj)
    if name is None or name not in NEW_ARRAY_FUNCTIONS:
        return False
    params = _parameters(obj)
    if params is None:
        return False
    bound = dict(zip(params, positional, strict=False))
    if any(p in SHARING_PARAMETERS for p in bound):
        return False
    if name in FRESH_UNLESS:
        param, bad = FRESH_UNLESS[name]
        value = keywords.get(param, bound.get(param))
        if value is NOT_LITERAL or (value is not None and value == bad):
            return False
    return True


def method_returns_new(name: str, npositional: int = 0) -> bool:
    """Whether the array method ``x.name(...)`` with ``npositional`` positional arguments
    returns a new array: listed in :data:`NEW_ARRAY_METHODS`, and no positional argument
    reaches the ``out`` / ``copy`` parameter of the NumPy function of the same name
    (``x.sum(0, None, y)`` writes into ``y``)."""
    if name not in NEW_ARRAY_METHODS or name in VIEW_METHODS:
        return False
    # The transform computes x.name(...) by the function resolve.ARRAY_METHODS maps it to
    # (x.flatten() by np.ravel, a view): the result is new only when that function's is.
    mapped = ARRAY_METHODS.get(name)
    if mapped is not None and not call_returns_new(mapped, {}):
        return False
    params = _parameters(getattr(np, name, None)) if hasattr(np, name) else None
    if params is None:
        return True  # copy, astype, tolist, item: no out; astype's copy= is a keyword
    return not any(p in SHARING_PARAMETERS for p in params[1 : 1 + npositional])


def literal_arguments(call) -> tuple[dict, tuple] | None:
    """``(keywords, positional)`` of a gast call as :func:`call_returns_new` takes them
    (literal values, :data:`NOT_LITERAL` otherwise); None when ``*args`` / ``**kw`` hide
    which parameters get a value."""
    if any(isinstance(a, gast.Starred) for a in call.args):
        return None
    if any(k.arg is None for k in call.keywords):
        return None
    return (
        {k.arg: _literal(k.value) for k in call.keywords},
        tuple(_literal(a) for a in call.args),
    )


def _literal(node):
    if isinstance(node, gast.Constant):
        return node.value
    if (
        isinstance(node, gast.UnaryOp)
        and isinstance(node.op, gast.USub)
        and isinstance(node.operand, gast.Constant)
        and isinstance(node.operand.value, (int, float))
    ):
        return -node.operand.value
    return NOT_LITERAL


def may_return_view(obj) -> bool:
    """Whether ``obj`` is a NumPy function listed as possibly returning a view / its input
    (the check's messages name it)."""
    return _numpy_name(obj) in VIEW_FUNCTIONS


def method_may_return_view(name: str) -> bool:
    """Whether ``x.name(...)`` may be a view of ``x`` or ``x`` itself, as NumPy or as the
    transform computes it (``x.flatten()`` is computed with np.ravel)."""
    mapped = ARRAY_METHODS.get(name)
    return name in VIEW_METHODS or (mapped is not None and may_return_view(mapped))


# Builtins whose result is a new object that keeps no reference to an argument: ``range``
# takes its bounds through ``__index__`` (a counter passed to ``range(n)`` and then
# ``n += 1`` shares nothing), ``isinstance`` answers a bool.
FRESH_BUILTINS = (len, int, float, bool, abs, round, print, complex, str, repr, range, isinstance)


def is_math_function(obj) -> bool:
    """Functions of the ``math`` module return new numbers."""
    return getattr(math, getattr(obj, "__name__", ""), None) is obj


def returns_fresh(callee, call) -> bool:
    """Whether ``call`` (resolved to ``callee``) returns a new object that keeps no
    reference to its arguments (for NumPy calls, by the table above)."""
    if callee.kind in ("array_method", "method"):
        return method_returns_new(callee.name, len(call.args))
    if callee.kind != "object":
        return False
    obj = callee.obj
    if any(obj is f for f in FRESH_BUILTINS) or is_math_function(obj):
        return True
    arguments = literal_arguments(call)
    return arguments is not None and call_returns_new(obj, *arguments)
