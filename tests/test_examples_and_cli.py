"""The examples and the command line run (the README promises both)."""

import runpy
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(path, capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", [str(path)])  # as `python examples/NAME.py`
    runpy.run_path(str(path), run_name="__main__")
    assert capsys.readouterr().out.strip()


def test_demo_checks_its_gradient():
    out = subprocess.run(
        [sys.executable, "-m", "pullback", "demo"], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert "def logistic_loss__backward(_saved, _dret):" in out.stdout
    assert "OK: the gradient matches finite differences" in out.stdout


def test_cli_check_and_rules(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f(x):\n    x[0] = 1.0\n    return x\n")
    out = subprocess.run(
        [sys.executable, "-m", "pullback", "check", str(bad)], capture_output=True, text=True
    )
    assert out.returncode == 1
    assert out.stdout.strip() == f"{bad}:2:5: PB101 array mutation: assignment to an element of 'x'"
    rules = subprocess.run(
        [sys.executable, "-m", "pullback", "rules"], capture_output=True, text=True
    )
    assert rules.returncode == 0 and "numpy.tanh" in rules.stdout
    usage = subprocess.run([sys.executable, "-m", "pullback"], capture_output=True, text=True)
    assert usage.returncode == 2 and usage.stderr.startswith("usage: pullback")
