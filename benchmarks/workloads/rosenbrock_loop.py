"""Workload 5: the Rosenbrock function as a Python loop over 100 indices."""

import numpy as np

from .base import Workload

N = 100


def rosenbrock(x):
    s = 0.0
    for i in range(len(x) - 1):
        s = s + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2
    return s


def hand(x):
    head, tail = x[:-1], x[1:]
    t = tail - head**2
    g = np.zeros_like(x)
    g[:-1] = -400.0 * t * head - 2.0 * (1.0 - head)
    g[1:] += 200.0 * t
    return g


def peer(B):
    def rosenbrock(x):
        s = 0.0
        for i in range(len(x) - 1):
            s = s + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2
        return s

    return rosenbrock


def make_args():
    return (np.random.default_rng(5).uniform(-1.5, 1.5, N + 1),)


WORKLOADS = [
    Workload(
        name="rosenbrock_loop",
        title=f"Rosenbrock as a Python loop, {N} terms, wrt x",
        fn=rosenbrock,
        make_args=make_args,
        wrt=0,
        hand=hand,
        peer=peer,
        target=3.0,
    )
]
