"""Shape and layout rules against finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from rule_inputs import FLOATS, make, make_complex

from pullback.testing import check_rrule

D = pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)


@D
def test_reshape_and_ravel(dtype):
    x = make("real", (2, 3, 4), dtype)
    check_rrule(np.reshape, x, (6, 4))
    check_rrule(np.reshape, x, (4, -1), "F")
    check_rrule(np.reshape, x, -1, order="F")
    check_rrule(np.reshape, x, shape=(3, 8))
    check_rrule(np.ravel, x)
    check_rrule(np.ravel, x, "F")
    check_rrule(np.ravel, np.asfortranarray(x[0]), order="A")
    check_rrule(np.ravel, x.T, order="K")
    check_rrule(np.reshape, 2.5, (1, 1))


@D
def test_squeeze_expand_atleast(dtype):
    x = make("real", (3, 1, 2, 1), dtype)
    check_rrule(np.squeeze, x)
    check_rrule(np.squeeze, x, 1)
    check_rrule(np.squeeze, x, axis=(1, 3))
    check_rrule(np.expand_dims, x[:, 0], 0)
    check_rrule(np.expand_dims, x[:, 0], axis=(0, -1))
    v = make("real", (3,), dtype)
    for fn in (np.atleast_1d, np.atleast_2d, np.atleast_3d):
        check_rrule(fn, v)
        check_rrule(fn, 1.5)
        check_rrule(fn, v, make("real", (2, 2), dtype))


@D
def test_axis_permutations(dtype):
    x = make("real", (2, 3, 4), dtype)
    check_rrule(np.transpose, x)
    check_rrule(np.transpose, x, (1, 2, 0))
    check_rrule(np.transpose, x, axes=(2, 0, -2))
    check_rrule(np.permute_dims, x, (2, 0, 1))
    check_rrule(np.swapaxes, x, 0, 2)
    check_rrule(np.moveaxis, x, 0, -1)
    check_rrule(np.moveaxis, x, [0, 1], [2, 0])
    for axis, start in [(2, 0), (0, 3), (1, 0), (0, 2), (-1, 1)]:
        check_rrule(np.rollaxis, x, axis, start)
    check_rrule(np.rollaxis, x, 2)
    check_rrule(np.matrix_transpose, x)
    check_rrule(np.linalg.matrix_transpose, x)


@D
def test_broadcasting(dtype):
    x = make("real", (3, 1), dtype)
    check_rrule(np.broadcast_to, x, (2, 3, 4))
    check_rrule(np.broadcast_to, 1.5, (2, 2))
    check_rrule(np.broadcast_arrays, x, make("real", (4,), dtype), 2.0)


@D
def test_repeat_tile(dtype):
    x = make("real", (2, 3), dtype)
    check_rrule(np.repeat, x, 2)
    check_rrule(np.repeat, x, 3, 1)
    check_rrule(np.repeat, x, [1, 0, 2], axis=1)
    check_rrule(np.repeat, x, [2, 1], axis=-2)
    check_rrule(np.repeat, x, [1, 0, 2, 1, 1, 3])
    check_rrule(np.tile, x, 2)
    check_rrule(np.tile, x, (2, 1, 3))
    check_rrule(np.tile, x, (3,))
    check_rrule(np.tile, make("real", (2, 1, 2), dtype), (2, 2))


@D
def test_roll_flip_rot(dtype):
    x = make("real", (3, 4), dtype)
    check_rrule(np.roll, x, 2)
    check_rrule(np.roll, x, -1, 1)
    check_rrule(np.roll, x, (1, 2), axis=(0, 1))
    check_rrule(np.flip, x)
    check_rrule(np.flip, x, 1)
    check_rrule(np.flip, x, axis=(0, 1))
    check_rrule(np.flipud, x)
    check_rrule(np.fliplr, x)
    for k in (0, 1, 2, 3, -1, 5):
        check_rrule(np.rot90, x, k)
    check_rrule(np.rot90, make("real", (2, 3, 4), dtype), 1, (2, 0))


@D
@pytest.mark.parametrize(
    "mode", ["constant", "edge", "reflect", "symmetric", "wrap", "mean", "linear_ramp"]
)
def test_pad(mode, dtype):
    x = make("real", (3, 4), dtype)
    check_rrule(np.pad, x, 2, mode)
    check_rrule(np.pad, x, ((1, 2), (0, 3)), mode=mode)
    check_rrule(np.pad, x[0], (3, 1), mode)


def test_pad_constant_values_and_reflect_type():
    x = make("real", (3, 4))
    check_rrule(np.pad, x, 1, constant_values=2.5)
    check_rrule(np.pad, x, 2, "reflect", reflect_type="odd")
    check_rrule(np.pad, x, 2, "symmetric", reflect_type="odd")
    check_rrule(np.pad, x, ((1, 2), (2, 1)), "mean", stat_length=2)
    check_rrule(np.pad, x, 2, "linear_ramp", end_values=(1.0, -2.0))


def test_astype():
    x = make("real", (2, 3))
    check_rrule(np.ndarray.astype, x, np.float32)
    check_rrule(np.ndarray.astype, x.astype(np.float32), np.float64)
    check_rrule(np.ndarray.astype, x, np.complex128)
    check_rrule(np.ndarray.astype, make_complex((2, 3)), np.complex64)
    check_rrule(np.astype, x, np.float32)


def test_astype_to_int_has_no_gradient():
    from pullback.registry import default_registry
    from pullback.tangents import ZERO

    rule = default_registry().lookup(np.ndarray.astype)
    _, back = rule.rrule(make("real", (3,)), np.int64)
    assert back(np.ones(3))[0] is ZERO


def test_complex_layout():
    z = make_complex((2, 3))
    check_rrule(np.transpose, z)
    check_rrule(np.reshape, z, (3, 2))
    check_rrule(np.repeat, z, [1, 2], axis=0)
    check_rrule(np.pad, z, 1, "reflect")


def test_ravel_k_of_a_view_in_neither_order_closure_matches_the_reading():
    # np.ravel(x, "K") of a transposed view reads the axes by their strides: element k of
    # the result is x's element holding label k's value, and the rule's closure sends the
    # cotangent's entry k there (it read the view in C or F order before)
    from pullback.registry import default_registry

    labels = np.arange(24.0).reshape(2, 3, 4).transpose(2, 0, 1)
    for order in ("K", "A"):
        flat = np.ravel(labels, order)
        w = np.linspace(-1.0, 1.0, 24)
        want = np.zeros_like(labels)
        for k, label in enumerate(flat):
            want[labels == label] = w[k]
        _, back = default_registry().lookup(np.ravel).rrule(labels, order)
        np.testing.assert_array_equal(back(w)[0], want)
