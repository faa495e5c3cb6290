"""``pullback check`` on class-based code and on folders: methods are checked as well as
top-level functions, a folder is walked file by file (each file parsed once), and a long
run reports progress on standard error."""

from __future__ import annotations

import textwrap

from pullback.check import cli
from pullback.check.cli import main, python_files

MODEL = textwrap.dedent(
    """\
    import numpy as np


    class Model:
        def __init__(self, w):
            self.w = w

        def loss(self, x):
            with memoryview(x) as _m:
                y = np.sum(self.w * x)
            return y


        class Inner:
            def step(self, x):
                with memoryview(x) as f:
                    return x


    def free(x):
        return np.sin(x)
    """
)


def test_methods_and_methods_of_nested_classes_are_checked(tmp_path, capsys):
    path = tmp_path / "model.py"
    path.write_text(MODEL)
    assert main([str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert [line.split(": ")[1].split()[0] for line in out] == ["PB202", "PB202"]
    assert out[0].startswith(f"{path}:9:9: PB202")  # the `with` inside Model.loss
    assert out[1].startswith(f"{path}:16:13: PB202")  # the `with` inside Model.Inner.step


def test_a_folder_is_walked_and_hidden_folders_and_environments_are_skipped(tmp_path, capsys):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "model.py").write_text(MODEL)
    (tmp_path / "pkg" / "clean.py").write_text("def f(x):\n    return x * x\n")
    for skipped in (".git", "__pycache__", "venv"):
        (tmp_path / skipped).mkdir()
        (tmp_path / skipped / "bad.py").write_text(MODEL)
    (tmp_path / "venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    assert python_files(str(tmp_path)) == [
        str(tmp_path / "pkg" / "clean.py"),
        str(tmp_path / "pkg" / "model.py"),
    ]
    assert main([str(tmp_path)]) == 1
    out = capsys.readouterr().out.splitlines()
    model = str(tmp_path / "pkg" / "model.py")
    assert len(out) == 2 and all(line.startswith(model) for line in out)


def test_a_file_that_does_not_parse_is_named_and_the_others_are_still_checked(tmp_path, capsys):
    (tmp_path / "a.py").write_text("def f(x:\n")
    (tmp_path / "b.py").write_text(MODEL)
    assert main([str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == 2  # b.py's findings
    assert f"pullback check: skipped {tmp_path / 'a.py'}:1:" in captured.err


def test_a_clean_folder_exits_zero(tmp_path, capsys):
    (tmp_path / "ok.py").write_text("import numpy as np\n\n\ndef f(x):\n    return np.sum(x)\n")
    assert main([str(tmp_path)]) == 0
    assert capsys.readouterr().out == ""


def test_progress_on_long_runs_and_quiet(tmp_path, capsys, monkeypatch):
    for k in range(3):
        (tmp_path / f"m{k}.py").write_text(MODEL)
    clock = iter(float(t) for t in range(0, 100, 3))  # every file seems to take 3 s
    monkeypatch.setattr(cli.time, "monotonic", lambda: next(clock))
    assert main([str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert f"pullback check: 1/3 files ({tmp_path / 'm0.py'})" in err
    assert "pullback check: 3 files in" in err
    clock = iter(float(t) for t in range(0, 100, 3))
    assert main(["--quiet", str(tmp_path)]) == 1
    assert capsys.readouterr().err == ""
