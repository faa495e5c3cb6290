"""Generator functions consumed inside a differentiated function, as the lists they yield.

A call ``gen(a)`` of a user generator function whose generator is consumed *completely*
where it is made — the iterable of a ``for`` loop that has no ``break`` or ``return``, of a
comprehension, or the argument of ``list``/``tuple``/``sum``/``zip``/``enumerate``/
``sorted``/``min``/``max`` — is replaced by a call of the generator's *list version*:
the same body with ``yield v`` turned into ``items.append(v)`` (``yield from it`` into a
loop of appends) and a final ``return items``. The list version is transformed like any
user function, so gradients flow through what the generator yields.

Running the generator eagerly is exact when nothing between two of its steps changes what
it reads. pullback requires (and checks) that:

* every ``yield`` is a statement (its value is not used, ``x = yield v`` is refused), and a
  ``return`` in the generator returns no value;
* the consuming ``for`` loop has no ``break``/``return`` (the generator runs to its end)
  and does not rebind a variable the generator reads (a nested generator's captured
  variables are passed at the call, as for any nested function);
* a generator function that is ``zip``-ped with a shorter sequence still runs to its end:
  it must be finite (as a generator that Python would stop early need not be).

A generator that escapes (returned, stored, iterated by hand with ``next``) stays refused
(PB402), with the place of the call.
"""

from __future__ import annotations

import builtins
import copy
import inspect
import types
import weakref

import gast

from ..resolve import SCOPES, local_names, own_nodes, parent_map, resolve_call
from ..tree_walk import lean_nodes, statements
from . import nodes as N
from .closure_shared import carry_source, compile_like

ITEMS = "_pb_items"
NEVER_ENDS = "it never ends"  # (the start of consumption_refusal's reason for such a zip)
# Builtins that consume their iterable argument completely (zip: see the module docstring).
CONSUMERS = (
    builtins.list,
    builtins.tuple,
    builtins.sum,
    builtins.zip,
    builtins.enumerate,
    builtins.sorted,
    builtins.min,
    builtins.max,
)


def is_generator_function(obj) -> bool:
    return isinstance(obj, types.FunctionType) and inspect.isgeneratorfunction(obj)


def consumption_refusal(call, parents, resolve, reads=(), generator=None) -> str | None:
    """Why the generator made by ``call`` is not provably consumed completely where it is
    made (None when it is). ``resolve(node)`` returns the object a call's function is;
    ``reads`` are the names the generator reads that its consumer must not rebind;
    ``generator``: the generator function's tree, when known (a generator that never ends
    cannot be zipped: its list would never be done)."""
    parent = parents.get(call)
    endless = None if generator is None else endless_loop(generator)
    if endless is not None and _zipped(call, parents, resolve):
        return (
            f"{NEVER_ENDS} (the `while` loop at line {endless.lineno} has no break or return) "
            "and pullback runs a zipped generator to its end before the loop, where zip "
            "would stop it at the shortest argument"
        )
    if isinstance(parent, gast.For) and parent.iter is call:
        for sub in own_nodes(parent.body):
            if isinstance(sub, (gast.Break, gast.Return)):
                kind = "break" if isinstance(sub, gast.Break) else "return"
                return f"the loop over it may stop early (`{kind}` at line {sub.lineno})"
            if isinstance(sub, gast.Name) and isinstance(sub.ctx, gast.Store) and sub.id in reads:
                return f"the loop over it rebinds '{sub.id}', which the generator reads"
        return None
    if isinstance(parent, gast.comprehension) and parent.iter is call:
        return None
    if (
        isinstance(parent, gast.Call)
        and call in parent.args
        and all(kw.arg == "strict" for kw in parent.keywords)  # zip(..., strict=True)
        and any(resolve(parent) is c for c in CONSUMERS)
    ):
        return None
    return (
        "the generator escapes (it is not consumed where it is made by a for loop, a "
        "comprehension, list, tuple, sum, zip, enumerate, sorted, min or max)"
    )


def _zipped(call, parents, resolve) -> bool:
    """Whether what ``call`` makes is an argument of ``zip``, directly or under
    ``enumerate`` (which zip then stops early too)."""
    node, parent = call, parents.get(call)
    while isinstance(parent, gast.Call) and node in parent.args:
        fn = resolve(parent)
        if fn is builtins.zip:
            return True
        if fn is not builtins.enumerate:
            return False
        node, parent = parent, parents.get(parent)
    return False


def endless_loop(tree):
    """The ``while True:`` loop (a constant true test) of the generator function ``tree``'s
    own body that provably never ends -- no ``return`` or ``raise`` in it and no ``break``
    of its own -- or None.

    >>> import gast
    >>> code = "def g():\\n    n = 0\\n    while True:\\n        yield n\\n        n += 1"
    >>> tree = gast.parse(code).body[0]
    >>> endless_loop(tree).lineno
    3
    """
    for s in tree.body:
        if not (isinstance(s, gast.While) and isinstance(s.test, gast.Constant) and s.test.value):
            continue
        if not any(isinstance(sub, (gast.Return, gast.Raise)) for sub in own_nodes(s.body)):
            if not any(isinstance(sub, gast.Break) for sub in _own_breaks(s.body)):
                return s
    return None


def _own_breaks(stmts):
    """The statements of ``stmts`` outside nested loops and definitions (a ``break`` there
    ends the loop ``stmts`` belong to)."""
    for s in stmts:
        yield s
        if isinstance(s, (gast.For, gast.While, gast.AsyncFor, *SCOPES)):
            yield from _own_breaks(s.orelse) if not isinstance(s, SCOPES) else ()
            continue
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            yield from _own_breaks(getattr(s, field, None) or ())


def body_refusal(tree) -> str | None:
    """Why the generator function ``tree`` cannot be run as a list builder, or None."""
    for sub in own_nodes(tree.body):
        if isinstance(sub, (gast.Yield, gast.YieldFrom)) and not getattr(sub, "_pb_stmt", False):
            return "the value of a `yield` expression is used"
        if isinstance(sub, gast.Return) and sub.value is not None:
            return "it returns a value (a generator's return value is lost by a for loop)"
    return None


def mark_yield_statements(tree) -> None:
    """Mark the yields that are statements of their own (``yield v`` alone on a line)."""
    for sub in statements(tree):
        if isinstance(sub, gast.Expr) and isinstance(sub.value, (gast.Yield, gast.YieldFrom)):
            sub.value._pb_stmt = True


def accept_yield_statements(tree) -> None:
    """Mark the statement yields of the nested generator ``tree`` as accepted by the check
    (its calls were checked to consume it completely)."""
    mark_yield_statements(tree)
    for sub in own_nodes(tree.body):
        if getattr(sub, "_pb_stmt", False):
            sub._pb_accepted = True


def as_list_builder(tree) -> gast.FunctionDef:
    """A copy of the generator function ``tree`` that returns the list it would yield."""
    new = copy.deepcopy(tree)
    new.body = [N.assign(ITEMS, gast.List(elts=[], ctx=gast.Load()), tree)]
    new.body += _rewrite(copy.deepcopy(tree.body), tree)
    new.body.append(N.located(gast.Return(value=N.load(ITEMS)), tree.body[-1]))
    return new


def _rewrite(stmts, where) -> list:
    out = []
    for s in stmts:
        if isinstance(s, gast.Expr) and isinstance(s.value, gast.Yield):
            value = s.value.value if s.value.value is not None else N.const(None)
            out.append(N.expr_stmt(N.call(N.attr(ITEMS, "append"), [value]), s))
            continue
        if isinstance(s, gast.Expr) and isinstance(s.value, gast.YieldFrom):
            item = "_pb_item"
            append = N.expr_stmt(N.call(N.attr(ITEMS, "append"), [N.load(item)]), s)
            loop = gast.For(
                target=N.store(item),
                iter=s.value.value,
                body=[append],
                orelse=[],
                type_comment=None,
            )
            out.append(N.located(loop, s))
            continue
        if isinstance(s, gast.Return):
            out.append(N.located(gast.Return(value=N.load(ITEMS)), s))
            continue
        if not isinstance(s, SCOPES):
            for field in ("body", "orelse"):
                if getattr(s, field, None):
                    setattr(s, field, _rewrite(getattr(s, field), s))
        out.append(s)
    return out


_LIST_VERSIONS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _tree_of(gen):
    """The definition of the generator function ``gen`` (None without its source)."""
    from ..errors import PullbackError
    from ..source import load_source

    try:
        return load_source(gen).tree
    except PullbackError:
        return None


def list_version(gen):
    """The list version of the generator function ``gen`` (a real function with ``gen``'s
    globals, closure and defaults; cached while ``gen``'s code is the same)."""
    from ..source import load_source

    cached = _LIST_VERSIONS.get(gen)
    if cached is not None and cached[0] is gen.__code__:
        return cached[1]
    fs = load_source(gen)
    mark_yield_statements(fs.tree)
    refusal = body_refusal(fs.tree)
    if refusal is not None:
        return None
    tree = as_list_builder(fs.tree)
    fn = compile_like(gen, tree, {}, f"<pullback: list of {gen.__name__}>")
    carry_source(fn, fs, tree)
    _LIST_VERSIONS[gen] = (gen.__code__, fn)
    return fn


def use_list_versions(fs, nodes=None) -> bool:
    """Calls of user generator functions (consumed completely: the check made sure) call
    their list versions (:func:`list_version`) instead; whether one did. ``nodes``:
    ``lean_nodes(fs.tree)`` of the tree as it is, if walked already (its calls are those of
    ``gast.walk``, in its order)."""
    nodes = lean_nodes(fs.tree) if nodes is None else nodes
    names = local_names(fs.tree, nodes)
    parents = None

    def resolve(c):
        callee = resolve_call(fs, c, names)
        return callee.obj if callee.kind == "object" else None

    changed = False
    call = gast.Call
    for sub in nodes:
        if not (sub.__class__ is call and isinstance(sub.func, gast.Name)):
            continue
        if sub.func.id in names:
            continue
        found, gen = fs.lookup(sub.func.id)  # recorded: a redefinition rebuilds the gradient
        if not (found and is_generator_function(gen)):
            continue
        parents = parent_map(fs.tree) if parents is None else parents
        if consumption_refusal(sub, parents, resolve, generator=_tree_of(gen)) is not None:
            # refused by the check where a gradient flows through it; else it carries no
            # gradient and runs as the primal runs it (a zip reads it as far as it goes)
            continue
        fn = list_version(gen)
        if fn is None:
            continue  # pragma: no cover - refused by the check
        name = f"_pb_list_{sub.func.id}"
        fs.namespace[name] = fn
        sub.func = N.located(N.load(name), sub.func)
        changed = True
    return changed
