"""``with`` blocks of general context managers (transform/with_blocks.py, with_contexts.py).

The manager carries no gradient: it is entered once, as in the primal, around the forward
body, and the body is differentiated (checked against central differences, float64 and
float32, scalars and arrays, first and second order). What the holder adds is checked
directly: enter/exit counts (a timer runs once per call, also under ``hessian``), ``as``
values, nested items, blocks in loops, the reverse sweep silenced as the forward body was,
a suppressed exception raising a pullback error at the user's ``with`` line, and the one
remaining refusal (``as`` binding a value computed from the input) with its golden message.
"""

import contextlib
import threading
import warnings

import numpy as np
import pytest
from fd import check_grad, check_hessian_against_differences, check_jvp

import pullback
from pullback import SuppressedExceptionError, UnsupportedSyntaxError, grad, hessian

COUNT = {"enter": 0, "exit": 0}


@contextlib.contextmanager
def counted(tag):
    COUNT["enter"] += 1
    try:
        yield tag
    finally:
        COUNT["exit"] += 1


@pytest.fixture(autouse=True)
def fresh_count():
    COUNT.update(enter=0, exit=0)


class Scale:
    """A hand-written manager whose entered value is a number."""

    def __init__(self, k):
        self.k = k
        self.entered = 0

    def __enter__(self):
        self.entered += 1
        return self.k

    def __exit__(self, *exc):
        return False


LOCK = threading.Lock()


def timed(x):
    with counted("step"):
        y = np.sin(x) * 2.0
    return np.sum(y * x)


def two_items_as(x):
    with counted("a") as tag, Scale(3.0) as k:
        y = np.tanh(x) * k
    return np.sum(y * y) + (tag == "a")


def in_a_loop(x):
    s = 0.0
    for i in range(3):
        with counted(i), LOCK:
            s = s + np.sum(x ** (i + 1))
    return s


def early_return(x):
    with counted("r"):
        if np.sum(x) > 0:
            return np.sum(np.exp(x))
        y = x * 2.0
    return np.sum(y)


def suppress_unused(x):
    with contextlib.suppress(ZeroDivisionError):
        y = x * 3.0
    return np.sum(y * x)


def quiet_log(x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = np.where(x > 0, np.log(np.abs(x) + 1.0), x)
    return np.sum(y * x)


CASES = [timed, two_items_as, in_a_loop, early_return, suppress_unused, quiet_log]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gradients_match_differences(f, dtype):
    check_grad(f, np.array([0.3, -0.7, 1.2], dtype=dtype))
    check_grad(f, dtype(0.4))


@pytest.mark.parametrize(
    "f", [timed, two_items_as, early_return, quiet_log], ids=lambda f: f.__name__
)
def test_second_order_matches_differences(f):
    check_hessian_against_differences(f, np.array([0.3, 0.7, 1.2]))


def test_the_manager_runs_once_per_call():
    x = np.array([0.5, 1.0])
    grad(timed)(x)
    assert COUNT == {"enter": 1, "exit": 1}
    grad(in_a_loop)(x)  # once per iteration, as the primal enters it
    assert COUNT == {"enter": 4, "exit": 4}
    COUNT.update(enter=0, exit=0)
    hessian(two_items_as)(x)
    assert COUNT == {"enter": 1, "exit": 1}
    COUNT.update(enter=0, exit=0)
    _, back = pullback.vjp(timed, x)
    back(1.0)
    back(2.0)
    assert COUNT == {"enter": 1, "exit": 1}  # the reverse does not enter it again


def test_a_user_object_and_an_open_file(tmp_path):
    path = tmp_path / "scale.txt"
    path.write_text("2.5\n")
    manager = Scale(4.0)

    def uses_both(x):
        with open(path) as fh, manager as k:
            c = float(fh.read())
            y = np.cos(x) * c * k
        return np.sum(y)

    x = np.array([0.2, 1.1])
    np.testing.assert_allclose(grad(uses_both)(x), -np.sin(x) * 10.0, rtol=1e-12)
    assert manager.entered == 1


def test_the_reverse_is_as_quiet_as_the_forward_body():
    def quiet(x):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = np.log(x)
        return np.sum(y)

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning of the reverse sweep would raise
        g = grad(quiet)(np.array([0.0, 2.0]))
    np.testing.assert_array_equal(g, [np.inf, 0.5])


def test_a_suppressed_exception_is_a_pullback_error_at_the_with_line():
    def swallowed(x):
        with contextlib.suppress(ZeroDivisionError):
            y = x * 3.0
            y = y / 0
        return np.sum(x)

    line = swallowed.__code__.co_firstlineno + 1
    with pytest.raises(SuppressedExceptionError) as info:
        grad(swallowed)(1.5)
    text = str(info.value)
    assert text.startswith(f"{__file__}:{line}:9: the context manager of this `with` suppressed ")
    assert "        with contextlib.suppress(ZeroDivisionError):\n" in text
    assert isinstance(info.value.__cause__, ZeroDivisionError)


def bound_from_input(x):
    with contextlib.nullcontext(x * 2.0) as y:
        z = y * x
    return np.sum(z)


def test_as_bound_from_the_input_is_refused_with_the_place_and_a_fix():
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(bound_from_input)(np.array([1.0, 2.0]))
    line = bound_from_input.__code__.co_firstlineno + 1
    assert str(info.value).splitlines()[2:6] == [
        f"  {__file__}:{line}:5: PB202 `with ... as name` binds a value computed from the "
        "differentiated input (the gradient does not flow through a context manager)",
        "        with contextlib.nullcontext(x * 2.0) as y:",
        "        ^^^^",
        "    A context manager runs once around the forward body; the value `as` binds "
        "carries no gradient.",
    ]
    assert str(info.value).splitlines()[6] == (
        "    Fix: compute the value before the `with` (`y = g(x)`) and use it inside; keep "
        "only what carries no gradient in the `with` line (see docs/limitations.md#PB202)."
    )

    def fixed(x):
        y = x * 2.0
        with contextlib.nullcontext():
            z = y * x
        return np.sum(z)

    check_grad(fixed, np.array([1.0, 2.0]))


def test_forward_mode_enters_the_manager_once():
    x = np.array([0.3, -0.7, 1.2])
    check_jvp(two_items_as, (x,), (np.array([1.0, 0.5, -2.0]),))
    assert COUNT == {"enter": 3, "exit": 3}  # the jvp, and the two primal runs of the check
