"""The functions ``grad`` and ``value_and_grad`` return: argument selection, a fast path
for plain positional calls, running the sweeps, and ``into`` for preallocated outputs.

>>> import numpy as np
>>> from pullback import grad
>>> def loss(w):
...     return np.sum(w ** 3)
>>> grad(loss).into(np.empty(2), np.array([1.0, 2.0]))
array([ 3., 12.])
"""

from __future__ import annotations

import functools

import numpy as np

from . import backends
from .adjoints import TransformedFunction, get_adjoint
from .api_errors import output_place
from .arguments import (
    _bound_values,
    _check_differentiable,
    _name,
    _param_names,
    _positional_indices,
    fast_kinds,
    kinds_key,
    resolve_wrt,
)
from .cache import registry_token
from .callables import as_bound_call
from .errors import (
    ArgumentError,
    NonScalarOutputError,
    PullbackError,
    ShapeMismatchError,
    for_user,
    user_facing,
)
from .refused import refuse_refused
from .registry import default_registry
from .running import (
    _no_entry,
    deeper_recursion,
    forward_failed,
    hot_entry,
    pullback_failed,
    run_forward,
    run_pullback,
)
from .runtime import scalar_seed
from .tangents import ZERO, materialize
from .transform.build import Adjoint

# -- scalar outputs -----------------------------------------------------------------------


def _scalar_seed(fn, y):
    try:
        return scalar_seed(y, _name(fn))
    except NonScalarOutputError as exc:
        raise _at_output(exc, fn) from None


def _at_output(exc, fn):
    """``exc`` (an output that is no scalar) placed at ``fn``'s last ``return``, as the
    first call (the general path) and the hot entry's calls both give it."""
    place = output_place(fn)
    return NonScalarOutputError(f"{place}: {exc}") if place else exc


def _seed_for(fn):
    """The seed function of a hot entry: 1.0 for a float output, else scalar_seed's."""

    def seed(y):
        t = type(y)
        if t is float:
            return 1.0
        if t is _float64:  # an array's sum: one immutable 1.0 serves every call
            return _ONE64
        return _scalar_seed(fn, y)

    return seed


_float64 = np.float64
_ONE64 = np.float64(1.0)


# -- the public functions -----------------------------------------------------------------


# fast_kinds entries of differentiable values: floats and float arrays of any rank.
_FLOAT_KEYS = frozenset([float, np.float64] + [(ndim, "f") for ndim in range(65)])


class _Transformed(TransformedFunction):
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
        # The entry of the last fast call, as one generated function (running.hot_entry,
        # made at the second call of an entry): what a call tries first; it gives None
        # whenever anything it checks differs.
        self._hot = _no_entry
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
        call = self._current_call()
        return (args, kwargs) if call is None else call.arguments(args, kwargs)

    def _current_call(self):
        """The call as Python makes it now. A callable object's class may have been given a
        new ``__call__`` and a partial new keywords since ``grad`` was made: what is called
        is looked up again (a plain function needs no lookup: the adjoint's guard watches
        its code), and adjoints built for another target are dropped."""
        call = self.call
        if call is None or call.is_plain:
            return call
        fresh = as_bound_call(self.fn)
        target = self.fn if fresh is None else fresh.target
        if target is not self.target:
            self.target = target
            self._adjoints.clear()
        self.call = fresh
        return fresh

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
            name = _name(self.fn)
            if self.has_aux:
                fix = f"nest grad of a function without the aux output (grad({name}) of one)"
            else:  # value_and_grad(g)(x) inside a differentiated function
                fix = f"call {name} for the value and grad({name}) for the gradient: "
                fix += f"`val, d = {name}(x), grad({name})(x)` (grad may be nested)"
            raise ArgumentError(
                f"cannot differentiate {type(self).__name__}(has_aux={self.has_aux}) of "
                f"'{name}' again: only plain grad(f) can be nested.\nFix: {fix}."
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
            if not all(p < len(key) and key[p] in _FLOAT_KEYS for p in self._positions):
                return None  # an int to differentiate: the general path says why
            entry = [self._adjoint_for(args, {}), registry, registry.version, None]
            self._fast_entries[key] = entry
        adj = entry[0]
        hot = entry[3]
        if hot is None:  # the first call: a function called once needs no entry (cold start)
            entry[3] = False
            if adj.calls_user_code:
                return None  # (the general path's scope: recursion, escaped values)
            return self._fast_sweeps(adj, args)
        if hot is False:
            fixed = self._registry is not None
            seed = _seed_for(self.fn)
            hot = hot_entry(adj, key, self._positions, self.single, registry, fixed, seed)
            if adj.calls_user_code:
                hot = _in_evaluation_scope(hot, self.fn)
            entry[3] = hot
        self._hot = hot
        # The entry runs this call already: its fused sweeps release values after their
        # last use, where the saved tuple of the two sweeps keeps them all to the end.
        done = hot(args)
        return self._fast_sweeps(adj, args) if done is None else done

    def _fast_sweeps(self, adj, args):
        """The sweeps of a fast call: ``(value, gradient)``."""
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
        try:  # (no cost unless raised; see errors.for_user)
            if not kwargs:
                done = self._hot(args)
                if done is None and self._fast_ok:
                    done = self._fast(args)
                if done is not None:
                    return done[1]
            value, aux, grads = self._run(args, kwargs)
        except PullbackError as exc:
            for_user(exc)
            raise
        return (grads, aux) if self.has_aux else grads

    @user_facing
    def into(self, out, *args, **kwargs):
        """Write the gradient into the preallocated ``out`` (an array, or a tuple of
        arrays for a tuple ``wrt``) and return ``out``; for tight optimization loops."""
        value, aux, grads = self._run(args, kwargs)
        write_into(out, grads, "the gradient")
        return (out, aux) if self.has_aux else out


def _in_evaluation_scope(hot, fn):
    """``hot`` (a hot entry of a function that calls user code) run as the general path
    runs such a function (``_Transformed._run``): inside ``deeper_recursion`` (generated
    code takes more frames per level of recursion; values kept outside the differentiated
    variables are refused where read back, for one evaluation: escapes.py), its value
    checked for a refused cotangent (a gradient differentiated again, whose value needed
    one: ``run_forward``'s check). One more call and a context's enter and exit: the
    general path's checks of the arguments, its lookups and its sweeps' frames cost many
    times that on every call of a function calling a helper."""

    def hot_entry_in_scope(args):
        with deeper_recursion(fn):
            done = hot(args)
        if done is not None:
            refuse_refused(done[0])
        return done

    return hot_entry_in_scope


class ValueAndGradFunction(_Transformed):
    """``value_and_grad(f)``: returns ``(value, gradient)`` from one forward and one reverse."""

    def __call__(self, *args, **kwargs):
        try:
            if not kwargs:
                done = self._hot(args)
                if done is None and self._fast_ok:
                    done = self._fast(args)
                if done is not None:
                    return done
            value, aux, grads = self._run(args, kwargs)
        except PullbackError as exc:
            for_user(exc)
            raise
        return ((value, aux), grads) if self.has_aux else (value, grads)

    @user_facing
    def into(self, out, *args, **kwargs):
        """Write the gradient into ``out`` and return ``(value, out)``."""
        value, aux, grads = self._run(args, kwargs)
        write_into(out, grads, "the gradient")
        return ((value, aux), out) if self.has_aux else (value, out)
