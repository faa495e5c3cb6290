"""Hessians and Hessian-vector products of the vectorized Rosenbrock function (n = 100).

Run: ``python benchmarks/hessian.py [--quick]``. Times, in one process, the primal, the
gradient, pullback's ``hvp`` (reverse over reverse) and ``hessian`` (one batched reverse
sweep of the generated gradient carrying all 100 basis directions, as a band of a few
diagonals: see pullback.band_stack), a hand-written Hessian,
and where installed autograd's ``hessian`` and JAX's ``jax.hessian`` (eager and jitted;
compile time reported apart). Prints each as a time and as a ratio; targets: hvp / gradient
<= 3, pullback's Hessian within 2x of autograd's time or better, and <= 30x one hand-written
gradient (issue 13). The Hessian's time is then split into its three sweeps: the forward
sweep of the gradient's adjoint, the batched reverse sweep, and the one ordinary reverse
sweep that checks the batched result (see pullback.batched), and the rest.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import timeit

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
import pullback  # noqa: E402

N = 100


def rosen(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def hand_hessian(x):
    H = np.zeros((len(x), len(x)))
    head, tail = x[:-1], x[1:]
    idx = np.arange(len(x) - 1)
    H[idx, idx] += 1200.0 * head**2 - 400.0 * tail + 2.0
    H[idx + 1, idx + 1] += 200.0
    H[idx, idx + 1] = -400.0 * head
    H[idx + 1, idx] = -400.0 * head
    return H


def hand_gradient(x):
    g = np.zeros_like(x)
    head, tail = x[:-1], x[1:]
    inner = tail - head**2
    g[:-1] = -400.0 * head * inner - 2.0 * (1.0 - head)
    g[1:] += 200.0 * inner
    return g


def breakdown(hess_f, x, quick):
    """The three sweeps of one ``hessian(f)(x)``, timed apart."""
    from pullback import batched
    from pullback.api import vjp_resolved
    from pullback.diagonal_stack import identity_stack

    hess_f = hess_f._scalar  # what a scalar output runs: jacobian(grad(f))

    def forward():
        return vjp_resolved(hess_f.fn, (x,), {}, hess_f.names, hess_f.single, None, [x])

    _, back = forward()
    basis = identity_stack(x.shape, x.dtype)
    cots = batched._batched_cotangents(back, basis, (x.size,))
    return [
        ("forward sweep of the gradient's adjoint", best(forward, quick)),
        (
            "batched reverse sweep (100 directions)",
            best(lambda: batched._batched_cotangents(back, basis, (x.size,)), quick),
        ),
        (
            "checking sweep (one ordinary pullback)",
            best(lambda: batched._agrees(back, basis, cots), quick),
        ),
    ]


def best(f, quick):
    number = 1
    while True:
        t = timeit.timeit(f, number=number)
        if t > (0.02 if quick else 0.1) or number > 10**6:
            break
        number *= 4
    return min(timeit.repeat(f, number=number, repeat=3 if quick else 7)) / number


def fmt(t):
    return f"{t * 1e6:9.1f} us" if t < 1e-3 else f"{t * 1e3:9.2f} ms"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    opts = parser.parse_args(argv)
    x = np.random.default_rng(0).uniform(-1.5, 1.5, N)
    v = np.random.default_rng(1).normal(size=N)

    grad_f = pullback.grad(rosen)
    hvp_f = pullback.hvp(rosen)
    hess_f = pullback.hessian(rosen)
    np.testing.assert_allclose(hess_f(x), hand_hessian(x), rtol=1e-12)
    np.testing.assert_allclose(hvp_f(x, v), hand_hessian(x) @ v, rtol=1e-12)
    np.testing.assert_allclose(grad_f(x), hand_gradient(x), rtol=1e-12)

    rows = []
    t_primal = best(lambda: rosen(x), opts.quick)
    t_grad = best(lambda: grad_f(x), opts.quick)
    t_hvp = best(lambda: hvp_f(x, v), opts.quick)
    t_hess = best(lambda: hess_f(x), opts.quick)
    t_hand = best(lambda: hand_hessian(x), opts.quick)
    rows += [
        ("primal", t_primal, ""),
        ("pullback grad", t_grad, f"{t_grad / t_primal:.2f}x primal"),
        ("pullback hvp", t_hvp, f"{t_hvp / t_grad:.2f}x grad (target <= 3)"),
        ("pullback hessian", t_hess, f"{t_hess / t_grad:.1f}x grad"),
        ("hand-written hessian", t_hand, ""),
    ]
    t_autograd = None
    try:
        import autograd
        import autograd.numpy as anp

        def arosen(x):
            return anp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)

        ah = autograd.hessian(arosen)
        np.testing.assert_allclose(ah(x), hand_hessian(x), rtol=1e-10)
        t_autograd = best(lambda: ah(x), opts.quick)
        rows.append(("autograd hessian", t_autograd, ""))
    except ImportError:
        rows.append(("autograd", None, "not installed"))
    try:
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)

        def jrosen(x):
            return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)

        jh = jax.hessian(jrosen)
        xj = jnp.asarray(x)
        np.testing.assert_allclose(np.asarray(jh(xj)), hand_hessian(x), rtol=1e-10)
        rows.append(("jax.hessian (eager)", best(lambda: jh(xj).block_until_ready(), True), ""))
        jj = jax.jit(jax.hessian(jrosen))
        start = time.perf_counter()
        jj(xj).block_until_ready()
        compile_time = time.perf_counter() - start
        rows.append(
            (
                "jax.jit(jax.hessian)",
                best(lambda: jj(xj).block_until_ready(), opts.quick),
                f"first call (trace + compile) {compile_time * 1e3:.0f} ms",
            )
        )
    except ImportError:
        rows.append(("jax", None, "not installed"))

    print(f"Vectorized Rosenbrock, n = {N}: Hessian {N}x{N} and Hessian-vector products")
    for name, t, note in rows:
        shown = fmt(t) if t is not None else " " * 12
        print(f"  {name:24s} {shown}   {note}")
    print("  where the Hessian's time goes:")
    parts = breakdown(hess_f, x, opts.quick)
    parts.append(("the rest (lookups, the dense result)", t_hess - sum(t for _, t in parts)))
    for name, t in parts:
        print(f"    {name:40s} {fmt(t)}   {t / t_hess:5.0%}")
    ratio_hand = t_hess / best(lambda: hand_gradient(x), opts.quick)
    verdict = "PASS" if ratio_hand <= 30.0 else "MISS"
    print(
        f"  pullback hessian / hand-written gradient = {ratio_hand:.1f}x (target <= 30): {verdict}"
    )
    if t_autograd is not None:
        ratio = t_hess / t_autograd
        verdict = "PASS" if ratio <= 2.0 else "MISS"
        print(f"  pullback hessian / autograd hessian = {ratio:.2f}x (target <= 2): {verdict}")
    verdict = "PASS" if t_hvp / t_grad <= 3.0 else "MISS"
    print(f"  hvp / grad = {t_hvp / t_grad:.2f}x (target <= 3): {verdict}")


if __name__ == "__main__":
    main()
