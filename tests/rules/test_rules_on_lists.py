"""Every NumPy rule applied to a Python list gives what it gives on the equivalent array: the
gradient, ``jvp``, ``hvp`` and the Hessian.

NumPy takes a list as ``np.asarray`` of it, and so must the formulas pullback writes around a
rule (inline derivatives in forward mode, the transformable pullbacks and vjp functions a
second derivative transforms, a list's cotangent split off the array a pullback returned:
see list_operands.py). For each rule with a second-order case (so_*.py) whose first
argument is a float vector or matrix, and for which NumPy itself gives the same value on
the list, the function

    xs = []; for v in x: xs.append(v)        (a matrix: a list of lists of its entries)
    y = fn(xs, a, b); return np.sum(np.sin(y) + y * y)

is differentiated against the same function on the array (float64, and float32 for every
other rule), and its ``hvp`` against central differences of its gradient (float64).
"""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest
from second_order_table import CASES
from sweeps import sweep

import pullback
from pullback import default_registry

for _family in (
    "so_numpy",
    "so_numpy_accumulate",
    "so_numpy_sequences",
    "so_numpy_polynomials",
    "so_numpy_edit_grids",
    "so_numpy_functional",
    "so_linalg_fft",
    "so_statistics",
):
    importlib.import_module(_family)


def _rules():
    registry = default_registry()
    registry.load_all()
    return {r.name: r for r in registry.rules() if r.kind in ("rule", "scalar")}


def _as_list(x):
    return [[v for v in row] for row in x] if x.ndim == 2 else [v for v in x]


def _first_vector_case(fn, cases):
    """``(args, result dtype)`` of the first case without keywords whose first argument is
    a small float vector or matrix on which ``fn`` gives the same float array or number for
    the list as for the array (NumPy's own ``np.asarray`` of it), or None."""
    for args, kwargs, wrt in cases:
        x = args[0] if args else None
        if kwargs or len(args) > 4:
            continue
        if not (isinstance(x, np.ndarray) and x.dtype == np.float64 and x.ndim in (1, 2)):
            continue
        if not 2 <= x.size <= 12 or (wrt is not None and 0 not in wrt):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                y = fn(*args, **kwargs)
                y_list = fn(_as_list(x), *args[1:], **kwargs)
            except Exception:  # noqa: BLE001 - NumPy does not take a list there
                continue
        if isinstance(y, (np.ndarray, np.floating)) and y.dtype.kind == "f" and y.size:
            if type(y_list) is type(y) and np.array_equal(y, y_list):
                return args, y.dtype
    return None


RULES = _rules()
PARAMS = []
for _name in sorted(CASES):
    _rule = RULES.get(_name)
    if _rule is None or not (getattr(_rule.fn, "__module__", None) or "").startswith("numpy"):
        continue
    _found = _first_vector_case(_rule.fn, CASES[_name])
    if _found is not None:
        PARAMS.append(pytest.param(_rule.fn, *_found, np.float64, id=f"{_name}-float64"))
        if len(PARAMS) % 3 == 1:  # float32 on every other rule (the suite's time)
            PARAMS.append(pytest.param(_rule.fn, *_found, np.float32, id=f"{_name}-float32"))


def _functions(fn, rest, nested):
    """``(on_list, on_array)``: ``fn`` called directly (a star-call is a call found at run
    time, another path), with the list or the array and the other arguments as given."""
    r0, r1, r2 = (*rest, None, None, None)[:3]
    call = {
        0: lambda xs: fn(xs),
        1: lambda xs: fn(xs, r0),
        2: lambda xs: fn(xs, r0, r1),
        3: lambda xs: fn(xs, r0, r1, r2),
    }[len(rest)]
    if nested:

        def on_list(x):
            xs = [[v for v in row] for row in x]
            y = call(xs)
            return np.sum(np.sin(y) + y * y)

    else:

        def on_list(x):
            xs = []
            for v in x:
                xs.append(v)
            y = call(xs)
            return np.sum(np.sin(y) + y * y)

    def on_array(x):
        y = call(x)
        return np.sum(np.sin(y) + y * y)

    return on_list, on_array


def test_the_sweep_covers_the_families():
    names = {p.id.rsplit("-", 1)[0] for p in PARAMS}
    assert len(names) >= 150, len(names)
    for name in ("numpy.square", "numpy.log", "numpy.var", "numpy.std", "numpy.linalg.norm",
                 "numpy.cumsum", "numpy.dot", "numpy.mean", "numpy.maximum", "numpy.polyval"):
        assert name in names


@pytest.mark.parametrize("fn,args,out_dtype,dtype", sweep(PARAMS, quick=60))
def test_rule_on_a_list_as_on_the_array(fn, args, out_dtype, dtype):
    x = args[0].astype(dtype)
    on_list, on_array = _functions(fn, args[1:], x.ndim == 2)
    v = np.linspace(-0.7, 0.9, x.size).reshape(x.shape).astype(dtype)
    rtol, atol = (1e-9, 1e-11) if dtype == np.float64 else (1e-5, 1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = {
            "grad": pullback.grad(on_list)(x),
            "jvp": pullback.jvp(on_list, (x,), (v,))[1],
            "hvp": pullback.hvp(on_list)(x, v),
            "hessian": pullback.hessian(on_list)(x),
        }
        want = {
            "grad": pullback.grad(on_array)(x),
            "jvp": pullback.jvp(on_array, (x,), (v,))[1],
            "hvp": pullback.hvp(on_array)(x, v),
            "hessian": pullback.hessian(on_array)(x),
        }
    for what in got:
        assert np.shape(got[what]) == np.shape(want[what]), what
        np.testing.assert_allclose(got[what], want[what], rtol=rtol, atol=atol, err_msg=what)
    if dtype == np.float64 and out_dtype == np.float64:  # (np.float32(x): no differences)
        g = pullback.grad(on_list)
        eps = 1e-6
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            fd = (g(x + eps * v) - g(x - eps * v)) / (2 * eps)
        np.testing.assert_allclose(got["hvp"], fd, rtol=1e-5, atol=1e-6, err_msg="hvp vs fd")
