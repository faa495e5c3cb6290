"""The public differentiation API: grad, value_and_grad, vjp (and the adjoint cache).

>>> import numpy as np
>>> from pullback import grad
>>> @grad
... def loss(w):
...     return np.sum(w ** 2)
>>> loss(np.array([1.0, 2.0]))
array([2., 4.])
"""

from __future__ import annotations

import functools
import inspect
import re
import sys
import types

import numpy as np

from . import backends
from .arguments import (
    _bound_values,
    _check_differentiable,
    _leaves,
    _name,
    _param_names,
    _positional_indices,
    _signature,
    fast_kinds,
    kinds_key,
    picked_adjoint,
    resolve_wrt,
    split_wrt,
    spread_arguments,
)
from .cache import function_entries, registry_token
from .callables import as_bound_call
from .errors import (
    ArgumentError,
    HigherOrderError,
    ShapeMismatchError,
    SourceUnavailableError,
    UnsupportedSyntaxError,
)
from .registry import RuleRegistry, default_registry, qualified_name
from .running import (
    deeper_recursion,
    forward_failed,
    pullback_failed,
    run_forward,
    run_pullback,
)
from .runtime import scalar_seed
from .source import transform_target
from .tangents import NO_TANGENT, ZERO, is_differentiable_value, materialize
from .transform.build import Adjoint, build_adjoint

# -- the adjoint cache ------------------------------------------------------------------


class AdjointCache:
    """Generated adjoints of one registry, keyed by (function, differentiated params,
    registry version, argument kinds).

    An entry is reused only while its guard holds (the function's code, defaults and
    every baked-in callee are the same objects; see :mod:`pullback.guards`), and one made
    under an older registry version is rebuilt, so a rule registered after a function was
    differentiated takes effect. Entries are stored on the function and die with it.
    """

    def __init__(self, registry: RuleRegistry):
        self.token = registry_token(registry)

    def get(self, fn, wrt, registry: RuleRegistry, kinds_key=None) -> Adjoint:
        refusal = getattr(fn, "__pullback_refuse__", None)
        if refusal is not None:
            raise HigherOrderError(f"cannot differentiate {qualified_name(fn)} again: {refusal}.")
        if isinstance(fn, VJPRef):
            declared = list(inspect.signature(fn).parameters)
            fn = fn.function_for(kinds_key)
            # The generated function names its cotangent parameters itself (a vjp of a vjp
            # has one per level): the names callers use map to its parameters by position.
            actual = dict(zip(declared, inspect.signature(fn).parameters, strict=True))
            if wrt is not None:
                wrt = tuple(actual[w] for w in wrt)
        if isinstance(fn, _Transformed):
            # grad of a gradient: differentiate the generated gradient function itself.
            outer = fn
            fn = fn.gradient_function(kinds_key)
            try:
                return self.get(fn, wrt, registry, kinds_key)
            except UnsupportedSyntaxError as exc:
                raise _higher_order_error(outer, exc, fn) from None
        fn = transform_target(fn)
        entries = function_entries(fn) if isinstance(fn, types.FunctionType) else None
        if entries is None:  # not a Python function: say why it cannot be transformed
            raise SourceUnavailableError(
                f"cannot differentiate {qualified_name(fn)} directly: it is a "
                f"{type(fn).__name__}, not a Python function (pullback transforms Python "
                "source).\n"
                f"Fix: wrap it in one, e.g. `grad(lambda x: {qualified_name(fn)}(x))`; its "
                "rule is used inside."
            ) from None
        key = ("adjoint", self.token, wrt, registry.version, kinds_key)
        adj = entries.get(key)
        if adj is None or not adj.guard():
            adjoint_of = functools.partial(LazyAdjoint, registry=registry)
            adj = build_adjoint(fn, wrt, registry, adjoint_of, kinds_key=kinds_key)
            entries[key] = adj
        return adj


def adjoint_cache(registry: RuleRegistry) -> AdjointCache:
    cache = getattr(registry, "_adjoint_cache", None)
    if cache is None:
        cache = registry._adjoint_cache = AdjointCache(registry)
    return cache


def _higher_order_error(transformed, exc, gradient_fn=None) -> HigherOrderError:
    # Name the function whose rule it is (numpy.median), not the rule's own function. Rules
    # made by one factory share their function's name (quantile_rrule for median,
    # quantile and percentile): the call's line then tells which one the gradient uses,
    # through the global it calls.
    names, by_id = {}, {}
    for rule in transformed.registry.rules():
        if rule.rrule is not None:
            names.setdefault(qualified_name(rule.rrule), set()).add(rule.name)
            by_id[id(rule.rrule)] = rule.name
    namespace = getattr(gradient_fn, "__globals__", {})
    found = set()
    for d in exc.diagnostics:
        if d.code != "PB301" or "'" not in d.message:
            continue
        callee = d.message.split("'")[1]
        candidates = names.get(callee, {callee})
        if len(candidates) > 1:
            called = {
                by_id.get(id(namespace[word]))
                for word in re.findall(r"[A-Za-z_]\w*", d.source_line)
                if word in namespace
            }
            candidates = (called & candidates) or candidates
        found |= candidates
    steps = ", ".join(sorted(found))
    return HigherOrderError(
        f"cannot take a second derivative of '{_name(transformed.fn)}': its gradient uses "
        f"{'the rules ' + steps if steps else 'calls'} whose pullbacks pullback cannot "
        "differentiate yet (or calls of other user functions).\n"
        "Second derivatives work through arithmetic, indexing, control flow, `math` and the "
        "elementwise NumPy functions (np.sin, np.tanh, ...) in one function.\n"
        "Fix: write that step with those, or use finite differences of the gradient "
        "(pullback.testing.check_grads(order=2) shows how)."
    )


def get_adjoint(fn, wrt, registry: RuleRegistry, kinds_key=None) -> Adjoint:
    params, picks = split_wrt(wrt)  # elements of *args/**kwargs: their tuple or dict
    adj = adjoint_cache(registry).get(fn, params, registry, kinds_key)
    return adj if picks is None else picked_adjoint(adj, wrt, picks)


class VJPRef:
    """The generated ``vjp(dvalue, *args)`` function of a user function, as differentiable
    code calls it. Resolved when used (so recursive functions can refer to their own)."""

    __pullback_opaque__ = True
    COTANGENT = "__pullback_dvalue__"

    def __init__(self, fn, wrt, registry):
        self.fn = fn
        self.wrt = tuple(wrt)
        self.registry = registry
        self.__name__ = f"{getattr(fn, '__name__', 'fn')}__vjp"

    @property
    def cotangent_name(self) -> str:
        """The cotangent parameter's name: one no parameter of ``fn`` has (a vjp of a vjp,
        for a third derivative, has one cotangent per level)."""
        taken = set(inspect.signature(self.fn).parameters)
        name, k = self.COTANGENT, 0
        while name in taken:
            k += 1
            name = f"__pullback_dvalue{k}__"
        return name

    @property
    def __signature__(self):
        sig = inspect.signature(self.fn)
        cotangent = inspect.Parameter(self.cotangent_name, inspect.Parameter.POSITIONAL_ONLY)
        rest = [
            p.replace(kind=inspect.Parameter.POSITIONAL_OR_KEYWORD)
            if p.kind is inspect.Parameter.POSITIONAL_ONLY
            else p
            for p in sig.parameters.values()
        ]
        return sig.replace(parameters=[cotangent] + rest)

    def function_for(self, kinds):
        """The generated vjp function for a call whose arguments (cotangent first) have
        these kinds."""
        if kinds is None:
            key = None
        else:
            positional, keywords = kinds
            key = (positional[1:], keywords)
        return get_adjoint(self.fn, self.wrt, self.registry, key).vjp

    def __call__(self, dvalue, *args, **kwargs):
        adj = get_adjoint(self.fn, self.wrt, self.registry, kinds_key(args, kwargs))
        return adj.vjp(dvalue, *args, **kwargs)

    def __repr__(self) -> str:
        return f"<vjp of {getattr(self.fn, '__qualname__', self.fn)}>"


class LazyAdjoint:
    """The adjoint of a user function called from generated code, built on first use
    (so that recursive functions can refer to their own adjoint)."""

    __slots__ = ("fn", "wrt", "registry", "_cache")

    def __init__(self, fn, wrt, registry):
        self.fn = fn
        self.wrt = None if wrt is None else tuple(wrt)
        self.registry = registry
        self._cache = {}

    def __call__(self, *args, **kwargs):
        if self.wrt is None:
            return self._call_dynamic(args, kwargs)
        key = (kinds_key(args, kwargs), self.registry.version)
        adj = self._cache.get(key)
        if adj is None or not adj.guard():
            adj = get_adjoint(self.fn, self.wrt, self.registry, key[0])
            self._cache[key] = adj
        return adj.forward(*args, **kwargs)

    def _call_dynamic(self, args, kwargs):
        """A call found at run time: differentiate the arguments that hold floats, and
        give one cotangent per positional argument (the rule convention)."""
        sig = _signature(self.fn)
        bound = sig.bind(*args, **kwargs)
        # Arguments in *args/**kwargs are differentiated one by one ("args[1]").
        entries = spread_arguments(sig, bound)
        names = [n for n, _ in entries]
        active = tuple(
            n for n, v in entries if any(map(is_differentiable_value, _leaves(v)))
        )
        adj = get_adjoint(self.fn, active, self.registry, kinds_key(args, kwargs))
        y, pullback = adj.forward(*args, **kwargs)
        positions = {n: k for k, n in enumerate(active)}
        positional = names[: len(args)]

        def dynamic_call_pullback(dy):
            cots = pullback(dy)
            return tuple(cots[positions[n]] if n in positions else NO_TANGENT for n in positional)

        return y, dynamic_call_pullback


# -- scalar outputs -----------------------------------------------------------------------


def _scalar_seed(fn, y):
    return scalar_seed(y, _name(fn))


# -- the public functions -----------------------------------------------------------------


# fast_kinds entries of differentiable values: floats and float arrays of any rank.
_FLOAT_KEYS = frozenset([float, np.float64] + [(ndim, "f") for ndim in range(65)])


class _Transformed:
    """Shared machinery of the functions returned by grad and value_and_grad."""

    def __init__(self, fn, wrt, has_aux, registry):
        if not callable(fn):
            raise ArgumentError(f"grad expects a function, got {type(fn).__name__}.")
        self.fn = fn
        # A method, partial or callable object: the Python function it calls and the
        # arguments bound before the user's (self, the partial's arguments).
        self.call = as_bound_call(fn)
        self.target = fn if self.call is None else self.call.target
        self.wrt_arg = wrt
        self.has_aux = has_aux
        self._registry = registry
        self.wrt, self.single = resolve_wrt(fn, wrt)
        functools.update_wrapper(self, fn, updated=())
        self._positions = _positional_indices(fn, self.wrt)
        self._arity = len(_param_names(fn))
        self._adjoints: dict = {}
        # The fast path of a call with plain positional arguments (floats, ints, real
        # NumPy arrays): its adjoint by argument kinds, with the registry and registry
        # version it was built under (see _fast_adjoint).
        self._fast_entries: dict = {}
        self._fast_ok = (
            (self.call is None or self.call.is_plain)
            and self._positions is not None
            and not has_aux
        )

    @property
    def registry(self):
        return self._registry if self._registry is not None else default_registry()

    def adjoint(self, *args, **kwargs) -> Adjoint:
        """The generated adjoint for arguments like these (built now if needed)."""
        args, kwargs = self._target_arguments(args, kwargs)
        key = kinds_key(args, kwargs) if (args or kwargs) else None
        return get_adjoint(self.target, self.wrt, self.registry, key)

    def _target_arguments(self, args, kwargs):
        """The arguments of the target function (``self`` or a partial's arguments first)."""
        return (args, kwargs) if self.call is None else self.call.arguments(args, kwargs)

    @property
    def source(self) -> str:
        """The Python source of the generated forward and backward sweeps (general form,
        not specialized on argument kinds; ``source_for(*args)`` shows a specialization)."""
        return self.adjoint().source

    def source_for(self, *args, **kwargs) -> str:
        """The generated source specialized for arguments like these."""
        return self.adjoint(*args, **kwargs).source

    def _values(self, args, kwargs):
        """The values of the differentiated arguments (fast when they are positional)."""
        pos = self._positions
        if not kwargs and pos is not None and max(pos, default=-1) < len(args) <= self._arity:
            return [args[p] for p in pos]
        return _bound_values(self.fn, args, kwargs, self.wrt)

    def _adjoint_for(self, args, kwargs) -> Adjoint:
        registry = self.registry
        key = (kinds_key(args, kwargs), registry.version, registry_token(registry))
        adj = self._adjoints.get(key)
        if adj is None or not adj.guard():
            adj = self._adjoints[key] = get_adjoint(self.target, self.wrt, registry, key[0])
        return adj

    def gradient_function(self, kinds_key):
        """The generated gradient (one Python function in the supported subset) for
        arguments of these kinds: what an enclosing grad, jacobian or vjp transforms."""
        if self.has_aux or not isinstance(self, GradFunction):
            raise ArgumentError(
                f"cannot differentiate {type(self).__name__}(has_aux={self.has_aux}) again: "
                "only plain grad(f) can be nested.\nFix: nest grad(f) without has_aux."
            )
        if self.call is not None and not self.call.is_plain:
            raise ArgumentError(
                f"cannot differentiate grad of '{_name(self.fn)}' again: it is a "
                f"{type(self.fn).__name__} with bound arguments.\n"
                "Fix: differentiate a function that calls it through its class, e.g. "
                "`hessian(lambda x: Model.loss(model, x))` for `model.loss`."
            )
        return get_adjoint(self.target, self.wrt, self.registry, kinds_key).gradient

    def _fast(self, args):
        """``(value, gradient)`` of a call with plain positional arguments whose
        differentiated ones are float scalars or float arrays, or None (then the general
        path, ``_run``, handles the call).

        The fixed cost of ``grad(f)(x)`` is here, so it is kept to one pass over the
        arguments (a key of their kinds), one dict lookup, the adjoint's guard (the
        correctness check that nothing it baked in has changed) and the registry version;
        errors are explained exactly as the general path explains them.
        """
        key = fast_kinds(args)
        if key is None or len(args) > self._arity:
            return None
        registry = self._registry
        if registry is None:
            registry = default_registry()
        entry = self._fast_entries.get(key)
        if (
            entry is None
            or entry[1] is not registry
            or entry[2] != registry.version
            or not entry[0].guard()
        ):
            if not all(key[p] in _FLOAT_KEYS for p in self._positions):
                return None  # an int to differentiate: the general path says why
            entry = (self._adjoint_for(args, {}), registry, registry.version)
            self._fast_entries[key] = entry
        adj = entry[0]
        if adj.calls_user_code:
            return None
        try:
            value, pullback = adj.forward(*args)
        except Exception as exc:
            forward_failed(adj, exc)
            raise
        seed = 1.0 if type(value) is float else _scalar_seed(self.fn, value)
        try:
            cotangents = pullback(seed)
        except Exception as exc:
            pullback_failed(exc)
            raise
        if self.single:
            return value, materialize(cotangents[0], args[self._positions[0]])
        return value, tuple(map(materialize, cotangents, [args[p] for p in self._positions]))

    def _run(self, args, kwargs, guarded=False):
        if not guarded:
            # NumPy arguments run as they are (no extra call); others under the guard
            # that keeps a Dask graph lazy (backends.compute_guard).
            for a in args:
                t = type(a)
                if t is not np.ndarray and t is not float:
                    with backends.compute_guard(args, kwargs):
                        return self._run(args, kwargs, True)
            if kwargs:
                with backends.compute_guard(args, kwargs):
                    return self._run(args, kwargs, True)
        values = self._values(args, kwargs)
        for name, value in zip(self.wrt, values, strict=True):
            _check_differentiable(self.fn, name, value)
        args, kwargs = self._target_arguments(args, kwargs)
        adj = self._adjoint_for(args, kwargs)
        if adj.calls_user_code:
            with deeper_recursion(self.fn):
                return self._finish(adj, args, kwargs, values)
        return self._finish(adj, args, kwargs, values)

    def _finish(self, adj, args, kwargs, values):
        out, pullback = run_forward(adj, args, kwargs)
        if self.has_aux:
            if not isinstance(out, (tuple, list)) or len(out) != 2:
                raise ArgumentError(
                    f"has_aux=True needs '{_name(self.fn)}' to return (value, aux); it returned "
                    f"a {type(out).__name__}."
                )
            value, aux = out
            seed = (_scalar_seed(self.fn, value), ZERO)
        else:
            value, aux = out, None
            seed = 1.0 if type(value) is float else _scalar_seed(self.fn, value)
        cotangents = run_pullback(pullback, seed)
        if self.single:
            return value, aux, materialize(cotangents[0], values[0])
        return value, aux, tuple(map(materialize, cotangents, values))

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self.__call__, obj)


def write_into(out, result, what: str):
    """Copy ``result`` into the preallocated ``out`` (same structure, shapes and dtypes)."""
    if isinstance(result, tuple):
        if not isinstance(out, (tuple, list)) or len(out) != len(result):
            raise ShapeMismatchError(
                f"out= must be a tuple of {len(result)} arrays for {what}, got "
                f"{type(out).__name__}."
            )
        for k, (o, r) in enumerate(zip(out, result, strict=True)):
            write_into(o, r, f"{what}[{k}]")
        return out
    if not isinstance(out, np.ndarray):
        raise ShapeMismatchError(
            f"out= must be a NumPy array for {what}, got {type(out).__name__}."
        )
    expected = np.shape(result)
    dtype = np.result_type(result)
    if out.shape != expected or out.dtype != dtype:
        raise ShapeMismatchError(
            f"out= has shape {out.shape} and dtype {out.dtype}, but {what} has shape "
            f"{expected} and dtype {dtype}.\nFix: preallocate np.empty({expected}, "
            f"dtype=np.{dtype})."
        )
    if not out.flags.writeable:
        raise ShapeMismatchError(f"out= for {what} is read-only.")
    np.copyto(out, result)
    return out


class GradFunction(_Transformed):
    """``grad(f)``: a function returning the gradient of ``f`` at its arguments."""

    def __call__(self, *args, **kwargs):
        if self._fast_ok and not kwargs:
            done = self._fast(args)
            if done is not None:
                return done[1]
        value, aux, grads = self._run(args, kwargs)
        return (grads, aux) if self.has_aux else grads

    def into(self, out, *args, **kwargs):
        """Write the gradient into the preallocated ``out`` (an array, or a tuple of
        arrays for a tuple ``wrt``) and return ``out``; for tight optimization loops."""
        value, aux, grads = self._run(args, kwargs)
        write_into(out, grads, "the gradient")
        return (out, aux) if self.has_aux else out


class ValueAndGradFunction(_Transformed):
    """``value_and_grad(f)``: returns ``(value, gradient)`` from one forward and one reverse."""

    def __call__(self, *args, **kwargs):
        if self._fast_ok and not kwargs:
            done = self._fast(args)
            if done is not None:
                return done
        value, aux, grads = self._run(args, kwargs)
        return ((value, aux), grads) if self.has_aux else (value, grads)

    def into(self, out, *args, **kwargs):
        """Write the gradient into ``out`` and return ``(value, out)``."""
        value, aux, grads = self._run(args, kwargs)
        write_into(out, grads, "the gradient")
        return ((value, aux), out) if self.has_aux else (value, out)


def grad(fn=None, wrt=0, *, has_aux=False, registry=None):
    """The gradient of a scalar function, as a function of the same arguments.

    Use as ``@grad``, ``@grad(wrt=(0, 2))`` or ``grad(f, wrt="w")``. ``wrt`` takes an
    argument index, a parameter name, or a tuple of them (then a tuple of gradients is
    returned). Each gradient has the structure, shape and dtype of its argument.
    """
    if fn is None:
        return lambda f: GradFunction(f, wrt, has_aux, registry)
    return GradFunction(fn, wrt, has_aux, registry)


def value_and_grad(fn=None, wrt=0, *, has_aux=False, registry=None):
    """Like :func:`grad`, but returns ``(value, gradient)``."""
    if fn is None:
        return lambda f: ValueAndGradFunction(f, wrt, has_aux, registry)
    return ValueAndGradFunction(fn, wrt, has_aux, registry)


class VJPPullback:
    """The pullback returned by :func:`vjp`: ``pullback(dy)`` -> cotangents of ``wrt``."""

    def __init__(self, fn, y, pullback, values, wrt, single):
        self.fn = fn
        self.y = y
        self._pullback = pullback
        self._values = values
        self.wrt = wrt
        self.single = single

    deep = False  # the sweeps call user functions: recursion needs a higher limit
    concrete = None  # Dask values the forward sweep computed (branch conditions)

    def __call__(self, dy):
        _check_cotangent(self.y, dy)
        with backends.compute_guard(self._values, {"dy": dy}, self.concrete):
            if self.deep:
                with deeper_recursion(self.fn):
                    cotangents = run_pullback(self._pullback, dy)
            else:
                cotangents = run_pullback(self._pullback, dy)
            grads = tuple(materialize(c, v) for c, v in zip(cotangents, self._values, strict=True))
        return grads[0] if self.single else grads

    def stacked(self, dys):
        """The cotangents of a stack of output cotangents ``dys`` (shape ``(k,) +
        y.shape``): one array of shape ``(k,) + x.shape`` per argument in ``wrt``. One
        batched reverse sweep where every step can follow the batch axis, one pullback per
        row elsewhere; the result is the same (see :mod:`pullback.batched`)."""
        from .batched import stacked_pullback

        return stacked_pullback(self, dys)


def _check_cotangent(y, dy, path="dy"):
    if isinstance(y, (tuple, list)):
        if not isinstance(dy, (tuple, list)) or len(dy) != len(y):
            raise ShapeMismatchError(
                f"{path} must be a tuple of {len(y)} cotangents (one per output), "
                f"got {type(dy).__name__}."
            )
        for k, (a, b) in enumerate(zip(y, dy, strict=True)):
            _check_cotangent(a, b, f"{path}[{k}]")
        return
    if isinstance(y, dict):
        if not isinstance(dy, dict) or set(dy) - set(y):
            raise ShapeMismatchError(f"{path} must be a dict with the keys of the output.")
        for k in dy:
            _check_cotangent(y[k], dy[k], f"{path}[{k!r}]")
        return
    if dy is ZERO or dy is NO_TANGENT:
        return
    dshape, yshape = backends.shape_of(dy), backends.shape_of(y)
    if dshape != yshape:
        raise ShapeMismatchError(
            f"{path} has shape {dshape} but the output has shape {yshape}; a "
            "cotangent must have its output's shape."
        )


def vjp(fn, *args, wrt=None, registry=None, **kwargs):
    """Evaluate ``fn(*args, **kwargs)`` and return ``(y, pullback)``.

    ``pullback(dy)`` (``dy`` shaped like ``y``: a tuple for tuple outputs) returns the
    cotangent of each argument in ``wrt`` — a tuple, or a single value when ``wrt`` is a
    single index or name. By default ``wrt`` is every positional argument given.
    """
    if wrt is None:
        wrt = tuple(range(len(args)))
    names, single = resolve_wrt(fn, wrt)
    return vjp_resolved(fn, args, kwargs, names, single, registry)


def vjp_resolved(fn, args, kwargs, names, single, registry=None, values=None):
    """:func:`vjp` with ``wrt`` already resolved to parameter ``names`` (and, if given,
    their ``values`` already bound): what jacobian and hessian call once per call."""
    reg = registry if registry is not None else default_registry()
    if values is None:
        values = _bound_values(fn, args, kwargs, names)
    for name, value in zip(names, values, strict=True):
        _check_differentiable(fn, name, value)
    call = as_bound_call(fn) if not isinstance(fn, (_Transformed, VJPRef)) else None
    target = fn
    if call is not None:
        target = call.target
        args, kwargs = call.arguments(args, kwargs)
    elif isinstance(fn, _Transformed) and fn.call is not None and not fn.call.is_plain:
        # grad of a method, partial or callable object, differentiated again: the gradient
        # of its Python function, with the bound arguments (self, ...) first.
        target = type(fn)(fn.target, fn.wrt, fn.has_aux, fn._registry)
        args, kwargs = fn.call.arguments(args, kwargs)
    adj = get_adjoint(target, names, reg, kinds_key(args, kwargs))
    with backends.compute_guard(args, kwargs) as concrete:
        if adj.calls_user_code:
            with deeper_recursion(fn):
                y, pullback = run_forward(adj, args, kwargs)
        else:
            y, pullback = run_forward(adj, args, kwargs)
    back = VJPPullback(fn, y, pullback, values, names, single)
    back.deep = adj.calls_user_code
    back.concrete = concrete
    return y, back


def _version_info():  # pragma: no cover - for bug reports
    return f"pullback on Python {sys.version.split()[0]}, NumPy {np.__version__}"
