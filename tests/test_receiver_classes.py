"""Methods of user classes named like in-place array methods (``fill``, ``sort``, ``put``,
``resize``) are ordinary calls of Python code when the receiver's class is known before
running: ``self`` in a method, a local bound once by ``K(...)``, a global instance
(pullback/receiver_classes.py). Where the receiver turns out to be an array when the
function runs, the in-place method is refused there, never run as a copy."""

from __future__ import annotations

import numpy as np
import pytest

from pullback import grad, hessian
from pullback.errors import UnsupportedSyntaxError
from pullback.receiver_classes import python_method_of
from pullback.testing import check_grads


class Canvas:
    def __init__(self, k=2.0):
        self.k = k

    def fill(self, v):
        return self.k * v

    def sort(self, v):
        return np.sin(v) * v

    def put(self, v, shift):
        return v + shift

    def render(self, x):
        return np.sum(self.fill(x) * x) + np.sum(self.sort(x)) + np.sum(self.put(x, 1.0) ** 2)


class Outer:
    class Inner:
        def resize(self, v):
            return v**3

        def total(self, x):
            return np.sum(self.resize(x))


CANVAS = Canvas(3.0)


def global_instance(x):
    y = CANVAS.fill(x)
    return np.sum(y * x)


def local_instance(x):
    c = Canvas(0.5)
    return np.sum(c.sort(x) + c.fill(x))


def hand_render(x, k):
    return 2 * k * x + (np.cos(x) * x + np.sin(x)) + 2 * (x + 1.0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_self_method_named_like_array_methods(dtype):
    x = np.array([0.3, -1.2, 2.0], dtype=dtype)
    canvas = Canvas(1.5)
    g = grad(canvas.render)(x)
    rtol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(g, hand_render(x.astype(np.float64), 1.5), rtol=rtol)
    check_grads(canvas.render, x)


def test_nested_class_self_method():
    x = np.array([0.5, 1.5])
    np.testing.assert_allclose(grad(Outer.Inner().total)(x), 3 * x**2, rtol=1e-13)


def test_global_instance_method():
    x = np.array([1.0, -2.0, 0.25])
    np.testing.assert_allclose(grad(global_instance)(x), 6.0 * x, rtol=1e-13)
    check_grads(global_instance, x)


def test_local_instance_method():
    x = np.array([1.0, -2.0, 0.25])
    expected = np.cos(x) * x + np.sin(x) + 0.5
    np.testing.assert_allclose(grad(local_instance)(x), expected, rtol=1e-13)
    check_grads(local_instance, x)


def test_second_order_through_a_self_method():
    x = np.array([0.3, 0.7])
    h = hessian(Canvas(1.5).render)(x)
    expected = np.diag(2 * 1.5 + (-np.sin(x) * x + 2 * np.cos(x)) + 2.0)
    np.testing.assert_allclose(h, expected, rtol=1e-12, atol=1e-12)


def test_array_parameter_fill_is_still_refused_before_running():
    def writes(a, x):
        a.fill(x)
        return np.sum(a)

    with pytest.raises(UnsupportedSyntaxError, match="PB103"):
        grad(writes, wrt=1)(np.zeros(3), 2.0)


def test_an_array_received_as_self_is_refused_when_it_runs():
    # the check takes self.sort for Canvas.sort; called with an array as self, the method
    # that runs is ndarray.sort, which would sort in place: refused at that line
    x = np.array([0.3, 0.1])
    with pytest.raises(UnsupportedSyntaxError, match="PB103") as info:
        grad(Canvas.render, wrt=1)(np.array([2.0, 1.0]), x)
    assert "test_receiver_classes.py" in str(info.value)
    assert "self.fill(x)" in str(info.value) or "self.sort(x)" in str(info.value)


def test_what_counts_as_a_python_method():
    assert python_method_of(Canvas, "fill")
    assert not python_method_of(Canvas, "missing")
    assert not python_method_of(np.ndarray, "sort")
    assert not python_method_of(list, "sort")

    class ArrayLike(np.ndarray):
        def fill(self, v):
            return v

    assert not python_method_of(ArrayLike, "fill")


class Accumulator:
    """Methods named like list and dict methods, none of which changes anything."""

    def __init__(self):
        self.k = 2.0

    def append(self, v):
        return v * self.k

    def update(self, v):
        return np.sin(v)

    def pop(self, v):
        return v**2

    def run(self, x):
        return np.sum(self.append(x) + self.update(x) + self.pop(x))


def local_accumulator(x):
    a = Accumulator()
    y = a.update(x)
    z = a.append(x)
    return np.sum(y * z)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_methods_named_like_container_methods(dtype):
    x = np.array([0.3, -1.2], dtype=dtype)
    x64 = x.astype(np.float64)
    rtol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(grad(Accumulator().run)(x), 2 + np.cos(x64) + 2 * x64, rtol=rtol)
    np.testing.assert_allclose(
        grad(local_accumulator)(x), 2 * np.cos(x64) * x64 + 2 * np.sin(x64), rtol=rtol
    )
    h = hessian(local_accumulator)(x64)
    np.testing.assert_allclose(
        h, np.diag(4 * np.cos(x64) - 2 * x64 * np.sin(x64)), rtol=1e-12, atol=1e-14
    )
    check_grads(local_accumulator, x64, order=2)


def test_a_local_list_is_still_a_list():
    def pops(x):
        items = [x, 2.0 * x]
        last = items.pop()
        return last + items[0]

    assert grad(pops)(1.5) == 3.0


def test_the_file_checker_knows_methods_of_the_class_around_it(tmp_path, capsys):
    from pullback.check.cli import main

    path = tmp_path / "canvas.py"
    path.write_text(
        "import numpy as np\n\n\n"
        "class Canvas:\n"
        "    def fill(self, v):\n"
        "        return 2.0 * v\n\n"
        "    def render(self, x):\n"
        "        return np.sum(self.fill(x) * x)\n\n\n"
        "def writes(a, x):\n"
        "    a.fill(x)\n"
        "    return np.sum(a)\n"
    )
    main([str(path)])
    out = capsys.readouterr().out
    assert f"{path}:13:5: PB103 array mutation: in-place method 'a.fill(x)' changes 'a'" in out
    assert ":9:" not in out  # render's self.fill(x) is Canvas.fill


def test_the_module_scan_answers_each_question_once_per_build():
    """module_class_with, module_class_with_field and module_class_with_any share one scan
    helper and one cache on the source view (a new one per build): the answers are those
    of the predicates over the module's classes."""
    from pullback.receiver_classes import (
        field_name_of,
        module_class_with,
        module_class_with_any,
        module_class_with_field,
    )
    from pullback.source import load_source

    def here(x):
        return x

    fs = load_source(here)
    classes = [
        v for v in globals().values() if isinstance(v, type) and v.__module__ == __name__
    ]
    for name in ("fill", "sort", "__add__", "__getitem__"):
        want = any(python_method_of(c, name) for c in classes)
        assert module_class_with(fs, name) is want
    assert module_class_with(fs, "fill") and not module_class_with(fs, "__matmul__")
    assert module_class_with_any(fs, ("__matmul__", "fill")) is True
    assert module_class_with_any(fs, ("__matmul__",)) is False
    assert module_class_with_any(fs, ("__add__", "__getitem__")) is any(
        python_method_of(c, n) for c in classes for n in ("__add__", "__getitem__")
    )
    for name in ("w", "T", "no_such_field_anywhere"):
        want = any(field_name_of(c, name) for c in classes)
        assert module_class_with_field(fs, name) is want
    # the method and the field question of one name are different answers
    assert set(fs._pb_module_classes) >= {("methods", "fill"), ("field", "w")}
    assert load_source(here) is not fs  # (so a class defined later is seen by the next build)
