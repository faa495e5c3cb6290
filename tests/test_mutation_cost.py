"""Writes into local arrays at O(1) a write (issue 11, "How it should cost"): the reverse
sweep updates a cotangent buffer it owns in place (pullback.transform.ownership and the
``*_owned`` helpers of pullback.arrays_inplace). Every path is checked against finite
differences (float64 and float32), against the plain copying path, and at second order;
the pass is checked to refuse where an alias of the buffer is still live."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from programs import load_program

import pullback
import pullback.transform.reverse as reverse_module
from pullback import grad, vjp
from pullback.arrays_inplace import (
    array_set_pullback,
    array_set_pullback_owned,
    fold_reads_owned,
    write_winners,
)
from pullback.read_folds import fold_reads
from pullback.tangents import ZERO
from pullback.testing import check_grads
from pullback.transform.code import Compound, Line
from pullback.transform.ownership import own_cotangents

DTYPES = [np.float64, np.float32]
IDX = np.array([[0, 3, 0, 1], [2, 2, 4, 0], [1, 4, 3, 3], [0, 0, 0, 2], [4, 1, 2, 3]])


# -- functions, made fresh by a factory so the plain path can be built beside ------------
def make_cases():
    def fill(x):
        out = np.zeros(x.shape[0])
        for i in range(x.shape[0]):
            out[i] = np.sin(x[i]) * x[i]
        return np.sum(out * out)

    def recurrence(x):
        y = np.zeros(x.shape[0])
        y[0] = x[0]
        for t in range(1, x.shape[0]):
            y[t] = 0.9 * y[t - 1] + x[t]
        return np.sum(y * y)

    def gauss_seidel(x):
        g = x.copy()
        for _ in range(3):
            for i in range(1, g.shape[0] - 1):
                g[i, 1:-1] = 0.25 * (g[i - 1, 1:-1] + g[i + 1, 1:-1] + g[i, :-2] + g[i, 2:])
        return np.sum(g * g)

    def scatter(x):
        acc = np.zeros(5)
        for k in range(5):
            acc[IDX[k]] += x[k] * x[k]  # repeated indices: buffered, the last write wins
        return np.sum(acc * acc)

    def two_arrays(x):
        a = np.zeros(x.shape[0])
        b = np.ones(x.shape[0])
        for i in range(1, x.shape[0]):
            a[i] = a[i - 1] * 0.5 + x[i]
            b[i] = b[i - 1] * x[i - 1]
        return np.sum(a * b)

    def two_writes_per_step(x):
        y = np.zeros(x.shape[0] + 1)
        for i in range(x.shape[0]):
            y[i + 1] = y[i] + x[i]
            y[i] = y[i] * x[i]  # overwrites an entry read just before
        return np.sum(y * y)

    def branch_in_loop(x):
        out = np.zeros(x.shape[0])
        for i in range(x.shape[0]):
            if x[i] > 0.7:
                out[i] = x[i] * x[i]
            else:
                out[i] = np.sin(x[i])
        return np.sum(out * x)

    def whole_use_in_loop(x):
        out = np.zeros(x.shape[0])
        s = 0.0
        for i in range(x.shape[0]):
            out[i] = x[i] * 2.0
            s = s + np.sum(out * out)  # the whole array inside the loop
        return s

    def slice_rows(x):
        m = np.zeros((4, x.shape[0]))
        for i in range(1, 4):
            m[i] = m[i - 1] * x + x[i]  # a row written from the row above
        return np.sum(m * m)

    def while_fill(x):
        out = np.zeros(x.shape[0])
        k = 0
        while k < x.shape[0]:
            out[k] = np.exp(-x[k]) * x[k]
            k = k + 1
        return np.sum(out * out)

    def returned_array(x):
        out = np.zeros(x.shape[0])
        for i in range(x.shape[0]):
            out[i] = x[i] * x[i]
        return out

    return {
        f.__name__: f
        for f in (
            fill,
            recurrence,
            gauss_seidel,
            scatter,
            two_arrays,
            two_writes_per_step,
            branch_in_loop,
            whole_use_in_loop,
            slice_rows,
            while_fill,
            returned_array,
        )
    }


CASES = make_cases()
X = np.array([0.6, 1.1, 0.8, 0.95, 0.3])
GRID = np.random.default_rng(3).random((5, 5))


def arg(name, dtype=np.float64):
    return (GRID if name == "gauss_seidel" else X).astype(dtype)


SCALAR_OUT = [n for n in CASES if n != "returned_array"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(CASES))
def test_matches_finite_differences(name, dtype):
    check_grads(CASES[name], arg(name, dtype))


@pytest.mark.parametrize("name", ["fill", "recurrence", "gauss_seidel", "two_arrays"])
def test_owned_path_is_generated(name):
    # The fast path is what the sweeps run for these (else the tests above test nothing new).
    assert "_owned(" in grad(CASES[name]).source_for(arg(name))


def test_scatter_runs_the_fused_update():
    # acc[idx] += v is one call whose pullback passes the cotangent through: no copy of
    # the array's cotangent and no read of acc.
    source = grad(CASES["scatter"]).source_for(X)
    assert "_array_add_set_pullback(" in source
    assert "array_set_pullback" not in source and "fold_reads_owned" not in source


def test_whole_use_inside_the_loop_keeps_copies():
    # d_out also receives the whole-array contribution in the loop: not provably owned.
    source = grad(CASES["whole_use_in_loop"]).source_for(X)
    assert "array_set_pullback_owned" not in source


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", SCALAR_OUT)
def test_equals_the_copying_path(name, dtype, monkeypatch):
    x = arg(name, dtype)
    owned = grad(CASES[name])(x)
    monkeypatch.setattr(reverse_module, "own_cotangents", lambda *a, **k: None)
    plain_fn = make_cases()[name]
    assert "_owned(" not in grad(plain_fn).source_for(x)
    plain = grad(plain_fn)(x)
    assert owned.dtype == plain.dtype
    np.testing.assert_allclose(owned, plain, rtol=1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("name", ["fill", "recurrence", "scatter", "slice_rows"])
def test_second_order(name):
    check_grads(CASES[name], arg(name), order=2)


def test_hessian_of_recurrence_matches_finite_differences_of_gradient():
    f = CASES["recurrence"]
    h = pullback.hessian(f)(X)
    g = grad(f)
    eps = 1e-6
    cols = [(g(X + eps * e) - g(X - eps * e)) / (2 * eps) for e in np.eye(X.size)]
    np.testing.assert_allclose(h, np.array(cols).T, rtol=1e-6, atol=1e-8)


def test_seed_and_repeated_calls_are_untouched():
    # The cotangent entering the loop is the caller's seed: copied once, never written.
    y, back = vjp(CASES["returned_array"], X)
    seed = np.arange(1.0, 6.0)
    kept = seed.copy()
    first = back(seed)[0]
    second = back(seed)[0]
    np.testing.assert_array_equal(seed, kept)
    np.testing.assert_allclose(first, 2 * X * kept)
    np.testing.assert_array_equal(first, second)


def test_reads_of_the_gradient_do_not_alias_between_calls():
    g = grad(CASES["recurrence"])
    first = g(X)
    kept = first.copy()
    g(X * 2.0)
    np.testing.assert_array_equal(first, kept)


# -- the run-time helpers ------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "index, value",
    [
        (2, 0.5),
        (slice(1, 4), np.array([1.0, 2.0, 3.0])),
        (slice(None, None, 2), 0.25),  # a scalar broadcast into a slice
        (np.array([0, 3, 0]), np.array([1.0, 2.0, 3.0])),  # repeated: the last write wins
        (np.array([True, False, True, False, True]), np.array([1.0, 2.0, 3.0])),
    ],
)
def test_owned_pullback_equals_plain(index, value, dtype):
    a = np.zeros(5, dtype=dtype)
    dy = np.arange(1.0, 6.0, dtype=dtype)
    kept = dy.copy()
    plain = array_set_pullback(dy, a, index, value)
    copied = array_set_pullback_owned(dy, a, index, value, None)
    np.testing.assert_array_equal(dy, kept)  # not owned: the caller's array is untouched
    assert copied[0] is not dy
    owned = dy.copy()
    inplace = array_set_pullback_owned(owned, a, index, value, owned)
    assert inplace[0] is owned  # owned: updated in place
    for got in (copied, inplace):
        np.testing.assert_array_equal(got[0], plain[0])
        np.testing.assert_array_equal(got[2], plain[2])
        assert got[0].dtype == plain[0].dtype
        assert not np.may_share_memory(got[2], got[0])


def test_owned_pullback_of_rows():
    a = np.zeros((3, 4))
    dy = np.arange(12.0).reshape(3, 4)
    owned = dy.copy()
    g, _, dv, token = array_set_pullback_owned(owned, a, (1, slice(1, 3)), np.ones(2), owned)
    assert g is owned and token is owned
    np.testing.assert_array_equal(dv, [5.0, 6.0])
    expected = dy.copy()
    expected[1, 1:3] = 0.0
    np.testing.assert_array_equal(g, expected)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "index, vshape",
    [
        ((1, slice(1, 3)), (2,)),  # a row segment
        ((slice(None), 2), ()),  # a scalar broadcast into a column
        ((slice(0, 2), slice(None)), (4,)),  # a row broadcast into a block
        ((2, 3), ()),  # one element of a matrix
        ((Ellipsis, 1), (1,)),  # not a basic index of ints and slices: the general path
    ],
)
def test_owned_pullback_of_blocks_equals_plain(index, vshape, dtype):
    # Blocks of a matrix: the view is zeroed in place, the value's cotangent is a copy
    # summed over the axes it was broadcast along.
    a = np.zeros((3, 4), dtype=dtype)
    dy = np.arange(1.0, 13.0, dtype=dtype).reshape(3, 4)
    value = np.ones(vshape, dtype=dtype) if vshape else dtype(0.5)
    plain = array_set_pullback(dy, a, index, value)
    owned = dy.copy()
    g, _, dv, token = array_set_pullback_owned(owned, a, index, value, owned)
    assert g is owned and token is owned
    np.testing.assert_array_equal(g, plain[0])
    np.testing.assert_array_equal(dv, plain[2])
    assert np.shape(dv) == np.shape(value) and not np.may_share_memory(dv, g)


@pytest.mark.parametrize("dtype", DTYPES)
def test_owned_fold_of_matrix_reads_equals_plain(dtype):
    # The stencil's reads: rows and shifted segments of one row, with one cotangent.
    x = np.zeros((4, 5), dtype=dtype)
    d = np.arange(1.0, 4.0, dtype=dtype)
    chain = ((1, slice(2, None)), d, ((1, slice(None, -2)), d, ((2, slice(1, -1)), d, None)))
    chain = ((0, 1), dtype(2.0), (slice(None), np.ones(5, dtype), chain))
    acc = np.arange(20.0, dtype=dtype).reshape(4, 5)
    plain = fold_reads(acc, x, chain)
    owned = acc.copy()
    got, tok = fold_reads_owned(owned, x, chain, owned)
    assert got is owned and tok is owned
    np.testing.assert_array_equal(got, plain)


@pytest.mark.parametrize(
    "chain",
    [
        None,
        (1, 2.0, (3, np.float64(0.5), (1, 1.0, None))),  # repeated element reads
        (slice(0, 3), np.array([1.0, 2.0, 3.0]), (2, ZERO, None)),
        (np.array([0, 0, 4]), np.array([1.0, 2.0, 3.0]), None),  # a repeated fancy read
    ],
)
def test_owned_fold_equals_plain(chain):
    x = np.zeros(5)
    acc = np.arange(5.0)
    plain = fold_reads(acc, x, chain)
    kept = acc.copy()
    got, tok = fold_reads_owned(acc, x, chain, None)
    np.testing.assert_array_equal(acc, kept)  # not owned: untouched
    np.testing.assert_array_equal(got, plain)
    assert tok is None or chain is None
    owned = acc.copy()
    got, tok = fold_reads_owned(owned, x, chain, owned)
    assert got is owned and tok is owned
    np.testing.assert_array_equal(got, plain)


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
def test_owned_fold_refuses_complex_reads_of_a_real_buffer():
    x = np.zeros(3)
    owned = np.ones(3)
    got, tok = fold_reads_owned(owned, x, (0, 1j, None), owned)
    assert tok is None and got is not owned
    np.testing.assert_array_equal(owned, np.ones(3))


# -- the static pass -----------------------------------------------------------------------
def _loop(lines, before=()):
    body = [Line(t) for t in lines]
    return [
        *(Line(t) for t in before),
        Compound("for i in reversed(_r):", body),
        Line("return (d_a,)"),
    ]


def _rewrite(block):
    ns = {"_array_set_pullback": array_set_pullback}
    names = iter(range(1, 100))

    def bind(hint, value):
        ns["_" + hint] = value
        return "_" + hint

    own_cotangents(block, ns, bind, lambda base: f"{base}{next(names)}", "d_")
    return block


def test_pass_rewrites_the_plain_loop():
    block = _rewrite(
        _loop(
            [
                "d_a = fold_reads(d_a, a, _reads_a)",
                "d_b = d_a",
                "_cot1 = _array_set_pullback(d_b, a, i, v)",
                "d_a = _cot1[0]",
                "d_v = _cot1[2]",
            ]
        )
    )
    assert block[0].text == "_own1 = None"
    texts = [line.text for line in block[1].body]
    # the fold runs when the chain holds a read (the helper returns its arguments else)
    assert texts[0] == (
        "if _reads_a is not None: d_a, _own1 = _fold_reads_owned(d_a, a, _reads_a, _own1)"
    )
    assert block[1].body[0].alt == "d_a = fold_reads(d_a, a, _reads_a)"
    assert texts[2] == "_cot1 = _array_set_pullback_owned(d_b, a, i, v, _own1); _own1 = _cot1[3]"
    assert block[1].body[2].alt == "_cot1 = _array_set_pullback(d_b, a, i, v)"


@pytest.mark.parametrize(
    "lines",
    [
        # d_a still holds the buffer and is read after the write's pullback
        [
            "d_b = d_a",
            "_cot1 = _array_set_pullback(d_b, a, i, v)",
            "d_w = d_a * 2",
            "d_a = _cot1[0]",
        ],
        # the buffer reaches a name outside the family
        ["_cot1 = _array_set_pullback(d_a, a, i, v)", "d_a = _cot1[0]", "d_z = d_a + d_w"],
        # the result tuple itself escapes
        ["_cot1 = _array_set_pullback(d_a, a, i, v)", "keep = _cot1", "d_a = _cot1[0]"],
    ],
)
def test_pass_refuses_possible_aliases(lines):
    block = _rewrite(_loop(lines, before=["d_w = ZERO"]))
    assert all("_owned" not in line.text for line in block[-2].body)
    assert not any(line.text.startswith("_own") for line in block[:-2] if isinstance(line, Line))


@pytest.mark.parametrize(
    "lines",
    [
        # d_b is the buffer d_a was before the write's pullback
        ["d_b = d_a", "_cot1 = _array_set_pullback(d_a, a, i, v)", "d_a = _cot1[0]"],
        # d_b is the buffer the write's pullback returned, as d_a is
        ["_cot1 = _array_set_pullback(d_a, a, i, v)", "d_a = _cot1[0]", "d_b = _cot1[0]"],
    ],
)
def test_pass_and_an_alias_read_after_the_loop(lines):
    # d_b is read after the loop. Before the write's pullback it is the buffer being
    # zeroed (refused); as the pullback's own result it is the final value (allowed).
    block = _loop(lines)
    block.insert(-1, Line("d_x = d_b * 1.0"))
    _rewrite(block)
    loop = [item for item in block if isinstance(item, Compound)][0]
    rewritten = any("_owned" in line.text for line in loop.body)
    assert rewritten == (lines[0] != "d_b = d_a")


def test_pass_allows_a_dead_alias():
    block = _rewrite(
        _loop(["_cot1 = _array_set_pullback(d_a, a, i, v)", "d_a = _cot1[0]", "d_b = _cot1[0]"])
    )
    assert "_owned" in block[1].body[0].text


def test_short_winners_match_the_scatter_of_ids():
    rng = np.random.default_rng(0)
    for _ in range(300):
        n = int(rng.integers(1, 8))
        index = rng.integers(-n, n, size=int(rng.integers(0, 10)))
        got = write_winners((n,), index)
        owner = np.full(n, -1)
        owner[index] = np.arange(index.size)
        expected = owner[index] == np.arange(index.size)
        if got is None:
            assert expected.all()
        else:
            np.testing.assert_array_equal(got, expected)


def test_nothing_is_owned_while_stacked_cotangents_run():
    # Hessians push a stack of cotangents through the sweep (pullback.batched): the owned
    # helpers then do what the plain ones do, and own nothing.
    from pullback import tangents

    a = np.zeros(4)
    dy = np.arange(8.0).reshape(2, 4)
    tangents.batch_axes.axes = (2,)
    try:
        try:
            plain = array_set_pullback(dy, a, 1, 0.5)
        except ValueError:
            with pytest.raises(ValueError):
                array_set_pullback_owned(dy, a, 1, 0.5, None)
        else:
            got = array_set_pullback_owned(dy, a, 1, 0.5, None)
            assert got[3] is None
            np.testing.assert_array_equal(got[0], plain[0])
        folded, tok = fold_reads_owned(dy, a, (slice(0, 2), np.ones((2, 2)), None), None)
    finally:
        tangents.batch_axes.axes = ()
    assert tok is None and folded is not dy


# -- random loops that write and read a local array ------------------------------------
N = 6


@st.composite
def loop_statement(draw):
    kind = draw(st.sampled_from(["element", "recur", "slice", "fancy", "aug", "read", "whole"]))
    c = draw(st.sampled_from(["0.5", "-0.75", "1.25"]))
    j = draw(st.integers(0, N - 1))
    if kind == "element":
        return f"a[k] = x[k] * {c} + a[{j}]"
    if kind == "recur":
        return f"a[k] = a[k - 1] * {c} + x[k]"
    if kind == "slice":
        lo = draw(st.integers(0, N - 2))
        return f"a[{lo}:] = a[{lo}:] * {c} + x[k]"
    if kind == "fancy":
        idx = draw(st.lists(st.integers(0, N - 1), min_size=1, max_size=4))  # repeats
        return f"a[np.array({idx})] += x[k] * a[{j}]"
    if kind == "aug":
        return f"a[k] *= x[{j}] + {c}"
    if kind == "read":
        return f"s = s + a[{j}] * x[k]"
    return "s = s + np.sum(a * x)"


@st.composite
def loop_program(draw):
    start = draw(st.sampled_from(["np.zeros(6)", "x.copy()", "x * 1.0"]))
    body = draw(st.lists(loop_statement(), min_size=1, max_size=4))
    lines = ["import numpy as np", "", "", "def f(x):", f"    a = {start}", "    s = 0.0"]
    lines.append(f"    for k in range(1, {draw(st.integers(2, N))}):")
    lines += ["        " + line for line in body]
    lines.append("    return np.sum(a * a) + s")
    return "\n".join(lines) + "\n"


XR = np.array([0.7, 1.2, 0.4, 0.9, 1.1, 0.6])


@settings(max_examples=40, deadline=None)
@given(loop_program())
def test_random_loops_match_fd_and_the_copying_path(tmp_path_factory, source):
    folder = tmp_path_factory.mktemp("owned")
    f = load_program(source, folder)
    check_grads(f, XR.copy())
    owned = grad(f)(XR.copy())
    real = reverse_module.own_cotangents
    reverse_module.own_cotangents = lambda *a, **k: None
    try:
        plain = grad(load_program(source, folder))(XR.copy())
    finally:
        reverse_module.own_cotangents = real
    np.testing.assert_allclose(owned, plain, rtol=1e-12, atol=1e-12)


def test_two_loops_in_one_block_each_get_their_token():
    def two_loops(x):
        a = np.zeros(x.shape[0])
        for i in range(x.shape[0]):
            a[i] = x[i] * x[i]
        b = a * 1.0
        for i in range(1, x.shape[0]):
            b[i] = b[i - 1] * 0.5 + a[i]
        return np.sum(b * b)

    source = grad(two_loops).source_for(X)
    assert source.count("_array_set_pullback_owned(") == 2
    for dtype in DTYPES:
        check_grads(two_loops, X.astype(dtype))


def test_reads_of_a_written_array_hand_their_cotangent_through():
    # array_fresh's pullback is the identity: the sweep renames instead of calling it
    source = grad(CASES["recurrence"]).source_for(X)
    backward = source.split("def recurrence__backward")[1]
    assert "_array_fresh_pullback(" not in backward
    assert "_owned(" in backward


def test_pass_leaves_a_sweep_it_cannot_read():
    block = _loop(["_cot1 = _array_set_pullback(d_a, a, i, v)", "d_a = _cot1[0]"])
    block.insert(0, Line("d_q = ("))  # not a statement on its own
    _rewrite(block)
    assert "_owned" not in block[1].body[0].text
