"""Every pullback error a user meets names a line of the user's file, never one of
pullback's own: the refusal and golden cases run under grad, hessian, hvp and jvp, and an
error's first location must be outside src/pullback. A second derivative that runs through
a rule's own pullback (written in pullback's code, differentiated like the user's) with an
axis that varies per loop iteration differentiates; a refusal inside such a step is named at
the user's line (golden text)."""

import importlib
import inspect
import os
import re
from pathlib import Path

import numpy as np
import pytest
from fd import check_hvp
from loop_axis_cases import CASES as LOOP_AXIS_CASES
from sweeps import sweep

import pullback
from pullback import HigherOrderError, PullbackError, running
from pullback.errors import in_pullback_file
from pullback.testing import check_grads

GOLDEN = Path(__file__).parent / "check" / "golden"
UPDATE = bool(os.environ.get("PULLBACK_UPDATE_GOLDEN"))

# The modules of refusal and golden cases (their functions take arrays).
CASE_MODULES = ["error_cases", "second_order_gap_cases", "check.cases", "check.callee_cases"]
_PLACE = re.compile(r"((?:/|<)[^\s:]+\.py|<[^>]+>):\d+")


def _functions(module_name):
    module = importlib.import_module(module_name)
    return [
        (module_name, name)
        for name, fn in sorted(vars(module).items())
        if inspect.isfunction(fn) and fn.__module__ == module.__name__ and fn.__code__.co_argcount
    ]


ALL_CASES = [case for m in CASE_MODULES for case in _functions(m)]


def _modes(fn):
    n = fn.__code__.co_argcount
    args = [np.linspace(0.5, 2.0, 4) for _ in range(n)]
    yield "grad", lambda: pullback.grad(fn)(*args)
    yield "hessian", lambda: pullback.hessian(fn)(*args)
    yield "hvp", lambda: pullback.hvp(fn)(*args, np.ones(4))
    yield "jvp", lambda: pullback.jvp(fn, tuple(args), tuple(np.ones(4) for _ in args))


def locations(error) -> list:
    """The files an error names as its place: its diagnostics', and the first
    ``file:line`` of its text (where the message starts)."""
    places = [d.filename for d in getattr(error, "diagnostics", None) or ()]
    first = _PLACE.search(str(error))
    if first is not None:
        places.append(first.group(1))
    return places


def assert_users_place(error, where):
    places = locations(error)
    inside = [p for p in places if in_pullback_file(p)]
    assert not inside, f"{where}: {type(error).__name__} names pullback's own line\n{error}"


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (the cases' arguments are arbitrary)
@pytest.mark.parametrize("case", sweep(ALL_CASES, quick=24), ids="-".join)
def test_errors_name_the_users_file_at_every_order(case):
    module_name, name = case
    fn = getattr(importlib.import_module(module_name), name)
    for mode, run in _modes(fn):
        try:
            run()
        except PullbackError as error:
            assert_users_place(error, f"{name} under {mode}")
        except Exception:  # noqa: S110 - the user's own error (wrong arguments for it)
            pass


def test_a_refused_function_is_named_at_its_line_at_every_order():
    # The sweep's meaning: a refused case is refused under each mode, at the user's line.
    import error_cases

    for mode, run in _modes(error_cases.mutates):
        with pytest.raises(PullbackError) as info:
            run()
        assert_users_place(info.value, f"mutates under {mode}")
        assert any(p.endswith("error_cases.py") for p in locations(info.value)), mode


@pytest.mark.parametrize("fn", LOOP_AXIS_CASES, ids=lambda f: f.__name__)
def test_an_axis_that_varies_per_iteration_has_a_second_derivative(fn):
    x = np.array([[0.3, -1.7, 1.1, 0.6], [0.9, 1.4, -0.4, 2.2], [-1.2, 0.45, 0.8, -0.9]])
    x = x + 3.0 if fn.__name__.startswith("products") else x  # (no zeros to divide by)
    check_hvp(fn, x, np.cos(np.arange(12.0)).reshape(3, 4), rtol=1e-5, atol=1e-6)
    check_grads(fn, x.astype(np.float32), order=2)


def test_a_float_ddof_has_its_derivative():
    x = np.array([[0.3, -1.7, 1.1], [0.9, np.nan, -0.4]])
    dense = np.nan_to_num(x, nan=0.25)
    for moment, data in ((np.var, dense), (np.std, dense), (np.nanvar, x), (np.nanstd, x)):

        def f(d, moment=moment, data=data):
            return np.sum(moment(data, 0, None, None, d, True) ** 2)

        got = pullback.grad(f)(0.7)
        want = (f(0.7 + 1e-6) - f(0.7 - 1e-6)) / 2e-6
        np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=moment.__name__)
        np.testing.assert_allclose(pullback.grad(f)(np.float32(0.7)), want, rtol=2e-3)


@pytest.fixture
def stand_in_step(monkeypatch):
    """pullback counts tests/pullback_step_cases.py as its own code for this test."""
    import pullback_step_cases

    own = running.in_pullback_file
    step_file = pullback_step_cases.__file__
    monkeypatch.setattr(running, "in_pullback_file", lambda f: f == step_file or own(f))


def test_a_refusal_inside_pullbacks_step_names_the_users_line(stand_in_step):
    from step_user_cases import calls_the_step

    with pytest.raises(HigherOrderError) as info:
        pullback.grad(calls_the_step)(np.array([0.5, 1.5]))
    text = str(info.value)
    here = str(Path(__file__).parent)
    text = text.replace(here + os.sep, "")
    path = GOLDEN / "higher_order_inside_step.txt"
    if UPDATE:
        path.write_text(text + "\n")
    assert text + "\n" == path.read_text()
    # the user's line and its source, then the refused construct of the step as detail
    assert text.startswith("step_user_cases.py:9: cannot differentiate this line again")
    assert text.splitlines()[1].strip() == "return np.sum(step(x, scale))"
    assert "pullback_step_cases.py:10: PB101" in text
