"""Probe: Gaussian and Gaussian-mixture log-likelihoods in the styles tutorials use.

Densities written out with ``det`` and ``inv``, with ``slogdet``, with a loop over the
samples and the components accumulating a mixture, and a column-wise log-density summed
over the data. Gradients (and for some jvp, hvp and the Hessian) are checked against
central differences (probe_harness.py).
"""

import numpy as np
from probe_harness import probe_tests


def bell(x, centre=0.0, width=1.0):
    return np.exp(-0.5 * ((x - centre) / width) ** 2) / (width * np.sqrt(2.0 * np.pi))


def gauss_nd(point, centre, cov):
    dim = len(point)
    offset = point - centre
    norm_const = 1.0 / np.sqrt((2.0 * np.pi) ** dim * np.linalg.det(cov))
    return norm_const * np.exp(-0.5 * offset.T @ np.linalg.inv(cov) @ offset)


def mixture_density(point, weights, centres, covs):
    total = 0
    for j in range(len(weights)):
        total += weights[j] * gauss_nd(point, centres[j], covs[j])
    return total


def mean_log_mixture(points, weights, centres, covs):
    tiny = 1e-9
    acc = 0
    for p in points:
        acc += np.log(mixture_density(p, weights, centres, covs) + tiny)
    return acc / len(points)


def mixture_by_centres(centres, points, weights, covs):
    return mean_log_mixture(points, weights, centres, covs)


def mixture_by_covs(covs, points, weights, centres):
    return mean_log_mixture(points, weights, centres, covs)


def bell_by_width(width, xs):
    return np.sum(np.log(bell(xs, 0.3, width)))


def gauss_row(x, centre, cov):
    # the density of a row vector against a row mean, dot products on both sides
    dim = centre.shape[0]
    quad = np.dot(np.dot(x - centre, np.linalg.inv(cov)), (x - centre).T)
    return np.exp(-0.5 * quad) / ((2 * np.pi) ** (dim / 2) * np.linalg.det(cov) ** 0.5)


def mixture_loglik_loops(n_points, n_parts, data, centres, covs, weights):
    total = 0
    for a in range(n_points):
        mix = 0
        for b in range(n_parts):
            mix += weights[b] * gauss_row(data[a], centres[b, :], covs[b, :, :])
        total += np.log(mix)
    return total


def loops_by_centres(centres, data, covs, weights):
    return mixture_loglik_loops(len(data), len(weights), data, centres, covs, weights)


def loops_by_weights(weights, data, centres, covs):
    return mixture_loglik_loops(len(data), len(weights), data, centres, covs, weights)


def column_logpdf(cols, centre, cov):
    # one log-density per column of ``cols``; slogdet for the normaliser
    prec = np.linalg.inv(cov)
    diff = cols - centre
    _, logdet = np.linalg.slogdet(cov)
    return (-0.5 * cols.shape[0] * np.log(2 * np.pi) - 0.5 * logdet
            - 0.5 * (diff * (prec @ diff)).sum(0))


def columns_by_centre(centre, cols, cov):
    return column_logpdf(cols, centre, cov).sum()


def columns_by_cov(cov, cols, centre):
    return column_logpdf(cols, centre, cov).sum()


_g = np.random.default_rng(17)
PTS = _g.standard_normal((6, 2))
CENTRES = np.array([[0.2, 0.4], [0.9, -0.6]])
COVS = np.array([np.eye(2), np.array([[0.9, 0.25], [0.25, 0.7]])])
WEIGHTS = np.array([0.35, 0.65])
COL_MEAN = np.array([[0.15], [-0.1]])

PROBES = {
    "mixture_by_centres": (mixture_by_centres, (CENTRES, PTS, WEIGHTS, COVS), True),
    "mixture_by_covs": (mixture_by_covs, (COVS, PTS, WEIGHTS, CENTRES), False),
    "bell_by_width": (bell_by_width, (0.8, PTS[:, 0]), True),
    "loops_by_centres": (loops_by_centres, (CENTRES, PTS, COVS, WEIGHTS), True),
    "loops_by_weights": (loops_by_weights, (WEIGHTS, PTS, CENTRES, COVS), False),
    "columns_by_centre": (columns_by_centre, (COL_MEAN, PTS.T, COVS[1]), True),
    "columns_by_cov": (columns_by_cov, (COVS[1], PTS.T, COL_MEAN), False),
}


test_probe, test_float32 = probe_tests(PROBES)
