"""``with np.errstate(...):`` inside differentiated functions (transform/with_blocks.py).

The block changes no value, only how floating-point errors are reported, so gradients are
those of the same code without the ``with`` (checked against central finite differences
and hand-derived derivatives); what the block changes is checked directly: no
RuntimeWarning escapes where the user silenced it, ``all="raise"`` raises
FloatingPointError where the primal raises, and the error state after a call (also one that
raised) is the one before.
"""

import contextlib
import warnings

import numpy as np
import numpy as numeric
import pytest
from numpy import errstate

import pullback
from pullback import UnsupportedSyntaxError, grad, hessian, jvp, value_and_grad


def central(f, x, h):
    """Central finite differences of a scalar function, one coordinate at a time."""
    x = np.asarray(x, dtype=np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (float(f(x + e)) - float(f(x - e))) / (2 * h)
    return g


@pytest.fixture(autouse=True)
def warnings_are_errors():
    """Any RuntimeWarning the code lets out fails the test; the error state is restored."""
    before = np.geterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield
    assert np.geterr() == before


# -- the common form ---------------------------------------------------------------------
def masked_log(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(x > 0, np.log(x), 0.0)
    return np.sum(r * x)


def test_masked_log_matches_hand_derived_and_finite_differences():
    x = np.array([0.5, 1.0, 2.0, 3.0])
    g = grad(masked_log)(x)
    np.testing.assert_allclose(g, np.log(x) + 1.0, rtol=1e-12)
    np.testing.assert_allclose(g, central(masked_log, x, 1e-6), rtol=1e-7)
    np.testing.assert_allclose(grad(masked_log)(x), g)  # the hot entry, second call


def test_masked_log_at_zero_lets_no_warning_out():
    # log(0) forward and its derivative 1/0 in the reverse sweep, both silenced as asked
    x = np.array([0.0, 1.0, 2.0])
    value, g = value_and_grad(masked_log)(x)
    assert value == pytest.approx(2.0 * np.log(2.0))
    np.testing.assert_allclose(g[1:], np.log(x[1:]) + 1.0, rtol=1e-12)
    grad(masked_log)(x)  # again, through the fused sweeps


def test_without_the_block_the_same_code_warns():
    def loud(x):
        r = np.where(x > 0, np.log(x), 0.0)
        return np.sum(r * x)

    with pytest.raises(RuntimeWarning):
        grad(loud)(np.array([0.0, 1.0]))


def test_float32_keeps_its_dtype_and_matches_finite_differences():
    x = np.array([0.5, 1.0, 2.0], dtype=np.float32)
    g = grad(masked_log)(x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, np.log(x.astype(np.float64)) + 1.0, rtol=1e-5)
    np.testing.assert_allclose(g, central(masked_log, x, 1e-3), rtol=1e-3)


def test_scalar_argument():
    def f(x):
        with np.errstate(over="ignore"):
            y = np.exp(x) * x
        return y

    assert grad(f)(1.5) == pytest.approx(np.exp(1.5) * 2.5, rel=1e-12)


# -- all="raise" -------------------------------------------------------------------------
def raising_log(x):
    with np.errstate(all="raise"):
        y = np.log(x)
    return np.sum(y)


def test_raise_raises_where_the_primal_raises_and_restores_the_state():
    before = np.geterr()
    with pytest.raises(FloatingPointError):
        raising_log(np.array([0.0, 1.0]))
    with pytest.raises(FloatingPointError):
        grad(raising_log)(np.array([0.0, 1.0]))
    with pytest.raises(FloatingPointError):
        grad(raising_log)(np.array([0.0, 1.0]))  # the fused sweeps
    assert np.geterr() == before
    np.testing.assert_allclose(grad(raising_log)(np.array([0.5, 2.0])), [2.0, 0.5])


def test_the_reverse_sweep_runs_under_the_same_modes():
    # 1/x of log at 0 is masked by where: the primal is quiet (divide="ignore" forward) and
    # the reverse sweep's 0/0 raises under invalid="raise", as the user chose for the block
    def f(x):
        with np.errstate(divide="ignore", invalid="raise"):
            r = np.where(x > 0, np.log(x), 0.0)
        return np.sum(r)

    x = np.array([0.0, 1.0])
    assert f(x) == 0.0
    for _ in range(2):  # the two sweeps, then the fused ones
        with pytest.raises(pullback.AdjointRuntimeError) as info:
            grad(f)(x)
        assert isinstance(info.value.__cause__, FloatingPointError)
        assert "r = np.where(x > 0, np.log(x), 0.0)" in str(info.value)
    np.testing.assert_allclose(grad(f)(np.array([0.5, 4.0])), [2.0, 0.25])


def test_the_error_state_outside_the_block_is_untouched():
    def f(x):
        with np.errstate(divide="ignore"):
            y = np.log(x)
        return np.sum(y + 1.0 / x)  # outside the block: warns as usual

    with pytest.raises(RuntimeWarning):
        grad(f)(np.array([0.0, 1.0]))
    assert np.geterr()["divide"] == "warn"


# -- control flow inside and around the block --------------------------------------------
def loop_inside(x, n):
    s = 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in range(n):
            s = s + np.sum(np.where(x > 0, np.log(x), 0.0)) * i
    return s


def block_in_loop(x, n):
    s = 0.0
    for i in range(n):
        with np.errstate(all="ignore"):
            if i % 2 == 0:
                s = s + np.sum(np.sin(x) * x)
            else:
                s = s + np.sum(x * x) / (i + 1)
    return s


def early_return(x):
    with np.errstate(invalid="ignore"):
        y = np.sqrt(x)
        if np.sum(x) > 10.0:
            return np.sum(y)
        z = y * x
    return np.sum(z)


def break_and_continue(x, n):
    s = 0.0
    for i in range(n):
        with np.errstate(divide="ignore"):
            if i == 1:
                continue
            s = s + np.sum(np.log(x + i))
            if s > 5.0:
                break
    return s


def nested(x):
    with np.errstate(divide="ignore"):
        a = np.log(x)
        with np.errstate(invalid="ignore"):
            b = np.sqrt(a)
        c = b * a
    return np.sum(c)


def writes_in_place(x):
    out = np.zeros(3)
    with np.errstate(all="ignore"):
        for i in range(3):
            out[i] = x[i] * x[(i + 1) % 3]
        out += np.log(x)
    return np.sum(out * out)


def _quiet_helper(x):
    with errstate(divide="ignore"):
        y = np.log(x) * x
    return y


def calls_helper(x):
    return np.sum(_quiet_helper(x) ** 2)


def other_import_names(x):
    with numeric.errstate(under="ignore"), errstate(over="ignore"):
        y = np.exp(-x * x)
    return np.sum(y)


def reads_in_loop(x):
    s = 0.0
    for i in range(x.shape[0]):
        with np.errstate(divide="ignore"):
            s = s + x[i] * np.log(x[i]) + x[i - 1] ** 2
    return s


def appends(x):
    parts = []
    with np.errstate(all="ignore"):
        for i in range(3):
            parts.append(np.log(x) * i)
    return np.sum(np.stack(parts) ** 2)


def while_loop(x):
    s = 0.0
    k = 0
    while k < 3:
        with np.errstate(invalid="ignore"):
            s = s + np.sum(np.sqrt(x) * k)
            k = k + 1
            if s > 100.0:
                break
    return s


def only_a_block(x):
    with np.errstate(divide="ignore"):
        return np.sum(np.log(x) ** 2)


def raises_inside(x):
    with np.errstate(divide="ignore"):
        if np.sum(x) < 0:
            raise ValueError("negative")
        y = np.log(x)
    return np.sum(y * y)


def local_import(x):
    import numpy as np2

    with np2.errstate(divide="ignore", invalid="ignore"):
        y = np2.where(x > 0, np2.log(x), 0.0)
    return np.sum(y * y)


def printing(x):
    with np.printoptions(precision=3, suppress=True), np.errstate(divide="ignore"):
        y = np.log(x)
        text = str(y)
    return np.sum(y) + 0.0 * len(text)


def return_in_loop(x, n):
    s = 0.0
    for i in range(n):
        with np.errstate(divide="ignore"):
            s = s + np.sum(np.log(x) * i)
            if s > 3.0:
                return s * 2.0
        s = s + 0.5 * np.sum(x)
    return s


def in_a_branch(x):
    if np.sum(x) > 10.0:  # the first sample takes the else branch
        with np.errstate(all="ignore"):
            y = np.log(x) ** 2
    else:
        y = x * 3.0
    return np.sum(y)


def continue_in_while(x):
    k = 0
    s = 0.0
    while k < 4:
        k = k + 1
        with np.errstate(all="ignore"):
            if k == 2:
                continue
            s = s + np.sum(np.exp(x * k / 10.0))
    return s


CASES = [
    (return_in_loop, (5,)),
    (in_a_branch, ()),
    (continue_in_while, ()),
    (reads_in_loop, ()),
    (appends, ()),
    (while_loop, ()),
    (only_a_block, ()),
    (raises_inside, ()),
    (local_import, ()),
    (printing, ()),
    (loop_inside, (4,)),
    (block_in_loop, (5,)),
    (early_return, ()),
    (break_and_continue, (4,)),
    (break_and_continue, (2,)),
    (nested, ()),
    (writes_in_place, ()),
    (calls_helper, ()),
    (other_import_names, ()),
]


@pytest.mark.parametrize(("f", "rest"), CASES, ids=lambda c: getattr(c, "__name__", ""))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_control_flow_matches_finite_differences(f, rest, dtype):
    for x0 in ([1.5, 2.0, 3.0], [4.0, 5.0, 6.0]):  # early_return takes both paths
        x = np.array(x0, dtype=dtype)
        g = grad(f)(x, *rest)
        assert g.dtype == dtype
        h, rtol = (1e-6, 1e-6) if dtype == np.float64 else (1e-3, 2e-3)
        expected = central(lambda v: f(v, *rest), x, h)
        np.testing.assert_allclose(g, expected, rtol=rtol, atol=rtol)
        np.testing.assert_allclose(grad(f)(x, *rest), g)


@pytest.mark.parametrize(("f", "rest"), CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_second_order_matches_finite_differences_of_the_gradient(f, rest):
    def scalar(v):
        return f(v, *rest)

    for x0 in ([1.5, 2.0, 3.0], [4.0, 5.0, 6.0]):
        x = np.array(x0)
        H = hessian(scalar)(x)
        expected = np.array([central(lambda v: grad(scalar)(v)[i], x, 1e-5) for i in range(3)])
        np.testing.assert_allclose(H, expected, rtol=1e-5, atol=1e-5)
        v = np.array([0.3, -0.2, 0.7])
        value, t = jvp(scalar, (x,), (v,))
        assert t == pytest.approx(float(grad(scalar)(x) @ v), rel=1e-10, abs=1e-12)


def test_hand_derived_through_nested_blocks():
    x = np.array([2.0, 3.0])
    # c = sqrt(log x) * log x = log(x) ** 1.5, dc/dx = 1.5 sqrt(log x) / x
    np.testing.assert_allclose(grad(nested)(x), 1.5 * np.sqrt(np.log(x)) / x, rtol=1e-12)


def test_early_return_inside_the_block_silences_both_paths():
    x = np.array([-1.0, 4.0, 9.0])  # sqrt(-1): nan, silenced
    assert np.isnan(early_return(x))
    g = grad(early_return)(x)
    np.testing.assert_allclose(g[1:], 0.5 / np.sqrt(x[1:]), rtol=1e-12)


def test_an_exception_raised_in_the_block_restores_the_error_state():
    before = np.geterr()
    with pytest.raises(ValueError, match="negative"):
        grad(raises_inside)(np.array([-1.0, -2.0]))
    assert np.geterr() == before


def test_printoptions_apply_inside_the_block_only():
    def shown(x):
        with np.printoptions(precision=2):
            text = np.array2string(np.array([1.0 / 3.0]))
        return np.sum(x * x) + 0.0 * len(text), text

    g = grad(lambda x: shown(x)[0])(np.array([1.0, 2.0]))
    np.testing.assert_allclose(g, [2.0, 4.0])
    assert shown(np.ones(1))[1] == "[0.33]"
    assert np.get_printoptions()["precision"] == 8


def test_scalar_loop_jvp_and_grad_of_grad():
    def step(x, n):
        s = x
        for _ in range(n):
            with np.errstate(over="ignore"):
                s = np.sin(s) * s + 1.0
        return s

    def f(s):
        return step(s, 4)

    h = 1e-6
    fd = (f(0.5 + h) - f(0.5 - h)) / (2 * h)
    assert grad(f)(0.5) == pytest.approx(fd, rel=1e-7)
    y, t = jvp(f, (0.5,), (1.0,))
    assert (y, t) == (pytest.approx(f(0.5)), pytest.approx(fd, rel=1e-7))
    fd2 = (grad(f)(0.5 + 1e-5) - grad(f)(0.5 - 1e-5)) / 2e-5
    assert grad(grad(f))(0.5) == pytest.approx(fd2, rel=1e-6)


def test_hessian_through_reads_in_a_loop():
    x = np.array([0.7, 1.3, 2.1])
    # s = sum x_i log x_i + sum x_{i-1}^2 (i - 1 wraps): diagonal 1 / x + 2
    np.testing.assert_allclose(hessian(reads_in_loop)(x), np.diag(1.0 / x + 2.0), rtol=1e-10)


# -- forward mode and second order -------------------------------------------------------
def test_jvp_matches_finite_differences():
    x = np.array([0.5, 1.0, 2.0])
    v = np.array([0.3, -0.2, 0.7])
    for f in (masked_log, nested, calls_helper):
        x1 = x + 1.0 if f is nested else x
        y, t = jvp(f, (x1,), (v,))
        assert y == pytest.approx(f(x1))
        expected = (f(x1 + 1e-6 * v) - f(x1 - 1e-6 * v)) / 2e-6
        assert t == pytest.approx(expected, rel=1e-6)


def test_jvp_lets_no_warning_out():
    y, t = jvp(masked_log, (np.array([0.0, 1.0]),), (np.array([0.0, 1.0]),))
    assert t == pytest.approx(1.0)


def test_hessian_and_grad_of_grad():
    x = np.array([0.5, 1.0, 2.0])
    H = hessian(masked_log)(x)
    np.testing.assert_allclose(H, np.diag(1.0 / x), rtol=1e-10)

    def first(v):
        return np.sum(grad(masked_log)(v) * v)

    # d/dx sum((log x + 1) x) = log x + 2
    np.testing.assert_allclose(grad(first)(x), np.log(x) + 2.0, rtol=1e-10)


def test_hessian_lets_no_warning_out():
    H = hessian(masked_log)(np.array([0.0, 1.0, 2.0]))
    np.testing.assert_allclose(np.diag(H)[1:], [1.0, 0.5])


# -- formerly refused: general context managers, run once around the body ---------------
# (tests/test_with_managers.py covers them; here the errstate/printoptions forms that are not
# constants run as general managers too)
def errstate_as(x):
    with np.errstate(all="ignore") as state:
        y = np.log(x)
    return np.sum(y) + (state is None)


def errstate_call(x):
    with np.errstate(all="call", call=print):
        y = np.log(x)
    return np.sum(y)


MODE = "ignore"


def errstate_variable_mode(x):
    with np.errstate(divide=MODE):
        y = np.log(x)
    return np.sum(y)


def printoptions_formatter(x):
    with np.printoptions(formatter={"float": str}):
        y = np.log(x)
    return np.sum(y)


def suppress_nothing_raised(x):
    with contextlib.suppress(FloatingPointError):
        x = np.log(x)
    return np.sum(x)


@pytest.mark.parametrize(
    "f",
    [errstate_as, errstate_call, errstate_variable_mode, printoptions_formatter,
     suppress_nothing_raised],
    ids=lambda f: f.__name__,
)  # fmt: skip
def test_other_forms_run_as_general_managers(f):
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(grad(f)(x), 1.0 / x, rtol=1e-12)
    assert pullback.check(f) == []


def refused_as_from_input(x):
    with np.errstate(divide="ignore") as _state, contextlib.nullcontext(x) as y:
        z = np.log(y)
    return np.sum(z)


def test_refusal_names_the_line_and_the_fix():
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(refused_as_from_input)(np.array([1.0, 2.0]))
    text = str(info.value)
    line = refused_as_from_input.__code__.co_firstlineno + 1
    message = (
        "`with ... as name` binds a value computed from the differentiated input (the "
        "gradient does not flow through a context manager)"
    )
    assert f"test_errstate_blocks.py:{line}:5: PB202 {message}\n" in text
    assert (
        "    Fix: compute the value before the `with` (`y = g(x)`) and use it inside; keep only "
        "what carries no gradient in the `with` line (see docs/limitations.md#PB202)."
    ) in text
    found = pullback.check(refused_as_from_input)
    assert [(d.code, d.line, d.message) for d in found] == [("PB202", line, message)]


def test_check_accepts_what_grad_accepts():
    for f in (masked_log, raising_log, *(c[0] for c in CASES)):
        assert pullback.check(f) == []


FILE = """
import numpy as np
import numpy
from numpy import errstate as es


def good(x):
    with np.errstate(divide="ignore"):
        y = np.log(x)
    with numpy.errstate(all="raise"), es(over="ignore"):
        y = y * 2
    return np.sum(y)


def bad(x):
    with open(x) as fh:
        y = np.log(x)
    with np.errstate(divide=x) as st:
        y = y + 1
    return np.sum(y)
"""


def test_the_file_checker_without_running_the_file(tmp_path, capsys):
    from pullback.check.cli import main

    path = tmp_path / "m.py"
    path.write_text(FILE)
    assert main([f"{path}:good"]) == 0
    assert main([str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    why = (
        "PB202 `with ... as name` binds a value computed from the differentiated input (the "
        "gradient does not flow through a context manager)"
    )
    assert out == [f"{path}:16:5: {why}", f"{path}:18:5: {why}"]
