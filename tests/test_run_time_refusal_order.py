"""A refusal met while the gradient runs (an UnsupportedCallError of a rule) reads in the
house order: what, the user's file:line[:col], the source line, then the fix (the source
line came after the fix before). A rule's fix given inline (``...; fix: ...``) gets its
own line too. Where the call went through a call site (a callee known only at run time)
the column is the call's, at first and second order alike."""

from __future__ import annotations

import inspect
import os

import numpy as np
import pytest

import pullback
from pullback.errors import UnsupportedCallError

HERE = os.path.dirname(__file__) + os.sep
X = np.array([0.4, 1.3, 2.2])


def rank_deficient_fit(y):
    t = np.linspace(0.0, 1.0, 3)
    c = np.polyfit(t, y, 5)
    return np.sum(c)


def vectorized_with_a_signature(x):
    v = np.vectorize(lambda a, b: a * b, signature="(),()->()")
    return np.sum(v(x, x))


CASES = {
    "rank_deficient_fit": (
        "c = np.polyfit(t, y, 5)",
        None,  # a rule called by name: the line map knows the line only
        "pullback: numpy.polyfit(a rank-deficient fit) has no rule.",
        "the fit of degree 5 to these points has rank 3 (NumPy's RankWarning): lower the "
        "degree or use more distinct points",
    ),
    "vectorized_with_a_signature": (
        "return np.sum(v(x, x))",
        "v(x, x)",  # a function value: its call site knows the column
        "pullback: a np.vectorize object with a signature, excluded keyword arguments or "
        "keyword arguments has no rule",
        "vectorize a function of positional arguments (excluded ones by position), or write "
        "the loop in the differentiated function",
    ),
}


@pytest.mark.filterwarnings("ignore::RuntimeWarning", "ignore:Polyfit")
@pytest.mark.parametrize("how", ["grad", "hessian"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_a_run_time_refusal_reads_what_where_line_fix(name, how):
    fn = globals()[name]
    text, call, what, fix = CASES[name]
    lines, first = inspect.getsourcelines(fn)
    k, written = next((k, t) for k, t in enumerate(lines) if t.strip() == text)
    place = f"{os.path.basename(__file__)}:{first + k}"
    if call is not None:
        place += f":{written.index(call) + 1}"
    x = X.astype(np.float32) if how == "grad" else X
    with pytest.raises(UnsupportedCallError) as info:
        getattr(pullback, how)(fn)(x)
    assert str(info.value).replace(HERE, "") == f"{place}: {what}\n        {text}\nFix: {fix}"
