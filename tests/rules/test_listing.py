"""The rules listing, docs/rules.md, and the coverage promised for the rule families."""

from __future__ import annotations

import builtins
import math
import operator
from pathlib import Path

import numpy as np
import pytest

from pullback.registry import NONDIFF, default_registry
from pullback.rules.listing import generated_on, main, render_markdown, rules_table

DOCS = Path(__file__).resolve().parents[2] / "docs" / "rules.md"

ELEMENTWISE = (
    "negative abs fabs reciprocal exp exp2 expm1 log log2 log10 log1p sqrt cbrt square sin cos "
    "tan arcsin arccos arctan sinh cosh tanh arcsinh arccosh arctanh sinc deg2rad rad2deg "
    "degrees radians clip nan_to_num real imag conj angle add subtract multiply divide "
    "true_divide power float_power mod remainder fmod maximum minimum fmax fmin logaddexp "
    "logaddexp2 arctan2 hypot copysign where heaviside"
)
REDUCTIONS = (
    "sum prod mean average var std max amax min amin ptp median percentile quantile cumsum "
    "cumprod nansum nanmean nanmax nanmin nanprod nanvar nanstd"
)
PRODUCTS = "dot vdot matmul inner outer tensordot einsum kron cross trace vecdot"
SHAPE = (
    "reshape ravel squeeze expand_dims transpose permute_dims swapaxes moveaxis broadcast_to "
    "atleast_1d atleast_2d atleast_3d repeat tile roll flip flipud fliplr rot90 pad"
)
ASSEMBLE = (
    "array asarray concatenate stack hstack vstack dstack column_stack append select split "
    "array_split hsplit vsplit dsplit block"
)
INDEXING = "take take_along_axis compress diag diagonal triu tril sort partition"
MISC = "full linspace diff gradient interp convolve correlate polyval trapezoid cov corrcoef"
LINALG = (
    "inv pinv solve det slogdet cholesky eigh eigvalsh eig svd svdvals qr lstsq norm "
    "vector_norm matrix_norm matrix_power tensorsolve multi_dot"
)
FFT = "fft ifft fft2 ifft2 fftn ifftn rfft irfft rfft2 irfft2 rfftn irfftn fftshift ifftshift"
SPECIAL = (
    "gamma gammaln digamma polygamma beta betaln erf erfc erfinv erfcinv expit logit "
    "logsumexp softmax log_softmax xlogy xlog1py i0 i1 j0 j1 y0 y1 iv ive kv kve jv yv yn "
    "gammainc gammaincc betainc multigammaln zeta kl_div"
)
MATH = (
    "sin cos tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh exp exp2 expm1 log "
    "log1p log2 log10 sqrt cbrt pow hypot fabs erf erfc gamma lgamma copysign degrees radians "
    "fmod remainder dist fsum prod ldexp"
)
NONDIFF_NUMPY = (
    "floor ceil round rint trunc fix sign equal not_equal less less_equal greater "
    "greater_equal isnan isinf isfinite argmax argmin argsort nonzero searchsorted shape ndim "
    "size zeros_like ones_like empty_like zeros ones empty eye arange"
)
NONDIFF_RANDOM = "default_rng rand randn normal uniform random seed choice permutation"


def coverage():
    """``(public name, object, must be non-differentiable)`` for every promised entry."""
    import scipy.special as sc

    out = []
    for group, module, prefix in [
        (ELEMENTWISE + " " + REDUCTIONS + " " + PRODUCTS + " " + SHAPE, np, "numpy"),
        (ASSEMBLE + " " + INDEXING + " " + MISC, np, "numpy"),
        (LINALG, np.linalg, "numpy.linalg"),
        (FFT, np.fft, "numpy.fft"),
        (SPECIAL, sc, "scipy.special"),
        (MATH, math, "math"),
    ]:
        for name in group.split():
            if hasattr(module, name):
                out.append((f"{prefix}.{name}", getattr(module, name), name == "heaviside"))
    for name in NONDIFF_NUMPY.split():
        out.append((f"numpy.{name}", getattr(np, name), True))
    for name in NONDIFF_RANDOM.split():
        out.append((f"numpy.random.{name}", getattr(np.random, name), True))
    for name in "random normal uniform integers choice permutation".split():
        out.append((f"numpy.random.Generator.{name}", getattr(np.random.Generator, name), True))
    for name in "abs pow sum min max float".split():
        out.append((name, getattr(builtins, name), False))
    for name in "round len".split():
        out.append((name, getattr(builtins, name), True))
    out.append(("numpy.ndarray.astype", np.ndarray.astype, False))
    out.append(("operator.getitem", operator.getitem, False))
    for name in "floor ceil trunc".split():
        out.append((f"math.{name}", getattr(math, name), True))
    for name in "factorial comb gammasgn".split():
        out.append((f"scipy.special.{name}", getattr(sc, name), True))
    return out


@pytest.mark.parametrize(
    "name,fn,nondiff", coverage(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_promised_entry_is_registered(name, fn, nondiff):
    rule = default_registry().lookup(fn)
    assert rule is not None, f"{name} has no entry in the default registry"
    if nondiff:
        assert rule.kind == NONDIFF, f"{name} should be non-differentiable, is {rule.kind}"
    else:
        assert rule.kind != NONDIFF, f"{name} should be differentiable"


def test_every_promised_name_is_listed():
    listed = {name for name, _, _ in rules_table()}
    missing = [name for name, _, _ in coverage() if name not in listed]
    assert not missing, f"not in the rules listing: {missing}"


def _differing_rows_are_version_specific(actual: str, expected: str) -> bool:
    """On another Python, NumPy or SciPy than the one docs/rules.md was generated with,
    some functions exist only on one side (math.cbrt from 3.11, np.trapz before NumPy 2.4,
    ...): the rows of those functions and the counts may differ, nothing else. A row that
    differs must name a function that one of the two installs lacks."""
    a, e = actual.splitlines(), expected.splitlines()
    only = set(a) ^ set(e)
    known = {name for name, _, _ in rules_table()}
    for line in only:
        if line.endswith("non-differentiable.") and "names in" in line:
            continue  # the counts line
        if not line.startswith("| `"):
            return False
        name = line.split("`")[1]
        if (line in a) == (name in known):  # a documented row of an installed function
            return False
    return [x for x in a if x not in only] == [x for x in e if x not in only]


def _without_versions(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.startswith("Listed on "))


def test_docs_rules_md_is_up_to_date():
    expected = render_markdown()
    actual = DOCS.read_text() if DOCS.exists() else ""
    same_versions = generated_on() in actual.splitlines()
    # on the versions the file was listed with, every row must match (a rule missing from
    # the file fails); elsewhere only rows of functions one install lacks may differ
    lenient = not same_versions and _differing_rows_are_version_specific(
        _without_versions(actual), _without_versions(expected)
    )
    assert actual == expected or lenient, (
        "docs/rules.md is out of date with the registered rules. Regenerate it with\n"
        "    python -m pullback rules --markdown > docs/rules.md\n"
        "(it depends on the installed NumPy and SciPy versions)."
    )


def test_table_is_sorted_and_complete():
    rows = rules_table()
    assert rows == sorted(rows)
    names = {name for name, _, _ in rows}
    for rule in default_registry().rules():
        if rule.family == "pullback_runtime":  # helpers of generated code, not listed
            assert rule.name not in names
        else:
            assert rule.name in names
    assert ("numpy.permute_dims", "rule", "numpy_shape") in rows  # an alias of transpose


def test_main(capsys):
    assert main([]) == 0
    out = capsys.readouterr().out
    assert any(line.split() == ["numpy.exp", "scalar"] for line in out.splitlines())
    assert main(["--markdown"]) == 0
    assert capsys.readouterr().out == render_markdown()
    assert main(["rules", "--markdown"]) == 0
    capsys.readouterr()
    assert main(["--bogus"]) == 2


def test_every_registered_rule_is_named_and_trusted():
    for rule in default_registry().rules():
        assert rule.trusted, rule.name
        assert rule.name and not rule.name.startswith("_"), rule.name
        assert rule.family != "user", rule.name
