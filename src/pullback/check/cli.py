"""``pullback check path/to/file.py[:function] | DIR ...`` — the check as a linter.

The file is parsed, never imported or run, nor is any module of its folder: module-level
names are resolved statically (see :mod:`pullback.check.static`). Without ``:function``
every top-level function and every method of the file's classes is checked, except rule
implementations (decorated with ``@rrule(...)``) and functions that the file gives a rule
(their bodies are never transformed). A folder is checked file by file (each file parsed
once), skipping hidden folders, ``__pycache__`` and virtual environments, with progress on
standard error during long runs. Each finding is printed as::

    path:line:col: CODE message

sorted by place. Exit status: 0 when nothing was found, 1 when something was, 2 for a
usage error, a missing file or a file that does not parse.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

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
(outer.inner); without it every top-level function and every method of the file is
checked, except rule implementations. PATH may be a folder: every .py file under it is
checked (hidden folders, __pycache__ and virtual environments are skipped), with
progress on standard error when the run is long. The functions a checked function calls
are checked too. Each finding is printed as `path:line:col: CODE message`, sorted;
docs/limitations.md explains every CODE and its rewrite."""

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
    parser.add_argument(
        "--quiet", action="store_true", help="no progress lines on standard error"
    )
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
    module = _parse(path)
    if name is not None:
        function = module.find(name)
        if function is None:
            raise _UsageError(f"{path}: no function named '{name}'")
        functions = [function]
    else:
        functions = [
            fn
            for fn in module.top_level_functions() + module.methods()
            if not fn.is_rule_definition and not fn.has_rule
        ]
    env = StaticEnvironment()
    found: list[Diagnostic] = []
    for function in functions:
        if function in seen:
            continue
        found += check_source(function.source(), registry, environment=env, seen=seen)
    return found


def _parse(path: str) -> FileModule:
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise _UsageError(f"cannot read {path}: {exc}") from None
    try:
        return FileModule(path, text)
    except SyntaxError as exc:
        raise _UsageError(f"{path}:{exc.lineno}:{exc.offset}: cannot parse: {exc.msg}") from None


# Folders a tree walk never enters: not the user's code.
_SKIPPED_FOLDERS = frozenset({"__pycache__", "site-packages", "node_modules"})


def python_files(folder: str) -> list[str]:
    """The ``.py`` files under ``folder``, sorted, outside hidden folders, ``__pycache__``
    and virtual environments (a folder with a ``pyvenv.cfg``)."""
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(
            d
            for d in dirs
            if not d.startswith(".")
            and d not in _SKIPPED_FOLDERS
            and not os.path.isfile(os.path.join(root, d, "pyvenv.cfg"))
        )
        found += [os.path.join(root, f) for f in sorted(files) if f.endswith(".py")]
    return found


class _Progress:
    """``checked 120/800 files`` on standard error, at most once a second, once the run
    has taken two seconds (short runs print nothing)."""

    def __init__(self, total: int, quiet: bool):
        self.total = total
        self.quiet = quiet or total < 2
        self.start = time.monotonic()
        self.last = self.start
        self.shown = False

    def update(self, done: int, path: str) -> None:
        now = time.monotonic()
        if self.quiet or now - self.start < 2.0 or now - self.last < 1.0:
            return
        self.last = now
        self.shown = True
        sys.stderr.write(f"pullback check: {done}/{self.total} files ({path})\n")

    def finish(self) -> None:
        if self.shown:
            seconds = time.monotonic() - self.start
            sys.stderr.write(f"pullback check: {self.total} files in {seconds:.1f} s\n")


def _check_folder(folder: str, registry, seen: set, quiet: bool):
    """Every file under ``folder``; a file that cannot be read or parsed is named on
    standard error and the others are still checked (``failed`` is then true)."""
    files = python_files(folder)
    progress = _Progress(len(files), quiet)
    found: list[Diagnostic] = []
    failed = False
    for k, path in enumerate(files, 1):
        try:
            found += _check_target(path, registry, seen)
        except _UsageError as exc:
            sys.stderr.write(f"pullback check: skipped {exc}\n")
            failed = True
        progress.update(k, path)
    progress.finish()
    return found, failed


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
        options = build_parser().parse_args(args)
    except SystemExit as exc:  # --help (0) or a usage error (2), already printed
        return 0 if not exc.code else 2
    registry = default_registry()
    seen: set = set()
    diagnostics: list[Diagnostic] = []
    failed = False
    try:
        for target in options.targets:
            if os.path.isdir(target):
                found, skipped = _check_folder(target, registry, seen, options.quiet)
                diagnostics += found
                failed = failed or skipped
            else:
                diagnostics += _check_target(target, registry, seen)
    except _UsageError as exc:
        sys.stderr.write(f"{prog}: error: {exc}\n")
        return 2
    unique = {(d.filename, d.line, d.col, d.code, d.message): d.header() for d in diagnostics}
    for key in sorted(unique):
        print(unique[key])
    if failed:
        return 2
    return 1 if unique else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
