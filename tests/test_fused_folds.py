"""grad's fused sweeps fold single-use temporaries and read adjoint copies through
(pullback.transform.fused_folds): the gradients stay those of the two sweeps and of
central differences, the folds keep Python's order of evaluation, and nothing is folded
that another line, a branch, a loop or a closure reads."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

from pullback import grad, vjp
from pullback.transform.code import Compound, Line
from pullback.transform.fused_folds import fold_fused


def texts(block):
    return [item.text if isinstance(item, Line) else item.header for item in block]


def fold(lines, params=("a", "b", "c", "x", "h")):
    return texts(fold_fused([Line(t) if isinstance(t, str) else t for t in lines], set(params)))


@pytest.mark.parametrize(
    "lines, want",
    [
        (["_t2 = a - b", "y = c - _t2", "return y"], ["y = c - (a - b)", "return y"]),
        (["_t2 = a - b", "y = _t2 - c", "return y"], ["y = a - b - c", "return y"]),
        (["_t2 = a * b", "y = c - _t2", "return y"], ["y = c - a * b", "return y"]),
        (["_t2 = a + b", "y = _t2.sum()", "return y"], ["y = (a + b).sum()", "return y"]),
        (["_t2 = -a", "y = _t2 ** 2", "return y"], ["y = (-a) ** 2", "return y"]),
        (["_t2 = a ** 2", "y = b * _t2", "return y"], ["y = b * (a ** 2)", "return y"]),
        (["_t2 = g(a)", "y = b + c * _t2", "return y"], ["y = b + c * g(a)", "return y"]),
    ],
)
def test_folds_keep_grouping(lines, want):
    assert fold(lines) == want


@pytest.mark.parametrize(
    "lines",
    [
        # something with an effect is evaluated before the read: a global, a call, an index
        ["_t2 = g(a)", "y = f(b) + _t2", "return y"],
        ["_t2 = g(a)", "y = b[0] + _t2", "return y"],
        ["_t2 = g(a)", "y = np.add(b, _t2)", "return y"],
        # the read may not happen at all
        ["_t2 = g(a)", "y = b if c else _t2", "return y"],
        ["_t2 = g(a)", "y = b and _t2", "return y"],
        # read twice, or once more elsewhere, or not by the next line
        ["_t2 = g(a)", "y = _t2 + _t2", "return y"],
        ["_t2 = g(a)", "y = b + _t2", "return y, _t2"],
        ["_t2 = g(a)", "y = b + 1", "z = y + _t2", "return z"],
        # a subscript store: evaluated after the value
        ["_t2 = g(a)", "b[_t2] = c", "return b"],
        # in a string only
        ["_t2 = g(a)", "y = f('_t2')", "return y"],
        # not a generated temporary
        ["t2 = g(a)", "y = b + t2", "return y"],
    ],
)
def test_what_is_not_folded(lines):
    assert fold(lines) == lines


def test_arithmetic_moves_below_arithmetic():
    lines = ["d__t1 = d__t4 * y", "d_y = d_y + d__t4 * k", "d_k = d_k - d__t1", "return d_k"]
    assert fold(lines, ("d__t4", "y", "k", "d_y", "d_k")) == [
        "d_y = d_y + d__t4 * k",
        "d_k = d_k - d__t4 * y",
        "return d_k",
    ]
    params = ("d__t4", "y", "k", "d_y", "d_k", "f")
    kept = [
        # a line in between binds a name the value reads
        ["d__t1 = d__t4 * y", "y = d_y + k", "d_k = d_k - d__t1", "return d_k"],
        # a call in between, or in the value
        ["d__t1 = d__t4 * y", "d_y = f(k)", "d_k = d_k - d__t1", "return d_k"],
        ["d__t1 = f(y)", "d_y = d_y + k", "d_k = d_k - d__t1", "return d_k"],
    ]
    for lines in kept:
        assert fold(lines, params) == lines


def test_no_fold_across_user_lines_or_blocks():
    body = [Line("_t2 = g(a)", src=1), Line("y = b + _t2", src=2), Line("return y", src=2)]
    assert texts(fold_fused(body, {"a", "b"})) == ["_t2 = g(a)", "y = b + _t2", "return y"]
    loop = Compound("for i in r:", [Line("y = b + _t2")])
    body = [Line("_t2 = g(a)"), loop, Line("return y")]
    assert texts(fold_fused(body, {"a", "b", "r"}))[0] == "_t2 = g(a)"
    # inside a loop's body the lines fold among themselves
    loop = Compound("for i in r:", [Line("_t2 = a * i"), Line("y = b + _t2")])
    out = fold_fused([loop, Line("return y")], {"a", "b", "r"})
    assert texts(out[0].body) == ["y = b + a * i"]
    assert texts(loop.body) == ["_t2 = a * i", "y = b + _t2"]  # copies: the input unchanged


@pytest.mark.parametrize("line", ["g = lambda: _t2", "def g():", "v = locals()"])
def test_nothing_folded_where_a_name_is_read_out_of_sight(line):
    lines = ["_t2 = a * b", "y = c + _t2", line, "return y"]
    assert fold(lines) == lines


def test_adjoint_copies():
    # read through up to the line that binds the copied name again
    lines = ["d_b = d_a", "t = d_b * h", "d_a = d_b + t", "return d_a"]
    assert fold(lines) == ["t = d_a * h", "d_a = d_a + t", "return d_a"]
    # the copy is read after the copied name is bound again: kept
    lines = ["d_b = d_a", "d_a = d_a * h", "t = d_b + d_a", "return t"]
    assert fold(lines) == lines
    # bound again before the read, in the same line: kept
    lines = ["d_b = d_a", "d_a, y = d_b, 1", "return d_a, y"]
    assert fold(lines) == ["d_a, y = d_a, 1", "return d_a, y"]
    lines = ["d_b = d_a", "d_a[d_b] = 1", "return d_a"]
    assert fold(lines) == ["d_a[d_a] = 1", "return d_a"]
    lines = ["d_b = d_a", "d_a, c[d_b] = 1, 2", "return d_a"]
    assert fold(lines) == lines
    # read in a loop after it: kept
    loop = Compound("for i in r:", [Line("y = d_b * i")])
    body = [Line("d_b = d_a"), Line("t = d_b * h"), loop, Line("return y")]
    assert texts(fold_fused(body, {"h", "r"}))[0] == "d_b = d_a"


def euler(k, y0, h, steps):
    y = y0
    for _ in range(steps):
        y = y + h * (-k * y + math.sin(y))
    return y


def euler_arrays(k, y0, h, steps):
    y = y0
    for _ in range(steps):
        y = y + h * (-k * y + np.sin(y) * np.cos(k * y))
    return np.sum(y * y)


def chain(x, a):
    t = np.exp(-x * a) * x + np.tanh(x / (1.0 + a * a))
    return np.sum(t * t - x)


def fused_source(g, *args):
    return inspect.getsource(g.adjoint(*args).fused_sweeps()[0])


def central(f, args, at, eps):
    args = list(args)
    x = args[at]
    if isinstance(x, float):
        hi, lo = list(args), list(args)
        hi[at], lo[at] = x + eps, x - eps
        return (f(*hi) - f(*lo)) / (2 * eps)
    out = np.zeros_like(x)
    for k in range(x.size):
        hi, lo = x.copy(), x.copy()
        hi.flat[k] += eps
        lo.flat[k] -= eps
        out.flat[k] = (f(*args[:at], hi, *args[at + 1 :]) - f(*args[:at], lo, *args[at + 1 :]))
        out.flat[k] /= 2 * eps
    return out


def test_euler_loop_folded_and_exact():
    args = (0.7, 1.3, 0.01, 50)
    g = grad(euler)
    first = g(*args)  # the two sweeps
    assert g(*args) == first  # the fused sweeps (hot entry), bit for bit
    src = fused_source(g, *args)
    assert "y_2 = y_1 + h * (_t1 * y_1 + math.sin(y_1))" in src
    assert "d_y_2" not in src  # the adjoint's copy is read through
    assert "d_k = d_k - d__t4 * y_1" in src
    _, back = vjp(euler, *args, wrt=0)
    assert back(1.0) == first
    assert first == pytest.approx(central(euler, args, 0, 1e-6), rel=1e-7)


@pytest.mark.parametrize("dtype, rel", [(np.float64, 1e-6), (np.float32, 2e-2)])
def test_array_loop_and_chain_against_differences(dtype, rel):
    rng = np.random.default_rng(3)
    y0 = rng.uniform(0.5, 1.5, 6).astype(dtype)
    k = dtype(0.4)
    for f, args, at in [
        (euler_arrays, (k, y0, dtype(0.05), 20), 1),
        (euler_arrays, (0.4, y0, 0.05, 20), 0),
        (chain, (y0, dtype(0.3)), 0),
        (chain, (y0, 0.3), 1),
    ]:
        g = grad(f, wrt=at)
        first = g(*args)
        second = g(*args)  # the fused sweeps
        np.testing.assert_array_equal(second, first)
        assert np.asarray(second).dtype == np.asarray(args[at]).dtype
        eps = 1e-6 if dtype is np.float64 else 1e-2
        wide = [np.asarray(a, np.float64) if isinstance(a, np.ndarray) else a for a in args]
        want = central(f, wide, at, eps)
        np.testing.assert_allclose(second, want, rtol=rel, atol=rel * 1e-2)


def test_chain_temporaries_folded():
    x = np.linspace(0.1, 1.0, 5)
    g = grad(chain)
    g(x, 0.3)
    src = fused_source(g, x, 0.3)
    # no forward temporary that only the next line read is left
    body = src.split("__pullback_value__ = ")[0]
    for name in set(__import__("re").findall(r"\b_t\d+\b", body)):
        assert src.count(name) != 2 or f"{name} = None" in src
    np.testing.assert_allclose(g(x, 0.3), central(chain, (x, 0.3), 0, 1e-6), rtol=1e-6)
