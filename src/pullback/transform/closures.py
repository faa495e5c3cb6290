"""Nested functions by lambda lifting: a local ``def`` becomes a function of its own.

A nested ``def g(t, k=2): ...`` inside a differentiated function ``f`` that is only ever
*called* (by ``f``, by another nested function or by itself) is lifted: pullback builds a
real function ``g(t, k, w)`` whose extra parameters are the variables of ``f`` that ``g``
reads (its captured variables), and every call ``g(x)`` becomes ``g(x, <k's default>, w)``.
The lifted function is transformed like any user function (it gets its own adjoint, and
its calls take the existing user-call path), so loops, branches, several returns and
recursion inside it work as they do anywhere.

Why this is exact:

* Python reads a captured variable when the closure *runs* (late binding); the lifted call
  passes the variable's value at the call, which is the same value.
* A default is evaluated once, where the ``def`` runs: it is assigned there to a variable
  of ``f`` and passed by the calls that omit the argument.
* A captured value is read, not written, so passing it as an argument changes nothing;
  gradients reach it like any argument's. A nested function that writes ``nonlocal``
  variables also returns their new values, which each call assigns back
  (:mod:`.closure_writes`).

Lifted functions keep the user's line numbers (their source is the nested ``def`` inside
``f``'s own file), so diagnostics and tracebacks name the user's lines.

>>> import gast
>>> tree = gast.parse('''
... def f(x, w):
...     def g(t, k=2):
...         s = 0.0
...         for i in range(k):
...             s = s + w * t
...         return s
...     return g(x)
... ''').body[0]
>>> sorted(liftable_functions(tree))
['g']
"""

from __future__ import annotations

import copy
import types

import gast

from ..guards import is_library_module_name
from ..lambdas import (
    _higher_order_function,
    inlinable_functions,
    nested_definitions,
    nonlocal_writers,
)
from ..nested_factories import inline_nested_factories
from ..resolve import bound_once, local_names, own_nodes, parent_map
from ..source import with_source
from ..tree_walk import lean_nodes, statements, walk
from . import nodes as N
from .closure_arguments import passed_to_specializable, specialize_calls
from .closure_cells import captured_first, convert_cell_closures
from .closure_records import use_closure_records
from .closure_shared import call_resolver, in_own_scope, plain_call
from .closure_values import (
    _called,
    call_through_lambdas,
    captures_nothing,
    free_names,
    star_refusal,
    used_as_values,
)
from .closure_writes import lift_writes, write_refusal
from .generators import (
    as_list_builder,
    body_refusal,
    consumption_refusal,
    mark_yield_statements,
    use_list_versions,
)
from .keyword_positions import convert_keyword_positions
from .lambda_definitions import lambdas_as_definitions  # noqa: F401 (imported from here)
from .local_partials import partial_of_nested_def, rewrite_local_partials, spells_partial
from .object_stores import version_owned_objects
from .record_makers import convert_record_makers
from .run_time_closures import (
    PREFIX,
    compile_factory,
    make_closures_at_run_time,
    verdict,
)
from .side_effects import shadow_read_back_attributes
from .solver_closures import convert_solver_closures
from .stored_closures import convert_stored_closures
from .vectorize_closures import convert_vectorize_closures

FACTORY = "_pb_lifted_factory"


def is_nested_generator(node) -> bool:
    """Whether the nested ``def`` ``node`` contains a ``yield`` of its own."""
    return any(isinstance(s, (gast.Yield, gast.YieldFrom)) for s in own_nodes(node.body))


def lifting_refusal(tree, node, parents=None, resolve=None, returned=False) -> str | None:
    """Why the nested ``def`` ``node`` of ``tree`` cannot be lifted, or None.

    ``resolve(call)`` is the object a call's function refers to (for the consumers of a
    nested generator). ``returned``: ``tree`` may return the function (its caller keeps
    the closure as a record of its captured values, transform/closure_records.py)."""
    # (nested functions only: a function without one never imports nested_signatures)
    from .nested_signatures import NestedSignature, bound_at_run_time

    parents = parent_map(tree) if parents is None else parents
    name = node.name
    if node.decorator_list:
        return "it is decorated"
    starred = node.args.vararg is not None or node.args.kwarg is not None
    starred = starred or bound_at_run_time(tree, name, NestedSignature(node))
    if starred:
        why = star_refusal(node, returned)
        if why is not None:
            return why
    for sub in walk(node):
        if isinstance(sub, gast.Global):
            return (
                f"it declares 'global {', '.join(sub.names)}' (a global is written only by "
                "the differentiated function itself, where the check sees what reaches it)"
            )
    why = write_refusal(tree, node, parents)  # nonlocal writes (closure_writes.py)
    if why is not None:
        return why
    valued = False  # used as a value (a function value that captures nothing)
    for sub in walk(tree):
        if isinstance(sub, gast.Name) and sub.id == name:
            if (
                isinstance(sub.ctx, gast.Load)
                and not plain_call(sub, parents)
                and not (starred and _called(sub, parents))
            ):
                valued = True
                if returned and _returned_here(sub, tree, parents):
                    continue
                if (
                    not starred
                    and passed_to_specializable(sub, parents, resolve)
                    and in_own_scope(sub, tree, parents)
                ):
                    continue  # apply(g, x): specialized (closure_arguments.py)
                if _higher_order_function(sub, parents.get(sub), parents):
                    continue  # map(g, xs), key=g: called through a lambda (below)
                if partial_of_nested_def(sub, tree, parents, resolve):
                    continue  # h = partial(g, a); h(x): calls g (local_partials.py)
                if captures_nothing(node, tree) and any(
                    d is node for d in nested_definitions(tree)
                ):
                    continue  # a function value like a global one (lifted as it is)
                value = f"'{name}' is used as a value (returned, stored or passed on)"
                made = verdict(tree, node, parents)  # made as the primal makes it
                if made is not None:
                    if made.refusal is not None:
                        return f"{value}: {made.refusal}"
                    node._pb_run_time = True  # the check asks what it captures
                    return None
                read = sorted(free_names(node) & local_names(tree))
                if node.decorator_list or is_nested_generator(node) or not read:
                    return f"{value}, not called"
                return (
                    f"{value} and reads "
                    f"{', '.join(repr(r) for r in read)} of the enclosing function"
                )
    if not bound_once(tree, name):
        made = verdict(tree, node, parents, bound_again=True) if valued else None
        if made is not None and made.refusal is None:
            node._pb_run_time = True  # made as the primal makes it (run_time_closures.py)
            return None
        return f"the name '{name}' is bound more than once"
    if is_nested_generator(node):
        if returned:
            return "a generator function returned to the caller"
        mark_yield_statements(node)
        refusal = body_refusal(node)
        if refusal is not None:
            return f"a generator whose list cannot stand for it: {refusal}"
        reads = free_names(node)
        for sub in walk(tree):
            if isinstance(sub, gast.Call) and getattr(sub.func, "id", None) == name:
                why = consumption_refusal(
                    sub, parents, resolve or (lambda c: None), reads, generator=node
                )
                if why is not None:
                    return f"a generator that a call cannot run to its end: {why}"
    return None


def liftable_functions(tree, fs=None, returned=False) -> dict:
    """``{name: def}`` of the nested functions of ``tree`` that are lifted (those that are
    inlined as expressions, see :mod:`pullback.lambdas`, are not). ``fs`` resolves the
    consumers of nested generators; ``returned`` as in :func:`lifting_refusal`."""
    nested = nested_definitions(tree)
    if not nested:
        return {}
    inlined = inlinable_functions(tree)
    parents = parent_map(tree)
    resolve = None if fs is None else call_resolver(fs, tree)
    return {
        d.name: d
        for d in nested
        if d.name not in inlined and lifting_refusal(tree, d, parents, resolve, returned) is None
    }


def _returned_here(name_node, tree, parents) -> bool:
    """``return name`` in ``tree``'s own scope."""
    ret = parents.get(name_node)
    return (
        isinstance(ret, gast.Return) and ret.value is name_node and in_own_scope(ret, tree, parents)
    )


def what_is_there(tree, nodes=None):
    """One walk: whether ``tree`` has lambdas, calls of plain names (generator functions
    perhaps) and ``name = f(...)`` (closure factories perhaps). Most functions have no
    lambda and no factory: their first call pays one walk for this pass (none when the
    caller has ``nodes``, ``lean_nodes(tree)`` or ``all_nodes(tree)`` of the tree as it is
    now)."""
    lambdas = calls = factories = False
    # by class (no class derives from these): a long function has tens of thousands of nodes
    lambda_, call, assign = gast.Lambda, gast.Call, gast.Assign
    for n in lean_nodes(tree) if nodes is None else nodes:
        cls = n.__class__
        if cls is lambda_:
            lambdas = True
        elif cls is call:
            if isinstance(n.func, gast.Name):
                calls = True
        elif cls is assign:  # (the only nodes spells_partial may accept)
            if (isinstance(n.value, gast.Call) and isinstance(n.value.func, gast.Name)) or (
                spells_partial(n)
            ):
                factories = True  # (a local functools.partial too: transform/local_partials.py)
    return lambdas, calls, factories


def user_callee(fs, tree):
    """``call -> bool``: whether ``call`` calls a plain Python function of the user's (not
    library code), which pullback transforms (see closure_values.stored_lambdas)."""
    resolve = call_resolver(fs, tree)

    def user_call(call):
        try:
            obj = resolve(call)
        except Exception:  # noqa: BLE001 - unresolvable here: left to the checks
            return False
        return isinstance(obj, types.FunctionType) and not is_library_module_name(
            getattr(obj, "__module__", None) or ""
        )

    return user_call


def rewrite_rule_calls(fs, tree, registry=None) -> bool:
    """Calls written into the form their rules take, before the check and the
    transformation alike: a closure given to a solver takes what it reads through the
    solver's ``args`` (solver_closures.py), keywords that continue a rule's positional
    parameters pass by position (keyword_positions.py). Whether either rewrote anything."""
    closures = convert_solver_closures(fs, tree, registry)
    vectorized = convert_vectorize_closures(fs, tree)  # np.vectorize(lambda t: p * t)(x)
    stored = convert_stored_closures(fs, tree)  # fs.append(lambda t: a * t); fs[0](x)
    keywords = convert_keyword_positions(fs, tree, registry)
    makers = convert_record_makers(fs, tree)  # P._make(xs) of a named tuple: P(*xs)
    return closures or vectorized or stored or keywords or makers


def escaping_closures_as_records(fs, tree, returned=None, carries=None) -> bool:
    """Closures (and ``functools.partial`` objects) that escape as values become records
    of their cells (closure_cells.py), after the nested factories are inlined. The check
    converts those a differentiated value may reach (``carries``, its activity) and
    marks ``fs``: the transformation then finds them converted (a function the check did
    not see, a factory's record version, converts every one). ``returned``: as there.
    Whether any changed."""
    if carries is None and getattr(fs, "closures_converted", False):
        return False
    changed = convert_cell_closures(fs, tree, call_resolver(fs, tree), returned, carries)
    if carries is not None:
        fs.closures_converted = True
    return changed


def lift_nested_functions(fs, returned=None, registry=None) -> dict:
    """Lift the liftable nested functions of ``fs.tree`` (in place): their ``def``
    statements become the assignments of their defaults, their calls call the lifted
    functions, which ``fs.lookup`` finds in ``fs.namespace``.

    ``returned`` names a nested function that ``fs`` returns: each ``return name`` then
    returns the tuple of what the lifted function needs besides its own arguments (its
    record). Returns ``{name: (lifted function, record names, signature)}``."""
    return _lift(fs, returned, registry)[0]


def lifted_nodes(fs, registry=None) -> list:
    """Lift the nested functions of ``fs.tree`` (as :func:`lift_nested_functions`, for the
    solvers of ``registry``) and
    return ``lean_nodes(fs.tree)`` of the tree as it is then: most functions have nothing
    to lift or rewrite, and the walk that found so serves the passes after it."""
    nodes = _lift(fs, None, registry)[1]
    return lean_nodes(fs.tree) if nodes is None else nodes


def _lift(fs, returned, registry=None) -> tuple[dict, list | None]:
    """``(lifted functions, lean_nodes(fs.tree) if nothing rewrote the tree since)``."""
    tree = fs.tree
    rewrite_rule_calls(fs, tree, registry)  # quad(lambda t: f(t, p)), t.logpdf(x, df=nu)
    version_owned_objects(fs)  # stores on objects it owns: versions (object_stores.py)
    shadow_read_back_attributes(tree)  # self.h = z read back later (side_effects.py)
    nodes = lean_nodes(tree)
    lambdas, calls, factories = what_is_there(tree, nodes)
    if factories and inline_nested_factories(tree):  # as the check saw them
        nodes = lean_nodes(tree)
        lambdas, calls, factories = what_is_there(tree, nodes)
    if escaping_closures_as_records(fs, tree, returned):  # (first: a look at the lines)
        nodes = lean_nodes(tree)
        lambdas, calls, factories = what_is_there(tree, nodes)
    if lambdas:
        lambdas_as_definitions(tree, user_callee(fs, tree))
        nodes = None  # rewritten: (the list-version search walks again)
    if calls and use_list_versions(fs, nodes):
        nodes = None
    if factories:
        rewrite_local_partials(fs, call_resolver(fs, tree))
        use_closure_records(fs, lift_nested_functions)
        nodes = None
    # (a nested def is a statement: the statement walk finds one without visiting the
    # expressions, a tenth of a long function's nodes)
    if lambdas or any(s.__class__ is gast.FunctionDef for s in statements(tree)[1:]):
        # closures that escape and capture no gradient: made as the primal makes them
        make_closures_at_run_time(fs, tree, lifting_refusal, call_resolver(fs, tree), returned)
        nodes = None
    defs = liftable_functions(tree, fs, returned is not None)
    if not defs:
        return {}, nodes
    from .nested_signatures import NestedSignature, bound_at_run_time  # (where there is a def)

    call_through_lambdas(tree, defs)
    inlined = inlinable_functions(tree)
    outer = (local_names(tree) | set(fs.fn.__code__.co_freevars)) - set(defs)
    sigs = {name: NestedSignature(d) for name, d in defs.items()}
    for name, sig in sigs.items():  # f(*xs): Python binds it when it runs
        sig.starred = sig.starred or bound_at_run_time(tree, name, sig)
    writers = nonlocal_writers(tree)
    inlined_defs = {n: _definition(tree, n) for n in inlined}
    captured = _captured(defs, sigs, outer, inlined_defs, writers)
    values = {
        n
        for n in used_as_values(tree, defs)
        if n != returned and captures_nothing(defs[n], tree)  # returned: a record
    }
    for name in values:  # as it is written: its calls keep their form, its value is it
        sigs[name].starred = True
        captured[name] = []  # it reads no local (captures_nothing); f's cells: _compile
    lifted_trees = {}
    for name, d in defs.items():
        lifted = copy.deepcopy(d)
        args = lifted.args
        params = args.posonlyargs + args.args + args.kwonlyargs
        extra = [N.located(gast.Name(c, gast.Param(), None, None), d) for c in captured[name]]
        if sigs[name].starred:  # what it captures first (positional only), then its own
            lifted.args = captured_first(args, extra)
        else:
            lifted.args = gast.arguments(
                args=params + extra,
                posonlyargs=[],
                vararg=None,
                kwonlyargs=[],
                kw_defaults=[],
                kwarg=None,
                defaults=[],
            )
        uses = sorted(n for n in inlined if _reads(lifted, n))
        lifted.body = [copy.deepcopy(_definition(tree, n)) for n in uses] + lifted.body
        _rewrite_calls(lifted, sigs, captured)
        if is_nested_generator(d):  # its calls consume it completely: the list it yields
            lifted = as_list_builder(lifted)
        lifted_trees[name] = lifted
    _rewrite_calls(tree, sigs, captured)
    _replace_definitions(tree, defs, sigs)
    lift_writes(tree, writers, lifted_trees)  # r, total = add(v, total) (closure_writes.py)
    functions = _compile(fs, lifted_trees)
    info = {}
    for name, fn in functions.items():
        record = captured[name] + [
            v for v in sigs[name].variables.values() if v not in captured[name]
        ]
        info[name] = (fn, record, sigs[name])
    # (a function value keeps its own signature: passed on as it is, not specialized)
    special = {n: v for n, v in info.items() if n not in values}
    specialize_calls(fs, tree, special, call_resolver(fs, tree))
    for name, fn in functions.items():
        fs.namespace[name] = fn
    if returned in info:
        _return_records(tree, returned, info[returned][1])
    return info, None


def _return_records(tree, name, record) -> None:
    """``return name`` becomes ``return (captured, ...)``."""
    parents = parent_map(tree)
    for sub in walk(tree):
        if isinstance(sub, gast.Return) and isinstance(sub.value, gast.Name):
            if sub.value.id == name and _returned_here(sub.value, tree, parents):
                sub.value = N.located(N.tuple_([N.load(c) for c in record]), sub.value)


def _captured(defs, sigs, outer, inlined, writers) -> dict:
    """The variables of the enclosing function each lifted function must receive: the
    ones it reads or writes (``writers``: its ``nonlocal`` ones), those of the nested
    functions it calls (whose calls it makes) and the defaults those calls fill in; sorted."""
    direct = {}
    calls = {}
    for name, d in defs.items():
        reads = free_names(d)
        for n in list(reads):
            if n in inlined:  # a local lambda it calls: copied in, with its own reads
                reads |= free_names(inlined[n])
        direct[name] = {n for n in reads if n in outer and n not in inlined}
        direct[name] |= writers.get(name, set())
        calls[name] = {n for n in reads if n in defs}
    captured = {name: set(v) for name, v in direct.items()}
    changed = True
    while changed:  # a call of a sibling needs what the sibling needs
        changed = False
        for name in defs:
            for callee in calls[name]:
                need = captured[callee] | set(sigs[callee].variables.values())
                if not need <= captured[name]:
                    captured[name] |= need
                    changed = True
    return {name: sorted(v) for name, v in captured.items()}


def _definition(tree, name):
    """The statement of ``tree``'s own scope that defines the inlined function ``name``."""
    for s in statements(tree):
        if isinstance(s, gast.FunctionDef) and s.name == name and s is not tree:
            return s
        if (
            isinstance(s, gast.Assign)
            and len(s.targets) == 1
            and isinstance(s.targets[0], gast.Name)
            and s.targets[0].id == name
        ):
            return s
    raise LookupError(name)  # pragma: no cover - inlinable names are defined


def _reads(node, name) -> bool:
    return any(
        isinstance(s, gast.Name) and s.id == name and isinstance(s.ctx, gast.Load)
        for s in walk(node)
    )


def _rewrite_calls(tree, sigs, captured) -> None:
    """Every call of a lifted function in ``tree`` passes all its parameters by position
    and then its captured variables."""
    for sub in walk(tree):
        if (
            isinstance(sub, gast.Call)
            and isinstance(sub.func, gast.Name)
            and sub.func.id in sigs
            and not _shadowed(tree, sub.func.id)
        ):
            name = sub.func.id
            extra = [N.located(N.load(c), sub) for c in captured[name]]
            if sigs[name].starred:  # Python binds the rest when the call runs
                sub.args = extra + sub.args
                continue
            args = sigs[name].bind(sub, name)
            sub.args = args + extra
            sub.keywords = []


def _shadowed(tree, name) -> bool:
    """A lifted function's own parameter named like a sibling hides the sibling."""
    return isinstance(tree, gast.FunctionDef) and name in {
        a.id for a in tree.args.args + tree.args.posonlyargs
    }


def _replace_definitions(tree, defs, sigs) -> None:
    """Each lifted ``def`` statement becomes the assignments of its non-constant defaults
    (evaluated where the ``def`` ran, as Python does)."""

    def visit(stmts):
        out = []
        for s in stmts:
            if isinstance(s, gast.FunctionDef) and defs.get(s.name) is s:
                sig = sigs[s.name]
                for p, var in sig.variables.items():
                    out.append(N.assign(var, sig.defaults[p], sig.defaults[p]))
                continue
            for field in ("body", "orelse", "finalbody"):
                if getattr(s, field, None):
                    setattr(s, field, visit(getattr(s, field)) or [N.located(gast.Pass(), s)])
            out.append(s)
        return out

    tree.body = visit(tree.body) or [N.located(gast.Pass(), tree)]


def _compile(fs, trees) -> dict:
    """Real function objects for the lifted definitions: defined together inside a factory
    (so that they see each other, and themselves, through closure cells) whose globals are
    the enclosing function's; each carries its source for :func:`pullback.source.load_source`."""
    # The enclosing function's own closure variables that a function value reads (one
    # that captures nothing else): read here, so that a change rebuilds the gradient.
    cells = [
        v
        for v in getattr(fs.fn.__code__, "co_freevars", ())
        if any(_reads(t, v) for t in trees.values())
    ]
    values = [fs.lookup(v)[1] for v in cells]
    made = [  # closure factories (run_time_closures.py) the lifted functions call
        n
        for n in fs.namespace
        if n.startswith(PREFIX) and any(_reads(t, n) for t in trees.values())
    ]
    cells += made
    values += [fs.namespace[n] for n in made]
    body = [copy.deepcopy(t) for t in trees.values()]
    body.append(gast.Return(N.tuple_([N.load(n) for n in trees])))
    filename = f"<pullback: lifted from {fs.name}>"
    made = compile_factory(FACTORY, cells, body, filename, fs.fn.__globals__)(*values)
    out = {}
    for (name, t), fn in zip(trees.items(), made, strict=True):
        fn.__qualname__ = f"{fs.fn.__qualname__}.<locals>.{name}"
        fn.__module__ = fs.fn.__module__
        out[name] = with_source(fn, fs, t)
    return out
