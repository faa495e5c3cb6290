"""A change of an item of a defaultdict or a Counter is refused as a container
change (PB106), with a plain dict and the default at the read as the fix, which works."""

import collections
from collections import defaultdict

import numpy as np
import pytest

from pullback import UnsupportedSyntaxError, grad
from pullback.check import check_function
from pullback.testing import check_grads


def by_parity(x):
    d = defaultdict(float)
    for i, v in enumerate(x):
        d[i % 2] += v * v
    return d[0] - d[1]


def counted(x):
    c = collections.Counter()
    for i, v in enumerate(x):
        c[i % 2] += v
    return c[0] * c[1]


def by_parity_fixed(x):
    d = {}
    for i, v in enumerate(x):
        d[i % 2] = d.get(i % 2, 0.0) + v * v
    return d.get(0, 0.0) - d.get(1, 0.0)


@pytest.mark.parametrize(
    "fn, kind, fix",
    [
        (by_parity, "defaultdict", "`d[i % 2] = d.get(i % 2, 0.0) + v * v`"),
        (counted, "Counter", "`c[i % 2] = c.get(i % 2, 0) + v`"),
    ],
)
def test_refused_with_a_plain_dict_as_the_fix(fn, kind, fix):
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(fn)(np.ones(3))
    text = str(info.value)
    assert "PB106 container mutation: a change of an item of " in text
    assert f", a {kind}\n" in text and "test_dict_subclass_writes.py:" in text
    assert f"Fix: build a plain dict (`{fix[1]} = {{}}`) and write {fix}" in text
    # the check before running says the same
    assert [d.code for d in check_function(fn)] == ["PB106"]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_fix_differentiates(dtype):
    x = np.array([0.5, -1.0, 1.5, 2.0, 0.25], dtype=dtype)
    sign = np.where(np.arange(5) % 2 == 0, 1.0, -1.0)
    np.testing.assert_allclose(grad(by_parity_fixed)(x), 2 * x * sign, rtol=1e-6)
    check_grads(by_parity_fixed, x)
    assert by_parity_fixed(x) == pytest.approx(by_parity(x))
