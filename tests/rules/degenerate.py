"""The machinery of the degenerate-size audit (tests/rules/test_degenerate.py).

A case is ``(label, args, kwargs)`` whose arrays are placeholders (:class:`A`, :class:`S`)
made at test time in the dtype under test, so one table serves float64 and float32.
:func:`check_degenerate` runs a rule on one case:

* inputs with at least one element: :func:`pullback.testing.check_rrule` (values against
  finite differences, shapes, dtypes, symbolic zeros, forward mode);
* every differentiable input zero-size (finite differences have nothing to vary): the rule's
  output equals the primal's in shape and dtype, and each cotangent has its argument's shape
  and dtype and is zero;
* always: finite inputs and a finite output give finite cotangents, and a transformable
  pullback function (what generated code and second derivatives call) agrees with the rule.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from rule_inputs import make

from pullback.errors import PullbackError
from pullback.registry import default_registry, qualified_name
from pullback.tangents import NO_TANGENT, ZERO, is_differentiable_value
from pullback.testing import check_rrule, random_like

_SEQ = (list, tuple)


class A:
    """An array placeholder: ``make(domain, shape, dtype, seed)`` at test time."""

    def __init__(self, shape=(), domain="real", seed=0, avoid=()):
        self.shape, self.domain, self.seed, self.avoid = tuple(shape), domain, seed, avoid

    def build(self, dtype):
        return make(self.domain, self.shape, dtype, seed=self.seed, avoid=self.avoid)

    def __repr__(self):
        return f"A{self.shape}"


class S(A):
    """A NumPy scalar (``np.float64(...)`` / ``np.float32(...)``) placeholder."""

    def __init__(self, domain="real", seed=0, avoid=()):
        super().__init__((), domain, seed, avoid)

    def build(self, dtype):
        return dtype(make(self.domain, (), np.float64, seed=self.seed, avoid=self.avoid))

    def __repr__(self):
        return f"S({self.domain})"


class Inapplicable:
    """Marks a rule the audit cannot run on degenerate inputs, with the reason."""

    def __init__(self, reason):
        self.reason = reason


def case(label, *args, check=None, **kwargs):
    """One call ``fn(*args, **kwargs)``; ``check`` holds options for check_rrule
    (``constants=...``)."""
    return (label, args, kwargs, check or {})


def resolve(x, dtype):
    """``x`` with every placeholder made in ``dtype``."""
    if isinstance(x, A):
        return x.build(dtype)
    if type(x) in _SEQ:
        return type(x)(resolve(v, dtype) for v in x)
    if isinstance(x, dict):
        return {k: resolve(v, dtype) for k, v in x.items()}
    return x


def _leaves(x):
    if type(x) in _SEQ:
        return [leaf for v in x for leaf in _leaves(v)]
    if isinstance(x, dict):
        return [leaf for v in x.values() for leaf in _leaves(v)]
    return [x] if is_differentiable_value(x) else []


def _finite(x) -> bool:
    return all(np.all(np.isfinite(leaf)) for leaf in _leaves(x))


def _dense_leaves(c, a):
    """``(cotangent, argument)`` pairs of the leaves of a cotangent (ZERO as None)."""
    if c is ZERO or c is NO_TANGENT or c is None:
        return []
    if type(a) in _SEQ:
        return [p for ck, ak in zip(c, a, strict=True) for p in _dense_leaves(ck, ak)]
    return [(c, a)]


def check_degenerate(fn, args, kwargs, check_kwargs=None):
    """Check the rule for ``fn`` at ``fn(*args, **kwargs)`` (see the module docstring)."""
    rule = default_registry().lookup(fn)
    check_kwargs = dict(check_kwargs or {})
    if check_kwargs.pop("raises", False):  # a form the rule refuses: a pullback error
        with pytest.raises(PullbackError, match="pullback"):
            rule.rrule(*args, **kwargs)[1](np.zeros(np.shape(fn(*args, **kwargs))))
        return
    leaves = _leaves(args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the primal's own NaN warnings
        expected = fn(*args, **kwargs)
    if leaves and all(np.size(leaf) == 0 for leaf in leaves):
        _check_zero_size(rule, args, kwargs, expected)
    else:
        check_rrule(fn, *args, **check_kwargs, fkwargs=kwargs)
    y, back = rule.rrule(*args, **kwargs)
    dy = random_like(y, np.random.default_rng(1))
    cots = back(dy)
    if _finite(args) and _finite(y):
        for k, c in enumerate(cots):
            # after the positional ones, the differentiated keywords' ({name: cotangent})
            pairs = [(c, args[k])] if k < len(args) else [(c[n], kwargs[n]) for n in c]
            for cot, arg in pairs:
                for leaf, _ in _dense_leaves(cot, arg):
                    assert np.all(np.isfinite(leaf)), f"{rule.name}: a NaN/inf cotangent ({k})"
    if rule.pullback_fn_accepts(len(args), kwargs):
        _check_pullback_fn(rule, args, kwargs, dy, cots)


def _check_zero_size(rule, args, kwargs, expected):
    y, back = rule.rrule(*args, **kwargs)
    got, want = _leaves(y), _leaves(expected)
    assert type(y) is type(expected) and len(got) == len(want), (y, expected)
    for g, e in zip(got, want, strict=True):
        assert np.shape(g) == np.shape(e), (np.shape(g), np.shape(e))
        assert np.result_type(g) == np.result_type(e), (np.result_type(g), np.result_type(e))
    cots = back(random_like(y, np.random.default_rng(0)))
    assert isinstance(cots, tuple) and len(cots) == len(args), cots
    for k, (c, a) in enumerate(zip(cots, args, strict=True)):
        if not _leaves(a):
            assert c is NO_TANGENT or c is ZERO or c is None, f"argument {k}: {c!r}"
            continue
        for leaf, arg in _dense_leaves(c, a):
            assert np.shape(leaf) == np.shape(arg), f"argument {k}: shape {np.shape(leaf)}"
            assert np.result_type(leaf) == np.result_type(arg), f"argument {k}: dtype"
            assert not np.any(leaf), f"argument {k}: a nonzero cotangent"


def _check_pullback_fn(rule, args, kwargs, dy, cots):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        got = rule.pullback_fn(dy, *args, **kwargs)
    for k, a in enumerate(args):
        if not _leaves(a):
            continue
        for (g, _), (e, _) in zip(
            _dense_leaves(got[k], a), _dense_leaves(cots[k], a), strict=False
        ):
            np.testing.assert_allclose(
                np.asarray(g),
                np.asarray(e),
                rtol=1e-4,
                atol=1e-5,
                err_msg=f"{rule.name}: the transformable pullback differs for argument {k}",
            )


# -- the table: rule name -> cases or Inapplicable ------------------------------------
CASES: dict = {}


def _name(fn):
    rule = default_registry().lookup(fn)
    return rule.name if rule is not None else qualified_name(fn)


def add(fn, *cases):
    CASES.setdefault(_name(fn), []).extend(cases)


def skip(fn, reason):
    CASES[_name(fn)] = Inapplicable(reason)
