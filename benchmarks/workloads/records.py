"""Workloads 7-9: methods of records called in a loop, the objects built inside the
differentiated function: a dataclass particle and a plain-class particle stepped 100
times (``p = p.step(dt)``), and a 2-layer MLP of ``Dense`` layer objects. Each method call
is found at run time (adjoints.LazyAdjoint._call_dynamic), so these measure its cost."""

from dataclasses import dataclass

import numpy as np

from .base import Workload

STEPS, DT, G = 100, 0.01, 9.81
BATCH, N_IN, N_HIDDEN = 16, 8, 16


@dataclass
class DataParticle:
    pos: np.ndarray
    vel: np.ndarray

    def step(self, dt):
        accel = np.array([0.0, -G])
        return DataParticle(self.pos + dt * self.vel, self.vel + dt * accel)


def dataclass_flight(v0):
    p = DataParticle(np.zeros(2), v0)
    for _ in range(STEPS):
        p = p.step(DT)
    return np.sum(p.pos**2)


def dataclass_hand(v0):
    # pos_N = N dt v0 + (a term without v0): d sum(pos_N^2) / d v0 = 2 pos_N N dt
    pos, vel = np.zeros(2), v0
    for _ in range(STEPS):
        pos, vel = pos + DT * vel, vel + DT * np.array([0.0, -G])
    return 2.0 * pos * STEPS * DT


class PlainParticle:
    def __init__(self, pos, vel, mass=1.0):
        self.pos = pos
        self.vel = vel
        self.mass = mass

    def energy(self):
        return 0.5 * self.mass * np.sum(self.vel**2) + self.mass * G * self.pos[1]

    def step(self, dt):
        accel = np.array([0.0, -G])
        return PlainParticle(self.pos + dt * self.vel, self.vel + dt * accel, self.mass)


def plain_flight(v0):
    p = PlainParticle(np.zeros(2), v0)
    for _ in range(STEPS):
        p = p.step(DT)
    return p.pos[0] ** 2 + p.energy()


def plain_hand(v0):
    pos, vel = np.zeros(2), v0
    for _ in range(STEPS):
        pos, vel = pos + DT * vel, vel + DT * np.array([0.0, -G])
    # d pos_N / d v0 = N dt I, d vel_N / d v0 = I (mass 1)
    return np.array([2.0 * pos[0] * STEPS * DT, 0.0]) + vel + np.array([0.0, G * STEPS * DT])


class Dense:
    def __init__(self, W, b, activation=np.tanh):
        self.W = W
        self.b = b
        self.activation = activation

    def __call__(self, x):
        y = x @ self.W + self.b
        return y if self.activation is None else self.activation(y)


def dense_loss(params, X, y):
    W1, b1, W2, b2 = params
    layers = [Dense(W1, b1), Dense(W2, b2, None)]
    h = X
    for layer in layers:
        h = layer(h)
    return np.mean((h[:, 0] - y) ** 2)


def dense_hand(params, X, y):
    W1, b1, W2, b2 = params
    h = np.tanh(X @ W1 + b1)
    out = h @ W2 + b2
    dout = np.zeros_like(out)
    dout[:, 0] = 2.0 * (out[:, 0] - y) / X.shape[0]
    dpre = (dout @ W2.T) * (1.0 - h * h)
    return X.T @ dpre, dpre.sum(axis=0), h.T @ dout, dout.sum(axis=0)


def particle_args():
    return (np.array([1.0, 2.0]),)


def dense_args():
    rng = np.random.default_rng(9)
    W1 = rng.standard_normal((N_IN, N_HIDDEN)) / np.sqrt(N_IN)
    b1 = 0.1 * rng.standard_normal(N_HIDDEN)
    W2 = rng.standard_normal((N_HIDDEN, 1)) / np.sqrt(N_HIDDEN)
    b2 = 0.1 * rng.standard_normal(1)
    return (W1, b1, W2, b2), rng.standard_normal((BATCH, N_IN)), rng.standard_normal(BATCH)


WORKLOADS = [
    Workload(
        name="records_dataclass_loop",
        title=f"dataclass particle, p = p.step(dt) {STEPS} times, wrt v0",
        fn=dataclass_flight,
        make_args=particle_args,
        wrt=0,
        hand=dataclass_hand,
        target=30.0,
    ),
    Workload(
        name="records_plain_loop",
        title=f"plain-class particle, p = p.step(dt) {STEPS} times, wrt v0",
        fn=plain_flight,
        make_args=particle_args,
        wrt=0,
        hand=plain_hand,
        target=30.0,
    ),
    Workload(
        name="records_dense_mlp",
        title=f"2-layer MLP of Dense objects, {BATCH}x{N_IN}-{N_HIDDEN}-1, wrt params tuple",
        fn=dense_loss,
        make_args=dense_args,
        wrt=0,
        hand=dense_hand,
    ),
]
