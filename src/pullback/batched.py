"""Pullbacks of many cotangents at once: a stack of directions pushed through one reverse
sweep with a leading batch axis, so that NumPy broadcasting does the work of ``vmap``.

A generated reverse sweep is written for one cotangent; most of its steps (products,
sums, elementwise derivatives) broadcast over an extra leading axis as they are, and the
two that would not (``unbroadcast`` and ``fold_reads``, which sum or scatter to a primal's
shape) keep the batch axis while :func:`stacked_pullback` runs. A step that cannot follow
the batch axis either raises or gives a wrong result; the second is caught by checking the
batched result against one ordinary pullback of a random combination of the directions
(a pullback is linear, so a result that is not the true one fails this check for almost
every combination). Either way the rows are then computed one by one: the result is exact,
never an error.

>>> import numpy as np
>>> from pullback import vjp
>>> y, back = vjp(lambda x: np.sin(x) * 2.0, np.zeros(3), wrt=0)
>>> stacked_pullback(back, np.eye(3))
array([[2., 0., 0.],
       [0., 2., 0.],
       [0., 0., 2.]])
"""

from __future__ import annotations

import functools
import math
import sys
import warnings

import numpy as np

from . import tangents
from .band_stack import BandStack, combine_band
from .diagonal_stack import DiagonalStack, all_finite, combine, deferral, max_abs
from .running import deeper_recursion, run_pullback
from .tangents import ZERO, materialize


def _stack_rows(back, dys, place=None):
    """One ordinary pullback per direction, stacked (the exact fallback)."""
    rows = [back(dy if place is None else place(dy)) for dy in dys]
    rows = [(r,) if back.single else r for r in rows]
    out = []
    for i, value in enumerate(back._values):
        if rows:
            out.append(np.stack([np.asarray(r[i]) for r in rows]))
        else:
            out.append(np.zeros((0,) + np.shape(value), dtype=np.result_type(value, 0.0)))
    return out[0] if back.single else tuple(out)


# Through Python 3.13 the warning filters are one module-level list that
# ``warnings.catch_warnings`` swaps and ``_filters_mutated`` announces: :class:`Quiet` does
# the same in a third of its time. Later versions keep them per context: catch_warnings.
_SWAP_FILTERS = sys.version_info < (3, 14) and hasattr(warnings, "_filters_mutated")
_IGNORE_ALL = ("ignore", None, Warning, None, 0)  # what simplefilter("ignore") inserts


# ``np.errstate(all="ignore")`` is a Python object whose ``__enter__`` builds NumPy's error
# state from keywords: the state it builds (``_make_extobj(all="ignore")``, from the current
# one) set into NumPy's context variable and reset on exit does the same in a third of the
# time. A NumPy without these names gets np.errstate itself.
try:
    from numpy._core._ufunc_config import _extobj_contextvar, _make_extobj
except ImportError:  # pragma: no cover - NumPy < 2 or a later layout
    _extobj_contextvar = _make_extobj = None


class Quiet:
    """``warnings.catch_warnings()`` with ``simplefilter("ignore")``, and
    ``np.errstate(all="ignore")``: the state a batched attempt runs in (its warnings, if it
    fails, are not the user's; the check and the rows run in the user's state)."""

    __slots__ = ("_filters", "_errstate", "_catch")

    def __enter__(self):
        if _make_extobj is not None:
            self._errstate = _extobj_contextvar.set(_make_extobj(all="ignore"))
        else:  # pragma: no cover - see _make_extobj above
            self._errstate = np.errstate(all="ignore")
            self._errstate.__enter__()
        if _SWAP_FILTERS:
            self._filters = warnings.filters
            warnings.filters = [_IGNORE_ALL]
            warnings._filters_mutated()
        else:
            self._catch = warnings.catch_warnings()
            self._catch.__enter__()
            warnings.simplefilter("ignore")
        return self

    def __exit__(self, *exc):
        if _SWAP_FILTERS:
            warnings.filters = self._filters
            warnings._filters_mutated()
        else:
            self._catch.__exit__(*exc)
        if _make_extobj is not None:
            _extobj_contextvar.reset(self._errstate)
        else:  # pragma: no cover - see _make_extobj above
            self._errstate.__exit__(*exc)
        return False


def _batched_cotangents(back, dys, batch, defer=False):
    """The raw cotangents of ``dys`` from one reverse sweep, or None when it cannot run;
    ``defer``: with the finiteness test of diagonal stacks deferred (see
    :func:`_deferred_cotangents`)."""
    outer = tangents.batch_axes.axes
    tangents.batch_axes.axes = batch
    deferred = deferral.on
    deferral.on = defer
    try:
        with Quiet():
            # the pullback itself: a failure here only means the rows run one by one, so
            # what run_pullback would say about it is not needed
            if back.deep:
                with deeper_recursion(back.fn):
                    cots = back._pullback(dys)
            else:
                cots = back._pullback(dys)
    except Exception:
        return None
    finally:
        tangents.batch_axes.axes = outer
        deferral.on = deferred
    out = []
    for c, value in zip(cots, back._values, strict=True):
        if type(c) is DiagonalStack and type(value) is np.ndarray:
            if c.diagonal.shape == value.shape and batch == (value.size,):
                out.append(c)  # an elementwise map's rows: dense only at the end
                continue
        want = batch + (value.shape if type(value) is np.ndarray else np.shape(value))
        if c is ZERO:
            dtype = np.result_type(value) if np.result_type(value).kind in "fc" else float
            c = np.zeros(want, dtype=dtype)
        c = tangents.densify(c)
        if (type(c) is DiagonalStack or type(c) is BandStack) and c.shape == want:
            out.append(c)  # still the identity's structure: dense only at the end
            continue
        if type(c) is not np.ndarray or c.shape != want:
            return None
        out.append(c)
    return out


@functools.lru_cache(maxsize=64)
def _weights(k: int):
    """Fixed random weights for ``k`` directions (the draws of ``default_rng(0)``), made
    once per ``k``: a generator costs more to make than a small sweep."""
    w = np.random.default_rng(0).standard_normal(k)
    w.flags.writeable = False
    return w


def _combine(weights, stack):
    """``sum_r weights[r] * stack[r]``: one cotangent from a stack."""
    if type(stack) is DiagonalStack:
        return combine(weights, stack)
    if type(stack) is BandStack:
        return combine_band(weights, stack)
    k = stack.shape[0]
    # a matrix-vector product on the flattened rows: tensordot's reshapes cost more
    return (weights @ stack.reshape(k, -1)).reshape(stack.shape[1:])


def agrees(reference, ins, outs, rng=None) -> bool:
    """Whether the stacks ``outs`` computed from the stacks ``ins`` in one batched sweep
    give, for a random combination of the directions, what ``reference`` (one ordinary
    sweep, from the list of combined inputs to the list of outputs) gives. A sweep is
    linear in its directions, so a batched result that is not the true one fails this
    check for almost every combination."""
    k = ins[0].shape[0]
    weights = _weights(k) if rng is None else rng.standard_normal(k)
    want = reference([_combine(weights, s).astype(s.dtype, copy=False) for s in ins])
    for c, w in zip(outs, want, strict=True):
        if type(c) is DiagonalStack and type(w) is np.ndarray and w.shape == c.diagonal.shape:
            # the structured result's combination and its largest entry, from its vector
            if not _close(combine(weights, c), w, c.diagonal, c.dtype, k):
                return False
            continue
        got = _combine(weights, c)
        w = np.asarray(w)
        if got.shape != w.shape:
            return False
        if type(c) is BandStack:
            top = c.max_abs
        else:
            top = c.diagonal if type(c) is DiagonalStack else c
        if not _close(got, w, top, c.dtype, k):
            return False
    return True


def _close(got, want, top, dtype, k) -> bool:
    """Whether ``got`` (the combination of a batched result of ``dtype``) is ``want`` (the
    ordinary sweep's) to within rounding. The tolerance scales with max(max|want|, the stack's
    largest entry ``top``: an array, or a function that gives it): the error is measured
    first, and max|want| only where the stack's entry alone does not cover it."""
    if not want.size:
        return True
    error = max_abs(got - want)
    top = top() if callable(top) else max_abs(top)
    tol = _tolerance(dtype, want.dtype, k)
    if error <= tol * top + 1e-300:
        return True
    return error <= tol * max(max_abs(want), top) + 1e-300


@functools.lru_cache(maxsize=64)
def _tolerance(a, b, k: int) -> float:
    """The relative tolerance of :func:`agrees` for dtypes ``a``, ``b`` and ``k``
    directions: 64 machine epsilons (of the dtypes combined, at least float32's) per
    square root of the number of directions summed."""
    return 64 * float(np.finfo(np.result_type(a, b, np.float32)).eps) * math.sqrt(max(k, 1))


def _sweep(back, dy):
    """The raw cotangents of the reverse sweep of ``back`` (a :class:`VJPPullback`)."""
    if back.deep:
        with deeper_recursion(back.fn):
            return run_pullback(back._pullback, dy)
    return run_pullback(back._pullback, dy)


def _agrees(back, dys, cots, rng=None, place=None) -> bool:
    """:func:`agrees` for the cotangents of a pullback whose arguments and output are
    floats or NumPy float arrays (see :func:`stacked_pullback`). The checking sweep runs
    without the pullback's call checks: its cotangent, a combination of the rows of
    ``dys``, has the output's shape (checked for ``dys``), and no value is a Dask array,
    so the compute guard would be a no-op."""

    def one_pullback(combined):
        cotangents = _sweep(back, combined[0] if place is None else place(combined[0]))
        return [materialize(c, v) for c, v in zip(cotangents, back._values, strict=True)]

    return agrees(one_pullback, [dys], cots, rng)


def exact_by_structure(seeds, outs) -> bool:
    """Whether the batched results ``outs`` of the seeds ``seeds`` are exact without the
    check of :func:`agrees`: every seed and every result is a :class:`DiagonalStack`.

    A sweep is linear in its directions: a value computed from them is only ever scaled
    by values of the primal computation or added to another such value, never multiplied
    by one. A diagonal stack stays one only through its own exact steps (products and
    quotients by operands of the primal's shape, negations, sums with diagonal stacks,
    each finite); any other step -- one that reads it as an array, indexes it, reduces it,
    or adds a dense value to it -- turns it into the dense stack, and a dense value never
    becomes a diagonal stack again. A result that is still diagonal was therefore made by
    exact steps alone, and is the row-by-row result; the check is what catches a step
    that mistakes the batch axis, and such a step leaves a dense result behind.

    >>> import numpy as np
    >>> d = DiagonalStack(np.ones(3))
    >>> exact_by_structure([d], [d * np.arange(3.0)]), exact_by_structure([d], [d.dense()])
    (True, False)
    """
    for s in seeds:
        if type(s) is not DiagonalStack:
            return False
    for c in outs:
        if type(c) is not DiagonalStack:
            return False
    return True


def stacked_pullback(back, dys, entry=None):
    """Cotangents of every direction in the stack ``dys`` (shape ``(k,) + y.shape``) through
    the pullback ``back`` returned by :func:`pullback.vjp`: one array of shape
    ``(k,) + x.shape`` per differentiated argument (a tuple unless ``wrt`` was single).
    For an output that is a tuple, ``entry`` says which of its items the stack belongs to
    (the others have zero cotangents).

    One batched reverse sweep where every step follows the batch axis, one pullback per
    direction otherwise; both give the same result.
    """
    if type(dys) is not DiagonalStack:
        dys = np.asarray(dys)
    y = back.y if entry is None else back.y[entry]
    place = None if entry is None else functools.partial(_at_entry, len(back.y), entry)
    y_shape = y.shape if type(y) is np.ndarray else np.shape(y)
    if dys.ndim < 1 or dys.shape[1:] != y_shape:
        from .errors import ShapeMismatchError

        raise ShapeMismatchError(
            f"a stack of cotangents must have shape (k,) + {np.shape(y)} (the output's "
            f"shape), got {dys.shape}.\nFix: stack one cotangent per row, e.g. np.stack(dys)."
        )
    simple = all(
        type(v) is float or (type(v) is np.ndarray and v.dtype.kind == "f") for v in back._values
    ) and (type(y) is float or type(y) is np.ndarray or np.isscalar(y))
    if simple:
        return pullback_stack(back, dys, place)
    dense = dys.dense() if type(dys) is DiagonalStack else dys
    return _stack_rows(back, dense) if place is None else _stack_rows(back, dense, place)


def _at_entry(n, entry, dy):
    """The cotangent of an ``n``-tuple output that is ``dy`` at ``entry``, zero elsewhere."""
    return tuple(dy if m == entry else ZERO for m in range(n))


def pullback_stack(back, dys, place=None, defer=True):
    """:func:`stacked_pullback` of a stack whose shape is checked, for a pullback whose
    arguments are floats or NumPy float arrays and whose output is a float, a NumPy
    scalar or a NumPy array (what ``jacobian`` checks before it calls this); ``place``
    puts a stack for one entry of a tuple output in its place (see stacked_pullback).
    ``defer``: a diagonal stack's finiteness test is deferred (:func:`_deferred_cotangents`),
    the same answer; a Hessian's sweep, whose stack turns into band stacks at its first
    slice read (where the test is made anyway), passes False."""
    k = dys.diagonal.size if type(dys) is DiagonalStack else dys.shape[0]
    if k > 1:
        seed = dys if place is None else place(dys)
        if defer and type(dys) is DiagonalStack:
            cots = _deferred_cotangents(back, seed, (k,))
        else:
            cots = _batched_cotangents(back, seed, (k,))
        if cots is None:
            pass
        elif back.single and type(cots[0]) is DiagonalStack and type(dys) is DiagonalStack:
            return materialize_rows(cots[0], back._values[0])  # (exact_by_structure's case)
        elif exact_by_structure((dys,), cots) or _agrees(back, dys, cots, place=place):
            values = back._values
            if back.single:
                return materialize_rows(cots[0], values[0])
            return tuple(materialize_rows(c, v) for c, v in zip(cots, values, strict=True))
    dense = dys.dense() if type(dys) is DiagonalStack else dys
    return _stack_rows(back, dense) if place is None else _stack_rows(back, dense, place)


def _deferred_cotangents(back, seed, batch):
    """:func:`_batched_cotangents` of a diagonal seed with the finiteness test of its
    steps deferred (see pullback.diagonal_stack): one test per result instead of one per
    step. Where that sweep fails or a result is not finite, the sweep runs again with the
    test at each step, which gives what it gave before."""
    cots = _batched_cotangents(back, seed, batch, True)
    if cots is not None:
        for c in cots:
            if type(c) is DiagonalStack and not all_finite(c.diagonal):
                break
        else:
            return cots
    return _batched_cotangents(back, seed, batch)


def materialize_rows(c, value):
    """A stack of cotangents in the argument's dtype."""
    dtype = value.dtype if type(value) is np.ndarray else np.result_type(value)
    if type(c) is DiagonalStack or type(c) is BandStack:
        # converted while compact (its zeros stay zeros): the dense stack is written once
        have = c.diagonal.dtype if type(c) is DiagonalStack else c.dtype
        if have != dtype and dtype.kind in "fc":
            c = c.astype(dtype)
        return c.dense()
    if dtype.kind in "fc" and c.dtype != dtype:
        c = c.astype(dtype)
    return c if c.flags.writeable else c.copy()
