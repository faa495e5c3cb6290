"""The command line: --version, --help on every command, show, rules PATTERN, and a static
check that never imports anything from the checked file's folder or the current directory."""

import re
import subprocess
import sys
import textwrap

import pytest

import pullback
from pullback.__main__ import COMMANDS, main

ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert not ADDRESS.search(out + err), "output must be deterministic"
    return code, out, err


def python_m(*argv, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "pullback", *map(str, argv)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )


def test_version_in_both_forms(capsys):
    assert run(capsys, "--version") == (0, f"pullback {pullback.__version__}\n", "")
    out = python_m("--version")
    assert out.returncode == 0 and out.stdout == f"pullback {pullback.__version__}\n"


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_help_on_every_command_exits_zero_and_runs_nothing(command, capsys):
    argv = ["--help"] if command is None else [command, "--help"]
    code, out, err = run(capsys, *argv)
    assert code == 0 and err == ""
    assert out.startswith("usage: pullback" + ("" if command is None else f" {command}"))
    assert "exit" in out or command is None
    assert "=== The function ===" not in out  # demo --help does not run the demo


def test_no_command_and_unknown_command_exit_two(capsys):
    code, out, err = run(capsys)
    assert code == 2 and out == "" and "commands:" in err
    code, out, err = run(capsys, "frobnicate")
    assert code == 2 and out == ""
    assert "unknown command 'frobnicate' (one of: demo, check, show, rules)" in err


def test_rules_pattern_substring_and_glob(capsys):
    code, out, _ = run(capsys, "rules", "TANH")
    names = [line.split()[0] for line in out.splitlines()[:-1]]
    assert code == 0 and "numpy.tanh" in names and "math.tanh" in names
    assert all("tanh" in name for name in names)
    assert out.splitlines()[-1].startswith(f"{len(names)} names in ")
    code, out, _ = run(capsys, "rules", "numpy.linalg.*")
    names = [line.split()[0] for line in out.splitlines()[:-1]]
    assert code == 0 and "numpy.linalg.inv" in names
    assert all(name.startswith("numpy.linalg.") for name in names)


def test_rules_without_a_match_or_with_markdown_and_pattern(capsys):
    assert run(capsys, "rules", "no_such_function") == (
        1,
        "",
        "pullback rules: no function matches 'no_such_function'\n",
    )
    code, out, err = run(capsys, "rules", "--markdown", "tanh")
    assert code == 2 and out == "" and "drop PATTERN" in err
    code, _, err = run(capsys, "rules", "--bogus")
    assert code == 2 and "unrecognized arguments: --bogus" in err


MODEL = """\
import numpy as np

print("the model file was imported")


def loss(w, x):
    s = 0.0
    for i in range(len(x)):
        s = s + np.tanh(x[i] * w) ** 2
    return s


def bad(x):
    x[0] = 1.0
    return x


if __name__ == "__main__":
    raise SystemExit("the main block must not run")
"""


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(MODEL)
    return path


def test_show_prints_both_sweeps_for_each_wrt(model, capsys):
    code, out, err = run(capsys, "show", f"{model}:loss")
    assert code == 0
    assert err == "the model file was imported\n"  # the import's prints stay off stdout
    assert "def loss__forward(w, x):" in out and "def loss__backward(_saved, _dret):" in out
    assert "# model.py:9: s = s + np.tanh(x[i] * w) ** 2" in out
    assert out.rstrip().endswith("return (densify(d_w),)")
    both = "return (densify(d_w), _fold_owned_reads(d_x, x, _reads_x, _range1, _lreads_x))"
    # x[i] read once a step: the loop's own buffer, folded as the loop ends
    code, out, _ = run(capsys, "show", f"{model}:loss", "--wrt", "w", "1")
    assert code == 0 and out.rstrip().endswith(both)


def test_show_repeated_wrt_accumulates(model, capsys):
    # `--wrt w --wrt 1` names both parameters, as `--wrt w 1` does (it kept only the last)
    code, repeated, _ = run(capsys, "show", f"{model}:loss", "--wrt", "w", "--wrt", "1")
    code_listed, listed, _ = run(capsys, "show", f"{model}:loss", "--wrt", "w", "1")
    assert code == code_listed == 0 and repeated == listed
    assert "return (densify(d_w), _fold_owned_reads(d_x," in repeated
    code, only_x, _ = run(capsys, "show", f"{model}:loss", "--wrt", "1")
    assert code == 0 and "def loss__backward" in only_x and "d_w" not in only_x


def test_show_refuses_before_importing(model, capsys):
    code, out, err = run(capsys, "show", f"{model}:bad")
    assert code == 1
    assert out == f"{model}:14:5: PB101 array mutation: assignment to an element of 'x'\n"
    assert "imported" not in err


@pytest.mark.parametrize(
    "target, message",
    [
        ("{model}", "name a function: {model}:FUNCTION"),
        ("{model}:nope", "no function named 'nope'"),
        ("{missing}:f", "no such file"),
    ],
)
def test_show_usage_errors(model, tmp_path, capsys, target, message):
    fill = {"model": model, "missing": tmp_path / "missing.py"}
    code, out, err = run(capsys, "show", target.format(**fill))
    assert code == 2 and out == ""
    assert message.format(**fill) in err
    assert err.startswith("pullback show: error: ")  # not `pullback check`, which it runs


@pytest.mark.parametrize("top", ["raise RuntimeError('no data file')", "import sys; sys.exit(3)"])
def test_show_reports_a_file_that_fails_to_import_without_a_traceback(tmp_path, capsys, top):
    path = tmp_path / "script.py"
    path.write_text(f"x0 = 1.0\n{top}\ndef f(x):\n    return x * x\n")
    code, out, err = run(capsys, "show", f"{path}:f")
    assert code == 1 and out == ""
    what = "RuntimeError: no data file" if "Runtime" in top else "SystemExit: 3"
    assert err.startswith(f"pullback show: error: importing {path} raised {what} at {path}:2.")
    assert "if __name__ == '__main__':" in err and "Traceback" not in err


def test_output_into_a_closed_pipe_is_not_a_traceback():
    """`pullback demo | head -1`: the reader leaves early; no BrokenPipeError is printed."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "pullback", "demo"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.close()  # nobody reads: the first write fails
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 1
    assert err == ""


TRAP = """\
import pathlib
pathlib.Path({marker!r}).write_text("{name} ran")
def mean(values):
    return 0.0
"""

CHECKED = """\
import statistics
import random as rnd
from fractions import Fraction


def f(x):
    return statistics.linear_regression([x, 2.0 * x], [1.0, 2.0]).slope + rnd.random() * 0
"""


TRAPPED = ("statistics", "fractions")
# The real statistics.linear_regression has no rule: this finding shows it was resolved,
# from the library (the local trap has none of that name either).
FINDING = (
    "physics.py:7:12: PB301 call of 'statistics.linear_regression', library code with no "
    "differentiation rule (pullback does not transform it)"
)


@pytest.fixture
def trapped(tmp_path):
    """A folder whose local statistics.py and fractions.py record that they ran.

    (Not random.py: NumPy imports ``random`` at start-up, so under ``python -m`` Python itself
    would run a local one before pullback starts, as it would for any ``python -m`` command.)
    """
    folder = tmp_path / "project"
    folder.mkdir()
    markers = []
    for name in TRAPPED:
        marker = tmp_path / f"{name}.ran"
        (folder / f"{name}.py").write_text(TRAP.format(marker=str(marker), name=name))
        markers.append(marker)
    (folder / "physics.py").write_text(CHECKED)
    return folder, markers


def test_static_check_imports_nothing_from_the_checked_folder(trapped, capsys, monkeypatch):
    folder, markers = trapped
    # The worst case: run from the folder, with it (and '') first on sys.path.
    monkeypatch.chdir(folder)
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setattr(sys, "path", ["", *sys.path])
    saved = {name: sys.modules.pop(name, None) for name in TRAPPED}  # as in a fresh process
    try:
        code, out, err = run(capsys, "check", folder / "physics.py")
    finally:
        for name, module in saved.items():
            if module is not None:
                sys.modules[name] = module
    assert (code, out, err) == (1, f"{folder}/{FINDING}\n", "")
    assert [m.name for m in markers if m.exists()] == []


def test_python_m_check_in_the_folder_runs_nothing_from_it(trapped):
    folder, markers = trapped
    out = python_m("check", "physics.py", cwd=folder)
    assert (out.returncode, out.stdout, out.stderr) == (1, FINDING + "\n", "")
    assert [m.name for m in markers if m.exists()] == []
    # The local modules would shadow the standard ones when the folder is on sys.path:
    # proof that the trap is armed.
    armed = subprocess.run(
        [sys.executable, "-c", "import statistics"], cwd=folder, capture_output=True
    )
    assert armed.returncode == 0 and markers[0].exists()


def test_check_reports_a_finding_through_a_resolved_module(tmp_path, capsys):
    path = tmp_path / "uses_math.py"
    path.write_text(
        textwrap.dedent(
            """\
            import math


            def f(x):
                return math.sinn(x)
            """
        )
    )
    code, out, _ = run(capsys, "check", path)
    assert code == 1
    assert out.startswith(f"{path}:5:12: PB302 'math.sinn' is not defined")
