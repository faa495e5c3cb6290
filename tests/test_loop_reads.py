"""Reads ``x[i]`` by a reverse loop's own counter recorded into a list (issue 11,
pullback.transform.loop_reads and pullback.read_folds.loop_reads): checked against finite
differences (float64 and float32), against the chain the sweep builds without the pass,
and at second order; the helper's two paths against the chain they replace."""

import numpy as np
import pytest

import pullback.transform.reverse as reverse_module
from pullback import grad
from pullback.read_folds import fold_reads, loop_reads
from pullback.tangents import ZERO
from pullback.testing import check_grads

DTYPES = [np.float64, np.float32]


def make_cases():
    def fill(x):
        out = np.zeros(x.shape[0])
        for i in range(x.shape[0]):
            out[i] = np.sin(x[i]) * x[i]
        return np.sum(out * out)

    def negative_positions(x):
        s = 0.0
        for i in range(-3, 3):  # -3 and 2 are one entry of a 5-vector: read twice
            s = s + x[i] * x[i] * float(i + 4)
        return s

    def stepped_range(x):
        s = 0.0
        for i in range(x.shape[0] - 1, 0, -2):
            s = s + np.cos(x[i]) * x[i]
        return s

    def shifted(x):
        s = 0.0
        for i in range(1, x.shape[0]):
            s = s + np.cos(x[i]) * x[i - 1]  # another index: the chain stays
        return s

    def nested(x):
        s = 0.0
        for i in range(x.shape[0]):
            c = float(i) + 1.0
            for j in range(i + 1):
                s = s + x[j] * x[j] * c  # the inner loop's counter
        return s

    def two_counters(x):
        s = 0.0
        for i in range(x.shape[0]):
            for j in range(i + 1):
                s = s + x[i] * x[j]  # reads by two counters: the chain stays
        return s

    def list_argument(xs):
        s = 0.0
        for i in range(len(xs)):
            s = s + xs[i] * xs[i]
        return s

    def read_in_branch(x):
        s = 0.0
        for i in range(x.shape[0]):
            if x[i] > 0.7:
                s = s + x[i] * x[i]
            else:
                s = s + np.sin(x[i])
        return s

    def read_outside_too(x):
        s = x[0] * x[2]  # reads by constants, folded with the loop's node
        for i in range(1, x.shape[0]):
            s = s + x[i] * x[i] * float(i)
        return s

    def rosenbrock(x):
        s = 0.0
        for i in range(x.shape[0] - 1):  # x[i] twice by the counter, x[i + 1] in the chain
            s = s + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2
        return s

    def read_before_in_branch(x):
        s = 0.0
        for i in range(x.shape[0]):
            if i > 1:
                s = s + x[i - 2] * x[i]  # a push inside a branch stays in the chain
            s = s + np.sin(x[i])
        return s

    def recurrence(x):
        y = np.zeros(x.shape[0])
        y[0] = x[0]
        for t in range(1, x.shape[0]):
            y[t] = 0.9 * y[t - 1] + x[t]
        return np.sum(y * y)

    return {
        f.__name__: f
        for f in (
            fill,
            negative_positions,
            stepped_range,
            shifted,
            nested,
            two_counters,
            list_argument,
            read_in_branch,
            read_outside_too,
            rosenbrock,
            read_before_in_branch,
            recurrence,
        )
    }


CASES = make_cases()
X = np.array([0.6, 1.1, 0.8, 0.95, 0.3])


def arg(name, dtype=np.float64):
    return [0.6, 1.1, 0.8] if name == "list_argument" else X.astype(dtype)


ARRAY_CASES = [n for n in CASES if n != "list_argument"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ARRAY_CASES)
def test_matches_finite_differences(name, dtype):
    check_grads(CASES[name], arg(name, dtype))


def test_list_argument_matches_finite_differences():
    g = grad(CASES["list_argument"])([0.6, 1.1, 0.8])
    np.testing.assert_allclose(np.array(g, dtype=float), [1.2, 2.2, 1.6])


@pytest.mark.parametrize(
    "name", ["fill", "negative_positions", "stepped_range", "nested", "rosenbrock", "shifted"]
)
def test_the_pass_is_applied(name):
    # shifted's x[i] and x[i - 1] fold as the loop ends (tests/test_loop_offsets.py)
    source = grad(CASES[name]).source_for(arg(name))
    assert ("_fold_loop_reads(" if name == "shifted" else "_loop_reads(") in source


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ARRAY_CASES)
def test_equals_the_chain(name, dtype, monkeypatch):
    x = arg(name, dtype)
    batched = grad(CASES[name])(x)
    monkeypatch.setattr(reverse_module, "batch_loop_reads", lambda *a, **k: None)
    plain_fn = make_cases()[name]
    plain_source = grad(plain_fn).source_for(x)
    assert "_loop_reads(" not in plain_source and "_own_reads(" not in plain_source
    plain = grad(plain_fn)(x)
    assert batched.dtype == plain.dtype
    np.testing.assert_allclose(batched, plain, rtol=1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize(
    "name", ["fill", "negative_positions", "nested", "recurrence", "rosenbrock"]
)
def test_second_order(name):
    check_grads(CASES[name], arg(name), order=2)


def _chain(steps, k, values, rest):
    it = iter(values)
    for i in reversed(steps):
        for _ in range(k):
            rest = (i, next(it), rest)
    return rest


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    ("steps", "k"),
    [(range(30), 1), (range(1, 30), 2), (range(-13, 13), 1), (range(40, 0, -2), 3)],
)
def test_helper_folds_as_the_chain(steps, k, dtype):
    x = np.zeros(41, dtype=dtype)
    values = list(np.random.default_rng(0).standard_normal(len(steps) * k))
    rest = (0, 0.5, None)
    node = loop_reads(steps, k, values, x, rest)
    assert type(node[1]) is np.ndarray and node[2] is rest  # the one-node path
    assert type(node[0]) is (slice if k == 1 and min(steps) >= 0 else np.ndarray)
    expect = fold_reads(ZERO, x, _chain(steps, k, values, rest))
    got = fold_reads(ZERO, x, node)
    assert got.dtype == expect.dtype
    np.testing.assert_allclose(got, expect, rtol=1e-6 if dtype == np.float32 else 1e-14)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "steps", [range(5), range(1, 6), range(5, 0, -1), range(0, 6, 2), range(5, -1, -3), range(1)]
)
def test_one_read_a_step_is_a_slice(steps, dtype):
    # along a range of non-negative positions, even a few reads (mse_loop_10) are one
    # ascending slice and one array, folded through a view: the very sums of the chain
    x = np.zeros(6, dtype=dtype)
    values = [0.25, -0.0, np.float32(2.5), -1.0, 3.0, np.float64(0.5)][: len(steps)]
    for acc in (ZERO, np.arange(6.0).astype(dtype)):
        for rest in (None, (slice(2, 4), np.ones(2, dtype=dtype), None)):
            node = loop_reads(steps, 1, values, x, rest)
            assert type(node[0]) is slice and node[0].step > 0 and node[2] is rest
            expect = fold_reads(acc, x, _chain(steps, 1, values, rest))
            got = fold_reads(acc, x, node)
            assert got.dtype == expect.dtype
            assert np.array_equal(got, expect)
            assert np.array_equal(np.signbit(got), np.signbit(expect))  # no -0.0 appears


@pytest.mark.parametrize(("steps", "k"), [(range(-3, 2), 1), (range(5), 2), (range(2, -3, -1), 1)])
def test_a_few_other_reads_keep_the_chain(steps, k):
    # negative positions (x[-1] and x[4] are one element) or several reads a step: up to
    # _FEW_READS the chain's short path in fold_reads is cheaper than two arrays through
    # np.add.at
    x, rest = np.zeros(5), (0, 0.5, None)
    values = [0.25, -1.0, 2.0, 0.5, 3.0, 1.5, -2.0, 0.75, 1.25, 4.0][: len(steps) * k]
    node = loop_reads(steps, k, values, x, rest)
    assert node == _chain(steps, k, values, rest)


_MANY = 30  # more reads than _FEW_READS: only what they are keeps them off the one node
_FILL = [0.5] * (_MANY - 3)


@pytest.mark.parametrize(
    "values, x",
    [
        ([1.0, ZERO, 2.0] + _FILL, np.zeros(_MANY)),  # a zero cotangent among them
        ([1.0, 2.0, 3.0] + _FILL, [0.0] * _MANY),  # a list is read
        ([1 + 1j, 2.0, 3.0] + _FILL, np.zeros(_MANY)),  # complex cotangents of a real array
        ([1.0, np.complex128(2 + 1j), 3.0] + _FILL, np.zeros(_MANY)),  # only with a warning
        ([np.ones(2)] * _MANY, np.zeros((_MANY, 2))),  # rows of a matrix
    ],
)
@pytest.mark.parametrize("few", [False, True])
def test_helper_falls_back_to_the_chain(values, x, few):
    if few:  # the same cotangents, as few reads as mse_loop_10's
        values, x = values[:5], x[:5]
    steps = range(len(values))
    assert loop_reads(steps, 1, values, x, None) == _chain(steps, 1, values, None)


@pytest.mark.parametrize("dtype", DTYPES)
def test_many_reads_of_another_index_fold_with_the_node(dtype):
    # rosenbrock_loop at 100 terms: 200 reads by the counter in one node of positions,
    # 100 reads x[i + 1] left in the chain, all scattered by one bincount
    x = np.zeros(101, dtype=dtype)
    rng = np.random.default_rng(1)
    values = list(rng.standard_normal(200))
    others = None
    for i in range(100):
        others = (i + 1, float(rng.standard_normal()), others)
    node = loop_reads(range(100), 2, values, x, others)
    assert type(node[0]) is np.ndarray and node[2] is others
    for acc in (ZERO, np.linspace(0.0, 1.0, 101).astype(dtype)):
        expect = fold_reads(acc, x, _chain(range(100), 2, values, others))
        got = fold_reads(acc, x, node)
        assert got.dtype == expect.dtype
        np.testing.assert_allclose(got, expect, rtol=1e-6 if dtype == np.float32 else 1e-13)


def _gather_and_elements(x):
    # an integer-array read (repeated and negative positions) beside element reads: the
    # positions array joins the elements in one bincount
    return np.sum(x[np.array([0, 2, 2, -1])] ** 2) + x[1] * x[3] + x[-1]


def _mask_and_elements(x):
    # a boolean mask beside element reads: not positions, the general scatter
    return np.sum(x[x > 0.7] ** 2) + x[1] * x[3]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn", [_gather_and_elements, _mask_and_elements])
def test_array_reads_beside_element_reads(fn, dtype):
    check_grads(fn, X.astype(dtype))


@pytest.mark.parametrize("index", [0, 1, -1, -2])
@pytest.mark.parametrize("value", [0.5, np.float64(-2.0), 0.0])
def test_one_tuple_read_folds_as_the_general_path(index, value):
    """One float read of a tuple (``quad(...)[0]``) takes a short way: the same cotangent
    as the general path (a list of the same items, read the same way, goes there)."""
    x = (1.0, 2.0)
    folded = fold_reads(ZERO, x, (index, value, None))
    general = fold_reads(ZERO, list(x), (index, value, None))
    assert type(folded) is tuple and list(folded) == general
    assert folded[index] is value and folded[index + 1 if index in (0, -2) else 0] is ZERO
