"""Timing and checking helpers of the benchmark suite (no pullback-specific code)."""

from __future__ import annotations

import gc
import statistics
import time
import timeit
import types
from dataclasses import dataclass, field

import numpy as np

# -- nested gradients ---------------------------------------------------------------------


def flatten(value):
    """The leaves of nested tuples/lists/dicts, in order."""
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in flatten(v)]
    if isinstance(value, dict):
        return [leaf for k in value for leaf in flatten(value[k])]
    return [value]


def relative_error(got, want):
    """max |got - want| / max |want| over all leaves; raises if the structures differ."""
    got_leaves, want_leaves = flatten(got), flatten(want)
    if len(got_leaves) != len(want_leaves):
        raise ValueError(f"gradient has {len(got_leaves)} parts, expected {len(want_leaves)}")
    scale, worst = 0.0, 0.0
    for k, (g, w) in enumerate(zip(got_leaves, want_leaves, strict=True)):
        g, w = np.asarray(g, dtype=float), np.asarray(w, dtype=float)
        if g.shape != w.shape:
            raise ValueError(f"gradient part {k} has shape {g.shape}, expected {w.shape}")
        if not np.all(np.isfinite(g)):
            raise ValueError(f"gradient part {k} is not finite")
        scale = max(scale, float(np.max(np.abs(w), initial=0.0)))
        worst = max(worst, float(np.max(np.abs(g - w), initial=0.0)))
    return worst / max(scale, 1e-300)


def _positions(wrt):
    return (wrt,) if isinstance(wrt, int) else tuple(wrt)


def _rebuild(value, leaves):
    """``value``'s structure with its leaves taken, in order, from the iterator ``leaves``."""
    if isinstance(value, (tuple, list)):
        return type(value)(_rebuild(v, leaves) for v in value)
    if isinstance(value, dict):
        return {k: _rebuild(v, leaves) for k, v in value.items()}
    return next(leaves)


def directional_fd_error(fn, args, wrt, gradient, *, directions=2, eps=1e-6, seed=0):
    """Check a gradient against central finite differences along random directions.

    Returns the worst relative error |fd - <g, v>| / max(|fd|, |<g, v>|, 1e-8).
    """
    rng = np.random.default_rng(seed)
    positions = _positions(wrt)
    wrt_values = [args[p] for p in positions]
    g_leaves = flatten(gradient)
    worst = 0.0
    for _ in range(directions):
        x_leaves = flatten(wrt_values)
        v_leaves = [
            rng.standard_normal(np.shape(x)) if isinstance(x, np.ndarray) else rng.standard_normal()
            for x in x_leaves
        ]

        def at(t, x_leaves=x_leaves, v_leaves=v_leaves):
            moved = iter([x + t * v for x, v in zip(x_leaves, v_leaves, strict=True)])
            new = list(args)
            for p, value in zip(positions, wrt_values, strict=True):
                new[p] = _rebuild(value, moved)
            return float(fn(*new))

        fd = (at(eps) - at(-eps)) / (2 * eps)
        dot = sum(float(np.sum(g * v)) for g, v in zip(g_leaves, v_leaves, strict=True))
        worst = max(worst, abs(fd - dot) / max(abs(fd), abs(dot), 1e-8))
    return worst


# -- timing -------------------------------------------------------------------------------


@dataclass
class Timing:
    """Per-call seconds: ``best`` is the minimum over repeats of (loop time / number)."""

    best: float
    number: int
    repeats: int
    samples: list[float] = field(default_factory=list)

    def as_dict(self):
        return {
            "best_s": self.best,
            "number": self.number,
            "repeats": self.repeats,
            "samples_s": self.samples,
        }


def measure(fn, args, *, target, repeats, budget, slow_repeats=3, slow_s=0.1, gc_on=True):
    """timeit-style: loops of ``number`` calls taking >= ``target`` seconds, min of repeats.

    One call first, untimed (what a function builds on its first calls, as pullback's hot
    entry on the second, is not a loop's); then ``number`` grows 1, 2, 5, 10, 20, 50, ...
    until one loop takes ``target``; that calibration loop counts as the first repeat. Each
    loop starts after one untimed call (its caches warm: a loop that follows another
    function's, which may have swept the caches with a large array, times the function,
    not the sweep). Repeats stop early (after at least 3) once the loops have taken
    ``budget`` seconds, and a call that alone takes longer than ``slow_s`` is timed once per
    loop, with no untimed call, and repeated only ``slow_repeats`` times (peers on Python
    loops, where one call can take a second). The garbage collector runs while timing, as
    when users run (``gc_on=False``: off, as in timeit), so the cost of what a gradient
    leaves for the collector (tapes of many small objects) is part of its time.
    """
    timer, number, t = _calibrated(fn, args, target, gc_on, slow_s)
    if number == 1 and t > max(target, slow_s):
        repeats = min(repeats, slow_repeats)
    loops = [t]
    while len(loops) < repeats and not (len(loops) >= 3 and sum(loops) >= budget):
        loops.append(timer.timeit(number))
    samples = [x / number for x in loops]
    return Timing(min(samples), number, len(samples), samples)


def _timer(fn, args, gc_on, warm):
    setup = ("gc.enable()" if gc_on else "pass") + ("; fn(*args)" if warm else "")
    return timeit.Timer("fn(*args)", setup=setup, globals={"fn": fn, "args": args, "gc": gc})


def _calibrated(fn, args, target, gc_on, slow_s=0.1):
    """(timer, number, first loop's seconds) as :func:`measure` describes: one call, then
    ``number`` grown 1, 2, 5, 10, 20, ... until one loop of ``number`` calls (after an
    untimed one) takes ``target`` seconds; a first call longer than ``slow_s`` is itself
    the first loop, of one call."""
    cold = _timer(fn, args, gc_on, warm=False)
    t = cold.timeit(1)
    if t > slow_s:
        return cold, 1, t
    timer = _timer(fn, args, gc_on, warm=True)
    scale = 1
    while True:
        for step in (1, 2, 5):
            t = timer.timeit(step * scale)
            if t >= target:
                return timer, step * scale, t
        scale *= 10


def measure_together(fns, *, target, repeats, budget, gc_on=True):
    """:func:`measure` of several ``name -> (fn, args)`` at once, for ratios between them.

    Each is calibrated as :func:`measure` calibrates (a first call, then loops of
    ``number`` calls taking ``target`` seconds, each after an untimed call, the
    calibration loop the first repeat); then the loops take turns,
    one loop of each per round, so that every function is timed across the same span of
    time: on a shared machine a quiet or a busy second (another process on the core or
    its sibling) then counts for all of them alike, where timing one after the other gave
    one the quiet second and the next the busy one. Rounds stop as :func:`measure`'s
    repeats stop (at ``repeats``, or after 3 once every function's loops have taken
    ``budget`` seconds), so each gets as many loops as :func:`measure` would give it; the
    minimum over them, per function, as :func:`measure` gives it.
    """
    timers, loops = {}, {}
    for name, (fn, args) in fns.items():
        timer, number, t = _calibrated(fn, args, target, gc_on)
        timers[name] = (timer, number)
        loops[name] = [t]
    rounds = 1
    while rounds < repeats and not (
        rounds >= 3 and all(sum(ts) >= budget for ts in loops.values())
    ):
        for name, (timer, number) in timers.items():
            loops[name].append(timer.timeit(number))
        rounds += 1
    out = {}
    for name, (_, number) in timers.items():
        samples = [x / number for x in loops[name]]
        out[name] = Timing(min(samples), number, len(samples), samples)
    return out


def call_once(fn, args):
    """(result, seconds) of one call, with the garbage collector in its usual state."""
    t0 = time.perf_counter()
    result = fn(*args)
    return result, time.perf_counter() - t0


def fresh_function(fn):
    """A new function object with ``fn``'s code: caches keyed by the function miss, while
    ``inspect.getsource`` still finds the source (same file and first line)."""
    new = types.FunctionType(
        fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__
    )
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__qualname__ = fn.__qualname__
    new.__module__ = fn.__module__
    new.__doc__ = fn.__doc__
    return new


def first_calls(make_grad, fn, args, count):
    """Seconds of ``make_grad(fresh)(*args)`` for ``count`` fresh copies of ``fn``."""
    samples = []
    for _ in range(count):
        fresh = fresh_function(fn)
        gc.collect()
        t0 = time.perf_counter()
        make_grad(fresh)(*args)
        samples.append(time.perf_counter() - t0)
    return samples


def median(xs):
    return statistics.median(xs) if xs else None
