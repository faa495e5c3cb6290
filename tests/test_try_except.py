"""``try``/``except``/``else``/``finally`` inside differentiated functions
(transform/try_blocks.py).

The gradient is the derivative of what Python ran at that call: each function here is
differentiated on inputs that raise and inputs that do not, and checked against central
finite differences of the same function (which takes the same path near those inputs), in
float64 and float32, through the two-sweep form, the fused hot entry (second call), forward
mode, second derivatives and the Jacobian; exceptions that escape are the user's own.
"""

import numpy as np
import pytest

import pullback
from pullback import grad, hessian, jacobian, jvp, value_and_grad
from pullback.testing import check_grads


def central(f, x, *args, h=1e-6):
    """Central finite differences of a scalar function of ``x`` (a float or an array)."""
    if np.ndim(x) == 0:
        return (float(f(x + h, *args)) - float(f(x - h, *args))) / (2 * h)
    x = np.asarray(x, dtype=np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (float(f(x + e, *args)) - float(f(x - e, *args))) / (2 * h)
    return g


def agree(f, x, *args, rtol=1e-6, atol=1e-8):
    """grad (first call, then the hot entry) matches finite differences; returns it."""
    g = grad(f)(x, *args)
    np.testing.assert_allclose(g, central(f, x, *args), rtol=rtol, atol=atol)
    np.testing.assert_allclose(grad(f)(x, *args), g, rtol=1e-14, atol=0)
    return g


# -- the Gaussian-process step: a retry with jitter ----------------------------------------
def gp_logdet(s, K):
    n = K.shape[0]
    try:
        L = np.linalg.cholesky(s * K)
    except np.linalg.LinAlgError:
        L = np.linalg.cholesky(s * K + 10.0 * np.eye(n))
    return 2.0 * np.sum(np.log(np.diagonal(L)))


K_PD = np.array([[2.0, 0.5, 0.1], [0.5, 1.5, 0.2], [0.1, 0.2, 1.0]])
K_INDEFINITE = np.array([[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]])


@pytest.mark.parametrize("K", [K_PD, K_INDEFINITE], ids=["no-exception", "retried"])
def test_cholesky_retry_is_the_derivative_of_the_path_taken(K):
    g = agree(gp_logdet, 1.3, K)
    if K is K_PD:  # logdet(s K) = n log s + logdet K
        assert g == pytest.approx(3 / 1.3, rel=1e-12)
    value, _ = value_and_grad(gp_logdet)(1.3, K)
    assert value == pytest.approx(gp_logdet(1.3, K), rel=1e-14)


# -- handlers, as, else, finally ------------------------------------------------------------
def lookup(x, k):
    d = {"a": x * 2.0, "b": np.sin(x)}
    try:
        v = d[k] * x
        w = v + 1.0
    except KeyError as e:
        w = x**3 + len(str(e))
    except (ValueError, ZeroDivisionError):
        w = -x
    else:
        w = w * 2.0
    finally:
        w = w + x
    return w


@pytest.mark.parametrize("k", ["a", "b", "missing"])
def test_handler_as_else_and_finally(k):
    g = agree(lookup, 1.5, k)
    expected = {"a": 8.0 * 1.5 + 1.0, "b": 2.0 * (np.sin(1.5) + 1.5 * np.cos(1.5)) + 1.0,
                "missing": 3.0 * 1.5**2 + 1.0}[k]  # fmt: skip
    assert g == pytest.approx(expected, rel=1e-12)


def several_handlers(x, kind):
    try:
        if kind == 0:
            y = 1.0 / (x - x)
        elif kind == 1:
            y = [x][3]
        elif kind == 2:
            raise ValueError("two")
        else:
            y = x * x
    except ZeroDivisionError:
        y = np.exp(x)
    except IndexError:
        y = x**3
    except (TypeError, ValueError) as e:
        y = x * len(e.args)
    return y


@pytest.mark.parametrize(
    "kind, expected",
    [(0, np.exp(0.7)), (1, 3 * 0.7**2), (2, 1.0), (3, 2 * 0.7)],
    ids=["zero-division", "index", "tuple-as", "none"],
)
def test_each_of_several_handlers(kind, expected):
    assert agree(several_handlers, 0.7, kind) == pytest.approx(expected, rel=1e-12)


def bare_except(x, k):
    try:
        y = np.sqrt([x, 2.0 * x][k])
    except:  # noqa: E722
        y = x
    return y


def test_a_bare_except_catches_everything():
    assert agree(bare_except, 2.0, 1) == pytest.approx(0.5, rel=1e-12)
    assert agree(bare_except, 2.0, 7) == 1.0


# -- an interrupted body keeps what completed -----------------------------------------------
def interrupted(x, k):
    y = x
    try:
        y = np.sin(x) * 2.0  # completes
        z = [1.0, 3.0][k]  # raises IndexError for k >= 2
        y = y * z + x  # skipped then
    except IndexError:
        y = y + x * x
    return y


@pytest.mark.parametrize("k", [0, 1, 5])
def test_statements_before_the_exception_keep_their_effect(k):
    g = agree(interrupted, 0.4, k)
    expected = (2 * np.cos(0.4) + 2 * 0.4) if k == 5 else (2 * np.cos(0.4) * [1.0, 3.0][k] + 1)
    assert g == pytest.approx(expected, rel=1e-12)


def writes(x, k):
    out = np.zeros(3)
    try:
        out[0] = x * 2.0
        out[k] = x**2
        out[1] = 3.0 * x
    except IndexError:
        out[2] = np.sin(x)
    return np.sum(out * out)


@pytest.mark.parametrize("k", [2, 5])
def test_writes_into_a_local_array_inside_the_body(k):
    agree(writes, 0.9, k)


def vector_body(x, k):
    try:
        y = np.tanh(x) * x
        y = y[np.array([0, k])]
        s = np.sum(y * y)
    except IndexError:
        s = np.sum(np.cos(x))
    return s


@pytest.mark.parametrize("k", [2, 9])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_arrays_in_float64_and_float32(k, dtype):
    x = np.array([0.3, -0.7, 1.1], dtype=dtype)
    g = grad(vector_body)(x, k)
    assert g.dtype == dtype
    check_grads(vector_body, x, k)
    np.testing.assert_allclose(g, central(vector_body, x.astype(np.float64), k),
                               rtol=1e-6 if dtype == np.float64 else 2e-3, atol=1e-6)  # fmt: skip


# -- raise and re-raise -----------------------------------------------------------------------
def reraises(x):
    try:
        y = 1.0 / x
    except ZeroDivisionError:
        raise
    return y * y


def raises_another(x):
    try:
        y = np.log(x) if x > 0 else [x][1]
    except IndexError as e:
        raise ValueError("x must be positive") from e
    return y


def test_the_users_exception_propagates():
    assert agree(reraises, 2.0) == pytest.approx(-2.0 / 8.0, rel=1e-12)
    with pytest.raises(ZeroDivisionError, match="float division by zero"):
        grad(reraises)(0.0)
    assert agree(raises_another, 2.0) == pytest.approx(0.5, rel=1e-12)
    with pytest.raises(ValueError, match="x must be positive") as info:
        grad(raises_another)(-1.0)
    assert isinstance(info.value.__cause__, IndexError)


def unmatched(x):
    try:
        y = [x][2]
    except KeyError:
        y = x
    finally:
        print("cleanup ran")
    return y


def test_an_exception_no_handler_matches_runs_finally_and_propagates(capsys):
    with pytest.raises(IndexError):
        grad(unmatched)(1.0)
    assert "cleanup ran" in capsys.readouterr().out


def returns_inside(x, k):
    w = x
    try:
        if k > 0:
            return np.sin(x) * w
        w = [w][k]
    except IndexError:
        return x**3
    else:
        w = w * 5.0
    finally:
        w = w + 1.0
    return w * x


@pytest.mark.parametrize("k", [1, 0, -3])
def test_return_inside_the_body_and_a_handler(k):
    agree(returns_inside, 0.8, k)


# -- try inside loops, nested tries -----------------------------------------------------------
def trials(x, n):
    s = 0.0
    for i in range(n):
        try:
            t = 1.0 / (i - 2) * x
            if i == 4:
                raise ValueError("skip")
        except ZeroDivisionError:
            t = x * x
        except ValueError:
            t = np.sin(x)
        s = s + t
    return s


def test_a_loop_of_trials():
    g = agree(trials, 1.5, 6)
    assert g == pytest.approx(-0.5 - 1.0 + 3.0 + 1.0 + np.cos(1.5) + 1 / 3, rel=1e-12)


def nested(x, a, b):
    total = 0.0
    for i in range(3):
        try:
            y = x * (i + 1)
            try:
                y = y / (a - i)
            except ZeroDivisionError:
                y = y * y
            y = [y, 2.0 * y][b - i]
        except IndexError:
            y = np.cos(x)
        total = total + y
    return total


@pytest.mark.parametrize("a, b", [(1, 1), (2, 3), (5, 0)])
def test_nested_tries_in_a_loop(a, b):
    agree(nested, 0.6, a, b)


def with_errstate(x):
    try:
        with np.errstate(divide="raise"):
            y = np.log(x)
    except FloatingPointError:
        y = x - 1.0
    return y * x


def test_errstate_inside_the_body():
    assert agree(with_errstate, 2.0) == pytest.approx(np.log(2.0) + 1.0, rel=1e-12)
    assert grad(with_errstate)(0.0) == pytest.approx(-1.0)


# -- forward mode, second order, the Jacobian -------------------------------------------------
def smooth(x, k):
    try:
        y = np.sin(x) * x
        y = y * [1.0, 2.0][k]
    except IndexError:
        y = np.exp(x) * x
    return y


@pytest.mark.parametrize("k", [1, 4])
def test_jvp_hessian_and_jacobian_agree(k):
    x = 0.7
    g = agree(smooth, x, k)
    _, t = jvp(lambda v: smooth(v, k), (x,), (1.0,))
    assert t == pytest.approx(g, rel=1e-12)
    h = hessian(smooth)(x, k)
    assert h == pytest.approx(central(lambda v: grad(smooth)(v, k), x), rel=1e-6)
    xs = np.array([0.2, 0.5, 0.9])
    J = jacobian(smooth)(xs, k)
    np.testing.assert_allclose(np.diag(J), [grad(smooth)(v, k) for v in xs], rtol=1e-12)
    assert check_grads(smooth, x, k, order=2) == "reverse over reverse"


# -- loops inside a try body -------------------------------------------------------------------
def loop_in_body(x, n):
    try:
        s = 0.0
        for i in range(n):
            s = s + x
            s = s * np.sqrt(x - i)  # raises FloatingPointError once i > x (errstate below)
        s = s * x
    except FloatingPointError:
        s = s + 1.0
    return s


def while_in_body(x, n):
    s = x
    k = 0
    try:
        while k < n:
            s = s * x + [1.0, 2.0, 3.0][k]  # IndexError at k = 3
            k = k + 1
    except IndexError:
        s = -s
    return s


def comprehension_in_body(x, k):
    try:
        ys = [np.sin(x * j) * [1.0, 2.0][j - k] for j in range(3)]
        y = sum(ys)
    except IndexError:
        y = np.cos(x)
    return y


@pytest.mark.parametrize("n", [2, 3, 5])
@pytest.mark.parametrize("x", [1.5, 2.5, 3.7])
def test_a_loop_cut_half_way_keeps_what_its_completed_statements_did(n, x):
    with np.errstate(invalid="raise"):
        agree(loop_in_body, x, n)


@pytest.mark.parametrize("n", [2, 5])
def test_a_while_loop_and_a_comprehension_in_a_try_body(n):
    agree(while_in_body, 0.7, n)
    for k in (0, 1, 2):  # k = 0: every item reads [1, 2][j]; then an IndexError at j = 2
        agree(comprehension_in_body, 0.4, k)


# -- jumps out of a try with finally; the static check agrees ---------------------------------


def capped(x, n):
    s = 0.0
    for i in range(n):
        try:
            s = s + x / (i + 1)
            if s > 2.0:
                break
            if i == 1:
                continue
            s = s * 1.1
        finally:
            s = s * 0.9
    return s


def returns_through_finally(x, n):
    s = x
    for i in range(n):
        try:
            s = s * np.sin(x + i)
            if i == 2:
                return s * x  # the value before finally changes s
            s = [s, s * 2.0][i - 5]
        except IndexError:
            s = s + 1.0
            if i == 3:
                break
        finally:
            s = s + x
    return s


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_break_continue_and_return_run_finally_first(n):
    for x in (0.5, 1.5, 3.0):
        agree(capped, x, n)
    for x in (0.3, 0.9):
        agree(returns_through_finally, x, n)
    assert check_grads(returns_through_finally, 0.9, n, order=2) == "reverse over reverse"


@pytest.mark.parametrize("fn", [gp_logdet, lookup, several_handlers, interrupted, writes,
                                trials, nested, returns_inside, unmatched, smooth,
                                loop_in_body, while_in_body, comprehension_in_body,
                                capped, returns_through_finally])  # fmt: skip
def test_the_static_check_accepts_what_grad_differentiates(fn):
    assert pullback.check(fn) == []


# -- pullback's own errors are never a user's exception --------------------------------------
_REGISTRY = pullback.default_registry().copy()


@_REGISTRY.rrule(np.cbrt)
def _refusing_cbrt(x):
    raise pullback.RuleError("this rule refuses at run time")


def catches_everything(x):
    try:
        y = np.cbrt(x) * x
    except Exception:
        y = x * x
    return y


def test_a_handler_never_takes_pullbacks_own_error():
    # Python runs np.cbrt; a handler taking the rule's refusal would differentiate a path
    # Python did not run
    assert catches_everything(8.0) == pytest.approx(16.0)
    with pytest.raises(pullback.RuleError, match="refuses at run time"):
        grad(catches_everything, registry=_REGISTRY)(8.0)


@pytest.mark.parametrize(
    "fn, args",
    [
        (lookup, (1.5, "a")),
        (lookup, (1.5, "missing")),
        (gp_logdet, (1.3, K_INDEFINITE)),
        (trials, (1.5, 6)),
        (vector_body, (np.array([0.3, -0.7, 1.1]), 9)),
        (returns_inside, (0.8, -3)),
    ],
)
def test_second_derivatives_reverse_over_reverse(fn, args):
    assert check_grads(fn, *args, order=2) == "reverse over reverse"


def nested_loop_try(x, a, b):
    s = x
    try:
        for i in range(4):
            try:
                s = s * np.sin(x + i) + [1.0, 2.0][i - a]
            except IndexError:
                s = s + x * i
                if i == b:
                    raise ValueError("outer") from None
            s = s + 0.5 * x
    except ValueError:
        s = s * s
    return s


@pytest.mark.parametrize("a", [-2, 0, 1, 3])
@pytest.mark.parametrize("b", [0, 2, 7])
def test_a_try_in_a_loop_in_a_try_body(a, b):
    agree(nested_loop_try, 0.8, a, b)


@pytest.mark.parametrize("args", [(2.5, 5), (3.7, 2)])
def test_second_derivatives_through_a_loop_cut_half_way(args):
    with np.errstate(invalid="raise"):
        assert check_grads(loop_in_body, *args, order=2) == "reverse over reverse"
    assert check_grads(nested_loop_try, 0.8, 1, 2, order=2) == "reverse over reverse"
