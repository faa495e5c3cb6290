"""The table of every function a registry knows: ``python -m pullback rules``.

>>> rows = rules_table()
>>> ("numpy.exp", "scalar", "numpy_ufuncs") in rows
True

Each row is ``(name, kind, family)``. ``kind`` is ``rule`` (a rule returning
``(y, pullback)``), ``scalar`` (elementwise, from partial derivatives the code generator
can inline) or ``non-differentiable``. A function NumPy (or SciPy, math) exports under
several public names (``numpy.transpose`` and ``numpy.permute_dims``) gets one row per
name. ``docs/rules.md`` is :func:`render_markdown` of the default registry.
"""

from __future__ import annotations

import argparse
import fnmatch
import importlib
import sys
import warnings

from ..registry import NONDIFF, RULE, SCALAR, default_registry

# Public modules whose other names for a registered function are listed too.
_ALIAS_MODULES = ("numpy", "numpy.linalg", "numpy.fft", "math", "scipy.special")
_KINDS = (RULE, SCALAR, NONDIFF)


def _public_names(module_name):
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return []
    names = getattr(module, "__all__", None) or [n for n in dir(module) if not n[:1] == "_"]
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in sorted(set(names)):
            try:
                obj = getattr(module, name)
            except AttributeError:
                continue
            if callable(obj):
                out.append((f"{module_name}.{name}", obj))
    return out


def rules_table(registry=None) -> list[tuple[str, str, str]]:
    """Every registered function as ``(name, kind, family)``, sorted by name."""
    reg = registry if registry is not None else default_registry()
    # The helpers of generated code have rules only so that gradients can be differentiated
    # again; they are not part of what users call.
    rows = {
        (rule.name, rule.kind, rule.family)
        for rule in reg.rules()
        if rule.family != "pullback_runtime"
    }
    registered = {rule.name for rule in reg.rules()}
    for module_name in _ALIAS_MODULES:
        if module_name.startswith("scipy") and module_name not in sys.modules:
            continue  # never import SciPy just to list names
        for name, obj in _public_names(module_name):
            if name in registered:
                continue
            rule = reg.lookup(obj)
            if rule is not None:
                rows.add((name, rule.kind, rule.family))
    return sorted(rows)


def _count_line(rows) -> str:
    counts = {kind: 0 for kind in _KINDS}
    for _, kind, _ in rows:
        counts[kind] = counts.get(kind, 0) + 1
    families = len({family for _, _, family in rows})
    return (
        f"{len(rows)} names in {families} families: {counts[RULE]} with a rule, "
        f"{counts[SCALAR]} elementwise (scalar) rules, {counts[NONDIFF]} non-differentiable."
    )


def render_markdown(registry=None) -> str:
    """The Markdown table of :func:`rules_table` (the contents of ``docs/rules.md``)."""
    rows = rules_table(registry)
    lines = [
        "# Rules",
        "",
        "Every function pullback differentiates without reading its source, and every",
        "function whose result it treats as constant. `rule`: a rule returning",
        "`(y, pullback)`; `scalar`: an elementwise rule given by its partial derivatives",
        "(inlined into scalar loops); `non-differentiable`: the result carries no gradient.",
        "The choices made at points where a function is not differentiable are documented",
        "in each family's module under `src/pullback/rules/`.",
        "",
        "Generated with `python -m pullback rules --markdown > docs/rules.md`; do not edit.",
        "",
        generated_on(),
        "",
        _count_line(rows),
        "",
        "| name | kind | family |",
        "| --- | --- | --- |",
    ]
    lines += [f"| `{name}` | {kind} | {family} |" for name, kind, family in rows]
    return "\n".join(lines) + "\n"


def generated_on() -> str:
    """The versions the listing depends on, as one line of docs/rules.md.

    Which functions exist (``math.cbrt`` from Python 3.11, ``np.trapz`` before NumPy 2.4,
    SciPy's additions) depends on these: the docs test compares the file exactly when the
    installed versions are the ones written here, and only rows of version-specific
    functions may differ otherwise.
    """
    parts = [f"Python {sys.version_info.major}.{sys.version_info.minor}"]
    for label, module in (("NumPy", "numpy"), ("SciPy", "scipy")):
        try:
            version = importlib.import_module(module).__version__
        except ImportError:
            version = "not installed"
        parts.append(f"{label} {'.'.join(version.split('.')[:2])}")
    return "Listed on " + ", ".join(parts) + "."


def render_plain(registry=None, rows=None) -> str:
    """One line per name: the name and its kind, then the counts."""
    rows = rules_table(registry) if rows is None else rows
    width = max((len(name) for name, _, _ in rows), default=0)
    lines = [f"{name:<{width}}  {kind}" for name, kind, _ in rows]
    lines.append(_count_line(rows))
    return "\n".join(lines) + "\n"


def _matches(name: str, pattern: str) -> bool:
    """A glob (``numpy.linalg.*``) matches the whole name; plain text matches a part of it."""
    name, pattern = name.lower(), pattern.lower()
    if any(ch in pattern for ch in "*?["):
        return fnmatch.fnmatchcase(name, pattern)
    return pattern in name


def filter_rows(rows, pattern: str | None):
    """The rows whose name matches ``pattern`` (all rows without one)."""
    return [row for row in rows if pattern is None or _matches(row[0], pattern)]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pullback rules",
        description=(
            "List every function pullback differentiates without reading its source, and "
            "every function whose result it treats as constant: name and kind (rule, scalar "
            "= elementwise rule given by its derivatives, non-differentiable)."
        ),
        epilog=(
            "examples: `pullback rules tanh`, `pullback rules 'numpy.linalg.*'`. "
            "exit status: 0 listed, 1 nothing matches PATTERN, 2 usage error"
        ),
    )
    parser.add_argument(
        "pattern",
        nargs="?",
        metavar="PATTERN",
        help="case-insensitive text contained in the name, or a shell glob matching the "
        "whole dotted name",
    )
    parser.add_argument(
        "--markdown",
        action="store_true",
        help="print the Markdown table of docs/rules.md (all rules; no PATTERN)",
    )
    return parser


def main(argv=None) -> int:
    """``pullback rules [PATTERN] [--markdown]``: print the table of rules."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "rules":
        args = args[1:]
    parser = build_parser()
    try:
        options = parser.parse_args(args)
    except SystemExit as exc:  # --help (0) or a usage error (2), already printed
        return 0 if not exc.code else 2
    if options.markdown:
        if options.pattern is not None:
            print(
                "pullback rules: error: --markdown lists every rule; drop PATTERN", file=sys.stderr
            )
            return 2
        sys.stdout.write(render_markdown())
        return 0
    rows = filter_rows(rules_table(), options.pattern)
    if not rows:
        print(f"pullback rules: no function matches {options.pattern!r}", file=sys.stderr)
        return 1
    sys.stdout.write(render_plain(rows=rows))
    return 0
