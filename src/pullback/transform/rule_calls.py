"""What a call's rule declares, for the rewrites of calls into the form their rules take
(:mod:`.solver_closures`, :mod:`.keyword_positions`; :func:`.closures.rewrite_rule_calls`
runs both before the check and the transformation alike).

>>> import numpy as np
>>> from pullback.registry import default_registry
>>> from pullback.source import load_source
>>> def f(x):
...     return np.linalg.cond(x)
>>> fs = load_source(f)
>>> call = fs.tree.body[0].value
>>> rule_extra(fs, fs.tree, default_registry(), "args_receivers")(call) is None
True
"""

from __future__ import annotations

from ..resolve import local_names, resolve_call


def rule_extra(fs, tree, registry, key):
    """``call -> rule.extra[key]`` (``None`` where the callee, resolved as ``fs``'s
    function sees it, has no rule or its rule no such entry)."""
    entries = rule_extras(fs, tree, registry, (key,))
    return lambda call: entries(call)[0]


def rule_extras(fs, tree, registry, keys):
    """``call -> (rule.extra[key] for key in keys)`` from one resolution and one lookup
    of the callee (each ``None`` where it has no rule or its rule no such entry)."""
    names = []  # the tree's local names, found on the first call
    none = (None,) * len(keys)

    def extras(call):
        if not names:
            names.append(local_names(tree))
        try:
            callee = resolve_call(fs, call, names[0])
        except Exception:  # noqa: BLE001 - unresolvable here: left to the checks
            return none
        if callee.kind != "object":
            return none
        try:
            rule = registry.lookup(callee.obj)
        except TypeError:  # (an unhashable callee)
            return none
        if rule is None:
            return none
        return tuple(rule.extra.get(key) for key in keys)

    return extras
