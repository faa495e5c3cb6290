"""Second derivatives through a call whose object state changed after the call ran.

A gradient differentiated again pulls back through each call of a user function by running
that call again, later (transform/replay.py). What the callee reads besides its arguments'
values -- ``self.n``, a list or array an object holds, a module-level or closure-captured
object -- may have been changed in between by code that carries no gradient: another method
(``c.inc()``), the caller (``c.n += 1``), a helper (``bump(c)``), the next turn of a loop.
The recompute then runs on the object as the call read it (recompute_state.py): attributes
rebound since are given back from the record taken after the call; state changed in place
(a list item, an appended history, an array, a module-level object read inside a helper)
is refused at the call, with a fix. Every case: ``f(x) = K * sum(x**3)`` with ``K`` the sum
of the scales the calls saw, so the Hessian is ``diag(6 K x)``, checked against that and
against central differences of pullback's own gradient, in float64 and float32, for a
number and an array ``x``; and by grad of grad, hvp, jvp of the gradient, a third
derivative, and the first-order vjp (with a cotangent) and jvp.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from fd import central_jacobian
from hypothesis import given
from hypothesis import strategies as st
from sweeps import sweep

import pullback
from pullback.errors import UnsupportedCallError


class Scaled:
    def __init__(self):
        self.n = 1.0
        self.coef = [1.0]
        self.hist = []
        self.w = np.array([1.0])

    def scaled(self, x):
        return np.sum(x**3) * self.n

    def inc(self):
        self.n = self.n + 1.0

    def by_coef(self, x):
        return np.sum(x**3) * self.coef[0]

    def bump_coef(self):
        self.coef[0] += 1.0

    def by_history(self, x):
        return np.sum(x**3) * (len(self.hist) + 1)

    def by_array(self, x):
        return np.sum(x**3) * self.w[0]

    def bump_array(self):
        self.w[0] += 1.0


@dataclasses.dataclass
class Record:
    n: float = 1.0

    def scaled(self, x):
        return np.sum(x**3) * self.n


def bump(c):
    c.n = c.n + 1.0


def by_method(x, c):
    y1 = c.scaled(x)
    c.inc()
    return y1 + c.scaled(x)


def by_caller(x, c):
    y1 = c.scaled(x)
    c.n += 1.0
    return y1 + c.scaled(x)


def by_helper(x, c):
    y1 = c.scaled(x)
    bump(c)
    return y1 + c.scaled(x)


def by_loop(x, c):
    acc = 0.0
    for _ in range(3):
        acc = acc + c.scaled(x)
        c.inc()
    return acc


def plain_scaled(x, c):
    return np.sum(x**3) * c.n


def by_plain_function(x, c):
    y1 = plain_scaled(x, c)
    c.n = 2.0
    return y1 + plain_scaled(x, c)


SHARED = Scaled()


def by_module_object(x):
    SHARED.n = 1.0
    y1 = SHARED.scaled(x)
    SHARED.inc()
    return y1 + SHARED.scaled(x)


def _captured():
    held = Scaled()

    def by_captured_object(x):
        held.n = 1.0
        y1 = held.scaled(x)
        held.inc()
        return y1 + held.scaled(x)

    return by_captured_object


def by_record(x, d):
    y1 = d.scaled(x)
    d.n = 2.0
    return y1 + d.scaled(x)


def made_inside(x):
    c = Scaled()
    y1 = c.scaled(x)
    c.inc()
    return y1 + c.scaled(x)


# (name, scalar function of x, K): the Hessian is diag(6 K x)
GIVEN_BACK = [
    ("another method", lambda x: by_method(x, Scaled()), 3.0),
    ("the caller", lambda x: by_caller(x, Scaled()), 3.0),
    ("a helper", lambda x: by_helper(x, Scaled()), 3.0),
    ("a loop", lambda x: by_loop(x, Scaled()), 6.0),
    ("a plain function's argument", lambda x: by_plain_function(x, Scaled()), 3.0),
    ("a module-level object", by_module_object, 3.0),
    ("a captured object", _captured(), 3.0),
    ("a dataclass", lambda x: by_record(x, Record()), 3.0),
    ("an object made inside", made_inside, 3.0),
]
NAMES = [case[0] for case in GIVEN_BACK]
# (each case's function is generated anew at every order: a sample runs by default)
DTYPED = sweep(
    [(*case, dtype) for case in GIVEN_BACK for dtype in (np.float64, np.float32)], quick=5
)


def _hessian_by_hand(k, x):
    return np.diag(6.0 * k * np.atleast_1d(x)).reshape(np.shape(x) * 2)


@pytest.mark.parametrize(
    "name, f, k, dtype", DTYPED, ids=[f"{c[0]}-{c[3].__name__}" for c in DTYPED]
)
def test_hessian_is_that_of_what_each_call_computed(name, f, k, dtype):
    rtol = 1e-6 if dtype == np.float64 else 1e-4
    x = np.array([0.7, -1.3], dtype=dtype)
    h = pullback.hessian(f)(x)
    np.testing.assert_allclose(h, _hessian_by_hand(k, x), rtol=rtol)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(h, central_jacobian(pullback.grad(f), x64, 1e-5), rtol=1e-4)
    np.testing.assert_allclose(
        pullback.grad(f)(x), central_jacobian(f, x64, 1e-6), rtol=rtol, atol=1e-6
    )
    s = dtype(0.7)
    hs = pullback.hessian(f)(s)
    g = pullback.grad(f)
    np.testing.assert_allclose(hs, 6.0 * k * 0.7, rtol=rtol)
    np.testing.assert_allclose(hs, (g(0.7 + 1e-5) - g(0.7 - 1e-5)) / 2e-5, rtol=1e-4)


@pytest.mark.parametrize("name, f, k", sweep(GIVEN_BACK, quick=3), ids=sweep(NAMES, quick=3))
def test_every_second_order_path_agrees(name, f, k):
    x = np.array([0.7, -1.3])
    v = np.array([0.4, 2.0])
    want = _hessian_by_hand(k, x)
    np.testing.assert_allclose(pullback.jacobian(pullback.grad(f))(x), want, rtol=1e-10)
    np.testing.assert_allclose(pullback.grad(pullback.grad(f))(0.7), 6.0 * k * 0.7)
    np.testing.assert_allclose(pullback.hvp(f)(x, v), want @ v, rtol=1e-10)
    _, dg = pullback.jvp(pullback.grad(f), (x,), (v,))
    np.testing.assert_allclose(dg, want @ v, rtol=1e-10)
    y, back = pullback.vjp(f, x)
    np.testing.assert_allclose(y, k * np.sum(x**3), rtol=1e-12)
    np.testing.assert_allclose(back(2.0)[0], 2.0 * 3.0 * k * x**2, rtol=1e-12)
    _, t = pullback.jvp(f, (x,), (v,))
    np.testing.assert_allclose(t, 3.0 * k * x**2 @ v, rtol=1e-12)


@pytest.mark.long  # (third order: tens of seconds of generation)
@pytest.mark.parametrize("name, f, k", GIVEN_BACK[:4], ids=NAMES[:4])
def test_third_derivative(name, f, k):
    x = np.array([0.7, -1.3])
    third = pullback.jacobian(pullback.hessian(f))(x)
    want = np.zeros((2, 2, 2))
    want[0, 0, 0] = want[1, 1, 1] = 6.0 * k
    np.testing.assert_allclose(third, want, rtol=1e-10, atol=1e-12)


def by_list_item(x, c):
    y1 = c.by_coef(x)
    c.bump_coef()
    return y1 + c.by_coef(x)


def by_history(x, c):
    y1 = c.by_history(x)
    c.hist.append(1)
    return y1 + c.by_history(x)


def by_array(x, c):
    y1 = c.by_array(x)
    c.bump_array()
    return y1 + c.by_array(x)


def module_scaled(x):
    return np.sum(x**3) * SHARED.n


def by_module_read(x):
    SHARED.n = 1.0
    y1 = module_scaled(x)
    SHARED.n = 2.0
    return y1 + module_scaled(x)


_FIX = (
    "Fix: pass the values the call reads as arguments, or build a new list, array or object "
    "instead of changing the one the call reads (see docs/limitations.md#PB107)."
)


def _golden(line, col, callee, what, source):
    return (
        f"{__file__}:{line}:{col}: PB107 a second derivative pulls back through this call of "
        f"'{callee}' by running it again, later; but {what}, which it reads, was changed in "
        "place after the call ran (by a method, a helper or the code after the call), so the "
        "call would be differentiated as it computes now, not as it computed.\n"
        f"        {source}\n" + _FIX
    )


def _line_of(fn, text):
    import inspect

    lines, first = inspect.getsourcelines(fn)
    k = next(j for j, line in enumerate(lines) if text in line)
    return first + k, lines[k].index(text.split(" = ")[-1]) + 1


REFUSED = [
    (by_list_item, "Scaled.by_coef", "'coef' of a Scaled", "c.by_coef(x)"),
    (by_array, "Scaled.by_array", "'w' of a Scaled", "c.by_array(x)"),
]


@pytest.mark.parametrize("f, callee, what, call", REFUSED, ids=["list item", "array"])
def test_state_changed_in_place_is_refused_at_the_call(f, callee, what, call):
    line, col = _line_of(f, f"y1 = {call}")
    want = _golden(line, col, callee, what, f"y1 = {call}")
    for how in (pullback.hessian, lambda g: pullback.grad(pullback.grad(g))):
        with pytest.raises(UnsupportedCallError) as info:
            how(lambda x: f(x, Scaled()))(0.7)
        assert str(info.value) == want
    g = pullback.grad(lambda x: f(x, Scaled()))(0.7)  # first order: right, nothing to refuse
    np.testing.assert_allclose(g, 3.0 * 3.0 * 0.7**2)


def test_a_module_level_object_read_inside_a_helper_is_refused():
    line, col = _line_of(by_module_read, "y1 = module_scaled(x)")
    want = _golden(
        line, col, "module_scaled", "the module-level 'SHARED.n'", "y1 = module_scaled(x)"
    )
    with pytest.raises(UnsupportedCallError) as info:
        pullback.hessian(by_module_read)(0.7)
    assert str(info.value) == want
    np.testing.assert_allclose(pullback.grad(by_module_read)(0.7), 9.0 * 0.7**2)


class Two:
    def __init__(self):
        self.a = 1.0
        self.b = 0.5

    def term(self, x):
        return self.a * x**3 + self.b * x**2

    def grow(self):
        self.a = self.a * 1.5


def shift(c, k):
    c.b = c.b + k


def program(x, c, codes, ks):
    acc = 0.0 * x
    for j in range(len(codes)):
        op = codes[j]
        k = ks[j]
        if op == 0:
            acc = acc + c.term(x)
        elif op == 1:
            c.grow()
        elif op == 2:
            c.b = c.b - k
        elif op == 3:
            shift(c, k)
    return np.sum(acc)


HESSIAN = pullback.hessian(program)
GRADIENT = pullback.grad(program)


@given(
    st.lists(
        st.tuples(st.integers(0, 3), st.sampled_from([0.25, 1.0, -0.5])), min_size=2, max_size=4
    ),
    st.sampled_from([0.3, -0.8, 1.1]),
)
def test_interleaved_calls_and_updates(ops, x0):
    ops = ops + [(4, 0.0)] * (4 - len(ops))  # (4: nothing; one length, one generation)
    codes = np.array([op for op, _ in ops])
    ks = np.array([k for _, k in ops])
    a_sum = b_sum = 0.0
    a, b = 1.0, 0.5
    for op, k in ops:  # what each call saw
        if op == 0:
            a_sum, b_sum = a_sum + a, b_sum + b
        elif op == 1:
            a = a * 1.5
        elif op == 2:
            b = b - k
        elif op == 3:
            b = b + k

    h = HESSIAN(x0, Two(), codes, ks)  # (one function for every program: generated once)
    np.testing.assert_allclose(h, 6.0 * a_sum * x0 + 2.0 * b_sum, rtol=1e-9, atol=1e-12)
    g = GRADIENT(x0 + 1e-5, Two(), codes, ks) - GRADIENT(x0 - 1e-5, Two(), codes, ks)
    np.testing.assert_allclose(h, g / 2e-5, rtol=1e-5, atol=1e-7)
