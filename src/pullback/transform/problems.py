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


def no_rule_for_varied_call(diagnostic, node, callee):
    """PB503: a differentiated value reaches a callee with neither a rule nor Python source
    that the check could not see as a call (``np.r_[x, y]`` calls ``np.r_.__getitem__``)."""
    return diagnostic(
        node,
        "PB503",
        f"a differentiated value reaches {callee}, which has no differentiation rule",
        "pullback differentiates a call through a rule or by transforming Python source; this "
        "object's indexing has neither, so the gradient through it would be lost.",
        "build the array with functions that have rules (np.concatenate, np.stack, "
        "np.column_stack), or register a rule for it with `@pullback.rrule`.",
    )


def varied_attribute_store(diagnostic, node, obj, attr):
    """PB107: ``obj.attr = value`` where ``value`` depends on a differentiated value."""
    return diagnostic(
        node,
        "PB107",
        f"attribute assignment: '{obj}.{attr}' would store a differentiated value",
        "An attribute of an object is outside what pullback differentiates: the function "
        "reads it back (or hands the object to a call that may), and the gradient through "
        "the stored value would be lost there.",
        f"keep the value in a local variable (`{attr} = ...`) and return it or pass it on; "
        "storing values that carry no gradient (counters, shapes, flags) is fine.",
    )


def varied_outside_append(diagnostic, node, receiver):
    """PB106: ``outside.append(v)`` with ``v`` differentiated, on a container the function
    did not create and may read back."""
    return diagnostic(
        node,
        "PB106",
        f"container mutation: '{receiver}.append(...)' adds a differentiated value to a "
        "container from outside the function, which the function reads back",
        "The container is not one the function created, so the gradient through the value "
        "read back from it would be lost.",
        f"build a local list (`{receiver.split('.')[-1]}_local = []`, append to it and use "
        "it), and copy it out at the end if the caller needs it.",
    )
