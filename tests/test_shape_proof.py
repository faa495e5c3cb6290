"""Shape keys (pullback.transform.shape_proof): one key must mean one shape, always; the
adjoint leaves ``unbroadcast`` out only then. What is not proved gets no key."""

import gast
import numpy as np
import pytest

from pullback.transform.shape_proof import shape_keys

KINDS = {"g": ("array", 2), "h": ("array", 2), "s": "scalar", "lst": None}


def keys_of(body, kinds=KINDS):
    source = "def f(g, h, s, lst, r):\n" + "".join(f"    {line}\n" for line in body)
    return shape_keys(gast.parse(source), kinds)


def same(body, a="a", b="b"):
    keys = keys_of(body)
    return keys.get(a) is not None and keys.get(a) == keys.get(b)


@pytest.mark.parametrize(
    "body",
    [
        ["for i in range(3):", "    a = g[i, 1:-1]", "    b = g[i, :-2]"],
        ["for i in range(3):", "    a = g[i, 2:]", "    b = g[i - 1, 1:-1]"],
        ["m = -1", "a = g[1, 1:m]", "b = g[2, 0:-2]"],
        ["a = g[0, :]", "b = g[3, ::1]"],
        ["a = g[1:-1]", "c = g[:-2]", "e = c * s", "b = e + a"],
        ["c = g[0]", "d = g[1]", "e = 2.0 * c", "b = e - d", "f = g[2]", "a = f / s"],
        ["c = g[1:]", "d = g[:-1]", "e = d ** 2", "a = c - e", "b = -a"],  # Rosenbrock
        ["c = g[0]", "d = g[1]", "a = c ** d", "b = s ** d"],
    ],
)
def test_one_shape(body):
    assert same(body)


@pytest.mark.parametrize(
    "body",
    [
        ["a = g[0, 1:]", "b = g[0, :-2]"],  # lengths n - 1 and n - 2
        ["a = g[0, -3:]", "b = g[0, :3]"],  # constant lengths are not a shape rule
        ["a = g[0, 1:-1]", "b = h[0, 1:-1]"],  # two arrays
        ["a = g[0, ::2]", "b = g[1, ::2]"],  # a step
        ["a = g[0, :2]", "b = g[1, :2]"],  # a positive stop (min(2, n))
        ["a = g[:1, 1:-1]", "b = g[0, 1:-1]"],  # a slice keeps its axis
        ["a = g[0, 1:-1]", "g = h * 1.0", "b = g[0, 1:-1]"],  # rebound in between
        ["a = g[r, 1:-1]", "b = g[0, 1:-1]"],  # r: not proved an integer (a mask?)
        ["k = r", "k = 0", "a = g[k]", "b = g[0]"],  # bound twice
        ["a = lst[0]", "b = lst[1]"],  # not an array
        ["a = g[0]", "for i in range(2):", "    b = g[1]"],  # two statement lists
        ["a = g[0]", "if s:", "    g = h", "b = g[1]"],  # rebound in a nested block
        ["c = g[0]", "d = h[0]", "b = c + d", "a = g[1]"],
        ["a = g[0]", "b = a @ a"],
        ["c = g[0]", "a = c ** h", "b = g[1]"],  # h broadcasts
        ["a = -s", "b = g[0]"],  # a scalar
    ],
)
def test_not_proved(body):
    assert not same(body)


def test_keys_agree_with_numpy():
    # every pair of reads the prover keys alike has one shape, for many array shapes
    parts = ["0", "1", "1:-1", ":-2", "2:", ":", "1:", "0:-1"]
    body = [f"a{k} = g[{p}, {q}]" for k, (p, q) in enumerate((p, q) for p in parts for q in parts)]
    keys = keys_of(body)
    rng = np.random.default_rng(0)
    for _ in range(20):
        g = np.zeros(tuple(rng.integers(2, 6, 2)))
        shapes = {}
        for line in body:
            name, expr = line.split(" = ")
            shapes[name] = eval(expr, {"g": g}).shape  # noqa: S307 - the test's own text
        for a in shapes:
            for b in shapes:
                if keys.get(a) is not None and keys.get(a) == keys.get(b):
                    assert shapes[a] == shapes[b], (a, b)
