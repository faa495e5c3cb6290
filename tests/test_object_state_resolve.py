"""The class of a method call's receiver known before running (resolve.receiver_class),
asked once per ``x.sum()``-style call: inside the check and the normalizer it is answered
from one index of the function's bindings (resolve.BindingIndex, bindings_fixed), which
must give exactly the answers of a walk per question. Gradients of long functions of such
calls, and of objects whose class defines a method named like an array method, are
checked against central differences."""

from __future__ import annotations

import linecache

import gast
import numpy as np
import pytest
from probe.probe_harness import check_float32, check_probe

import pullback
from pullback.resolve import (
    BindingIndex,
    _first_call,
    bindings_fixed,
    bound_once,
    local_names,
    receiver_class,
)
from pullback.source import load_source


class Box:
    """A user class with a method named like an array method."""

    def __init__(self, v):
        self.v = v

    def sum(self):
        return np.sum(self.v**2)


def _generated(n: int, name: str):
    """A function of ``n`` calls ``z.sum()`` on ``n`` locals, every third one a Box."""
    lines = [f"def {name}(x):", "    s = 0.0"]
    for i in range(n):
        if i % 3 == 0:
            lines.append(f"    z{i} = Box(x * {i % 5 + 1}.0)")
        else:
            lines.append(f"    z{i} = x * {i % 5 + 1}.0")
        lines.append(f"    s = s + z{i}.sum() * {i % 7 + 1}.0")
    lines.append("    return s")
    text = "\n".join(lines) + "\n"
    filename = f"<test_object_state_resolve {name}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace = {"np": np, "Box": Box}
    exec(compile(text, filename, "exec"), namespace)
    return namespace[name]


LONG = _generated(60, "many_sums")
X = np.array([0.3, -0.2, 0.7])


def test_long_function_of_receiver_calls_against_differences():
    check_probe(LONG, X)
    check_float32(LONG, X)


def test_index_answers_as_a_walk_per_question():
    fs = load_source(LONG)
    tree = fs.tree
    index = BindingIndex(tree)
    names = {n.id for n in gast.walk(tree) if isinstance(n, gast.Name)}
    for name in sorted(names):
        assert (index.counts.get(name, 0) == 1) == bound_once(tree, name), name
        assert index.first_calls.get(name) is _first_call(tree, name), name
    locals_ = local_names(tree)
    receivers = [gast.Name(f"z{i}", gast.Load(), None, None) for i in range(60)]
    walked = [receiver_class(fs, r, locals_) for r in receivers]
    with bindings_fixed(fs):
        indexed = [receiver_class(fs, r, locals_) for r in receivers]
    assert indexed == walked
    assert walked.count(Box) == 20 and walked.count(None) == 40


def rebound_then_called(x):
    b = np.sin(x)
    t = b.sum()  # b is bound twice: its class is not known before running
    b = x * 2.0
    return t + b.sum() * b[0]


def declared_global(x):
    global GB  # noqa: PLW0603 - a name global here is never a known local
    GB = np.cos(x)
    return GB.sum() * x[1]


def test_names_bound_twice_or_global():
    for f, name in ((rebound_then_called, "b"), (declared_global, "GB")):
        fs = load_source(f)
        assert BindingIndex(fs.tree).counts[name] != 1 and not bound_once(fs.tree, name)
    check_probe(rebound_then_called, X, second=True)
    check_float32(rebound_then_called, X)
    with pytest.raises(pullback.UnsupportedSyntaxError, match="PB401"):
        pullback.grad(declared_global)(X)


def test_index_outside_a_scope_is_not_kept():
    fs = load_source(LONG)
    with bindings_fixed(fs):
        with bindings_fixed(fs):
            receiver_class(fs, gast.Name("z0", gast.Load(), None, None), local_names(fs.tree))
        assert fs._pb_binding_index is not None  # (the outer scope's, kept)
    assert fs._pb_binding_index is None
    np.testing.assert_allclose(pullback.grad(LONG)(X), pullback.grad(LONG)(X), rtol=0)
