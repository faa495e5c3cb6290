"""Keyword arguments that name a rule's positional parameters are passed by position.

``stats.t.logpdf(x, df=nu, loc=m, scale=s)`` is ``stats.t.logpdf(x, nu, m, s)``: SciPy
binds both alike. A rule's transformable pullback function takes its parameters under
names of its own (``s0`` for a distribution's first shape), so a call that names them by
keyword could not reach it, and its second derivative was refused. Rules that list the
names of their positional parameters (``rule.extra["positional_names"]``, the call's
leading positional ones included) have such calls rewritten, before the check and the
transformation alike, so that the keywords that continue the positional arguments in
order become positional.

The leading keywords move while each names the next position: Python evaluates keyword
arguments in the order they are written, after the positional ones, so the order of
evaluation stays the same. Keywords written out of that order (``t.logpdf(x, scale=s,
df=nu, loc=m)``) move too, into positional order, when every parameter between them is
given and every keyword argument of the call is an expression whose value cannot depend
on the order of evaluation nor change anything (names, constants, attribute and item
reads, arithmetic on those: :func:`order_free`), or when just one is not and all the
others are constants (``np.bincount(k, minlength=5, weights=np.sin(x))``); otherwise
they stay keywords (``t.logpdf(x, loc=f(), df=g())`` keeps its order, and its
second-order refusal).

>>> import gast
>>> tree = gast.parse("def f(x, nu):\\n    return t_logpdf(x, df=nu, scale=2.0)\\n").body[0]
>>> declared = lambda call: (("x", "df", "loc", "scale"), None)
>>> keywords_in_place(tree, declared)
True
>>> print(gast.unparse(tree).strip())
def f(x, nu):
    return t_logpdf(x, nu, scale=2.0)
"""

from __future__ import annotations

import gast

from ..lazy_patterns import LazyPattern
from ..registry import default_registry
from ..resolve import own_nodes
from .rule_calls import rule_extras

# A keyword argument somewhere in the text: `(name=` or `, name=` (not `==`)
_KEYWORD_ARGUMENT = LazyPattern(r"[(,]\s*[^\W\d]\w*\s*=(?!=)")


def convert_keyword_positions(fs, tree, registry=None) -> bool:
    """:func:`keywords_in_place` on ``tree`` for the rules of ``registry``."""
    lines = getattr(fs, "lines", None)
    if lines is not None and not _KEYWORD_ARGUMENT.search("".join(lines)):
        return False  # (no keyword argument: nothing to resolve)
    if registry is None:
        registry = default_registry()
    declared = rule_extras(fs, tree, registry, ("positional_names", "positional_defaults"))
    return keywords_in_place(tree, declared)


def keywords_in_place(tree, declared) -> bool:
    """Move, in each call of ``tree``'s own scope with keywords, the keywords that
    continue its positional arguments into them; whether any moved. ``declared(call)``
    gives ``(names, defaults)``: the names of the positional parameters in order, and
    (a dict or None) constant defaults of parameters a call may skip: a keyword after
    them (``logsumexp(a, b=w)``) moves with the defaults written in the gap
    (``logsumexp(a, None, w)``), which evaluates nothing more."""
    changed = False
    for call in own_nodes(tree.body):
        if not isinstance(call, gast.Call) or not call.keywords:
            continue
        if any(isinstance(a, gast.Starred) for a in call.args):
            continue
        if any(k.arg is None for k in call.keywords):
            continue
        names, defaults = declared(call)
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
        changed = _reorder(call, names) or changed
        while defaults and call.keywords and _fill_gap(call, names, defaults):
            changed = True
    return changed


def _fill_gap(call, names, defaults) -> bool:
    """Move ``call``'s first keyword into its position when every parameter before it
    that the call skips has a constant default in ``defaults`` (written there) and is not
    given later by keyword; the first keyword is evaluated first of the keywords already,
    so the order stays."""
    name = call.keywords[0].arg
    rest = names[len(call.args) :]
    if name not in rest:
        return False
    gap = rest[: rest.index(name)]
    if not gap or not all(g in defaults for g in gap):
        return False
    if any(k.arg in gap for k in call.keywords):
        return False  # (given later by keyword: its value, not the default)
    call.args.extend(gast.Constant(defaults[g], None) for g in gap)
    call.args.append(call.keywords.pop(0).value)
    return True


def _reorder(call, names) -> bool:
    """Move the keywords of ``call`` that name the next positions (in any written order)
    into positional order, when every keyword argument of the call is :func:`order_free`;
    whether any moved."""
    given = {k.arg: k for k in call.keywords}
    run = []
    for name in names[len(call.args) :]:
        if name not in given:
            break
        run.append(given[name])
    if not run or not _reorderable(call.keywords):
        return False
    moved = {id(k) for k in run}
    call.args.extend(k.value for k in run)
    call.keywords = [k for k in call.keywords if id(k) not in moved]
    return True


def _reorderable(keywords) -> bool:
    """Whether the order ``keywords`` are evaluated in cannot matter: each is
    :func:`order_free`, or one is not (``weights=np.sin(x)``, a call) and all the others
    are constants (``minlength=5``), whose values no evaluation can change."""
    impure = [k for k in keywords if not order_free(k.value)]
    if not impure:
        return True
    return len(impure) == 1 and all(_constant(k.value) for k in keywords if k is not impure[0])


def _constant(node) -> bool:
    """A constant, possibly negated (``-1``)."""
    if node.__class__ is gast.UnaryOp:
        node = node.operand
    return node.__class__ is gast.Constant


def order_free(node) -> bool:
    """Whether evaluating ``node`` can neither have an effect nor see one: a name, a
    constant, an attribute or item read of such, arithmetic and comparisons on them.

    >>> order_free(gast.parse("a.b[0] * 2 + -c", mode="eval").body)
    True
    >>> order_free(gast.parse("a + f(b)", mode="eval").body)
    False
    """
    cls = node.__class__
    if cls is gast.Name or cls is gast.Constant:
        return True
    if cls is gast.Attribute:
        return order_free(node.value)
    if cls is gast.Subscript:
        return order_free(node.value) and order_free(node.slice)
    if cls is gast.BinOp:
        return order_free(node.left) and order_free(node.right)
    if cls is gast.UnaryOp:
        return order_free(node.operand)
    if cls is gast.Compare:
        return order_free(node.left) and all(order_free(c) for c in node.comparators)
    if cls is gast.Tuple:
        return all(order_free(e) for e in node.elts)
    return False
