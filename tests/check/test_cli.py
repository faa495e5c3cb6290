"""``python -m pullback check``: pullback.check.cli.main, which never runs the checked file."""

import textwrap

import pytest

from pullback.check.cli import main

MODULE = """\
import numpy as np
from mylib import thing
raise SystemExit("the checked file must not run")

K = 3


def helper(v):
    v[0] = 1.0
    return v


def fast(x):
    try:
        return x
    finally:
        pass


@rrule(fast)
def _(x):
    def fast_pullback(dy):
        return (dy,)
    return x, fast_pullback


class Model:
    def loss(self, w):
        out = self.buffer
        out.insert(0, w)
        return out


def f(x, i):
    y = thing(x) + K(x) + np.summ(x)
    return helper(x) + fast(x) + y


async def g(x):
    return x


def clean(x):
    return np.sum(x * x)
"""


@pytest.fixture
def module(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(MODULE)
    return path


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_checks_every_function_and_method_sorted_like_a_linter(module, capsys):
    code, out, err = run(capsys, module)
    assert code == 1 and err == ""
    passes = "which this call passes 'x'"
    assert out == textwrap.dedent(
        f"""\
        {module}:9:5: PB101 array mutation: assignment to an element of 'v'
        {module}:30:9: PB106 container mutation: 'out.insert(0, w)' changes 'out' in place
        {module}:35:27: PB302 'np.summ' is not defined: module 'numpy' has no attribute 'summ'
        {module}:36:19: PB101 array mutation: 'helper' writes into its parameter 'v', {passes}
        {module}:39:1: PB403 async def 'g' cannot be differentiated
        """
    )


def test_one_function_and_its_callees(module, capsys):
    code, out, _ = run(capsys, f"{module}:f")
    assert code == 1
    lines = out.splitlines()
    assert [line.split(": ")[1].split()[0] for line in lines] == ["PB302", "PB101"]
    # f passes its own x to helper, which writes into it: reported at f's call (the
    # message names helper's line); helper is checked as owning what it writes into
    assert lines[1].startswith(f"{module}:36:19:")


def test_a_method_by_qualified_name_and_a_leading_check_word(module, capsys):
    code, out, _ = run(capsys, "check", f"{module}:Model.loss")
    assert code == 1
    expected = "PB106 container mutation: 'out.insert(0, w)' changes 'out' in place"
    assert out == f"{module}:30:9: {expected}\n"


def test_a_clean_function_exits_zero(module, capsys):
    assert run(capsys, f"{module}:clean") == (0, "", "")


def test_the_checked_file_is_not_run(tmp_path, capsys):
    marker = tmp_path / "ran.txt"
    path = tmp_path / "sneaky.py"
    path.write_text(
        f"open({str(marker)!r}, 'w').write('ran')\n"
        "import sys\n"
        "sys.exit(3)\n"
        "def f(x):\n"
        "    return x\n"
    )
    assert run(capsys, path) == (0, "", "")
    assert not marker.exists()


@pytest.mark.parametrize(
    "argv, message",
    [
        ([], "usage:"),
        (["missing_file.py"], "no such file: missing_file.py"),
        (["{module}:nope"], "no function named 'nope'"),
        (["{bad}"], "cannot parse"),
    ],
)
def test_usage_errors_exit_two(module, tmp_path, capsys, argv, message):
    bad = tmp_path / "bad.py"
    bad.write_text("def f(:\n")
    argv = [a.format(module=module, bad=bad) for a in argv]
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert message in err


def test_help_exits_zero(capsys):
    code, out, _ = run(capsys, "--help")
    assert code == 0 and out.startswith("usage: pullback check")


def test_several_files_are_reported_together_once(module, tmp_path, capsys):
    other = tmp_path / "a_first.py"
    other.write_text("def h(x):\n    x.sort()\n    return x\n")
    code, out, _ = run(capsys, module, other, f"{module}:helper")
    lines = out.splitlines()
    assert code == 1
    assert lines[0].startswith(f"{other}:2:5: PB103")
    assert len(lines) == 6  # helper's own finding is printed once, f's call once
    assert sum(line.startswith(f"{module}:9:5:") for line in lines) == 1
