"""Fit a damped, driven oscillator's three parameters to noisy data: the model is
solved by SciPy's ``solve_ivp`` and its gradient comes from pullback's adjoint rule
(the adjoint system solved backwards with the same solver), not by differentiating
the solver's steps.

    python examples/fit_ode_solve_ivp.py              # fit and print the result
    python examples/fit_ode_solve_ivp.py fit.png      # also plot (if matplotlib is installed)

Model: y'' = -k y - c y' + a sin(t), y(0) = 1, y'(0) = 0; parameters p = (k, c, a).

Needs: pip install "pullback[examples]"   (SciPy; matplotlib for the plot)
"""

import sys

import numpy as np
import scipy.integrate as si
import scipy.optimize as so

from pullback import value_and_grad

TRUE = np.array([2.0, 0.3, 0.8])
Y0 = np.array([1.0, 0.0])


def oscillator(t, y, p):
    """The right-hand side, differentiated by pullback inside the adjoint rule."""
    return np.array([y[1], -p[0] * y[0] - p[1] * y[1] + p[2] * np.sin(t)])


def simulate(p, times):
    sol = si.solve_ivp(
        oscillator, (0.0, times[-1]), Y0, t_eval=times, args=(p,), rtol=1e-8, atol=1e-8
    )
    return sol.y[0]


def loss(p, times, observed):
    """Mean squared misfit of the position; solve_ivp(...).y carries the gradient."""
    sol = si.solve_ivp(
        oscillator, (0.0, times[-1]), Y0, t_eval=times, args=(p,), rtol=1e-8, atol=1e-8
    )
    r = sol.y[0] - observed
    return np.mean(r * r)


def make_data(n, noise=0.05, seed=0):
    times = np.linspace(0.0, 10.0, n)
    rng = np.random.default_rng(seed)
    return times, simulate(TRUE, times) + noise * rng.standard_normal(n)


def fit(n=60, start=(1.0, 1.0, 0.0), seed=0):
    """Fit by BFGS with the exact gradient; returns (parameters, optimizer result, data)."""
    times, observed = make_data(n, seed=seed)
    objective = value_and_grad(loss)
    result = so.minimize(
        objective, np.array(start), args=(times, observed), jac=True, method="BFGS"
    )
    return result.x, result, (times, observed)


def plot(path, p, times, observed):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot")
        return False
    fine = np.linspace(0.0, times[-1], 400)
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.plot(times, observed, ".", label="data")
    ax.plot(fine, simulate(p, fine), label="fit")
    ax.plot(fine, simulate(TRUE, fine), "--", label="truth")
    ax.set_xlabel("t")
    ax.set_ylabel("y")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    p, result, (times, observed) = fit()
    print(f"true (k, c, a)   = {TRUE}")
    print(f"fitted (k, c, a) = {np.round(p, 4)}  ({result.nit} iterations, loss {result.fun:.5f})")
    if argv:
        plot(argv[0], p, times, observed)
    return p


if __name__ == "__main__":
    main()
