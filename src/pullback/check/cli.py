"""``pullback check path/to/file.py[:function] ...`` — the check as a linter.

The file is parsed, never imported or run, nor is any module of its folder: module-level
names are resolved statically (see :mod:`pullback.check.static`). Without ``:function``
every top-level function is checked, except rule implementations (decorated with
``@rrule(...)``) and functions that the file gives a rule (their bodies are never
transformed). Each finding is printed as::

    path:line:col: CODE message

sorted by place. Exit status: 0 when nothing was found, 1 when something was, 2 for a
usage error, a missing file or a file that does not parse.
"""

from __future__ import annotations

import argparse
import os
import sys

from ..errors import Diagnostic
from ..registry import default_registry
from . import check_source
from .static import FileModule, StaticEnvironment

DESCRIPTION = """\
Check functions for constructs that pullback cannot differentiate, like a linter.

The file is parsed, never imported or run, and no module from its folder or from the
current directory is imported: module-level names are resolved statically (imports of
NumPy, SciPy, math and a few standard modules are resolved; other names are unknown, and
calls through them are not reported).

FUNCTION may name a top-level function, a method (Class.method) or a nested function
(outer.inner); without it every top-level function of the file is checked, except rule
implementations. The functions a checked function calls are checked too. Each finding is
printed as `path:line:col: CODE message`, sorted; docs/limitations.md explains every CODE
and its rewrite."""

EPILOG = """\
exit status:
  0  nothing found
  1  at least one finding
  2  usage error, missing file, unknown function or a file that does not parse"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pullback check",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("targets", nargs="+", metavar="PATH[:FUNCTION]")
    return parser


def split_target(target: str) -> tuple[str, str | None]:
    """``file.py:name`` -> (``file.py``, ``name``); a bare path -> (path, None)."""
    path, sep, name = target.rpartition(":")
    if sep and path and name and all(part.isidentifier() for part in name.split(".")):
        return path, name
    return target, None


def _check_target(target: str, registry, seen: set) -> list[Diagnostic]:
    path, name = split_target(target)
    if os.path.isdir(path):
        raise _UsageError(f"{path} is a folder: name a Python file, e.g. {path}/model.py")
    if not os.path.isfile(path):
        raise _UsageError(f"no such file: {path}")
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise _UsageError(f"cannot read {path}: {exc}") from None
    try:
        module = FileModule(path, text)
    except SyntaxError as exc:
        raise _UsageError(f"{path}:{exc.lineno}:{exc.offset}: cannot parse: {exc.msg}") from None
    if name is not None:
        function = module.find(name)
        if function is None:
            raise _UsageError(f"{path}: no function named '{name}'")
        functions = [function]
    else:
        functions = [
            fn
            for fn in module.top_level_functions()
            if not fn.is_rule_definition and not fn.has_rule
        ]
    env = StaticEnvironment()
    found: list[Diagnostic] = []
    for function in functions:
        if function in seen:
            continue
        found += check_source(function.source(), registry, environment=env, seen=seen)
    return found


class _UsageError(Exception):
    pass


def main(argv: list[str], prog: str = "pullback check") -> int:
    """Run the checker on the targets in ``argv`` (a leading ``check`` is ignored).

    ``prog`` starts the error messages (``pullback show`` checks through this function).
    """
    args = list(argv)
    if args and args[0] == "check" and not os.path.isfile("check"):
        args = args[1:]
    try:
        targets = build_parser().parse_args(args).targets
    except SystemExit as exc:  # --help (0) or a usage error (2), already printed
        return 0 if not exc.code else 2
    registry = default_registry()
    seen: set = set()
    diagnostics: list[Diagnostic] = []
    try:
        for target in targets:
            diagnostics += _check_target(target, registry, seen)
    except _UsageError as exc:
        sys.stderr.write(f"{prog}: error: {exc}\n")
        return 2
    unique = {(d.filename, d.line, d.col, d.code, d.message): d.header() for d in diagnostics}
    for key in sorted(unique):
        print(unique[key])
    return 1 if unique else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
