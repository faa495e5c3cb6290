"""Closure conversion: a closure that escapes as a value becomes a record of its cells.

``def loss(x): return np.sum(w * x ** 2)`` returned by a factory, ``lambda x: f(g(x))``
returned by ``compose``, ``lambda y: y * x`` passed to a user function that keeps it,
closures in a dict: each is made, where the user's code makes it, as an object of
:class:`pullback.closure_cells.Closure` whose fields are the values it captures::

    def _pb_cells_6_4(w, x):            # the closure's body, what it captures first
        return np.sum(w * x ** 2)
    loss = _pb_Closure(_pb_cells_6_4, (w,))

(the lifted function is compiled apart, with its source, and found in the generated code's
namespace). The object is a plain-class record: its cotangent is that of the captured
values, each call ``loss(x)`` differentiates ``_pb_cells_6_4(w, x)`` and sends the
cotangent of ``w`` back through the record to the value the enclosing function captured,
to every order.

Why this is exact: Python reads a captured variable when the closure runs. The record
holds the value the variable has when the closure is made, which is the value every call
reads when no binding of the variable can run after the closure is made. That is
:func:`.run_time_closures.verdict`: each captured variable bound only before the ``def``,
never in a loop around it, written by no nested function (``nonlocal``), not a
comprehension's variable. Anything else keeps its refusal (PB404/PB405), whose fix (pass
it as a default) this conversion then differentiates. A default that reads the enclosing
function's variables is evaluated where the closure is made, as Python does, and kept in
the record (:class:`~pullback.closure_cells.ClosureWithDefaults`, positional calls).

What other passes take as they are is left to them: a closure only called (lifted,
closures.py), one that captures nothing (a function as written), one passed to a user
function that only calls it (specialized, closure_arguments.py), lists of closures called
in the function (stored_closures.py), solvers' and ``np.vectorize``'s closures.

>>> import gast
>>> tree = gast.parse('''
... def make(w):
...     c = 2.0 * w
...     return lambda x: c * x
... ''').body[0]
>>> [(type(node).__name__, captured) for _, node, captured, _ in closure_sites(tree, None)]
[('Lambda', ['c'])]
"""

import copy
import functools

import gast

from ..closure_cells import Closure, ClosureWithDefaults, Partial
from ..resolve import own_nodes, parent_map
from ..source import with_source
from ..source_lambdas import lambda_as_def
from ..tree_walk import walk
from . import nodes as N
from .closure_arguments import passed_to_specializable
from .closure_values import _called, _higher_order_function, constant_defaults
from .local_partials import partial_sites
from .run_time_closures import (
    _owner,
    _replace_child,
    _replace_statement,
    compile_factory,
    stored_lambda,
    verdict,
)
from .solver_closures import may_hold_a_closure

_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)
# Named like run_time_closures.PREFIX: a lifted or run-time-made function that reads one
# (a nested factory's) is given it as a cell (closures._compile, closure_factory).
PREFIX = "_pb_closure_cells_"
CLASS = "_pb_closure_record"
CLASS_DEFAULTS = "_pb_closure_record_defaults"
CLASS_PARTIAL = "_pb_closure_partial"


def convert_cell_closures(fs, tree, resolve=None, returned=None, carries=None) -> bool:
    """Convert (in place) each closure of ``tree`` that escapes as a value and
    whose captures are exact (see the module docstring); the lifted functions and the
    record classes go into ``fs.namespace``. ``returned``: the nested function a factory's
    record version returns as a tuple (closure_records.py), left to it. ``carries(node,
    names)``: whether a differentiated value may reach what the closure ``node`` reads of
    ``names`` (the check's activity); the others are left to run as Python makes them
    (run_time_closures.py). Whether anything changed."""
    lines = getattr(fs, "lines", None)
    closures = lines is None or may_hold_a_closure(lines)
    partial = lines is None or any("partial" in line for line in lines)
    if getattr(fs, "fn", None) is None or not (closures or partial):
        return False  # (fn None: the static check, nothing to compile)
    sites = [
        s
        for s in (closure_sites(tree, resolve) if closures else ())
        if (returned is None or getattr(s[0], "name", None) != returned)
        and (carries is None or carries(s[1], _reads_of(s[1], s[2])))
    ]
    partials = partial_values(tree, resolve, carries) if partial else []
    if not sites and not partials:
        return False
    for call in partials:  # functools.partial(f, p) -> _pb_Partial(f, (p,), {...})
        fs.namespace[CLASS_PARTIAL] = Partial
        func, *bound = call.args
        keywords = gast.Dict(
            keys=[gast.Constant(k.arg, None) for k in call.keywords],
            values=[k.value for k in call.keywords],
        )
        call.func = N.located(N.load(CLASS_PARTIAL), call.func)
        call.args = [func, N.located(N.tuple_(bound), call), N.located(keywords, call)]
        call.keywords = []
    parents = parent_map(tree)
    for site, node, captured, defaults in sites:
        name = f"{PREFIX}{node.lineno}_{node.col_offset}"
        lifted = _lifted_tree(name, node, captured, defaults)
        fs.namespace[name] = _compile(fs, name, lifted, node)
        cells = N.tuple_([N.load(c) for c in captured])
        if defaults:
            fs.namespace[CLASS_DEFAULTS] = ClosureWithDefaults
            params = node.args.posonlyargs + node.args.args
            required = gast.Constant(len(params) - len(defaults), None)
            names = N.tuple_(
                [gast.Constant(a.id, None) for a in params[len(params) - len(defaults) :]]
            )
            made = N.call(
                N.load(CLASS_DEFAULTS),
                [N.load(name), cells, N.tuple_(defaults), names, required],
            )
        else:
            fs.namespace[CLASS] = Closure
            made = N.call(N.load(CLASS), [N.load(name), cells])
        made = N.located(made, node)
        if isinstance(site, gast.Assign):  # name = lambda ...
            site.value = made
        elif isinstance(node, gast.Lambda):
            _replace_child(parents[node], node, made)
        else:
            target = N.located(gast.Name(node.name, gast.Store(), None, None), node)
            assign = N.located(gast.Assign(targets=[target], value=made, type_comment=None), node)
            _replace_statement(parents[node], node, assign)
    return True


def closure_sites(tree, resolve) -> list:
    """``(site, closure, captured names, default expressions)`` of each def or lambda of
    ``tree`` (nested functions' included) that this module converts (``site``: the closure, or the
    statement ``name = lambda ...``; ``defaults``: empty when every default is a
    constant, which the lifted function keeps)."""
    parents = parent_map(tree)
    out = []
    for sub in walk(tree):
        if sub is tree or not isinstance(sub, (gast.FunctionDef, gast.Lambda)):
            continue
        owner, _ = _owner(sub, parents, tree)
        if owner is None or not _escapes(sub, owner, parents, resolve):
            continue
        found = verdict(tree, sub, parents)
        site = _bound_lambda(sub, parents) or sub
        if found is None or found.refusal is not None:
            continue
        if not found.captured and constant_defaults(sub):
            continue  # the same function wherever it runs: taken as it is written
        args = sub.args
        defaults = []
        if found.defaults or not constant_defaults(sub):
            if any(d is not None for d in args.kw_defaults) or args.vararg or args.kwarg:
                continue  # keyword-only defaults read there: left to the check's refusal
            defaults = list(args.defaults)
        out.append((site, sub, found.captured, defaults))
    return out


def _reads_of(node, captured) -> set:
    """What the closure ``node`` captures and what its defaults read."""
    args = node.args
    defaults = list(args.defaults) + [d for d in args.kw_defaults if d is not None]
    return set(captured) | {n.id for d in defaults for n in walk(d) if isinstance(n, gast.Name)}


def partial_values(tree, resolve, carries=None) -> list:
    """The calls ``functools.partial(func, *args, **keywords)`` of ``tree``'s own scope
    that this module makes records: used as values (not the partials only called that
    local_partials.py rewrites, not an argument of a library's function, whose rule
    takes a partial as it is), arguments written out, keywords constants (a keyword found
    at run time carries no gradient: one that may is left to PB301)."""
    if resolve is None:
        return []
    candidates = [
        n
        for n in own_nodes(tree.body)
        if isinstance(n, gast.Call)
        and (getattr(n.func, "id", None) == "partial" or getattr(n.func, "attr", None) == "partial")
    ]
    if not candidates:
        return []
    local = {id(assign.value) for assign, _ in partial_sites(tree, resolve)}
    parents = parent_map(tree)
    out = []
    for call in candidates:
        if id(call) in local or not call.args:
            continue
        if any(isinstance(a, gast.Starred) for a in call.args):
            continue
        if any(k.arg is None or not isinstance(k.value, gast.Constant) for k in call.keywords):
            continue
        try:
            if resolve(call) is not functools.partial:
                continue
        except Exception:  # noqa: BLE001 - unresolvable here: left to the checks
            continue
        parent = parents.get(call)
        if isinstance(parent, gast.Call) and call in parent.args:
            if not _user_call(parent, resolve):
                continue
        bound = {n.id for a in call.args[1:] for n in walk(a) if isinstance(n, gast.Name)}
        if carries is not None and not carries(call, bound):
            continue
        out.append(call)
    return out


def _bound_lambda(lam, parents):
    """The statement ``name = lambda ...`` binding ``lam`` to one name, or None."""
    parent = parents.get(lam)
    if (
        isinstance(lam, gast.Lambda)
        and isinstance(parent, gast.Assign)
        and len(parent.targets) == 1
        and isinstance(parent.targets[0], gast.Name)
    ):
        return parent
    return None


def _escapes(node, tree, parents, resolve) -> bool:
    """Whether the def or lambda ``node`` is used as a value that leaves the calls of the
    function: returned, stored, or passed to a call that is not a user function only
    calling it nor a builtin's function argument (``map``, ``sorted(key=)``)."""
    bound = _bound_lambda(node, parents)
    if isinstance(node, gast.FunctionDef) or bound is not None:
        name = node.name if bound is None else bound.targets[0].id
        if getattr(node, "decorator_list", None) or _rebound(tree, bound or node, name):
            return False
        uses = [
            n
            for n in walk(tree)
            if isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load)
        ]
        return any(_value_use(n, parents, resolve) for n in uses)
    parent = parents.get(node)
    if stored_lambda(node, parents):
        return True
    if isinstance(parent, gast.Call) and node in parent.args:
        return _value_use(node, parents, resolve)
    if isinstance(parent, gast.keyword):
        call = parents.get(parent)
        return (
            isinstance(call, gast.Call)
            and not _higher_order_function(node, parent, parents)
            and _user_call(call, resolve)
        )
    return False


def _value_use(node, parents, resolve) -> bool:
    if _called(node, parents) or _higher_order_function(node, parents.get(node), parents):
        return False
    call = parents.get(node)
    if isinstance(call, gast.Call) and node in call.args:
        if passed_to_specializable(node, parents, resolve):
            return False
        return _user_call(call, resolve)
    return True


def _user_call(call, resolve) -> bool:
    """A call of a user's function or class (not a library's, whose rule or the check's
    refusal decides what a function argument may be)."""
    from ..guards import is_library_module_name

    if resolve is None:
        return False
    try:
        callee = resolve(call)
    except Exception:  # noqa: BLE001 - unresolvable here: left to the checks
        return False
    if callee is None:
        return False
    module = getattr(callee, "__module__", None) or ""
    return callable(callee) and not is_library_module_name(module)


def _rebound(tree, node, name) -> bool:
    """Whether anything but ``node`` (a def, or ``name = lambda``) binds ``name`` in
    ``tree``'s own scope."""
    mine = set(node.targets) if isinstance(node, gast.Assign) else set()
    for sub in own_nodes(tree.body):
        if sub is node or sub in mine:
            continue
        if isinstance(sub, (gast.FunctionDef, gast.ClassDef)) and sub.name == name:
            return True
        if isinstance(sub, gast.Name) and sub.id == name and not isinstance(sub.ctx, gast.Load):
            return True
        if isinstance(sub, (gast.Global, gast.Nonlocal)) and name in sub.names:
            return True
    return False


def _lifted_tree(name, node, captured, defaults) -> gast.FunctionDef:
    """The closure as a def of its own: ``captured`` first (positional only), then its
    parameters (without ``defaults``, which the record passes)."""
    if isinstance(node, gast.Lambda):
        lifted = N.located(lambda_as_def(name, copy.deepcopy(node)), node)
    else:
        lifted = copy.deepcopy(node)
        lifted.name = name
    extra = [N.located(gast.Name(c, gast.Param(), None, None), node) for c in captured]
    lifted.args = captured_first(lifted.args, extra, keep_defaults=not defaults)
    return lifted


def captured_first(args, extra, keep_defaults=True) -> gast.arguments:
    """``args`` with the parameters ``extra`` first, positional only (what a lifted
    closure captures), the others as they are (their defaults unless not kept)."""
    return gast.arguments(
        args=args.args,
        posonlyargs=extra + args.posonlyargs,
        vararg=args.vararg,
        kwonlyargs=args.kwonlyargs,
        kw_defaults=args.kw_defaults,
        kwarg=args.kwarg,
        defaults=args.defaults if keep_defaults else [],
    )


def _compile(fs, name, lifted, node):
    """The lifted function, compiled with the enclosing function's globals (its own
    closure variables read now, as closures.py's lifted functions read them), carrying
    its source for :func:`pullback.source.load_source`."""
    free = {n.id for n in walk(lifted) if isinstance(n, gast.Name)}
    cells = [v for v in getattr(fs.fn.__code__, "co_freevars", ()) if v in free]
    cells += [n for n in fs.namespace if n in free and n != name]
    values = [fs.lookup(v)[1] if v not in fs.namespace else fs.namespace[v] for v in cells]
    body = [copy.deepcopy(lifted), gast.Return(N.load(name))]
    filename = f"<pullback: closure in {fs.name}>"
    fn = compile_factory("_pb_cells_factory", cells, body, filename, fs.fn.__globals__)(*values)
    fn.__qualname__ = f"{fs.fn.__qualname__}.<locals>.{getattr(node, 'name', '<lambda>')}"
    fn.__module__ = fs.fn.__module__
    return with_source(fn, fs, lifted)
