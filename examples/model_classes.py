"""Model and physics code written as plain classes, differentiated as it is.

The objects are built inside the differentiated function from the parameters: each class's
``__init__`` is transformed (every attribute it stores is a differentiable field) and its
methods, ``__call__`` and properties are differentiated with ``self`` carrying the gradient.

Needs: pip install pullback   (no extra)
"""

import numpy as np

from pullback import grad, hessian
from pullback.testing import check_grads


class Dense:
    def __init__(self, W, b, activation=np.tanh):
        self.W = W
        self.b = b
        self.activation = activation

    def __call__(self, x):
        y = x @ self.W + self.b
        return y if self.activation is None else self.activation(y)


class MLP:
    def __init__(self, sizes, theta):
        self.layers = []
        start = 0
        for k in range(len(sizes) - 1):
            n_in, n_out = sizes[k], sizes[k + 1]
            W = theta[start : start + n_in * n_out].reshape(n_in, n_out)
            start = start + n_in * n_out
            b = theta[start : start + n_out]
            start = start + n_out
            last = k == len(sizes) - 2
            self.layers.append(Dense(W, b, None if last else np.tanh))

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def mlp_loss(theta, x, y):
    model = MLP((2, 4, 1), theta)
    return np.mean((model(x)[:, 0] - y) ** 2)


class Particle:
    G = 9.81

    def __init__(self, pos, vel, mass=1.0):
        self.pos = pos
        self.vel = vel
        self.mass = mass

    @property
    def kinetic(self):
        return 0.5 * self.mass * np.sum(self.vel**2)

    def energy(self):
        return self.kinetic + self.mass * self.G * self.pos[1]

    def step(self, dt):
        accel = np.array([0.0, -self.G])
        return Particle(self.pos + dt * self.vel, self.vel + dt * accel, self.mass)


def landing_distance(v0):
    p = Particle(np.zeros(2), v0)
    for _ in range(20):
        p = p.step(0.05)
    return p.pos[0] ** 2 + p.energy()


def main():
    rng = np.random.default_rng(0)
    theta = rng.normal(size=2 * 4 + 4 + 4 * 1 + 1) * 0.5
    x, y = rng.normal(size=(16, 2)), rng.normal(size=16)
    g = grad(mlp_loss)(theta, x, y)
    print("d loss / d theta:", np.round(g[:4], 6), "...", g.shape)
    check_grads(mlp_loss, theta, x, y)

    v0 = np.array([3.0, 4.0])
    print("d distance / d v0:", grad(landing_distance)(v0))
    print("hessian:", hessian(landing_distance)(v0).round(6).tolist())


if __name__ == "__main__":
    main()
