"""Other AD libraries the suite compares against, each optional.

A peer is detected by importing it: an ``ImportError`` means "not installed" and the suite
runs without it. Each peer turns a workload into one or more *variants*: a gradient
function plus the inputs converted to that library's arrays (outside the timed region).
Workloads describe their computation once, as ``peer(B)``, against a small namespace ``B``
of array functions; every peer provides such a namespace.
"""

from __future__ import annotations

import importlib.metadata
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
from harness import flatten


@dataclass
class Variant:
    """One way a peer computes the gradient of a workload."""

    label: str
    grad: Callable  # called as grad(*args); returns the gradient in the peer's types
    args: tuple
    leaves: Callable  # gradient -> flat list of NumPy arrays/floats, in pullback's order
    compiles: bool = False  # the first call compiles (reported as compile time)


def numpy_namespace(xp):
    """The namespace ``B`` that workload ``peer`` functions use, from a NumPy-like module."""
    return SimpleNamespace(
        sum=xp.sum, max=xp.max, mean=xp.mean, tanh=xp.tanh, exp=xp.exp, log=xp.log, sin=xp.sin
    )


def _version(dist):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "?"


def _wrt_positions(wrt):
    return (wrt,) if isinstance(wrt, int) else tuple(wrt)


class AutogradPeer:
    name = "autograd"
    labels = ("autograd",)

    def __init__(self):
        import autograd
        import autograd.numpy as anp

        self._autograd = autograd
        self._ns = numpy_namespace(anp)
        self.version = _version("autograd")
        self.note = ""

    def variants(self, wl, args):
        grad = self._autograd.grad(wl.peer(self._ns), argnum=wl.wrt)
        return [Variant("autograd", grad, args, lambda r: flatten(r))]


class JaxPeer:
    name = "jax"
    labels = ("jax eager", "jax jit")

    def __init__(self):
        import jax

        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp

        self._jax = jax
        self._jnp = jnp
        self._ns = numpy_namespace(jnp)
        self.version = jax.__version__
        self.note = f"float64, backend {jax.default_backend()}"

    def variants(self, wl, args):
        jax, jnp = self._jax, self._jnp
        jargs = tuple(
            jax.tree_util.tree_map(
                lambda a: jnp.asarray(a) if isinstance(a, np.ndarray) else a, arg
            )
            for arg in args
        )
        grad = jax.grad(wl.peer(self._ns), argnums=wl.wrt)
        # Python ints (loop counts) steer Python control flow: static under jit
        static = tuple(i for i, a in enumerate(args) if isinstance(a, int))
        jitted = jax.jit(grad, static_argnums=static)
        block = jax.block_until_ready

        def eager(*a):
            return block(grad(*a))

        def jit(*a):
            return block(jitted(*a))

        def leaves(r):
            return [np.asarray(x) for x in jax.tree_util.tree_leaves(r)]

        return [
            Variant("jax eager", eager, jargs, leaves),
            Variant("jax jit", jit, jargs, leaves, compiles=True),
        ]


class TorchPeer:
    name = "torch"
    labels = ("torch",)

    def __init__(self):
        import torch

        threads = int(os.environ.get("PULLBACK_BENCH_THREADS", "0"))
        if threads:
            torch.set_num_threads(threads)
        self._torch = torch
        self.version = torch.__version__
        n = torch.get_num_threads()
        self.note = f"eager autograd, {n} thread{'s' if n > 1 else ''}"

        def reduce(fn):
            def reduced(x, axis=None, keepdims=False):
                if axis is None:
                    return fn(x)
                return fn(x, dim=axis, keepdim=keepdims)

            return reduced

        def sin(x):
            return torch.sin(x) if isinstance(x, torch.Tensor) else math.sin(x)

        self._ns = SimpleNamespace(
            sum=reduce(torch.sum),
            max=reduce(torch.amax),
            mean=reduce(torch.mean),
            tanh=torch.tanh,
            exp=torch.exp,
            log=torch.log,
            sin=sin,
        )

    def _convert(self, value, differentiate):
        torch = self._torch
        if isinstance(value, (tuple, list)):
            return type(value)(self._convert(v, differentiate) for v in value)
        if isinstance(value, np.ndarray):
            t = torch.from_numpy(value)
        elif differentiate and isinstance(value, float):
            t = torch.tensor(value, dtype=torch.float64)
        else:
            return value
        if differentiate:
            t.requires_grad_(True)
        return t

    def variants(self, wl, args):
        torch = self._torch
        positions = _wrt_positions(wl.wrt)
        targs = tuple(self._convert(a, i in positions) for i, a in enumerate(args))
        # gradients in wrt order, as pullback returns them
        ordered = []
        for p in positions:
            ordered.extend(flatten(targs[p]))
        f = wl.peer(self._ns)

        def grad(*a):
            return torch.autograd.grad(f(*a), ordered)

        def to_leaves(r):
            return [t.detach().numpy() for t in r]

        return [Variant("torch", grad, targs, to_leaves)]


PEERS = (AutogradPeer, JaxPeer, TorchPeer)


def detect_peers():
    """(available peer objects, {name: reason} for the missing ones)."""
    found, missing = [], {}
    for cls in PEERS:
        try:
            found.append(cls())
        except ImportError:
            missing[cls.name] = "not installed"
        except Exception as exc:  # a broken install must not stop the suite
            missing[cls.name] = f"import failed: {type(exc).__name__}: {exc}"
    return found, missing
