"""A file of source checked by the static ``pullback check`` and then imported, for the tests
that compare what the static check reports with what ``grad`` refuses."""

from __future__ import annotations

import importlib.util

from pullback.__main__ import main


def check_then_import(tmp_path, capsys, name: str, text: str):
    """``(path, sorted findings, module)``: ``text`` written to ``name.py``, checked by
    ``pullback check`` (each finding without its place), then imported (grad reads the
    functions' source from the file)."""
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    main(["check", str(path)])
    out = capsys.readouterr().out
    found = sorted(line.split(": ", 1)[1] for line in out.splitlines() if ": PB" in line)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return path, found, module
