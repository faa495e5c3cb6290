"""Reads ``x[i]`` and ``x[i + c]`` of a reverse loop folded as it ends (issue 13,
pullback.loop_offsets and pullback.transform.loop_reads.offset_sites): bit for bit the
sums of the chain the sweep built before (float64 and float32), against finite
differences, at second order and in Jacobians; the loops the pass leaves alone."""

import numpy as np
import pytest

import pullback.read_folds as read_folds
import pullback.transform.loop_reads as loop_reads_module
from pullback import grad, jacobian
from pullback.loop_buffers import fold_owned_reads, own_reads
from pullback.loop_offsets import fold_loop_reads, rebuilt_chain
from pullback.read_folds import fold_reads, loop_reads
from pullback.testing import check_grads
from pullback.zero import ZERO

DTYPES = [np.float64, np.float32]


def make_cases():
    def rosenbrock(x):
        s = 0.0
        for i in range(len(x) - 1):
            s = s + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2
        return s

    def backwards(x):
        s = 0.0
        for i in range(len(x) - 1, 0, -1):  # x[i - 1] at the last step is x[0]
            s = s + x[i] * x[i] * np.sin(x[i - 1])
        return s

    def wraps(x):
        s = 0.0
        for i in range(len(x)):  # x[i - 1] at i = 0 is x[-1]; x[1 + i] ends at x[-1]
            s = s + x[i] * np.cos(x[i]) * x[i - 1] + 0.5 * x[i] * x[i - 1]
        return s

    def repeated(x):
        s = 0.0
        for i in range(len(x) - 2):  # x[i + 2] twice, x[i + 1] once, x[i] twice
            s = s + x[i + 2] * x[i + 2] * x[i] + x[i + 1] * x[i]
        return s

    def stepped(x):
        s = 0.0
        for i in range(1, len(x) - 1, 2):
            s = s + x[i] * x[i] * (x[i + 1] - x[i - 1])
        return s

    def with_continue(x):
        s = 0.0
        for i in range(len(x) - 1):
            if x[i] > 0.9:
                continue
            s = s + x[i] * x[i] * x[i + 1]
        return s

    def with_break(x):
        s = 0.0
        for i in range(len(x) - 1):
            if x[i] > 1.05:
                break
            s = s + x[i] * x[i] * x[i + 1]
        return s

    def written_in_place(x):
        y = x * 1.0
        s = 0.0
        for i in range(len(x) - 1):
            s = s + y[i] * y[i] * y[i + 1]
            y[i] = 2.0 * y[i]
        return s + np.sum(y)

    def read_after_the_loop(x):
        s = 0.0
        for i in range(len(x) - 1):
            s = s + x[i] * x[i] * x[i + 1]
        return s * x[0]  # a read the chain holds as the reverse loop starts

    def read_before_the_loop(x):
        s = x[0]  # a read the reverse sweep pushes after the loop: folded later
        for i in range(len(x) - 1):
            s = s + x[i] * x[i] * x[i + 1]
        return s

    def differences(x):
        s = 0.0
        for i in range(len(x) - 1):  # x[i] once a step: the loop's own buffer before
            s = s + (x[i + 1] - x[i]) ** 2
        return s

    def both_sides(x):
        s = 0.0
        for i in range(1, len(x) - 1):  # x[i + 1] and x[i - 1] of one element, two steps
            s = s + np.sin(x[i]) * (x[i + 1] - 0.5 * x[i - 1])
        return s

    def one_read_wraps(x):
        s = 0.0
        for i in range(len(x)):  # x[i - 1] at i = 0 is x[-1]
            s = s + np.cos(x[i - 1]) * x[i]
        return s

    def one_read_descending(x):
        s = 0.0
        for i in range(len(x) - 1, 0, -2):
            s = s + x[i] * x[i - 1] * x[i - 1]
        return s

    def carried_index(x):
        s = 0.0
        j = 1
        for i in range(len(x) - 2):
            s = s + x[i] * x[i] * x[j]  # j of the step before: i + 1 only by its value
            j = i + 2
        return s

    def rows(a):
        s = 0.0
        for i in range(a.shape[0] - 1):  # rows of a matrix: array cotangents
            s = s + np.sum(a[i] * a[i] * a[i + 1])
        return s

    def none(x):
        s = 0.0
        for i in range(len(x) - 40):  # no step at all for short vectors
            s = s + x[i] * x[i] * x[i + 1]
        return s

    return {
        f.__name__: f
        for f in (
            rosenbrock,
            backwards,
            wraps,
            repeated,
            stepped,
            with_continue,
            with_break,
            written_in_place,
            read_after_the_loop,
            read_before_the_loop,
            differences,
            both_sides,
            one_read_wraps,
            one_read_descending,
            carried_index,
            rows,
            none,
        )
    }


CASES = make_cases()
APPLIED = ["rosenbrock", "backwards", "wraps", "repeated", "stepped", "read_after_the_loop", "none"]
APPLIED += ["differences", "both_sides", "one_read_wraps", "one_read_descending"]
LEFT = ["with_continue", "with_break", "written_in_place", "read_before_the_loop"]


def arg(name, n, dtype=np.float64):
    if name == "rows":  # n rows of 3
        return np.random.default_rng(n).uniform(0.2, 1.2, (n, 3)).astype(dtype)
    return np.random.default_rng(n).uniform(0.2, 1.2, n).astype(dtype)


def _without_offsets(monkeypatch):
    monkeypatch.setattr(loop_reads_module, "offset_sites", lambda *a: None)


@pytest.mark.parametrize("name", APPLIED + ["rows"])
def test_the_pass_is_applied(name):
    assert "_fold_loop_reads(" in grad(CASES[name]).source_for(arg(name, 60))


@pytest.mark.parametrize("name", LEFT)
def test_the_pass_leaves_these_alone(name):
    assert "_fold_loop_reads(" not in grad(CASES[name]).source_for(arg(name, 60))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [5, 12, 60])
@pytest.mark.parametrize("name", list(CASES))
def test_matches_finite_differences(name, n, dtype):
    check_grads(CASES[name], arg(name, n, dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [3, 12, 14, 30, 101])
@pytest.mark.parametrize("name", list(CASES))
def test_bit_for_bit_the_chain(name, n, dtype, monkeypatch):
    # both the fused sweeps (grad's hot entry) and the plain pullback
    x = arg(name, n, dtype)
    new = [grad(CASES[name])(x) for _ in range(3)]
    _without_offsets(monkeypatch)
    fn = make_cases()[name]
    assert "_fold_loop_reads(" not in grad(fn).source_for(x)
    old = [grad(fn)(x) for _ in range(3)]
    for a, b in zip(new, old, strict=True):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


@pytest.mark.parametrize(
    "name", ["rosenbrock", "wraps", "repeated", "stepped", "differences", "both_sides"]
)
def test_second_order(name):
    check_grads(CASES[name], arg(name, 30), order=2)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["rosenbrock", "backwards", "wraps", "both_sides"])
def test_jacobian_through_the_path(name, dtype):
    fn = CASES[name]

    def two(x):
        return np.array([fn(x), 2.0 * fn(x[::-1] * 1.0)])

    x = arg(name, 40, dtype)
    jac = jacobian(two)(x)
    step = 1e-6 if dtype == np.float64 else 1e-2
    x64 = x.astype(np.float64)
    for k in (0, 7, 39):
        e = np.zeros_like(x64)
        e[k] = step
        fd = (two(x64 + e) - two(x64 - e)) / (2 * step)
        tol = 1e-6 if dtype == np.float64 else 2e-2
        np.testing.assert_allclose(jac[:, k], fd, rtol=tol, atol=tol)


_SITES = [
    (range(100), (None, None, 1)),
    (range(1, 40), (-1, None, 2, None, 0)),
    (range(39, 0, -2), (None, 1, None, None, -1)),
    (range(30), (None, -1, None)),
]


def _values(count, seed, negative_zeros=True):
    rng = np.random.default_rng(seed)
    kinds = [float, np.float64, np.float32]
    scale = 10.0 ** rng.integers(-8, 8, count)  # any other order of sums differs
    picks = rng.integers(0, 3, count)
    values = [kinds[k](v) for k, v in zip(picks, rng.standard_normal(count) * scale, strict=True)]
    if negative_zeros:
        values[3], values[5] = -0.0, np.float32(-0.0)
    return values


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("steps", "sites"), _SITES)
def test_helper_is_the_old_fold_bit_for_bit(steps, sites, dtype):
    x = np.zeros(101, dtype=dtype)
    values = _values(len(steps) * len(sites), len(steps))
    got = fold_loop_reads(ZERO, x, None, steps, sites, values)
    old = fold_reads(ZERO, x, rebuilt_chain(steps, sites, values, x, None))
    assert got.dtype == old.dtype and got.tobytes() == old.tobytes()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    ("acc", "chain"),
    [("zero", (3, 0.25, None)), ("array", None), ("zero", None)],
)
@pytest.mark.parametrize(("steps", "sites"), _SITES[:2] + [(range(0), (None, None, 1))])
def test_other_cases_fold_the_rebuilt_chain(steps, sites, acc, chain, dtype):
    x = np.zeros(101, dtype=dtype)
    acc = ZERO if acc == "zero" else np.linspace(-1.0, 1.0, 101).astype(dtype)
    values = _values(len(steps) * len(sites), 7) if len(steps) else []
    got = fold_loop_reads(acc, x, chain, steps, sites, values)
    counter, it, old_chain = [], iter(values), chain
    for i in reversed(steps):
        for c in sites:
            v = next(it)
            if c is None:
                counter.append(v)
            else:
                old_chain = (i + c, v, old_chain)
    old = fold_reads(acc, x, loop_reads(steps, sites.count(None), counter, x, old_chain))
    if acc is ZERO and not len(steps) and chain is None:
        assert got is ZERO and old is ZERO
    else:
        assert got.dtype == old.dtype and got.tobytes() == old.tobytes()


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")  # both folds cast
@pytest.mark.parametrize("values", [[ZERO] * 90, [1 + 1j] * 90, [np.ones(2)] * 90])
def test_values_not_real_fold_the_rebuilt_chain(values):
    steps, sites = range(30), (None, None, 1)
    x = np.zeros((32, 2)) if type(values[0]) is np.ndarray else np.zeros(32)
    chain = rebuilt_chain(steps, sites, values, x, None)
    expect = fold_reads(ZERO, x, chain)
    got = fold_loop_reads(ZERO, x, None, steps, sites, values)
    assert np.array_equal(np.asarray(got), np.asarray(expect))


@pytest.mark.parametrize("dtype", DTYPES)
def test_node_fast_path_is_the_general_path(dtype, monkeypatch):
    # fold_reads of loop_reads' node over element reads: _loop_node_reads hands
    # np.bincount the arrays the general path builds
    x = np.zeros(101, dtype=dtype)
    for steps, rest_reads in [(range(100), range(1, 101)), (range(-20, 30), range(-5, 40, 3))]:
        values = _values(2 * len(steps), 2)
        others = None
        for i, v in zip(rest_reads, _values(len(rest_reads), 3, False), strict=True):
            others = (i, v, others)
        node = loop_reads(steps, 2, values, x, others)
        assert type(node[0]) is np.ndarray
        fast = fold_reads(ZERO, x, node)
        monkeypatch.setattr(read_folds, "_loop_node_reads", lambda *a: None)
        general = fold_reads(ZERO, x, node)
        monkeypatch.undo()
        assert fast.dtype == general.dtype and fast.tobytes() == general.tobytes()


def _old_one_read(acc, x, chain, steps, sites, values):
    # what the loop and the line after it did before: x[i] into the loop's own buffer
    # (cotangent or 0.0), x[i + c] pushed onto the chain, fold_owned_reads
    buffer, types = own_reads(steps, x)
    it = iter(values)
    for i in reversed(steps):
        for c in sites:
            v = next(it)
            if c is not None:
                chain = (i + c, v, chain)
            elif type(v) in types:
                buffer[i] = v or 0.0
            else:
                chain = (i, v, chain)
    return fold_owned_reads(acc, x, chain, steps, buffer)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("acc", ["zero", "array"])
@pytest.mark.parametrize(
    ("steps", "sites"),
    [
        (range(100), (1, None)),
        (range(1, 99), (None, 1, -1)),
        (range(100), (-1, None, -1)),
        (range(99, 0, -3), (-1, None)),
        (range(5), (None, 2)),
    ],
)
def test_one_read_a_step_is_the_old_fold_bit_for_bit(steps, sites, acc, dtype):
    x = np.zeros(101, dtype=dtype)
    acc = ZERO if acc == "zero" else np.linspace(-1.0, 1.0, 101).astype(dtype)
    values = _values(len(steps) * len(sites), len(steps), negative_zeros=len(steps) > 5)
    got = fold_loop_reads(acc, x, None, steps, sites, values)
    old = _old_one_read(acc, x, None, steps, sites, values)
    assert got.dtype == old.dtype and got.tobytes() == old.tobytes()


@pytest.mark.parametrize("values", [[ZERO] * 60, [np.ones(2)] * 60])
def test_one_read_a_step_not_real_folds_as_before(values):
    steps, sites = range(30), (None, 1)
    x = np.zeros((32, 2)) if type(values[0]) is np.ndarray else np.zeros(32)
    expect = _old_one_read(ZERO, x, None, steps, sites, values)
    got = fold_loop_reads(ZERO, x, None, steps, sites, values)
    assert np.array_equal(np.asarray(got), np.asarray(expect))
