"""The public API: wrt forms, value_and_grad, has_aux, vjp, containers, user functions."""

import math

import numpy as np
import pytest
from fd import check_grad, numerical_grad

import pullback
from pullback import grad, value_and_grad, vjp

RNG = np.random.default_rng(2)
SCALE = 3.0


def loss(w, x, y):
    p = np.tanh(x @ w)
    return np.mean((p - y) ** 2)


def test_decorator_forms_and_wrt():
    w, x, y = RNG.normal(size=3), RNG.normal(size=(5, 3)), RNG.normal(size=5)
    g0 = grad(loss)(w, x, y)
    np.testing.assert_allclose(g0, numerical_grad(loss, (w, x, y), 0), rtol=1e-6)

    @grad(wrt=(0, 2))
    def decorated(w, x, y):
        return loss(w, x, y)

    gw, gy = decorated(w, x, y)
    np.testing.assert_allclose(gw, g0, rtol=1e-12)
    np.testing.assert_allclose(gy, numerical_grad(loss, (w, x, y), 2), rtol=1e-6)
    gx = grad(loss, wrt="x")(w, x, y)
    np.testing.assert_allclose(gx, numerical_grad(loss, (w, x, y), 1), rtol=1e-6)
    by_name = grad(loss, wrt=("y", "w"))(w, x, y)
    np.testing.assert_allclose(by_name[0], gy)
    np.testing.assert_allclose(by_name[1], g0)
    np.testing.assert_allclose(grad(loss, wrt=-1)(w, x, y), gy)


def test_value_and_grad_and_has_aux():
    w, x, y = RNG.normal(size=3), RNG.normal(size=(5, 3)), RNG.normal(size=5)
    value, g = value_and_grad(loss)(w, x, y)
    assert value == pytest.approx(loss(w, x, y))
    np.testing.assert_allclose(g, grad(loss)(w, x, y))

    def with_aux(w, x, y):
        p = np.tanh(x @ w)
        return np.mean((p - y) ** 2), {"pred": p}

    (value, aux), g2 = value_and_grad(with_aux, has_aux=True)(w, x, y)
    assert value == pytest.approx(loss(w, x, y))
    np.testing.assert_allclose(aux["pred"], np.tanh(x @ w))
    np.testing.assert_allclose(g2, g)
    g3, aux3 = grad(with_aux, has_aux=True)(w, x, y)
    np.testing.assert_allclose(g3, g)
    assert set(aux3) == {"pred"}


def outputs(a, b):
    return a * b, np.sin(a) + b


def test_vjp_any_output_shape_and_tuple_outputs():
    a, b = RNG.normal(size=(2, 3)), RNG.normal(size=(2, 3))
    (y1, y2), back = vjp(outputs, a, b)
    np.testing.assert_allclose(y1, a * b)
    d1, d2 = RNG.normal(size=(2, 3)), RNG.normal(size=(2, 3))
    da, db = back((d1, d2))
    np.testing.assert_allclose(da, d1 * b + d2 * np.cos(a))
    np.testing.assert_allclose(db, d1 * a + d2)
    y, back_a = vjp(lambda a: a @ a.T, a, wrt=0)
    d = RNG.normal(size=(2, 2))
    np.testing.assert_allclose(back_a(d), (d + d.T) @ a)
    # the pullback can be called again (a Jacobian is built from many calls)
    np.testing.assert_allclose(back_a(d), (d + d.T) @ a)


def params_loss(params, x):
    h = np.tanh(x @ params["w1"] + params["b1"])
    out = h @ params["w2"]
    return np.sum(out**2) + params["layers"][0] * 0.0


def test_dict_of_params_gradient_has_the_same_structure():
    params = {
        "w1": RNG.normal(size=(3, 4)),
        "b1": RNG.normal(size=4),
        "w2": RNG.normal(size=(4, 2)),
        "layers": [2.0, 3],
    }
    x = RNG.normal(size=(5, 3))
    g = grad(params_loss)(params, x)
    assert set(g) == set(params)
    assert g["layers"][1] is None  # an int inside a container has no gradient
    want = numerical_grad(params_loss, (params, x), 0)
    for key in ("w1", "b1", "w2"):
        np.testing.assert_allclose(g[key], want[key], rtol=1e-6, atol=1e-8)
        assert g[key].shape == params[key].shape


def tuple_loss(pair, scale):
    (a, b), c = pair
    return np.sum(a * b) * scale + c * c


def test_nested_tuples_and_lists():
    pair = ((RNG.normal(size=3), RNG.normal(size=3)), 1.5)
    check_grad(tuple_loss, pair, 2.0, wrt=(0, 1))
    pair32 = ((np.ones(3, np.float32), np.arange(3, dtype=np.float32)), np.float32(1.5))
    g = grad(tuple_loss)(pair32, 2.0)
    assert g[0][0].dtype == np.float32 and g[0][1].dtype == np.float32
    as_list = [[RNG.normal(size=2), RNG.normal(size=2)], 0.5]
    g = check_grad(tuple_loss, as_list, 1.0)
    assert isinstance(g, list) and isinstance(g[0], list)


def helper(x, scale=2.0, *, shift=0.0):
    return np.sum((x * scale + shift) ** 2)


def calls_helpers(x, s):
    a = helper(x)
    b = helper(x, s)
    c = helper(x, scale=s, shift=s)
    d = helper(shift=1.0, x=x * s)
    return a + b + c + d


def test_user_functions_with_positional_keyword_and_default_arguments():
    check_grad(calls_helpers, RNG.normal(size=3), 0.7, wrt=(0, 1))


def make_closure(k):
    offset = np.array([1.0, -1.0, 0.5])

    def inner(x):
        return np.sum((x - offset) ** 2) * k * SCALE

    return inner


def test_closures_and_globals_read_as_constants():
    f = make_closure(2.0)
    x = RNG.normal(size=3)
    np.testing.assert_allclose(grad(f)(x), 2 * (x - np.array([1.0, -1.0, 0.5])) * 2.0 * 3.0)


def test_lambda():
    g = grad(lambda x: math.sin(x) * x)(0.3)
    assert g == pytest.approx(math.cos(0.3) * 0.3 + math.sin(0.3))


def test_methods_on_objects_as_user_functions():
    class Model:
        def __init__(self, w):
            self.w = w

        def predict(self, x):
            return np.sum(self.w * x)

    def use_model(x, model):
        return model.predict(x) * 2.0

    m = Model(np.array([1.0, 2.0]))
    np.testing.assert_allclose(grad(use_model)(np.array([0.5, 0.1]), m), [2.0, 4.0])


def test_gradient_is_cached_and_rules_registered_later_take_effect():
    reg = pullback.default_registry().copy()

    def my_square(x):
        return x * x

    def uses(x):
        return my_square(x) + 1.0

    g = grad(uses, registry=reg)
    assert g(3.0) == pytest.approx(6.0)
    assert g.adjoint(3.0) is g.adjoint(3.0)

    @reg.rrule(my_square)
    def _(x):
        def my_square_pullback(dy):
            return (dy * 100.0,)  # deliberately not the true derivative

        return x * x, my_square_pullback

    assert g(3.0) == pytest.approx(100.0)


def test_custom_rule_replaces_a_loop(monkeypatch):
    reg = pullback.default_registry().copy()

    def mse(y, yhat):
        s = 0.0
        for i in range(len(y)):
            s = s + (y[i] - yhat[i]) ** 2
        return s / len(y)

    @reg.rrule(mse)
    def _(y, yhat):
        d = y - yhat

        def mse_pullback(ds):
            g = 2.0 * ds * d / len(y)
            return g, -g

        return np.mean(d * d), mse_pullback

    def loss(y, yhat):
        return mse(y, yhat) * 2.0

    y, yhat = RNG.normal(size=4), RNG.normal(size=4)
    np.testing.assert_allclose(grad(loss, registry=reg)(y, yhat), 4.0 * (y - yhat) / 4)
    assert "rrule_" in grad(loss, registry=reg).source


def test_use_registry_swaps_the_default():
    reg = pullback.default_registry().copy()
    with pullback.use_registry(reg):
        assert pullback.default_registry() is reg
    assert pullback.default_registry() is not reg


def concat_tuple(x):
    acc = ()
    for v in x:
        acc = acc + (v * v,)
    return np.sum(np.stack(acc))


def test_tuple_accumulation_in_a_loop():
    check_grad(concat_tuple, RNG.normal(size=4))


WEIGHTS = np.array([0.5, -1.0, 2.0])


def global_array_method(x):
    return WEIGHTS.dot(x) + x.dot(WEIGHTS)


def test_method_of_a_global_array():
    np.testing.assert_allclose(grad(global_array_method)(RNG.normal(size=3)), 2 * WEIGHTS)


def add(a, b):
    return a * b  # a user function that shares a name with a helper of generated code


def uses_a_global_named_add(x):
    return np.sum(add(x, x)) + 1.0


def test_user_globals_do_not_clash_with_generated_helpers():
    np.testing.assert_allclose(grad(uses_a_global_named_add)(np.array([1.0, 3.0]))[1], 6.0)


def test_gradients_are_writable_arrays_of_their_own():
    x = np.ones((3, 2))
    g = grad(lambda v: np.sum(v))(x)  # np.sum's pullback broadcasts one value
    g[0, 0] = 5.0  # writable, and no other element changes
    assert g[1, 1] == 1.0 and g.flags.writeable


def array_methods(x):
    y = x.copy()
    z = y.reshape(2, 2).item(1) + x.item(3)
    w = x.tolist()
    return np.sum(y * y) + z * w[0]


def test_array_methods_found_at_run_time():
    check_grad(array_methods, np.array([0.5, -1.0, 2.0, 1.5]))
