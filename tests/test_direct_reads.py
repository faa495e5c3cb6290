"""A parameter read by a few constant positions or slices gets its adjoint written directly
(transform/direct_reads.py): the same numbers, bit for bit, as folding the chain of reads
that the differentiable-again gradient still builds, and as finite differences."""

import inspect

import numpy as np
import pytest
from fd import check_grad

from pullback import grad, jacobian, vjp
from pullback.errors import PullbackError


def sum3(a):
    return a[0] + a[1] + a[2]


def negative(a):
    return a[-1] * a[0] + a[1] * 2.0


def repeated(a):
    return a[0] + a[1] * a[0] + a[0] * 3.0 + a[2] * a[0]


def mixed_signs(a):
    return a[-5] * a[0] + a[-5] * 2.0 + a[4] * 3.0 + a[-1]


def zero_cotangents(a):
    return a[0] * 0.0 + a[1] * -0.0 + a[2] * a[3]


def rows(a):
    return np.sum(a[0] * a[1]) + np.sum(a[0] ** 2)


def slices(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def through_complex(a):
    return np.real(a[0] * (1.0 + 2.0j) * a[1]) + a[2]


def written_copy(a):
    b = a.copy()
    b[0] = 2.0 * a[1]
    return b[0] + a[1] * b[2] + a[0]


def aliased(a):
    c = a
    return c[0] * a[1] + c[1] + a[2]


def loop_bound(x):  # reads after a loop, by slices it bounds: left to the chain
    k = 2
    s = 0.0
    for i in range(3):
        s = s + x[i] * 0.5
        k = k + 1
    return np.sum(x[:k] * x[1 : k + 1]) + s * x[0]


def name_index(x):  # an element by a computed position beside a slice: the chain
    k = 2
    for _ in range(3):
        k = k + 1
    return np.sum(x[:k] ** 2) + x[k] * 3.0


def two_arguments(a, b):
    return a[0] * b[1] + a[1] * b[0] + np.sum(b)


VECTOR_CASES = [sum3, negative, repeated, mixed_signs, zero_cotangents, through_complex]
ALL_CASES = [*VECTOR_CASES, rows, slices, written_copy, aliased, loop_bound, name_index]


def _argument(f, dtype):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 3) if f is rows else (9,)).astype(dtype)
    if f is not rows:
        x[3] = -0.0
    return x


def _chain_gradient(f, x):
    """The differentiable-again gradient: it folds the chain (``Line.alt``)."""
    return grad(f).adjoint(x).gradient(x)


@pytest.mark.parametrize("f", ALL_CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_same_bits_as_the_folded_chain_and_finite_differences(f, dtype):
    x = _argument(f, dtype)
    g = grad(f)
    results = [g(x), g(x), g(x)]  # the two sweeps, then the fused sweeps of the hot entry
    y, back = vjp(f, x)
    results.append(back(np.ones_like(y))[0])
    want = _chain_gradient(f, x)
    for got in results:
        assert got.dtype == x.dtype and got.shape == x.shape
        assert got.tobytes() == want.tobytes()
    check_grad(f, x)


def test_the_fast_form_is_generated_where_it_applies():
    x = np.linspace(0.5, 1.5, 9)
    for f in (sum3, negative, repeated, mixed_signs, zero_cotangents, slices):
        source = grad(f).source_for(x)
        assert "_reads_a = (" not in source and "_reads_x = (" not in source, f.__name__
    assert "d_a[0] = d__ret_1" in grad(sum3).source_for(x)
    assert "+= " in grad(repeated).source_for(x)  # a repeated position adds
    assert "_view += " in grad(slices).source_for(x)
    assert "_view += " in grad(rows).source_for(np.ones((2, 3)))  # rows of a matrix


def test_a_zero_cotangent_keeps_positive_zeros():
    x = np.linspace(0.5, 1.5, 9)
    g = grad(zero_cotangents)
    for _ in range(3):
        out = g(x)
        assert not np.signbit(out[:2]).any() and out[0] == 0.0 and out[1] == 0.0


def test_float16_and_repeated_reads_sum_in_the_chains_order():
    x = np.array([0.1, 1e-3, 3.0, 7.0, 0.3, 0.2, 0.1, 2.0, 1.0], dtype=np.float16)
    for f in (repeated, mixed_signs):
        want = _chain_gradient(f, x)
        for got in (grad(f)(x), grad(f)(x), grad(f)(x)):
            assert got.dtype == np.float16 and got.tobytes() == want.tobytes()


def both_read(a, b):  # both parameters' adjoints written directly
    return a[0] * b[1] + a[1] * b[0] + a[2] * b[-1] * a[0]


def mixed_read(a, b):  # elements and slices of one array: the chain
    return a[0] * b[1] + a[1] * b[0] + b[2:].sum() * 0.0 + np.sum(a[1:] * b[1:])


def test_both_arguments_read():
    rng = np.random.default_rng(1)
    for dtype in (np.float64, np.float32):
        a, b = rng.standard_normal(4).astype(dtype), rng.standard_normal(4).astype(dtype)
        for f in (both_read, mixed_read):
            g = grad(f, wrt=(0, 1))
            want = grad(f, wrt=(0, 1)).adjoint(a, b).gradient(a, b)
            for _ in range(3):
                got = g(a, b)
                assert [v.tobytes() for v in got] == [v.tobytes() for v in want]
            check_grad(f, a.astype(np.float64), b.astype(np.float64), wrt=(0, 1))
    source = grad(both_read, wrt=(0, 1)).source_for(a, b)
    assert "_reads_a = (" not in source and "_reads_b = (" not in source


def test_two_arguments_and_jacobians():
    a, b = np.array([0.5, -2.0, 3.0]), np.array([1.5, 0.25, -1.0])
    g = grad(two_arguments, wrt=(0, 1))
    for _ in range(3):
        da, db = g(a, b)
        np.testing.assert_array_equal(da, [b[1], b[0], 0.0])
        np.testing.assert_array_equal(db, [a[1] + 1.0, a[0] + 1.0, 1.0])
    check_grad(two_arguments, a, b, wrt=(0, 1))

    def pair(a):
        return np.stack([a[0] * a[1], a[2] + a[0]])

    np.testing.assert_array_equal(
        jacobian(pair)(a), [[a[1], a[0], 0.0], [1.0, 0.0, 1.0]]
    )  # a batch of cotangents: the chain's fold, as before


def test_second_order_keeps_the_chain():
    from pullback import hessian

    x = np.array([0.5, -2.0, 3.0])
    np.testing.assert_array_equal(
        hessian(repeated)(x), [[0.0, 1.0, 1.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]]
    )


def test_integer_arrays_are_refused_as_before():
    with pytest.raises(PullbackError):
        grad(sum3)(np.arange(5))


def sin_slices(x):
    return np.sum(np.sin(x[1:]) * np.cos(x[:-1]))


def test_beside_products_by_the_sums_broadcast_one():
    # a long vector: the sum's cotangent is a broadcast 1, whose products hand out their
    # other factor (unit_products.py) beside the slices' direct adds
    x = np.linspace(-2.0, 2.0, 70001)
    g = grad(sin_slices)
    results = [g(x) for _ in range(3)]
    fused, _ = g.adjoint(x).fused_sweeps()
    assert "_pb_unit_times" in inspect.getsource(fused) and "_view += " in inspect.getsource(fused)
    want = _chain_gradient(sin_slices, x)
    assert all(r.tobytes() == want.tobytes() for r in results)
    check_grad(sin_slices, x[:9])


def _random_program(rng, n):
    """``return`` of a few products and scaled terms of elements read by constant
    positions of a vector of length ``n`` (repeated, negative, mixed signs)."""
    terms = []
    for _ in range(rng.integers(1, 7)):
        i, j = (int(k) for k in rng.integers(-n, n, size=2))
        c = rng.choice(["0.0", "-0.0", "1.5", "-3.0", "1e-3"])
        form = rng.integers(3)
        terms.append([f"a[{i}] * {c}", f"a[{i}] * a[{j}]", f"np.sin(a[{i}]) * a[{j}] * {c}"][form])
    return "import numpy as np\n\n\ndef f(a):\n    return " + " + ".join(terms) + "\n"


@pytest.mark.parametrize("seed", range(12))
def test_random_element_reads_match_the_chain_bit_for_bit(seed, tmp_path):
    from programs import load_program

    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 8))
    f = load_program(_random_program(rng, n), tmp_path)
    for dtype in (np.float64, np.float32, np.float16):
        x = rng.standard_normal(n).astype(dtype)
        x[rng.integers(n)] = -0.0
        want = _chain_gradient(f, x)
        g = grad(f)
        for _ in range(3):
            got = g(x)
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
    check_grad(f, rng.standard_normal(n))


def _random_slices_program(rng, n):
    """A sum of terms over slices of a vector of length ``n`` (repeated, negative bounds,
    steps) or, when ``rows``, rows of a matrix."""
    terms = []
    for _ in range(rng.integers(1, 6)):
        lo, hi = sorted(int(k) for k in rng.integers(-n, n, size=2))
        step = rng.choice(["", ":2", ":-1"])
        part = f"a[{lo}:{hi}{step}]" if step != ":-1" else f"a[{hi}:{lo}:-1]"
        c = rng.choice(["0.0", "-0.0", "1.5", "-3.0"])
        terms.append(rng.choice([f"np.sum({part} * {c})", f"np.sum(np.sin({part}) * {part})"]))
    return "import numpy as np\n\n\ndef f(a):\n    return " + " + ".join(terms) + "\n"


@pytest.mark.parametrize("seed", range(8))
def test_random_slice_reads_match_the_chain_bit_for_bit(seed, tmp_path):
    from programs import load_program

    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(4, 9))
    f = load_program(_random_slices_program(rng, n), tmp_path)
    for dtype in (np.float64, np.float32):
        x = rng.standard_normal(n).astype(dtype)
        want = _chain_gradient(f, x)
        g = grad(f)
        for _ in range(3):
            got = g(x)
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
    check_grad(f, rng.standard_normal(n))
