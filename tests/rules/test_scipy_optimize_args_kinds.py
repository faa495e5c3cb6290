"""scipy.optimize solvers (root, fsolve, brentq, minimize, least_squares) with parameters
passed through ``args`` as Python floats, tuples, lists and named tuples of floats: the
implicit-function-theorem gradient (and its derivative) against central differences and
against the same problem with the parameters as an array. A tuple parameter used to fail
("bad operand type for unary -") and a named tuple's gradient was silently zero."""

import collections

import numpy as np
import pytest
import scipy.optimize as so
from fd import numerical_grad

import pullback as pb

P = collections.namedtuple("P", "c k")
X0 = np.array([0.3, -0.2])
C0, K0 = 0.7, 1.3


def res(x, p):
    return x**3 + p[1] * x - p[0] * np.array([1.0, 2.0])


def res_named(x, p):
    return x**3 + p.k * x - p.c * np.array([1.0, 2.0])


def res_floats(x, c, k):
    return x**3 + k * x - c * np.array([1.0, 2.0])


def scalar_res(x, p):
    return x**3 + p[1] * x - p[0]


def obj(x, p):
    return np.sum((x - p[0]) ** 2) + p[1] * np.sum(x**2) + 0.1 * x[0] * x[1]


def obj_jac(x, p):
    return 2 * (x - p[0]) + 2 * p[1] * x + 0.1 * x[::-1]


def lres(x, p):
    return np.array([x[0] - p[0], x[1] * p[1] - 1.0, 0.3 * x[0] * x[1] - p[0] * p[1]])


def root_floats(c, k):
    return np.sum(so.root(res_floats, X0, args=(c, k), tol=1e-13).x ** 2)


def root_tuple(c, k):
    return np.sum(so.root(res, X0, args=((c, k),), tol=1e-13).x ** 2)


def root_named(c, k):
    return np.sum(so.root(res_named, X0, args=(P(c, k),), tol=1e-13).x ** 2)


def fsolve_list(c, k):
    return np.sum(so.fsolve(res, X0, args=([c, k],), xtol=1e-13) ** 2)


def fsolve_named(c, k):
    return np.sum(so.fsolve(res_named, X0, args=(P(c, k),), xtol=1e-13) ** 2)


def brentq_tuple(c, k):
    return so.brentq(scalar_res, -5.0, 5.0, args=((c, k),), xtol=1e-14) ** 2


def brentq_list_given_alone(c, k):
    # a non-tuple args is one value: scalar_res(x, [c, k])
    return so.brentq(scalar_res, -5.0, 5.0, args=[c, k], xtol=1e-14) ** 2


def minimize_tuple(c, k):
    r = so.minimize(obj, X0, args=((c, k),), jac=obj_jac, method="BFGS", options={"gtol": 1e-7})
    return np.sum(r.x**2) + r.fun


def minimize_list(c, k):
    r = so.minimize(obj, X0, args=([c, k],), jac=obj_jac, method="BFGS", options={"gtol": 1e-7})
    return np.sum(r.x**2) + r.fun


def minimize_array(c, k):
    args = (np.array([c, k]),)
    r = so.minimize(obj, X0, args=args, jac=obj_jac, method="BFGS", options={"gtol": 1e-7})
    return np.sum(r.x**2) + r.fun


def least_squares_tuple(c, k):
    r = so.least_squares(lres, X0, args=((c, k),), xtol=1e-15, ftol=1e-15, gtol=1e-15)
    return np.sum(r.x**2) + r.cost


def least_squares_array(c, k):
    args = (np.array([c, k]),)
    r = so.least_squares(lres, X0, args=args, xtol=1e-15, ftol=1e-15, gtol=1e-15)
    return np.sum(r.x**2) + r.cost


ACCURATE = [
    root_floats,
    root_tuple,
    root_named,
    fsolve_list,
    fsolve_named,
    brentq_tuple,
    brentq_list_given_alone,
    minimize_tuple,
    minimize_list,
]


@pytest.mark.parametrize("fn", ACCURATE, ids=lambda f: f.__name__)
def test_first_and_second_derivatives_through_float_sequences(fn):
    g = pb.grad(fn, wrt=(0, 1))(C0, K0)
    for i in range(2):
        np.testing.assert_allclose(
            g[i], numerical_grad(fn, (C0, K0), i, eps=1e-4), rtol=1e-6, atol=1e-8
        )
    dc = pb.grad(fn, wrt=0)
    h = pb.grad(dc, wrt=(0, 1))(C0, K0)
    for i in range(2):
        np.testing.assert_allclose(
            h[i], numerical_grad(dc, (C0, K0), i, eps=1e-4), rtol=1e-6, atol=1e-7
        )


@pytest.mark.parametrize(
    "seq, arr",
    [(minimize_tuple, minimize_array), (least_squares_tuple, least_squares_array)],
    ids=["minimize", "least_squares"],
)
def test_a_tuple_parameter_gives_what_the_array_gives(seq, arr):
    # .x and the optimal value together (the two cotangents of a tuple are summed element
    # by element, not joined)
    np.testing.assert_allclose(
        pb.grad(seq, wrt=(0, 1))(C0, K0), pb.grad(arr, wrt=(0, 1))(C0, K0), rtol=1e-10
    )
    ht = pb.grad(pb.grad(seq), wrt=(0, 1))(C0, K0)
    ha = pb.grad(pb.grad(arr), wrt=(0, 1))(C0, K0)
    np.testing.assert_allclose(ht, ha, rtol=1e-8)
    # least_squares' own tolerance limits the differences to about 1e-8 / h
    g = pb.grad(seq, wrt=(0, 1))(C0, K0)
    for i in range(2):
        np.testing.assert_allclose(g[i], numerical_grad(seq, (C0, K0), i, eps=1e-3), rtol=1e-4)


def res_dict(x, p):
    return x**3 + p["k"] * x - p["c"] * np.array([1.0, 2.0])


def root_dict(c, k):
    return np.sum(so.root(res_dict, X0, args=({"c": c, "k": k},)).x ** 2)


def minimize_mixed(c, k):
    return so.minimize(obj, X0, args=((c, k, 3),)).fun


def brentq_closure_over_nested(c, k):
    p = (c, (k, 1.0))
    return so.brentq(lambda x: x**3 + p[1][0] * x - p[0], -5.0, 5.0)


@pytest.mark.parametrize(
    "fn", [root_dict, minimize_mixed, brentq_closure_over_nested], ids=lambda f: f.__name__
)
def test_floats_in_a_dict_or_nested_sequence_are_differentiated(fn):
    # (refused until the solver rules took trees apart: rules/_args_trees.py)
    g = pb.grad(fn, wrt=(0, 1))(C0, K0)
    for i in range(2):
        np.testing.assert_allclose(
            g[i], numerical_grad(fn, (C0, K0), i, eps=1e-5), rtol=1e-6, atol=1e-8
        )
