"""Facts that only the transformation can see, reported like the check's diagnostics."""

from __future__ import annotations


def attribute_of_varied(diagnostic, node):
    """PB501: ``obj.attr`` where ``obj`` depends on a differentiated value."""
    return diagnostic(
        node,
        "PB501",
        f"attribute '{node.attr}' of a differentiated value cannot be differentiated",
        "pullback differentiates arrays, scalars and containers of them, not arbitrary objects.",
        "pass the attribute's value as an argument (or in a dict) instead of the object.",
    )


def varied_keyword(diagnostic, node, name, callee):
    """PB502: a keyword argument of a rule that depends on a differentiated value."""
    return diagnostic(
        node,
        "PB502",
        f"keyword argument '{name}' of {callee} depends on a differentiated value",
        "Rules differentiate positional arguments only; a keyword argument would silently "
        "get no gradient.",
        f"pass '{name}' positionally if the function accepts it, or register a rule that "
        "takes it positionally.",
    )
