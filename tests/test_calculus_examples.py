"""The calculus examples run (small sizes) and their gradients match finite differences."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("scipy.integrate")
pytest.importorskip("scipy.stats")

from pullback.testing import check_grads  # noqa: E402

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def load(name):
    spec = importlib.util.spec_from_file_location(
        f"calculus_example_{name}", EXAMPLES / f"{name}.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_fit_ode_solve_ivp(tmp_path):
    ex = load("fit_ode_solve_ivp")
    times, observed = ex.make_data(12)
    check_grads(ex.loss, np.array([1.5, 0.5, 0.3]), times, observed)
    p, result, _ = ex.fit(n=20, start=(1.8, 0.4, 0.6))
    assert result.success
    np.testing.assert_allclose(p, ex.TRUE, atol=0.15)
    plotted = ex.plot(tmp_path / "fit.png", p, times, observed)
    assert plotted == (tmp_path / "fit.png").exists()


def test_gaussian_process():
    ex = load("gaussian_process")
    x, y = ex.make_data(15)
    theta0 = np.array([0.0, 0.0, -1.0])
    check_grads(ex.negative_log_marginal_likelihood, theta0, x, y)
    theta, result, _ = ex.fit(n=15)
    assert result.success
    assert result.fun < ex.negative_log_marginal_likelihood(theta0, x, y)
    # at the optimum the gradient vanishes (what L-BFGS-B stopped on)
    assert np.max(np.abs(result.jac)) < 1e-3
