"""Property tests: random shapes with broadcasting, both dtypes, gradient = finite
differences, and reverse mode agrees with forward mode (<J v, u> = <v, J^T u>)."""

import numpy as np
from fd import check_grad
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from pullback import jvp, vjp


def mixed(a, b):
    c = a * b + np.sin(a) / (1.5 + b * b) - a**2
    return np.sum(np.tanh(c) * c)


def with_loop(a, b):
    s = a * 0.0
    for k in range(3):
        s = s + np.cos(a * (k + 1)) * b
    return s


shapes = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3)


def arrays(shape, seed, dtype):
    return np.random.default_rng(seed).uniform(-1.0, 1.0, size=shape).astype(dtype)


@given(shapes=shapes, seed=st.integers(0, 2**16), dtype=st.sampled_from([np.float64, np.float32]))
def test_gradient_with_broadcasting_matches_finite_differences(shapes, seed, dtype):
    a_shape, b_shape = shapes.input_shapes
    a, b = arrays(a_shape, seed, dtype), arrays(b_shape, seed + 1, dtype)
    check_grad(mixed, a, b, wrt=(0, 1))


@given(shapes=shapes, seed=st.integers(0, 2**16))
def test_forward_and_reverse_mode_agree(shapes, seed):
    a_shape, b_shape = shapes.input_shapes
    a, b = arrays(a_shape, seed, np.float64), arrays(b_shape, seed + 1, np.float64)
    va, vb = arrays(a_shape, seed + 2, np.float64), arrays(b_shape, seed + 3, np.float64)
    y, dy = jvp(with_loop, (a, b), (va, vb))
    u = arrays(np.shape(y), seed + 4, np.float64)
    _, back = vjp(with_loop, a, b)
    ga, gb = back(u)
    lhs = np.sum(np.asarray(dy) * u)
    rhs = np.sum(ga * va) + np.sum(gb * vb)
    assert abs(lhs - rhs) <= 1e-10 * (1 + abs(lhs))
