"""Solver parameters passed through ``args`` in the forms Python users write (Python and
NumPy floats, 0-d and 1-D arrays, tuples, lists and named tuples of floats): first and
second derivatives of quad, solve_ivp and odeint against central differences. The
second derivatives differentiate the solvers' reference computations, which take a float
sequence as the vector of its floats and give its cotangent back as a sequence."""

import collections

import numpy as np
import pytest
import scipy.integrate as si
from fd import numerical_grad

import pullback as pb

P = collections.namedtuple("P", "c k")
Y0 = np.array([1.0, 0.5])
TS = np.array([0.0, 0.5, 1.0])
C0, K0 = 0.7, 1.3


def f_float(x, c, k):
    return np.exp(-c * x) * np.sin(k * x)


def f_seq(x, p):
    return np.exp(-p[0] * x) * np.sin(p[1] * x)


def f_named(x, p):
    return np.exp(-p.c * x) * np.sin(p.k * x)


def quad_float(c, k):
    return si.quad(f_float, 0.0, 2.0, args=(c, k), epsabs=1e-13, epsrel=1e-13)[0]


def quad_np64(c, k):
    args = (np.float64(c), np.float64(k))
    return si.quad(f_float, 0.0, 2.0, args=args, epsabs=1e-13, epsrel=1e-13)[0]


def quad_array(c, k):
    return si.quad(f_seq, 0.0, 2.0, args=(np.array([c, k]),), epsabs=1e-13, epsrel=1e-13)[0]


def quad_tuple(c, k):
    return si.quad(f_seq, 0.0, 2.0, args=((c, k),), epsabs=1e-13, epsrel=1e-13)[0]


def quad_list(c, k):
    return si.quad(f_seq, 0.0, 2.0, args=([c, k],), epsabs=1e-13, epsrel=1e-13)[0]


def quad_named(c, k):
    return si.quad(f_named, 0.0, 2.0, args=(P(c, k),), epsabs=1e-13, epsrel=1e-13)[0]


def quad_list_given_alone(c, k):
    # SciPy takes a non-tuple args as one value: f_seq(x, [c, k])
    return si.quad(f_seq, 0.0, 2.0, args=[c, k], epsabs=1e-13, epsrel=1e-13)[0]


def quad_named_spread(c, k):
    # a named tuple is a tuple: SciPy spreads it, f_float(x, c, k)
    return si.quad(f_float, 0.0, 2.0, args=P(c, k), epsabs=1e-13, epsrel=1e-13)[0]


def rhs_seq(t, y, p):
    return -p[0] * y + p[1] * np.sin(t) * y[::-1]


def rhs_named(t, y, p):
    return -p.c * y + p.k * np.sin(t) * y[::-1]


def orhs_seq(y, t, p):
    return -p[0] * y + p[1] * np.sin(t) * y[::-1]


def orhs_named(y, t, p):
    return -p.c * y + p.k * np.sin(t) * y[::-1]


def ivp_tuple(c, k):
    sol = si.solve_ivp(
        rhs_seq, (0.0, 1.0), Y0, t_eval=TS[1:], args=((c, k),), rtol=1e-11, atol=1e-12
    )
    return np.sum(sol.y[:, -1] ** 2)


def ivp_named(c, k):
    sol = si.solve_ivp(
        rhs_named, (0.0, 1.0), Y0, t_eval=TS[1:], args=(P(c, k),), rtol=1e-11, atol=1e-12
    )
    return np.sum(sol.y[:, -1] ** 2)


def odeint_list(c, k):
    ys = si.odeint(orhs_seq, Y0, TS, args=([c, k],), rtol=1e-11, atol=1e-12)
    return np.sum(ys[-1] ** 2)


def orhs_floats(y, t, c, k):
    return -c * y + k * np.sin(t) * y[::-1]


def odeint_named_spread(c, k):
    ys = si.odeint(orhs_floats, Y0, TS, args=P(c, k), rtol=1e-11, atol=1e-12)
    return np.sum(ys[-1] ** 2)


def odeint_named(c, k):
    ys = si.odeint(orhs_named, Y0, TS, args=(P(c, k),), rtol=1e-11, atol=1e-12)
    return np.sum(ys[-1] ** 2)


FIRST_AND_SECOND = [
    quad_float,
    quad_np64,
    quad_array,
    quad_tuple,
    quad_list,
    quad_named,
    quad_list_given_alone,
    quad_named_spread,
    ivp_tuple,
    ivp_named,
    odeint_list,
    odeint_named,
    odeint_named_spread,
]


@pytest.mark.parametrize("fn", FIRST_AND_SECOND, ids=lambda f: f.__name__)
def test_first_and_second_derivatives_of_float_parameters(fn):
    g = pb.grad(fn, wrt=(0, 1))(C0, K0)
    for i in range(2):
        np.testing.assert_allclose(
            g[i], numerical_grad(fn, (C0, K0), i, eps=1e-5), rtol=1e-6, atol=1e-8
        )
    dc = pb.grad(fn, wrt=0)
    h = pb.grad(dc, wrt=(0, 1))(C0, K0)
    for i in range(2):
        np.testing.assert_allclose(
            h[i], numerical_grad(dc, (C0, K0), i, eps=1e-4), rtol=1e-6, atol=1e-7
        )


def test_second_derivative_through_a_tuple_equals_the_array_one():
    # the same integral with its parameters as a tuple and as an array
    ht = pb.grad(pb.grad(quad_tuple), wrt=(0, 1))(C0, K0)
    ha = pb.grad(pb.grad(quad_array), wrt=(0, 1))(C0, K0)
    np.testing.assert_allclose(ht, ha, rtol=1e-12)


# -- trees (dicts, nested or mixed sequences): their float leaves are parameters ----------
def f_nested(x, p):
    return np.exp(-p[0] * x) * np.sin(p[1][0] * x)


def f_dict(x, p):
    return np.exp(-p["c"] * x) * np.sin(p["k"] * x)


def quad_nested(c, k):
    return si.quad(f_nested, 0.0, 2.0, args=((c, (k, 2.0)),))[0]


def quad_dict(c, k):
    return si.quad(f_dict, 0.0, 2.0, args=({"c": c, "k": k},))[0]


def rhs_dict(t, y, p):
    return -p["c"] * y + p["k"] * np.sin(t) * y[::-1]


def orhs_nested(y, t, p):
    return -p[0] * y + p[1][0] * np.sin(t) * y[::-1]


def ivp_dict(c, k):
    args = ({"c": c, "k": k},)
    sol = si.solve_ivp(rhs_dict, (0.0, 1.0), Y0, t_eval=TS, args=args, rtol=1e-11, atol=1e-12)
    return np.sum(sol.y[:, -1])


def odeint_nested(c, k):
    return np.sum(si.odeint(orhs_nested, Y0, TS, args=((c, (k, 2.0)),))[-1])


def quad_closure_over_dict(c, k):
    cfg = {"c": c, "k": k}
    return si.quad(lambda x: np.exp(-cfg["c"] * x) * np.sin(cfg["k"] * x), 0.0, 2.0)[0]


def quad_mixed_tuple(c, k):
    return si.quad(f_seq, 0.0, 2.0, args=((c, k, 3),))[0]


@pytest.mark.parametrize(
    "fn",
    [quad_nested, quad_dict, ivp_dict, odeint_nested, quad_closure_over_dict, quad_mixed_tuple],
    ids=lambda f: f.__name__,
)
def test_floats_in_a_dict_or_nested_sequence_are_differentiated(fn):
    # (refused until the solver rules took trees apart: rules/_args_trees.py)
    g = pb.grad(fn, wrt=(0, 1))(C0, K0)
    h = 1e-6
    dc = (fn(C0 + h, K0) - fn(C0 - h, K0)) / (2 * h)
    dk = (fn(C0, K0 + h) - fn(C0, K0 - h)) / (2 * h)
    np.testing.assert_allclose(g, (dc, dk), rtol=1e-6, atol=1e-8)


def quad_float32_tuple(c, k):
    return si.quad(f_seq, 0.0, 2.0, args=((np.float32(c), np.float32(k)),))[0]


def quad_float32_array(c, k):
    return si.quad(f_seq, 0.0, 2.0, args=(np.array([c, k], dtype=np.float32),))[0]


def test_second_derivative_through_a_tuple_of_float32_scalars():
    # the integrand runs on float64 parameters behind a second derivative, as for a float32
    # array (in float32 the derivative's integral was noise that quad_vec bisected on and on)
    ht = pb.grad(pb.grad(quad_float32_tuple), wrt=(0, 1))(C0, K0)
    ha = pb.grad(pb.grad(quad_float32_array), wrt=(0, 1))(C0, K0)
    np.testing.assert_allclose(ht, ha, rtol=1e-7)
    exact = pb.grad(pb.grad(quad_tuple), wrt=(0, 1))(C0, K0)
    np.testing.assert_allclose(ht, exact, rtol=1e-5)
