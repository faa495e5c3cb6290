"""Hessians and Hessian-vector products of a loss through user calls: a loop of 20 method
calls on an object holding three array fields, and the same loop through plain helpers.

Run: ``python benchmarks/hessian_calls.py [--quick]``. At second order each user call keeps a
record of the state its recompute may read (pullback.recompute_state): this measures what
that costs. Prints the primal, pullback's ``hvp`` and ``hessian`` for both forms, each as a
time and as a ratio to its primal, and autograd's beside where installed (run with
/work/peers/bin/python for the peers).
"""

from __future__ import annotations

import argparse
import os
import sys

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
sys.path.insert(0, os.path.dirname(__file__))
from hessian import best, fmt  # noqa: E402  (the timing of the Rosenbrock benchmark)

import pullback  # noqa: E402

N = 8
STEPS = 20


class Layer:
    """Three array fields a method reads; the state a recompute's record covers."""

    def __init__(self, n):
        rng = np.random.default_rng(0)
        self.w = rng.normal(size=n) * 0.3
        self.b = rng.normal(size=n) * 0.1
        self.scale = np.full(n, 0.5)

    def step(self, h):
        return np.tanh(self.w * h + self.b) * self.scale + h


LAYER = Layer(N)


def method_loss(x, layer):
    h = x
    for _ in range(STEPS):
        h = layer.step(h)
    return np.sum(h**2)


def step(h, w, b, scale):
    return np.tanh(w * h + b) * scale + h


def helper_loss(x, w, b, scale):
    h = x
    for _ in range(STEPS):
        h = step(h, w, b, scale)
    return np.sum(h**2)


def autograd_rows(x, v, quick, t_primal):
    try:
        import autograd
        import autograd.numpy as anp
    except ImportError:
        return [("autograd", None, "not installed")]
    w, b, scale = LAYER.w, LAYER.b, LAYER.scale

    def aloss(x):
        h = x
        for _ in range(STEPS):
            h = anp.tanh(w * h + b) * scale + h
        return anp.sum(h**2)

    ah = autograd.hessian(aloss)
    ahvp = autograd.hessian_vector_product(aloss)
    t_h = best(lambda: ah(x), quick)
    t_v = best(lambda: ahvp(x, v), quick)
    return [
        ("autograd hvp", t_v, f"{t_v / t_primal:.0f}x primal"),
        ("autograd hessian", t_h, f"{t_h / t_primal:.0f}x primal"),
    ]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    opts = parser.parse_args(argv)
    x = np.random.default_rng(1).normal(size=N)
    v = np.random.default_rng(2).normal(size=N)
    fields = (LAYER.w, LAYER.b, LAYER.scale)
    cases = [
        ("method calls", method_loss, (LAYER,)),
        ("plain helpers", helper_loss, fields),
    ]
    rows = []
    reference = None
    for name, loss, rest in cases:
        hess_f, hvp_f = pullback.hessian(loss), pullback.hvp(loss)
        H = hess_f(x, *rest)
        reference = H if reference is None else reference
        np.testing.assert_allclose(H, reference, rtol=1e-10)
        np.testing.assert_allclose(hvp_f(x, *rest, v), H @ v, rtol=1e-10)
        t_primal = best(lambda loss=loss, rest=rest: loss(x, *rest), opts.quick)
        t_hvp = best(lambda f=hvp_f, rest=rest: f(x, *rest, v), opts.quick)
        t_hess = best(lambda f=hess_f, rest=rest: f(x, *rest), opts.quick)
        rows += [
            (f"{name}: primal", t_primal, ""),
            (f"{name}: pullback hvp", t_hvp, f"{t_hvp / t_primal:.0f}x primal"),
            (f"{name}: pullback hessian", t_hess, f"{t_hess / t_primal:.0f}x primal"),
        ]
    rows += autograd_rows(x, v, opts.quick, rows[3][1])
    print(f"A loss through {STEPS} user calls (n = {N}): Hessian and Hessian-vector product")
    for name, t, note in rows:
        shown = fmt(t) if t is not None else " " * 12
        print(f"  {name:34s} {shown}   {note}")


if __name__ == "__main__":
    main()
