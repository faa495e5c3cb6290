"""Array methods with rules of their own: item, tolist and compress."""

import numpy as np

from pullback.testing import check_rrule


def test_item():
    x = np.array([[0.5, -1.0], [2.0, 1.5]])
    check_rrule(np.ndarray.item, x, 2)
    check_rrule(np.ndarray.item, x, (1, 0))
    check_rrule(np.ndarray.item, np.array([3.0]))


def test_item_of_a_numpy_scalar():
    check_rrule(np.generic.item, np.float64(1.5))
    check_rrule(np.generic.item, np.float32(-0.75))


def test_tolist():
    check_rrule(np.ndarray.tolist, np.array([[0.5, -1.0], [2.0, 1.5]]))
    check_rrule(np.ndarray.tolist, np.array([0.25, 4.0], dtype=np.float32))


def test_compress_takes_the_array_first():
    # x.compress(c) is np.compress(c, x): the rule's first argument is the array
    x = np.array([[0.5, -1.0, 0.25], [2.0, 1.5, -0.75]])
    check_rrule(np.ndarray.compress, x, [True, False, True], 1)
    check_rrule(np.ndarray.compress, x, [False, True, True])
    check_rrule(np.ndarray.compress, x.astype(np.float32), [True, True], 0)
