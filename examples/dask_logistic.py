"""Out-of-core logistic regression: pullback's gradient of a plain NumPy loss on Dask
arrays, fitted with scipy.optimize.minimize(..., jac=True).

The data are generated chunk by chunk with dask.array.random and never held in memory
as a whole: each value-and-gradient call builds one lazy Dask graph (pullback's forward
and reverse sweeps), and one ``dask.compute`` streams the chunks through it. Prints the
time per gradient, the peak memory of the process, and a comparison with dask-glm's
hand-written gradient when dask-glm is installed.

    python examples/dask_logistic.py                 # 20 000 rows (seconds)
    python examples/dask_logistic.py --rows 20000000 # 1.6 GB of data
    # 30 GB of rows, more than this machine's memory, on 2 worker processes:
    python examples/dask_logistic.py --rows 375000000 --chunk 1000000 --workers 2 --maxiter 2

Needs: pip install "pullback[dask,examples]"   (Dask; SciPy; dask-glm optional, for the comparison)
"""

from __future__ import annotations

import argparse
import contextlib
import resource
import time

import numpy as np

from pullback import value_and_grad


def loss(w, X, y, l2):
    """The logistic negative log-likelihood (labels y in {0, 1}) plus an L2 penalty."""
    z = X @ w
    return np.sum(np.logaddexp(0.0, z)) - np.dot(y, z) + 0.5 * l2 * np.sum(w * w)


def make_data(rows, features, chunk, seed=0):
    """Lazy data: X of shape (rows, features) in row chunks, labels from a known w."""
    import dask.array as da

    rng = da.random.default_rng(seed)
    X = rng.normal(size=(rows, features), chunks=(chunk, features))
    w_true = np.linspace(-1.0, 1.0, features)
    noise = rng.normal(size=rows, chunks=chunk)
    y = (X @ w_true + noise > 0).astype(np.float64)
    return X, y, w_true


def peak_memory_mb() -> float:
    """The peak resident memory of this process (Linux reports kilobytes)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def workers_peak_memory_mb(client) -> dict:
    """The peak resident memory of each worker process of a distributed ``client``."""
    if client is None:
        return {}
    peaks = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    return {address: kb / 1024.0 for address, kb in peaks.items()}


def fit(X, y, l2=1e-3, maxiter=None):
    """Minimize ``loss`` with L-BFGS-B (at most ``maxiter`` iterations when given);
    returns (result, seconds per gradient)."""
    import dask
    from scipy.optimize import minimize

    value_and_gradient = value_and_grad(loss)
    seconds = []

    def fun(w):
        start = time.perf_counter()
        value, g = value_and_gradient(w, X, y, l2)  # lazy: a graph, nothing computed
        value, g = dask.compute(value, g)  # one pass over the chunks for both
        seconds.append(time.perf_counter() - start)
        print(f"  value and gradient {len(seconds)}: {seconds[-1]:.1f} s", flush=True)
        return float(value), np.asarray(g)

    options = {} if maxiter is None else {"maxiter": maxiter}
    result = minimize(fun, np.zeros(X.shape[1]), jac=True, method="L-BFGS-B", options=options)
    return result, seconds


def compare_with_dask_glm(X, y, w):
    """dask-glm's hand-written logistic loss and gradient at ``w`` next to pullback's
    (no penalty); ``None`` when dask-glm is not installed."""
    try:
        from dask_glm.families import Logistic
    except ImportError:
        return None
    import dask

    start = time.perf_counter()
    ours = dask.compute(*value_and_grad(loss)(w, X, y, 0.0))
    t_ours = time.perf_counter() - start
    start = time.perf_counter()
    theirs = dask.compute(Logistic.pointwise_loss(w, X, y), Logistic.pointwise_gradient(w, X, y))
    t_theirs = time.perf_counter() - start
    return {
        "value_difference": abs(float(ours[0]) - float(theirs[0])),
        "max_gradient_difference": float(np.max(np.abs(ours[1] - theirs[1]))),
        "seconds_pullback": t_ours,
        "seconds_dask_glm": t_theirs,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--features", type=int, default=10)
    parser.add_argument("--chunk", type=int, default=5_000)
    parser.add_argument("--maxiter", type=int, default=None, help="L-BFGS-B iterations")
    parser.add_argument(
        "--workers", type=int, default=0, help="worker processes of a LocalCluster (0: threads)"
    )
    opts = parser.parse_args(argv)
    try:
        import dask  # noqa: F401
    except ImportError:
        print('This example needs Dask: pip install "pullback[dask]"')
        return None

    with _scheduler(opts.workers) as client:
        return _run(opts, client)


@contextlib.contextmanager
def _scheduler(workers):
    """A LocalCluster of ``workers`` single-threaded processes and its client, or Dask's
    default threaded scheduler (and ``None``) for ``workers == 0``."""
    if workers <= 0:
        yield None
        return
    from dask.distributed import Client, LocalCluster

    with (
        LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1")
        as cluster,
        Client(cluster) as client,
    ):
        yield client


def _run(opts, client):
    X, y, w_true = make_data(opts.rows, opts.features, opts.chunk)
    data_mb = X.nbytes / 2**20
    result, seconds = fit(X, y, maxiter=opts.maxiter)
    print(
        f"{opts.rows} rows x {opts.features} features ({data_mb:.0f} MB of data, "
        f"chunks of {opts.chunk} rows)"
    )
    print(
        f"L-BFGS-B: {result.nit} iterations, {len(seconds)} gradients, loss "
        f"{result.fun:.6f}, converged: {result.success}"
    )
    print(f"time per value-and-gradient: {np.median(seconds) * 1e3:.1f} ms (median)")
    print(f"peak memory of this process: {peak_memory_mb():.0f} MB")
    workers = workers_peak_memory_mb(client)
    if workers:
        print("peak memory of the workers:", ", ".join(f"{mb:.0f} MB" for mb in workers.values()))
    print("fitted w:", np.round(result.x, 3))
    comparison = compare_with_dask_glm(X, y, result.x)
    if comparison is not None:
        print(
            "dask-glm's hand-written gradient at the optimum: max difference "
            f"{comparison['max_gradient_difference']:.2e}; time "
            f"{comparison['seconds_dask_glm'] * 1e3:.1f} ms vs pullback "
            f"{comparison['seconds_pullback'] * 1e3:.1f} ms"
        )
    return {
        "result": result,
        "seconds": seconds,
        "w_true": w_true,
        "compare": comparison,
        "workers_mb": workers,
    }


if __name__ == "__main__":
    main()
