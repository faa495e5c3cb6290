"""Rules for the functions of the array-API namespace ``array_api_strict``.

A function written against the standard (``xp.sum(xp.tanh(x) * x)``) calls the
namespace's own functions, not NumPy's: these rules differentiate them. Each rule is made
from a transformable pullback written with the namespace's functions
(``array_api_pullbacks.py``, ``array_api_shape.py``, ``array_api_linalg.py``), so
generated code calls it directly and second derivatives run through it. Registered when
``array_api_strict`` is imported (pullback never imports it).

Covered: the elementwise functions of one and two arrays in ``_UNARY``/``_BINARY``,
``sum``/``mean``/``prod``/``std``/``var``/``max``/``min`` (``axis``, ``keepdims``,
``correction``), ``cumulative_sum``, ``matmul``, ``matrix_transpose``, ``reshape``,
``broadcast_to``, ``expand_dims``, ``squeeze``, ``permute_dims``, ``astype``, ``where``,
``clip``, ``concat``, ``stack``, ``flip``, ``roll``, ``take``, ``sort``, ``tril``/``triu``,
``real``/``imag``;
``linalg``: ``matmul``, ``matrix_transpose``, ``inv``, ``det``, ``solve``, ``cholesky``,
``vector_norm`` (2-norm), ``matrix_norm`` (Frobenius), ``trace``, ``vecdot``, ``outer``;
``fft``: ``fft``, ``ifft`` (default ``n`` and ``norm``). Creation, query, comparison,
logical and sorting-order functions have no tangent. Other functions are refused before
running (PB301).
"""

from __future__ import annotations

from ..errors import UnsupportedCallError
from ..tangents import NO_TANGENT
from ._util import ZERO, Registrar, densify, zeros_for

FAMILY = "array_api"
REQUIRES = "array_api_strict"

_UNARY = (
    "sin cos tan exp expm1 log log1p log2 log10 sqrt tanh sinh cosh asin acos atan asinh "
    "acosh atanh negative positive abs square reciprocal conj"
).split()
_BINARY = "add subtract multiply divide pow maximum minimum atan2 hypot logaddexp".split()
_REDUCTIONS = "sum mean prod std var max min cumulative_sum".split()
_SHAPE = (
    "matmul matrix_transpose reshape broadcast_to expand_dims squeeze permute_dims astype "
    "where clip concat stack flip roll take sort tril triu"
).split()
_LINALG = "inv det solve cholesky vector_norm matrix_norm trace vecdot outer".split()

_NO_TANGENT = (
    "asarray zeros ones zeros_like ones_like empty empty_like full full_like arange linspace "
    "eye isdtype result_type can_cast finfo iinfo sign signbit floor ceil "
    "round trunc equal not_equal less less_equal greater greater_equal isnan isinf isfinite "
    "logical_and logical_or logical_not logical_xor argmax argmin argsort searchsorted "
    "nonzero all any count_nonzero unique_values unique_counts unique_inverse unique_all"
).split()

# Options whose derivative these rules do not give: refused when the rule is called.
_REFUSED = {
    "vector_norm": lambda kw: kw.get("ord", 2) != 2 and "ord=2 only",
    "matrix_norm": lambda kw: kw.get("ord", "fro") != "fro" and "ord='fro' only",
    "fft": lambda kw: _fft_options(kw),
    "ifft": lambda kw: _fft_options(kw),
}


def _fft_options(kw):
    if kw.get("n") is not None or kw.get("norm", "backward") != "backward":
        return "the default n and norm only"
    return False


def _has_tangent(x) -> bool:
    """A float or an array of a floating (real or complex) dtype."""
    if isinstance(x, float):
        return True
    if isinstance(x, (list, tuple)):
        return any(_has_tangent(a) for a in x)
    if not hasattr(type(x), "__array_namespace__"):
        return False
    return bool(x.__array_namespace__().isdtype(x.dtype, ("real floating", "complex floating")))


def _rule_from(fn, pullback_fn, label):
    """The rule of ``fn`` from its transformable pullback ``pullback_fn(dy, *args,
    **kwargs)``: cotangents only for float arguments."""
    check = _REFUSED.get(fn.__name__)

    def array_api_rrule(*args, **kwargs):
        if check is not None and check(kwargs):
            raise UnsupportedCallError(
                f"{label}: this rule differentiates {check(kwargs)}, not {kwargs!r}.\n"
                "Fix: call it with the default options, or write the step with functions "
                "that have rules."
            )
        y = fn(*args, **kwargs)

        def array_api_pullback(dy):
            if dy is ZERO:
                return zeros_for(args)
            cotangents = pullback_fn(densify(dy), *args, **kwargs)
            return tuple(
                c if _has_tangent(a) else NO_TANGENT
                for c, a in zip(cotangents, args, strict=True)
            )

        return y, array_api_pullback

    array_api_rrule.__name__ = array_api_rrule.__qualname__ = f"{fn.__name__}_rrule"
    return array_api_rrule


def _register(r, module, names, pullbacks, prefix):
    for name in names:
        fn = getattr(module, name)
        pullback_fn = getattr(pullbacks, f"{name}_pullback")
        label = f"{prefix}.{name}"
        rule = r.rule(fn, _rule_from(fn, pullback_fn, label), label)
        rule.pullback_fn = pullback_fn


def register_namespace(reg, xp, family=FAMILY):
    """Register the rules of these modules for ``array_api_strict`` (``xp``)."""
    from . import array_api_linalg, array_api_pullbacks, array_api_shape

    r = Registrar(reg, family)
    prefix = getattr(xp, "__name__", "xp")
    _register(r, xp, _UNARY + _BINARY + _REDUCTIONS, array_api_pullbacks, prefix)
    _register(r, xp, _SHAPE, array_api_shape, prefix)
    _register(r, xp, ("real", "imag"), array_api_linalg, prefix)
    _register(r, xp.linalg, _LINALG, array_api_linalg, f"{prefix}.linalg")
    _register(r, xp.fft, ("fft", "ifft"), array_api_linalg, f"{prefix}.fft")
    # the linalg extension's own matmul and matrix_transpose are other function objects
    _register(r, xp.linalg, ("matmul", "matrix_transpose"), array_api_shape, f"{prefix}.linalg")
    fns = [getattr(xp, name) for name in _NO_TANGENT if hasattr(xp, name)]
    r.nondiff(*fns, names=[f"{prefix}.{f.__name__}" for f in fns])
    shapes = "reduced_axes kept_shape reduced_count broadcast_axes inverse_permutation negated"
    r.nondiff(*(getattr(array_api_pullbacks, name) for name in shapes.split()))


def register(reg):
    try:
        import array_api_strict
    except ImportError:
        return
    register_namespace(reg, array_api_strict)
