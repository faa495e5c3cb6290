"""Changes of lists and dicts the function built itself (issue 11, PB106): item stores
and augmented stores, ``del``, ``append``/``extend``/``+=``/``insert``/``pop``/``remove``/
``sort``/``reverse``/``clear``, dict ``update``/``pop``/``setdefault``, in loops and
branches, read after write, array elements, copies of arguments, a helper's own copy.
Reverse mode against finite differences in float64 and float32, forward mode (``jvp``),
second order, exact values and the primal's results (return values of ``pop`` etc.).
Refusals are in tests/test_list_mutation_refusals.py."""

import list_mutation_cases as cases
import numpy as np
import pytest

import pullback
from pullback import grad, jvp
from pullback.testing import check_grads

X = np.array([0.3, 0.7, -0.4, 1.1, 0.6])
DTYPES = [np.float64, np.float32]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("f", cases.CASES, ids=lambda f: f.__name__)
def test_reverse_mode_matches_finite_differences(f, dtype):
    check_grads(f, X.astype(dtype))


@pytest.mark.parametrize("f", cases.CASES, ids=lambda f: f.__name__)
def test_value_is_what_python_computes(f):
    value, _ = pullback.value_and_grad(f)(X)
    assert value == pytest.approx(f(X), rel=1e-12)


@pytest.mark.parametrize("f", cases.CASES, ids=lambda f: f.__name__)
def test_forward_mode_matches_finite_differences(f):
    v = np.random.default_rng(1).standard_normal(X.shape)
    y, dy = jvp(f, (X,), (v,))
    h = 1e-6
    fd = (f(X + h * v) - f(X - h * v)) / (2 * h)
    assert y == pytest.approx(f(X), rel=1e-12)
    np.testing.assert_allclose(dy, fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", cases.CASES, ids=lambda f: f.__name__)
def test_second_order(f):
    check_grads(f, X, order=2)


def test_hessian_through_list_changes():
    def f(x):
        l = [x[0], x[1]]
        l.insert(1, x[0] * x[1])
        v = l.pop(0)
        l[0] = l[0] * v
        return l[0] + l[1] ** 2

    # f = x0^2 x1 + x1^2
    h = pullback.hessian(f)(np.array([0.5, 2.0]))
    np.testing.assert_allclose(h, [[2 * 2.0, 2 * 0.5], [2 * 0.5, 2.0]])
    g2 = grad(lambda x: grad(f)(x)[0])(np.array([0.5, 2.0]))
    np.testing.assert_allclose(g2, [4.0, 1.0])


def test_exact_values_of_each_change():
    def f(x):
        l = [x[0], x[1], x[2]]
        l[1] = 10.0 * x[3]  # the old l[1] = x[1] gets no gradient
        v = l.pop(0)  # x[0]
        l.insert(0, 100.0 * v)
        del l[-1]  # x[2] dropped
        return sum(l)  # 100 x0 + 10 x3

    np.testing.assert_allclose(grad(f)(X), [100.0, 0.0, 0.0, 10.0, 0.0])


def test_dict_changes_exact():
    def f(x):
        d = {"a": x[0]}
        d["b"] = 2.0 * x[1]
        d["a"] = 3.0 * x[2]  # overwritten: x[0] gets nothing
        d.update(c=x[3], b=5.0 * d["b"])
        gone = d.pop("c")
        return d["a"] + d["b"] + 7.0 * gone + d.setdefault("z", x[4])

    np.testing.assert_allclose(grad(f)(X), [0.0, 10.0, 3.0, 7.0, 1.0])


def test_python_semantics_of_return_values_and_errors():
    def f(x):
        l = [x[0]]
        r = l.insert(0, x[1])
        s = l.extend([x[2]])
        if r is not None or s is not None:  # (not assert: pytest rewrites asserts)
            raise ValueError("insert and extend return None")
        return l.pop(1) * 2.0 + l[-1]

    np.testing.assert_allclose(grad(f)(X), [2.0, 0.0, 1.0, 0.0, 0.0])

    def bad(x):
        l = [x[0]]
        l[3] = x[1]  # IndexError, as Python raises
        return l[0]

    with pytest.raises(IndexError):
        grad(bad)(X)

    def missing(x):
        d = {"a": x[0]}
        return d.pop("b")

    with pytest.raises(KeyError):
        grad(missing)(X)


def test_caller_list_is_left_alone_when_copied():
    def f(x, rows):
        rows = list(rows)
        rows.append(x[0] * 2.0)
        rows[0] = rows[0] * x[1]
        return sum(rows)

    rows = [1.0, 2.0]
    np.testing.assert_allclose(grad(f)(X, rows), [2.0, 1.0, 0.0, 0.0, 0.0])
    assert rows == [1.0, 2.0]


def test_loop_over_a_list_after_its_changes():
    def f(x):
        l = []
        for i in range(4):
            l.insert(0, x[i] * (i + 1.0))
        l.reverse()
        total = 0.0
        for v in l:  # after the last change: nothing changes under the loop
            total = total + v * v
        return total

    check_grads(f, X)
    np.testing.assert_allclose(grad(f)(X), [2 * k * k * X[k - 1] for k in range(1, 5)] + [0.0])
