"""Probe: code as projects write it, and values used as indices.

Methods calling methods, callable objects, ``*args``/``**kwargs`` forwarding, closures
made in a loop, comprehensions with conditions and nested ``for``s, counters on ``self``,
a history list on ``self`` whose length is read, ``list.append`` then ``np.stack``, a
preallocated array filled in a loop, generators consumed by ``sum``, ``enumerate`` /
``zip`` / ``reversed``, early returns, ``try``/``except`` around numerics, walrus,
``global`` counters; indices and keys computed from the differentiated value (``int``,
``round``, ``argmax``, ``searchsorted``, ``digitize``, ``floor``). Gradients (and for
most jvp, hvp and the Hessian) against central differences (probe_harness.py).
"""

import functools
import itertools
import math
import statistics

import numpy as np
from probe_harness import check_probe, probe_tests, refusal_test

import pullback

X = np.array([0.3, -0.7, 1.2, 0.9])
GRID = np.array([0.3, -0.7, 1.2, 2.6])
TABLE = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
CALLS = 0

# -- real code as written ---------------------------------------------------------------------


class Stepper:
    def __init__(self, w):
        self.w = w
        self.n = 0

    def step(self, z):
        self.n += 1
        return np.tanh(self.w * z)

    def run(self, z, k):
        for _ in range(k):
            z = self.step(z)
        return z


def counter_on_self(w, x):
    s = Stepper(w)
    out = s.run(x, 3)
    return np.sum(out) * s.n


class Poly:
    def __init__(self, coefs):
        self.coefs = coefs

    def __call__(self, t):
        return sum(c * t ** i for i, c in enumerate(self.coefs))

    def deriv(self):
        return Poly([i * c for i, c in enumerate(self.coefs)][1:])


def callable_returns_callable(x):
    p = Poly(x)
    return p(0.5) + p.deriv()(0.3)


def forward_call(f, *args, **kwargs):
    return f(*args, **kwargs)


def affine_power(x, a, b=1.0, *, power=2):
    return np.sum((a * x + b) ** power)


def forwarded_star_kwargs(x):
    return forward_call(affine_power, x, 0.5, b=2.0, power=3)


def splatted_call(x):
    args = (x, 2.0)
    options = {"b": 0.1, "power": 2}
    return affine_power(*args, **options)


def loop_closures_with_defaults(x):
    fs = []
    for k in range(3):
        fs.append(lambda z, k=k: z ** (k + 1))
    return sum(np.sum(f(x)) for f in fs)


def nested_comprehension_condition(x):
    return sum(a * b for a in x for b in x if a > b)


def append_then_stack(x):
    rows = []
    for i in range(3):
        rows.append(x[i : i + 2] * (i + 1))
    return np.sum(np.stack(rows) ** 2) + np.sum(np.array(rows))


def preallocated_fill(x):
    out = np.zeros((3, 4))
    for i in range(3):
        out[i] = x * (i + 1)
    for j in range(4):
        out[:, j] += x[j] ** 2
    return np.sum(np.sin(out))


def generator_reversed_enumerate(x):
    return sum(v ** 2 for i, v in enumerate(reversed(x)) if i % 2 == 0)


def early_return_in_loop(x):
    acc = 0.0
    for a, b in zip(x[:-1], x[1:], strict=True):
        if a * b < -0.5:
            return acc + a * b
        acc += (b - a) ** 2
    return acc


def safe_log(v):
    try:
        return math.log(v)
    except ValueError:
        return -1e3


def try_in_helper(x):
    return sum(safe_log(v) * v for v in x if v > 0)


def try_around_solve(x):
    try:
        y = np.linalg.solve(np.diag(x) + 3 * np.eye(4), x)
    except np.linalg.LinAlgError:
        y = x
    return np.sum(y ** 2)


class Dense:
    def __init__(self, W, b):
        self.W, self.b = W, b

    def forward(self, h):
        return np.tanh(self.W @ h + self.b)


class Chain:
    def __init__(self, layers):
        self.layers = layers

    def forward(self, h):
        for layer in self.layers:
            h = layer.forward(h)
        return h

    def loss(self, h, y):
        return np.mean((self.forward(h) - y) ** 2)


W1 = np.arange(16.0).reshape(4, 4) / 20 - 0.3


def methods_calling_methods(x):
    return Chain([Dense(W1, x), Dense(W1.T, -x)]).loss(np.ones(4), 0.1)


def step(state, dt, k=1.0):
    pos, vel = state
    return (pos + dt * vel, vel - dt * k * pos)


def tuple_state_loop(x):
    state = (x[0], x[1])
    for _ in range(10):
        state = step(state, 0.1, k=x[2])
    return state[0] ** 2 + state[1]


def ring_buffer(x):
    buf = []
    for v in x:
        buf.append(v)
        if len(buf) > 2:
            buf.pop(0)
    return buf[0] * buf[1]


def ema_prealloc(x):
    out = np.empty_like(x)
    out[0] = x[0]
    for i in range(1, len(x)):
        out[i] = 0.5 * out[i - 1] + x[i]
    return np.sum(out ** 2)


def pair_loop_continue(x):
    s = 0.0
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            if abs(x[i] - x[j]) < 0.5:
                continue
            s += 1.0 / (x[i] - x[j]) ** 2
    return s


def while_true_halving(x):
    total = 0.0
    while True:
        total += np.sum(x ** 2)
        x = x * 0.5
        if np.max(np.abs(x)) < 0.1:
            break
    return total


def terms(v):
    for i, a in enumerate(v):
        yield a ** (i + 1)


def generator_helper(x):
    return sum(terms(x))


def stdlib_sums(x):
    return math.fsum(v * v for v in x) + statistics.fmean([v for v in x])


def keyed_max_sorted(x):
    return max(x, key=lambda v: abs(v)) ** 2 + sorted(x, key=lambda v: -v)[0]


def walrus_filter(x):
    total = 0.0
    for v in x:
        if (s := v * v) > 0.2:
            total += s
    return total


def global_counter(x):
    global CALLS
    CALLS += 1
    return np.sum(x ** 3)


def reduce_lambda(x):
    return functools.reduce(lambda a, b: a * b + 1.0, x, 1.0)


def star_unpacking(x):
    a, *rest = x
    *init, last = rest
    return a * last + sum(init)


class History:
    def __init__(self):
        self.losses = []

    def record(self, v):
        self.losses.append(float(v))


def history_length(x):
    # a history kept on an object, then only its length read: no value is read back
    # (before: refused as a read-back of a stored gradient, PB107)
    h = History()
    loss = 0.0
    for v in x:
        loss = loss + v ** 2
        h.record(loss)
    return loss * len(h.losses)


def nonlocal_accumulator(x):
    def add():
        nonlocal total
        total += np.sum(x ** 2)

    total = 0.0
    add()
    add()
    return total


def scalars_into_matrix(x):
    m = np.array([[x[0], x[1]], [x[2], x[3]]])
    return np.linalg.det(m) + np.trace(np.linalg.inv(m))


def sqrt_try_in_loop(x):
    vals = []
    for v in x:
        try:
            vals.append(math.sqrt(v))
        except ValueError:
            vals.append(0.0)
    return sum(vals)


# -- values used as indices and keys ----------------------------------------------------------


def table_at_int(x):
    return np.sum(x * TABLE[int(x[3])])


def at_argmax(x):
    k = int(np.argmax(x))
    return x[k] ** 2 + np.sum(x)


def searchsorted_lerp(x):
    grid = np.linspace(-1, 3, 9)
    j = np.searchsorted(grid, x[2])
    t = (x[2] - grid[j - 1]) / (grid[j] - grid[j - 1])
    vals = grid ** 2
    return (1 - t) * vals[j - 1] + t * vals[j]


def function_from_list(x):
    fs = [np.sin, np.cos, np.tanh, np.exp]
    f = fs[int(abs(x[1]) * 3) % 4]
    return np.sum(f(x))


def rounded_index(x):
    coeffs = [1.0, -2.0, 0.5]
    return sum(coeffs[int(round(v)) % 3] * v ** 2 for v in x)


def digitize_bins(x):
    bins = np.digitize(x, [0.0, 1.0, 2.0])
    return np.sum(TABLE[bins] * x ** 2)


def floor_lerp(x):
    h = 0.5
    i = math.floor(x[3] / h)
    frac = x[3] / h - i
    return TABLE[i % 5] * (1 - frac) + TABLE[(i + 1) % 5] * frac


def write_at_int(x):
    out = np.zeros(5)
    out[int(x[2])] = x[0] * x[1]
    return np.sum(out * TABLE)


def dict_keyed_by_sign(x):
    m = {}
    for v in x:
        m[int(v > 0)] = m.get(int(v > 0), 0.0) + v ** 2
    return m[1] - m[0]


def key_chosen_by_value(x):
    d = {"a": x[0], "b": x[1]}
    key = "a" if x[2] > 0 else "b"
    return d[key] ** 2 * 3


def float_keyed_lookup(x):
    weights = {0.5: 2.0, 1.0: -1.0, 1.5: 0.25}
    key = round(float(x[2]) * 2) / 2  # 1.0
    return weights[key] * np.sum(x ** 2)


def quantile_by_index(x):
    s = np.sort(x)
    q = s[int(0.75 * (len(s) - 1))]
    return q * np.sum(s)


def read_back_history(x):
    h = History()
    loss = 0.0
    for v in x:
        loss = loss + v ** 2
        h.record(loss)
    return loss + h.losses[-1]  # a stored value read back (refused as PB107 until stop 33)


PROBES = {
    "counter_on_self": (counter_on_self, (0.8, X), True),
    "callable_returns_callable": (callable_returns_callable, (X,), True),
    "forwarded_star_kwargs": (forwarded_star_kwargs, (X,), False),
    "splatted_call": (splatted_call, (X,), False),
    "loop_closures_with_defaults": (loop_closures_with_defaults, (X,), True),
    "nested_comprehension_condition": (nested_comprehension_condition, (X,), True),
    "append_then_stack": (append_then_stack, (X,), True),
    "preallocated_fill": (preallocated_fill, (X,), True),
    "generator_reversed_enumerate": (generator_reversed_enumerate, (X,), True),
    "early_return_in_loop": (early_return_in_loop, (X,), True),
    "try_in_helper": (try_in_helper, (X,), True),
    "try_around_solve": (try_around_solve, (X,), False),
    "methods_calling_methods": (methods_calling_methods, (X,), True),
    "tuple_state_loop": (tuple_state_loop, (X,), True),
    "ring_buffer": (ring_buffer, (X,), True),
    "ema_prealloc": (ema_prealloc, (X,), True),
    "pair_loop_continue": (pair_loop_continue, (X,), True),
    "while_true_halving": (while_true_halving, (X,), True),
    "generator_helper": (generator_helper, (X,), True),
    "stdlib_sums": (stdlib_sums, (X,), False),
    "keyed_max_sorted": (keyed_max_sorted, (X,), True),
    "walrus_filter": (walrus_filter, (X,), True),
    "global_counter": (global_counter, (X,), True),
    "reduce_lambda": (reduce_lambda, (X,), True),
    "star_unpacking": (star_unpacking, (X,), True),
    "history_length": (history_length, (X,), True),
    "nonlocal_accumulator": (nonlocal_accumulator, (X,), True),
    "scalars_into_matrix": (scalars_into_matrix, (X,), True),
    "sqrt_try_in_loop": (sqrt_try_in_loop, (X,), False),
    "table_at_int": (table_at_int, (GRID,), True),
    "at_argmax": (at_argmax, (GRID,), True),
    "searchsorted_lerp": (searchsorted_lerp, (GRID,), True),
    "function_from_list": (function_from_list, (GRID,), True),
    "rounded_index": (rounded_index, (GRID,), True),
    "digitize_bins": (digitize_bins, (GRID,), True),
    "floor_lerp": (floor_lerp, (GRID,), True),
    "write_at_int": (write_at_int, (GRID,), True),
    "dict_keyed_by_sign": (dict_keyed_by_sign, (GRID,), True),
    "key_chosen_by_value": (key_chosen_by_value, (GRID,), True),
    "float_keyed_lookup": (float_keyed_lookup, (GRID,), True),
    "quantile_by_index": (quantile_by_index, (GRID,), True),
    "read_back_history": (read_back_history, (X,), True),  # refused until stop 33
}

test_probe, test_float32 = probe_tests(PROBES)


def test_history_kept_as_raw_values_then_its_length():
    class Log:
        def __init__(self):
            self.items = []

        def add(self, v):
            self.items.append(v)

    log = Log()

    def f(x):
        total = 0.0
        for v in x:
            total = total + np.sin(v)
            log.add(total)
        return total * len(log.items)

    got = pullback.grad(f)(X)
    log.items.clear()
    np.testing.assert_allclose(got, 4 * np.cos(X), rtol=1e-12)




def late_binding_lambdas(x):
    fs = [lambda z: z * k for k in range(3)]
    return sum(np.sum(f(x) ** 2) for f in fs)


def setdefault_append(x):
    res = {}
    for name, v in zip(["a", "b", "c", "d"], x, strict=True):
        res.setdefault(name[0], []).append(v)
    return sum(sum(vs) ** 2 for vs in res.values())


def accumulate_summed(x):
    return sum(itertools.accumulate(x))


REFUSED = {
    "late_binding_lambdas": (late_binding_lambdas, (X,), ("PB404", "k=k")),
    "setdefault_append": (setdefault_append, (X,), ("PB106",)),
    "accumulate_summed": (accumulate_summed, (X,), ("PB301", "accumulate")),
}

test_refused = refusal_test(REFUSED)


class Grid:
    def __init__(self, v):
        self.v = v

    def __getitem__(self, i):
        return self.v[i] * 2

    def __len__(self):
        return len(self.v)


def user_getitem(x):
    g = Grid(x)
    return sum(g[i] ** 2 for i in range(len(g)))


def grid_slices(x):
    g = Grid(x)
    return np.sum(g[1:3] ** 2) + np.sum(Grid(x)[::2])


class Table:
    def __init__(self, a):
        self.a = a.reshape(2, 2)

    def __getitem__(self, ij):
        i, j = ij
        return self.a[i, j]


def table_by_pairs(x):
    t = Table(x)
    return t[0, 1] * t[1, 0] + t[1, 1] ** 2


class Coefficients:
    def __init__(self, c):
        self.c = c

    def __getitem__(self, k):
        return self.c[k] if k < len(self.c) else 0.0

    def __call__(self, t):
        return sum(self[k] * t ** k for k in range(4))


def indexed_self(x):
    return Coefficients(x[:3])(0.7)


# g[i] of a class whose __getitem__ is Python: before, differentiated as a read of the
# object's fields (it failed in the reverse sweep, "cannot differentiate indexing into a
# Grid"); now a call of __getitem__ (transform/property_reads.py)
GETITEM = {
    "user_getitem": (user_getitem, (X,), True),
    "grid_slices": (grid_slices, (X,), True),
    "table_by_pairs": (table_by_pairs, (X,), True),
    "indexed_self": (indexed_self, (X,), True),
}

test_getitem, test_getitem_float32 = probe_tests(GETITEM)


# (the vjp of a vjp function read its cotangent tuple past its end until an integer
# argument stopped counting as differentiated: dynamic_vjps._no_tangent)
def test_second_order_of_a_call_spreading_args_and_kwargs():
    check_probe(splatted_call, X, second=True)
