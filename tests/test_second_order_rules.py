"""Rules whose pullback is a transformable function: the function agrees with the rule,
and second derivatives run through it (reverse over reverse), per family."""

import numpy as np
import pytest
import second_order_cases as cases

from pullback import default_registry, hessian
from pullback.testing import check_grads

RNG = np.random.default_rng(7)
M = RNG.normal(size=(3, 4))
V = RNG.normal(size=4)

CALLS = [
    (np.sum, (M,), {}),
    (np.sum, (M,), {"axis": 1}),
    (np.sum, (M,), {"axis": 0, "keepdims": True}),
    (np.mean, (M,), {"axis": (0, 1)}),
    (np.mean, (M,), {}),
    (np.max, (M,), {"axis": 1}),
    (np.min, (M,), {}),
    (np.var, (M,), {"axis": 0, "ddof": 1}),
    (np.std, (M,), {"axis": 1}),
    (np.cumsum, (M,), {"axis": 1}),
    (np.cumsum, (M,), {}),
    (np.transpose, (M,), {}),
    (np.transpose, (M[None], (2, 0, 1)), {}),
    (np.reshape, (M, (2, 6)), {}),
    (np.ravel, (M,), {}),
    (np.squeeze, (M[None],), {"axis": 0}),
    (np.expand_dims, (M,), {"axis": 1}),
    (np.swapaxes, (M[None], 0, 2), {}),
    (np.moveaxis, (M[None], 0, -1), {}),
    (np.broadcast_to, (V, (3, 4)), {}),
    (np.matmul, (M, M.T), {}),
    (np.dot, (M, V), {}),
    (np.dot, (V, V), {}),
    (np.outer, (V, M[0]), {}),
    (np.where, (M > 0, M, V), {}),
    (np.concatenate, ([M, M[:1]],), {}),
    (np.concatenate, ((M, M), 1), {}),
    (np.stack, ([V, V * 2.0],), {"axis": 1}),
    (np.linalg.inv, (M[:, :3] + 3 * np.eye(3),), {}),
    (np.linalg.det, (M[:, :3] + 3 * np.eye(3),), {}),
    (np.linalg.solve, (M[:, :3] + 3 * np.eye(3), V[:3]), {}),
    (np.linalg.solve, (M[:, :3] + 3 * np.eye(3), M[:, :2]), {}),
    (np.linalg.norm, (M,), {}),
]


@pytest.mark.parametrize("fn,args,kwargs", CALLS, ids=[c[0].__name__ for c in CALLS])
def test_pullback_function_agrees_with_the_rule(fn, args, kwargs):
    rule = default_registry().lookup(fn)
    assert rule.pullback_fn is not None
    y, pullback = rule.rrule(*args, **kwargs)
    dy = RNG.normal(size=np.shape(y))
    want = pullback(dy)
    got = rule.pullback_fn(dy, *args, **kwargs)
    for w, g, a in zip(want, got, args, strict=False):
        if isinstance(a, np.ndarray) and a.dtype.kind == "f":
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-10, atol=1e-12)
        elif isinstance(a, (list, tuple)) and all(isinstance(e, np.ndarray) for e in a):
            # a sequence of arrays: one cotangent each
            assert len(g) == len(w)
            for gk, wk in zip(g, w, strict=True):
                np.testing.assert_allclose(gk, wk, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "fn,x",
    [
        (cases.elementwise, RNG.uniform(0.1, 1.0, 4)),
        (cases.binary, RNG.uniform(0.1, 1.0, 3)),
        (cases.reductions, RNG.uniform(0.1, 1.0, (3, 2))),
        (cases.products, RNG.normal(size=(3, 2))),
        (cases.shapes, RNG.normal(size=(2, 3))),
    ],
    ids=["elementwise", "binary", "reductions", "products", "shapes"],
)
def test_second_order_by_reverse_over_reverse(fn, x):
    assert check_grads(fn, x, order=2) == "reverse over reverse"
    H = hessian(fn)(x)
    np.testing.assert_allclose(H.reshape(x.size, x.size), H.reshape(x.size, x.size).T, atol=1e-10)


def linalg_energy(a):
    inv = np.linalg.inv(a)
    return np.log(np.abs(np.linalg.det(a))) + np.sum(inv * inv) + np.linalg.norm(a @ a)


def assembled(x):
    m = np.stack([x, x * x], axis=0)
    c = np.concatenate([m, np.sin(m)], axis=1)
    return np.sum(np.linalg.solve(np.eye(2) * 3.0 + m @ m.T, c[:, :2]) ** 2)


@pytest.mark.parametrize(
    "fn,x",
    [
        (linalg_energy, RNG.normal(size=(3, 3)) + 3 * np.eye(3)),
        (assembled, RNG.normal(size=3)),
    ],
    ids=["linalg", "assembled"],
)
def test_second_order_through_linear_algebra_and_assembly(fn, x):
    assert check_grads(fn, x, order=2) == "reverse over reverse"
