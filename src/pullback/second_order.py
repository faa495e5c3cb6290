"""Second derivatives of functions with any output: ``hessian`` of a vector- or tensor-valued
function, ``jacobian(jacobian(f))`` and ``hvp`` of a vector-valued function.

For an output of shape ``S`` (``m`` elements) the second derivative is, for each output
element ``k``, the derivative of the cotangents ``J(x)^T e_k``: the generated vjp function
of ``f`` (:class:`pullback.adjoints.VJPRef`, written in the differentiable subset) evaluated
at the seed ``e_k``, differentiated once more by reverse mode. One forward sweep of that vjp
function per output element, and one batched reverse sweep over the basis of each
argument's cotangent (:func:`pullback.batched.stacked_pullback`: row by row where a step
cannot batch, the same result either way): ``m`` times the work of a scalar Hessian.

The layout is JAX's: ``S + T_i + T_j`` for the derivative in argument ``j`` of the first
derivative in argument ``i`` (shapes ``T_i``, ``T_j``); a tuple ``wrt`` nests tuples,
``H[i][j]``, and a tuple output gives one such result per output.

>>> import numpy as np
>>> from pullback import hessian
>>> def f(x):
...     return np.array([x[0] * x[1], x[0] ** 2])
>>> hessian(f)(np.array([1.0, 2.0]))
array([[[0., 1.],
        [1., 0.]],
<BLANKLINE>
       [[2., 0.],
        [0., 0.]]])
"""

from __future__ import annotations

import functools
import math

import numpy as np

from . import backends
from .adjoints import VJPRef
from .api import vjp_resolved
from .arguments import _bound_values, fast_kinds, resolve_wrt
from .batched import stacked_pullback
from .callables import as_bound_call
from .diagonal_stack import identity_stack
from .errors import (
    ArgumentError,
    HigherOrderError,
    NonScalarOutputError,
    NotDifferentiableError,
    ShapeMismatchError,
    user_facing,
)
from .records_dataclasses import is_dataclass_value
from .registry import default_registry
from .transformed import write_into


def _outputs(fn, y):
    """The output leaves of ``y`` (one, or the items of a tuple or list), each a real
    number or real array; a clear refusal for anything else."""
    leaves = list(y) if isinstance(y, (tuple, list)) else [y]
    for leaf in leaves:
        if isinstance(leaf, (complex, np.complexfloating)) or (
            isinstance(leaf, np.ndarray) and leaf.dtype.kind == "c"
        ):
            raise NotDifferentiableError(
                f"hessian needs '{_name(fn)}' to return real values, but it returned a complex "
                f"{type(leaf).__name__}: its second derivative is not defined without choosing "
                "a convention.\nFix: differentiate np.real(...) and np.imag(...) of the result "
                "separately."
            )
        if backends.is_foreign_array(leaf):
            raise ArgumentError(
                f"hessian of a non-scalar function needs NumPy values, but '{_name(fn)}' "
                f"returned a {backends.backend_of(leaf)} array.\nFix: pass NumPy arrays "
                "(x.compute() for Dask), or take the hessian of a scalar function of it."
            )
        if isinstance(leaf, bool) or not isinstance(leaf, (float, int, np.ndarray, np.generic)):
            raise NonScalarOutputError(
                f"hessian needs '{_name(fn)}' to return numbers or arrays (or a tuple of them), "
                f"but it returned a {type(leaf).__name__}.\nFix: return arrays, or use "
                "pullback.vjp of the gradient for other structures."
            )
    return leaves


def third_order_error(outer: str, inner) -> HigherOrderError:
    """The refusal of a derivative of ``inner``, a jacobian or hessian of a jacobian or
    hessian: a second derivative is the Jacobian of a generated vjp function, which the
    result of a jacobian is not."""
    levels, fn = [], inner
    while type(fn).__name__ in _LEVELS:
        levels.append(_LEVELS[type(fn).__name__])
        fn = fn.fn
    text = "(".join(levels) + f"({_name(fn)}" + ")" * len(levels)
    return HigherOrderError(
        f"cannot take the {outer} of {text}: pullback differentiates a jacobian or hessian "
        "once (jacobian(jacobian(f)), jacobian(hessian(f)), hessian(grad(f))).\nFix: for a "
        "third derivative of a scalar function use jacobian(hessian(f)) or hessian(grad(f))."
    )


_LEVELS = {"JacobianFunction": "jacobian", "HessianFunction": "hessian"}


def _name(fn) -> str:
    return getattr(fn, "__qualname__", None) or type(fn).__name__


def _seed(leaf, k):
    """The cotangent of ``leaf`` that is 1 at flat position ``k`` and 0 elsewhere."""
    if not isinstance(leaf, np.ndarray):
        dtype = np.result_type(leaf)
        return dtype.type(1.0) if dtype.kind == "f" else 1.0
    e = np.zeros(leaf.shape, dtype=leaf.dtype if leaf.dtype.kind == "f" else np.float64)
    e.flat[k] = 1
    return e


def _zero(leaf):
    if isinstance(leaf, np.ndarray):
        return np.zeros(leaf.shape, dtype=leaf.dtype if leaf.dtype.kind == "f" else np.float64)
    return 0.0 * _seed(leaf, 0)


def _array_values(fn, args, kwargs, names, what="hessian"):
    """The values of the arguments ``names``: numbers or arrays (a container is refused, as
    :func:`pullback.jacobian` refuses it)."""
    values = _bound_values(fn, args, kwargs, names)
    for name, value in zip(names, values, strict=True):
        if isinstance(value, (tuple, list, dict)) or is_dataclass_value(value):
            raise ArgumentError(
                f"{what} with respect to '{name}', a {type(value).__name__}, is not "
                "supported.\nFix: pass its arrays as separate arguments."
            )
    return values


def _sweeps(fn, args, kwargs, inner_names, outer, registry):
    """``(y, leaves, sweeps)``: the output ``y = fn(*args, **kwargs)``, its leaves, and
    ``sweeps(j, leaf)``, which yields for each element ``k`` of leaf ``j`` the pair ``(first,
    back)``: the vjp function of ``fn`` in ``inner_names`` run at the seed ``e_k`` of that
    leaf (``first``, one cotangent per inner argument), and its pullback in the arguments
    ``outer = (names, values)`` (their values bound once, for every seed)."""
    reg = registry if registry is not None else default_registry()
    y = fn(*args, **kwargs)  # the output's structure, shapes and dtypes: the seeds'
    multi = isinstance(y, (tuple, list))
    leaves = _outputs(fn, y)
    target, call = fn, as_bound_call(fn)
    if call is not None and not call.is_plain:  # a method, partial or callable object
        target = call.target
        args, kwargs = call.arguments(args, kwargs)
    vjp_fn = VJPRef(target, inner_names, reg)

    def sweeps(j, leaf):
        for k in range(math.prod(np.shape(leaf))):
            seed = _seed(leaf, k)
            if multi:
                seed = [seed if m == j else _zero(o) for m, o in enumerate(leaves)]
                seed = seed if isinstance(y, list) else tuple(seed)
            first, back = vjp_resolved(
                vjp_fn, (seed, *args), kwargs, outer[0], False, reg, outer[1]
            )
            yield first, back

    return y, leaves, sweeps


def second_derivatives(fn, args, kwargs, inner, outer, registry=None):
    """The derivative in the arguments ``outer`` of the Jacobian of ``fn`` in the arguments
    ``inner`` (each ``(names, single)`` from :func:`pullback.arguments.resolve_wrt`), at
    ``fn(*args, **kwargs)``: for an output of shape ``S``, blocks of shape ``S + T_i +
    T_j``, nested as the output, then ``inner``, then ``outer`` (a level only where there
    are several)."""
    inner_shapes = [np.shape(v) for v in _array_values(fn, args, kwargs, inner[0])]
    outer_values = _array_values(fn, args, kwargs, outer[0])
    y, leaves, sweeps = _sweeps(fn, args, kwargs, inner[0], (outer[0], outer_values), registry)
    results = []
    for j, leaf in enumerate(leaves):
        # rows[i][o]: for each output element, the derivative in outer[o] of the cotangent
        # of inner[i], of shape T_i + T_o
        rows = [[[] for _ in outer[0]] for _ in inner[0]]
        for first, back in sweeps(j, leaf):
            for i, cotangent in enumerate(first):
                for o, r in enumerate(_derivatives(back, i, cotangent)):
                    rows[i][o].append(r)
        per_inner = []
        for i, in_shape in enumerate(inner_shapes):
            per_outer = []
            for o, value in enumerate(outer_values):
                block_shape = np.shape(leaf) + in_shape + np.shape(value)
                if rows[i][o]:
                    block = np.stack(rows[i][o]).reshape(block_shape)
                else:  # an empty output
                    block = np.zeros(block_shape, dtype=np.result_type(value, 0.0))
                per_outer.append(block)
            per_inner.append(per_outer[0] if outer[1] else tuple(per_outer))
        results.append(per_inner[0] if inner[1] else tuple(per_inner))
    return type(y)(results) if isinstance(y, (tuple, list)) else results[0]


def vector_hvp(fn, args, kwargs, names, v, registry=None):
    """For each output element of ``fn``, its Hessian in the argument ``names[0]`` times
    ``v``: shape ``S + T`` for an output of shape ``S`` (a tuple for a tuple output). The
    pullback of the vjp function at the seed ``e_k``, with ``v`` as its cotangent, is
    ``H_k v`` (a Hessian is symmetric): one forward and one reverse sweep per element."""
    (value,) = _array_values(fn, args, kwargs, names, "hvp of a non-scalar function")
    if np.shape(v) != np.shape(value):
        raise ShapeMismatchError(
            f"v has shape {np.shape(v)} but the argument '{names[0]}' has shape "
            f"{np.shape(value)}; hvp's direction must have its argument's shape."
        )
    y, leaves, sweeps = _sweeps(fn, args, kwargs, names, (names, [value]), registry)
    results = []
    for j, leaf in enumerate(leaves):
        rows = [np.asarray(back((v,))[0]) for _, back in sweeps(j, leaf)]
        shape = np.shape(leaf) + np.shape(value)
        dtype = np.result_type(value, 0.0)
        block = np.stack(rows).reshape(shape) if rows else np.zeros(shape, dtype=dtype)
        results.append(block.astype(dtype, copy=False))
    return type(y)(results) if isinstance(y, (tuple, list)) else results[0]


def _derivatives(back, i, cotangent):
    """The derivatives of the ``i``-th cotangent the vjp function gave, in each argument
    ``back`` differentiates: one array of shape ``T_i + T_o`` per argument."""
    shape = np.shape(cotangent)
    dtype = np.result_type(cotangent)
    dtype = dtype if dtype.kind == "f" else np.dtype(np.float64)
    n = math.prod(shape)
    if type(cotangent) is np.ndarray and n > 1:
        basis = identity_stack(shape, dtype)  # stays one vector through elementwise steps
    else:
        basis = np.eye(n, dtype=dtype).reshape((n,) + shape)
    return tuple(stacked_pullback(back, basis, entry=i))


class HessianFunction:
    """``hessian(f)``: the second derivatives of ``f`` in the arguments ``wrt``.

    A real scalar output takes ``jacobian(grad(f))`` (reverse over reverse, its Jacobian in
    one batched sweep); any other output, :func:`second_derivatives` (one such Jacobian per
    output element). The function of a call whose argument kinds once gave a non-scalar
    output goes straight to the second; both give the exact result for any output. (A
    call with keyword arguments tries the first each time: for a non-scalar output, one
    forward sweep more.)
    """

    def __init__(self, fn, wrt, registry, scalar):
        self.fn = fn
        self.wrt = wrt
        self.registry = registry
        self.names, self.single = resolve_wrt(fn, wrt)
        self._scalar = scalar  # jacobian(grad(fn, wrt), wrt)
        self._non_scalar: set = set()  # fast kinds of calls whose output was not a scalar
        functools.update_wrapper(self, fn, updated=())

    @user_facing
    def __call__(self, *args, **kwargs):
        # the kinds are read only once a non-scalar output was seen: a scalar Hessian's
        # call costs what jacobian(grad(f))'s does
        known = self._non_scalar and not kwargs and fast_kinds(args) in self._non_scalar
        if not known:
            try:
                return self._scalar(*args, **kwargs)
            except NonScalarOutputError:
                key = None if kwargs else fast_kinds(args)
                if key is not None:
                    self._non_scalar.add(key)
        wrt = (self.names, self.single)
        return second_derivatives(self.fn, args, kwargs, wrt, wrt, self.registry)

    def into(self, out, *args, **kwargs):
        """Write the Hessian into the preallocated ``out`` and return ``out``."""
        return write_into(out, self(*args, **kwargs), "the Hessian")
