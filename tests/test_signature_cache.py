"""pullback.signatures: the cached ``inspect.signature`` of user functions and vjp
functions never gives a stale answer. A hit after a function's defaults, keyword
defaults, annotations or code changed, after it was given a ``__signature__`` or
``__wrapped__``, or after it was redefined gives what ``inspect.signature`` gives now;
a vjp function's signature follows its function's; a third derivative through a helper
found at run time whose defaults change between calls is right each time."""

from __future__ import annotations

import functools
import inspect

import numpy as np
import pytest

from pullback import default_registry, grad
from pullback.adjoints import VJPRef
from pullback.signatures import SignatureCache, signature_of, use_signature_cache


@pytest.fixture
def cache():
    with use_signature_cache(SignatureCache()) as fresh:
        yield fresh


def _make():
    def f(x, b=1.0, *, c=2.0):
        return x * b * c

    return f


def _check(fn, cache):
    got = signature_of(fn)
    assert got == inspect.signature(fn)
    return got


def test_a_hit_is_the_same_signature(cache):
    f = _make()
    first = _check(f, cache)
    assert signature_of(f) is first
    assert cache.hits == 1 and cache.misses == 1


def test_new_defaults(cache):
    f = _make()
    _check(f, cache)
    f.__defaults__ = (5.0,)
    assert _check(f, cache).parameters["b"].default == 5.0
    f.__defaults__ = None
    assert _check(f, cache).parameters["b"].default is inspect.Parameter.empty


def test_new_keyword_defaults(cache):
    f = _make()
    _check(f, cache)
    f.__kwdefaults__ = {"c": 7.0}
    assert _check(f, cache).parameters["c"].default == 7.0
    f.__kwdefaults__["c"] = 8.0  # changed in place: the same dict, another value
    assert inspect.signature(f).parameters["c"].default == 8.0
    assert _check(f, cache).parameters["c"].default == 8.0


def test_keyword_defaults_changed_in_place_are_seen(cache):
    f = _make()
    _check(f, cache)
    f.__kwdefaults__["c"] = 3.0
    assert _check(f, cache).parameters["c"].default == 3.0


def test_new_annotations(cache):
    f = _make()
    _check(f, cache)
    f.__annotations__["x"] = "float"
    assert _check(f, cache).parameters["x"].annotation == "float"


def test_new_code(cache):
    f = _make()
    _check(f, cache)

    def other(y, z=3.0, *, c=2.0):
        return y

    f.__code__ = other.__code__
    assert list(_check(f, cache).parameters) == ["y", "z", "c"]


def test_a_signature_or_wrapped_attribute(cache):
    f = _make()
    _check(f, cache)
    only_q = inspect.Parameter("q", inspect.Parameter.POSITIONAL_ONLY)
    f.__signature__ = inspect.Signature([only_q])
    assert list(_check(f, cache).parameters) == ["q"]
    del f.__signature__

    def inner(u, v):
        return u

    f.__wrapped__ = inner
    assert list(_check(f, cache).parameters) == ["u", "v"]
    del f.__wrapped__
    assert list(_check(f, cache).parameters) == ["x", "b", "c"]


def test_redefined_function(cache):
    def g(x, a=1.0):
        return x

    first = _check(g, cache)

    def g(x, a=2.0, extra=0.0):  # noqa: F811 - redefined on purpose
        return x

    second = _check(g, cache)
    assert first.parameters["a"].default == 1.0
    assert list(second.parameters) == ["x", "a", "extra"]


def test_objects_that_are_not_functions(cache):
    f = _make()
    p = functools.partial(f, 1.0)
    assert _check(p, cache) == inspect.signature(p)
    f.__defaults__ = (4.0,)
    assert _check(p, cache).parameters["b"].default == 4.0


def test_a_vjp_function_follows_its_function(cache):
    f = _make()
    ref = VJPRef(f, ("x",), default_registry())
    before = inspect.signature(ref)
    assert list(before.parameters) == [VJPRef.COTANGENT, "x", "b", "c"]
    assert inspect.signature(ref) is before  # derived once while f is unchanged
    f.__defaults__ = (6.0,)
    after = inspect.signature(ref)
    assert after.parameters["b"].default == 6.0
    # a vjp of a vjp: one cotangent per level, named apart
    outer = VJPRef(ref, ("x",), default_registry())
    names = list(inspect.signature(outer).parameters)
    assert names[:2] == ["__pullback_dvalue1__", VJPRef.COTANGENT]
    f.__defaults__ = (9.0,)
    assert inspect.signature(outer).parameters["b"].default == 9.0


def _scaled(x, s=1.0):
    return np.sin(s * x) * x**2


HELPERS = [_scaled]


def through_a_variable(t):
    g = HELPERS[0]  # found at run time: its vjp function is bound by signature
    return np.sum(g(t * np.array([0.3, -0.5, 0.8])) ** 2)


def _third(t):
    return grad(grad(grad(through_a_variable)))(t)


def _fd_third(t, step=1e-5):
    second = grad(grad(through_a_variable))
    return (second(t + step) - second(t - step)) / (2 * step)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_third_derivative_after_the_helper_defaults_change(cache, dtype):
    original = _scaled.__defaults__
    try:
        first = _third(dtype(0.7))
        rtol = 1e-6 if dtype == np.float64 else 2e-3
        np.testing.assert_allclose(first, _fd_third(0.7), rtol=rtol)
        _scaled.__defaults__ = (1.7,)
        second = _third(dtype(0.7))
        assert np.asarray(second).dtype == dtype
        np.testing.assert_allclose(second, _fd_third(0.7), rtol=rtol)
        assert not np.isclose(first, second)
        assert cache.hits > 0  # the derivative's build went through this cache
    finally:
        _scaled.__defaults__ = original
