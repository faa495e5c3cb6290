"""Probe: results gathered in Python lists, then handed to NumPy and ``statistics``.

Scripts collect residuals, log-probabilities, energies and path values with ``append`` in a
loop and give the list itself to ``np.mean``, ``np.var``, ``np.average(..., weights=)``,
``np.vdot``, ``np.square``, ``np.log`` or ``statistics`` functions, and often read the list
again afterwards (``errs[-1]``). Each is differentiated against central differences, with
jvp, hvp and the Hessian where marked (probe_harness.py); float32 for array inputs.
"""

import math
import statistics

import numpy as np
from probe_harness import probe_tests, refusal_test


def residual_list_mean(w, X, y):
    errs = []
    for xi, yi in zip(X, y, strict=True):
        errs.append(xi @ w - yi)
    return np.mean(np.abs(errs) ** 2) + errs[-1] * errs[0]


def weighted_average_list(w):
    vals, weights = [], []
    for k in range(len(w)):
        vals.append(np.sin(w[k]) + k)
        weights.append(np.exp(0.3 * w[k]))
    return np.average(vals, weights=weights) + vals[1] ** 2


def weighted_average_fixed(w):
    vals = []
    for v in w:
        vals.append(v ** 3)
    return np.average(vals, weights=[1.0, 2.0, 3.0, 4.0])


def vdot_of_lists(w):
    a, b = [], []
    for k, v in enumerate(w):
        a.append(v * (k + 1))
        b.append(np.cos(v))
    return np.vdot(a, b) + a[2] * b[0]


def statistics_then_reads(w):
    xs = []
    for v in w:
        xs.append(2.0 * v - 0.1)
    spread = statistics.pstdev(xs)
    return statistics.fmean(xs) * xs[0] + spread * xs[-1] + statistics.median(xs) ** 2


def loglik_list_sum(theta, data):
    mu, log_s = theta
    s = math.exp(log_s)
    logps = []
    for x in data:
        logps.append(-0.5 * ((x - mu) / s) ** 2 - log_s)
    return math.fsum(logps) + sum(logps[:2]) + max(logps)


def energies_per_step(x0, dt=0.05, steps=12):
    x, v = x0, 0.0
    energy = []
    for _ in range(steps):
        v = v - dt * np.sin(x)
        x = x + dt * v
        energy.append(0.5 * v * v + 1 - np.cos(x))
    return np.mean(energy) + np.ptp(energy) * 0.0 + energy[-1] - energy[0]


def paths_in_lists(sigma, n=4, steps=6):
    rng = np.random.default_rng(7)
    finals = []
    for _ in range(n):
        s = 100.0
        for z in rng.standard_normal(steps):
            s = s * math.exp(-0.5 * sigma * sigma / steps + sigma * z / math.sqrt(steps))
        finals.append(s)
    return np.mean(np.maximum(np.array(finals) - 95.0, 0.0)) + np.median(finals) * 0.01


def list_of_arrays_stacked(W, xs):
    hs = []
    h = np.zeros(W.shape[0])
    for x in xs:
        h = np.tanh(W @ h + x)
        hs.append(h)
    return np.sum(np.mean(hs, axis=0) ** 2) + np.sum(np.max(hs, axis=1)) + np.sum(hs[-1])


def list_variance(w):
    errs = []
    for v in w:
        errs.append(v * v - 0.5)
    return np.var(errs) + np.std(errs, ddof=1)


def list_square_log(w):
    errs = []
    for v in w:
        errs.append(v + 2.0)
    return np.mean(np.square(errs)) + np.sum(np.log(errs))


def list_norm1(w):
    errs = []
    for v in w:
        errs.append(v - 0.2)
    return np.linalg.norm(errs, 1) + np.linalg.norm(errs) ** 2


def record(hist, v):
    hist.append(v)


def helper_appends(x):
    hist = []
    for v in x:
        record(hist, v * v)
    return sum(hist) + hist[-1] * hist[0]


class Logger:
    def __init__(self):
        self.vals = []

    def log(self, v):
        self.vals.append(v)

    def total(self):
        return sum(self.vals)


def logger_object(x):
    logger = Logger()
    for v in x:
        logger.log(v * v)
    return logger.total()


def logger_list_held_before(x):
    logger = Logger()
    vals = logger.vals
    logger.log(x[0] ** 2)
    return sum(vals)


def groups_in_a_loop(x):
    groups = [[], []]
    for g in groups:
        g.append(x[0] ** 2)
    return sum(groups[0]) + sum(groups[1])


def history_dict(x):
    hist = {"loss": [], "acc": []}
    for v in x:
        hist["loss"].append(v ** 2)
    return sum(hist["loss"])


def generator_twice(x):
    gen = (v * v for v in x)
    s1 = sum(gen)
    s2 = sum(gen)
    return s1 + 10.0 * s2


def iter_next(x):
    it = iter(x)
    a = next(it)
    b = next(it)
    rest = sum(it)
    return a * b + rest ** 2


def zip_consumed(x):
    z = zip(x, x[::-1], strict=True)
    first = [a * b for a, b in z]
    second = [a + b for a, b in z]
    return sum(first) + sum(second)


def map_reused(x):
    m = map(np.sin, x)
    a = sum(m)
    b = sum(m)
    return a + b


def tolist_math(x):
    vals = x.tolist()
    return sum(math.exp(v) for v in vals) + vals[0] * vals[-1]


def enumerate_start(x):
    return sum(k * v ** 2 for k, v in enumerate(x, start=1))


def reversed_list(x):
    vals = list(x)
    return sum(k * v for k, v in enumerate(reversed(vals))) + sum(vals[::-1][:2])


def argmin_key(x):
    i = min(range(len(x)), key=lambda k: x[k])
    j = max(range(len(x)), key=lambda k: abs(x[k]))
    return x[i] * 3 + x[j] ** 2


def dict_zip(x):
    d = dict(zip(["a", "b", "c", "d"], x, strict=True))
    return d["a"] * d["c"] + sum(d.values())


def fromiter(x):
    y = np.fromiter((v * v for v in x), dtype=float)
    return np.sum(y * np.arange(4))


def sum_start(x):
    return sum([x[0], x[1]], 2.5 * x[2]) + sum(x, x[3])


def copysign_floor(x):
    return np.sum(np.copysign(x ** 2, -1.0) + np.floor(x) * x) + math.copysign(x[1], 1.0)


def pow_forms(x):
    both = x[2] ** x[3] + np.power(x[3], x[2])
    return pow(x[0], 3) + pow(2.0, x[1]) + both + math.pow(abs(x[1]), 1.5)


def conditional_expr(x):
    a, b = x[0], x[1]
    m = a if a > b else b
    return m * x[2] + (x[3] if any(v > 1 for v in x) else 0.0)


def divmod_use(x):
    q, r = divmod(x[2], 0.5)
    return r * x[0] + q


def int_truncate(x):
    return (int(x[2] * 10) / 10) * x[0] + x[1]


def cumulative_python(x):
    out = []
    acc = 0.0
    for v in x:
        acc += v
        out.append(acc * acc)
    return sum(out)


def list_comp_nested_cond(x):
    return sum(a * b for i, a in enumerate(x) for j, b in enumerate(x) if i < j)


def while_with_index(x):
    i = 0
    total = 0.0
    while i < len(x) and total < 10:
        total += x[i] ** 2
        i += 1
    return total


def string_keys(x):
    names = [f"w{i}" for i in range(4)]
    p = {n: v for n, v in zip(names, x, strict=True)}
    return sum(p[f"w{i}"] * (i + 1) for i in range(4)) + p["w0"] ** 2


def swap_in_list(x):
    vals = list(x)
    vals[0], vals[3] = vals[3], vals[0]
    return vals[0] * 2 + vals[3] ** 2


def slice_list_assign(x):
    vals = [0.0] * 6
    vals[1:5] = list(x)
    vals[::2] = [v * 2 for v in vals[::2]]
    return sum(v * (k + 1) for k, v in enumerate(vals))


def tuple_accumulate(x):
    state = (0.0, 1.0)
    for v in x:
        state = (state[0] + v * state[1], state[1] * 0.9 + v)
    return state[0] * state[1]


def generators_per_scale(x):
    gens = [(v * k for v in x) for k in range(1, 3)]
    return sum(sum(g) for g in gens)


_r = np.random.default_rng(3103)
XR = _r.standard_normal((6, 3))
YR = _r.standard_normal(6)
W4 = np.array([0.3, -0.8, 1.1, 0.6])
DATA = _r.normal(0.2, 1.1, 10)
SEQ = 0.5 * _r.standard_normal((5, 3))
X5 = np.array([0.3, -0.7, 1.23, 0.55])

PROBES = {
    "residual_list_mean": (residual_list_mean, (np.array([0.2, -0.4, 0.9]), XR, YR), True),
    "weighted_average_list": (weighted_average_list, (W4,), True),
    "weighted_average_fixed": (weighted_average_fixed, (W4,), True),
    "vdot_of_lists": (vdot_of_lists, (W4,), True),
    "statistics_then_reads": (statistics_then_reads, (W4,), True),
    "loglik_list_sum": (loglik_list_sum, (np.array([0.1, 0.2]), DATA), True),
    "energies_per_step": (energies_per_step, (0.7,), True),
    "paths_in_lists": (paths_in_lists, (0.3,), True),
    "list_of_arrays_stacked": (list_of_arrays_stacked, (0.4 * _r.standard_normal((3, 3)), SEQ),
                               True),
    "list_variance": (list_variance, (W4,), True),
    "list_square_log": (list_square_log, (W4,), True),
    "list_norm1": (list_norm1, (W4,), True),
    "helper_appends": (helper_appends, (W4,), True),
    "tolist_math": (tolist_math, (X5,), True),
    "enumerate_start": (enumerate_start, (X5,), True),
    "reversed_list": (reversed_list, (X5,), True),
    "argmin_key": (argmin_key, (X5,), True),
    "dict_zip": (dict_zip, (X5,), True),
    "sum_start": (sum_start, (X5,), True),
    "copysign_floor": (copysign_floor, (X5,), True),
    "pow_forms": (pow_forms, (X5,), True),
    "conditional_expr": (conditional_expr, (X5,), True),
    "int_truncate": (int_truncate, (X5,), True),
    "cumulative_python": (cumulative_python, (X5,), True),
    "list_comp_nested_cond": (list_comp_nested_cond, (X5,), True),
    "while_with_index": (while_with_index, (X5,), True),
    "string_keys": (string_keys, (X5,), True),
    "swap_in_list": (swap_in_list, (X5,), True),
    "slice_list_assign": (slice_list_assign, (X5,), True),
    "tuple_accumulate": (tuple_accumulate, (X5,), True),
    "logger_object": (logger_object, (W4,), True),  # refused until stop 33
}

test_probe, test_float32 = probe_tests(PROBES)


# A list changed under another name than the one read afterwards: refused, not a zero.
REFUSED = {
    # (its gradient was silently zero: the list was read before the method appended to it)
    "logger_list_held_before": (
        logger_list_held_before,
        (W4,),
        ("reads back a value that carries a gradient", "test_probe_styles_s31_lists.py:148"),
    ),
    "groups_in_a_loop": (groups_in_a_loop, (W4,), ("PB106", "g.append")),
    "history_dict": (history_dict, (W4,), ("PB106", "hist['loss'] = hist['loss'] + [v ** 2]")),
    "generator_twice": (generator_twice, (X5,), ("PB402", "kept in 'gen' is read 2 times")),
    "map_reused": (map_reused, (X5,), ("PB402", "map object kept in 'm' is read 2 times")),
    "generators_per_scale": (generators_per_scale, (X5,), ("PB402", "reads 'k', which may")),
    "zip_consumed": (zip_consumed, (X5,), ("PB301", "lazy iterator kept as a value")),
    "iter_next": (iter_next, (X5,), ("PB301", "an iterator stepped by hand")),
    "fromiter": (fromiter, (X5,), ("PB301", "numpy.fromiter")),
    "divmod_use": (divmod_use, (X5,), ("PB301", "divmod")),
}

test_refused = refusal_test(REFUSED)
