"""The description of one benchmark workload, shared by every workload module."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Workload:
    """One function to differentiate, its inputs, and the ways to differentiate it.

    ``fn`` is the primal that pullback differentiates: a plain NumPy/``math`` function
    defined at the top level of a workload module (pullback reads its source).
    ``hand`` is a gradient written by hand in NumPy, returning what
    ``pullback.grad(fn, wrt=wrt)(*args)`` returns (one array/float, or a tuple for a
    tuple ``wrt`` or a tuple argument). ``peer(B)`` builds the same function against a
    backend namespace ``B`` (see ``backends.py``) so autograd, JAX and PyTorch trace the
    same computation; it must return a function with ``fn``'s signature.
    """

    name: str
    title: str
    fn: Callable
    make_args: Callable[[], tuple]
    wrt: int | tuple[int, ...]
    hand: Callable
    peer: Callable[[Any], Callable] | None = None
    # gradient time / primal time must be <= target (None: no target)
    target: float | None = None
    # JAX takes seconds here (jax.jit compiles the unrolled loop): --quick skips JAX
    slow_jax: bool = False
    # eager jax.grad compiles one small op per distinct index: its first call takes
    # 30-100 s here, so it runs only with --slow
    slow_jax_eager: bool = False
    # jax.jit compiles the unrolled loop for minutes here: it runs only with --slow
    slow_jax_jit: bool = False
    # eager jax.grad and jax.jit both take many minutes here (10^4 distinct indices, a
    # 10^4-step unrolled loop): JAX is never run, --slow included
    jax_takes_minutes: bool = False
