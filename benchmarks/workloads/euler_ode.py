"""Workload 6: a scalar ODE y' = -k y + sin(y) by explicit Euler, 500 steps, wrt k."""

import math

from .base import Workload

STEPS = 500


def euler(k, y0, h, steps):
    y = y0
    for _ in range(steps):
        y = y + h * (-k * y + math.sin(y))
    return y


def hand(k, y0, h, steps):
    # forward-mode tangent dy/dk carried along the same loop
    y = y0
    dy = 0.0
    for _ in range(steps):
        dy = dy + h * (-y - k * dy + math.cos(y) * dy)
        y = y + h * (-k * y + math.sin(y))
    return dy


def peer(B):
    def euler(k, y0, h, steps):
        y = y0
        for _ in range(steps):
            y = y + h * (-k * y + B.sin(y))
        return y

    return euler


def make_args():
    return 0.7, 1.3, 0.01, STEPS


WORKLOADS = [
    Workload(
        name="euler_ode",
        title=f"scalar ODE, explicit Euler, {STEPS} steps, math.sin, wrt k",
        fn=euler,
        make_args=make_args,
        wrt=0,
        hand=hand,
        peer=peer,
        target=3.0,
        slow_jax=True,
    )
]
