"""A function given to quad that cannot take ``x`` and the values of ``args`` is refused
with the user's line and the fix, not with the name and the counts of the function
pullback made of a closure (transform/solver_closures.py) or of a lambda (golden)."""

from __future__ import annotations

import pytest

si = pytest.importorskip("scipy.integrate")

import pullback  # noqa: E402
from pullback.errors import ArgumentError  # noqa: E402

FIX = (
    "Fix: give the function one parameter after x for each value of args "
    "(`lambda x, p: x * p` with args=(p,)), or leave out args where it reads those "
    "values itself (a lambda may read the variables of the function it is in)."
)


def twice(x):
    return 2.0 * x


def closure_and_args(p):
    return si.quad(lambda x: x * p, 0.0, 1.0, args=(p,))[0]


def function_and_args(p):
    return si.quad(twice, 0.0, 1.0, args=(p,))[0]


def lambda_too_many(p):
    return si.quad(lambda x, a, b: x * a, 0.0, 1.0, args=(p,))[0]


def with_options(p):
    return si.quad(twice, 0.0, 1.0, args=(p, p), epsabs=1e-10)[0]


CASES = {
    "closure_and_args": (
        26,
        "the function given to it",
        "1 positional argument more than it takes",
        "return si.quad(lambda x: x * p, 0.0, 1.0, args=(p,))[0]",
    ),
    "function_and_args": (
        30,
        "'twice'",
        "1 positional argument more than it takes",
        "return si.quad(twice, 0.0, 1.0, args=(p,))[0]",
    ),
    "lambda_too_many": (
        34,
        "the function given to it",
        "1 positional argument fewer than it needs",
        "return si.quad(lambda x, a, b: x * a, 0.0, 1.0, args=(p,))[0]",
    ),
    "with_options": (
        38,
        "'twice'",
        "2 positional arguments more than it takes",
        "return si.quad(twice, 0.0, 1.0, args=(p, p), epsabs=1e-10)[0]",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_wrong_arity_names_the_users_line_and_the_fix(name):
    line, named, count, text = CASES[name]
    with pytest.raises(ArgumentError) as info:
        pullback.grad(globals()[name])(0.5)
    assert str(info.value) == (
        f"{__file__}:{line}: scipy.integrate.quad calls {named} as func(x, *args), "
        f"x then each value of args: {count}.\n        {text}\n{FIX}"
    )


def integrand_raising(x, c):
    return [1.0][int(c)] * x + len(x)  # a TypeError of the integrand itself (len of a float)


def test_other_type_errors_pass_through():
    with pytest.raises(TypeError, match="has no len"):
        pullback.grad(lambda c: si.quad(integrand_raising, 0.0, 1.0, args=(c,))[0])(0.0)
