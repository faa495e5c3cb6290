"""Gradients of ordinary NumPy code: a decorator, several arguments, containers.

Needs: pip install pullback   (no extra)
"""

import numpy as np

from pullback import grad, value_and_grad, vjp


@grad
def loss(w, x, y):
    p = np.tanh(x @ w)
    return np.mean((p - y) ** 2)


def mlp(params, x):
    h = np.tanh(x @ params["w1"] + params["b1"])
    return np.sum((h @ params["w2"]) ** 2)


def main():
    rng = np.random.default_rng(0)
    w, x, y = rng.normal(size=3), rng.normal(size=(8, 3)), rng.normal(size=8)
    print("d loss / d w =", loss(w, x, y))

    value, (gw, gy) = value_and_grad(loss.__wrapped__, wrt=("w", "y"))(w, x, y)
    print("loss =", round(float(value), 6), " d/dy shape:", gy.shape)

    params = {"w1": rng.normal(size=(3, 4)), "b1": np.zeros(4), "w2": rng.normal(size=(4, 2))}
    g = grad(mlp)(params, x)
    print("gradient of a dict of parameters has keys", sorted(g))

    out, back = vjp(lambda a: np.sin(a) * a, np.linspace(0.0, 1.0, 4))
    print("vjp with ones:", back(np.ones(4)))


if __name__ == "__main__":
    main()
