"""The faster forms of list pullbacks that the sweeps call (transform/ownership.py's
sweep forms) give exactly what the transformable pullbacks give: the same values of the
same types, for every kind of list they accept and for what they hand on."""

import numpy as np
import pytest

import pullback
from pullback.containers_inplace import (
    list_set_pullback,
    list_set_pullback_sweep,
)
from pullback.rules.numpy_assemble_pullbacks import array_pullback, array_pullback_sweep
from pullback.tangents import ZERO, CotangentList
from pullback.testing import check_grads

RNG = np.random.default_rng(5)


def _same(a, b):
    assert type(a) is type(b)
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for u, v in zip(a, b, strict=True):
            _same(u, v)
    elif isinstance(a, (np.ndarray, np.generic)):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    else:
        assert a == b or a is b


LISTS = [
    [0.5, 1.5, -2.0],  # Python floats
    [1, 2, 3],  # ints
    [np.float64(0.25), 2.0, 3],  # mixed, with a NumPy float64
    [np.float32(0.25), 2.0],  # a float32 item: the general path
    [[1.0, 2.0], [3.0, 4.0]],  # nested: the general path
    [np.ones(2), np.zeros(2)],  # arrays: the general path
    [],
]


@pytest.mark.filterwarnings("ignore:Casting complex values")  # the reference casts
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("obj", LISTS, ids=range(len(LISTS)))
def test_array_pullback_sweep_is_array_pullback(obj, dtype):
    dy = RNG.standard_normal(np.shape(np.array(obj))).astype(dtype)
    if dtype is np.complex128:
        dy = dy + 1j * RNG.standard_normal(dy.shape)
    _same(array_pullback_sweep(dy, obj), array_pullback(dy, obj))
    _same(array_pullback_sweep(dy, tuple(obj)), array_pullback(dy, tuple(obj)))


def test_array_pullback_sweep_passes_options_on():
    obj = [1.0, 2.0]
    dy = np.ones((1, 2))
    _same(array_pullback_sweep(dy, obj, ndmin=2), array_pullback(dy, obj, ndmin=2))
    dy = np.ones(2, dtype=np.float32)
    _same(
        array_pullback_sweep(dy, obj, np.float32), array_pullback(dy, obj, np.float32)
    )


@pytest.mark.parametrize(
    "dy",
    [
        lambda: CotangentList([0.5, ZERO, 2.0]),
        lambda: (0.5, 1.0, 2.0),
        lambda: [0.5, 1.0, 2.0],
        lambda: ZERO,
    ],
    ids=["owned", "tuple", "list", "zero"],
)
@pytest.mark.parametrize("p", [0, 2, -1])
def test_list_set_pullback_sweep_is_list_set_pullback(dy, p):
    xs = [1.0, 2.0, 3.0]
    if dy() is ZERO:
        _same(list_set_pullback_sweep(ZERO, xs, p, 4.0), list_set_pullback(ZERO, xs, p, 4.0))
        return
    got = list_set_pullback_sweep(dy(), xs, p, 4.0)
    expected = list_set_pullback(dy(), xs, p, 4.0)
    assert type(got[0]) is type(expected[0]) is CotangentList
    assert list(got[0]) == list(expected[0])
    assert got[1:] == expected[1:]
    owned = dy()
    if type(owned) is CotangentList:  # the sweep's own list: changed in place
        assert list_set_pullback_sweep(owned, xs, p, 4.0)[0] is owned


def store_loop(x):
    lst = [0.0] * x.shape[0]
    for i in range(x.shape[0]):
        lst[i] = np.sin(x[i]) * x[i]
    lst[0] = lst[1] * lst[-1]  # a read after the loop's writes
    return np.sum(np.array(lst) ** 2)


def append_then_array(x):
    out = []
    for i in range(x.shape[0]):
        out.append(x[i] * 2.0 if i % 2 else 1.0)  # Python floats and NumPy scalars
    return np.sum(np.array(out) * x)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("f", [store_loop, append_then_array])
def test_sweeps_with_sweep_forms_match_finite_differences(f, dtype):
    x = RNG.standard_normal(7).astype(dtype)
    check_grads(f, x)
    assert "_sweep(" in pullback.grad(f).source_for(x)


@pytest.mark.parametrize("f", [store_loop, append_then_array])
def test_second_order_keeps_the_transformable_pullbacks(f):
    x = RNG.standard_normal(5)
    assert check_grads(f, x, order=2) == "reverse over reverse"
