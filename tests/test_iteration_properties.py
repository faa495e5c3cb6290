"""Random programs that iterate and unpack: loops over any nesting of ``zip``,
``enumerate`` and ``reversed`` (with slices and lists of pairs), the same iterators made
into a list or tuple at once and looped over later, ``next`` of a generator over them,
loop targets and assignments unpacked plainly, nested and with a starred name, and
assignment expressions in conditions; each checked against finite differences (reverse
mode) and, for some, forward mode and second order."""

import itertools

import numpy as np
from fd import check_jvp, smooth_at
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from programs import load_program

from pullback.testing import check_grads

N = 5

SEQUENCES = ["x", "y", "x[1:]", "y[:-1]", "x[::2]", "pairs", "list(x)"]


@st.composite
def iterable(draw, depth=0):
    """``(expression, shape)``: shape is "v" for one value per item, or a tuple of the
    shapes of the items' parts."""
    choices = ["seq", "seq", "zip", "enumerate", "reversed"] if depth < 2 else ["seq"]
    kind = draw(st.sampled_from(choices))
    if kind == "seq":
        seq = draw(st.sampled_from(SEQUENCES))
        return seq, ("v", "v") if seq == "pairs" else "v"
    if kind == "zip":
        parts = [draw(iterable(depth + 1)) for _ in range(draw(st.integers(1, 3)))]
        return "zip(" + ", ".join(p[0] for p in parts) + ")", tuple(p[1] for p in parts)
    if kind == "enumerate":
        inner = draw(iterable(depth + 1))
        start = draw(st.sampled_from(["", ", 1", ", start=2"]))
        return f"enumerate({inner[0]}{start})", ("i", inner[1])
    inner = draw(iterable(depth + 1))
    if inner[0].startswith(("zip", "enumerate", "reversed")):  # not reversible: as it is
        return inner
    return f"reversed({inner[0]})", inner[1]


def target_and_terms(shape, names):
    """A loop target for items of ``shape`` and the float names it binds."""
    if shape == "v":
        name = f"v{next(names)}"
        return name, [name]
    if shape == "i":
        name = f"i{next(names)}"
        return name, [f"({name} + 1.0)"]
    parts = [target_and_terms(s, names) for s in shape]
    return "(" + ", ".join(p[0] for p in parts) + ",)", [t for p in parts for t in p[1]]


@st.composite
def loop(draw):
    expr, shape = draw(iterable())
    target, terms = target_and_terms(shape, itertools.count())
    product = " * ".join(terms)
    form = draw(st.sampled_from(["for", "for", "list", "tuple", "next"]))
    if form == "next":  # the first item that passes a test, or a default
        bound = draw(st.sampled_from(["-100.0", "0.2"]))
        return [f"s = s + next(({product} for {target} in {expr} if {product} > {bound}), 0.5)"]
    lines = []
    if form in ("list", "tuple"):  # the iterator consumed whole, the items looped over later
        lines.append(f"items = {form}({expr})")
        expr = "items"
    walrus = draw(st.booleans())
    lines.append(f"for {target} in {expr}:")
    if walrus:
        lines += [f"    if (t := {product}) > -100.0:", "        s = s + t * 0.5"]
    else:
        lines += [f"    s = s + {product}"]
    return lines


@st.composite
def unpacking(draw):
    kind = draw(st.sampled_from(["plain", "star", "nested", "swap"]))
    if kind == "plain":
        return ["a, b, c = x[:3]", "s = s + a * b - c"]
    if kind == "star":
        form = draw(st.sampled_from(["a, *m = x", "*m, a = x", "a, *m, b2 = x"]))
        return [form, "s = s + a * np.sum(np.array(m) ** 2)"]
    if kind == "nested":
        return ["(a, b), c = pairs[0], y[1]", "s = s + a * b * c"]
    return ["a, b = x[0], y[0]", "a, b = b, a * b", "s = s + a - b"]


@st.composite
def program(draw):
    body = []
    for _ in range(draw(st.integers(1, 3))):
        body += draw(st.one_of(loop(), unpacking()))
    lines = [
        "import numpy as np",
        "",
        "",
        "def f(x, y):",
        "    pairs = [(x[k], y[k]) for k in range(len(x))]",
        "    s = 0.0",
    ]
    lines += ["    " + line for line in body]
    lines.append("    return s")
    return "\n".join(lines) + "\n"


X = np.linspace(0.4, 1.3, N)
Y = np.linspace(-0.6, 0.9, N)


@given(program())
def test_random_iteration_matches_finite_differences(tmp_path_factory, source):
    f = load_program(source, tmp_path_factory.mktemp("programs"))
    # next(... if p > 0.2 ...) switches where a product of the data meets 0.2: at X, Y
    # one does, (1 + 1) * X[0] * X[0] * X[1] (finite differences meet a jump there)
    assume(smooth_at(f, (X, Y), 0) and smooth_at(f, (X, Y), 1))
    check_grads(f, X.copy(), Y.copy(), wrt=(0, 1))


@settings(max_examples=10)
@given(program())
def test_random_iteration_forward_and_second_order(tmp_path_factory, source):
    f = load_program(source, tmp_path_factory.mktemp("programs"))
    assume(smooth_at(f, (X, Y), 0) and smooth_at(f, (X, Y), 1))
    check_jvp(f, (X, Y), (np.linspace(1.0, -1.0, N), np.linspace(0.5, 1.5, N)))
    check_grads(f, X.copy(), Y.copy(), wrt=(0, 1), order=2)
