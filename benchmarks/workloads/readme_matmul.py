"""Workload 1: sum(a.T @ b + a @ b.T), two 100x100 matrices (the ReverseDiff.jl README)."""

import numpy as np

from .base import Workload

N = 100


def f(a, b):
    return np.sum(a.T @ b + a @ b.T)


def hand(a, b):
    # d/da_ki sum(a.T @ b) = sum_j b_kj ; d/da_ik sum(a @ b.T) = sum_j b_jk
    ga = b.sum(axis=1)[:, None] + b.sum(axis=0)[None, :]
    gb = a.sum(axis=1)[:, None] + a.sum(axis=0)[None, :]
    return ga, gb


def peer(B):
    def f(a, b):
        return B.sum(a.T @ b + a @ b.T)

    return f


def make_args():
    rng = np.random.default_rng(1)
    return rng.standard_normal((N, N)), rng.standard_normal((N, N))


WORKLOADS = [
    Workload(
        name="readme_matmul",
        title="sum(a.T@b + a@b.T), 100x100, wrt (a, b)",
        fn=f,
        make_args=make_args,
        wrt=(0, 1),
        hand=hand,
        peer=peer,
        target=2.5,
    )
]
