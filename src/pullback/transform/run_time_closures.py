"""Closures made inside the differentiated function that escape, when what they capture
carries no gradient: they are made as the primal makes them.

``def t(v): return v[k] ** 2`` returned, stored or passed on (or ``lambda v: v[k]`` in a
list or a comprehension) cannot be lifted into a function called with its captured
variables (:mod:`.closures`): its calls are not where it is defined. When no gradient has
to flow through what it captures (the check's activity, check/taint.py, refuses the others
with PB404/PB405), nothing is lost by making it as Python does: the ``def`` (or lambda)
becomes a call of a *closure factory* ``_pb_closure_L_C(k, ...)`` that runs the user's own
``def`` with the captured values and returns the function, which carries its source. Its
calls, found at run time, are differentiated like any function value (dynamic_calls.py),
forward mode and second order included.

Why this is exact: Python reads a captured variable when the closure runs. The factory
gives it the value the variable has when the closure is made, which is the value every
call reads when no binding of the variable can run after the closure is made:
:func:`verdict` requires each captured variable to be a variable of the scope that makes
the closure, bound only before the ``def`` and never in a loop around it, written by no
nested function (``nonlocal``), and not a comprehension's variable (rebound at each step).
A closure made again with equal immutable captures and defaults computes what the one
made before does, call for call: it shares that one's generated code (``cache.TWIN``), so
a closure made at every call is transformed once. A default is evaluated once, where the
``def`` runs: the factory evaluates it there. Anything else keeps its refusal, with the
fix (pass it as a default, ``lambda v, k=k: ...``).
"""

from __future__ import annotations

import copy
import types

import gast
import numpy as np

from ..cache import share_entries
from ..resolve import own_nodes, parent_map
from ..source import factory_code, with_source
from ..source_lambdas import lambda_as_def
from ..tree_walk import walk
from . import nodes as N
from .closure_values import captures_nothing, used_as_values

PREFIX = "_pb_closure_"
_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)
_COMPREHENSIONS = (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)
_LOOPS = (gast.For, gast.While)


class Verdict:
    """``captured``: the variables the closure reads (its factory's parameters with
    ``defaults``: the names its defaults read); ``refusal``: why it cannot be made at run
    time (None: it can)."""

    def __init__(self, captured=(), defaults=(), refusal=None, fix=None):
        self.captured = sorted(captured)
        self.defaults = sorted(defaults)
        self.refusal = refusal
        self.fix = fix

    @property
    def parameters(self) -> list:
        return sorted(set(self.captured) | set(self.defaults))


def _param_names(args) -> set:
    out = {a.id for a in args.posonlyargs + args.args + args.kwonlyargs}
    out |= {a.id for a in (args.vararg, args.kwarg) if a is not None}
    return out


def _body_reads(node) -> set:
    """Free names the body of the def or lambda ``node`` reads (not its defaults)."""
    body = [node.body] if isinstance(node, gast.Lambda) else node.body
    loads, bound = set(), _param_names(node.args)
    for stmt in body:
        for sub in walk(stmt):
            if isinstance(sub, gast.Name):
                (loads if isinstance(sub.ctx, gast.Load) else bound).add(sub.id)
            elif isinstance(sub, (gast.FunctionDef, gast.ClassDef)):
                bound.add(sub.name)
    return loads - bound


def _variables(scope) -> set:
    """The parameters of the function ``scope`` and the names its own statements bind."""
    return _param_names(scope.args) | {
        n.id
        for n in own_nodes(scope.body)
        if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)
    }


def _default_reads(node) -> set:
    args = node.args
    out = set()
    for d in list(args.defaults) + [d for d in args.kw_defaults if d is not None]:
        out |= {n.id for n in walk(d) if isinstance(n, gast.Name)}
    return out


def _owner(node, parents, tree):
    """``(scope, comprehension targets on the way)``: the function whose variables ``node``
    captures, or None when a lambda or class stands in between."""
    targets = set()
    up = parents.get(node)
    while up is not None:
        if isinstance(up, _COMPREHENSIONS):
            for gen in up.generators:
                targets |= {n.id for n in walk(gen.target) if isinstance(n, gast.Name)}
        if isinstance(up, gast.FunctionDef):
            return up, targets
        if isinstance(up, _SCOPES):
            return None, targets
        if up is tree:  # pragma: no cover - tree is a FunctionDef
            return None, targets
        up = parents.get(up)
    return None, targets


def _bindings(scope, name) -> list:
    """The nodes of ``scope``'s own statements that bind ``name`` (parameters excluded)."""
    out = []
    for sub in own_nodes(scope.body):
        if isinstance(sub, gast.Name) and sub.id == name and not isinstance(sub.ctx, gast.Load):
            out.append(sub)
        elif isinstance(sub, (gast.FunctionDef, gast.ClassDef)) and sub.name == name:
            out.append(sub)
        elif isinstance(sub, (gast.Global, gast.Nonlocal)) and name in sub.names:
            out.append(sub)
    return out


def _loops_around(node, parents, scope) -> set:
    out = set()
    up = parents.get(node)
    while up is not None and up is not scope:
        if isinstance(up, _LOOPS):
            out.add(id(up))
        up = parents.get(up)
    return out


def _before(a, b) -> bool:
    return (a.lineno, a.col_offset) < (b.lineno, b.col_offset)


def _same_statement(binding, node, parents) -> bool:
    """Whether ``binding`` is a target of the simple statement that makes ``node``
    (``fs, k = [lambda v: v * k], 2.0``): it binds after the closure is made."""
    up = parents.get(binding)
    while up is not None and not isinstance(up, gast.stmt):
        up = parents.get(up)
    if not isinstance(up, (gast.Assign, gast.AugAssign, gast.AnnAssign)):
        return False
    inner = parents.get(node)
    while inner is not None and inner is not up:
        inner = parents.get(inner)
    return inner is up


def verdict(tree, node, parents=None, bound_again=False) -> Verdict | None:
    """Whether the def or lambda ``node`` of ``tree``, used as a value, is made at run time
    (see the module docstring); None when it is not this module's case (it captures
    nothing, writes or yields, is decorated, or reads a variable of a scope further out).
    ``bound_again``: its name is bound more than once (``if c: def t ... else: def t``),
    which the lifting of one that captures nothing cannot follow and this can."""
    parents = parent_map(tree) if parents is None else parents
    if isinstance(node, gast.FunctionDef) and node.decorator_list:
        return None
    if any(
        isinstance(n, (gast.Nonlocal, gast.Global, gast.Yield, gast.YieldFrom, gast.Await))
        for n in walk(node)
    ):
        return None
    scope, targets = _owner(node, parents, tree)
    if scope is None:
        return None
    mine = _variables(scope) | {
        n.name for n in own_nodes(scope.body) if isinstance(n, (gast.FunctionDef, gast.ClassDef))
    }
    reads = _body_reads(node)
    captured = reads & (mine | targets)
    outer = set()
    up = parents.get(scope)
    while up is not None:  # variables of the functions around the owner
        if isinstance(up, gast.FunctionDef):
            outer |= _variables(up)
        up = parents.get(up)
    if (reads - captured) & outer or (
        not captured and not bound_again and captures_nothing(node, tree)
    ):
        return None
    name = getattr(node, "name", "the lambda")
    defaults = _default_reads(node) & (mine | targets | outer)
    for c in sorted(captured):
        spelled = f"`lambda v, {c}={c}: ...`"
        if isinstance(node, gast.FunctionDef):
            spelled = f"`def {name}(..., {c}={c})`, " + spelled
        fix = f"pass '{c}' as a default, evaluated where the function is made ({spelled})"
        if c in targets:
            return Verdict(
                captured,
                defaults,
                f"it reads '{c}', which the comprehension rebinds at each step (every "
                f"closure would read its last value)",
                fix,
            )
        if any(isinstance(n, gast.Nonlocal) and c in n.names for n in walk(scope)):
            return Verdict(
                captured,
                defaults,
                f"it reads '{c}', which a nested function writes (`nonlocal {c}`: Python's "
                "closure reads the new value when it is called)",
                fix,
            )
        loops = _loops_around(node, parents, scope)
        for b in _bindings(scope, c):
            if isinstance(b, (gast.Global, gast.Nonlocal, gast.FunctionDef, gast.ClassDef)):
                return None
            if (
                not _before(b, node)
                or _same_statement(b, node, parents)
                or loops & _loops_around(b, parents, scope)
            ):
                return Verdict(
                    captured,
                    defaults,
                    f"it reads '{c}', which is bound again after {name!r} is made (Python's "
                    f"closure reads the new value when it is called)",
                    fix,
                )
    return Verdict(captured, defaults)


def make_closures_at_run_time(fs, tree, lifting_refusal, resolve, returned=None) -> bool:
    """Every def or lambda of ``tree`` (nested scopes included) that escapes as a value
    and is made at run time becomes the call of its factory, put in ``fs.namespace``.
    ``lifting_refusal`` and ``resolve``: those of :mod:`.closures` (a def that it lifts,
    specializes or returns as a record is left to it). ``returned``: the nested function
    ``tree`` returns as a record (closure_records.py), left alone. Whether anything
    changed."""
    parents = parent_map(tree)
    sites = []
    for sub in walk(tree):
        if sub is tree:
            continue
        if isinstance(sub, gast.FunctionDef) and sub.name != returned:
            owner, _ = _owner(sub, parents, tree)
            if owner is None or sub.name not in used_as_values(owner, {sub.name: sub}):
                continue
            # only where the lifting would refuse it (not specialized, not a record)
            lifting_refusal(tree, sub, parents, resolve, returned is not None)
            if getattr(sub, "_pb_run_time", False):
                sites.append((sub, verdict(tree, sub, parents, bound_again=True)))
        elif isinstance(sub, gast.Lambda) and stored_lambda(sub, parents):
            found = verdict(tree, sub, parents)
            if found is not None and found.refusal is None:
                sites.append((sub, found))
    for node, found in sites:
        name = f"{PREFIX}{node.lineno}_{node.col_offset}"
        fs.namespace[name] = closure_factory(fs, node, found.parameters)
        call = N.located(N.call(N.load(name), [N.load(p) for p in found.parameters]), node)
        if isinstance(node, gast.Lambda):
            _replace_child(parents[node], node, call)
        else:
            target = N.located(gast.Name(node.name, gast.Store(), None, None), node)
            assign = gast.Assign(targets=[target], value=call, type_comment=None)
            assign = N.located(assign, node)
            _replace_statement(parents[node], node, assign)
    return bool(sites)


def stored_lambda(lam, parents) -> bool:
    """A lambda kept as a value: an element of a display or of a comprehension, returned,
    or appended to a list (``fs.append(lambda v, i=i: ...)``); or a branch of a
    conditional expression or of ``and``/``or`` whose value is assigned or kept so
    (``act = act or (lambda z: z)``, ``f = (lambda v: v) if flag else g``)."""
    parent = parents.get(lam)
    if isinstance(parent, gast.IfExp) and lam is not parent.test or isinstance(
        parent, gast.BoolOp
    ):
        holder = parents.get(parent)
        return isinstance(holder, (gast.Assign, gast.AnnAssign)) or stored_lambda(parent, parents)
    if isinstance(parent, gast.Call) and isinstance(parent.func, gast.Attribute):
        return parent.func.attr in ("append", "insert") and lam in parent.args
    if isinstance(parent, (gast.List, gast.Tuple, gast.Set)):
        return lam in parent.elts
    if isinstance(parent, gast.Dict):
        return any(v is lam for v in parent.values)
    if isinstance(parent, (gast.ListComp, gast.SetComp, gast.GeneratorExp)):
        return parent.elt is lam
    if isinstance(parent, gast.DictComp):
        return parent.value is lam
    return isinstance(parent, gast.Return)


def _replace_child(parent, old, new) -> None:
    for field, value in gast.iter_fields(parent):
        if value is old:
            setattr(parent, field, new)
        elif isinstance(value, list):
            for k, item in enumerate(value):
                if item is old:
                    value[k] = new


def _replace_statement(parent, old, new) -> None:
    for field in ("body", "orelse", "finalbody"):
        stmts = getattr(parent, field, None) or []
        for k, s in enumerate(stmts):
            if s is old:
                stmts[k] = new
                return
    for handler in getattr(parent, "handlers", None) or []:
        _replace_statement(handler, old, new)


# How many closures of one factory are kept to share their generated code with those
# made again with the same captures (a bound: a captured float may change at every call).
_TWINS = 32
_ATOMS = (int, float, complex, str, bytes, bool, type(None), np.generic)


def _value_key(value):
    """A key equal for two values only when every computation gives the same result on
    both (immutable atoms compared by type and bits, tuples of them), or None."""
    if isinstance(value, tuple):
        parts = [_value_key(v) for v in value]
        return None if any(p is None for p in parts) else (tuple, *parts)
    if isinstance(value, dict):  # __kwdefaults__
        return _value_key(tuple(sorted(value.items())))
    if isinstance(value, np.generic):
        return (type(value), value.dtype.str, value.tobytes())
    if isinstance(value, _ATOMS):
        if isinstance(value, (float, complex)):
            return (type(value), repr(value))  # -0.0 and 0.0 differ, nan is itself
        return (type(value), value)
    return None


def compile_factory(name, parameters, body, filename, namespace):
    """The function ``def name(*parameters): body``, compiled alone (as ``filename``) with
    the globals ``namespace``: a factory whose body makes functions that close over its
    parameters (a closure made at run time here, the lifted functions in closures.py)."""
    return types.FunctionType(factory_code(name, parameters, body, filename), namespace)


def closure_factory(fs, node, parameters):
    """``make(*values)``: runs the user's ``def`` (or lambda, as a ``def``) with
    ``parameters`` bound to ``values`` and returns the function, which carries its source
    (pullback.source.load_source) for the calls that differentiate it."""
    if isinstance(node, gast.Lambda):
        name = f"_pb_lambda_{node.lineno}_{node.col_offset}"
        d = N.located(lambda_as_def(name, node), node)
        d._pb_lambda = node
    else:
        d = node
    source_tree = copy.deepcopy(d)
    # what the closure reads of the generated namespace (records of closures it makes,
    # closure_cells.py): given as cells too
    read = {n.id for n in walk(d) if isinstance(n, gast.Name)}
    made = [n for n in fs.namespace if n.startswith(PREFIX) and n in read]
    extra = tuple(fs.namespace[n] for n in made)
    make_fn = compile_factory(
        "_pb_closure_factory",
        [*parameters, *made],
        [copy.deepcopy(d), gast.Return(N.load(d.name))],
        f"<pullback: closure in {fs.name}>",
        fs.fn.__globals__,
    )
    qualname = f"{fs.fn.__qualname__}.<locals>.{getattr(node, 'name', '<lambda>')}"

    twins = {}  # the closures made last, by their captures and defaults

    def make(*values):
        fn = make_fn(*values, *extra)
        fn.__qualname__ = qualname
        fn.__module__ = fs.fn.__module__
        key = _value_key((values, fn.__defaults__, fn.__kwdefaults__))
        if key is not None:
            twin = twins.get(key)
            if twin is not None:
                share_entries(fn, twin)  # its adjoint, built once, serves fn
            else:
                if len(twins) >= _TWINS:
                    twins.pop(next(iter(twins)))
                twins[key] = fn

        return with_source(fn, fs, source_tree)

    make.__name__ = f"{PREFIX}{node.lineno}_{node.col_offset}"
    return make
