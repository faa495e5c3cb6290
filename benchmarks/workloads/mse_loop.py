"""Workload 2: mean squared error as a Python loop over indices (the ChainRules.jl docs)."""

import numpy as np

from .base import Workload


def mse(y, yhat):
    n = len(y)
    s = 0.0
    for i in range(n):
        d = y[i] - yhat[i]
        s = s + d * d
    return s / n


def hand(y, yhat):
    return 2.0 * (y - yhat) / len(y)


def peer(B):
    def mse(y, yhat):
        n = len(y)
        s = 0.0
        for i in range(n):
            d = y[i] - yhat[i]
            s = s + d * d
        return s / n

    return mse


def _args(n):
    def make_args():
        rng = np.random.default_rng(2)
        return rng.standard_normal(n), rng.standard_normal(n)

    return make_args


WORKLOADS = [
    Workload(
        name=f"mse_loop_{n}",
        title=f"MSE as a Python loop, N={n}, wrt y",
        fn=mse,
        make_args=_args(n),
        wrt=0,
        hand=hand,
        peer=peer,
        target=3.0,
        slow_jax=n > 100,
        slow_jax_eager=n > 100,
        slow_jax_jit=n > 1000,
        jax_takes_minutes=n > 1000,
    )
    for n in (10, 30, 1000, 10000)
]
