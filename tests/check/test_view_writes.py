"""A write through a view attribute of a local array (``A.T[0, 1] = v``) is a write into
the array: refused before anything runs as PB101, with the write into the array itself as
the fix (it was taken for an item of a container held by an object, and refused while
running with a message about data from outside)."""

from __future__ import annotations

import numpy as np
import pytest

from pullback import grad
from pullback.errors import UnsupportedSyntaxError


def through_transpose(v):
    A = np.zeros((2, 2))
    A.T[0, 1] = v[0]
    return A[1, 0] * v[1]


def into_the_array(v):
    A = np.zeros((2, 2))
    A[1, 0] = v[0]
    return A[1, 0] * v[1]


def through_real(v):
    A = np.zeros(2)
    A.real[0] = v[0]
    return np.sum(A) * v[1]


@pytest.mark.parametrize(
    "fn, hint",
    [
        (through_transpose, "Fix: write into 'A' itself: `A[j, i] = ...` for `A.T[i, j] = ...`"),
        (through_real, "Fix: write into 'A' itself (see docs/limitations.md#PB101)"),
    ],
)
def test_a_write_through_a_view_attribute_is_refused_before_running(fn, hint):
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(fn)(np.array([0.5, 2.0]))
    message = str(info.value)
    assert "PB101 array mutation: assignment to an element of 'A." in message
    assert "is a view of 'A': the write changes 'A'" in message
    assert hint in message


def test_the_fix_differentiates():
    np.testing.assert_allclose(grad(into_the_array)(np.array([0.5, 2.0])), [2.0, 0.5])
