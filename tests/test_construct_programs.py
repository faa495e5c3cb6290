"""Random programs mixing the newest constructs, checked against central finite differences:
``try``/``except``/``else``/``finally`` with a ``raise`` on a data-dependent condition,
objects of a plain class built in the function (``__init__`` storing fields, a method
computing from them, ``__call__``), closures made by a factory defined in the function and
called later, ``np.where`` with a branch that is NaN on the unselected side (the gradient
must be NaN-free), and ``list.append`` in a loop into a list read back after the loop. Any
step may run inside a loop.

A program is ``f(x)`` with ``x`` three floats; it threads a scalar ``a`` and an array ``v``
through the steps. The branches depend on the data, so a point may lie where ``f`` is not
smooth (a switch of a condition within the finite-difference step): such points are
rejected (``assume``, fd.smooth_at) by comparing central differences of two step sizes,
which agree wherever ``f`` is differentiable. The gradient is checked at every other point,
in float64 and float32, in forward mode and to second order."""

import warnings

import numpy as np
from fd import check_grad, numerical_grad
from fd import smooth_at as fd_smooth_at
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st
from programs import load_program

import pullback
from pullback.testing import check_grads

HEADER = """import numpy as np


class Affine:
    def __init__(self, w, b):
        self.w = w
        self.b = b
        self.n = len(w)

    def score(self, y):
        return np.sum(self.w * y) / self.n + self.b

    def __call__(self, y):
        return np.tanh(self.w * y + self.b)

    def both(self, y):
        return self.score(y) + np.sum(self(y)) * 0.5

    def scaled(self, k):
        return Affine(self.w * k, self.b + k)


"""

FACTORIES = [
    [
        "def make(s):",
        "    c = s * 0.5",
        "    def inner(y):",
        "        return c * np.sin(y) + s",
        "    return inner",
    ],
    ["def make(s):", "    return lambda y: np.tanh(s * y) * s"],
    [  # the closure reads f's own v when it is called (v is bound again in between)
        "def make(s):",
        "    def inner(y):",
        "        return s * y + np.sum(v) * 0.25",
        "    return inner",
    ],
]

const = st.sampled_from(["0.5", "-0.25", "0.75", "1.5"])
index = st.integers(0, 2)
threshold = st.sampled_from(["-0.3", "0.1", "0.4"])


@st.composite
def try_step(draw, name):
    """A try whose body raises when a value computed from x passes a threshold (a KeyError
    no handler catches: it escapes), with another step inside the body or a handler."""
    error = draw(st.sampled_from(["ValueError", "ZeroDivisionError", "KeyError"]))
    body = [
        f"a = a * {draw(const)} + np.sin(v[{draw(index)}])",
        f"if {draw(st.sampled_from(['a', 'v[0]', 'np.sum(v)']))} > {draw(threshold)}:",
        f"    raise {error}('data')",
        f"v = v * np.cos(a) + {draw(const)}",
    ]
    inner = draw(st.sampled_from(["", "class", "closure", "where", "append"]))
    inner = draw(STEPS[inner](name) if inner == "closure" else STEPS[inner]) if inner else []
    where = draw(st.sampled_from(["before", "after", "handler"]))
    with_finally = draw(st.booleans())
    if inner and inner[0].startswith("v = np.where"):
        # Only in a handler of a try without finally: a try body (and, with finally, the
        # handlers) is lowered one operation per step (transform/try_blocks.py), and
        # transform/where_branches.py masks a branch only in the block of its np.where,
        # so there a branch NaN where it is not selected still gives a NaN gradient
        # (not handled yet: np.where(x > 0, np.log(x), 0.0) in a try body, at x = 0).
        where, with_finally = "handler", False
    handler = [f"a = a * {draw(const)} - v[{draw(index)}]"]
    if where == "before":
        body = inner + body
    elif where == "after":
        body = body + inner
    else:
        handler += inner
    lines = ["try:"] + ["    " + s for s in body]
    lines += ["except ValueError:"] + ["    " + s for s in handler]
    lines += ["except ZeroDivisionError as e:", "    a = a + len(e.args) * v[1] * v[2]"]
    if draw(st.booleans()):
        lines += ["else:", f"    a = a + v[{draw(index)}] ** 2"]
    if with_finally:
        lines += ["finally:", f"    v = np.sin(v + a * {draw(const)})"]
    return lines


@st.composite
def class_step(draw):
    lines = [f"m = Affine(np.sin(v) * {draw(const)}, a * {draw(const)})"]
    use = draw(st.sampled_from(["score", "call", "score and call", "both", "scaled", "list"]))
    if use in ("score", "score and call"):
        lines.append("a = np.tanh(a + m.score(v))")
    if use in ("call", "score and call"):
        lines.append("v = m(v) + v * 0.5")
    if use == "both":  # a method calling another and __call__
        lines.append("a = np.tanh(a * m.both(v))")
    if use == "scaled":  # a method returning a new object of the class
        lines += [f"m = m.scaled(a * {draw(const)})", "v = m(v)"]
    if use == "list":  # objects appended in a loop, used after it
        lines += [
            "ms = []",
            "for i in range(2):",
            f"    ms.append(Affine(v * (i + {draw(const)}), a))",
            "a = np.tanh(a + ms[0].score(v) - ms[-1].score(v * v))",
        ]
    return lines


@st.composite
def closure_step(draw, name):
    """``h = make(...)`` now; the call comes after other statements change ``v`` and ``a``.
    Each step binds a closure name of its own: a name bound to two factory calls is
    refused (PB405, nested_factories.py inlines a factory whose result is bound once)."""
    lines = [f"{name} = make(a * {draw(const)})", f"a = a + v[{draw(index)}] * 0.5"]
    if draw(st.booleans()):
        lines.append(f"v = v * {draw(const)} + a")
    call = draw(st.sampled_from(["v = {h}(v)", "a = a + np.sum({h}(v)) * 0.5"]))
    return lines + [call.format(h=name)]


@st.composite
def where_step(draw):
    """A branch that is NaN (log, sqrt, arcsin) or infinite (1/.) where it is not selected."""
    c = draw(threshold)
    branch = draw(
        st.sampled_from(
            [
                f"np.log(v - {c})",
                f"np.sqrt(v - {c})",
                f"1.0 / (v - {c} + 0.5)",
                f"np.arcsin(np.tanh(v - {c}))",
                f"(v - {c}) ** 1.5",
            ]
        )
    )
    other = draw(st.sampled_from(["v * a", "0.0", "np.cos(v)"]))
    if draw(st.booleans()):
        line = f"v = np.where(v > {c}, {branch}, {other})"
    else:
        line = f"v = np.where(v <= {c}, {other}, {branch})"
    return [line, "v = np.tanh(v)"]  # bounded for the next steps


@st.composite
def append_step(draw):
    """``out.append`` in a loop (on a condition, or every turn), read back after it."""
    lines = ["out = [a]" if draw(st.booleans()) else "out = []"]
    lines.append("for i in range(3):")
    item = f"v[i] * a + {draw(const)}"
    form = draw(st.sampled_from(["if", "always", "try"]))
    if form == "if":
        lines += [f"    if v[i] > {draw(threshold)}:", f"        out.append(np.sin({item}))"]
    elif form == "always":
        lines.append(f"    out.append({item})")
    else:  # a data-dependent raise between appends: the handler appends instead
        lines += [
            "    try:",
            f"        if v[i] > {draw(threshold)}:",
            "            raise ValueError('skip')",
            f"        out.append({item})",
            "    except ValueError:",
            "        out.append(a * 0.5)",
        ]
    read = draw(
        st.sampled_from(
            [
                "a = a + sum(out) * 0.5",
                "a = a + (out[-1] * out[0] if out else 0.0)",
                "a = np.tanh(a + len(out) * 0.1 + (np.sum(np.array(out)) if out else 0.0))",
            ]
        )
    )
    return lines + [read]


STEPS = {
    "try": try_step,
    "class": class_step(),
    "closure": closure_step,
    "where": where_step(),
    "append": append_step(),
}


@st.composite
def program(draw, where_in_loops=True, max_steps=4):
    kinds = draw(st.lists(st.sampled_from(sorted(STEPS)), min_size=1, max_size=max_steps))
    body = ["a = x[0] * 0.5", "v = np.sin(x * 1.3)"]
    factory = draw(st.sampled_from(FACTORIES))
    for n, kind in enumerate(kinds):
        step = STEPS[kind]
        step = draw(step(f"h{n}") if kind in ("closure", "try") else step)
        looped_where = any("np.where" in line for line in step)
        if draw(st.integers(0, 3)) == 0 and (where_in_loops or not looped_where):
            step = ["for j in range(2):"] + ["    " + s for s in step]
        body += step
    if any("make(" in line for line in body):  # (a factory is defined only where called)
        body[2:2] = factory
    body.append("return a * np.sum(v) + np.sum(v * v)")
    return HEADER + "def f(x):\n" + "".join(f"    {s}\n" for s in body)


def quiet(fn, *args, **kwargs):
    """NumPy warns about the unselected branch (the primal computes log(-1) too)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*args, **kwargs)


def smooth_at(f, x):
    """No switch of a condition within the finite-difference steps around x (fd.smooth_at)."""
    return quiet(fd_smooth_at, f, (x,))


points = st.lists(st.floats(-1.0, 1.0), min_size=3, max_size=3).map(np.array)


def _raises(f, x):
    try:
        quiet(f, x)
    except (ValueError, ZeroDivisionError, KeyError) as e:
        return type(e)
    return None


@settings(deadline=None)
@given(source=program(), x=points)
def test_generated_programs_match_finite_differences(tmp_path_factory, source, x):
    f = load_program(source, tmp_path_factory.mktemp("constructs"))
    escapes = _raises(f, x)
    event("escapes" if escapes is not None else "returns")
    if escapes is not None:  # a raise no handler catches: grad raises the same error
        try:
            quiet(pullback.grad(f), x)
        except escapes:
            return
        raise AssertionError(f"grad did not raise {escapes.__name__}\n{source}")
    assert np.isfinite(quiet(f, x)), source
    assume(smooth_at(f, x))
    g = quiet(check_grad, f, x)
    assert np.all(np.isfinite(g)), source
    if smooth_at(f, x.astype(np.float32).astype(np.float64)):
        quiet(check_grad, f, x.astype(np.float32))


@settings(deadline=None)
@given(source=program(), x=points)
def test_generated_programs_forward_mode(tmp_path_factory, source, x):
    f = load_program(source, tmp_path_factory.mktemp("constructs"))
    assume(_raises(f, x) is None and smooth_at(f, x))
    v = np.array([0.3, -0.7, 0.5])
    y, dy = quiet(pullback.jvp, f, (x,), (v,))
    np.testing.assert_allclose(y, quiet(f, x), rtol=1e-12)
    want = np.dot(quiet(numerical_grad, f, (x,), 0), v)
    np.testing.assert_allclose(dy, want, rtol=1e-5, atol=1e-7, err_msg=source)


# Any program: np.where in loops and one np.where's value feeding another's NaN branch
# are covered to second order (the masks of transform/where_joins.py).
# (Differentiating a generated gradient again costs about a second a program: a third of
# the profile's examples, smaller programs.)
@settings(deadline=None, max_examples=max(2, settings().max_examples // 3))
@given(
    source=program(max_steps=3),
    x=points,
)
def test_generated_programs_second_order(tmp_path_factory, source, x):
    f = load_program(source, tmp_path_factory.mktemp("constructs"))
    assume(_raises(f, x) is None and smooth_at(f, x))
    grad_f = pullback.grad(f)
    assume(smooth_at(lambda z: np.dot(quiet(grad_f, z), [0.3, -0.7, 0.5]), x))
    quiet(check_grads, f, x, order=2)
