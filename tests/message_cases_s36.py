"""Functions for tests/test_messages_s36.py: the golden messages name these lines."""

import contextlib

import numpy as np
import scipy.special as sc

import pullback


def order_in_a_tuple(x, v):
    p = (v, x * 0.5)
    return np.sum(sc.jv(p[0], x) * p[1] + sc.jv(p[0], 2.0 * x))


def order_in_a_list(x, v):
    p = [v, x]
    s = 0.0
    for q in (p, p):
        s = s + np.sum(sc.jv(q[0], q[1]))
    return s


def order_in_a_dict(x, v):
    d = {"v": v, "a": x}
    return np.sum(sc.jv(d["v"], d["a"]) * d["a"]) + np.sum(sc.jv(d["v"], x))


def _bessel_of(p, x):
    return np.sum(sc.jv(p[0], x) * p[1])


def order_through_a_helper(x, v):
    p = (v, x + 1.0)
    return _bessel_of(p, x) + _bessel_of(p, 2.0 * x)


def bessel(v, x):
    return np.sum(sc.jv(v, x))


def order_through_a_sum(v, x):
    w = v + 0.0 * np.sum(x)
    return np.sum(sc.jv(w, x))


def zeta_of(x, q):
    return np.sum(sc.zeta(x, q))


def riemann_zeta_of(x):
    return np.sum(sc.zeta(x))


def subscripts_a_float(x):
    return x.__getitem__(0) * 2.0


def subscripts_an_array(x):
    return x.__getitem__(1) * x.__getitem__(0)


@contextlib.contextmanager
def tagged(i):
    yield i


def loop_with_a_manager(x):
    s = 0.0
    for i in range(3):
        with tagged(i):
            s = s + np.sum(np.sin(x) * x) * (i + 1)
    return s


def manager_of_a_local(x):
    k = 2
    with tagged(k) as t:
        s = np.sum(x * x * x) * t
    return s


def pinv_hermitian(x):
    return np.sum(np.linalg.pinv(np.outer(x, x) + np.eye(3), hermitian=True))


def quantile_hazen(x):
    return np.quantile(x, 0.3, method="hazen")


XP = np.array([0.0, 1.0, 2.0])
FP = np.array([1.0, 2.0, 0.5])


def interp_periodic(x):
    return np.sum(np.interp(x, XP, FP, period=3.0))


def interp_wrapped(x):
    period = 3.0
    xs = np.concatenate([XP[-1:] - period, XP, XP[:1] + period])
    return np.sum(np.interp(np.mod(x, period), xs, np.concatenate([FP[-1:], FP, FP[:1]])))


def root_overdetermined(x):
    import scipy.optimize as so

    def g(z, a):
        return np.array([z[0] - a[0], z[1] - a[1], z[0] + z[1] - a[0] - a[1]])

    return np.sum(so.root(g, np.zeros(2), args=(x,), method="lm").x)


def cross_of_2_vectors(x):
    return np.sum(np.cross(x[:2], x[1:]))


def viewed_as_integers(x):
    return np.sum(x.view(np.int64) * 1.0)


def cubed(x):
    return x**3


def through_a_closure_rule(x):
    return np.sum(cubed(x))


def through_frompyfunc(x):
    f = np.frompyfunc(lambda a: a * a * 2.0, 1, 1)
    return np.sum(f(x).astype(float))


def through_vectorize(x):
    f = np.vectorize(lambda a: a * a * 2.0, otypes=[float])
    return np.sum(f(x))


def _wave(v, x):
    return np.sum(np.sin(v * x))


WAVE_SLOPE = pullback.grad(_wave)


@pullback.grad
def wave_slope(v, x):
    return np.sum(np.sin(v * x))


def squared_slope_of_a_global(v, x):
    return WAVE_SLOPE(v, x) ** 2


def squared_slope_of_a_decorated(v, x):
    return wave_slope(v, x) ** 2 + v


def order_in_an_array(x, v):
    p = np.array([v, x[0]])
    return np.sum(sc.jv(p[0], x) * p[1])
