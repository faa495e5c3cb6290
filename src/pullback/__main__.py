"""Command line: ``python -m pullback {demo,check,rules}``."""

from __future__ import annotations

import sys

USAGE = """usage: python -m pullback COMMAND [ARGS]

commands:
  demo                         differentiate an example; show the generated code and check
                               the gradient against finite differences
  check PATH[:FUNCTION] ...    report every construct pullback cannot differentiate, without
                               running the file (exit 1 when it finds any)
  rules [--markdown]           list every function with a rule or a non-differentiable entry
"""


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command == "demo":
        from .demo import main as demo

        return demo(rest)
    if command == "check":
        from .check.cli import main as check

        return check(rest)
    if command == "rules":
        from .rules.listing import main as rules

        return rules(rest)
    print(f"unknown command {command!r}\n\n{USAGE}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
