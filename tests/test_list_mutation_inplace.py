"""Item stores, ``del``, ``pop`` and ``insert`` on local lists made in place, at O(1) a
change (pullback.containers_inplace), when no earlier state of the list is read again;
copies when one is. Reverse mode against finite differences (float64, float32), forward
mode, second order; the generated code's shape (which path was taken); the pullbacks'
in-place update of the reverse sweep's own cotangent list."""

import list_inplace_cases as cases
import numpy as np
import pytest
from list_inplace_cases import check_value_and_forward_mode

import pullback
from pullback import grad
from pullback.containers_inplace import (
    list_insert_pullback,
    list_pop_pullback,
    list_set,
    list_set_pullback,
    list_take_pullback,
)
from pullback.errors import UnsupportedCallError
from pullback.tangents import ZERO, CotangentList
from pullback.testing import check_grads
from pullback.transform.normalize import core_source

X = np.array([0.3, 0.7, -0.4, 1.1, 0.6])
ALL = cases.IN_PLACE + cases.SHARED_STATES


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("f", ALL, ids=lambda f: f.__name__)
def test_reverse_mode_matches_finite_differences(f, dtype):
    check_grads(f, X.astype(dtype))


@pytest.mark.parametrize("f", ALL, ids=lambda f: f.__name__)
def test_value_and_forward_mode(f):
    check_value_and_forward_mode(f, X, 3)


@pytest.mark.parametrize("f", ALL, ids=lambda f: f.__name__)
def test_second_order_through_in_place_changes(f):
    check_grads(f, X, order=2)


def test_hessian_of_a_fill_loop():
    def f(x):
        lst = [0.0] * 3
        for i in range(3):
            lst[i] = x[i] * x[(i + 1) % 3]
        return lst[0] * lst[1] + lst[2] ** 2

    x = np.array([0.4, -1.2, 0.9])
    h = pullback.hessian(f)(x)
    a, b, c = x
    # f = a b^2 c + a^2 c^2
    want = np.array(
        [
            [2 * c * c, 2 * b * c, b * b + 4 * a * c],
            [2 * b * c, 2 * a * c, 2 * a * b],
            [b * b + 4 * a * c, 2 * a * b, 2 * a * a],
        ]
    )
    np.testing.assert_allclose(h, want, rtol=1e-12)


@pytest.mark.parametrize("f", cases.IN_PLACE, ids=lambda f: f.__name__)
def test_these_run_in_place(f):
    text = core_source(f)
    assert any(f"_pb_list_{op}(" in text for op in ("set", "insert", "delete", "pop")), text
    assert "+ 1:]" not in text  # no rebinding to a new list by slices


@pytest.mark.parametrize("f", cases.SHARED_STATES, ids=lambda f: f.__name__)
def test_a_state_read_again_keeps_copies(f):
    text = core_source(f)
    assert "_pb_list_" not in text.replace("_pb_list_index", ""), text


def test_an_augmented_store_in_place_takes_the_item_with_its_list():
    text = core_source(cases.augmented_loop)
    assert "_pb_list_take(acc" in text and "_pb_second(" in text and "_pb_first(" in text


def test_the_fill_loop_stores_with_the_users_index():
    text = core_source(cases.fill_loop)
    assert "lst = _pb_list_set(lst, i, " in text
    assert "_pb_expect_kind" not in text  # list_set checks the kind itself


def test_the_reverse_sweeps_own_cotangent_list_is_changed_in_place():
    owned = CotangentList([1.0, 2.0, 3.0])
    g, _, dv = list_set_pullback(owned, [0.0] * 3, 1, 5.0)
    assert g is owned and dv == 2.0 and list(g) == [1.0, ZERO, 3.0]
    g, _, dv = list_insert_pullback(owned, [0.0] * 3, 0, 5.0)
    assert g is owned and dv == 1.0 and list(g) == [ZERO, 3.0]
    g, _ = list_take_pullback((owned, 0.5), [0.0] * 2, 1)  # l[i] += v: the read goes back
    assert g is owned and list(g) == [ZERO, 3.5]


def test_any_other_cotangent_is_copied_once_and_left_alone():
    given = [1.0, 2.0, 3.0]
    g, _, dv = list_set_pullback(given, [0.0] * 3, -1, 5.0)
    assert given == [1.0, 2.0, 3.0] and type(g) is CotangentList and list(g) == [1.0, 2.0, ZERO]
    (g, _, _) = list_pop_pullback((ZERO, 4.0), [0.0] * 2, 1, 3)
    assert list(g) == [ZERO, 4.0, ZERO]


def test_a_bad_index_raises_what_python_raises():
    def f(x):
        lst = [0.0] * 3
        for i in range(4):
            lst[i] = x[i]
        return lst[0]

    with pytest.raises(IndexError, match="list assignment index out of range"):
        grad(f)(X)


def test_an_object_that_is_not_a_list_is_refused_when_it_runs():
    with pytest.raises(UnsupportedCallError, match="a change of a list ran on a ndarray"):
        list_set(np.zeros(3), 0, 1.0)
