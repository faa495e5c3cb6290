"""Closure factories defined inside the differentiated function, inlined where they are called.

A nested ``def make(a): ...; return inner`` (or ``return lambda ...``) that builds and
returns a closure, called as ``h = make(...)`` with ``h`` bound once and only called,
is rewritten at the call: the parameters become assignments of the call's arguments,
``make``'s statements follow (its local names renamed so that they are the enclosing
function's own), and ``inner`` becomes a nested ``def h(...)``. ``h`` is then a nested
function that is only called, which pullback differentiates (transform/closures.py), with
gradients reaching what ``make`` computed and what ``inner`` captures.

This is what Python computes: the closure reads the cells ``make`` left when ``h`` is
called, and after the rewrite ``h`` reads the renamed variables, which nothing but the
inlined statements assign. ``make`` stays where it is if anything else uses it (the check
then reports that use as before).

The check (PB405) and the transformation both run this rewrite first, so they see the
same function.

>>> import gast
>>> tree = gast.parse('''
... def f(x):
...     def make(a):
...         c = 2 * a
...         return lambda y: c * y
...     h = make(x)
...     return h(x)
... ''').body[0]
>>> inline_nested_factories(tree)
True
>>> print(gast.unparse(tree).strip())  # doctest: +NORMALIZE_WHITESPACE
def f(x):
    make_a = x
    make_c = 2 * make_a
    def h(y):
        return make_c * y
    return h(x)
"""

from __future__ import annotations

import copy

import gast

from .resolve import SCOPES, bound_once, own_nodes
from .source_lambdas import lambda_as_def
from .tree_walk import walk

_COMPREHENSIONS = (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)


def inline_nested_factories(tree) -> bool:
    """Inline the sites of ``tree``'s closure factories (in place); whether any changed."""
    if not any(isinstance(s, gast.FunctionDef) for s in _own_statements(tree.body)):
        return False  # the common case: no nested def at all
    factories = {
        d.name: d
        for d in _own_statements(tree.body)
        if isinstance(d, gast.FunctionDef) and _returned_closure(d) is not None
    }
    factories = {n: d for n, d in factories.items() if bound_once(tree, n)}
    if not factories:
        return False
    taken = _all_names(tree)
    changed = False
    for name, factory in factories.items():
        if not _inline_sites(tree, name, factory, taken):
            continue
        changed = True
        if not any(
            isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load)
            for n in walk(tree)
        ):
            _remove_definition(tree, factory)
    return changed


def _own_statements(stmts):
    """The statements of a body, descending into branches and loops, not nested scopes."""
    for block in _blocks(stmts):
        yield from block


def _blocks(stmts):
    """Every statement list of a body: itself, then those of its branches, loops, ``try``
    bodies and ``except`` handlers (a factory call in a handler is a site like any other),
    not those of nested scopes."""
    yield stmts
    for s in stmts:
        if isinstance(s, SCOPES):
            continue
        for field in ("body", "orelse", "finalbody"):
            yield from _blocks(getattr(s, field, None) or [])
        for handler in getattr(s, "handlers", None) or []:
            yield from _blocks(handler.body)


def _returned_closure(factory):
    """``(inner def or lambda, statements before the return)`` when ``factory``'s body is
    statements without ``return``/``yield`` followed by ``return inner`` (a ``def`` of its
    own scope, bound once) or ``return lambda ...``; None otherwise."""
    args = factory.args
    if factory.decorator_list or args.vararg or args.kwarg or args.posonlyargs:
        return None
    if any(
        d is not None and not isinstance(d, gast.Constant) for d in args.defaults + args.kw_defaults
    ):
        return None  # a default computed when `make` is defined: not inlined
    if not factory.body or not isinstance(factory.body[-1], gast.Return):
        return None
    body, ret = factory.body[:-1], factory.body[-1]
    for node in own_nodes(body):
        if isinstance(
            node,
            (
                gast.Return,
                gast.Yield,
                gast.YieldFrom,
                gast.Nonlocal,
                gast.Global,
                gast.Await,
                gast.ClassDef,
            ),
        ):
            return None
    if isinstance(ret.value, gast.Lambda):
        return ret.value, body
    if not isinstance(ret.value, gast.Name):
        return None
    defs = [s for s in body if isinstance(s, gast.FunctionDef) and s.name == ret.value.id]
    if len(defs) != 1 or not bound_once(factory, ret.value.id):
        return None
    return defs[0], body


def _all_names(tree) -> set:
    names = set()
    for n in walk(tree):
        if isinstance(n, gast.Name):
            names.add(n.id)
        elif isinstance(n, (gast.FunctionDef, gast.ClassDef)):
            names.add(n.name)
    return names


def _sites(tree, name):
    """``(statement list, index, assign)`` for ``h = name(...)`` in ``tree``'s own scope,
    with ``h`` bound once and every other use of ``h`` a call ``h(...)``."""
    found = []
    for stmts in _blocks(tree.body):
        for k, s in enumerate(stmts):
            if (
                isinstance(s, gast.Assign)
                and len(s.targets) == 1
                and isinstance(s.targets[0], gast.Name)
                and isinstance(s.value, gast.Call)
                and isinstance(s.value.func, gast.Name)
                and s.value.func.id == name
                and not any(isinstance(a, gast.Starred) for a in s.value.args)
                and all(kw.arg is not None for kw in s.value.keywords)
                and _only_called(tree, s.targets[0].id)
            ):
                found.append((stmts, k, s))
    return found


def _only_called(tree, name) -> bool:
    if not bound_once(tree, name):
        return False
    calls = {id(n.func) for n in walk(tree) if isinstance(n, gast.Call)}
    return all(
        id(n) in calls
        for n in walk(tree)
        if isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load)
    )


def _inline_sites(tree, name, factory, taken) -> bool:
    sites = _sites(tree, name)
    # Later sites first: inserting statements does not move the earlier ones' indices.
    changed = False
    for stmts, k, assign in reversed(sites):
        made = _inlined(factory, assign, taken)
        if made is not None:
            stmts[k : k + 1] = made
            changed = True
    return changed


def _inlined(factory, assign, taken):
    """The statements that stand for ``assign`` (``h = factory(...)``), or None when the
    call's arguments do not match ``factory``'s parameters."""
    inner, body = _returned_closure(factory)
    target = assign.targets[0].id
    bound = _bind(factory.args, assign.value)
    if bound is None:
        return None
    inner_name = None if isinstance(inner, gast.Lambda) else inner.name
    local = _scope_locals(factory) - {inner_name}
    mapping = {n: _fresh(f"{factory.name}_{n}", taken) for n in sorted(local)}
    if inner_name is not None:
        mapping[inner_name] = target
    out = []
    for param, value in bound:
        out.append(
            _located(
                gast.Assign(
                    targets=[_located(gast.Name(mapping[param], gast.Store(), None, None), value)],
                    value=value,
                    type_comment=None,
                ),
                assign,
            )
        )
    for s in body:
        out.append(_renamed(copy.deepcopy(s), mapping))
    if isinstance(inner, gast.Lambda):
        lam = _renamed(copy.deepcopy(inner), mapping)
        out.append(_located(lambda_as_def(target, lam), inner))
    return out


def _bind(args, call):
    """``[(parameter, argument expression)]`` for ``call`` of a function with ``args``
    (plain and keyword-only parameters with constant defaults), or None on a mismatch."""
    positional = [a.id for a in args.args]
    keyword_only = [a.id for a in args.kwonlyargs]
    if len(call.args) > len(positional):
        return None
    given = dict(zip(positional, call.args, strict=False))
    for kw in call.keywords:
        if kw.arg in given or kw.arg not in positional + keyword_only:
            return None
        given[kw.arg] = kw.value
    with_default = positional[len(positional) - len(args.defaults) :]
    defaults = dict(zip(with_default, args.defaults, strict=True))
    for a, d in zip(keyword_only, args.kw_defaults, strict=True):
        if d is not None:
            defaults[a] = d
    out = []
    for p in positional + keyword_only:
        if p in given:
            out.append((p, given[p]))
        elif p in defaults:
            out.append((p, copy.deepcopy(defaults[p])))
        else:
            return None
    return out


def _fresh(name, taken) -> str:
    fresh, k = name, 1
    while fresh in taken:
        k += 1
        fresh = f"{name}{k}"
    taken.add(fresh)
    return fresh


def _scope_locals(scope) -> set:
    """The names ``scope`` (a def or lambda) binds in its own scope: parameters, stores,
    nested ``def``/``class`` names, imports."""
    a = scope.args
    names = {p.id for p in a.posonlyargs + a.args + a.kwonlyargs}
    names |= {p.id for p in (a.vararg, a.kwarg) if p is not None}
    body = [scope.body] if isinstance(scope, gast.Lambda) else scope.body
    for node in own_nodes(body):
        if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load):
            if not _in_comprehension_target(node, body):
                names.add(node.id)
        elif isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (gast.Import, gast.ImportFrom)):
            names |= {(al.asname or al.name).split(".")[0] for al in node.names}
    return names


def _in_comprehension_target(name, body) -> bool:
    for node in own_nodes(body):
        if isinstance(node, _COMPREHENSIONS):
            for gen in node.generators:
                if any(n is name for n in walk(gen.target)):
                    return True
    return False


def _renamed(node, mapping):
    """``node`` with the names of ``mapping`` renamed where they refer to the factory's
    scope (a nested scope that binds a name of its own keeps it)."""
    if not mapping:
        return node
    if isinstance(node, gast.Name):
        node.id = mapping.get(node.id, node.id)
        return node
    if isinstance(node, (gast.FunctionDef, gast.Lambda)):
        a = node.args
        for d in a.defaults + [d for d in a.kw_defaults if d is not None]:
            _renamed(d, mapping)  # evaluated where the def stands
        if isinstance(node, gast.FunctionDef):
            for d in node.decorator_list:
                _renamed(d, mapping)
            if node.name in mapping:
                node.name = mapping[node.name]
        inner = {k: v for k, v in mapping.items() if k not in _scope_locals(node)}
        body = [node.body] if isinstance(node, gast.Lambda) else node.body
        for s in body:
            _renamed(s, inner)
        return node
    if isinstance(node, _COMPREHENSIONS):
        bound = {n.id for g in node.generators for n in walk(g.target) if isinstance(n, gast.Name)}
        inner = {k: v for k, v in mapping.items() if k not in bound}
        first = node.generators[0]
        _renamed(first.iter, mapping)  # evaluated in the enclosing scope
        for k, gen in enumerate(node.generators):
            if k:
                _renamed(gen.iter, inner)
            for cond in gen.ifs:
                _renamed(cond, inner)
        for field in ("elt", "key", "value"):
            if getattr(node, field, None) is not None:
                _renamed(getattr(node, field), inner)
        return node
    for child in gast.iter_child_nodes(node):
        _renamed(child, mapping)
    return node


def _remove_definition(tree, definition) -> None:
    for stmts in _blocks(tree.body):
        if any(s is definition for s in stmts):
            stmts.remove(definition)
            return


def _located(node, where):
    """``node`` (and children without a position) at ``where``'s position."""
    for n in walk(node):
        if getattr(n, "lineno", None) is None and hasattr(n, "_attributes"):
            for attr in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
                if attr in n._attributes:
                    setattr(n, attr, getattr(where, attr, None))
    return node
