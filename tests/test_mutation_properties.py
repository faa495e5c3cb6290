"""Random programs that write into local arrays (slices, masks, integer arrays with
repeated indices, loops, read-after-write, whole-array reads between writes), checked
against finite differences (reverse mode) and, for some, second order."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from programs import load_program

from pullback.testing import check_grads

N = 6

index = st.integers(0, N - 1)
const = st.sampled_from(["0.5", "1.5", "-0.75", "2.0"])
op = st.sampled_from(["+=", "-=", "*=", "="])


@st.composite
def slice_text(draw):
    lo = draw(st.integers(0, N - 2))
    hi = draw(st.integers(lo + 1, N))
    step = draw(st.sampled_from(["", ":2"]))
    return f"{lo}:{hi}{step}"


@st.composite
def statement(draw):
    kinds = ["element", "slice", "mask", "fancy", "loop", "whole", "raw"]
    kinds += ["fill", "copyto", "add_at", "out", "put", "aug"]  # in-place calls
    kinds += ["copyto_where", "place", "putmask", "along_axis", "ufunc_at"]
    kind = draw(st.sampled_from(kinds))
    i, j = draw(index), draw(index)
    c = draw(const)
    o = draw(op)
    if kind == "element":
        return [f"a[{i}] {o} x[{j}] * {c}"]
    if kind == "slice":
        s = draw(slice_text())
        return [f"a[{s}] {o} x[{s}] * a[{s}] + {c}"]
    if kind == "mask":
        mask = draw(st.lists(st.booleans(), min_size=N, max_size=N))
        return [f"m = np.array({mask})", f"a[m] {o} x[m] * {c}"]
    if kind == "fancy":
        idx = draw(st.lists(index, min_size=1, max_size=4))  # repeats allowed
        return [f"a[np.array({idx})] {o} x[{j}] * a[{i}]"]
    if kind == "loop":
        k = draw(st.integers(1, N - 1))
        return [f"for k in range(1, {k + 1}):", f"    a[k] = a[k - 1] * {c} + x[k] * a[k]"]
    if kind == "whole":
        return ["s = s + np.sum(a * x)"]
    if kind in ("fill", "copyto", "add_at", "out", "put", "aug"):
        return inplace_statement(draw, kind, i, j, c)
    if kind in ("copyto_where", "place", "putmask", "along_axis", "ufunc_at"):
        return masked_statement(draw, kind, i, j, c)
    return [f"a[{i}] = a[{j}] * x[{i}]"]  # read-after-write


def inplace_statement(draw, kind, i, j, c):
    """An in-place call on the local array ``a``."""
    idx = draw(st.lists(index, min_size=1, max_size=4))  # repeats allowed
    if kind == "fill":
        return [f"a.fill(x[{i}] * {c})"]
    if kind == "copyto":
        return [f"np.copyto(a, x * a + {c})"]  # reads the whole array it writes
    if kind == "add_at":
        ufunc = draw(st.sampled_from(["add", "subtract"]))
        value = draw(st.sampled_from([f"x[{j}] * a[{i}]", f"x[:{len(idx)}] * {c}"]))
        return [f"np.{ufunc}.at(a, {idx}, {value})"]
    if kind == "out":
        call = draw(
            st.sampled_from(
                ["np.multiply(a, x, out=a)", f"np.add(x, {c}, out=a)", "np.cumsum(x, out=a)"]
            )
        )
        return [call]
    if kind == "put":
        return [f"np.put(a, {idx}, x[:{draw(st.integers(1, 3))}] * {c})"]
    if kind == "aug":  # on the whole array: in place when a is written in place
        return [draw(st.sampled_from([f"a += x * {c}", f"a -= x[{i}]", f"a *= x[{j}]"]))]
    raise AssertionError(kind)


def masked_statement(draw, kind, i, j, c):
    """A masked or indexed in-place call on ``a``, or a ufunc.at other than add/subtract
    (unbuffered: repeated indices apply the ufunc again)."""
    mask = draw(st.lists(st.booleans(), min_size=N, max_size=N))
    idx = draw(st.lists(index, min_size=1, max_size=4))  # repeats allowed
    k = draw(st.integers(1, 3))
    if kind == "copyto_where":
        # the whole source, a scalar, a length-1 array broadcast
        src = draw(st.sampled_from([f"x * a + {c}", f"x[{i}] * {c}", f"x[{j}:{j + 1}] * {c}"]))
        return [f"np.copyto(a, {src}, where=np.array({mask}))"]
    if kind == "place":
        return [f"np.place(a, np.array({mask}), x[:{k}] * {c})"]
    if kind == "putmask":
        value = draw(st.sampled_from(["x * a", f"x[:{k}] * {c}", f"x[{i}]"]))
        return [f"np.putmask(a, np.array({mask}), {value})"]
    if kind == "along_axis":
        axis = draw(st.sampled_from(["0", "None"]))
        return [f"np.put_along_axis(a, np.array({idx}), x[:{len(idx)}] * {c}, axis={axis})"]
    ufunc = draw(st.sampled_from(["multiply", "divide", "maximum", "minimum"]))
    value = f"x[:{len(idx)}] + 1.0" if ufunc == "divide" else f"x[:{len(idx)}] * {c}"
    value = draw(st.sampled_from([value, f"x[{j}] + 0.25"]))
    return [f"np.{ufunc}.at(a, {idx}, {value})"]


@st.composite
def program(draw):
    start = draw(st.sampled_from(["x * 1.0", "np.zeros(6)", "x.copy()", "np.ones_like(x)"]))
    body = [line for stmt in draw(st.lists(statement(), min_size=1, max_size=5)) for line in stmt]
    lines = ["import numpy as np", "", "", "def f(x):", f"    a = {start}", "    s = 0.0"]
    if draw(st.booleans()):
        # Sorting is not differentiable where two entries tie with different derivatives,
        # which random programs make often: sort last, before the symmetric sum of squares
        # (the gradient still goes through the permutation and back).
        body.append("a.sort()")
    lines += ["    " + line for line in body]
    lines.append("    return np.sum(a * a) + s")
    return "\n".join(lines) + "\n"


# No two of X[i], X[i] * c (c a constant of the programs), X[i] + 0.25 and X[i] + 1.0 are
# within 1e-3 of each other: a maximum.at/minimum.at or sort of two equal values is a kink
# where finite differences average two sides (0.6 == 1.2 * 0.5 was one such tie).
X = np.array([0.7131, 1.2289, 0.4173, 0.9317, 1.1071, 0.6053])


@given(program())
def test_random_writes_match_finite_differences(tmp_path_factory, source):
    f = load_program(source, tmp_path_factory.mktemp("programs"))
    check_grads(f, X.copy())


@given(program())
def test_random_writes_second_order(tmp_path_factory, source):
    f = load_program(source, tmp_path_factory.mktemp("programs"))
    check_grads(f, X.copy(), order=2)
