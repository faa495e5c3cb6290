"""Generator functions consumed completely inside a differentiated function run as the
lists they yield (pullback/transform/generators.py): gradients against finite
differences in both precisions, forward mode, second order; escaping generators refused."""

from __future__ import annotations

import numpy as np
import pytest
from two_argument_checks import W, X, check_both_arguments, check_forward_against_reverse

from pullback import grad
from pullback.errors import UnsupportedSyntaxError
from pullback.testing import check_grads


def powers(t, n):
    """Yields t, t**2, ..., t**n."""
    p = t
    for _ in range(n):
        yield p
        p = p * t


def layers(x, w, depth=2):
    h = x
    for k in range(depth):
        h = np.tanh(w * h + 0.1 * k)
        if k == 0:
            continue
        yield h
    yield from [h * h, np.sin(h)]


def scaled(t):
    yield t * SCALE
    yield t / SCALE


SCALE = 1.5


def for_loop(x, w):
    s = 0.0
    for v in powers(x * w, 3):
        s = s + np.sum(v)
    return s


def listed(x, w):
    hs = list(layers(x, w, depth=3))
    return np.sum(hs[0] * hs[-1]) + np.sum(np.stack(hs))


def summed(x, w):
    return np.sum(sum(powers(x, 4)) * w)


def zipped(x, w):
    total = 0.0
    for a, b in zip(powers(x, 3), layers(x, w), strict=True):
        total = total + np.sum(a * b)
    return total


def enumerated(x, w):
    total = 0.0
    for i, v in enumerate(scaled(x * w)):
        total = total + (i + 1.0) * np.sum(v * v)
    return total


def in_a_comprehension(x, w):
    return np.sum(np.stack([v * w for v in powers(x, 2)]))


def nested_generator(x, w):
    def steps(t, n=3):
        u = t
        for i in range(n):
            u = u * w + 0.1 * i
            if i == 1:
                continue
            yield u
        yield from [u * u]

    s = 0.0
    for v in steps(x):
        s = s + np.sum(np.sin(v))
    return s + np.sum(sum(steps(x, 2)))


def make_counter(c):
    def ramp(t):
        for i in range(3):
            yield t * (c + i)

    return ramp


ramp = make_counter(0.5)


def closure_generator(x, w):
    return np.sum(w * sum(ramp(x)))


CASES = [
    for_loop,
    listed,
    summed,
    zipped,
    enumerated,
    in_a_comprehension,
    nested_generator,
    closure_generator,
]


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_against_finite_differences(fn, dtype):
    check_both_arguments(fn, dtype)


def scalar_consumer(x, w):
    s = 0.0
    for v in powers(x, 3):
        s = s + v * w
    return s


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_scalars(dtype):
    check_grads(scalar_consumer, dtype(0.7), dtype(-1.2), wrt=(0, 1))
    gx, gw = grad(scalar_consumer, wrt=(0, 1))(0.7, -1.2)
    np.testing.assert_allclose(gx, -1.2 * (1 + 2 * 0.7 + 3 * 0.49))
    np.testing.assert_allclose(gw, 0.7 + 0.49 + 0.343)


def test_broadcasting():
    check_grads(for_loop, X, 0.6, wrt=(0, 1))
    check_grads(listed, X.reshape(3, 1), W, wrt=(0, 1))


@pytest.mark.parametrize(
    "fn",
    [
        for_loop,
        summed,
        nested_generator,
        # (a generator read whole by list(): first order by default, second under --long)
        pytest.param(listed, marks=pytest.mark.long),
    ],
    ids=lambda f: f.__name__,
)
def test_second_order(fn):
    check_grads(fn, X, W, wrt=(0, 1), order=2)


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_forward_mode(fn):
    check_forward_against_reverse(fn)


def test_a_redefined_generator_is_seen():
    global SCALE
    before = grad(enumerated)(X, W)
    SCALE = 3.0
    try:
        after = grad(enumerated)(X, W)
        check_grads(enumerated, X, W, wrt=(0, 1))
    finally:
        SCALE = 1.5
    assert not np.allclose(before, after)


# -- what stays refused, at the user's place ---------------------------------------------------
def escapes(x):
    g = powers(x, 2)
    return np.sum(next(g))


def stops_early(x):
    s = 0.0
    for v in powers(x, 5):
        s = s + np.sum(v)
        if s > 1.0:
            break
    return s


def sends(t):
    got = yield t
    yield got


def uses_sent_value(x):
    return np.sum(sum(sends(x)))


def nested_escape(x):
    def gen(t):
        yield t

    return np.sum(next(gen(x)))


@pytest.mark.parametrize(
    ("fn", "offset", "words"),
    [
        (escapes, 1, "escapes"),
        (stops_early, 2, "`break`"),
        (uses_sent_value, 1, "yield"),
    ],
    ids=["escapes", "break", "send"],
)
def test_refused_at_the_call(fn, offset, words):
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(fn)(X)
    d = info.value.diagnostics[0]
    assert d.code == "PB402"
    assert words in d.message
    assert d.line == fn.__code__.co_firstlineno + offset


def test_a_nested_generator_that_escapes_is_refused():
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(nested_escape)(X)
    d = info.value.diagnostics[0]
    assert d.code == "PB405" and "generator" in d.message
    assert d.line == nested_escape.__code__.co_firstlineno + 1


def test_a_generator_differentiated_itself_is_refused():
    with pytest.raises(UnsupportedSyntaxError, match="PB402"):
        grad(powers)(X, 2)
