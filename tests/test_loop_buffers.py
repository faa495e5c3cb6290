"""A reverse loop's own buffer for one read ``x[i]`` a step (issue 13,
pullback.loop_buffers and pullback.transform.loop_reads): gradients against finite
differences (float64, float32) and at second order, bit for bit against the list of
cotangents the pass wrote before (loop_reads' node), and the runtime helpers against the
node and the chain they replace, their fallbacks included."""

import warnings

import numpy as np
import pytest

import pullback
import pullback.transform.loop_reads as loop_reads_module
from pullback import grad, vjp
from pullback.loop_buffers import fold_owned_reads, own_reads, owned_node
from pullback.read_folds import fold_reads, loop_reads
from pullback.tangents import ZERO
from pullback.testing import check_grads

DTYPES = [np.float64, np.float32]


def make_cases():
    def mse(y, yhat):
        n = len(y)
        s = 0.0
        for i in range(n):
            d = y[i] - yhat[i]
            s = s + d * d
        return s / n

    def stepped(x, yhat):
        s = 0.0
        for i in range(x.shape[0] - 1, -1, -2):
            s = s + np.sin(x[i] * yhat[i])
        return s

    def with_other_reads(x, yhat):
        s = x[0] * x[2]  # reads by constants: the chain beside the loop's node
        for i in range(1, x.shape[0]):
            s = s + np.cos(x[i]) * yhat[i]
        return s + x[3] * x[3]

    def read_in_branch(x, yhat):
        s = 0.0
        for i in range(x.shape[0]):
            t = x[i] * yhat[i]
            if t > 0.5:
                s = s + t * t
            else:
                s = s - t
        return s

    def with_continue(x, yhat):
        s = 0.0
        for i in range(x.shape[0]):
            if yhat[i] > 1.0:
                continue
            s = s + np.exp(x[i])
        return s

    def with_break(x, yhat):
        s = 0.0
        for i in range(x.shape[0]):
            s = s + x[i] * yhat[i]
            if s > 1.5:
                break
        return s

    def repeated_index(x, yhat):
        s = 0.0
        for i in range(-3, 3):  # x[-3] is x[2] of a 5-vector: one element read twice
            s = s + np.sin(x[i]) * yhat[i]
        return s

    def zero_steps(x, yhat):
        s = x[0] * 2.0
        for i in range(x.shape[0] - x.shape[0]):
            s = s + x[i] * yhat[i]
        return s

    def written_in_place(x, yhat):
        y = x * 1.0  # a local array, written in the loop
        s = 0.0
        for i in range(x.shape[0]):
            y[i] = y[i] * yhat[i]
            s = s + y[i] * x[i]
        return s

    def from_a_local(x, yhat):
        z = np.tanh(x)  # the read array is local, its adjoint folded into x's
        s = 0.0
        for i in range(x.shape[0]):
            s = s + z[i] * yhat[i]
        return s

    return {
        f.__name__: f
        for f in (
            mse,
            stepped,
            with_other_reads,
            read_in_branch,
            with_continue,
            with_break,
            repeated_index,
            zero_steps,
            written_in_place,
            from_a_local,
        )
    }


CASES = make_cases()
X = np.array([0.6, 1.1, -0.8, 0.95, 0.3])
YHAT = np.array([0.5, 1.2, 0.7, -0.4, 0.9])
BUFFERED = ["mse", "stepped", "with_other_reads", "read_in_branch", "from_a_local"]


def args(dtype=np.float64):
    return X.astype(dtype), YHAT.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(CASES))
def test_matches_finite_differences(name, dtype):
    check_grads(CASES[name], *args(dtype))


@pytest.mark.parametrize("name", BUFFERED)
def test_the_buffer_is_used(name):
    source = grad(CASES[name]).source_for(*args())
    assert "_own_reads(" in source
    # folded as the loop ends (one call), or pushed as a node under later reads
    folded_at_once = name in ("mse", "stepped", "read_in_branch", "from_a_local")
    assert ("_fold_owned_reads(" in source) == folded_at_once
    assert ("_owned_node(" in source) != folded_at_once


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("dtype", DTYPES)
def test_bit_for_bit_as_the_list_of_cotangents(name, dtype, monkeypatch):
    x, yhat = args(dtype)
    fresh = grad(CASES[name])
    new = [fresh(x, yhat), fresh(x, yhat), vjp(CASES[name], x, yhat)[1](1.0)[0]]
    monkeypatch.setattr(loop_reads_module, "_own_buffer", loop_reads_module._list_reads)
    old_fn = make_cases()[name]
    assert "_own_reads(" not in grad(old_fn).source_for(x, yhat)
    old = grad(old_fn)(x, yhat)
    for got in new:  # the first call, the hot entry's fused sweeps, the two sweeps
        assert got.dtype == old.dtype
        assert np.array_equal(got, old)
        assert np.array_equal(np.signbit(got), np.signbit(old))


@pytest.mark.parametrize(
    "name", ["mse", "stepped", "read_in_branch", "written_in_place", "from_a_local"]
)
def test_second_order(name):
    check_grads(CASES[name], *args(), order=2)


def test_a_matrix_read_by_rows_keeps_the_chain():
    def rows(a, w):
        s = 0.0
        for i in range(a.shape[0]):
            s = s + np.sum(np.sin(a[i]) * w)
        return s

    a = np.arange(12.0).reshape(4, 3) / 10.0
    check_grads(rows, a, np.array([0.3, -0.2, 0.5]))


def test_a_stack_of_cotangents_keeps_the_chain():
    # a Jacobian runs its cotangents stacked: each is an array, not a slot's number
    def two(x):
        s = 0.0
        for i in range(x.shape[0]):
            s = s + x[i] * x[i] * float(i + 1)
        return np.stack([s, s * s])

    x = X.copy()
    jac = pullback.jacobian(two)(x)
    s = np.sum(x * x * np.arange(1.0, 6.0))
    row = 2.0 * x * np.arange(1.0, 6.0)
    np.testing.assert_allclose(jac, np.stack([row, 2.0 * s * row]), rtol=1e-12)


# -- the helpers -----------------------------------------------------------------------


def _loop(steps, values, x, rest, at_once=False):
    """What the reverse loop does: ``(buffer, chain)`` after it (``at_once``: the loop
    whose chain is folded as it ends, which stores ``cotangent or 0.0``)."""
    buffer, types = own_reads(steps, x)
    cotangents = iter(values)
    chain = rest
    for i in reversed(steps):
        value = next(cotangents)
        if type(value) in types:
            buffer[i] = (value or 0.0) if at_once else value
        else:
            chain = (i, value, chain)
    return buffer, chain


def _run(steps, values, x, rest):
    """The chain after the loop: its node pushed."""
    return owned_node(steps, *_loop(steps, values, x, rest))


STEPS = [range(5), range(1, 6), range(5, 0, -1), range(0, 6, 2), range(5, -1, -3), range(1)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
@pytest.mark.parametrize("steps", STEPS)
def test_the_node_is_loop_reads_node(steps, dtype):
    x = np.zeros(6, dtype=dtype)
    values = [0.25, -0.0, np.float32(2.5), -1.0, 3.1, np.float64(0.5)][: len(steps)]
    for acc in (ZERO, np.arange(6.0).astype(dtype) - 2.0, -np.zeros(6, dtype)):
        for rest in (None, (slice(2, 4), np.ones(2, dtype=dtype), None), (3, -0.0, None)):
            node = _run(steps, values, x, rest)
            old = loop_reads(steps, 1, values, x, rest)
            if dtype != np.float16:  # loop_reads makes no node of float16 weights
                assert node[0] == old[0] and node[2] is rest
                assert node[1].dtype == old[1].dtype and np.array_equal(node[1], old[1])
                assert np.array_equal(np.signbit(node[1]), np.signbit(old[1]))
            expect = fold_reads(acc, x, old)
            got = fold_reads(acc, x, node)
            assert got.dtype == expect.dtype
            assert np.array_equal(got, expect)
            assert np.array_equal(np.signbit(got), np.signbit(expect))
            buffer, chain = _loop(steps, values, x, rest, at_once=True)
            got = fold_owned_reads(acc, x, chain, steps, buffer)
            assert got.dtype == expect.dtype
            assert np.array_equal(got, expect)
            if acc is ZERO:  # else a -0.0 cotangent into a -0.0 slot may give +0.0
                assert np.array_equal(np.signbit(got), np.signbit(expect))


def test_the_loop_reads_alone_are_the_buffer():
    x = np.zeros(4)
    buffer, chain = _loop(range(4), [1.5, -0.0, 2.0, 0.0], x, None, at_once=True)
    got = fold_owned_reads(ZERO, x, chain, range(4), buffer)
    assert got is buffer  # no copy
    assert got.tolist() == [0.0, 2.0, 0.0, 1.5] and not np.signbit(got).any()


@pytest.mark.parametrize(
    "steps, x",
    [
        (range(-2, 3), np.zeros(5)),  # a negative position: one element could be read twice
        (range(3), [0.0, 0.0, 0.0]),  # a list
        (range(3), np.zeros((3, 2))),  # rows of a matrix
        (range(3), np.zeros(3, dtype=np.int64)),  # no float cotangent
        (range(0), np.zeros(3)),  # no step
    ],
)
def test_no_buffer(steps, x):
    assert own_reads(steps, x) == (None, frozenset())
    assert owned_node(steps, None, (0, 1.0, None)) == (0, 1.0, None)


@pytest.mark.parametrize(
    "odd", [ZERO, 1 + 1j, np.array(2.0), np.float16(2.0), 3]  # not stored: onto the chain
)
def test_other_cotangents_go_onto_the_chain(odd):
    x = np.zeros(5)
    values = [0.5, odd, 2.0, -1.0, 0.25]
    node = _run(range(5), values, x, None)
    assert node[2] == (3, odd, None) or node[2][0] == 3  # the odd one, at position 3
    chain = None
    for i, value in zip(reversed(range(5)), values, strict=True):
        chain = (i, value, chain)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        got = fold_reads(ZERO, x, node)
        expect = fold_reads(ZERO, x, chain)
    np.testing.assert_array_equal(got, expect)


@pytest.mark.parametrize("dtype", DTYPES)
def test_negative_zero_cotangents_bit_for_bit(dtype, monkeypatch):
    # y[i] - yhat[i] is -0.0 at 0 and +0.0 at 2: cotangents -0.0 and +0.0, summed into a
    # zero slot as +0.0 by the old fold; the buffer stores them as +0.0
    y = np.array([-0.0, 1.0, 0.5, -0.0], dtype=dtype)
    yhat = np.array([0.0, 0.25, 0.5, -0.0], dtype=dtype)
    new = grad(CASES["mse"])
    got = [new(y, yhat), new(y, yhat)]
    monkeypatch.setattr(loop_reads_module, "_own_buffer", loop_reads_module._list_reads)
    old = grad(make_cases()["mse"])(y, yhat)
    for g in got:
        assert np.array_equal(g, old) and np.array_equal(np.signbit(g), np.signbit(old))


def _local_loop(t):
    z = np.array([t, 2.0 * t, t * t])  # a local array read once a step, folded mid-sweep
    s = 0.0
    for i in range(3):
        s = s + np.sin(z[i]) * t
    return s


def test_derivatives_of_derivatives_keep_the_chain():
    # grad of grad of a fold as the loop ends: the differentiable-again functions fold
    # the chain (fold_owned_reads has no rule), up to the third derivative
    g1 = grad(_local_loop)
    g2 = grad(g1)
    g3 = grad(g2)
    t, h = 0.7, 1e-5
    z = np.array([t, 2.0 * t, t * t])
    np.testing.assert_allclose(g1(t), np.sum(np.sin(z)) + t * (np.cos(z) @ [1.0, 2.0, 2 * t]))
    np.testing.assert_allclose(g2(t), (g1(t + h) - g1(t - h)) / (2 * h), rtol=1e-7)
    np.testing.assert_allclose(g3(t), (g2(t + h) - g2(t - h)) / (2 * h), rtol=1e-6)
