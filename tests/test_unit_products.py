"""A product by the sum's broadcast 1 in grad's fused sweeps hands out its other factor
(pullback.unit_cotangents, pullback.transform.unit_products): the gradients are bit for
bit those of the fused sweeps without it and of the two sweeps (which multiply), agree
with central finite differences, never share memory with an argument nor write into one,
and an elementwise gradient peaks at two arrays of its argument's size."""

from __future__ import annotations

import importlib
import inspect
import sys

import numpy as np
import pytest
from test_fused_release import _peak

from pullback import grad, value_and_grad, vjp
from pullback.runtime import scalar_seed
from pullback.transform import codegen
from pullback.transform.code import Compound, Line
from pullback.transform.unit_products import unit_products
from pullback.unit_cotangents import times_unit, unit_times

# -- the runtime helpers ----------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_broadcast_one_hands_out_the_other_factor(dtype):
    v = np.array([[-0.0, 2.5, np.inf], [np.nan, -np.inf, 1e-40]], dtype)
    u = np.broadcast_to(dtype(1.0), v.shape)
    assert unit_times(u, v) is v
    assert times_unit(v, u) is v
    # what it stands for, bit for bit (signs of zeros included)
    for product in (u * v, v * u):
        assert product.dtype == v.dtype
        np.testing.assert_array_equal(product, v)
        np.testing.assert_array_equal(np.signbit(product), np.signbit(v))


@pytest.mark.parametrize(
    "u, v",
    [
        (np.ones(3), np.arange(3.0)),  # ones, but not a broadcast: multiplied as before
        (np.broadcast_to(2.0, (3,)), np.arange(3.0)),  # a broadcast of another value
        (np.broadcast_to(np.float32(1.0), (3,)), np.arange(3.0)),  # dtypes differ
        (np.broadcast_to(1.0, (3,)), np.arange(3.0, dtype=np.float32)),  # a float64 result
        (np.broadcast_to(1.0, (2, 3)), np.arange(3.0)),  # v is broadcast by the product
        (np.broadcast_to(1.0 + 0j, (2,)), np.array([complex(-0.0, np.inf), 1j])),
        (np.broadcast_to(1.0, (3,)), np.arange(3)),  # integers
        (np.broadcast_to(1.0, ()), 2.0),  # not an array
        (np.broadcast_to(1.0, (0,)), np.zeros(0)),  # nothing to read the value from
    ],
)
def test_anything_else_is_multiplied(u, v):
    with np.errstate(invalid="ignore"):
        left, right = unit_times(u, v), times_unit(v, u)
        want_left, want_right = u * v, v * u
    assert left is not v and right is not v
    assert np.result_type(left) == np.result_type(want_left)
    np.testing.assert_array_equal(left, want_left)
    np.testing.assert_array_equal(right, want_right)


# -- the rewrite of the fused sweeps' text --------------------------------------------------

HEAD = [
    Line("_t1 = np.sin(x)"),
    Line("_t2 = _t1 * x"),
    Line("_dret = __pullback_seed__(_t2)"),
    Line("d__ret_1 = _dret"),
    Compound(
        "if d__ret_1 is not ZERO:",
        [Line("d__t2 = _sum_pullback(d__ret_1, _t2)[0]")],
        [Line("d__t2 = ZERO")],
    ),
]


def view_test(u):
    """The test for a view, before the helper is called."""
    return f"{u}.__class__ is not _pb_ndarray or {u}.base is None"


def rewritten(*lines, head=HEAD):
    block = [*head, *lines]
    out = unit_products(block, "_dret", lambda name: True)
    return [item.text for item in out[len(head) :] if isinstance(item, Line)]


def test_the_product_of_both_factors_is_rewritten_in_its_order():
    assert rewritten(
        Line("d__t1 = unbroadcast(d__t2 * x, _t1)"),
        Line("d_x = unbroadcast(_t1 * d__t2, x)"),
        Line("d_x = d_x + d__t1 * _np.cos(x)"),
        Line("return (densify(d_x),)"),
    ) == [
        f"d__t1 = unbroadcast(d__t2 * x if {view_test('d__t2')} else "
        "_pb_unit_times(d__t2, x), _t1)",
        f"d_x = unbroadcast(_t1 * d__t2 if {view_test('d__t2')} else "
        "_pb_times_unit(_t1, d__t2), x)",
        "d_x = d_x + d__t1 * _np.cos(x)",
        "return (densify(d_x),)",
    ]
    # through a copy and unbroadcast of the unit; without unbroadcast
    assert (
        rewritten(
            Line("d_a = unbroadcast(d__t2, _t2)"),
            Line("d_b = d_a"),
            Line("d_x = d_b * _t1"),
            Line("d_y = d_x * 2.0"),
            Line("return (d_y,)"),
        )[2]
        == f"d_x = d_b * _t1 if {view_test('d_b')} else _pb_unit_times(d_b, _t1)"
    )


PRODUCT = Line("d_x = unbroadcast(d__t2 * _t1, x)")


@pytest.mark.parametrize(
    "lines",
    [
        [Line("return (d_x,)")],  # returned
        [Line("d_y = f(d_x)"), Line("return (d_y,)")],  # passed to a call
        [Line("d_y = d_x"), Line("return (d_y + 1.0,)")],  # copied to another name
        [Line("d_y = d_x[0] * 2.0"), Line("return (d_y,)")],  # a view of it read
        [Compound("if c:", [Line("d_y = d_x * 2.0")]), Line("return (d_y,)")],  # in a branch
        [Line("d_y = d_x * 2.0\nd_z = d_y"), Line("return (d_z,)")],  # a line of two
    ],
)
def test_no_rewrite_where_the_product_may_be_seen_other_than_as_an_operand(lines):
    assert rewritten(PRODUCT, *lines)[0] == PRODUCT.text


@pytest.mark.parametrize(
    "head",
    [
        # the other factor bound twice, or to what may be another name's array
        [*HEAD, Line("_t1 = _t2 * 2.0")],
        [Line("_t1 = g(x)"), *HEAD[1:]],
        [Line("_t1 = x.T"), *HEAD[1:]],
        [Line("_t1 = np.sin(x, out=buf)"), *HEAD[1:]],
        # the other factor read other than into a new value
        [*HEAD, Line("w = g(_t1)")],
        [*HEAD, Line("w = _t1[1:]")],
        [*HEAD, Line("w = unbroadcast(_t1, x)")],
        [*HEAD, Compound("for _i in range(_t1):", [Line("w = 1.0")])],
        # something writes into an array or reads names out of sight
        [*HEAD, Line("buf[0] = 1.0")],
        [*HEAD, Line("w += 1.0")],
        [*HEAD, Line("h = lambda: _t1")],
        [*HEAD, Line("w = locals()")],
        [*HEAD, Compound("if c:", [Line("buf.attr = 1.0")])],
    ],
)
def test_no_rewrite_where_the_other_factor_may_be_shared_or_written(head):
    lines = [PRODUCT, Line("d_y = d_x * 2.0"), Line("return (d_y,)")]
    assert rewritten(*lines, head=head)[0] == PRODUCT.text


def test_no_rewrite_of_other_products():
    lines = [
        Line("d_x = unbroadcast(d_q * _t1, x)"),  # not a cotangent of the sum
        Line("d_y = unbroadcast(d__t2 * (2.0 * x), x)"),  # not a name: already a new array
        Line("d_z = d__t2 / x"),
        Line("return (d_x + d_y + d_z,)"),
    ]
    assert rewritten(*lines) == [line.text for line in lines]
    block = [*HEAD, PRODUCT, Line("d_y = d_x * 2.0"), Line("return (d_y,)")]
    assert unit_products(block, "_dret", lambda name: True)[len(HEAD)].text != PRODUCT.text
    # _t1 may be a scalar: no call for it
    scalar = unit_products(block, "_dret", lambda name: name != "_t1")
    assert scalar[len(HEAD)].text == PRODUCT.text


# -- gradients ----------------------------------------------------------------------------


def sin_times_x(x):
    return np.sum(np.sin(x) * x)


def tanh_times_x(x):
    return np.sum(np.tanh(x) * x)


def cube(x):
    return np.sum(x * x * x)


def used_twice(x):
    s = np.sin(x)
    t = s * x
    return np.sum(t * s)


def exp_times(x, y):
    return np.sum(np.exp(x) * y)


def mixed(x, y):
    return np.sum(np.sin(x) * y + np.cos(y) * x)


def product(x, y):
    return np.sum(x * y)


def three(x, y, z):
    return np.sum(x * y * z)


def two_sums(x):
    return np.sum(np.sin(x) * x) + np.sum(np.cos(x) * x)


def with_write(x):
    buf = x * 1.0
    buf[0] = 0.0
    return np.sum(np.sin(x) * buf)


# The summed elementwise maps, for central differences element by element.
MAPS = {
    sin_times_x: lambda x: np.sin(x) * x,
    tanh_times_x: lambda x: np.tanh(x) * x,
    cube: lambda x: x * x * x,
    used_twice: lambda x: np.sin(x) * x * np.sin(x),
    exp_times: lambda x, y: np.exp(x) * y,
    mixed: lambda x, y: np.sin(x) * y + np.cos(y) * x,
    product: lambda x, y: x * y,
    three: lambda x, y, z: x * y * z,
    two_sums: lambda x: np.sin(x) * x + np.cos(x) * x,
    with_write: lambda x: np.sin(x) * np.concatenate([0.0 * x[:1], x[1:]]),
}


def _args(fn, dtype, shape, broadcast_y, view):
    rng = np.random.default_rng(7)
    n = len(inspect.signature(fn).parameters)
    big = rng.uniform(0.2, 1.5, (2 * shape[0], shape[1] + 1)).astype(dtype)
    x = big[::2, 1:] if view else np.ascontiguousarray(big[::2, 1:])
    others = [rng.uniform(-1.0, 1.0, shape[1:] if broadcast_y else shape) for _ in range(n - 1)]
    return (x, *(y.astype(dtype) for y in others))


def _central(fn, args, p):
    """The gradient with respect to args[p] by central differences of the elementwise map
    (in float64), summed over the axes the map broadcast it along."""
    m = MAPS[fn]
    wide = [np.asarray(a, np.float64) for a in args]
    h = 1e-6
    up = [a.copy() for a in wide]
    down = [a.copy() for a in wide]
    up[p] = up[p] + h
    down[p] = down[p] - h
    d = (m(*up) - m(*down)) / (2 * h)
    while d.ndim > wide[p].ndim:
        d = d.sum(axis=0)
    return d


# (function, differentiated arguments, whether a product is rewritten: not where each
# product is a returned gradient)
CASES = [
    (sin_times_x, (0,), True),
    (tanh_times_x, (0,), True),
    (cube, (0,), True),
    (used_twice, (0,), True),
    (exp_times, (0,), True),
    (exp_times, (0, 1), True),
    (mixed, (0, 1), True),
    (product, (0, 1), False),
    (three, (0, 1, 2), True),
    (two_sums, (0,), True),
    (with_write, (0,), False),  # writes into an array: nothing rewritten
]


# each case on float64 and float32, on arrays and on views, and where the function has a
# second argument, also with that one broadcast along the first axis
SETTINGS = [
    (fn, wrt, rewrite, dtype, broadcast_y, view)
    for fn, wrt, rewrite in CASES
    for dtype in (np.float64, np.float32)
    for view in (False, True)
    for broadcast_y in ((False, True) if len(inspect.signature(fn).parameters) > 1 else (False,))
]


@pytest.mark.parametrize("fn, wrt, rewrite, dtype, broadcast_y, view", SETTINGS)
def test_gradients_are_those_of_the_products(
    fn, wrt, rewrite, dtype, broadcast_y, view, monkeypatch
):
    args = _args(fn, dtype, (6, 50), broadcast_y, view)
    kept = [a.copy() for a in args]
    g = grad(fn, wrt=wrt if len(wrt) > 1 else wrt[0])
    got = [g(*args) for _ in range(3)]  # the first call, the one making the entry, after
    got = [c if isinstance(c, tuple) else (c,) for c in got]
    adj = g.adjoint(*args)
    fused, _ = adj.fused_sweeps()
    assert ("_pb_unit_times" in inspect.getsource(fused)) == rewrite

    def seed(value):
        return scalar_seed(value, fn.__name__)

    # today's fused sweeps, built without the rewrite
    monkeypatch.setattr(codegen, "unit_products", lambda block, name, releasable: block)
    before, _ = adj.fused()
    assert "_pb_unit" not in inspect.getsource(before)
    _, want = before(seed, *args)
    _, back = vjp(fn, *args, wrt=wrt)
    swept = back(seed(fn(*args)))
    for call in got[1:]:
        for c, w, s, p in zip(call, want, swept, wrt, strict=True):
            assert c.dtype == args[p].dtype and c.shape == args[p].shape
            np.testing.assert_array_equal(c, w)
            np.testing.assert_array_equal(c, s)
            # a gradient of its own: not an argument, and writing into it changes none
            assert c.flags.writeable
            assert not any(np.shares_memory(c, a) for a in args)
    for c, p in zip(got[-1], wrt, strict=True):
        tol = 1e-6 if dtype == np.float64 else 2e-3
        np.testing.assert_allclose(c, _central(fn, args, p), rtol=tol, atol=tol)
    for a, k in zip(args, kept, strict=True):
        np.testing.assert_array_equal(a, k)  # the arguments are never written into


def test_value_and_grad_and_a_long_vector():
    x = np.linspace(0.1, 2.0, 70_000)  # a vector longer than a filled cotangent
    vg = value_and_grad(tanh_times_x)
    for _ in range(3):
        value, g = vg(x)
    assert value == tanh_times_x(x)
    _, back = vjp(tanh_times_x, x)
    np.testing.assert_array_equal(g, back(np.float64(1.0))[0])
    np.testing.assert_allclose(g, _central(tanh_times_x, (x,), 0), rtol=1e-6, atol=1e-6)
    assert not np.shares_memory(g, x)


# (tanh's derivative, 1.0 - t * t, makes a temporary NumPy cannot reuse: three arrays)
@pytest.mark.parametrize("fn", [sin_times_x, cube])
def test_elementwise_gradient_peaks_at_two_arrays(fn):
    x = np.linspace(0.0, 1.0, 400_000)
    g = grad(fn)
    g(x[:10])
    for _ in range(2):
        # forward: the map and its product; reverse: the gradient and one temporary
        assert _peak(lambda: g(x)) < 2.3 * x.nbytes


# -- random elementwise functions ------------------------------------------------------------


def _expr(rng, names, depth):
    roll = rng.random()
    if depth == 0 or roll < 0.3:
        return str(rng.choice(names))
    if roll < 0.55:
        fn = rng.choice(["sin", "cos", "tanh"])
        return f"np.{fn}({_expr(rng, names, depth - 1)})"
    op = rng.choice(["*", "+", "-"])
    return f"({_expr(rng, names, depth - 1)} {op} {_expr(rng, names, depth - 1)})"


def _random_module(tmp_path, count):
    """``count`` functions of (x, y): a few elementwise statements, then the sum of a
    product of two of their values."""
    rng = np.random.default_rng(13)
    lines = ["import numpy as np", ""]
    for k in range(count):
        names = ["x", "y"]
        lines += ["", f"def f{k}(x, y):"]
        for j in range(int(rng.integers(1, 4))):
            lines.append(f"    v{j} = {_expr(rng, names, 2)}")
            names.append(f"v{j}")
        a, b = rng.choice(names, 2)
        lines.append(f"    return np.sum({a} * {b})")
    (tmp_path / "pb_unit_random.py").write_text("\n".join(lines) + "\n")
    sys.path.insert(0, str(tmp_path))
    try:
        return importlib.import_module("pb_unit_random")
    finally:
        sys.path.remove(str(tmp_path))


@pytest.mark.parametrize("broadcast_y", [False, True])
def test_random_elementwise_functions_are_bit_for_bit(tmp_path, broadcast_y):
    module = _random_module(tmp_path, 40)
    x, y = _args(exp_times, np.float64, (4, 30), broadcast_y, False)
    kept = (x.copy(), y.copy())
    rewrites = 0
    for k in range(40):
        fn = getattr(module, f"f{k}")
        g = grad(fn, wrt=(0, 1))
        got = [g(x, y) for _ in range(3)]
        fused, _ = g.adjoint(x, y).fused_sweeps()
        rewrites += "_pb_unit_times" in inspect.getsource(fused)
        _, back = vjp(fn, x, y, wrt=(0, 1))
        want = back(np.float64(1.0))
        for call in got:
            for c, w, a in zip(call, want, (x, y), strict=True):
                np.testing.assert_array_equal(c, w)
                assert c.shape == a.shape and c.flags.writeable
                assert not np.shares_memory(c, x) and not np.shares_memory(c, y)
        np.testing.assert_array_equal(x, kept[0])
        np.testing.assert_array_equal(y, kept[1])
    assert rewrites >= 5  # the rewrite is exercised, not only refused


# A block of direct_reads writes only into the array it makes: the rewrite stands beside it.
DIRECT = (
    "if _batch_axes.axes or _type(d__t1) is not _ndarray:\n"
    "    d_w = fold_reads(ZERO, x, (slice(1, None, None), d__t1, None))\n"
    "else:\n"
    "    d_w = _zeros(x.shape, x.dtype)\n"
    "    _view = d_w[slice(1, None, None)]\n"
    "    _view += d__t1\n"
    "    if d__t1:\n"
    "        d_w[0] += d__t1"
)


@pytest.mark.parametrize(
    "block, kept",
    [
        (DIRECT, False),
        (DIRECT.replace("_view += d__t1", "_t1 += d__t1"), True),  # another array written
        (DIRECT.replace("d_w[0] += d__t1", "_t1[0] = d__t1"), True),
        (DIRECT.replace("_view = d_w[", "_view = _t1["), True),  # a view of another array
    ],
)
def test_a_direct_reads_block_beside_the_rewrite(block, kept):
    lines = [PRODUCT, Line("d_y = d_x * 2.0"), Line(block), Line("return (d_y,)")]
    assert (rewritten(*lines)[0] == PRODUCT.text) == kept
