"""An array handed from one name to another (double buffering, check/moves.py): ``u, un =
un, u``, ``tmp = u; u = un; un = tmp``, ``u[:] = un``, three buffers rotated, a swap under a
condition (also one that depends on the data), in-place calls and ``+=`` on a name that got
its array by a swap. Reverse mode against central finite differences in float64 and
float32, forward mode (``jvp``) and second order (reverse over reverse); the aliases that
stay refused, with their messages; and the writes into a name that got its array from
another, which must make new arrays (an in-place write would change what a pullback read
before the move holds)."""

import numpy as np
import pytest
from fd import numerical_grad

from pullback import UnsupportedSyntaxError, grad, jvp
from pullback.testing import check_grads

DTYPES = [np.float64, np.float32]
X = np.linspace(0.1, 1.0, 7) ** 2


# -- the functions under test ---------------------------------------------------------------
def heat_swap(x, k=0.2, steps=5):
    u = x.copy()
    un = np.empty_like(u)
    for _ in range(steps):
        un[1:-1] = u[1:-1] + k * (u[2:] - 2 * u[1:-1] + u[:-2])
        un[0] = u[0] * u[1]
        un[-1] = u[-1]
        u, un = un, u
    return np.sum(u**2) + un[2]


def heat_temporary(x, k=0.2, steps=5):
    u = x.copy()
    un = np.empty_like(u)
    for _ in range(steps):
        un[1:-1] = u[1:-1] + k * (u[2:] - 2 * u[1:-1] + u[:-2])
        un[0] = np.sin(u[0])
        un[-1] = u[-1]
        tmp = u
        u = un
        un = tmp
    return np.sum(u**2)


def heat_copy_back(x, k=0.2, steps=5):
    u = x.copy()
    un = np.empty_like(u)
    for _ in range(steps):
        un[1:-1] = u[1:-1] + k * (u[2:] - 2 * u[1:-1] + u[:-2])
        un[0] = u[0] ** 2
        un[-1] = u[-1]
        u[:] = un
    return np.sum(u**2)


def heat_new_copy(x, k=0.2, steps=5):
    u = x.copy()
    for _ in range(steps):
        un = u.copy()
        un[1:-1] = u[1:-1] + k * (u[2:] - 2 * u[1:-1] + u[:-2])
        u = un
    return np.sum(u**3)


def wave_rotation(x, c=0.3, steps=6):
    prev = x.copy()
    cur = x * 1.0
    nxt = np.zeros_like(x)
    for _ in range(steps):
        nxt[1:-1] = 2 * cur[1:-1] - prev[1:-1] + c * (cur[2:] - 2 * cur[1:-1] + cur[:-2])
        nxt[0] = cur[1]
        nxt[-1] = cur[-2] * cur[-1]
        prev, cur, nxt = cur, nxt, prev
    return np.sum(cur * prev)


def grid_swap(x):
    u = np.outer(x[:4], x[:4])
    un = np.zeros_like(u)
    for _ in range(3):
        un[1:-1, 1:-1] = 0.25 * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2])
        un[0, :] = u[0, :] * u[1, :]
        u, un = un, u
    return np.sum(u**2)


def swap_every_other(x):
    u = x.copy()
    un = np.zeros_like(u)
    for t in range(5):
        un[1:] = u[:-1] * u[1:]
        un[0] = u[0]
        if t % 2 == 0:
            u, un = un, u
    return np.sum(u) + np.sum(un * un)


def swap_on_data(x):
    u = x.copy()
    un = np.zeros_like(u)
    for _ in range(5):
        un[1:] = np.sqrt(u[:-1] * u[1:] + 1.0)
        un[0] = u[0] * 0.9
        if np.sum(un) > np.sum(u):
            u, un = un, u
    return np.sum(u * x)


def calls_after_swap(x):
    u = x.copy()
    un = np.empty_like(u)
    for _ in range(3):
        np.multiply(u, 0.9, out=un)
        un[0] = u[1] * u[0]
        np.copyto(u, un * un)
        u, un = un, u
        u += x
    return np.sum(u * un)


def handed_once(x):
    a = np.zeros(4)
    a[0:2] = x[:2]
    s = np.sum(a[0:2] * a[0:2])  # a pullback holds what a shows here
    p = np.sin(a)
    b = a
    b[0:3] = 3.0 * x[2:5] ** 2
    return s + np.sum(b * x[:4]) + np.sum(p * b)


CASES = [
    heat_swap,
    heat_temporary,
    heat_copy_back,
    heat_new_copy,
    wave_rotation,
    grid_swap,
    swap_every_other,
    swap_on_data,
    calls_after_swap,
    handed_once,
]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_gradient_matches_central_differences(f):
    x = X.copy()
    g = grad(f)(x)
    np.testing.assert_array_equal(x, X)  # the caller's array is left alone
    np.testing.assert_allclose(g, numerical_grad(f, (X,), 0), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_check_grads(f, dtype):
    check_grads(f, X.astype(dtype))


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_float32_gradient_keeps_its_dtype(f):
    g = grad(f)(X.astype(np.float32))
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, grad(f)(X), rtol=2e-3, atol=2e-4)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_forward_mode(f):
    v = np.cos(np.arange(X.size) * 1.3)
    y, dy = jvp(f, (X,), (v,))
    h = 1e-6
    assert y == pytest.approx(f(X))
    assert dy == pytest.approx((f(X + h * v) - f(X - h * v)) / (2 * h), rel=1e-6, abs=1e-8)


@pytest.mark.parametrize(
    "f",
    [heat_swap, heat_temporary, heat_copy_back, wave_rotation, swap_on_data, handed_once],
    ids=lambda f: f.__name__,
)
def test_second_order_reverse_over_reverse(f):
    assert check_grads(f, X, order=2) == "reverse over reverse"


def test_writes_into_a_handed_array_make_new_arrays():
    # a is written in place (no whole use before its last write), b got a's array: its
    # writes copy, so the values the pullbacks of a's reads hold stay as they were.
    source = grad(handed_once).source
    assert "= _pb_array_set_copy(b, " in source
    assert "_pb_array_set_copy(a, " not in source


# -- what stays refused ---------------------------------------------------------------------
def temporary_read_after(x):
    u = x.copy()
    un = np.zeros_like(u)
    for _ in range(3):
        un[1:] = u[:-1] * 2.0
        tmp = u
        u = un
        un = tmp
    return np.sum(u) + np.sum(tmp * x)  # tmp and un are one array


def alias_read_after_write(x):
    a = np.zeros(4)
    b = a
    b[0] = x[0]
    return np.sum(a * x[:4])


def one_array_two_names(x):
    u = x.copy()
    a, b = u, u
    a[0] = 3.0 * x[1]
    return np.sum(b * x)


def view_before_hand_on(x):
    a = x.copy()
    v = a[1:3]
    b = a
    b[1:3] = x[:2] ** 2
    return np.sum(v * x[:2])


def read_by_a_lambda(x):
    a = x.copy()
    total = lambda: np.sum(a)  # noqa: E731
    b = a
    b[0] = x[1] ** 2
    return total() + np.sum(b)


def same_array_each_pass(x):
    a = x.copy()
    s = 0.0
    for t in range(3):
        b = a
        b[t] = x[t] * 2.0
        s = s + np.sum(b)
    return s


def skipped_by_continue(x):
    u = x.copy()
    un = np.zeros_like(u)
    for t in range(3):
        un[1:] = u[:-1] * 2.0
        tmp = u
        u = un
        if t == 1:
            continue  # un stays u's array
        un = tmp
    return np.sum(u)


def into_a_list_by_slice(x):
    u = np.outer(x, x)
    rows = [None, None]
    rows[0:2] = u[:2]
    u[0, 0] = 5.0
    return np.sum(rows[0])


REFUSED = [
    (temporary_read_after, "un[1:] = u[:-1] * 2.0", "'un' is bound on line"),
    (alias_read_after_write, "b[0] = x[0]", "'b' is bound on line"),
    (one_array_two_names, "a[0] = 3.0 * x[1]", "'a' is bound on line"),
    (view_before_hand_on, "b[1:3] = x[:2] ** 2", "cannot prove that 'b'"),
    (read_by_a_lambda, "b[0] = x[1] ** 2", "'b' is bound on line"),
    (same_array_each_pass, "b[t] = x[t] * 2.0", "'b' is bound on line"),
    (skipped_by_continue, "un[1:] = u[:-1] * 2.0", "cannot prove that 'un'"),
    (into_a_list_by_slice, "u[0, 0] = 5.0", "'u' is also used on line"),
]


@pytest.mark.parametrize("f, line, why", REFUSED, ids=lambda v: getattr(v, "__name__", None))
def test_aliases_stay_refused(f, line, why):
    x = X.copy()
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(f)(x)
    np.testing.assert_array_equal(x, X)  # nothing ran
    text = str(info.value)
    assert "PB101" in text and line in text and why in text


def test_message_of_a_name_read_after_it_handed_on_its_array():
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(alias_read_after_write)(X)
    text = str(info.value)
    assert "'b' is bound on line" in text and "to the array of 'a'" in text
    assert "when the name it comes from is bound anew before anything reads it again" in text
    assert "Fix: bind 'b' to a copy there (`b = a.copy()`) when 'a' must keep its values" in text


# -- a, b = b, a reads both values before it binds either ----------------------------------
def scalar_swap_in_loop(x):
    a = x * 1.0
    b = x * 2.0
    for _ in range(3):
        b = b + a * a
        a, b = b, a
    return b + 0.5 * a


def rotate_three(x):
    a, b, c = np.sin(x), np.cos(x), x * x
    a, b, c = b, c, a
    return a + 2.0 * b + 3.0 * c


@pytest.mark.parametrize("f", [scalar_swap_in_loop, rotate_three], ids=lambda f: f.__name__)
def test_swapped_numbers(f):
    h = 1e-6
    for x in (0.3, 0.8):
        assert grad(f)(x) == pytest.approx((f(x + h) - f(x - h)) / (2 * h), rel=1e-7)
        _, dy = jvp(f, (x,), (1.0,))
        assert dy == pytest.approx((f(x + h) - f(x - h)) / (2 * h), rel=1e-7)
    assert check_grads(f, 0.3, order=2) == "reverse over reverse"


# -- stores in a row into an array written by copies: one copy ------------------------------
def chained_stores(x):
    a = x * 1.0
    s = np.sum(a * a)  # a whole use before the writes: a is written by copies
    a[0:2] = x[:2] ** 2
    a[2] = a[0] * a[1]  # reads a: a copy
    a[3:] = np.sin(x[3:])  # into the copy the store above made, in place
    a[0] = x[4] * 3.0
    return s + np.sum(a * a * x)


def test_stores_in_a_row_write_into_the_copy_the_first_made():
    source = grad(chained_stores).source
    forward = source[: source.index("def chained_stores__backward")]
    assert forward.count("_pb_array_set_copy(") == 2
    assert forward.count("_pb_array_set(") == 2
    forward = grad(heat_swap).source
    forward = forward[: forward.index("def heat_swap__backward")]
    assert forward.count("_pb_array_set_copy(") == 1  # un[1:-1] = ...; un[0]; un[-1]


@pytest.mark.parametrize("dtype", DTYPES)
def test_stores_in_a_row_against_central_differences(dtype):
    np.testing.assert_allclose(
        grad(chained_stores)(X), numerical_grad(chained_stores, (X,), 0), rtol=1e-6
    )
    check_grads(chained_stores, X.astype(dtype))
    assert check_grads(chained_stores, X, order=2) == "reverse over reverse"
    v = np.sin(np.arange(X.size) + 1.0)
    _, dy = jvp(chained_stores, (X,), (v,))
    h = 1e-6
    fd = (chained_stores(X + h * v) - chained_stores(X - h * v)) / (2 * h)
    assert dy == pytest.approx(fd, rel=1e-6)
