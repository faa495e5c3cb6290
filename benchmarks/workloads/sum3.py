"""Workload 3: a[0] + a[1] + a[2] on a 30-vector (three scalar reads of an array)."""

import numpy as np

from .base import Workload


def sum3(a):
    return a[0] + a[1] + a[2]


def hand(a):
    g = np.zeros_like(a)
    g[:3] = 1.0
    return g


def peer(B):
    def sum3(a):
        return a[0] + a[1] + a[2]

    return sum3


def make_args():
    return (np.random.default_rng(3).standard_normal(30),)


WORKLOADS = [
    Workload(
        name="sum3",
        title="a[0] + a[1] + a[2], 30-vector",
        fn=sum3,
        make_args=make_args,
        wrt=0,
        hand=hand,
        peer=peer,
        target=8.0,
    )
]
