"""Facts that only the transformation can see, reported like the check's diagnostics."""

from __future__ import annotations

import ast

import gast

from ..call_sites import RANDOM_DRAW_WHY, random_draw_message
from ..check import LiveEnvironment, codes
from ..check.call_targets import foreign_call_text
from ..check.mutation_fixes import outside_append_texts
from ..registry import REFUSED_WHEN_VARIED
from ..resolve import parent_map
from ..tree_walk import lean_nodes, walk


def attribute_of_varied(diagnostic, node):
    """PB501: ``obj.attr`` where ``obj`` depends on a differentiated value."""
    return diagnostic(
        node,
        "PB501",
        f"attribute '{node.attr}' of a differentiated value cannot be differentiated",
        "pullback differentiates arrays, scalars and containers of them, not arbitrary objects.",
        "pass the attribute's value as an argument (or in a dict) instead of the object.",
    )


RUN_TIME_CALL = "a call found at run time"


def varied_keyword(diagnostic, node, name, callee, fn=None, aliases=None):
    """PB502: a keyword argument of a rule (or of a call found at run time, ``callee`` is
    :data:`RUN_TIME_CALL`) that depends on a differentiated value. ``fn``: the rule's
    function, whose signature says how the argument can be given by position
    (:func:`keyword_fix`); ``aliases``: the rule's ``keyword_aliases`` (np.clip's
    keyword-only ``min`` is its positional ``a_min``)."""
    if callee == RUN_TIME_CALL:
        return diagnostic(
            node,
            "PB502",
            f"keyword argument '{name}' of {callee} depends on a differentiated value",
            "A method of a value, or a function held in a variable, is found when the call "
            "runs, and its pullback gives cotangents to the positional arguments only: the "
            "keyword argument would silently get no gradient.",
            f"pass '{name}' positionally if the callee accepts it, or call a function of "
            "your own that takes it positionally (for a named tuple, `Pair(p.w, v)` "
            "instead of `p._replace(b=v)`).",
        )
    return diagnostic(
        node,
        "PB502",
        f"keyword argument '{name}' of {callee} depends on a differentiated value",
        "Rules differentiate positional arguments only; a keyword argument would silently "
        "get no gradient.",
        keyword_fix(fn, name, callee, aliases),
    )


def keyword_fix(fn, name, callee, aliases=None) -> str:
    """The fix of a PB502 for keyword ``name`` of ``fn`` (called as ``callee``), from its
    real signature, so that the call it suggests binds: the argument's place where the
    parameter can be given by position (or its alias's, for a keyword-only one that has
    a positional twin), a rule of the user's own where it cannot.

    >>> import numpy as np
    >>> keyword_fix(np.clip, "a_min", "np.clip")
    "pass 'a_min' by position, as argument 2 of np.clip (np.clip(a, a_min, ...))."
    >>> keyword_fix(np.clip, "min", "np.clip", {"min": "a_min"})[:61]
    "'min' is keyword-only in np.clip: pass the same bound as 'a_m"
    """
    import inspect  # (here: only a refusal needs it)

    try:
        params = list(inspect.signature(fn).parameters.values()) if fn is not None else None
    except (TypeError, ValueError):
        params = None
    by_name = {p.name: k for k, p in enumerate(params or ())}
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)

    def place(param: str) -> str | None:
        k = by_name.get(param)
        if k is None or any(p.kind not in positional for p in params[: k + 1]):
            return None
        shown = ", ".join(p.name for p in params[: k + 1])
        return f"as argument {k + 1} of {callee} ({callee}({shown}, ...))"

    if params is not None:
        where = place(name)
        if where is not None:
            return f"pass '{name}' by position, {where}."
        twin = (aliases or {}).get(name)
        where = place(twin) if twin else None
        if where is not None:
            return (
                f"'{name}' is keyword-only in {callee}: pass the same bound as '{twin}', by "
                f"position, {where}."
            )
    return (
        f"'{name}' cannot be given to {callee} by position: register a rule "
        "(`@pullback.rrule`) for a function of your own that takes it positionally and "
        f"calls {callee}."
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


def as_written(fs, node) -> str:
    """The text of ``node`` as the user wrote it (``params["W1"]``, not gast's
    ``params['W1']``): its segment of the user's line where the node has one place on one
    line that reads as an expression, else the node unparsed."""
    line = getattr(node, "lineno", None)
    end = getattr(node, "end_col_offset", None)
    if line is not None and end is not None and getattr(node, "end_lineno", line) == line:
        text = fs.file_line(fs.first_line + line - 1)
        segment = text[node.col_offset + fs.indent : end + fs.indent].strip()
        try:
            ast.parse(segment, mode="eval")
        except SyntaxError:
            segment = ""
        if segment:
            return segment
    return gast.unparse(node).strip()


def varied_attribute_store(diagnostic, node, obj, attr, key=None):
    """PB107: ``obj.attr = value`` where ``value`` depends on a differentiated value
    (``attr`` ``<name>`` for ``setattr(obj, name, value)``, a name known when it runs);
    ``key``: the store is ``obj.attr[key] = value``, into the container the attribute holds
    (which may be another's: ``self.params = params`` in ``__init__``)."""
    local = "value" if attr.startswith("<") else attr
    fix = (
        f"keep the value in a local variable (`{local} = ...`) and return it or pass it on; "
        "storing values that carry no gradient (counters, shapes, flags) is fine."
    )
    if key is not None:
        fix = (
            f"on an object this function builds, store a new container in the attribute "
            f"instead of changing the one it holds: `{local} = dict({obj}.{attr})` (or "
            f"`list(...)`), `{local}[{key}] = ...`, `{obj}.{attr} = {local}`; on an object "
            f"from outside, {fix}"
        )
    return diagnostic(
        node,
        "PB107",
        f"attribute assignment: '{obj}.{attr}' would store a differentiated value",
        "An attribute of an object is outside what pullback differentiates: the function "
        "reads it back (or hands the object to a call that may), and the gradient through "
        "the stored value would be lost there.",
        fix,
    )


def varied_outside_append(diagnostic, node, receiver, value="v"):
    """PB106: ``outside.append(v)`` with ``v`` differentiated, on a container the function
    did not create and may read back, or on a list held inside another container
    (check/mutation_fixes.py words it, for ``pullback check`` too)."""
    return diagnostic(node, "PB106", *outside_append_texts(receiver, value))


def calls_and_sets(nodes) -> list:
    """The calls and set displays among ``nodes`` (``lean_nodes`` of a tree), in their
    order: the five checks below look at nothing else (no class derives from those), so a
    builder filters its walk once instead of each check visiting every node."""
    call, set_ = gast.Call, gast.Set
    return [n for n in nodes if n.__class__ is call or n.__class__ is set_]


def foreign_varied_calls(tree, is_varied, is_needed, registry, diagnostic, nodes=None) -> list:
    """PB301 for every call in ``tree`` that a differentiated value reaches (an argument
    ``is_varied``) and whose result the derivative needs (an assigned name ``is_needed``,
    or a call that is not a statement's whole value), when its callee has neither a rule
    nor Python source to transform. The check leaves these calls of the differentiated
    function to here, so that a call no gradient flows through (a helper object built
    from settings, a plotting call) just runs; every call a gradient would have to cross
    is refused, whatever the shape of its statement. ``nodes``: ``lean_nodes(tree)`` when
    the caller has it (the three checks here share one walk)."""
    found = []
    env = LiveEnvironment()
    parents = None  # mapped only when a call gets that far (most have a rule)
    for node in lean_nodes(tree) if nodes is None else nodes:
        callee = getattr(node, "pb_callee", None) if isinstance(node, gast.Call) else None
        if callee is None or callee.kind != "object" or registry.lookup(callee.obj) is not None:
            continue
        if callee.name.endswith(".__getitem__"):
            continue  # an object's own indexing: PB503 says it better
        parts = list(node.args) + [k.value for k in node.keywords]
        if not any(isinstance(p, gast.Name) and is_varied(p.id) for p in parts):
            continue
        if parents is None:
            parents = parent_map(tree)
        statement = parents.get(node)
        if isinstance(statement, gast.Expr):
            continue  # its result is dropped; what it does to its arguments is judged apart
        if isinstance(statement, gast.Assign) and statement.value is node:
            assigned = [
                n.id for t in statement.targets for n in walk(t) if isinstance(n, gast.Name)
            ]
            if not any(is_needed(name) for name in assigned):
                continue
        kind = env.classify(callee.obj, registry)[0]
        if kind in ("foreign", "library", "nosource"):
            message, fix = foreign_call_text(callee.obj, kind, env.failures.get(callee.obj))
            found.append(diagnostic(node.func, "PB301", message, codes.why("PB301"), fix))
    return found


def call_varied_values_through_call_method(tree, is_active, nodes=None) -> None:
    """``layer(x)`` where the value ``layer`` itself depends on a differentiated value
    becomes ``layer.__call__(x)``, in place: a method call, whose pullback gives the
    receiver its cotangent (a dataclass or named tuple with a ``__call__`` method, e.g. a
    layer passed in as the differentiated argument). A receiver that is not such a record
    (a closure carrying a differentiated value) is refused when the call runs
    (dynamic_calls.call_method), as :func:`varied_function_values` refuses it here."""
    from ..resolve import Callee

    for node in lean_nodes(tree) if nodes is None else nodes:
        callee = getattr(node, "pb_callee", None) if isinstance(node, gast.Call) else None
        if callee is None or callee.kind in ("object", "method", "internal"):
            continue
        if isinstance(node.func, gast.Name) and is_active(node.func.id):
            receiver = node.func
            node.func = gast.copy_location(
                gast.Attribute(value=receiver, attr="__call__", ctx=gast.Load()), receiver
            )
            node.pb_callee = Callee("method", name="__call__", receiver=receiver)


def varied_function_values(tree, is_active, diagnostic, nodes=None) -> list:
    """PB504 for every call of a function value found at run time (``f(y)`` with ``f`` a
    variable) when the function value itself depends on a differentiated value (a closure
    made from one, a pullback): the gradient through what it captured would be lost."""
    found = []
    for node in lean_nodes(tree) if nodes is None else nodes:
        callee = getattr(node, "pb_callee", None) if isinstance(node, gast.Call) else None
        if callee is None or callee.kind in ("object", "method", "internal"):
            continue
        if isinstance(node.func, gast.Name) and is_active(node.func.id):
            found.append(
                diagnostic(
                    node.func,
                    "PB504",
                    f"'{callee.name}' is a function value that depends on a differentiated value",
                    "A function made from a differentiated value (a closure that captured "
                    "it) carries that value inside; the gradient through what it captured "
                    "would be lost.",
                    "call a function defined with `def` and pass the differentiated value "
                    "as an argument.",
                )
            )
    return found


def varied_sets(tree, is_active, diagnostic, nodes=None) -> list:
    """PB505 for every set display ``{a, b}`` holding a differentiated value: a set orders
    its items by their hashes and merges equal ones, so a gradient reaching an item has no
    defined element to go back to (and a zero would be silently wrong)."""
    found = []
    for node in lean_nodes(tree) if nodes is None else nodes:
        if not isinstance(node, gast.Set):
            continue
        if any(isinstance(e, gast.Name) and is_active(e.id) for e in node.elts):
            found.append(
                diagnostic(
                    node,
                    "PB505",
                    "a set of differentiated values",
                    "A set orders its items by their hashes and merges equal ones, so the "
                    "gradient reaching an item has no defined element to go back to.",
                    "use a list or a tuple (`[a, b]`), or `sorted(...)` of them for a fixed order.",
                )
            )
    return found


def varied_random_draws(tree, is_varied, registry, diagnostic, nodes=None) -> list:
    """PB506 for every call of a random draw that moves with its parameters
    (``rng.normal(mu, sigma)`` through ``np.random.normal``, rules/numpy_random.py) which a
    differentiated value reaches: the draw is declared non-differentiable, and a zero
    gradient would be wrong. (A draw found only at run time, ``rng.normal`` of a local
    generator, is refused when its pullback runs: dynamic_calls.call_method.)"""
    found = []
    for node in lean_nodes(tree) if nodes is None else nodes:
        callee = getattr(node, "pb_callee", None) if isinstance(node, gast.Call) else None
        if callee is None or callee.kind != "object":
            continue
        rule = registry.lookup(callee.obj)
        fix = rule.extra.get(REFUSED_WHEN_VARIED) if rule is not None else None
        parts = list(node.args) + [k.value for k in node.keywords]
        if fix and any(isinstance(p, gast.Name) and is_varied(p.id) for p in parts):
            found.append(random_draw_problem(diagnostic, node, rule.name, fix))
    return found


def random_draw_problem(diagnostic, node, name, fix):
    """PB506: a differentiated value reaches the random draw ``name``."""
    return diagnostic(node, "PB506", random_draw_message(name), RANDOM_DRAW_WHY, f"{fix}.")
