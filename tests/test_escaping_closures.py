"""Closures made inside the differentiated function that escape (returned, stored in a
list or dict, passed on) while what they capture carries no gradient: made as the primal
makes them (transform/run_time_closures.py), their calls differentiated at run time.
Those that capture a differentiated value, or a variable bound again after they are made,
keep their refusal (PB404/PB405)."""

from __future__ import annotations

import numpy as np
import pytest
from fd import check_grad, check_jvp

import pullback
import pullback.testing
from pullback.check import check_function

SCALE = 1.5


def factory_of_defs(w):
    def make_term(k):
        def t(v):
            return v[k] ** (k + 1)

        return t

    terms = [make_term(k) for k in range(3)]
    return sum(t(w) for t in terms)


def factory_of_lambdas(w):
    def make(k):
        return lambda v: v[k] ** 2

    return make(0)(w) + make(1)(w)


def lambdas_with_defaults_and_dict(w):
    fs = [lambda v, k=k: v[k] * 2 for k in range(3)]
    acts = {"relu": lambda z: np.maximum(z, 0), "tanh": np.tanh}
    return sum(f(w) for f in fs) + np.sum(acts["relu"](w))


def factory_with_constants(w):
    def make(k, name, shape, flag):
        def f(v):
            y = SCALE * v[k] * np.ones(shape)
            if flag and name == "sq":
                y = y * v[k]
            return np.sum(y)

        return f

    g = make(1, "sq", (2, 3), True)
    h = make(2, "lin", (4,), False)
    return g(w) + np.tanh(h(w))


def captures_shapes_and_lengths(w):
    shape = w.shape
    n = len(w)
    rank = np.ndim(w)

    def spread(v):
        return np.ones(shape) * v[n - 1] * rank

    fs = []
    for i in range(w.shape[0]):
        fs.append(lambda v, i=i: v[i] ** 2 / n)
    fs.append(spread)
    return sum(np.sum(f(w)) for f in fs)


def dict_of_lambdas_by_config(w, act="tanh"):
    p = 2.0
    acts = {"relu": lambda z: np.maximum(z, 0) ** p, "tanh": lambda z: np.tanh(z) * p}
    return np.sum(acts[act](w))


def closures_in_a_loop(w):
    fs = []
    for i in range(3):
        fs.append(lambda v, i=i: np.sin(v[i]) * (i + 1))
    total = 0.0
    for f in fs:
        total = total + f(w)
    return total


def closure_through_map_and_key(w):
    c = 3.0

    def scaled(v):
        return c * v

    def apply(f, v):
        return f(v)

    parts = list(map(scaled, [w[0], w[1]]))
    best = max([w[0], w[1], w[2]], key=scaled)
    return sum(parts) + best + np.sum(apply(scaled, w))


def escaping_through_map_and_key(w):
    def make(p):
        def f(t):
            return t**p

        return f

    fs = [make(2), make(3)]
    parts = list(map(fs[0], [w[0], w[1]]))
    best = max([w[0], w[1], w[2]], key=fs[1])
    first = sorted([w[2], w[0]], key=fs[0])[0]
    return sum(parts) + best * sum(map(fs[1], w)) + first


def helper_with_closures(w, k):
    fs = [lambda v, j=j: v[j] * k for j in range(2)]

    def t(v):
        return v[k] ** 3

    fs.append(t)
    return sum(f(w) for f in fs)


def closures_in_a_helper_called_with_gradients(w):
    return helper_with_closures(w, 1) + helper_with_closures(w * w, 2)


def def_chosen_by_a_branch(w, flag=True):
    if flag:

        def t(v):
            return np.sin(v[0]) * 2

    else:

        def t(v):
            return np.cos(v[1])

    keep = {"t": t}
    return keep["t"](w) + 1.0


def returned_def_called_later(w):
    k = 2

    def pick(v):
        return v[k] * v[0]

    fns = (pick,)
    return fns[0](w) * 2.0


CASES = [
    factory_of_defs,
    factory_of_lambdas,
    lambdas_with_defaults_and_dict,
    factory_with_constants,
    captures_shapes_and_lengths,
    dict_of_lambdas_by_config,
    closures_in_a_loop,
    closure_through_map_and_key,
    escaping_through_map_and_key,
    closures_in_a_helper_called_with_gradients,
    def_chosen_by_a_branch,
    returned_def_called_later,
]
W = np.array([0.7, -1.3, 2.1])


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gradient_matches_finite_differences(f, dtype):
    assert check_function(f) == []  # the static check agrees with grad
    check_grad(f, W.astype(dtype))


def test_config_string_chooses_the_lambda():
    for act in ("relu", "tanh"):
        check_grad(dict_of_lambdas_by_config, W, kwargs={"act": act})
    check_grad(def_chosen_by_a_branch, W, kwargs={"flag": False})


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_forward_mode(f):
    check_jvp(f, (W,), (np.array([0.3, -1.0, 0.5]),))


def _fd_hessian(f, x, h=1e-4):
    n = x.size
    out = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            ei, ej = np.eye(n)[i] * h, np.eye(n)[j] * h
            out[i, j] = (f(x + ei + ej) - f(x + ei - ej) - f(x - ei + ej) + f(x - ei - ej)) / (
                4 * h * h
            )
    return out


@pytest.mark.parametrize(
    "f",
    [factory_of_defs, factory_of_lambdas, factory_with_constants, closures_in_a_loop],
    ids=lambda f: f.__name__,
)
def test_hessian_and_grad_of_grad(f):
    want = _fd_hessian(f, W)
    np.testing.assert_allclose(pullback.hessian(f)(W), want, rtol=1e-5, atol=1e-5)
    g0 = pullback.grad(lambda x: pullback.grad(f)(x)[0])(W)
    np.testing.assert_allclose(g0, want[0], rtol=1e-5, atol=1e-5)


def test_batched_jacobian():
    def vec(w):
        def make(k):
            return lambda v: v * v[k]

        return make(0)(w) + make(2)(w)

    eps = 1e-6
    want = np.stack([(vec(W + eps * e) - vec(W - eps * e)) / (2 * eps) for e in np.eye(3)], axis=1)
    np.testing.assert_allclose(pullback.jacobian(vec)(W), want, rtol=1e-6, atol=1e-8)


def make_layer(w, b=0.1):
    c = np.exp(0.5 * w)

    def layer(h, gain=2.0):
        return gain * np.tanh(c * h + b)

    return layer


def module_factory_closure_stored(x, w):
    layers = [make_layer(w), make_layer(2.0 * w, b=0.3)]
    return np.sum(layers[0](x) * layers[1](x))


def test_a_module_factory_closure_stored_differentiated_where_its_captures_are_not():
    x, w = np.array([0.3, -0.8]), np.array([0.5, 1.2])
    check_grad(module_factory_closure_stored, x, w)
    check_grad(module_factory_closure_stored, x.astype(np.float32), w.astype(np.float32))
    # differentiated in w too, each closure is a record of its cells (closure_cells.py)
    check_grad(module_factory_closure_stored, x, w, wrt=(0, 1))
    check_grad(module_factory_closure_stored, x.astype(np.float32), w.astype(np.float32), wrt=1)


def closure_of_a_setting(w, p):
    def t(v):
        return np.sum(v**p * np.copysign(1.0, p))

    fs = [t]
    return fs[0](w)


def test_closures_made_again_with_other_captures_give_their_own_gradients():
    """A closure made again with equal immutable captures shares the code generated for
    the first (cache.TWIN); other captures (another value, type or sign, an array) never
    reuse it."""
    g = pullback.grad(closure_of_a_setting)
    vg = pullback.value_and_grad(closure_of_a_setting)
    w = np.array([0.7, 1.3, 2.1])
    for p in (2, 3, 2.0, 2, -0.0, 0.0, np.float32(3.0), np.array([1.0, 2.0, 3.0]), 3):
        eps = 1e-6
        want = np.array(
            [
                (closure_of_a_setting(w + eps * e, p) - closure_of_a_setting(w - eps * e, p))
                / (2 * eps)
                for e in np.eye(3)
            ]
        )
        np.testing.assert_allclose(g(w, p), want, rtol=1e-6, atol=1e-8)
        value, _ = vg(w, p)
        assert value == closure_of_a_setting(w, p)  # -0.0: -3.0, 0.0: 3.0


# -- refusals ------------------------------------------------------------------------------
def captures_a_differentiated_value(w):
    s = 2.0 * w[0]

    def t(v):
        return v * s

    fs = [t]
    first = fs[0]  # read as a value: not only called (stored_closures.py)
    return np.sum(first(w))


def factory_given_a_differentiated_value(w):
    def make(s):
        return lambda v: v * s

    return np.sum(make(w[0])(w))


def factory_with_a_differentiated_default(w):
    def make(k, s=w[0]):
        return lambda v: v[k] * s

    fs = [make(1), make(2)]
    return fs[0](w) + fs[1](w)


def lambda_stored_reading_a_gradient(w):
    fs = [lambda v: v * w[0]]
    first = fs[0]  # read as a value: not only called (stored_closures.py)
    return np.sum(first(w))


def rebound_after_the_def(w):
    k = 0

    def t(v):
        return v[k]

    fs = [t]
    k = 1
    first = fs[0]  # read as a value: not only called (stored_closures.py)
    return first(w)


def loop_variable_captured(w):
    fs = []
    for i in range(3):

        def t(v):
            return v[i]

        fs.append(t)
    return sum(f(w) for f in list(fs))  # read as a value (stored_closures.py)


def written_by_a_sibling(w):
    k = 0

    def t(v):
        return v[k] * 3.0

    def bump():
        nonlocal k
        k = k + 1

    fs = [t]
    bump()
    first = fs[0]  # read as a value: not only called (stored_closures.py)
    return first(w)


def comprehension_variable_captured(w):
    fs = [lambda v: v[k] for k in range(3)]
    return sum(f(w) for f in fs)


@pytest.mark.parametrize(
    "f",
    [
        captures_a_differentiated_value,
        factory_given_a_differentiated_value,
        factory_with_a_differentiated_default,
        lambda_stored_reading_a_gradient,
    ],
    ids=lambda v: v.__name__,
)
def test_closures_capturing_gradients_are_records_of_their_cells(f):
    """Captures bound once before the closure is made: each escaping closure is a record
    of its cells (closure_cells.py), first and second order."""
    check_grad(f, W)
    check_grad(f, W.astype(np.float32))
    pullback.testing.check_grads(f, W, order=2)


@pytest.mark.parametrize(
    ("f", "code", "why", "fix"),
    [
        (
            rebound_after_the_def,
            "PB405",
            "it reads 'k', which is bound again after 't' is made",
            "pass 'k' as a default",
        ),
        (
            loop_variable_captured,
            "PB405",
            "it reads 'i', which is bound again after 't' is made",
            "pass 'i' as a default",
        ),
        (
            written_by_a_sibling,
            "PB405",
            "it reads 'k', which a nested function writes (`nonlocal k`",
            "pass 'k' as a default",
        ),
        (
            comprehension_variable_captured,
            "PB404",
            "it reads 'k', which the comprehension rebinds at each step",
            "pass 'k' as a default",
        ),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_refusals(f, code, why, fix):
    found = check_function(f)
    assert [d.code for d in found] == [code]
    assert why in found[0].message
    assert fix in found[0].fix
    with pytest.raises(pullback.UnsupportedSyntaxError) as err:
        pullback.grad(f)(W)
    assert why in str(err.value)


def test_python_reads_the_cell_late_where_refused():
    """What Python computes for a rebound capture: the refusal protects exactly this."""
    assert rebound_after_the_def(W) == W[1]
    assert written_by_a_sibling(W) == 3.0 * W[1]
    assert comprehension_variable_captured(W) == 3 * W[2]


# -- a lambda as a branch of a conditional expression or of and/or ----------------------
class _Layer:
    def __init__(self, W, act=None):
        self.W = W
        self.act = act or (lambda z: z)

    def __call__(self, x):
        return self.act(x @ self.W)


def _default_activation(W):
    return np.sum(_Layer(W)(np.ones(3)) ** 2)


def _given_activation(W):
    return np.sum(_Layer(W, np.tanh)(np.ones(3)) ** 2)


def _conditional_lambda(w, scale=None):
    h = scale if scale is not None else (lambda v: 2.0 * v)
    return np.sum(h(w) ** 2)


def _chosen_lambda(w, use_sin=True):
    act = (lambda v: np.sin(v)) if use_sin else (lambda v: v)
    return np.sum(act(w) * w)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_lambdas_in_conditional_expressions(dtype):
    W = np.linspace(-0.5, 0.7, 6).reshape(3, 2).astype(dtype)
    w = np.array([0.3, -0.5, 0.9], dtype=dtype)
    pullback.testing.check_grads(_default_activation, W)
    pullback.testing.check_grads(_given_activation, W)
    pullback.testing.check_grads(_conditional_lambda, w)
    pullback.testing.check_grads(_chosen_lambda, w)
    np.testing.assert_allclose(pullback.grad(_conditional_lambda)(w), 8.0 * w, rtol=1e-5)
    want = np.sin(w) + w * np.cos(w)
    np.testing.assert_allclose(pullback.grad(_chosen_lambda)(w), want, rtol=1e-5)
    np.testing.assert_allclose(
        pullback.grad(lambda v: _chosen_lambda(v, use_sin=False))(w), 2 * w, rtol=1e-5
    )
