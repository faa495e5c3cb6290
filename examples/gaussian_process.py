"""Fit a Gaussian process's kernel hyperparameters by maximizing the marginal
likelihood: ``scipy.stats.multivariate_normal.logpdf`` of the data under the kernel's
covariance, differentiated by pullback with respect to the (log) hyperparameters, and
L-BFGS-B from SciPy.

    python examples/gaussian_process.py

Kernel: k(x, x') = sf^2 exp(-(x - x')^2 / (2 ell^2)) + sn^2 [x = x'], with
theta = (log ell, log sf, log sn).

Needs: pip install "pullback[examples]"   (SciPy)
"""

import numpy as np
import scipy.optimize as so
from scipy.stats import multivariate_normal

from pullback import value_and_grad


def covariance(theta, x):
    ell, sf, sn = np.exp(theta[0]), np.exp(theta[1]), np.exp(theta[2])
    d = x[:, None] - x[None, :]
    return sf * sf * np.exp(-0.5 * d * d / (ell * ell)) + sn * sn * np.eye(x.shape[0])


def negative_log_marginal_likelihood(theta, x, y):
    cov = covariance(theta, x)
    return -multivariate_normal.logpdf(y, np.zeros(x.shape[0]), cov)


def make_data(n, seed=0):
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(-3.0, 3.0, n))
    return x, np.sin(2.0 * x) + 0.1 * rng.standard_normal(n)


def fit(n=40, start=(0.0, 0.0, -1.0), seed=0):
    """Returns (fitted theta, optimizer result, data)."""
    x, y = make_data(n, seed)
    result = so.minimize(
        value_and_grad(negative_log_marginal_likelihood),
        np.array(start),
        args=(x, y),
        jac=True,
        method="L-BFGS-B",
    )
    return result.x, result, (x, y)


def main():
    theta, result, _ = fit()
    ell, sf, sn = np.exp(theta)
    print(f"length scale {ell:.3f}, signal sd {sf:.3f}, noise sd {sn:.3f} (data noise 0.1)")
    print(f"negative log marginal likelihood {result.fun:.3f} after {result.nit} iterations")
    return theta


if __name__ == "__main__":
    main()
