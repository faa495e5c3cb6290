"""Random nests of index loops that reuse a few loop variables (``i``, ``j``, ``k``) across
nests and levels, with ranges that may be empty (``range(i + 1, n)``), ``break`` and
``continue``, and a loop variable read after its loop: what the SSA pass's carried names
must keep exactly as Python binds them. Each program is checked against finite differences
(reverse mode), and some against forward mode and second order."""

import numpy as np
from fd import check_jvp
from hypothesis import given, settings
from hypothesis import strategies as st
from programs import load_program

from pullback.testing import check_grads

N = 4
NAMES = ("i", "j", "k")


@st.composite
def nest(draw, depth=0, bound=()):
    """The lines of one loop (with loops inside it), indented for the function body."""
    var = draw(st.sampled_from([n for n in NAMES if n not in bound] or list(NAMES)))
    outer = bound[-1] if bound else None
    start = draw(st.sampled_from(["0", f"{outer} + 1", outer] if outer else ["0", "1"]))
    lines = [f"for {var} in range({start}, n):"]
    inner = bound + (var,)
    index = " * ".join(f"x[{v}]" for v in inner)
    body = [f"s = s + np.sin({index}) * y[{var}]"]
    if draw(st.booleans()) and depth < 2:
        body += draw(nest(depth + 1, inner))
    exit_kind = draw(st.sampled_from(["", "", "break", "continue"]))
    if exit_kind:
        body = [f"if {var} == {draw(st.integers(1, N - 1))}:", f"    {exit_kind}"] + body
    lines += ["    " + line for line in body]
    return lines


@st.composite
def program(draw):
    body = []
    for _ in range(draw(st.integers(1, 3))):
        lines = draw(nest())
        body += lines
        if draw(st.booleans()):
            # the outermost variable after its nest: its range starts at 0 or 1 < n and a
            # break comes at 1 at the earliest, so Python has bound it
            outer = lines[0].split()[1]
            body.append(f"s = s + x[{outer}] * 0.5")
    lines = ["import numpy as np", "", "", "def f(x, y):", "    n = x.shape[0]", "    s = 0.0"]
    lines += ["    " + line for line in body]
    lines.append("    return s")
    return "\n".join(lines) + "\n"


X = np.linspace(0.4, 1.3, N)
Y = np.linspace(-0.6, 0.9, N)


@given(program())
def test_random_loop_nests_match_finite_differences(tmp_path_factory, source):
    f = load_program(source, tmp_path_factory.mktemp("programs"))
    check_grads(f, X.copy(), Y.copy(), wrt=(0, 1))


@settings(max_examples=10)
@given(program())
def test_random_loop_nests_forward_and_second_order(tmp_path_factory, source):
    f = load_program(source, tmp_path_factory.mktemp("programs"))
    check_jvp(f, (X, Y), (np.linspace(1.0, -1.0, N), np.linspace(0.5, 1.5, N)))
    check_grads(f, X.copy(), Y.copy(), wrt=(0, 1), order=2)
