"""What a gradient through ``np.vectorize(f)(x, c)`` costs, relative to the call itself.

    python benchmarks/vectorize.py

``f`` is a smooth scalar function of an element ``x`` and a parameter ``c`` (a float
broadcast against ``x``), applied to 2,000 elements, and the loss sums the result. The
primal is NumPy's own loop (one Python call per element). When the function is proved
elementwise (rules/_elementwise.py) the gradient is one reverse pass of ``f`` over the
broadcast arrays; otherwise one vjp per element. A second line has a function with a branch
on the value (``if t > 0``), which the proof rejects: its gradient takes the per-element
path. Each line: primal and gradient times (best of a few repeats, one process) and their
ratio, and the largest relative difference from central differences in ``c``. No target.
"""

from __future__ import annotations

import numpy as np
from calculus import best  # (a script in this directory, as this one)

from pullback import value_and_grad

N = 2000


def smooth(t, c):
    return np.exp(-c * t * t) * np.sin(3.0 * t) + c * t


def branchy(t, c):
    if t > 0:
        return np.exp(-c * t * t) * np.sin(3.0 * t)
    return c * t


SMOOTH = np.vectorize(smooth)
BRANCHY = np.vectorize(branchy)


def smooth_loss(x, c):
    return np.sum(SMOOTH(x, c))


def branchy_loss(x, c):
    return np.sum(BRANCHY(x, c))


def main():
    x = np.linspace(-1.0, 2.0, N)
    c = 0.7
    for name, loss, repeats in (
        ("np.vectorize, smooth, 2000 elements", smooth_loss, 5),
        ("np.vectorize, branch, 2000 elements", branchy_loss, 3),
    ):
        grad = value_and_grad(loss, wrt=(0, 1))
        grad(x, c)  # build the adjoints once (first-call cost is not measured)
        primal, _ = best(lambda loss=loss: loss(x, c), repeats)
        gradient, (_, (gx, gc)) = best(lambda grad=grad: grad(x, c), repeats)
        h = 1e-6
        fd = (loss(x, c + h) - loss(x, c - h)) / (2 * h)
        diff = abs(gc - fd) / max(abs(fd), 1e-8)
        print(
            f"{name:<38} primal {primal * 1e3:8.2f} ms   gradient {gradient * 1e3:9.2f} ms "
            f"= {gradient / primal:7.1f}x   rel. difference in d/dc {diff:.1e}"
        )


if __name__ == "__main__":
    main()
