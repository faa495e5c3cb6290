"""Transformable pullbacks of ``array_api_strict``'s functions.

Each pullback is a plain function in the differentiable subset, written with the
namespace's own functions: generated adjoints call it directly, and a second derivative
(``grad(grad(f))``, ``hessian``) transforms it like user code, through the rules of the
functions it calls. The rules in ``array_api.py`` are made from these functions, so first
and second derivatives share one formula.

Imported only by ``array_api.register``, once the user has imported ``array_api_strict``
(pullback never imports it itself). The elementwise and reduction pullbacks are here;
linear algebra and FFT are in ``array_api_linalg.py``.
"""

from __future__ import annotations

import math

import array_api_strict as xp

from ..registry import transformable

# -- helpers ------------------------------------------------------------------------------
# Products of a cotangent with an array are written ``mul(dy, ...)`` (xp.multiply), not
# ``dy * ...``: in a second derivative a cotangent may be a symbolic zero, which the rule of
# xp.multiply skips, while ``array * zero`` would reach array_api_strict, which refuses
# anything but its own arrays and Python numbers.

mul = xp.multiply


@transformable
def sum_to(g, x):
    """The cotangent ``g`` of a broadcast value summed down to the shape of ``x``."""
    if isinstance(x, (int, float)):
        return xp.sum(g)
    leading, stretched = broadcast_axes(g.shape, x.shape)
    if len(leading) > 0:
        g = xp.sum(g, axis=leading)
    if len(stretched) > 0:
        g = xp.sum(g, axis=stretched, keepdims=True)
    return g


# Shape arithmetic (no tangent: registered as non-differentiable, so a second derivative
# runs them as they are).


def reduced_axes(axis, ndim):
    """The reduced axes, normalized and sorted."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, int):
        return (axis % ndim,)
    return tuple(sorted(a % ndim for a in axis))


def kept_shape(shape, axis):
    """``shape`` with the reduced axes kept as length 1."""
    axes = reduced_axes(axis, len(shape))
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def broadcast_axes(gshape, xshape):
    """The axes along which a value of ``xshape`` was broadcast to ``gshape``: the
    leading ones it lacks, and its own length-1 axes that were stretched."""
    extra = len(gshape) - len(xshape)
    stretched = [i for i in range(len(xshape)) if xshape[i] == 1 and gshape[extra + i] != 1]
    return tuple(range(extra)), tuple(stretched)


def inverse_permutation(axes):
    return tuple(sorted(range(len(axes)), key=lambda k: axes[k]))


def negated(shift):
    return -shift if isinstance(shift, int) else tuple(-s for s in shift)


def reduced_count(shape, axis):
    """How many elements each reduction over ``axis`` combines."""
    return math.prod(shape[a] for a in reduced_axes(axis, len(shape)))


@transformable
def expand(dy, x, axis):
    """The cotangent of a reduction of ``x`` with the reduced axes back (length 1)."""
    kept = kept_shape(x.shape, axis)
    if isinstance(dy, (int, float)):  # the cotangent of a 0-d result may be a number
        return mul(xp.ones(kept, dtype=x.dtype), dy)
    return xp.reshape(dy, kept)


# -- elementwise functions of one array --------------------------------------------------
# A holomorphic f takes dx = dy * conj(f'(x)) (conj is the identity on real arrays), the
# convention of pullback's NumPy rules; abs of a complex z gives dy * z / |z| (= sign(z)).


@transformable
def conj_pullback(dy, x):
    return (xp.conj(dy),)


@transformable
def sin_pullback(dy, x):
    return (dy * xp.conj(xp.cos(x)),)


@transformable
def cos_pullback(dy, x):
    return (-dy * xp.conj(xp.sin(x)),)


@transformable
def tan_pullback(dy, x):
    y = xp.tan(x)
    return (dy * xp.conj(1.0 + y * y),)


@transformable
def exp_pullback(dy, x):
    return (dy * xp.conj(xp.exp(x)),)


@transformable
def expm1_pullback(dy, x):
    return (dy * xp.conj(xp.exp(x)),)


@transformable
def log_pullback(dy, x):
    return (dy / xp.conj(x),)


@transformable
def log1p_pullback(dy, x):
    return (dy / xp.conj(1.0 + x),)


@transformable
def log2_pullback(dy, x):
    return (dy / (xp.conj(x) * math.log(2.0)),)


@transformable
def log10_pullback(dy, x):
    return (dy / (xp.conj(x) * math.log(10.0)),)


@transformable
def sqrt_pullback(dy, x):
    return (0.5 * dy / xp.conj(xp.sqrt(x)),)


@transformable
def tanh_pullback(dy, x):
    y = xp.tanh(x)
    return (dy * xp.conj(1.0 - y * y),)


@transformable
def sinh_pullback(dy, x):
    return (dy * xp.conj(xp.cosh(x)),)


@transformable
def cosh_pullback(dy, x):
    return (dy * xp.conj(xp.sinh(x)),)


@transformable
def asin_pullback(dy, x):
    return (dy / xp.conj(xp.sqrt(1.0 - x * x)),)


@transformable
def acos_pullback(dy, x):
    return (-dy / xp.conj(xp.sqrt(1.0 - x * x)),)


@transformable
def atan_pullback(dy, x):
    return (dy / xp.conj(1.0 + x * x),)


@transformable
def asinh_pullback(dy, x):
    return (dy / xp.conj(xp.sqrt(x * x + 1.0)),)


@transformable
def acosh_pullback(dy, x):
    return (dy / xp.conj(xp.sqrt(x * x - 1.0)),)


@transformable
def atanh_pullback(dy, x):
    return (dy / xp.conj(1.0 - x * x),)


@transformable
def negative_pullback(dy, x):
    return (-dy,)


@transformable
def positive_pullback(dy, x):
    return (dy,)


@transformable
def abs_pullback(dy, x):
    return (dy * xp.sign(x),)


@transformable
def square_pullback(dy, x):
    return (2.0 * dy * xp.conj(x),)


@transformable
def reciprocal_pullback(dy, x):
    return (-dy / xp.conj(x * x),)


# -- elementwise functions of two arrays (broadcasting undone by sum_to) ----------------


@transformable
def add_pullback(dy, a, b):
    return sum_to(dy, a), sum_to(dy, b)


@transformable
def subtract_pullback(dy, a, b):
    return sum_to(dy, a), sum_to(-dy, b)


@transformable
def multiply_pullback(dy, a, b):
    return sum_to(mul(dy, xp.conj(b)), a), sum_to(mul(dy, xp.conj(a)), b)


@transformable
def divide_pullback(dy, a, b):
    return sum_to(xp.divide(dy, xp.conj(b)), a), sum_to(mul(-dy, xp.conj(a / (b * b))), b)


@transformable
def pow_pullback(dy, a, b):
    # real arrays: d/db a**b = a**b log(a), taken as 0 where a <= 0 (b's tangent is
    # undefined there)
    positive = a > 0
    safe = xp.where(positive, a, xp.ones_like(a * dy))
    return sum_to(mul(dy, b * a ** (b - 1.0)), a), sum_to(mul(dy, a**b * xp.log(safe)), b)


@transformable
def maximum_pullback(dy, a, b):
    zero = xp.zeros_like(dy)
    first = a >= b  # a tie sends the cotangent to a (as NumPy's rule does)
    return sum_to(xp.where(first, dy, zero), a), sum_to(xp.where(first, zero, dy), b)


@transformable
def minimum_pullback(dy, a, b):
    zero = xp.zeros_like(dy)
    first = a <= b
    return sum_to(xp.where(first, dy, zero), a), sum_to(xp.where(first, zero, dy), b)


@transformable
def atan2_pullback(dy, a, b):
    r2 = a * a + b * b
    return sum_to(mul(dy, b / r2), a), sum_to(mul(-dy, a / r2), b)


@transformable
def hypot_pullback(dy, a, b):
    h = xp.hypot(a, b)
    return sum_to(mul(dy, a / h), a), sum_to(mul(dy, b / h), b)


@transformable
def logaddexp_pullback(dy, a, b):
    y = xp.logaddexp(a, b)
    return sum_to(mul(dy, xp.exp(a - y)), a), sum_to(mul(dy, xp.exp(b - y)), b)


# -- reductions -------------------------------------------------------------------------


@transformable
def sum_pullback(dy, x, axis=None, dtype=None, keepdims=False):
    return (mul(expand(dy, x, axis), xp.ones_like(x)),)


@transformable
def mean_pullback(dy, x, axis=None, keepdims=False):
    n = float(max(reduced_count(x.shape, axis), 1))
    return (mul(expand(dy, x, axis), xp.ones_like(x) / n),)


@transformable
def prod_pullback(dy, x, axis=None, dtype=None, keepdims=False):
    # The product of the other elements, also where x has zeros: with no zero it is
    # y / x; with one zero only that element gets the product of the rest; else 0.
    is_zero = x == 0
    nonzero = xp.where(is_zero, xp.ones_like(x), x)
    rest = xp.prod(nonzero, axis=axis, keepdims=True)
    zeros = xp.sum(xp.astype(is_zero, x.dtype), axis=axis, keepdims=True)
    others = xp.where(zeros == 0, rest / nonzero, xp.where(is_zero, rest, xp.zeros_like(x)))
    others = xp.where(zeros > 1, xp.zeros_like(x), others)
    return (mul(expand(dy, x, axis), xp.conj(others)),)


@transformable
def var_pullback(dy, x, axis=None, correction=0.0, keepdims=False):
    n = reduced_count(x.shape, axis)
    centered = x - xp.mean(x, axis=axis, keepdims=True)
    return (mul(expand(dy, x, axis), 2.0 * centered / (n - correction)),)


@transformable
def std_pullback(dy, x, axis=None, correction=0.0, keepdims=False):
    n = reduced_count(x.shape, axis)
    centered = x - xp.mean(x, axis=axis, keepdims=True)
    s = xp.std(x, axis=axis, correction=correction, keepdims=True)
    # constant data (std 0): the subgradient 0 (centered is 0 there; guard the division)
    safe = xp.where(s == 0, xp.ones_like(s), s)
    return (mul(expand(dy, x, axis), centered / ((n - correction) * safe)),)


@transformable
def extremum_pullback(dy, x, y, axis):
    """The cotangent of ``max``/``min`` (value ``y``, reduced axes kept): ties share it
    equally."""
    at = y
    mask = xp.astype(x == at, x.dtype)
    count = xp.sum(mask, axis=axis, keepdims=True)
    return (mul(expand(dy, x, axis), mask / count),)


@transformable
def max_pullback(dy, x, axis=None, keepdims=False):
    return extremum_pullback(dy, x, xp.max(x, axis=axis, keepdims=True), axis)


@transformable
def min_pullback(dy, x, axis=None, keepdims=False):
    return extremum_pullback(dy, x, xp.min(x, axis=axis, keepdims=True), axis)


@transformable
def reverse_cumulative_sum(g, axis):
    return xp.flip(xp.cumulative_sum(xp.flip(g, axis=axis), axis=axis), axis=axis)


@transformable
def cumulative_sum_pullback(dy, x, axis=None, dtype=None, include_initial=False):
    ax = 0 if axis is None else axis % x.ndim
    g = reverse_cumulative_sum(dy, ax)
    if include_initial:  # y[0] = 0 takes no input; y[k] sums x[:k]
        lead = (slice(None),) * ax
        g = g[lead + (slice(1, None), ...)]
    return (g,)
