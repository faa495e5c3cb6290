"""Signatures as users write them: ``*args``/``**kwargs`` (used or unused) and keyword-only
parameters in the differentiated function and in the user functions it calls; ``wrt``
naming a position inside ``*args`` or a key of ``**kwargs``. Each gradient is checked
against finite differences in float64 and float32, in reverse and forward mode, and to
second order where the construct carries a gradient."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from fd import check_grad

import pullback
from pullback import grad, hessian, jvp, value_and_grad, vjp
from pullback.testing import check_grads

DTYPES = [np.float64, np.float32]


def _arr(values, dtype):
    return np.asarray(values, dtype=dtype)


def _fd_jvp(f, args, tangents, kwargs=None, eps=1e-6):
    """Central difference of ``f`` along ``tangents`` (in float64)."""
    kwargs = kwargs or {}
    up = [np.asarray(a, dtype=np.float64) for a in args]
    hi = [a + eps * np.asarray(t, dtype=np.float64) for a, t in zip(up, tangents, strict=True)]
    lo = [a - eps * np.asarray(t, dtype=np.float64) for a, t in zip(up, tangents, strict=True)]
    return (np.asarray(f(*hi, **kwargs)) - np.asarray(f(*lo, **kwargs))) / (2 * eps)


def _check_jvp(f, *args, kwargs=None, seed=0):
    rng = np.random.default_rng(seed)
    tangents = tuple(rng.standard_normal(np.shape(a)) for a in args)
    tangents = tuple(
        t.astype(np.asarray(a).dtype) if np.ndim(a) else float(t)
        for t, a in zip(tangents, args, strict=True)
    )
    _, dy = jvp(f, args, tangents, **(kwargs or {}))
    low = any(np.asarray(a).dtype == np.float32 for a in args)
    tol = 2e-3 if low else 1e-6
    np.testing.assert_allclose(dy, _fd_jvp(f, args, tangents, kwargs), rtol=tol, atol=tol)


# -- the differentiated function's own signature ------------------------------------------


def poly(x, *args):
    s = x * x
    for k, a in enumerate(args):
        s = s + a * x ** (k + 1)
    return np.sum(s)


def loss(params, *args, **kwargs):
    x, y = args
    r = x @ params - y
    return kwargs["scale"] * np.sum(r**2) + kwargs.get("l2", 0.0) * np.sum(params**2)


def unused(x, *args, **kwargs):
    return np.sum(np.sin(x) * x)


def keyword_only(x, *, k=2.0, shift):
    return np.sum(k * (x - shift) ** 2)


def star_and_keyword_only(x, *rest, power, **extra):
    total = np.sum(x**power)
    for r in rest:
        total = total + np.sum(r * x)
    return total * extra["w"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_star_args_in_the_definition(dtype):
    x = _arr([0.3, -1.2, 0.7], dtype)
    a, b = _arr([1.5, 0.5, -0.25], dtype), _arr(2.0, dtype)
    for wrt in (0, 1, 2, (0, 2)):
        check_grads(poly, x, a, b, wrt=wrt)
        check_grad(poly, x, a, b, wrt=wrt)
    check_grads(poly, x, wrt=0)  # no extra argument at all
    check_grads(poly, 0.5, 1.5, -2.0, wrt=(0, 1, 2))  # Python scalars
    _check_jvp(poly, x, a, b)


@pytest.mark.parametrize("dtype", DTYPES)
def test_loss_params_args_kwargs(dtype):
    rng = np.random.default_rng(1)
    w = rng.standard_normal(3).astype(dtype)
    X = rng.standard_normal((4, 3)).astype(dtype)
    y = rng.standard_normal(4).astype(dtype)
    kwargs = {"scale": dtype(0.5), "l2": dtype(0.1)}
    for wrt in (0, 1, 2, (0, 1, 2)):
        check_grad(loss, w, X, y, wrt=wrt, kwargs=kwargs)
    check_grads(functools.partial(loss, scale=0.5, l2=0.1), w, X, y, wrt=(0, 1, 2))
    _check_jvp(loss, w, X, y, kwargs=kwargs)
    # the gradient keeps its argument's dtype
    assert grad(loss)(w, X, y, **kwargs).dtype == dtype


def test_wrt_names_star_parameters_and_keyword_entries():
    x, a, b = 0.5, 1.5, -2.0
    want_a = x  # d poly / d a = x ** 1
    assert grad(poly, wrt=1)(x, a, b) == pytest.approx(want_a)
    da, db = grad(poly, wrt="args")(x, a, b)
    assert (da, db) == pytest.approx((x, x**2))
    w, X, y = np.ones(2), np.eye(2), np.zeros(2)
    g = grad(loss, wrt="scale")(w, X, y, scale=2.0, l2=0.0)
    assert g == pytest.approx(np.sum((X @ w - y) ** 2))
    g = grad(loss, wrt="kwargs")(w, X, y, scale=2.0, l2=0.5)
    assert g["l2"] == pytest.approx(np.sum(w**2))
    value, g = value_and_grad(poly, wrt=2)(x, a, b)
    assert value == pytest.approx(poly(x, a, b)) and g == pytest.approx(x**2)
    y0, back = vjp(poly, x, a, b)  # every positional argument, *args included
    assert back(1.0) == pytest.approx((2 * x + a + 2 * b * x, x, x**2))


def test_jacobian_with_respect_to_a_star_argument():
    def f(x, *rest):
        return np.sin(x) * rest[0]

    x, r = np.array([0.1, 0.2]), np.array([2.0, 3.0])
    np.testing.assert_allclose(pullback.jacobian(f)(x, r), np.diag(np.cos(x) * r))
    np.testing.assert_allclose(pullback.jacobian(f, wrt=1)(x, r), np.diag(np.sin(x)))


def test_wrt_past_the_arguments_given_is_an_argument_error():
    with pytest.raises(pullback.ArgumentError, match=r"'args\[3\]'.*2 given through 'args'"):
        grad(poly, wrt=4)(0.5, 1.0, 2.0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_unused_star_parameters_take_anything(dtype):
    x = _arr([0.3, -1.2], dtype)
    g = grad(unused)(x, "label", 3, flag=None, scale=2.0)
    np.testing.assert_allclose(g, np.cos(x) * x + np.sin(x), rtol=1e-5)
    assert g.dtype == dtype
    check_grads(unused, x, wrt=0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_keyword_only_parameters(dtype):
    x = _arr([0.3, -1.2, 2.0], dtype)
    shift = _arr([0.1, 0.2, 0.3], dtype)
    check_grad(keyword_only, x, kwargs={"shift": shift, "k": dtype(1.5)})
    check_grads(functools.partial(keyword_only, shift=shift), x)
    g = grad(keyword_only, wrt="shift")(x, shift=shift)
    np.testing.assert_allclose(g, -4.0 * (x - shift), rtol=1e-5)
    g = grad(keyword_only, wrt=("x", "k"))(x, shift=shift, k=3.0)
    assert g[1] == pytest.approx(float(np.sum((x - shift) ** 2)), rel=1e-5)
    _check_jvp(keyword_only, x, kwargs={"shift": shift})


@pytest.mark.parametrize("dtype", DTYPES)
def test_star_args_with_keyword_only_and_kwargs(dtype):
    x = _arr([0.3, 1.2], dtype)
    r1, r2 = _arr([1.0, -1.0], dtype), _arr([0.5, 2.0], dtype)
    kwargs = {"power": 3, "w": dtype(0.5)}
    for wrt in (0, 1, 2):
        check_grad(star_and_keyword_only, x, r1, r2, wrt=wrt, kwargs=kwargs)
    assert grad(star_and_keyword_only, wrt="w")(x, r1, power=2, w=1.0) == pytest.approx(
        float(np.sum(x**2) + np.sum(r1 * x))
    )


def test_second_order_through_star_parameters():
    x = np.array([0.3, -1.2, 0.7])
    a = np.array([1.5, 0.5, -0.25])
    assert check_grads(poly, x, a, 2.0, wrt=0, order=2) == "reverse over reverse"
    h = hessian(poly)(x, a, 2.0)
    np.testing.assert_allclose(h, np.diag(2.0 + 2 * 2.0 * np.ones(3)), rtol=1e-10)
    w, X, y = np.ones(3), np.arange(12.0).reshape(4, 3) / 10, np.zeros(4)
    assert check_grads(scaled_loss, w, X, y, wrt=0, order=2) == "reverse over reverse"


def scaled_loss(w, X, y):
    return loss(w, X, y, scale=0.5, l2=0.25)


def star_model(a, *args):
    return a * args[0] ** 3 + np.sum(np.sin(args[1]) ** 2) * args[0]


@pytest.mark.parametrize("dtype", DTYPES)
def test_second_order_with_respect_to_one_star_element(dtype):
    # wrt past the named parameters names an element of *args: its Hessian, its mixed
    # derivatives and hvp, by hand and against finite differences of the gradient.
    x = _arr([0.3, -1.2, 0.7], dtype)
    a, t = dtype(1.5), dtype(0.7)
    tol = 2e-3 if dtype == np.float32 else 1e-9
    assert hessian(star_model, wrt=1)(a, t, x) == pytest.approx(6 * a * t, rel=tol)
    h = hessian(star_model, wrt=2)(a, t, x)
    np.testing.assert_allclose(h, np.diag(2 * t * np.cos(2 * x)), rtol=tol, atol=tol)
    assert h.dtype == dtype
    mixed = grad(grad(star_model, wrt=1), wrt=0)(a, t, x)
    assert mixed == pytest.approx(3 * t**2, rel=tol)
    cross = grad(grad(star_model, wrt=1), wrt=2)(a, t, x)
    np.testing.assert_allclose(cross, np.sin(2 * x), rtol=tol, atol=tol)
    u = _arr([1.0, -0.5, 2.0], dtype)
    np.testing.assert_allclose(pullback.hvp(star_model, wrt=2)(a, t, x, u), h @ u, rtol=tol)
    if dtype == np.float64:
        assert check_grads(star_model, a, t, x, wrt=1, order=2) == "reverse over reverse"
        assert check_grads(star_model, a, t, x, wrt=2, order=2) == "reverse over reverse"
        assert check_grads(poly, 0.5, 1.5, 2.0, wrt=1, order=2) == "reverse over reverse"


def keyword_model(x, **kw):
    return np.sum(np.sin(x * kw["s"])) * kw["t"] ** 2


def test_second_order_with_respect_to_a_keyword_entry_says_how():
    x = np.array([1.0, 2.0])
    with pytest.raises(pullback.HigherOrderError, match=r"\*, s, \*\*kwargs"):
        hessian(keyword_model, wrt="s")(x, s=0.3, t=1.2)


# -- user functions with star parameters, called inside ----------------------------------


def total(*xs):
    return sum(xs)


def running_total(*xs):
    s = 0.0
    for x in xs:
        s = s + x
    return s


def combine_twice(a, b, c):
    return running_total(a, b * b, c) * a


def scaled(x, **opts):
    return x * opts["s"] + opts["t"]


def combine(a, b, c):
    return total(a, b * b, np.sin(c)) * a


def combine_keywords(a, b):
    return scaled(a, s=b, t=1.0) + scaled(b, s=3.0, t=a * a)


def combine_arrays(w, v):
    return np.sum(total(w, v, w * v) ** 2)


@pytest.mark.parametrize("dtype", DTYPES)
def test_helper_with_star_args(dtype):
    check_grads(combine, dtype(0.5), dtype(1.5), dtype(-0.7), wrt=(0, 1, 2))
    check_grad(combine, 0.5, 1.5, -0.7, wrt=(0, 1, 2))
    w, v = _arr([0.3, -1.2], dtype), _arr([1.1, 0.4], dtype)
    check_grads(combine_arrays, w, v, wrt=(0, 1))
    _check_jvp(combine_arrays, w, v)
    _check_jvp(combine, 0.5, 1.5, -0.7)


@pytest.mark.parametrize("dtype", DTYPES)
def test_helper_with_star_kwargs(dtype):
    check_grads(combine_keywords, dtype(0.5), dtype(1.5), wrt=(0, 1))
    check_grad(combine_keywords, 0.5, 1.5, wrt=(0, 1))
    _check_jvp(combine_keywords, 0.5, 1.5)


def test_helper_with_star_args_second_order():
    for wrt in (0, 1, 2):
        assert check_grads(combine_twice, 0.5, 1.5, -0.7, wrt=wrt, order=2) == (
            "reverse over reverse"
        )
    assert hessian(combine_twice)(0.5, 1.5, -0.7) == pytest.approx(2.0)
    assert hessian(combine_twice, wrt=1)(0.5, 1.5, -0.7) == pytest.approx(2 * 0.5)


# -- star-calls and starred displays --------------------------------------------------------


def layer(w, b, x):
    return np.tanh(x @ w + b)


def call_with_params(params, x):
    return np.sum(layer(*params, x))


def call_with_rest(w, rest):
    return np.sum(layer(w, *rest))


def call_with_options(w, opts):
    return np.sum(layer(w, **opts))


def call_with_both(w, b, x):
    args = (w,)
    opts = {"x": x}
    return np.sum(layer(*args, b, **opts))


def reshaped(x, shape):
    return np.sum(x.reshape(*shape) ** 2 * np.arange(x.size).reshape(*shape))


def stacked(a, b):
    return np.sum(np.stack([*a, *b]) ** 2 * np.arange(1.0, 1.0 + len(a) + len(b))[:, None])


def displays(xs, y):
    items = [*xs, y]
    t = (*xs, 1.0)
    return items[0] * items[-1] * t[1] + np.sum(np.asarray([*items]) ** 2)


def zipped(pairs):
    total = 0.0
    for a, b in zip(*pairs, strict=True):
        total = total + a * np.sin(b)
    return total


def zip_list(pairs):
    rows = list(zip(*pairs))  # noqa: B905 - as users write it
    return rows[0][0] * rows[1][1]


@pytest.mark.parametrize("dtype", DTYPES)
def test_star_call_spreads_a_tuple_of_parameters(dtype):
    rng = np.random.default_rng(2)
    w = rng.standard_normal(3).astype(dtype)
    b = dtype(0.3)
    X = rng.standard_normal((4, 3)).astype(dtype)
    check_grad(call_with_params, (w, b), X, wrt=(0, 1))
    check_grads(call_with_params, (w, b), X, wrt=(0, 1))
    check_grad(call_with_rest, w, (b, X), wrt=(0, 1))
    check_grads(call_with_rest, w, (b, X), wrt=(0, 1))
    check_grad(call_with_options, w, {"b": b, "x": X}, wrt=(0, 1))
    check_grads(call_with_options, w, {"b": b, "x": X}, wrt=(0, 1))
    check_grad(call_with_both, w, b, X, wrt=(0, 1, 2))
    check_grads(call_with_both, w, b, X, wrt=(0, 1, 2))
    g = grad(call_with_params)((w, b), X)
    assert type(g) is tuple and g[0].dtype == dtype


def test_star_call_forward_mode():
    rng = np.random.default_rng(3)
    w, X = rng.standard_normal(3), rng.standard_normal((4, 3))
    _check_jvp(lambda w, b, X: call_with_params((w, b), X), w, 0.3, X)
    _check_jvp(call_with_both, w, 0.3, X)
    _check_jvp(lambda w, b, X: call_with_options(w, {"b": b, "x": X}), w, 0.3, X)


@pytest.mark.parametrize("dtype", DTYPES)
def test_star_call_of_array_methods_and_displays(dtype):
    x = np.linspace(-1.0, 1.0, 6).astype(dtype)
    check_grads(reshaped, x, (2, 3), wrt=0)
    check_grad(reshaped, x, (3, 2))
    a = [np.array([0.5, -1.0], dtype=dtype), np.array([1.5, 2.0], dtype=dtype)]
    b = (np.array([0.25, 0.75], dtype=dtype),)
    check_grad(stacked, a, b, wrt=(0, 1))
    check_grads(stacked, a, b, wrt=(0, 1))
    check_grad(displays, [dtype(0.5), dtype(-1.5)], dtype(2.0), wrt=(0, 1))
    check_grads(displays, [dtype(0.5), dtype(-1.5)], dtype(2.0), wrt=(0, 1))
    _check_jvp(lambda x: reshaped(x, (2, 3)), x)


def merged_options(x, defaults):
    opts = {**defaults, "x": x, "b": 2.0 * x}
    return np.sum(opts["a"] * opts["x"] + opts["b"] * defaults["b"])


def layer_with_defaults(w, defaults, X):
    return np.sum(layer(w, **{**defaults, "x": X}))


@pytest.mark.parametrize("dtype", DTYPES)
def test_dict_display_with_unpacking(dtype):
    x = _arr([0.5, -1.0], dtype)
    defaults = {"a": dtype(2.0), "b": dtype(3.0)}
    check_grad(merged_options, x, defaults, wrt=(0, 1))
    check_grads(merged_options, x, defaults, wrt=(0, 1))
    w = _arr([0.3, -0.2, 0.1], dtype)
    X = np.linspace(-1.0, 1.0, 6).reshape(2, 3).astype(dtype)
    check_grad(layer_with_defaults, w, {"b": dtype(0.5)}, X, wrt=(0, 1, 2))
    g = grad(merged_options, wrt=1)(x, defaults)
    assert set(g) == {"a", "b"}  # "b" reaches the defaults through its direct read only
    _check_jvp(lambda x, a: merged_options(x, {"a": a, "b": 3.0}), x, _arr(2.0, dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_zip_of_starred_pairs(dtype):
    pairs = ([dtype(1.0), dtype(2.0)], [dtype(0.3), dtype(-0.4)])
    check_grad(zipped, pairs)
    check_grads(zipped, pairs)
    check_grad(zip_list, pairs)
    _check_jvp(lambda a, b: zipped(([a, 2.0], [b, -0.4])), 1.0, 0.3)


def test_star_call_of_a_library_method_with_integer_arguments():
    rng = np.random.default_rng(0)
    pullback.non_differentiable(type(rng).standard_normal)
    try:
        shape = (3,)

        def noisy(x):
            noise = rng.standard_normal(*shape)
            return np.sum(x * x + 0.0 * noise)

        np.testing.assert_allclose(grad(noisy)(np.ones(3)), 2.0 * np.ones(3))
    finally:
        pullback.default_registry().remove(type(rng).standard_normal)


def apply(f, *args, **kwargs):
    return f(*args, **kwargs)


def keyword_only_callee(x, *, scale):
    return scale * x * x


def through_apply(x, s):
    return apply(layer, x, 0.5, np.eye(3)).sum() + apply(keyword_only_callee, x, scale=2.0).sum()


def keyword_gradient_passed_on(x, s):
    return np.sum(apply(keyword_only_callee, x, scale=s))


def test_a_generic_apply_wrapper():
    x = np.array([0.3, -0.2, 0.8])
    check_grad(through_apply, x, 1.0)
    check_grads(through_apply, x, 1.0)
    _check_jvp(lambda x: through_apply(x, 1.0), x)


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_keyword_only_gradient_found_at_run_time(dtype):
    # apply(f, *args, **kwargs) passes scale=s on to a keyword-only parameter: the user
    # function's adjoint gives it its cotangent (it used to be refused)
    x = _arr([0.5, -1.5], dtype)
    check_grad(keyword_gradient_passed_on, x, dtype(2.0), wrt=(0, 1))
    assert grad(keyword_gradient_passed_on, wrt=1)(x, dtype(2.0)) == pytest.approx(
        float(np.sum(x * x))
    )


def test_a_keyword_into_a_rule_found_at_run_time_goes_to_its_position():
    # np.clip(x, a_min=lo) reached through apply: a_min names a positional parameter
    x = np.array([0.2, 1.0, 4.0])
    assert grad(clip_by_keyword, wrt=1)(x, 0.5) == pytest.approx(1.0)
    check_grad(clip_by_keyword, x, 0.5, wrt=(0, 1))


def clip_by_keyword(x, lo):
    return np.sum(apply(np.clip, x, a_min=lo, a_max=3.0))
