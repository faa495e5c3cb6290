"""Writes into local arrays (issue 11): gradient time as a ratio to the primal, one run.

Run: ``python benchmarks/bench_mutation.py [--quick]``. Four workloads, each written as
NumPy code that fills or updates an array in place:

* fill loop ``out[i] = f(x[i])``, n = 1000;
* recurrence ``y[t] = a * y[t-1] + x[t]``, n = 1000;
* 2-D five-point Gauss-Seidel in place on 64x64, 20 sweeps (vectorized over rows);
* ``acc[idx] += v`` in a loop (repeated indices), 200 steps into 50 bins.

Times are the process's CPU time (``time.process_time``) by default: on a machine shared
by several jobs, wall-clock time counts the waits for a core, which change between the
primal's and the gradient's measurements; ``--wall`` measures wall-clock time instead.
Prints the primal time, pullback's ``grad`` time and their ratio (target <= 4x), the peak
memory one gradient call allocates (tracemalloc), and beside it autograd (cannot express
in-place writes: skipped), JAX (``.at[]``, eager) and torch (in-place ops) when importable
(never required). Every gradient is checked against central finite differences along a
random direction first. Last, the fill loop's peak memory at n and 4n: O(n) means about 4x.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import timeit
import tracemalloc

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
import pullback  # noqa: E402

TARGET = 4.0
CLOCK = {"timer": time.process_time}  # main() sets it from --wall


def fill(x):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = np.sin(x[i]) * x[i]
    return np.sum(out * out)


def recurrence(x):
    y = np.zeros(x.shape[0])
    y[0] = x[0]
    for t in range(1, x.shape[0]):
        y[t] = 0.9 * y[t - 1] + x[t]
    return np.sum(y * y)


def gauss_seidel(x):
    # Row by row in place: each row update reads the row above as already updated.
    g = x.copy()
    for _ in range(20):
        for i in range(1, g.shape[0] - 1):
            g[i, 1:-1] = 0.25 * (g[i - 1, 1:-1] + g[i + 1, 1:-1] + g[i, :-2] + g[i, 2:])
    return np.sum(g * g)


IDX = np.random.default_rng(0).integers(0, 50, size=(200, 4))


def scatter(x):
    acc = np.zeros(50)
    for k in range(200):
        acc[IDX[k]] += x[k] * x[k]
    return np.sum(acc * acc)


WORKLOADS = [
    ("fill loop out[i] = f(x[i]), n=1000", fill, lambda rng: rng.standard_normal(1000)),
    ("recurrence y[t] = a*y[t-1] + x[t], n=1000", recurrence, lambda rng: rng.random(1000)),
    ("Gauss-Seidel 64x64, 20 sweeps", gauss_seidel, lambda rng: rng.random((64, 64))),
    ("acc[idx] += v in a loop, 200 steps", scatter, lambda rng: rng.standard_normal(200)),
]


def best(fn, args, repeat):
    fn(*args)
    t = timeit.Timer(lambda: fn(*args), **CLOCK)
    n, _ = t.autorange()
    return min(t.repeat(repeat, max(1, n // 5))) / max(1, n // 5)


def best_pair(f, g, args, repeat):
    """The best times of ``f`` and ``g``, measured in alternation (on a shared machine the
    load changes between two separate measurements; alternating exposes both to it)."""
    f(*args)
    g(*args)
    timers = [timeit.Timer(lambda: f(*args), **CLOCK), timeit.Timer(lambda: g(*args), **CLOCK)]
    numbers = [max(1, t.autorange()[0] // 5) for t in timers]
    best_times = [float("inf"), float("inf")]
    for _ in range(3 * repeat):
        for k in (0, 1):
            best_times[k] = min(best_times[k], timers[k].timeit(numbers[k]) / numbers[k])
    return best_times


def peak_kib(fn, args):
    """Peak memory (KiB) that one call of ``fn`` allocates, by tracemalloc."""
    fn(*args)
    tracemalloc.start()
    try:
        fn(*args)
        return tracemalloc.get_traced_memory()[1] / 1024
    finally:
        tracemalloc.stop()


def fd_error(f, g, x, rng, h=1e-6):
    v = rng.standard_normal(x.shape)
    fd = (f(x + h * v) - f(x - h * v)) / (2 * h)
    got = float(np.sum(g * v))
    return abs(fd - got) / max(abs(fd), abs(got), 1e-8)


def jax_version(name):
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)

    def fill_j(x):
        out = jnp.zeros(x.shape[0])
        for i in range(x.shape[0]):
            out = out.at[i].set(jnp.sin(x[i]) * x[i])
        return jnp.sum(out * out)

    def recurrence_j(x):
        y = jnp.zeros(x.shape[0])
        y = y.at[0].set(x[0])
        for t in range(1, x.shape[0]):
            y = y.at[t].set(0.9 * y[t - 1] + x[t])
        return jnp.sum(y * y)

    def scatter_j(x):
        acc = jnp.zeros(50)
        for k in range(200):
            acc = acc.at[IDX[k]].set(acc[IDX[k]] + x[k] * x[k])  # buffered, as NumPy
        return jnp.sum(acc * acc)

    # Gauss-Seidel is left out: eager JAX takes minutes (and GBs) on its 1240 row updates.
    fns = {
        "fill": fill_j,
        "recurrence": recurrence_j,
        "scatter": scatter_j,
    }
    return jax.grad(fns[name]) if name in fns else None


def torch_version(name):
    try:
        import torch
    except ImportError:
        return None

    def fill_t(x):
        out = torch.zeros(x.shape[0], dtype=x.dtype)
        for i in range(x.shape[0]):
            out[i] = torch.sin(x[i]) * x[i]
        return torch.sum(out * out)

    def recurrence_t(x):
        y = torch.zeros(x.shape[0], dtype=x.dtype)
        y[0] = x[0]
        for t in range(1, x.shape[0]):
            y[t] = 0.9 * y[t - 1] + x[t]
        return torch.sum(y * y)

    def gauss_seidel_t(x):
        g = x.clone()
        for _ in range(20):
            for i in range(1, g.shape[0] - 1):
                g[i, 1:-1] = 0.25 * (g[i - 1, 1:-1] + g[i + 1, 1:-1] + g[i, :-2] + g[i, 2:])
        return torch.sum(g * g)

    def scatter_t(x):
        acc = torch.zeros(50, dtype=x.dtype)
        idx = torch.tensor(IDX)
        for k in range(200):
            acc[idx[k]] += x[k] * x[k]
        return torch.sum(acc * acc)

    fns = {
        "fill": fill_t,
        "recurrence": recurrence_t,
        "gauss_seidel": gauss_seidel_t,
        "scatter": scatter_t,
    }
    if name not in fns:
        return None

    def grad_t(x):
        xt = torch.tensor(x, requires_grad=True)
        fns[name](xt).backward()
        return xt.grad.numpy()

    return grad_t


PEERS = (("jax", jax_version), ("torch", torch_version))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--no-peers", action="store_true", help="skip JAX and torch")
    parser.add_argument("--wall", action="store_true", help="wall-clock time, not CPU time")
    parser.add_argument("--lists", action="store_true", help="only the local-list rows")
    args = parser.parse_args(argv)
    CLOCK["timer"] = time.perf_counter if args.wall else time.process_time
    print(f"clock: {'wall (perf_counter)' if args.wall else 'CPU time of this process'}")
    repeat = 2 if args.quick else 5
    rng = np.random.default_rng(1)
    if args.lists:
        return list_rows(repeat, rng)
    rows = []
    for label, f, make in WORKLOADS:
        x = make(rng)
        g = pullback.grad(f)
        err = fd_error(f, g(x), x, rng)
        if err > 1e-5:
            raise SystemExit(f"{label}: gradient differs from finite differences ({err:.2e})")
        primal, gradient = best_pair(f, g, (x,), repeat)
        peers = []
        for peer, make_peer in () if args.no_peers else PEERS:
            pg = make_peer(f.__name__)
            if pg is not None:
                peers.append(f"{peer} {best(pg, (x,), 1) / primal:.1f}x")
        peak = peak_kib(g, (x,))
        rows.append((label, primal, gradient, gradient / primal, peak, "; ".join(peers) or "-"))
        print(rows[-1], flush=True)  # progress: the peers may take minutes
    print(f"{'workload':45} {'primal':>10} {'grad':>10} {'ratio':>7}  target  {'peak':>9}  peers")
    for label, primal, gradient, ratio, peak, peers in rows:
        verdict = "PASS" if ratio <= TARGET else "MISS"
        print(
            f"{label:45} {primal * 1e3:8.2f}ms {gradient * 1e3:8.2f}ms {ratio:6.2f}x"
            f"  {verdict:6}  {peak:6.0f}KiB  {peers}"
        )
    print("autograd: cannot express writes into arrays (refuses item assignment)")
    g = pullback.grad(fill)
    small, large = (peak_kib(g, (rng.standard_normal(n),)) for n in (4000, 16000))
    print(
        f"fill loop peak memory: n=4000 {small:.0f} KiB, n=16000 {large:.0f} KiB "
        f"({large / small:.1f}x for 4x the entries; O(n^2) would be 16x)"
    )
    list_rows(repeat, rng)


# -- local lists (issue 11): the same fill loop with a list ------------------------------
def list_store(x):
    lst = [0.0] * x.shape[0]
    for i in range(x.shape[0]):
        lst[i] = np.sin(x[i]) * x[i]
    return np.sum(np.array(lst) ** 2)


def list_append(x):
    lst = []
    for i in range(x.shape[0]):
        lst.append(np.sin(x[i]) * x[i])
    return np.sum(np.array(lst) ** 2)


def list_rows(repeat, rng):
    """The list fill loop, n = 1000: item stores (in place, O(1) a store) against appends,
    each as the ratio of its gradient to its own primal, checked against finite
    differences first."""
    x = rng.standard_normal(1000)
    print(f"{'list fill loop, n=1000':45} {'primal':>10} {'grad':>10} {'ratio':>7}  target")
    for label, f in (("lst[i] = f(x[i])", list_store), ("lst.append(f(x[i]))", list_append)):
        g = pullback.grad(f)
        err = fd_error(f, g(x), x, rng)
        if err > 1e-5:
            raise SystemExit(f"{label}: gradient differs from finite differences ({err:.2e})")
        primal, gradient = best_pair(f, g, (x,), repeat)
        ratio = gradient / primal
        verdict = "PASS" if ratio <= TARGET else "MISS"
        times = f"{primal * 1e3:8.2f}ms {gradient * 1e3:8.2f}ms"
        print(f"  {label:43} {times} {ratio:6.2f}x  {verdict}")


if __name__ == "__main__":
    main()
