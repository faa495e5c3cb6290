"""Command line: ``pullback {demo,check,show,rules}`` (also ``python -m pullback ...``).

Every subcommand takes ``--help``; ``pullback --version`` prints the version. Output is
deterministic (no memory addresses, sorted findings), so it can be compared in tests and CI.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys

from . import __version__

PROG = "pullback"

DESCRIPTION = """\
Source-to-source reverse-mode automatic differentiation for Python and NumPy.

commands:
  demo                        differentiate an example, show the generated code and check the
                              gradient against finite differences (exit 1 on a mismatch)
  check PATH[:FUNCTION] ...   report every construct pullback cannot differentiate, without
                              importing or running the file (exit 0 clean, 1 findings, 2 usage)
  show PATH:FUNCTION          print the forward and reverse code pullback generates for a
                              function (imports the file: its top-level code runs)
  rules [PATTERN]             list the functions with a rule, optionally only those matching

Run `pullback COMMAND --help` for a command's options."""


def _show_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=f"{PROG} show",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Print the Python code pullback generates for a function: the forward sweep\n"
            "(the primal plus what the reverse sweep needs) and the reverse sweep.\n\n"
            "The function is checked statically first; if the check finds something, the\n"
            "findings are printed and the file is NOT imported. Otherwise the file is\n"
            "imported as a module (its top-level code runs, as with `python FILE`, but not\n"
            "its `if __name__ == '__main__':` block), because the transformation resolves\n"
            "names through the function's live globals."
        ),
        epilog="exit status: 0 code printed, 1 the function cannot be differentiated or "
        "importing the file failed, 2 usage error",
    )
    parser.add_argument("target", metavar="PATH:FUNCTION", help="e.g. model.py:Net.loss")
    parser.add_argument(
        "--wrt",
        nargs="+",
        action="extend",  # `--wrt 0 --wrt 1` and `--wrt 0 1` both name two parameters
        default=None,  # not ["0"]: "extend" would append to the default
        metavar="ARG",
        help="the differentiated parameters, by name or position, repeated or listed "
        "(default: 0, the first)",
    )
    return parser


def _load_function(path: str, qualname: str):
    """Import the file ``path`` as a fresh module and return its function ``qualname``."""
    import importlib.util

    folder = os.path.dirname(os.path.abspath(path))
    name = "_pullback_show_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look modules up by name
    sys.path.insert(0, folder)  # the file's own imports resolve as with `python FILE`
    try:
        # What the file prints while it is imported goes to stderr: stdout is the code.
        with contextlib.redirect_stdout(sys.stderr):
            spec.loader.exec_module(module)
    finally:
        sys.path.remove(folder)
    obj = module
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _import_failure(path: str, exc: BaseException) -> str:
    """What went wrong importing ``path``, at the file's own line where it went wrong."""
    import traceback

    mine = os.path.abspath(path)
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == mine]
    where = f" at {path}:{frames[-1].lineno}" if frames else ""
    what = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return (
        f"importing {path} raised {what}{where}. `pullback show` imports the file to find "
        "the function's globals: make its top level importable (put script code under "
        "`if __name__ == '__main__':`), or use `pullback check`, which never imports it"
    )


def show(argv) -> int:
    """``pullback show PATH:FUNCTION [--wrt ARG ...]``."""
    args = _show_parser().parse_args(argv)
    from .check.cli import main as check_main
    from .check.cli import split_target

    path, name = split_target(args.target)
    if name is None:
        print(f"{PROG} show: error: name a function: {args.target}:FUNCTION", file=sys.stderr)
        return 2
    status = check_main([args.target], prog=f"{PROG} show")
    if status:
        return status
    from .api import grad
    from .errors import PullbackError

    try:
        fn = _load_function(path, name)
    except (Exception, SystemExit) as exc:  # the file's own top-level code failed
        print(f"{PROG} show: error: {_import_failure(path, exc)}", file=sys.stderr)
        return 1
    if not callable(fn):
        print(f"{PROG} show: error: {path} defines no function '{name}' at import", file=sys.stderr)
        return 2
    wrt = tuple(int(w) if w.isdigit() else w for w in args.wrt or ["0"])
    try:
        print(grad(fn, wrt=wrt[0] if len(wrt) == 1 else wrt).source)
    except PullbackError as exc:
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


def _demo(argv) -> int:
    from .demo import main

    return main(argv)


def _check(argv) -> int:
    from .check.cli import main

    return main(argv)


def _rules(argv) -> int:
    from .rules.listing import main

    return main(argv)


COMMANDS = {"demo": _demo, "check": _check, "show": show, "rules": _rules}


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    return exc.code if isinstance(exc.code, int) else 2


def _forget_current_directory() -> None:
    """Take the current directory off ``sys.path``.

    ``python -m pullback`` puts it first. Nothing pullback does should import a module from
    there: ``pullback check`` in a folder holding a ``statistics.py`` must not run it.
    """
    here = os.path.realpath(os.curdir)
    sys.path[:] = [p for p in sys.path if p and os.path.realpath(p) != here]


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(
        prog=PROG,
        usage=f"{PROG} [--version] [-h] COMMAND [ARGS]",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    if argv and not argv[0].startswith("-") and argv[0] not in COMMANDS:
        parser.print_usage(sys.stderr)
        known = ", ".join(COMMANDS)
        print(f"{PROG}: error: unknown command {argv[0]!r} (one of: {known})", file=sys.stderr)
        return 2
    if not argv or argv[0] not in COMMANDS:
        try:
            parser.parse_args(argv)
        except SystemExit as exc:  # --help, --version, or a usage error (already printed)
            return _exit_code(exc)
        parser.print_help(sys.stderr)  # no command at all
        return 2
    try:
        return COMMANDS[argv[0]](argv[1:])
    except SystemExit as exc:  # argparse inside a command: --help (0) or a usage error (2)
        return _exit_code(exc)
    except BrokenPipeError:  # `pullback rules | head`: the reader left; no traceback
        # Python would report the failed flush at exit: point stdout at nothing first.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    _forget_current_directory()
    sys.exit(main())
