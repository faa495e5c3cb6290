"""What makes the first call of a long function cheap leaves every answer as it was: many
loops (each reverse loop finds the adjoints it touches, each statement its loops, from one
map), a long straight-line function, and the garbage collector paused only while a
transform runs (restored after, also when the transform refuses)."""

from __future__ import annotations

import gc
import importlib
import math
import sys

import numpy as np
import pytest

from pullback import grad, jvp
from pullback.errors import PullbackError
from pullback.testing import check_grads


def _module(tmp_path, name, source):
    (tmp_path / f"{name}.py").write_text(source)
    sys.path.insert(0, str(tmp_path))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(tmp_path))


def _many_loops(loops):
    lines = ["import numpy as np", "", "", "def fn(x, y):", "    s = x * y", "    t = x"]
    for k in range(loops):
        lines.append(f"    for i{k} in range({k % 3 + 1}):")
        lines.append(f"        s = s * 0.5 + np.sin(x * i{k}) * y")
        if k % 4 == 0:
            lines.append(f"        t = t + s * {k % 5 + 1}.0")
    lines.append("    return s + t")
    return "\n".join(lines) + "\n"


_STRAIGHT = (
    "    s = s + np.sin(x * {a}.0) * y",
    "    t{k} = s * {b:.1f} - x",
    "    s = s * 0.5 + t{p} * 0.25",
)


def _straight_line(statements):
    body = [
        _STRAIGHT[k % 3].format(k=k, a=k % 7 + 1, b=1.0 + (k % 5) * 0.1, p=k - 1)
        for k in range(statements)
    ]
    head = ["import numpy as np", "", "", "def fn(x, y):", "    s = x * y"]
    return "\n".join(head + body + ["    return s"]) + "\n"


def _reference_many_loops(loops, x, y):
    s, t = x * y, x
    for k in range(loops):
        for i in range(k % 3 + 1):
            s = s * 0.5 + np.sin(x * i) * y
            if k % 4 == 0:  # inside the loop, as in the generated source
                t = t + s * (k % 5 + 1)
    return s + t


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_many_loops_gradient_against_finite_differences(tmp_path, dtype):
    fn = _module(tmp_path, f"pb_loops_{dtype}", _many_loops(120)).fn
    x = np.linspace(0.2, 0.8, 3).astype(dtype)
    y = np.asarray(0.7, dtype=dtype)
    np.testing.assert_allclose(fn(x, y), _reference_many_loops(120, x, y), rtol=1e-5)
    check_grads(fn, x, y, wrt=(0, 1))
    check_grads(fn, x, y, wrt=(0, 1), order=2)


def test_many_loops_scalar_gradient(tmp_path):
    fn = _module(tmp_path, "pb_loops_scalar", _many_loops(60)).fn
    gx, gy = grad(fn, wrt=(0, 1))(0.3, 0.7)
    h = 1e-6
    fx = (fn(0.3 + h, 0.7) - fn(0.3 - h, 0.7)) / (2 * h)
    fy = (fn(0.3, 0.7 + h) - fn(0.3, 0.7 - h)) / (2 * h)
    assert math.isclose(gx, fx, rel_tol=1e-6, abs_tol=1e-8)
    assert math.isclose(gy, fy, rel_tol=1e-6, abs_tol=1e-8)


def test_long_straight_line_function(tmp_path):
    fn = _module(tmp_path, "pb_straight", _straight_line(600)).fn
    x = np.linspace(0.1, 0.9, 4)
    check_grads(fn, x, 0.7, wrt=(0, 1))


def test_collector_restored_after_a_transform(tmp_path):
    fn = _module(tmp_path, "pb_gc_ok", _many_loops(3)).fn
    assert gc.isenabled()
    grad(fn)(0.3, 0.7)
    assert gc.isenabled()


def test_collector_paused_and_restored_by_the_forward_transform(tmp_path):
    # forward mode's builder runs under the same pause as the reverse sweep's
    fn = _module(tmp_path, "pb_gc_jvp", _many_loops(3)).fn
    seen = []
    real = gc.disable

    def spy():
        seen.append(1)
        real()

    gc.disable = spy
    try:
        value, tangent = jvp(fn, (0.3, 0.7), (1.0, 0.0))
    finally:
        gc.disable = real
    assert seen and gc.isenabled()
    h = 1e-6
    fd = (fn(0.3 + h, 0.7) - fn(0.3 - h, 0.7)) / (2 * h)
    assert value == fn(0.3, 0.7)
    np.testing.assert_allclose(tangent, fd, rtol=1e-6)


def test_collector_restored_after_a_refused_transform(tmp_path):
    source = "def fn(x):\n    return {x, 2.0 * x}.pop()\n"
    fn = _module(tmp_path, "pb_gc_refused", source).fn
    assert gc.isenabled()
    with pytest.raises(PullbackError):
        grad(fn)(0.3)
    assert gc.isenabled()


def test_collector_left_off_when_the_user_turned_it_off(tmp_path):
    fn = _module(tmp_path, "pb_gc_off", _many_loops(3)).fn
    gc.disable()
    try:
        grad(fn)(0.3, 0.7)
        assert not gc.isenabled()
    finally:
        gc.enable()
