"""The examples and the command line run (the README promises both)."""

import ast
import importlib.metadata
import re
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


def _needs_line(path):
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    lines = [line for line in doc.splitlines() if line.startswith("Needs: pip install ")]
    assert len(lines) == 1, f"{path.name}: its docstring must name what to install"
    return lines[0]


def _imported_packages(path):
    """Top-level names of every module the example imports, anywhere in the file."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names - set(sys.stdlib_module_names) - {"__future__", "numpy", "pullback"}


def _extra_requirements(extras):
    """The distributions pullback's extras ``extras`` install, from its installed metadata."""
    found = set()
    for req in importlib.metadata.requires("pullback") or ():
        name = re.match(r"[A-Za-z0-9_.-]+", req).group(0).lower()
        marker = re.search(r"extra\s*==\s*['\"]([^'\"]+)['\"]", req)
        if marker and marker.group(1) in extras:
            found.add(name)
    return found


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_names_the_extra_it_needs(path):
    """`Needs: pip install "pullback[EXTRA]"` at the top installs every package it imports.

    A package the line calls optional (imported under ``try``) is exempt.
    """
    line = _needs_line(path)
    match = re.search(r'"pullback\[([a-z,]+)\]"', line)
    extras = set(match.group(1).split(",")) if match else set()
    if not match:
        assert line.startswith("Needs: pip install pullback   (no extra)"), line
    provided = _extra_requirements(extras)
    assert len(provided) >= len(extras), f"{path.name}: an extra in {sorted(extras)} is unknown"
    optional = line.split("optional")[0] if "optional" in line else ""
    missing = {
        name
        for name in _imported_packages(path)
        if name not in provided and name.replace("_", "-") not in optional
    }
    assert not missing, f"{path.name} imports {sorted(missing)}, not installed by {line!r}"


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
