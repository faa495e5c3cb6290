"""Jacobians from reverse sweeps: one forward sweep, one pullback per output element.

>>> import numpy as np
>>> from pullback import jacobian
>>> def f(x):
...     return np.sin(x) * 2.0
>>> jacobian(f)(np.zeros(2))
array([[2., 0.],
       [0., 2.]])
"""

from __future__ import annotations

import functools
import math
import types

import numpy as np

from . import backends
from .api import VJPPullback, _check_cotangent, get_adjoint, grad, vjp, vjp_resolved, write_into
from .api_errors import refuse_keywords
from .arguments import _positional_indices, _signature, fast_kinds, kinds_key, resolve_wrt
from .batched import pullback_stack
from .callables import as_bound_call
from .diagonal_stack import identity_stack
from .errors import ArgumentError, NonScalarOutputError, PullbackError, for_user, user_facing
from .records_dataclasses import as_cotangent, is_dataclass_value
from .refused import refuse_refused
from .registry import _active, _builtin, default_registry, install_entry_points
from .running import deeper_recursion, run_forward, run_pullback
from .second_order import HessianFunction, second_derivatives, third_order_error, vector_hvp
from .tangents import ZERO, materialize
from .transformed import GradFunction


def _leaf_shape(y):
    if isinstance(y, (float, int)) or isinstance(y, (np.ndarray, np.generic)):
        return np.shape(y)
    if backends.is_dask(y):
        return y.shape
    refuse_refused(y)  # a gradient differentiated again that needed a refused cotangent
    raise ArgumentError(
        f"jacobian needs outputs that are arrays or numbers (or a tuple of them); got a "
        f"{type(y).__name__}.\nFix: return arrays, or use pullback.vjp for other structures."
    )


def _basis(y, k):
    """The cotangent of ``y`` that is 1 at flat position ``k`` and 0 elsewhere."""
    if isinstance(y, (float, int)):
        return 1.0
    dtype = y.dtype if y.dtype.kind in "fc" else np.float64
    e = np.zeros(np.shape(y), dtype=dtype)
    e.flat[k] = 1
    return backends.like_argument(e, y) if backends.is_dask(y) else e


def _columns_block(stack, out_shape, in_shape):
    """The Jacobian block ``out_shape + in_shape`` of a stack of tangents, one row per
    input element: column k of the Jacobian is row k of the stack, the transpose of the
    (input size, output size) matrix (a view, as np.moveaxis gives)."""
    return stack.reshape(stack.shape[0], -1).T.reshape(out_shape + in_shape)


def _stackable(y, values) -> bool:
    """Whether the rows of a Jacobian can go through one batched pullback: plain float
    NumPy arrays or floats in and out."""
    plain = (float, np.float64, np.float32, np.ndarray)
    if type(y) not in plain or (type(y) is np.ndarray and y.dtype.kind != "f"):
        return False
    return all(type(v) is float or (type(v) is np.ndarray and v.dtype.kind == "f") for v in values)


def _plain_positions(fn, names):
    """``(number of parameters, positions of names)`` when every parameter of ``fn`` is
    positional (a call with exactly that many positional arguments then binds each name
    to its position), else None."""
    sig = _signature(fn)
    if sig is None:
        return None
    params = list(sig.parameters.values())
    if any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params):
        return None
    order = [p.name for p in params]
    return len(order), [order.index(n) for n in names]


class JacobianFunction:
    """``jacobian(f)``: returns the Jacobian of ``f`` at its arguments.

    For an output of shape ``S`` and an argument of shape ``T`` the Jacobian has shape
    ``S + T``. A tuple of outputs gives a tuple of Jacobians; a tuple ``wrt`` gives, for each
    output, a tuple over the arguments.
    """

    def __init__(self, fn, wrt, registry, mode="reverse"):
        if mode not in ("reverse", "forward", "auto"):
            raise ArgumentError(f"mode={mode!r}: use 'reverse', 'forward' or 'auto'.")
        self.fn = fn
        self.wrt = wrt
        self.registry = registry
        self.mode = mode
        self.names, self.single = resolve_wrt(fn, wrt)
        self._plain_positions = _plain_positions(fn, self.names)
        self._positions = (None, None)  # (what the signature was read from, positions)
        self._forward_sweeps = None  # the LazyJVP of fn, kept between calls
        self._fast_target = _fast_target(fn) if self._plain_positions is not None else None
        self._fast_entries: dict = {}  # fast kinds -> (adjoint, registry, version, inner)
        # the mode of a function that is not itself a derivative: _reverse or _forward at once
        plain = type(fn) not in _DERIVATIVES
        self._reverse_only = mode == "reverse" and plain
        self._forward_only = mode == "forward" and plain
        # the rows of a Jacobian of first derivatives defer their finiteness test; the
        # Hessian's (of grad(f)) meet band stacks at once (see batched.pullback_stack)
        self._defer = type(fn) is not GradFunction
        functools.update_wrapper(self, fn, updated=())

    def __call__(self, *args, **kwargs):
        try:  # what errors.user_facing does, without a frame of its own
            if self._reverse_only:
                return self._reverse(args, kwargs)
            if self._forward_only:
                positions = self._positional()  # (_call explains any other case)
                if positions is not None and max(positions, default=-1) < len(args):
                    return self._forward(positions, args, kwargs)
            return self._call(args, kwargs)
        except PullbackError as exc:
            for_user(exc)
            raise

    def _call(self, args, kwargs):
        inner = self.fn
        if type(inner) is JacobianFunction or type(inner) is HessianFunction:
            # jacobian(jacobian(f)): the derivative of f's Jacobian (jacobian(hessian(f)),
            # of grad(f)'s), in any mode the same numbers
            target = inner.fn if type(inner) is JacobianFunction else inner._scalar.fn
            if type(target) in _DERIVATIVES or type(getattr(target, "fn", None)) in _DERIVATIVES:
                raise third_order_error("jacobian", inner)
            wrt = ((inner.names, inner.single), (self.names, self.single))
            registry = self.registry if self.registry is not None else inner.registry
            return second_derivatives(target, args, kwargs, *wrt, registry)
        mode = self.mode
        if mode != "reverse":
            positions = self._positional()
            if positions is None or max(positions, default=-1) >= len(args):
                if mode == "forward":
                    raise ArgumentError(
                        "jacobian(mode='forward') needs the differentiated arguments passed "
                        "positionally."
                    )
                mode = "reverse"
        if mode == "auto":
            y = self.fn(*args, **kwargs)
            outputs = list(y) if isinstance(y, (tuple, list)) else [y]
            # sizes from shapes: np.size would compute a Dask array
            n_out = sum(math.prod(backends.shape_of(o)) for o in outputs)
            n_in = sum(math.prod(backends.shape_of(args[p])) for p in positions)
            # A forward sweep gives a column, a reverse sweep a row: take the fewer.
            mode = "forward" if n_in < n_out else "reverse"
        if mode == "forward":
            return self._forward(positions, args, kwargs)
        return self._reverse(args, kwargs)

    def _forward(self, positions, args, kwargs):
        if len(positions) == 1:
            x = args[positions[0]]
            if type(x) is np.ndarray and x.dtype.kind == "f" and x.size > 1:
                out = self._forward_columns(positions[0], x, args, kwargs)
                if out is not None:
                    return out
        per_input = []
        y = None
        for p in positions:
            x = args[p]
            if isinstance(x, (tuple, list, dict)) or is_dataclass_value(x):
                raise ArgumentError(
                    f"jacobian with respect to '{self.names[positions.index(p)]}', a "
                    f"{type(x).__name__}, is not supported.\nFix: pass its arrays as separate "
                    "arguments, or use pullback.vjp."
                )
            shape = np.shape(x)
            dtype = backends.as_array(x).dtype
            if type(x) is np.ndarray and dtype.kind == "f" and x.size > 1:
                # every column in one forward sweep: the basis as a scaled identity
                # (checked here: one stack of a float array, the others ZERO)
                stacks = [ZERO] * len(args)
                stacks[p] = identity_stack(shape, dtype)
                from .forward_mode import checked_stacked_jvp  # see _lazy_jvp

                y, dys = checked_stacked_jvp(
                    self._lazy_jvp(), tuple(args), tuple(stacks), [p], kwargs, True
                )
                per_input.append((shape, dys, True))
                continue
            columns = []
            for k in range(int(np.prod(shape, dtype=np.int64))):
                e = np.zeros(shape, dtype=dtype)
                e.flat[k] = 1
                tangents = [None] * len(args)
                tangents[p] = e if shape else dtype.type(1)
                from .forward_mode import jvp  # see _lazy_jvp

                y, dy = jvp(self.fn, tuple(args), tuple(tangents), registry=self.registry, **kwargs)
                columns.append(dy)
            per_input.append((shape, columns, False))
        if y is None:
            y = self.fn(*args, **kwargs)
        multi = isinstance(y, (tuple, list))
        outputs = list(y) if multi else [y]
        results = []
        for j, out in enumerate(outputs):
            out_shape = _leaf_shape(out)
            blocks = []
            for shape, columns, stacked in per_input:
                if stacked:
                    # the columns from stacked_jvp: (size,) + out_shape per output
                    stack = columns[j] if multi else columns
                    blocks.append(_columns_block(stack, out_shape, shape))
                    continue
                cols = [backends.as_array(c[j] if multi else c) for c in columns]
                block = np.stack(cols, axis=-1) if cols else np.zeros(out_shape + (0,))
                blocks.append(block.reshape(out_shape + shape))
            results.append(blocks[0] if self.single else tuple(blocks))
        return type(y)(results) if multi else results[0]

    def _forward_columns(self, p, x, args, kwargs):
        """The Jacobian with respect to the one float array ``x = args[p]`` from one
        forward sweep of the identity stack, when that sweep batches and gives a float
        array; None otherwise (the general path then goes column by column)."""
        stacks = [ZERO] * len(args)
        stacks[p] = identity_stack(x.shape, x.dtype)
        # (a method of the kept LazyJVP: no import statement at each call, see _lazy_jvp)
        out = self._lazy_jvp().batched(args, stacks, (p,), kwargs)
        if out is None or type(out[0]) is not np.ndarray:
            return None
        y, dys = out
        if dys.ndim == 2 and y.ndim == 1:  # (x.size, y.size): the block is its transpose
            block = dys.T
        else:
            block = _columns_block(dys, y.shape, x.shape)
        return block if self.single else (block,)

    def _positional(self):
        """Where the arguments in ``wrt`` stand among the positional parameters (see
        :func:`_positional_indices`), read from the signature again only when the function
        may have a new one: a Python function with other code, ``__signature__`` or
        ``__wrapped__`` than when last read; any other callable at every call."""
        fn = self.fn
        if type(fn) is not types.FunctionType:
            return _positional_indices(fn, self.names)
        source = (fn.__code__, getattr(fn, "__signature__", None), getattr(fn, "__wrapped__", None))
        seen, positions = self._positions
        if (
            seen is None
            or seen[0] is not source[0]
            or seen[1] is not source[1]
            or seen[2] is not source[2]
        ):
            positions = _positional_indices(fn, self.names)
            self._positions = (source, positions)
        return positions

    def _lazy_jvp(self):
        """The forward-mode function of ``fn``, made once per registry.

        Forward mode (forward_mode.py and the transformation it drives) is imported on the
        first forward sweep, not with pullback: a reverse-mode gradient's cold start would
        pay for its bytecode. The import runs only when the LazyJVP is made: an import
        statement costs about a microsecond at each call even when the module is loaded."""
        registry = self.registry
        if registry is None:  # default_registry(), inlined (see _fast_forward)
            registry = _active.get()
            if registry is None:
                registry = _builtin[0] if _builtin else default_registry()
        lazy = self._forward_sweeps
        if lazy is None or lazy.registry is not registry:
            from .forward_mode import LazyJVP

            lazy = self._forward_sweeps = LazyJVP(self.fn, registry)
        return lazy

    def _reverse(self, args, kwargs):
        plain = self._plain_positions
        values = fast = None
        if plain is not None and not kwargs and len(args) == plain[0]:
            at = plain[1]  # what binding the call would give:
            values = [args[at[0]]] if len(at) == 1 else [args[p] for p in at]
            fast = self._fast_forward(args, values)
        if fast is not None:
            y, pullback = fast
            t = type(y)
            if t is np.ndarray and y.dtype.kind == "f" or t is float or t is np.float64:
                # the fast path took float arguments only: every row in one batched sweep
                return self._reverse_stacked(y, pullback, pullback._values)
        else:
            y, pullback = vjp_resolved(
                self.fn, args, kwargs, self.names, self.single, self.registry, values
            )
        values = pullback._values
        for name, value in zip(self.names, values, strict=True):
            if isinstance(value, (tuple, list, dict)) or is_dataclass_value(value):
                raise ArgumentError(
                    f"jacobian with respect to '{name}', a {type(value).__name__}, is not "
                    "supported.\nFix: pass its arrays as separate arguments, or use pullback.vjp."
                )
        multi = isinstance(y, (tuple, list))
        if not multi and _stackable(y, values):
            return self._reverse_stacked(y, pullback, values)
        outputs = list(y) if multi else [y]
        shapes = [_leaf_shape(o) for o in outputs]
        results = []
        for j, (out, shape) in enumerate(zip(outputs, shapes, strict=True)):
            size = int(np.prod(shape, dtype=np.int64))
            rows = [[] for _ in values]
            for k in range(size):
                if multi:
                    dy = tuple(_basis(out, k) if m == j else ZERO for m in range(len(outputs)))
                    dy = type(y)(dy) if isinstance(y, list) else dy
                else:
                    dy = _basis(out, k)
                cots = pullback(dy)
                cots = (cots,) if self.single else cots
                for i, c in enumerate(cots):
                    rows[i].append(backends.as_array(c))  # Dask rows stay lazy
            per_input = []
            for i, value in enumerate(values):
                in_shape = np.shape(value)
                dtype = np.result_type(*rows[i]) if rows[i] else backends.as_array(value).dtype
                block = (
                    np.stack(rows[i]).astype(dtype, copy=False)
                    if rows[i]
                    else np.zeros((0,) + in_shape, dtype=dtype)
                )
                per_input.append(block.reshape(shape + in_shape))
            results.append(per_input[0] if self.single else tuple(per_input))
        return type(y)(results) if multi else results[0]

    def _fast_forward(self, args, values):
        """``(y, pullback)`` of the forward sweep of a call whose positional arguments have
        the fast kinds (floats, ints, real NumPy arrays) and whose differentiated ones are
        float scalars or float arrays; None for any other call (then :func:`vjp_resolved`
        takes it, and explains what it refuses).

        What ``vjp_resolved`` looks up at every call (the bound call, the argument kinds,
        the adjoint through its cache) is kept here per fast kinds, as ``grad``'s fast path
        keeps it: reused only while the registry and its version are the same and the
        adjoint's guard holds (and, for ``hessian``, the guard of the first derivative's
        adjoint whose generated gradient it differentiates)."""
        target = self._fast_target
        if target is None:
            return None
        key = fast_kinds(args)
        if key is None:
            return None
        registry = self.registry
        if registry is None:  # default_registry(), inlined (as grad's hot entry does)
            registry = _active.get()
            if registry is None:
                registry = _builtin[0] if _builtin else default_registry()
        entry = self._fast_entries.get(key)
        if (
            entry is None
            or entry[1] is not registry
            or entry[2] != registry.version
            or not entry[0].guard()
            or (entry[3] is not None and not entry[3].guard())
        ):
            for v in values:
                if not (type(v) is float or (type(v) is np.ndarray and v.dtype.kind == "f")):
                    return None  # the general path checks it (and says why it refuses)
            kinds = kinds_key(args, {})
            inner = None
            if type(target) is GradFunction:
                inner = get_adjoint(target.target, target.wrt, target.registry, kinds)
            adj = get_adjoint(target, self.names, registry, kinds)
            entry = self._fast_entries[key] = (adj, registry, registry.version, inner)
        adj = entry[0]
        if adj.calls_user_code:
            with deeper_recursion(self.fn):
                y, pullback = run_forward(adj, args, {})
        else:
            # with the evaluation's escape record: a value the function stored outside
            # (a global list, a cache on an object) and read back must be refused here too
            y, pullback = run_forward(adj, args, {})
        back = VJPPullback(self.fn, y, pullback, values, self.names, self.single)
        back.deep = adj.calls_user_code
        return y, back

    def _reverse_stacked(self, y, pullback, values):
        """Every row at once: the basis of the output's cotangents as one stack through
        one batched reverse sweep (row by row where a step cannot batch; exact either way)."""
        array = type(y) is np.ndarray  # else a float or a NumPy float (see _stackable)
        shape = y.shape if array else ()
        dtype = y.dtype if array and y.dtype.kind == "f" else np.float64
        # The basis as a scaled identity: through elementwise steps it stays one vector
        # (see pullback.diagonal_stack); anything else makes it the dense np.eye stack.
        basis = identity_stack(shape, dtype)
        stacked = pullback_stack(pullback, basis, None, self._defer)  # (output's shape)
        if self.single:  # one argument (the common case): no tuple to build and unpack
            v = values[0]
            want = shape + (v.shape if type(v) is np.ndarray else np.shape(v))
            return stacked if stacked.shape == want else stacked.reshape(want)
        blocks = []
        for s, v in zip(stacked, values, strict=True):
            want = shape + (v.shape if type(v) is np.ndarray else np.shape(v))
            blocks.append(s if s.shape == want else s.reshape(want))
        return tuple(blocks)

    def into(self, out, *args, **kwargs):
        """Write the Jacobian into the preallocated ``out`` and return ``out``."""
        return write_into(out, self(*args, **kwargs), "the Jacobian")


def _fast_target(fn):
    """What :meth:`JacobianFunction._fast_forward` differentiates for ``fn``: a plain Python
    function (its code watched by its adjoint's guard, as ``grad`` watches it), or the
    gradient ``grad(f)`` of one (a Hessian); None for anything else (methods, partials,
    callable objects are looked up again at each call by ``vjp_resolved``)."""
    if type(fn) is types.FunctionType:
        call = as_bound_call(fn)
        return call.target if call is not None and call.is_plain else None
    if type(fn) is GradFunction and not fn.has_aux and (fn.call is None or fn.call.is_plain):
        return fn
    return None


def jacobian(fn=None, wrt=0, *, mode="reverse", registry=None, **unknown):
    """The Jacobian of ``fn`` with respect to the arguments in ``wrt``, as a function.

    ``mode="reverse"`` builds it row by row from one forward sweep and one pullback per
    output element; ``"forward"`` column by column from forward-mode sweeps (one per input
    element); ``"auto"`` picks whichever needs fewer sweeps for the shapes at hand.
    """
    refuse_keywords("jacobian", unknown)
    if fn is None:
        return lambda f: JacobianFunction(f, wrt, registry, mode)
    return JacobianFunction(fn, wrt, registry, mode)


def hessian(fn=None, wrt=0, *, registry=None, **unknown):
    """The Hessian of ``fn``: ``jacobian(grad(fn))`` by reverse over reverse for a scalar
    output, one such Jacobian per output element for any other (as ``jax.hessian``).

    For an output of shape ``S`` and an argument of shape ``T`` the Hessian has shape
    ``S + T + T``. A tuple ``wrt`` gives nested tuples: ``H[i][j]``, of shape ``S + T_i +
    T_j``, differentiates in argument ``j`` the derivative in argument ``i``; a tuple output
    gives a tuple of such results. A step whose rule has no second derivative is refused
    with a clear error.
    """
    refuse_keywords("hessian", unknown)
    if fn is None:
        return lambda f: hessian(f, wrt, registry=registry)
    if type(fn) in _DERIVATIVES:
        raise third_order_error("hessian", fn)
    scalar = JacobianFunction(grad(fn, wrt, registry=registry), wrt, registry)
    return HessianFunction(fn, wrt, registry, scalar)


_DERIVATIVES = (JacobianFunction, HessianFunction)


class HVPFunction:
    """``hvp(f)(*args, v)``: the Hessian of ``f`` (in argument ``wrt``) times ``v``, from one
    forward and one reverse sweep of the generated gradient — no Hessian is formed."""

    def __init__(self, fn, wrt, registry):
        self.grad = grad(fn, wrt, registry=registry)
        self.wrt = wrt
        self.registry = registry
        self.names, _ = resolve_wrt(fn, wrt)
        self._position = self.grad._positions[0] if self.grad._positions else None
        self._adjoints: dict = {}
        self._non_scalar: set = set()  # fast kinds of calls whose output was not a scalar
        functools.update_wrapper(self, fn, updated=())

    @user_facing
    def __call__(self, *args):
        if not args:
            raise ArgumentError("hvp(f) is called as hvp(f)(*args, v).")
        if not (self._non_scalar and fast_kinds(args) in self._non_scalar):
            try:
                return self._scalar_hvp(args)
            except NonScalarOutputError:
                key = fast_kinds(args)
                if key is not None:
                    self._non_scalar.add(key)
        *primals, v = args
        return vector_hvp(self.grad.fn, tuple(primals), {}, self.names, v, self.registry)

    def _scalar_hvp(self, args):
        *primals, v = args
        bound = self.grad.call is not None and not self.grad.call.is_plain  # a method
        if bound or self._position is None or self._position >= len(primals):
            _, pullback = vjp(self.grad, *primals, wrt=self.wrt, registry=self.registry)
            return pullback(v)
        registry = self.registry if self.registry is not None else default_registry()
        key = (kinds_key(primals, {}), registry.version, id(registry))
        adj = self._adjoints.get(key)
        if adj is None:
            adj = self._adjoints[key] = get_adjoint(self.grad, self.names, registry, key[0])
        g, pullback = run_forward(adj, primals, {})
        v = as_cotangent(v) if is_dataclass_value(v) else v  # (records_dataclasses.py)
        _check_cotangent(g, v, "v")
        # The Hessian is symmetric, so the pullback of the gradient is a Hessian product.
        (cotangent,) = run_pullback(pullback, v)
        return materialize(cotangent, primals[self._position])


def hvp(fn=None, wrt=0, *, registry=None, **unknown):
    """Hessian-vector products ``hvp(f)(*args, v)``: ``H @ v`` for a scalar ``fn``; for an
    output of shape ``S``, each output element's Hessian times ``v`` (shape ``S + T``)."""
    refuse_keywords("hvp", unknown)
    if fn is None:
        return lambda f: HVPFunction(f, wrt, registry)
    if isinstance(wrt, (tuple, list)):
        raise ArgumentError("hvp takes one argument (wrt=index or name), not a tuple.")
    return HVPFunction(fn, wrt, registry)


# The rules of these functions (rules/pullback_runtime.py) find them here, below the api layer.
install_entry_points(jacobian=jacobian, hessian=hessian, hvp=hvp)
