"""The generated adjoint is readable, visible to Python's tools, and cached."""

import inspect
import linecache

import numpy as np
import pytest

import pullback
from pullback import grad


def sum3(a):
    return a[0] + a[1] + a[2]


def two_lines(x, y):
    z = np.sin(x) * y
    return np.sum(z * z)


def test_source_names_the_user_lines():
    source = grad(two_lines).source
    assert source.startswith("def two_lines__forward(x, y):")
    assert "def two_lines__backward(_saved, _dret):" in source
    assert "# test_generated_code.py:18: z = np.sin(x) * y" in source
    assert "# test_generated_code.py:19: return np.sum(z * z)" in source


def test_generated_code_is_in_linecache_and_inspectable():
    adjoint = grad(two_lines).adjoint(np.ones(2), np.ones(2))
    assert adjoint.filename in linecache.cache
    assert inspect.getsource(adjoint.forward).startswith("def two_lines__forward")
    # every generated line maps back to a line of the user's function
    lines = [adjoint.user_location(k) for k in range(1, adjoint.source.count("\n") + 1)]
    assert {loc[1] for loc in lines if loc} <= {17, 18, 19}


def test_index_reads_do_not_allocate_per_read():
    source = grad(sum3).source_for(np.zeros(30))
    backward = source[source.index("def sum3__backward") :]
    # three reads by constant positions are written into one dense array (the chain that
    # fold_reads walks is built only where a run-time check fails, transform/direct_reads.py)
    assert "_reads_a = (" not in backward
    assert backward.count("fold_reads(") == 1
    assert backward.count("d_a[") == 3
    np.testing.assert_array_equal(grad(sum3)(np.arange(30.0))[:4], [1.0, 1.0, 1.0, 0.0])


def test_adjoint_is_built_once_per_argument_kind():
    g = grad(two_lines)
    a1 = g.adjoint(np.ones(3), np.ones(3))
    g(np.ones(3), np.ones(3))
    assert g.adjoint(np.zeros(3), np.ones(3)) is a1
    assert g.adjoint(1.0, 2.0) is not a1  # scalars get their own specialization


def test_scalar_specialization_drops_unbroadcast():
    def scalar_fn(x, y):
        return x * y + x / y

    assert "unbroadcast" not in grad(scalar_fn).source_for(1.0, 2.0)
    assert "unbroadcast" in grad(scalar_fn).source


def test_error_in_the_reverse_sweep_names_the_users_line():
    reg = pullback.default_registry().copy()

    def fragile(x):
        return x * 2.0

    @reg.rrule(fragile)
    def _(x):
        def fragile_pullback(dy):
            raise FloatingPointError("pullback blew up")

        return x * 2.0, fragile_pullback

    def outer(x):
        y = fragile(x)
        return y * y

    with pytest.raises(pullback.AdjointRuntimeError) as e:
        grad(outer, registry=reg)(1.0)
    text = str(e.value)
    assert "test_generated_code.py:" in text and "y = fragile(x)" in text
    assert "FloatingPointError: pullback blew up" in text
