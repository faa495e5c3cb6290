"""Branch states as overlays (sweep_common.State.copy): a branch holds only the adjoints
it sets, and merging two branches (reverse_flow.merge_states) visits only those, so a
function with hundreds of ``if`` blocks over one variable costs linear time to transform.
The states and the generated code are the same as with full copies."""

import linecache

import numpy as np
import pytest

import pullback
from pullback.transform.reverse_flow import ControlFlowAdjoints
from pullback.transform.sweep_common import State


class _Builder(ControlFlowAdjoints):
    def adj(self, name):
        return "d_" + name


def test_copy_is_an_overlay_reading_through_its_parent():
    state = State()
    state["a"] = "M"
    branch = state.copy()
    assert dict(branch) == {}  # holds nothing of its own
    assert branch.get("a") == "M" and branch.get("b") == "Z"  # parent, then fallback
    branch["b"] = "M"
    assert state.get("b") == "Z" and branch.get("b") == "M"  # writes stay in the branch
    nested = branch.copy()
    assert nested.get("a") == "M" and nested.get("b") == "M"


def test_merge_visits_the_names_the_branches_set():
    state = State()
    state["kept"] = "M"
    state["zero"] = "Z"
    s1, s2 = state.copy(), state.copy()
    s1["p"] = "M"  # set in one branch only: the other binds it to ZERO
    s2["q"] = "M"
    s1["both"] = "M"
    s2["both"] = "M"
    b1, b2 = [], []
    _Builder().merge_states(state, s1, b1, s2, b2, 1)
    assert [line.text for line in b1] == ["d_q = ZERO"]
    assert [line.text for line in b2] == ["d_p = ZERO"]
    assert state.get("p") == state.get("q") == state.get("both") == "M"
    assert state.get("kept") == "M" and state.get("zero") == "Z"  # untouched: as before
    assert set(state) == {"kept", "zero", "p", "q", "both"}


def _many_branches(n):
    lines = ["def f(x):", "    y = x * 2.0", "    s = 0.0"]
    for i in range(n):
        lines.append(f"    if x[{i % 3}] > {(i % 5) * 0.5}:")
        lines.append(f"        s = s + y.sum() * {i % 7 + 1}.0")
        lines.append("    else:")
        lines.append(f"        s = s - np.sin(y[{i % 3}])")
    lines.append("    return s")
    text = "\n".join(lines) + "\n"
    name = f"<test_resolve_s29_flow_{n}>"
    linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    namespace = {"np": np}
    exec(compile(text, name, "exec"), namespace)
    return namespace["f"]


def _central(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_many_branches_over_one_variable(dtype):
    f = _many_branches(120)
    x = np.array([0.3, 1.2, 2.1], dtype=dtype)
    got = pullback.grad(f)(x)
    expected = _central(f, x.astype(np.float64))
    tol = 1e-6 if dtype == np.float64 else 2e-4
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)


def test_many_branches_source_is_deterministic():
    first = pullback.grad(_many_branches(40)).source
    again = pullback.grad(_many_branches(40)).source
    assert first == again
