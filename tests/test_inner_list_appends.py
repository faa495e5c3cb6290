"""An append to a list held inside another container (``d[k].append(v)``,
``d.setdefault(k, []).append(v)``) is refused with a fix that works: rebuild the entry."""

import numpy as np
import pytest

from pullback import UnsupportedSyntaxError, grad
from pullback.testing import check_grads


def by_index(x):
    d = {0: [], 1: []}
    for i, v in enumerate(x):
        d[i % 2].append(v)
    return sum(d[0]) * sum(d[1])


def by_setdefault(x):
    d = {}
    for i, v in enumerate(x):
        d.setdefault(i % 2, []).append(v * v)
    return sum(d[0]) * sum(d[1])


def by_index_fixed(x):
    d = {0: [], 1: []}
    for i, v in enumerate(x):
        d[i % 2] = d[i % 2] + [v]
    return sum(d[0]) * sum(d[1])


def by_setdefault_fixed(x):
    d = {}
    for i, v in enumerate(x):
        d[i % 2] = d.get(i % 2, []) + [v * v]
    return sum(d[0]) * sum(d[1])


@pytest.mark.parametrize(
    "fn, fix",
    [
        (by_index, "d[i % 2] = d[i % 2] + [v]"),
        (by_setdefault, "d[i % 2] = d.get(i % 2, []) + [v * v]"),
    ],
)
def test_the_refusal_names_the_line_and_the_rewrite(fn, fix):
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(fn)(np.ones(4))
    text = str(info.value)
    assert "test_inner_list_appends.py:" in text and "PB106" in text
    assert "a list held inside another container" in text
    assert f"Fix: rebuild the entry instead of appending to it in place: `{fix}`." in text


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_rewrites_differentiate(dtype):
    x = np.array([0.5, -1.0, 1.5, 2.0, 0.25], dtype=dtype)
    even, odd = x[::2], x[1::2]
    np.testing.assert_allclose(
        grad(by_index_fixed)(x),
        np.where(np.arange(5) % 2 == 0, odd.sum(), even.sum()),
        rtol=1e-6,
    )
    check_grads(by_index_fixed, x)
    check_grads(by_setdefault_fixed, x)
    assert by_index_fixed(x) == by_index(x)
    assert by_setdefault_fixed(x) == by_setdefault(x)
