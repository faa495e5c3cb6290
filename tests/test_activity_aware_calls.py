"""A call with neither rule nor source inside the differentiated function is refused only
when a differentiated value reaches it (the transform knows ``wrt``); a call no gradient
flows through (a settings object built from hyperparameters) just runs. The static check
(``pullback check``, ``pullback.check``), which knows no ``wrt``, stays conservative."""

from __future__ import annotations

import activity_cases as cases
import numpy as np
import pytest

from pullback import check, grad, jvp
from pullback.errors import UnsupportedSyntaxError
from pullback.testing import check_grads


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_an_object_built_from_settings_just_runs(dtype):
    x = np.array([0.3, -0.7, 1.1], dtype=dtype)
    assert np.allclose(grad(cases.built_from_settings)(x, 3), 4.0 * x)
    check_grads(cases.built_from_settings, x, 3)
    _, tangent = jvp(cases.built_from_settings, (x, 3), (np.ones_like(x), None))
    assert np.isclose(tangent, np.sum(4.0 * x), rtol=1e-5)


def test_a_builtin_without_rule_on_constants_just_runs():
    x = np.array([0.3, -0.7])
    assert np.allclose(grad(cases.calls_a_c_function_on_constants)(x, "run-1"), np.cos(x))


def test_an_object_built_from_a_differentiated_value_is_refused_before_running():
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(cases.built_from_a_differentiated_value)(np.array([0.3, -0.7]))
    text = str(info.value)
    assert (
        "activity_cases.py:21:11: PB301 call of 'activity_cases.Settings', a class that "
        "defines __setattr__ ('Settings')" in text
    )
    assert "cfg = Settings(3, x)" in text


def test_the_static_check_knows_no_wrt_and_stays_conservative():
    found = check(cases.built_from_settings)
    assert [d.code for d in found] == ["PB301"]


def caller_of_a_helper_that_builds_settings(x):
    return cases.built_from_settings(x, 3)


def test_inside_a_called_function_the_check_follows_what_the_caller_passes():
    # The check of callees runs before anything, from what each call site passes
    # (check/taint.py): `n` is a setting there, so Settings(n, 2.0) just runs.
    x = np.array([0.3, -0.7])
    np.testing.assert_allclose(grad(caller_of_a_helper_that_builds_settings)(x), 4.0 * x)
