"""Draws of random numbers in a recompute: refused, never drawn twice.

A second derivative pulls back through a call of a user function by running its forward
sweep again, later (transform/replay.py). A call that draws from a random number generator
that outlives it (NumPy's global one behind ``np.random.normal``, the ``random`` module's,
a ``np.random.Generator`` held by a module, a closure or an object the call is given)
would draw again in the recompute: other numbers, so the derivative of another function,
and a generator advanced twice. So the record of such a call (recompute_state.py) names
its generators; the recompute takes their states when it begins (:func:`states`,
escapes.fresh_copies) and, once its forward part ran, gives them back and refuses the
derivative if it drew (:func:`refuse_draws`): the generators end as the primal left them.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> kept = states([rng])
>>> a = rng.normal()
>>> refuse_draws(kept, "noisy")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
pullback.errors.UnsupportedCallError: PB107 'noisy' draws random numbers, ...
>>> rng.normal() == a  # given back: the next draw is the one the recompute took
True
"""

from __future__ import annotations

import random as _random
import sys

import numpy as np

from .errors import UnsupportedCallError


def _numpy_random():
    """``numpy.random`` if a program loaded it, else None: no NumPy generator can exist
    before, and importing pullback must not load it (tests/test_cold_start.py)."""
    return sys.modules.get("numpy.random")


def _generator_types() -> tuple:
    npr = _numpy_random()
    if npr is None:
        return (_random.Random,)
    return (npr.Generator, npr.RandomState, _random.Random)


def generator_of(value):
    """The random number generator ``value`` is, or whose bound method it is (``from
    numpy.random import normal``), or None."""
    kinds = _generator_types()
    if isinstance(value, kinds):
        return value
    owner = getattr(value, "__self__", None)
    return owner if isinstance(owner, kinds) else None


def global_generators() -> list:
    """NumPy's global generator (``np.random.normal``) and the ``random`` module's."""
    npr = _numpy_random()
    return [_random._inst] if npr is None else [npr.mtrand._rand, _random._inst]


def _get(rng):
    if isinstance(rng, _random.Random):
        return rng.getstate()
    if hasattr(rng, "bit_generator"):  # a numpy.random.Generator
        return rng.bit_generator.state
    return rng.get_state()  # a numpy.random.RandomState


def _set(rng, state) -> None:
    if isinstance(rng, _random.Random):
        rng.setstate(state)
    elif hasattr(rng, "bit_generator"):
        rng.bit_generator.state = state
    else:
        rng.set_state(state)


def states(generators) -> tuple:
    """``((generator, state), ...)``: each generator's state now."""
    return tuple((g, _get(g)) for g in generators)


def refuse_draws(kept, fn) -> None:
    """After the forward part of a recompute of ``fn``: a generator of ``kept`` (of
    :func:`states`, taken when it began) that drew gets its state back, and the derivative
    is refused (the generated code's place names the user's line)."""
    for g, state in kept:
        if not _same(_get(g), state):
            _set(g, state)
            name = getattr(fn, "__qualname__", None) or str(fn)
            raise UnsupportedCallError(
                f"PB107 '{name}' draws random numbers, and a second derivative "
                "pulls back through this call by running it again, later: it would draw "
                "other numbers and differentiate another function.\n"
                "Fix: draw the numbers outside the differentiated function and pass them "
                "in as an argument (see docs/limitations.md#PB107)."
            )


# The constructors of generators whose first parameter is the seed (``None``: fresh
# entropy from the system, other numbers at every call): by module and name.
_SEEDED_BY = {
    "numpy.random": ("default_rng", "RandomState", "SeedSequence"),
    "numpy.random._generator": ("default_rng",),
    "numpy.random.mtrand": ("RandomState",),
    "random": ("Random",),
}
_BIT_GENERATORS = ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64")


def seeds_itself(fn) -> bool:
    """Whether ``fn`` makes a random number generator from a seed it is given, and from
    the system's entropy without one (``np.random.default_rng``, ``RandomState``,
    ``random.Random``, NumPy's bit generators): ``random.SystemRandom`` always is."""
    name = getattr(fn, "__name__", None)
    module = getattr(fn, "__module__", None) or ""
    if name == "SystemRandom" and module == "random":
        return True
    if name in _BIT_GENERATORS and module.startswith("numpy.random"):
        return True
    return name in _SEEDED_BY.get(module, ()) or (
        module.startswith("numpy.random") and name in ("default_rng", "RandomState")
    )


def refuse_unseeded(fn: str, where: str, line: str) -> None:
    """First in the recompute of ``fn``, which makes a generator without a seed at
    ``where`` (transform/replay.py): a recompute would draw other numbers than the call
    did from a generator made afresh, and differentiate another function."""
    shown = f"        {line.strip()}\n" if line.strip() else ""
    raise UnsupportedCallError(
        f"{where}: PB107 '{fn}' makes a random number generator without a seed (here, or "
        "in a function or class of yours it calls here), and a "
        "second derivative pulls back through its call by running it again, later: the "
        "new generator would draw other numbers than the call drew, and the derivative "
        "would be that of another function.\n"
        f"{shown}"
        "Fix: give the generator a seed (`np.random.default_rng(0)`, a seed passed in), or "
        "make it outside the differentiated function and pass it in (see "
        "docs/limitations.md#PB107)."
    )


def _same(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    return a == b
