"""The corpus (tests/corpus/): realistic functions written the way people write them, each
differentiated as written and checked against finite differences (float64; float32 for
the array-valued cases), and each method's side effects (evaluation counters) happen once
per gradient, as in the primal."""

from __future__ import annotations

import numpy as np
import pytest

from pullback import grad, value_and_grad
from pullback.testing import check_grads

pytest.importorskip("scipy")

from corpus import callables, idioms, layers, models, optimization  # noqa: E402

ENTRIES = []
for _module in (idioms, layers, models, callables):
    for _k, (_fn, _args) in enumerate(_module.CASES):
        _name = getattr(_fn, "__name__", None) or getattr(
            getattr(_fn, "func", None), "__name__", type(_fn).__name__
        )
        _family = _module.__name__.split(".")[-1]
        ENTRIES.append(pytest.param(_fn, _args, id=f"{_family}-{_k}-{_name}"))


def test_the_corpus_has_at_least_sixty_functions():
    assert len(ENTRIES) + len(optimization.CASES) >= 60


@pytest.mark.parametrize("fn, args", ENTRIES)
def test_corpus_function_differentiates_as_written(fn, args):
    check_grads(fn, *args)


@pytest.mark.parametrize(
    "cls, point, n", optimization.CASES, ids=[c[0].__name__ for c in optimization.CASES]
)
def test_benchmark_method_differentiates_and_counts_once(cls, point, n):
    bench = cls(n)
    x = np.array(point)
    check_grads(bench.fun, x)
    before = bench.nfev
    value, g = value_and_grad(bench.fun)(x)
    assert bench.nfev == before + 1  # the counter runs once per gradient, as in the primal
    assert np.isclose(value, cls(n).fun(x))
    assert g.shape == x.shape


@pytest.mark.parametrize(
    "cls, point, n",
    [c for c in optimization.CASES if c[0] in (optimization.Rosenbrock, optimization.Ackley)],
)
def test_benchmark_methods_in_float32(cls, point, n):
    x = np.array(point, dtype=np.float32)
    g = grad(cls(n).fun)(x)
    assert g.dtype == np.float32
    check_grads(cls(n).fun, x)
