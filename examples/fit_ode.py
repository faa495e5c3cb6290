"""Fit the parameters of an ODE to noisy observations: a damped pendulum integrated by a
Python loop (classical Runge-Kutta), its gradient by pullback, L-BFGS-B from SciPy.

    python examples/fit_ode.py                    # fit and print the result
    python examples/fit_ode.py --figures DIR      # also write DIR/ode_fit.png, DIR/ode_loss.png

Needs: pip install "pullback[examples]"   (SciPy; matplotlib for --figures)

The documentation's "A worked model" page shows this file, and its figures are made by
running it while the site is built (docs/hooks.py).
"""

import argparse
import math
import time
from pathlib import Path

import numpy as np

from pullback import grad, value_and_grad

STEPS = 200  # RK4 steps over [0, T]
T = 10.0


# --8<-- [start:model]
def pendulum(theta, omega, k, c):
    """The right-hand side: theta' = omega, omega' = -k sin(theta) - c omega."""
    return omega, -k * math.sin(theta) - c * omega


def rk4_step(theta, omega, k, c, h):
    """One classical Runge-Kutta step of length h."""
    a1, b1 = pendulum(theta, omega, k, c)
    a2, b2 = pendulum(theta + 0.5 * h * a1, omega + 0.5 * h * b1, k, c)
    a3, b3 = pendulum(theta + 0.5 * h * a2, omega + 0.5 * h * b2, k, c)
    a4, b4 = pendulum(theta + h * a3, omega + h * b3, k, c)
    theta = theta + h / 6.0 * (a1 + 2.0 * a2 + 2.0 * a3 + a4)
    omega = omega + h / 6.0 * (b1 + 2.0 * b2 + 2.0 * b3 + b4)
    return theta, omega


def misfit(params, observed):
    """Mean squared distance between the simulated angle and the observed one.

    Every step of the integrator is plain Python on floats; pullback differentiates the
    whole loop (200 steps, four stages each, through two helper functions) with respect
    to ``params = (k, c)``.
    """
    k, c = params[0], params[1]
    h = T / STEPS
    theta, omega = 1.0, 0.0
    total = 0.0
    for n in range(STEPS):
        theta, omega = rk4_step(theta, omega, k, c, h)
        total = total + (theta - observed[n]) ** 2
    return total / STEPS


# --8<-- [end:model]


def trajectory(params):
    """The simulated angle at every step (for the figures; not differentiated)."""
    k, c = params
    h = T / STEPS
    theta, omega = 1.0, 0.0
    out = np.empty(STEPS)
    for n in range(STEPS):
        theta, omega = rk4_step(theta, omega, k, c, h)
        out[n] = theta
    return out


def best_time(call, repeat=5):
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best


# --8<-- [start:fit]
def fit(true=(4.0, 0.3), start=(2.0, 1.0), noise=0.05, seed=0):
    """Make noisy observations from ``true`` and fit (k, c) from ``start``."""
    from scipy.optimize import minimize

    rng = np.random.default_rng(seed)
    observed = trajectory(true) + noise * rng.normal(size=STEPS)
    history = []
    result = minimize(
        value_and_grad(misfit),
        np.array(start),
        args=(observed,),
        jac=True,
        method="L-BFGS-B",
        bounds=[(0.5, 10.0), (0.0, 2.0)],  # keeps trial steps physical (no overflow)
        callback=lambda p: history.append(misfit(p, observed)),
    )
    return observed, result, [misfit(np.array(start), observed)] + history


# --8<-- [end:fit]


def figures(folder, observed, result, history, start):
    import matplotlib

    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    t = np.linspace(T / STEPS, T, STEPS)
    fig, ax = plt.subplots(figsize=(7, 3.2))
    ax.plot(t, observed, ".", ms=3, color="0.5", label="observed (noisy)")
    ax.plot(t, trajectory(start), "--", label=f"start k={start[0]:.2f}, c={start[1]:.2f}")
    k, c = result.x
    ax.plot(t, trajectory(result.x), label=f"fitted k={k:.3f}, c={c:.3f}")
    ax.set_xlabel("time")
    ax.set_ylabel("angle")
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    fig.savefig(folder / "ode_fit.png", dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(5, 3))
    ax.semilogy(range(len(history)), history, "o-", ms=3)
    ax.set_xlabel("L-BFGS-B iteration")
    ax.set_ylabel("mean squared misfit")
    fig.tight_layout()
    fig.savefig(folder / "ode_loss.png", dpi=110)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--figures", metavar="DIR", help="write the figures into DIR")
    args = parser.parse_args(argv)

    start = (2.0, 1.0)
    observed, result, history = fit(start=start)
    k, c = result.x
    print("true      k = 4.000, c = 0.300")
    print(f"fitted    k = {k:.3f}, c = {c:.3f}   ({result.nit} iterations)")
    print(f"misfit    {history[0]:.5f} at the start, {result.fun:.5f} fitted")
    params = np.array(start)
    g = grad(misfit)
    g(params, observed)  # the first call transforms and compiles
    primal = best_time(lambda: misfit(params, observed))
    gradient = best_time(lambda: g(params, observed))
    print(f"gradient / primal time: {gradient / primal:.1f}x")
    if args.figures:
        figures(args.figures, observed, result, history, start)
        print(f"figures written to {args.figures}")


if __name__ == "__main__":
    main()
