"""Second and third derivatives by reverse over reverse: grad of grad, Hessians, hvp."""

import math
from typing import NamedTuple

import numpy as np
import pytest
from higher_order_cases import branchy, cubic, looped, power, quadratic_form, rosen, trig

import pullback
from pullback import grad, hessian, hvp


def central(f, x, h=1e-5):
    return (f(x + h) - f(x - h)) / (2 * h)


def test_second_and_third_derivative_of_a_polynomial():
    assert grad(grad(cubic))(2.0) == pytest.approx(12.0)
    assert grad(grad(grad(cubic)))(2.0) == pytest.approx(6.0)


@pytest.mark.parametrize("f", [trig, looped, branchy], ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [0.7, 1.5])
def test_nested_grad_matches_differences_of_the_lower_order(f, x):
    g1, g2 = grad(f), grad(grad(f))
    assert g2(x) == pytest.approx(central(g1, x), rel=1e-6, abs=1e-8)
    assert grad(g2)(x) == pytest.approx(central(g2, x), rel=1e-5, abs=1e-7)


def test_trig_second_derivative_hand_derived():
    x = 0.3
    # f = sin(x) e^(x/2): f'' = e^(x/2) (-sin x + cos x + sin x / 4)
    want = math.exp(0.5 * x) * (-math.sin(x) + math.cos(x) + 0.25 * math.sin(x))
    assert grad(grad(trig))(x) == pytest.approx(want, rel=1e-12)


def rosen_hessian(x):
    n = len(x)
    H = np.zeros((n, n))
    for i in range(n - 1):
        H[i, i] += 1200 * x[i] ** 2 - 400 * x[i + 1] + 2
        H[i, i + 1] += -400 * x[i]
        H[i + 1, i] += -400 * x[i]
        H[i + 1, i + 1] += 200
    return H


def test_hessian_of_loop_code_against_the_analytic_one():
    x = np.array([0.5, 1.2, -0.3, 0.8])
    np.testing.assert_allclose(hessian(rosen)(x), rosen_hessian(x), rtol=1e-12)
    q = hessian(quadratic_form)(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(q, [[2.0, 1.0, 0.0], [1.0, 4.0, 0.0], [0.0, 0.0, 6.0]])


def test_hvp_without_forming_the_hessian():
    x = np.array([0.5, 1.2, -0.3, 0.8])
    v = np.array([1.0, -2.0, 0.5, 0.25])
    np.testing.assert_allclose(hvp(rosen)(x, v), rosen_hessian(x) @ v, rtol=1e-12)


def tanh_energy(w):
    return np.sum(np.tanh(w) ** 2) + np.mean(w.T * w)


def test_hessian_through_rules_with_transformable_pullbacks():
    w = np.array([0.1, -0.4, 0.7])
    t = np.tanh(w)
    # d/dw sum(tanh^2) = 2 t (1 - t^2); its derivative is 2 (1 - t^2)(1 - 3 t^2)
    want = np.diag(2 * (1 - t**2) * (1 - 3 * t**2) + 2.0 / 3.0)
    np.testing.assert_allclose(hessian(tanh_energy)(w), want, rtol=1e-12)


def product_energy(w):
    return np.prod(w) * 2.0


def closure_cube(x):
    return x**3


def cube_energy(w):
    return np.sum(closure_cube(w))


def test_second_order_through_a_rules_pullback_is_refused_clearly():
    # Every shipped rule has a transformable pullback now: a user's rule whose pullback is
    # a closure is what still has no second derivative.
    registry = pullback.default_registry().copy()

    @registry.rrule(closure_cube)
    def _(x):
        def closure_cube_pullback(dy):
            return (3 * x**2 * dy,)

        return closure_cube(x), closure_cube_pullback

    with pytest.raises(pullback.HigherOrderError) as e:
        hessian(cube_energy, registry=registry)(np.array([0.1, 0.2]))
    text = str(e.value)
    # at the user's line of the call of the rule's function, naming the rule
    assert text.startswith(f"{__file__}:83: cannot take a second derivative of 'cube_energy'")
    assert "its gradient uses the rules test_higher_order.closure_cube whose" in text
    assert "registry.set_pullback_function(fn, pullback_fn)" in text
    # np.prod's pullback is transformable: its Hessian runs (w = (0.1, 0.2): [[0, 2], [2, 0]])
    np.testing.assert_allclose(hessian(product_energy)(np.array([0.1, 0.2])), [[0, 2], [2, 0]])


MVN = NORM = None  # scipy.stats distributions, set by the test (SciPy is optional)


def frozen_energy(x, s):
    return np.sum(MVN(np.zeros(2), s * np.eye(2)).logpdf(x))


def test_second_order_through_a_frozen_multivariate_distribution():
    # it used to be the example of a refusal naming a rule made by a shared factory; the
    # frozen multivariate distributions have second derivatives now (stats rules)
    global MVN, NORM
    MVN = pytest.importorskip("scipy.stats").multivariate_normal
    NORM = pytest.importorskip("scipy.stats").norm
    x = np.array([[0.1, 0.4], [0.2, -0.3]])
    # the parameter reaches the value only through the frozen object (its receiver
    # cotangent): a second derivative that dropped it was silently 0
    for f in (frozen_energy, frozen_univariate):
        h = hessian(f, wrt=1)(x, 1.3)
        g = grad(f, wrt=1)
        fd = (g(x, 1.3 + 1e-6) - g(x, 1.3 - 1e-6)) / 2e-6
        assert abs(fd) > 0.5
        np.testing.assert_allclose(h, fd, rtol=1e-6)


def frozen_univariate(x, s):
    return np.sum(NORM(0.0, s).logpdf(x))


def test_second_order_through_user_functions_and_recursion():
    import test_api
    import test_control_flow as cf

    assert grad(grad(power))(1.5, 4) == pytest.approx(12 * 1.5**2)
    c = np.array([1.0, -2.0, 0.5, 3.0])
    # horner evaluates 1 - 2x + 0.5x^2 + 3x^3 recursively: f'' = 1 + 18 x
    assert grad(grad(cf.horner, wrt=1), wrt=1)(c, 0.7, 0) == pytest.approx(1 + 18 * 0.7)
    g1 = grad(cf.is_even_sum)
    want = central(lambda v: g1(v, 5), 0.4)
    assert grad(grad(cf.is_even_sum))(0.4, 5) == pytest.approx(want, rel=1e-6)
    # keyword and default arguments of the called user function
    x = np.array([0.3, -0.5, 0.8])
    H = hessian(test_api.calls_helpers)(x, 0.7)
    g = grad(test_api.calls_helpers)
    numeric = np.array([(g(x + 1e-6 * e, 0.7) - g(x - 1e-6 * e, 0.7)) / 2e-6 for e in np.eye(3)])
    np.testing.assert_allclose(H, numeric, rtol=1e-6, atol=1e-6)


def test_third_and_fourth_order_through_recursion():
    # The vjp function of a recursive call's vjp function: its cotangent parameters are
    # matched to the generated ones by position (a name mismatch once dropped one).
    assert grad(grad(grad(power)))(1.5, 4) == pytest.approx(24 * 1.5)
    assert grad(grad(grad(grad(power))))(1.5, 4) == pytest.approx(24.0)


def test_logistic_loss_hessian_and_hvp_against_the_analytic_ones():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
    from optimize_logistic import loss, make_data

    X, y = make_data(n=50, d=4)
    w = np.array([0.3, -0.2, 0.5, 0.1])
    l2 = 0.05
    z = y * (X @ w)
    weight = 1.0 / (1.0 + np.exp(z)) * 1.0 / (1.0 + np.exp(-z))
    want = X.T @ (weight[:, None] * X) / len(y) + l2 * np.eye(4)
    np.testing.assert_allclose(hessian(loss)(w, X, y, l2), want, rtol=1e-10)
    v = np.array([1.0, 0.0, -2.0, 0.5])
    np.testing.assert_allclose(hvp(loss)(w, X, y, l2, v), want @ v, rtol=1e-10)


def mixed_products(w, X):
    return np.sum(np.tanh(X @ w) ** 2) + np.sum((w @ X.T) ** 3)


def test_second_order_through_matrix_vector_products():
    from pullback.testing import check_grads

    rng = np.random.default_rng(5)
    w, X = rng.normal(size=3), rng.normal(size=(4, 3))
    assert check_grads(mixed_products, w, X, wrt=0, order=2) == "reverse over reverse"
    assert check_grads(mixed_products, w, X, wrt=1, order=2) == "reverse over reverse"


def test_no_perturbation_confusion_when_a_function_calls_grad():
    from higher_order_cases import calls_grad_inside

    # d/dx [x * (d/dy x y)] = d/dx [x * x] = 2 x; confusing the two derivatives gives x.
    assert grad(calls_grad_inside)(3.0) == pytest.approx(6.0)
    # one order more differentiates the inner grad's generated gradient again (a third
    # derivative of inner_product; it was refused): d2/dx2 [x * x] = 2, no confusion either
    from pullback.testing import check_grads

    assert check_grads(calls_grad_inside, 3.0, order=2) == "reverse over reverse"
    assert grad(grad(calls_grad_inside))(3.0) == pytest.approx(2.0)


class _Point(NamedTuple):
    x: float
    y: np.ndarray


def _first_of_a_tuple(a, b):
    t = (a, b)
    return t[0] ** 3 + np.sin(t[0])


def _field_of_a_record(a, b):
    p = _Point(a, b)
    return p.x**3 + np.sin(p.x)


@pytest.mark.parametrize("f", [_first_of_a_tuple, _field_of_a_record])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_gradient_that_is_zero_at_run_time_keeps_its_shape_for_a_second_derivative(f, dtype):
    # b reaches the result only through a tuple item no use reads: its gradient is ZERO at
    # run time, and the fused gradient function (what a second derivative differentiates)
    # once returned it as ZERO, whose shape is () (ShapeMismatchError in the vjp)
    a, b = dtype(0.7), np.ones(3, dtype=dtype)
    g = grad(f, wrt=(0, 1))
    (ga, gb), back = pullback.vjp(g, a, b, wrt=(0, 1))
    assert gb.shape == (3,) and not np.any(gb)
    ha, hb = back((dtype(1.0), np.ones(3, dtype=dtype)))
    h = 1e-3 if dtype is np.float32 else 1e-6
    want = (g(a + h, b)[0] - g(a - h, b)[0]) / (2 * h)  # d/da of 3a^2 + cos(a)
    np.testing.assert_allclose(ha, want, rtol=1e-3 if dtype is np.float32 else 1e-7)
    assert hb.shape == (3,) and not np.any(hb)
