"""A reverse loop's reads ``x[i]`` and ``x[i + c]`` folded as the loop ends (issue 13).

rosenbrock_loop's reverse loop reads ``x[i]`` twice a step by its counter and
``x[i + 1]`` once. The counter's reads went into a list (``loop_reads``: one node of
positions and cotangents), the others onto the chain, one tuple each, which
``fold_reads`` then walked read by read before one ``np.bincount``. When the index of
those other reads is provably the counter plus a constant (``_t3 = i + 1`` in the forward
loop, :mod:`pullback.transform.loop_reads`) and the chain is folded right as the loop
ends, the loop appends every read's cotangent to one list, in the order the reads ran,
and :func:`fold_loop_reads` folds them in one call::

    _lreads_x = []; _lreads_x_add = _lreads_x.append
    for i in reversed(_range1):
        ...
        _lreads_x_add(d__t11)      # x[i]
        _lreads_x_add(d__t5)       # x[i]
        _lreads_x_add(d__t7)       # x[i + 1], was: _reads_x = (_t3, d__t7, _reads_x)
    return (_fold_loop_reads(d_x, x, _reads_x, _range1, (None, None, 1), _lreads_x),)

``sites`` gives each read of a step, in order: ``None`` for the counter, ``c`` for
``i + c``. One read by the counter a step has its own fold (:func:`_fold_one_read`).

Why the result is bit for bit the old one: where the old fold reached its one
``np.bincount`` (a zero adjoint, no chain before the loop, a 1-D float array, real
scalar cotangents, more than ``_FEW_READS`` reads by the counter), this builds the very
arrays it handed to it, in the same order: first the other reads as the chain held them
(the last pushed first), then the counter's node as ``loop_reads`` made it (the order the
loop ran, its positions by ``np.repeat``), each value converted to the array's dtype on
its own; ``np.bincount`` adds each element's values in that order from ``0.0`` (in
float64 whatever the dtype, cast once as the old ``out +=`` did). In every other case
the chain the loop used to build is rebuilt from the list (the same pushes, in the same
order) and folded by the very calls the sweep made.
"""

from __future__ import annotations

import numpy as np

from .loop_buffers import fold_owned_reads, own_reads
from .read_folds import _FEW_READS, _REAL_FLOATS, fold_reads, loop_reads
from .tangents import _ndarray, batch_axes
from .zero import NO_TANGENT, ZERO

_intp = np.intp


def fold_loop_reads(acc, x, chain, steps, sites, values):
    """``fold_reads(acc, x, chain after the loop)`` of a reverse loop ``for i in
    reversed(steps)`` whose every step recorded the reads ``sites`` (``None``: ``x[i]``,
    ``c``: ``x[i + c]``) of ``x``, their cotangents in ``values`` in the order they ran,
    ``chain`` the reads recorded before the loop."""
    k = sites.count(None)
    if k == 1:
        return _fold_one_read(acc, x, chain, steps, sites, values)
    if (
        (acc is ZERO or acc is NO_TANGENT)
        and chain is None
        and type(steps) is range
        and type(x) is _ndarray
        and x.ndim == 1
        and x.dtype.kind == "f"
        and not batch_axes.axes
        and len(steps) * k > _FEW_READS
        and k < len(sites)
        and len(values) == len(steps) * len(sites)
        and _REAL_FLOATS.issuperset(map(type, values))
    ):
        return _bincount_sites(x, steps, sites, values, k)
    return fold_reads(acc, x, rebuilt_chain(steps, sites, values, x, chain))


def rebuilt_chain(steps, sites, values, x, chain):
    """The chain the loop used to leave: each read ``x[i + c]`` pushed as it ran, then the
    counter's reads handed to ``loop_reads`` (what the sweep did)."""
    counter = []
    add = counter.append
    cotangents = iter(values)
    for i in reversed(steps):
        for c in sites:
            value = next(cotangents)
            if c is None:
                add(value)
            else:
                chain = (i + c, value, chain)
    return loop_reads(steps, sites.count(None), counter, x, chain)


def _bincount_sites(x, steps, sites, values, k):
    """The old fold's one ``np.bincount``, its two arrays built without the chain."""
    n = x.shape[0]
    dtype = x.dtype  # (the cotangent dtype of a float array: its own)
    # real scalars only (checked): fromiter converts each as the old np.array and fromiter did
    table = np.fromiter(values, dtype=dtype, count=len(values)).reshape(len(steps), len(sites))
    ascending = np.arange(steps.start, steps.stop, steps.step)  # step by step, as ranged
    # the chain's reads, the last pushed first: the steps as ranged, each one's reads last
    # first
    others = [(j, c) for j, c in enumerate(sites) if c is not None][::-1]
    where_others = (ascending[:, None] + np.array([c for _, c in others], dtype=_intp)).ravel()
    weights_others = table[::-1][:, [j for j, _ in others]].ravel()
    # the counter's node: the steps as the loop ran (reversed), its reads in order
    counter = [j for j, c in enumerate(sites) if c is None]
    where = np.concatenate([where_others, np.repeat(ascending[::-1], k)])
    weights = np.concatenate([weights_others, table[:, counter].ravel()])
    if where.min() < 0:
        where[where < 0] += n
    out = np.zeros(n) if dtype == np.float64 else np.zeros(n, dtype)
    out += np.bincount(where, weights=weights, minlength=n)
    return out


_F64 = np.dtype(np.float64)


def _fold_one_read(acc, x, chain, steps, sites, values):
    """The fold of a loop that reads ``x[i]`` once a step beside its reads ``x[i + c]``.

    Before, the step stored ``x[i]``'s cotangent into the loop's own buffer
    (:mod:`pullback.loop_buffers`, ``cotangent or 0.0``) and pushed the others onto the
    chain, which ``fold_owned_reads`` added one by one (``out[index] += value``, as they
    were pushed) before the buffer's slice. For a float64 vector with a zero adjoint, no
    chain before the loop, and real scalar cotangents, ``np.add.at`` adds those same
    values in that same order, in float64, then the buffer's values go through the same
    slice; anything else replays the old stores and pushes and folds them as before."""
    if (
        (acc is ZERO or acc is NO_TANGENT)
        and chain is None
        and type(steps) is range
        and type(x) is _ndarray
        and x.dtype is _F64
        and x.ndim == 1
        and not batch_axes.axes
        and steps
        and (steps.start if steps.step > 0 else steps[-1]) >= 0
        and len(values) == len(steps) * len(sites)
        and _REAL_FLOATS.issuperset(map(type, values))
    ):
        table = np.fromiter(values, dtype=_F64, count=len(values)).reshape(len(steps), -1)
        ran = np.arange(steps.start, steps.stop, steps.step)[::-1]  # as the loop ran
        others = [(j, c) for j, c in enumerate(sites) if c is not None]
        where = (ran[:, None] + np.array([c for _, c in others], dtype=_intp)).ravel()
        out = np.zeros(x.shape[0])
        np.add.at(out, where, table[:, [j for j, _ in others]].ravel())
        # the buffer's slots: ``cotangent or 0.0`` is ``cotangent + 0.0`` (-0.0 to +0.0)
        stored = table[:, sites.index(None)] + 0.0
        step = steps.step
        if step > 0:
            low, high, stored = steps.start, steps[-1], stored[::-1]
        else:
            low, high, step = steps[-1], steps.start, -step
        out[low : high + 1 : step] += stored
        return out
    buffer, types = own_reads(steps, x)
    cotangents = iter(values)
    for i in reversed(steps):
        for c in sites:
            value = next(cotangents)
            if c is not None:
                chain = (i + c, value, chain)
            elif type(value) in types:
                buffer[i] = value or 0.0
            else:
                chain = (i, value, chain)
    return fold_owned_reads(acc, x, chain, steps, buffer)
