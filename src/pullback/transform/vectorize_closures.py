"""Closures given to ``np.vectorize`` take what they capture as excluded arguments of its
calls (closure conversion, as :mod:`.solver_closures` does for SciPy's ``args``).

A lambda or nested ``def`` that reads the function's variables, vectorized and called::

    def loss(x, p):
        return np.sum(np.vectorize(lambda t: np.sin(p * t))(x))

computes, element by element, what the function would compute calling it per element.
The rule of a np.vectorize object's call differentiates its positional arguments, and a
closure's captured values are none of them. So the closure becomes a function of them too,
excluded from the broadcast (``excluded=``, which NumPy passes to every call as they are,
and whose cotangents the rule sums over the calls), and each call of the object passes them
after its own arguments::

    def _pb_vectorize_3_30(t, p):
        return np.sin(p * t)
    return np.sum(np.vectorize(_pb_vectorize_3_30, excluded={1})(x, p))

which computes the same: the closure reads its variables when the object calls it, during
the object's call, where they are read now. The object is either called where it is made
(``np.vectorize(f)(x)``) or bound once to a name whose every use is a call in the
function's own scope (``v = np.vectorize(f); v(x) + v(2 * x)``, or a nested ``def``
decorated with ``@np.vectorize``, which becomes that assignment), each call passing exactly
the function's positional parameters. Anything else (the object stored, returned or passed
on, ``signature=`` or ``excluded=`` already given, a closure with defaults, ``*args``,
``nonlocal`` writes or calls of other local functions) is left as written, and refused by
the check with its fix (PB404/PB405).

>>> import gast
>>> tree = gast.parse('''
... def loss(x, p):
...     v = np.vectorize(lambda t: p * t)
...     return v(x) + v(x + 1.0)
... ''').body[0]
>>> vectorize_closures_as_arguments(tree, lambda call: True)
True
>>> print(gast.unparse(tree).strip())  # doctest: +NORMALIZE_WHITESPACE
def loss(x, p):
    def _pb_vectorize_3_21(t, p):
        return p * t
    v = np.vectorize(_pb_vectorize_3_21, excluded={1})
    return v(x, p) + v(x + 1.0, p)
"""

from __future__ import annotations

import copy

import gast
import numpy as np

from ..resolve import bound_once, local_names, own_nodes, parent_map, resolve_call
from ..tree_walk import walk
from . import nodes as N
from .closure_values import name_uses
from .solver_closures import converted_def, convertible_reads, nested_defs, statement_of

#: keywords of np.vectorize that leave its function's positional parameters as they are
_KEPT = frozenset({"otypes", "doc", "cache"})
_COMPREHENSIONS = (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)


def convert_vectorize_closures(fs, tree) -> bool:
    """:func:`vectorize_closures_as_arguments` on ``tree`` (``fs``'s function, as the check
    or the transformation has it), for the calls that resolve to ``np.vectorize``."""
    lines = getattr(fs, "lines", None)
    if lines is not None and not any("vectorize" in line for line in lines):
        return False
    names = []

    def is_vectorize(call) -> bool:
        if not names:
            names.append(local_names(tree))
        try:
            callee = resolve_call(fs, call, names[0])
        except Exception:  # noqa: BLE001 - unresolvable here: left to the checks
            return False
        return callee.kind == "object" and callee.obj is np.vectorize

    return vectorize_closures_as_arguments(tree, is_vectorize)


def vectorize_closures_as_arguments(tree, is_vectorize) -> bool:
    """Rewrite (in place) each site of the module docstring in ``tree``'s own scope
    (``is_vectorize(call)``: whether ``call`` makes a np.vectorize object); whether any
    was rewritten."""
    changed = False
    parents = None
    for maker, calls in _sites(tree) + _decorated(tree):
        if parents is None:
            parents = parent_map(tree)
        if not is_vectorize(maker):
            continue
        plan = _plan(tree, maker, calls, parents)
        if plan is not None:
            decorated = getattr(maker, "_pb_decorated", None)
            if decorated is not None:  # the def becomes `name = np.vectorize(converted)`
                _replace_statement(tree, decorated, N.assign(decorated.name, maker, decorated))
            _apply(tree, maker, calls, *plan)
            changed = True
    return changed


def _decorated(tree) -> list:
    """``[(maker, calls)]`` for ``@np.vectorize`` (or ``@np.vectorize(otypes=...)``) on a
    nested ``def`` bound once and only called: ``maker`` is the call the decorator makes,
    ``np.vectorize(name)``, marked with the def (``_pb_decorated``)."""
    out = []
    for d in own_nodes(tree.body):
        if not isinstance(d, gast.FunctionDef) or d is tree or len(d.decorator_list) != 1:
            continue
        dec = d.decorator_list[0]
        if isinstance(dec, gast.Call):
            if dec.args:
                continue
            func, keywords = dec.func, dec.keywords
        else:
            func, keywords = dec, []
        maker = gast.Call(func=func, args=[N.located(N.load(d.name), d)], keywords=keywords)
        if not _plain_maker(maker):
            continue
        calls = _only_called(tree, d.name)
        if calls is not None:
            maker._pb_decorated = d
            out.append((N.located(maker, d), calls))
    return out


def _only_called(tree, name):
    """The calls of ``name``, when it is bound once and only called, in ``tree``'s own
    scope; None otherwise."""
    _, loads = name_uses(tree, name)
    if not loads or not bound_once(tree, name):
        return None
    own = {id(m) for m in own_nodes(tree.body)}
    parents = parent_map(tree)
    calls = [parents.get(u) for u in loads]
    if all(
        id(u) in own and isinstance(c, gast.Call) and c.func is u
        for u, c in zip(loads, calls, strict=True)
    ):
        return calls
    return None


def _replace_statement(tree, old, new) -> None:
    """Put the statement ``new`` where ``old`` is (in whichever body of ``tree`` holds it)."""
    for node in walk(tree):
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list) and any(s is old for s in stmts):
                stmts[next(k for k, s in enumerate(stmts) if s is old)] = new
                return
        for handler in getattr(node, "handlers", None) or []:
            if any(s is old for s in handler.body):
                handler.body[next(k for k, s in enumerate(handler.body) if s is old)] = new
                return


def _sites(tree) -> list:
    """``[(maker, calls)]``: ``np.vectorize(f)(...)`` (the maker called where it is made),
    and ``v = np.vectorize(f)`` with ``v`` bound once and only called (plain calls)."""
    out = []
    for n in own_nodes(tree.body):
        if isinstance(n, gast.Call) and isinstance(n.func, gast.Call):
            if _plain_maker(n.func):
                out.append((n.func, [n]))
        elif (
            isinstance(n, gast.Assign)
            and len(n.targets) == 1
            and isinstance(n.targets[0], gast.Name)
            and isinstance(n.value, gast.Call)
            and _plain_maker(n.value)  # (cheap: most assignments stop here)
        ):
            calls = _only_called(tree, n.targets[0].id)
            if calls is not None:
                out.append((n.value, calls))
    return out


def _plain_maker(maker) -> bool:
    """``np.vectorize(f, otypes=..., ...)``: the function alone, by position."""
    return (
        len(maker.args) == 1
        and isinstance(maker.args[0], (gast.Lambda, gast.Name))
        and all(k.arg in _KEPT for k in maker.keywords)
    )


def _plan(tree, maker, calls, parents):
    """``(function node, captured names)`` for a site to convert, or None."""
    defs, functions = nested_defs(tree)
    value = maker.args[0]
    fn = value if isinstance(value, gast.Lambda) else defs.get(value.id)
    decorated = getattr(maker, "_pb_decorated", None)
    if decorated is not None:  # what it reads, as the def without its decorator
        fn = copy.copy(decorated)
        fn.decorator_list = []
    reads = None if fn is None else convertible_reads(fn, functions)
    if reads is None or any(_names_object(maker, r, parents) for r in reads):
        return None  # left as written: refused by the check with its fix
    captured = sorted(reads & local_names(tree))
    if not captured and decorated is None:
        return None  # (a decorated def that captures nothing still becomes an assignment)
    n = len(fn.args.args) + len(fn.args.posonlyargs)
    if not calls_may_pass(calls, n, captured, parents, tree):
        return None
    return fn, captured


def _names_object(maker, name, parents) -> bool:
    """Whether ``name`` is the name the np.vectorize object ``maker`` is bound to (a
    function that calls its own object would call it without what it captures)."""
    assign = parents.get(maker)
    return isinstance(assign, gast.Assign) and any(
        isinstance(t, gast.Name) and t.id == name for t in assign.targets
    )


def calls_may_pass(calls, n, captured, parents, tree) -> bool:
    """Whether each of ``calls`` passes exactly ``n`` positional arguments (no keywords,
    no ``*``), so that ``captured`` may follow them, and reads there the function's
    variables of those names (:func:`shadowed`)."""
    for call in calls:
        if call.keywords or len(call.args) != n:
            return False
        if any(isinstance(a, gast.Starred) for a in call.args):
            return False
        if shadowed(call, captured, parents, tree):
            return False
    return True


def shadowed(call, captured, parents, tree) -> bool:
    """Whether a comprehension around ``call`` binds one of ``captured`` (the call would
    read its variable, not the function's)."""
    up = parents.get(call)
    while up is not None and up is not tree:
        if isinstance(up, _COMPREHENSIONS):
            for gen in up.generators:
                bound = {t.id for t in walk(gen.target) if isinstance(t, gast.Name)}
                if bound & set(captured):
                    return True
        up = parents.get(up)
    return False


def _apply(tree, maker, calls, fn, captured) -> None:
    value = maker.args[0]
    name = f"_pb_vectorize_{value.lineno}_{value.col_offset}"
    n = len(fn.args.args) + len(fn.args.posonlyargs)
    body, k = statement_of(tree, maker)
    body[k:k] = [converted_def(name, fn, captured)]
    maker.args[0] = N.located(N.load(name), value)
    if captured:
        positions = [N.const(n + j) for j in range(len(captured))]
        excluded = N.located(gast.Set(elts=positions), maker)
        maker.keywords.append(N.located(gast.keyword(arg="excluded", value=excluded), maker))
    for call in calls:
        call.args.extend(N.located(N.load(c), call) for c in captured)
