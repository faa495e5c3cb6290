"""Probe: "research script" code, written the way one-off analysis scripts write it.

Module-level constants and config dicts read inside the function, helpers at module level
with keyword arguments and defaults, tuple returns unpacked by the caller, ``x = x.copy();
x[mask] = ...``, ``np.clip`` and ``np.where`` chains, boolean masks built from the input,
``for i, (a, b) in enumerate(zip(...))``, ``while err > tol and it < maxit``, string-keyed
dispatch, ``assert`` statements, f-strings, logging and print inside the function.
Gradients (and for most jvp, hvp and the Hessian) are checked against central differences
(probe_harness.py).

The module keeps its ``assert`` statements as written (PYTEST_DONT_REWRITE), so the code
that runs is the code of its source.
"""

import logging

import numpy as np
from probe_harness import probe_tests

log = logging.getLogger("probe_s29")

CONFIG = {"lr": 0.1, "reg": 1e-2, "penalty": "l2", "n_steps": 5, "eps": 1e-8}
SCALE = 2.5
WEIGHTS = np.array([1.0, 0.5, 0.25, 0.125])
BOUNDS = (-1.0, 1.0)
VERBOSE = False


def penalty(w, kind="l2", strength=CONFIG["reg"]):
    if kind == "l2":
        return strength * np.sum(w ** 2)
    elif kind == "l1":
        return strength * np.sum(np.abs(w))
    elif kind == "elastic":
        return strength * (0.5 * np.sum(w ** 2) + 0.5 * np.sum(np.abs(w)))
    raise ValueError(f"unknown penalty {kind}")


def loss_with_config(w, X, y):
    pred = X @ w
    mse = np.mean((pred - y) ** 2)
    return mse + penalty(w, kind=CONFIG["penalty"], strength=CONFIG["reg"])


def loss_dispatch(w, X, y, method="l1"):
    r = X @ w - y
    if method == "l2":
        data = np.sum(r ** 2)
    elif method == "huber":
        a = np.abs(r)
        data = np.sum(np.where(a < 1.0, 0.5 * r ** 2, a - 0.5))
    else:
        data = np.sum(np.sqrt(r ** 2 + CONFIG["eps"]))
    return data + penalty(w, "elastic")


def moments(x, ddof=1):
    m = np.mean(x)
    v = np.sum((x - m) ** 2) / (len(x) - ddof)
    return m, v


def zscore_loss(x):
    mean, var = moments(x)
    _, var0 = moments(x, ddof=0)
    z = (x - mean) / np.sqrt(var)
    return np.sum(z[:2] * WEIGHTS[:2]) + var0


def masked_assign_copy(x):
    x = x.copy()
    x[x < 0] = 0.0
    x[x > 1.5] = 1.5 + 0.1 * (x[x > 1.5] - 1.5)
    return np.sum(x ** 2 * WEIGHTS)


def clip_where_chain(x):
    lo, hi = BOUNDS
    y = np.clip(x * SCALE, lo, hi)
    y = np.where(y > 0.5, y ** 2, y)
    y = np.where(np.abs(x) < 0.05, 0.0, y)
    return np.sum(y * np.exp(x))


def boolean_mask_mean(x):
    mask = (x > 0.0) & (x < 2.0)
    if not mask.any():
        return 0.0
    inside = x[mask]
    outside = x[~mask]
    return np.mean(inside ** 2) - 0.3 * np.sum(outside)


def enumerate_zip(params, xs, ys):
    total = 0.0
    for i, (xi, yi) in enumerate(zip(xs, ys, strict=True)):
        pred = params[0] + params[1] * xi
        w = 1.0 / (1 + i)
        total += w * (pred - yi) ** 2
    return total


def gradient_descent_tol(c, tol=1e-10, maxit=200):
    # minimise (x - c)^2 + 0.1 x^4 by gradient steps until converged
    x = 0.0
    err = np.inf
    it = 0
    while err > tol and it < maxit:
        g = 2 * (x - c) + 0.4 * x ** 3
        x_new = x - CONFIG["lr"] * g
        err = abs(x_new - x)
        x = x_new
        it += 1
    return x ** 2


def fixed_point_tol(a):
    # x = cos(a x): iterate until the change is tiny
    x, err, it = 0.5, 1.0, 0
    while err > 1e-13 and it < 500:
        x_new = np.cos(a * x)
        err = np.abs(x_new - x)
        x = x_new
        it += 1
    return x


def with_asserts(x):
    assert x.ndim == 1, "expected a vector"
    assert np.all(np.isfinite(x))
    s = np.sum(x ** 2)
    assert s >= 0, f"negative norm {s}"
    return np.sqrt(s) * SCALE


def with_logging(x):
    log.debug("input %s", x)
    y = np.tanh(x)
    msg = f"mean={np.mean(y):.3f} max={y.max():.2f}"
    log.info(msg)
    if VERBOSE:
        print(msg)
    return np.sum(y * WEIGHTS)


def with_print(x, verbose=True):
    total = 0.0
    for step in range(3):
        total = total + np.sum(np.sin(x * (step + 1)))
        if verbose:
            print(f"step {step}: total={total:.4f}")
    return total


def returns_tuple(x, scale=1.0):
    return np.sum(x) * scale, np.prod(x), {"norm": np.linalg.norm(x)}


def unpack_caller(x):
    s, p, extra = returns_tuple(x, scale=SCALE)
    return s * p + extra["norm"]


def stats_dict(x):
    return {"mean": x.mean(), "std": x.std(), "max": x.max()}


def dict_results(x):
    res = stats_dict(x)
    return res["mean"] ** 2 + res["std"] + 0.1 * res["max"]


def running_config(x, cfg=None):
    cfg = cfg or {"alpha": 0.3, "steps": 4}
    alpha = cfg.get("alpha", 0.5)
    h = x
    for _ in range(cfg["steps"]):
        h = (1 - alpha) * h + alpha * np.tanh(h)
    return np.sum(h ** 2)


def kwargs_helper(x, *, power=2, center=None, normalize=False):
    if center is None:
        center = np.mean(x)
    d = (x - center) ** power
    if normalize:
        d = d / np.sum(np.abs(d))
    return d


def uses_kwargs_helper(x):
    a = kwargs_helper(x)
    b = kwargs_helper(x, power=3, center=0.5)
    c = kwargs_helper(x, normalize=True)
    return np.sum(a) + np.sum(b * WEIGHTS) + c[0]


def nan_guard(x):
    y = np.log(np.abs(x) + 1e-3)
    y = np.nan_to_num(y)
    y[np.isinf(y)] = 0.0
    return np.sum(y ** 2)


def sort_and_rank(x):
    order = np.argsort(x)
    ranked = x[order]
    top = ranked[-2:]
    return np.sum(top ** 2) + ranked[0]


def early_stopping_loop(w0, X, y):
    w = w0.copy()
    best = np.inf
    patience = 0
    for _epoch in range(CONFIG["n_steps"] * 4):
        grad = 2 * X.T @ (X @ w - y) / len(y)
        w = w - CONFIG["lr"] * grad
        loss = np.mean((X @ w - y) ** 2)
        if loss < best - 1e-4:
            best = loss
            patience = 0
        else:
            patience += 1
            if patience > 2:
                break
    return np.mean((X @ w - y) ** 2) + np.sum(w)


def string_format_keys(params):
    # parameters looked up by formatted names
    total = 0.0
    for i in range(3):
        total += params[f"w{i}"] * (i + 1) ** 2
    return total + params["w0"] * params["w2"]


def config_copy_decay(x):
    # a run's own copy of the config, its learning rate decayed in place
    cfg = dict(CONFIG)
    cfg["lr"] *= 0.5
    y = x
    for _ in range(3):
        y = y - cfg["lr"] * np.sin(y)
        cfg["lr"] *= 0.9
    return np.sum(y ** 2)


def masked_scale_copy(x):
    x = x.copy()
    x[x > 0.5] *= 0.5
    x[np.abs(x) < 0.1] = 0.0
    return np.sum(x ** 3)


_g = np.random.default_rng(2929)
Xr = _g.standard_normal((10, 4))
yr = Xr @ np.array([0.5, -1.0, 0.3, 0.8]) + 0.1 * _g.standard_normal(10)
V4 = np.array([0.3, -0.7, 1.9, 0.6])

PROBES = {
    "loss_with_config": (loss_with_config, (V4, Xr, yr), True),
    "loss_dispatch_l1": (loss_dispatch, (V4, Xr, yr), True),
    "loss_dispatch_huber": (loss_dispatch, (V4, Xr, yr, "huber"), True),
    "zscore_loss": (zscore_loss, (V4,), True),
    "masked_assign_copy": (masked_assign_copy, (V4,), True),
    "clip_where_chain": (clip_where_chain, (np.array([0.1, -0.7, 0.3, 0.02]),), True),
    "boolean_mask_mean": (boolean_mask_mean, (np.array([0.3, -0.7, 1.9, 2.6]),), True),
    "enumerate_zip": (enumerate_zip, (np.array([0.2, 1.1]), [0.0, 0.5, 1.0], [0.1, 0.7, 1.0]),
                      True),
    "gradient_descent_tol": (gradient_descent_tol, (1.3,), True),
    "fixed_point_tol": (fixed_point_tol, (0.7,), True),
    "with_asserts": (with_asserts, (V4,), True),
    "with_logging": (with_logging, (V4,), True),
    "with_print": (with_print, (V4[:2],), True),
    "unpack_caller": (unpack_caller, (V4,), True),
    "dict_results": (dict_results, (V4,), True),
    "running_config": (running_config, (V4,), True),
    "uses_kwargs_helper": (uses_kwargs_helper, (V4,), True),
    "nan_guard": (nan_guard, (V4,), True),
    "sort_and_rank": (sort_and_rank, (V4,), True),
    "early_stopping_loop": (early_stopping_loop, (np.zeros(4) + 0.1, Xr, yr), False),
    "config_copy_decay": (config_copy_decay, (np.array([0.3, 1.2]),), True),
    "masked_scale_copy": (masked_scale_copy, (np.array([0.3, 1.2, 0.05, -0.7]),), True),
    "string_format_keys": (string_format_keys, ({"w0": 0.3, "w1": -1.2, "w2": 0.8},), False),
}


test_probe, test_float32 = probe_tests(PROBES)
