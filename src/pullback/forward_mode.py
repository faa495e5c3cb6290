"""Forward mode: ``jvp(f, primals, tangents)`` from a forward source transformation.

>>> import numpy as np
>>> from pullback import jvp
>>> def f(x):
...     return np.sin(x) * x
>>> y, dy = jvp(f, (np.zeros(2),), (np.ones(2),))
>>> dy
array([0., 0.])
"""

from __future__ import annotations

import numpy as np

from . import backends
from .adjoints import TransformedFunction, VJPRef, higher_order_error
from .api_errors import carries_numbers, check_jvp_keywords, refuse_output
from .arguments import (
    _check_differentiable,
    _name,
    _positional_names,
    fast_kinds,
    kinds_key,
    tangent_parameters,
)
from .batched import Quiet, agrees, exact_by_structure, materialize_rows
from .cache import function_entries, registry_token
from .callables import as_bound_call
from .diagonal_stack import DiagonalStack, all_finite, deferred_call
from .errors import ArgumentError, ShapeMismatchError, UnsupportedSyntaxError, user_facing
from .escapes import escape_scope
from .object_tangents import ObjectTangent
from .records_dataclasses import as_cotangent, fields_of, is_dataclass_value, rebuilt
from .registry import default_registry
from .runtime import same_sequence
from .source import transform_target
from .tangents import NO_TANGENT, ZERO, is_differentiable_value, is_zero
from .transform.forward import build_jvp


class LazyJVP:
    """The forward-mode function of a user function, built on first use and specialized on
    which arguments carry a tangent and on the argument kinds."""

    __slots__ = ("fn", "registry", "_cache")

    def __init__(self, fn, registry):
        self.fn = fn
        self.registry = registry
        self._cache = {}

    def __call__(self, args, tangents, kwargs=None, keyword_tangents=None):
        kwargs = kwargs or {}
        tangents = tuple(tangents) + (ZERO,) * (len(args) - len(tangents))
        call = self.prepare(args, tangents, kwargs, keyword_tangents)
        return call.run(args, tangents, kwargs)

    def batched(self, primals, stacks, moving, kwargs):
        """:func:`batched_jvp` of this function (what ``jacobian`` calls through the
        LazyJVP it keeps, without importing this module at each call)."""
        return batched_jvp(self, primals, stacks, moving, kwargs)

    def prepare(self, args, tangents, kwargs, keyword_tangents=None) -> PreparedJVP:
        """The generated function for these arguments (``kwargs`` a dict, ``tangents`` one
        per positional argument), kept so that a second sweep of the same call with other
        tangents in the same places (the check of :func:`stacked_jvp`) skips the look-up."""
        active = []  # a loop, not a comprehension: no frame of its own before Python 3.12
        for k, d in enumerate(tangents):
            if d is not ZERO and d is not NO_TANGENT:
                active.append(k)
        active = tuple(active)
        moving = (
            {k: d for k, d in keyword_tangents.items() if not is_zero(d)}
            if keyword_tangents
            else {}
        )
        # Positional floats, ints and real arrays: the cheap key of their kinds (what
        # grad's fast path keys on) stands for kinds_key's, which a miss computes.
        fast = None if kwargs or moving else fast_kinds(args)
        if fast is not None:
            key = (active, fast, self.registry.version)
            entry = self._cache.get(key)
            if entry is None or not entry[0].guard():
                kinds = kinds_key(args, kwargs)
                generated = jvp_function(self.fn, active, self.registry, kinds, ())
                pair = (generated, self._by_position(active, moving))
                # (no moving keywords on this path: the prepared call is the same each time)
                entry = self._cache[key] = (*pair, PreparedJVP(self.fn, pair, active, moving))
            return entry[2]
        key = (active, tuple(sorted(moving)), kinds_key(args, kwargs), self.registry.version)
        entry = self._cache.get(key)
        if entry is None or not entry[0].guard():
            generated = jvp_function(self.fn, active, self.registry, key[2], key[1])
            entry = self._cache[key] = (generated, self._by_position(active, moving))
        return PreparedJVP(self.fn, entry, active, moving)

    def _by_position(self, active, moving) -> bool:
        """Whether the tangents of ``active`` positions are, in order, what
        :func:`tangent_parameters` gives (each lands on a named positional parameter, no
        keyword tangent): then a call takes them without reading the signature again. It is
        kept with the generated function, whose guard checks the function's code."""
        return not moving and max(active, default=-1) < len(_positional_names(self.fn))


class PreparedJVP:
    """A generated forward-mode function found for one call (:meth:`LazyJVP.prepare`):
    ``run`` evaluates it for tangents in the same places."""

    __slots__ = ("fn", "entry", "active", "moving")

    def __init__(self, fn, entry, active, moving):
        self.fn = fn
        self.entry = entry
        self.active = active
        self.moving = moving

    def run(self, args, tangents, kwargs):
        generated, by_position = self.entry
        active, moving = self.active, self.moving
        if by_position:
            values = [tangents[active[0]]] if len(active) == 1 else [tangents[k] for k in active]
        else:
            _, values = tangent_parameters(self.fn, tangents, moving, kwargs)
        with escape_scope():  # one evaluation: values kept outside (escapes.py)
            return generated(args, values, kwargs)


def jvp_function(fn, active_positions, registry, kinds, keywords=()):
    """The generated forward-mode function of ``fn`` with tangents for the positional
    arguments in ``active_positions`` and the keyword arguments in ``keywords``."""
    if isinstance(fn, VJPRef):
        # a user function's vjp function (forward over a gradient that calls a helper):
        # the generated function for these kinds, its parameters in the same places
        fn = fn.function_for(kinds)
    # a cache wrapper (lru_cache) or a wrapper that only forwards: the function it calls,
    # as the reverse sweep's adjoints take it (adjoints.py), not the C object with no
    # signature
    fn = transform_target(fn)
    n = max(active_positions, default=-1) + 1
    marks = [1.0 if k in active_positions else ZERO for k in range(n)]
    wrt, _ = tangent_parameters(fn, marks, dict.fromkeys(keywords, 1.0))
    entries = function_entries(fn)
    if entries is None:
        entries = {}
    key = ("jvp", registry_token(registry), wrt, kinds, registry.version)
    generated = entries.get(key)
    if generated is None or not generated.guard():
        generated = entries[key] = build_jvp(
            fn, wrt, registry, lambda f: LazyJVP(f, registry), kinds
        )
    return generated


def _check_tangent(primal, tangent, where):
    if is_zero(tangent):
        return
    if isinstance(primal, (tuple, list)):
        if not isinstance(tangent, (tuple, list)) or len(tangent) != len(primal):
            raise ShapeMismatchError(
                f"{where} must be a {type(primal).__name__} of {len(primal)} tangents."
            )
        for k, (p, t) in enumerate(zip(primal, tangent, strict=True)):
            _check_tangent(p, t, f"{where}[{k}]")
        return
    if np.shape(primal) != np.shape(tangent):
        raise ShapeMismatchError(
            f"{where} has shape {np.shape(tangent)} but its primal has shape "
            f"{np.shape(primal)}; a tangent must have its primal's shape."
        )


@user_facing
def jvp(fn, primals, tangents, *, registry=None, **kwargs):
    """Evaluate ``fn(*primals, **kwargs)`` and its directional derivative along
    ``tangents``: returns ``(y, dy)`` with ``dy = J(primals) @ tangents``.

    ``primals`` and ``tangents`` are tuples of the same structure; a tangent may be
    ``pullback.ZERO`` (or ``None``) for an argument that does not move.
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise ArgumentError("jvp(f, primals, tangents) takes tuples of primals and tangents.")
    if len(primals) != len(tangents):
        raise ShapeMismatchError(
            f"jvp got {len(primals)} primals and {len(tangents)} tangents for "
            f"'{_name(fn)}'; give one tangent per primal."
        )
    if kwargs:
        check_jvp_keywords(fn, primals, kwargs)
    tangents = tuple(ZERO if t is None else as_cotangent(t) for t in tangents)
    for k, (p, t) in enumerate(zip(primals, tangents, strict=True)):
        _check_tangent(as_cotangent(p), t, f"tangents[{k}]")
        if not is_zero(t):
            _check_differentiable(fn, f"argument {k}", p)
    reg = registry if registry is not None else default_registry()
    primals, target = tuple(primals), fn
    call = as_bound_call(fn)
    if isinstance(fn, TransformedFunction):
        # jvp of grad(f) (forward over reverse): of the generated gradient function itself
        target = fn.gradient_function(kinds_key(primals, kwargs))
        try:
            y, dy = LazyJVP(target, reg)(primals, tangents, kwargs)
        except UnsupportedSyntaxError as exc:
            raise higher_order_error(fn, exc, target) from None
        return y, _materialize_tangent(dy, y)
    if call is not None and not call.is_plain:
        # a bound method, partial or callable object: its Python function, with the bound
        # arguments (self, ...) first and carrying no tangent, as grad and vjp call it
        target = call.target
        tangents = (ZERO,) * len(call.args) + tangents
        primals, kwargs = call.arguments(primals, kwargs)
    y, dy = LazyJVP(target, reg)(primals, tangents, kwargs)
    if type(y) is not np.ndarray and not carries_numbers(y):
        refuse_output("jvp", fn, y, _NO_TANGENT_FIX)
    return y, _materialize_tangent(dy, y)


_NO_TANGENT_FIX = (
    "return the value whose directional derivative you want (a number or an array, or a "
    "tuple, list or dict of them); a function run only for what it does has none: call it "
    "directly."
)


def _is_stack(t, primal, k) -> bool:
    shape = (k,) + np.shape(primal)
    return (
        type(t) is DiagonalStack
        and t.shape == shape
        or (type(t) is np.ndarray and t.shape == shape)
    )


@user_facing
def stacked_jvp(fn, primals, tangent_stacks, *, registry=None, **kwargs):
    """Evaluate ``fn(*primals, **kwargs)`` and its directional derivatives along ``k``
    directions at once: ``tangent_stacks[i]`` is a stack of tangents of shape ``(k,) +
    primals[i].shape`` (or ``pullback.ZERO``/``None`` for an argument that does not move).
    Returns ``(y, dys)`` with ``dys`` of shape ``(k,) + y.shape`` (a tuple of such stacks
    for a tuple of outputs): ``dys[r]`` is what :func:`jvp` gives for the ``r``-th tangents.

    One forward sweep carries the whole stack where every step broadcasts over the leading
    axis (checked against one ordinary sweep of a random combination of the directions, see
    :mod:`pullback.batched`); otherwise one sweep per direction. The result is the same.

    >>> import numpy as np
    >>> y, dys = stacked_jvp(lambda x: np.sin(x) * 2.0, (np.zeros(2),), (np.eye(2),))
    >>> dys
    array([[2., 0.],
           [0., 2.]])
    """
    return stacked_jvp_with(None, fn, primals, tangent_stacks, registry, kwargs)


def stacked_jvp_with(forward, fn, primals, tangent_stacks, registry, kwargs):
    """:func:`stacked_jvp` through ``forward``, the :class:`LazyJVP` of ``fn`` a caller
    keeps between calls (its generated function and parameter plan are then found again
    instead of looked up), or None for a new one."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangent_stacks, (tuple, list)):
        raise ArgumentError(
            "stacked_jvp(f, primals, tangent_stacks) takes tuples of primals and stacks."
        )
    if len(primals) != len(tangent_stacks):
        raise ShapeMismatchError(
            f"stacked_jvp got {len(primals)} primals and {len(tangent_stacks)} tangent "
            f"stacks for '{_name(fn)}'; give one stack (or None) per primal."
        )
    stacks = tuple(ZERO if t is None else t for t in tangent_stacks)
    moving = [k for k, t in enumerate(stacks) if not is_zero(t)]
    if not moving:
        raise ArgumentError(
            "stacked_jvp needs at least one tangent stack that is not None, to know how many "
            "directions there are.\nFix: pass a stack of shape (k,) + x.shape for one argument."
        )
    stacks = tuple(s if is_zero(s) or type(s) is DiagonalStack else np.asarray(s) for s in stacks)
    first = stacks[moving[0]]  # an array or a DiagonalStack: its own shape, not np.shape's
    k = first.shape[0] if first.ndim else -1
    for i in moving:
        if not _is_stack(stacks[i], primals[i], k):
            raise ShapeMismatchError(
                f"tangent_stacks[{i}] has shape {np.shape(stacks[i])}; a stack of {max(k, 0)} "
                f"tangents of a primal of shape {np.shape(primals[i])} has shape "
                f"{(max(k, 0),) + np.shape(primals[i])}.\nFix: stack one tangent per row "
                "(np.stack(tangents)), the same number of rows for every argument."
            )
        _check_differentiable(fn, f"argument {i}", primals[i])
    reg = registry if registry is not None else default_registry()
    if forward is None or forward.fn is not fn or forward.registry is not reg:
        forward = LazyJVP(fn, reg)
    plain = all(
        type(primals[i]) is float
        or (type(primals[i]) is np.ndarray and primals[i].dtype.kind == "f")
        for i in moving
    )
    return checked_stacked_jvp(forward, primals, stacks, moving, kwargs, plain)


def checked_stacked_jvp(forward, primals, stacks, moving, kwargs, plain):
    """:func:`stacked_jvp_with` of checked stacks: ``stacks`` one per primal (``ZERO``
    where it does not move, a stack of the same number of directions at the positions
    ``moving``, each a differentiable primal's), ``forward`` the :class:`LazyJVP` of the
    function, ``plain`` whether every moving primal is a float or a NumPy float array."""
    k = stacks[moving[0]].shape[0]
    if plain and k > 1:
        out = batched_jvp(forward, primals, stacks, moving, kwargs)
        if out is not None:
            return out
    return _jvp_rows(forward.fn, primals, stacks, k, forward.registry, kwargs)


def batched_jvp(forward, primals, stacks, moving, kwargs):
    """``(y, dys)`` from one forward sweep carrying every direction, or None where a step
    cannot carry them (or the result fails the check against an ordinary sweep)."""
    primals, kwargs = tuple(primals), kwargs or {}
    swept = None
    for i in moving:
        if type(stacks[i]) is DiagonalStack:
            # a diagonal seed: its finiteness test once, on the result (see
            # pullback.diagonal_stack); a failure or a non-finite result runs the sweep
            # again with the test at each step, which gives what it gave before
            swept = deferred_call(_sweep, forward, primals, stacks, kwargs)
            if swept is not None and type(swept[2]) is DiagonalStack:
                if not all_finite(swept[2].diagonal):
                    swept = None
            break
    if swept is None:
        swept = _sweep(forward, primals, stacks, kwargs)
        if swept is None:
            return None
    call, y, dys = swept
    if type(dys) is DiagonalStack and type(y) is np.ndarray and y.dtype.kind == "f":
        # an elementwise map's columns (jacobian's identity stack): exact by structure
        if dys.diagonal.shape == y.shape and (
            type(stacks[moving[0]]) is DiagonalStack  # (exact_by_structure's case)
            if len(moving) == 1
            else exact_by_structure([stacks[i] for i in moving], (dys,))
        ):
            return y, materialize_rows(dys, y)
    if not (type(y) is float or (type(y) is np.ndarray and y.dtype.kind == "f")):
        return None
    k = stacks[moving[0]].shape[0]
    if is_zero(dys):
        return y, np.zeros((k,) + np.shape(y), dtype=np.result_type(y))
    if not _is_stack(dys, y, k):
        return None

    def one_sweep(combined):
        tangents = list(stacks)
        for i, c in zip(moving, combined, strict=True):
            p = primals[i]
            tangents[i] = c if (p.ndim if type(p) is np.ndarray else np.ndim(p)) else c.item()
        _, dy = call.run(primals, tuple(tangents), kwargs)
        return (_materialize_tangent(dy, y),)

    seeds = [stacks[i] for i in moving]
    if not (exact_by_structure(seeds, (dys,)) or agrees(one_sweep, seeds, [dys])):
        return None
    return y, materialize_rows(dys, y)


def _sweep(forward, primals, stacks, kwargs):
    """``(call, y, dys)`` of one forward sweep of the stacks (``call`` the generated
    function it found, which serves the check's sweep as well), or None where it fails."""
    try:
        with Quiet():
            call = forward.prepare(primals, stacks, kwargs)
            y, dys = call.run(primals, stacks, kwargs)
    except Exception:
        return None
    return call, y, dys


def _jvp_rows(fn, primals, stacks, k, registry, kwargs):
    """``(y, dys)`` from one :func:`jvp` per direction (the exact fallback)."""
    y = None
    rows = []
    for r in range(max(k, 0)):
        tangents = tuple(ZERO if is_zero(s) else s[r] for s in stacks)
        y, dy = jvp(fn, tuple(primals), tangents, registry=registry, **kwargs)
        rows.append(dy)
    if y is None:
        y = fn(*primals, **kwargs)

    def stack(j):
        leaf = y[j] if j is not None else y
        parts = [backends.as_array(r[j] if j is not None else r) for r in rows]
        if parts:
            return np.stack(parts)
        return np.zeros((0,) + np.shape(leaf), dtype=np.result_type(backends.as_array(leaf)))

    if isinstance(y, (tuple, list)):
        return y, type(y)(stack(j) for j in range(len(y)))
    return y, stack(None)


def _materialize_tangent(dy, y):
    if type(dy) is np.ndarray and type(y) is np.ndarray and dy.shape == y.shape:
        return dy if dy.flags.writeable else dy.copy()  # the common case, as below
    if is_dataclass_value(y):  # the same dataclass; None in a field that holds no float
        values = fields_of(y)
        dy = [ZERO] * len(values) if is_zero(dy) else dy
        return rebuilt(y, [_field_tangent(d, v) for d, v in zip(dy, values, strict=True)])
    if isinstance(y, (tuple, list)):
        if is_zero(dy):
            dy = [ZERO] * len(y)
        return same_sequence(y, (_materialize_tangent(d, v) for d, v in zip(dy, y, strict=True)))
    if isinstance(y, dict):
        dy = dy if isinstance(dy, dict) else {}
        return {k: _materialize_tangent(dy.get(k, ZERO), v) for k, v in y.items()}
    if is_zero(dy) or type(dy) is ObjectTangent:
        if not carries_numbers(y):  # None, a string, an object: an entry with no tangent
            return None
        return np.zeros_like(y) if isinstance(y, np.ndarray) else 0.0 * y
    if isinstance(y, np.ndarray) and np.shape(dy) != y.shape:
        dy = np.broadcast_to(dy, y.shape).copy()
    if isinstance(dy, np.ndarray) and not dy.flags.writeable:
        dy = dy.copy()  # a broadcast view becomes an array of its own
    return dy


def _field_tangent(d, v):
    if is_zero(d) and not isinstance(v, (tuple, list, dict)) and not is_dataclass_value(v):
        if not is_differentiable_value(v):
            return None
    return _materialize_tangent(d, v)


__all__ = ["jvp", "stacked_jvp", "LazyJVP"]
