"""Reverse over reverse through one rule at one case of ``second_order_table`` (for the
SciPy families' tests until a shared second-order check lands in pullback.testing)."""

from __future__ import annotations

import numpy as np

from pullback import default_registry
from pullback.rules.scipy_stats_common import Refused
from pullback.testing import check_grads


def rule_named(name):
    """The registered rule called ``name`` (as ``python -m pullback rules`` lists it)."""
    for rule in default_registry().rules():
        if rule.name == name:
            return rule
    raise KeyError(name)


def float_positions(args):
    """The positions of the float arguments (the ones differentiated by default)."""
    return tuple(
        k
        for k, a in enumerate(args)
        if np.asarray(a).dtype.kind == "f" and not isinstance(a, (bool, int))
    )


def _objective(fn, weights, n, kwargs):
    # one parameter per argument: the objective is transformed, and stars are not allowed
    if kwargs:
        if set(kwargs) != {"axis"} or n != 1:
            raise ValueError(f"keywords {sorted(kwargs)}: only axis= (one argument) is known")
        axis = kwargs["axis"]
        return lambda a: np.sum(fn(a, axis=axis) * weights)
    if n == 1:
        return lambda a: np.sum(fn(a) * weights)
    if n == 2:
        return lambda a, b: np.sum(fn(a, b) * weights)
    if n == 3:
        return lambda a, b, c: np.sum(fn(a, b, c) * weights)
    if n == 4:
        return lambda a, b, c, d: np.sum(fn(a, b, c, d) * weights)
    if n == 5:
        return lambda a, b, c, d, e: np.sum(fn(a, b, c, d, e) * weights)
    raise ValueError(f"{n} arguments")


def check_second_order(name, args, kwargs, wrt, seed=0):
    """``check_grads(order=2)`` of ``sum(fn(*args, **kwargs) * W)`` (``W`` random), with
    respect to ``wrt`` (default: every float argument); returns how it was checked."""
    fn = rule_named(name).fn
    y = fn(*args, **kwargs)
    weights = np.random.default_rng(seed).normal(size=np.shape(y))
    wrt = float_positions(args) if wrt is None else wrt
    objective = _objective(fn, weights, len(args), kwargs)
    return check_grads(objective, *args, wrt=wrt, order=2)


def assert_reverse_over_reverse(name, case, not_yet=()):
    """Reverse over reverse at ``case`` (from second_order_table.CASES); for a rule in
    ``not_yet``, that it is not (yet) reverse over reverse."""
    import pytest

    args, kwargs, wrt = case
    if name in not_yet:  # a closure pullback only: the second derivative is refused
        from pullback import PullbackError, hvp

        fn = rule_named(name).fn
        assert rule_named(name).pullback_fn is None
        first = float_positions(args)[0]
        with pytest.raises(PullbackError):
            hvp(_objective(fn, 1.0, len(args), kwargs), wrt=first)(*args, args[first])
        return
    how = check_second_order(name, args, kwargs, wrt)
    assert how == "reverse over reverse", f"{name}: {how}"


def assert_agrees_with_the_closure(name, case, not_yet=(), seed=0):
    """The rule's transformable pullback gives what its closure pullback gives."""
    rule = rule_named(name)
    if rule.pullback_fn is None:
        assert name in not_yet or rule.kind == "scalar"
        return
    args, kwargs, _ = case
    y, closure = rule.rrule(*args, **kwargs)
    dy = np.random.default_rng(seed).normal(size=np.shape(y))
    want = closure(dy)
    got = rule.pullback_fn(dy, *args, **kwargs)
    for w, g, a in zip(want, got, args, strict=False):
        if np.asarray(a).dtype.kind != "f":
            continue  # counts and integer parameters: the closure says NO_TANGENT
        if isinstance(w, Refused):  # no formula: both refuse (when used)
            assert isinstance(g, Refused)
            continue
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-13, atol=0)
