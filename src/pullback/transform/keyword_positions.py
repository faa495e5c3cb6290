"""Keyword arguments that name a rule's positional parameters are passed by position.

``stats.t.logpdf(x, df=nu, loc=m, scale=s)`` is ``stats.t.logpdf(x, nu, m, s)``: SciPy
binds both alike. A rule's transformable pullback function takes its parameters under
names of its own (``s0`` for a distribution's first shape), so a call that names them by
keyword could not reach it, and its second derivative was refused. Rules that list the
names of their positional parameters (``rule.extra["positional_names"]``, the call's
leading positional ones included) have such calls rewritten, before the check and the
transformation alike, so that the keywords that continue the positional arguments in
order become positional.

Only the leading keywords move, while each names the next position: Python evaluates
keyword arguments in the order they are written, after the positional ones, so the order
of evaluation stays the same (``t.logpdf(x, loc=m, df=nu)`` keeps its keywords).

>>> import gast
>>> tree = gast.parse("def f(x, nu):\\n    return t_logpdf(x, df=nu, scale=2.0)\\n").body[0]
>>> names = lambda call: ("x", "df", "loc", "scale")
>>> keywords_in_place(tree, names)
True
>>> print(gast.unparse(tree).strip())
def f(x, nu):
    return t_logpdf(x, nu, scale=2.0)
"""

from __future__ import annotations

import re

import gast

from ..registry import default_registry
from ..resolve import own_nodes
from .rule_calls import rule_extra

# A keyword argument somewhere in the text: `(name=` or `, name=` (not `==`)
_KEYWORD_ARGUMENT = re.compile(r"[(,]\s*[A-Za-z_]\w*\s*=(?!=)")


def convert_keyword_positions(fs, tree, registry=None) -> bool:
    """:func:`keywords_in_place` on ``tree`` for the rules of ``registry``."""
    lines = getattr(fs, "lines", None)
    if lines is not None and not _KEYWORD_ARGUMENT.search("".join(lines)):
        return False  # (no keyword argument: nothing to resolve)
    if registry is None:
        registry = default_registry()
    return keywords_in_place(tree, rule_extra(fs, tree, registry, "positional_names"))


def keywords_in_place(tree, positional_names) -> bool:
    """Move, in each call of ``tree``'s own scope with keywords, the keywords that
    continue its positional arguments (``positional_names(call)`` gives the names in
    order) into them; whether any moved."""
    changed = False
    for call in own_nodes(tree.body):
        if not isinstance(call, gast.Call) or not call.keywords:
            continue
        if any(isinstance(a, gast.Starred) for a in call.args):
            continue
        if any(k.arg is None for k in call.keywords):
            continue
        names = positional_names(call)
        if not names:
            continue
        # the first keywords, while each names the next position: they are evaluated
        # first already (after the positional arguments), so the order stays Python's
        while (
            call.keywords
            and len(call.args) < len(names)
            and call.keywords[0].arg == names[len(call.args)]
        ):
            call.args.append(call.keywords.pop(0).value)
            changed = True
    return changed
