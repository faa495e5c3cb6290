"""Closures handed to SciPy's solvers take what they capture through the solver's ``args``
(closure conversion).

Real code hands ``quad``, ``solve_ivp``, ``odeint``, ``minimize``, ``root``, ``fsolve``,
``brentq`` and ``least_squares`` (and ``np.apply_along_axis``, which passes its extra
arguments on) a lambda or a nested ``def`` that reads the function's own variables::

    def loss(p):
        return quad(lambda t: np.exp(-p[0] * t) * np.cos(p[1] * t), 0.0, 2.0)[0]

The solver's rule differentiates with respect to ``args`` (under the integral sign, by
the adjoint method, by the implicit function theorem), and a closure's captured values
are no argument of anything. So the call is rewritten, before the check and the
transformation alike, into the form that rule takes::

    def _pb_solver_4_22(t, p):
        return np.exp(-p[0] * t) * np.cos(p[1] * t)
    return quad(_pb_solver_4_22, 0.0, 2.0, args=(p,))[0]

which computes the same: a closure reads its variables when it is called, and the solver
calls it during the call, when they hold the values passed here. Every callable of the
call that the solver hands ``args`` to (``jac``, ``hess``, ``events``, ``Dfun``, ...)
must then take them too: each is converted the same way, and a call where one of them is
something else (a function of the module, whose parameters are fixed) is left as it is
(refused by the check with its fix, PB404/PB405). So is a closure that writes
``nonlocal`` variables, takes ``*args``, defaults or keyword-only parameters, and a call
whose ``args`` is not written out as a tuple. A ``**opts`` of the call is passed on as it
is (``solve_ivp(lambda t, y: -p * y, ts, y0, **opts)``, tolerances): a mapping that holds
``args`` too is refused by Python at the call (two values for ``args``), and a function
in it the solver hands ``args`` to gets them as well. Which solvers and which of their
parameters receive ``args`` is the rule's (``rule.extra["args_receivers"]``, set by
``rules._calculus_util.register_solver``).

>>> import gast
>>> tree = gast.parse('''
... def loss(p):
...     return quad(lambda t: p * t, 0.0, 1.0)[0]
... ''').body[0]
>>> receivers = lambda call: (("func", "a", "b", "args"), ("func",))
>>> solver_closures_as_args(tree, receivers)
True
>>> print(gast.unparse(tree).strip())  # doctest: +NORMALIZE_WHITESPACE
def loss(p):
    def _pb_solver_3_16(t, p):
        return p * t
    return quad(_pb_solver_3_16, 0.0, 1.0, args=(p,))[0]
"""

from __future__ import annotations

import copy

import gast

from ..lambdas import simple_parameters
from ..registry import default_registry
from ..resolve import bound_once, local_names, own_nodes
from ..source_lambdas import lambda_as_def
from ..tree_walk import walk
from . import nodes as N
from .closure_values import free_names, lambda_free, name_uses
from .rule_calls import rule_extra


def convert_solver_closures(fs, tree, registry=None) -> bool:
    """:func:`solver_closures_as_args` on ``tree`` (``fs``'s function, as the check or the
    transformation has it) for the solvers of ``registry`` (the default one if None)."""
    lines = getattr(fs, "lines", None)
    if lines is not None and not may_hold_a_closure(lines):
        return False  # (most functions: a long one's first gradient pays no walk for this)
    if registry is None:
        registry = default_registry()
    return solver_closures_as_args(tree, rule_extra(fs, tree, registry, "args_receivers"))


def may_hold_a_closure(lines) -> bool:
    """Whether the function's text may hold a lambda or a nested ``def`` (its own ``def``
    line is one)."""
    defs = 0
    for line in lines:
        if "lambda" in line:
            return True
        if "def " in line:
            defs += 1
    return defs > 1


def solver_closures_as_args(tree, receivers) -> bool:
    """Rewrite (in place) each call of ``tree``'s own scope whose callee ``receivers``
    knows (see the module docstring); whether any was rewritten."""
    defs = nested_defs(tree)
    displays = _closure_displays(tree, defs[0])
    calls = [
        n
        for n in own_nodes(tree.body)
        if isinstance(n, gast.Call) and _passes_a_closure(n, defs[0], displays)
    ]
    if not calls:
        return False
    local = local_names(tree)
    changed = False
    for call in calls:
        info = receivers(call)
        if info is None:
            continue
        plan = _plan(call, info, local, defs, displays)
        if plan is None:
            continue
        _apply(tree, call, plan)
        changed = True
    return changed


def _passes_a_closure(call, defs, displays=()) -> bool:
    """Whether ``call`` passes a lambda or a nested ``def`` (or a list or tuple display
    holding one, or a name of ``displays`` bound to such a display) as an argument."""

    def closure(v):
        return isinstance(v, gast.Lambda) or (isinstance(v, gast.Name) and v.id in defs)

    for v in list(call.args) + [k.value for k in call.keywords]:
        if closure(v) or (isinstance(v, (gast.List, gast.Tuple)) and any(map(closure, v.elts))):
            return True
        if isinstance(v, gast.Name) and v.id in displays:
            return True
    return False


def _closure_displays(tree, defs) -> dict:
    """``{name: display}``: names of ``tree``'s own scope bound once, by ``name = [...]``
    (or a tuple), to a display holding a lambda or a nested ``def``, and read once
    (``fs = [lambda t: a * t, lambda t: b * t]; np.piecewise(x, conds, fs)``): that read
    may take the display's place, as nothing else sees the list."""
    out = {}
    for n in own_nodes(tree.body):
        if not (
            isinstance(n, gast.Assign)
            and len(n.targets) == 1
            and isinstance(n.targets[0], gast.Name)
            and isinstance(n.value, (gast.List, gast.Tuple))
        ):
            continue
        name = n.targets[0].id
        if not any(
            isinstance(e, gast.Lambda) or (isinstance(e, gast.Name) and e.id in defs)
            for e in n.value.elts
        ):
            continue
        stores, loads = name_uses(tree, name)
        if len(stores) == 1 and len(loads) == 1 and bound_once(tree, name):
            out[name] = n.value
    return out


def nested_defs(tree) -> tuple[dict, set]:
    """``({name: def or lambda}, names)``: the nested functions ``tree``'s own scope
    defines exactly once and never rebinds otherwise (a ``def``, or ``name = lambda ...``),
    and the names of all its local functions."""
    found: dict = {}
    bound: dict = {}
    for n in own_nodes(tree.body):
        if isinstance(n, gast.FunctionDef) and n is not tree:
            found.setdefault(n.name, []).append(n)
        elif isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load):
            bound[n.id] = bound.get(n.id, 0) + 1
    defs = {k: v[0] for k, v in found.items() if len(v) == 1 and k not in bound}
    # every local function, nested defs and names bound to lambdas (``g = lambda t: ...``)
    lambdas = [
        n
        for n in own_nodes(tree.body)
        if isinstance(n, gast.Assign)
        and isinstance(n.value, gast.Lambda)
        and isinstance(n.targets[0], gast.Name)
    ]
    functions = set(found) | {n.targets[0].id for n in lambdas}
    for n in lambdas:  # bound once to a lambda: as a def (the check makes it one)
        name = n.targets[0].id
        if len(n.targets) == 1 and bound.get(name) == 1 and name not in found:
            defs[name] = n.value
    return defs, functions


def _plan(call, info, local, defs, displays=None):
    """``(slots, captured, args_slot)`` for a call to convert, or None (``defs``: what
    :func:`nested_defs` found; a closure that calls a local function is not converted,
    as that function would travel as a value): ``slots`` the
    ``(setter, callable node, its def or lambda)`` of each receiver given a closure,
    ``captured`` the sorted names they read of the function, ``args_slot`` where ``args``
    is (or goes)."""
    params, receiving = info
    defs, functions = defs
    if any(isinstance(a, gast.Starred) for a in call.args):
        return None
    star = "*args" in params  # the solver passes its extra positional arguments on
    given = {}
    for k, a in enumerate(call.args):
        if star and k >= params.index("*args"):
            break
        if k >= len(params):
            return None
        given[params[k]] = ("arg", k, a)
    for kw in call.keywords:
        if kw.arg is not None:  # a **opts mapping is passed on as it is (tolerances)
            given[kw.arg] = ("kw", kw, kw.value)
    candidates = []
    for name in receiving:
        if name not in given:
            continue
        value = given[name][2]
        if isinstance(value, gast.Name) and value.id in (displays or {}):
            value = displays[value.id]  # fs = [lambda ...]; piecewise(x, conds, fs)
        if isinstance(value, (gast.List, gast.Tuple)):  # np.piecewise's list of functions
            candidates += [(name, ("elt", value, k, e), e) for k, e in enumerate(value.elts)]
        else:
            candidates.append((name, given[name], value))
    slots = []
    captured: set = set()
    for name, slot, value in candidates:
        if isinstance(value, gast.Constant):
            continue  # jac=True, method strings: no function
        fn = value if isinstance(value, gast.Lambda) else None
        if isinstance(value, gast.Name) and value.id in defs:
            fn = defs[value.id]
        reads = None if fn is None else convertible_reads(fn, functions)
        if reads is None:
            return None  # a function whose parameters are fixed: left as written
        captured |= reads & local
        slots.append((name, slot, fn))
    if not slots or not captured or slots[0][0] != receiving[0]:
        return None
    if star:
        return slots, sorted(captured), "star"
    if "args" not in params:
        return None
    place = given.get("args")
    if place is not None and not isinstance(place[2], gast.Tuple):
        return None  # args=some_tuple: its length is not known here
    if place is None:  # **{"args": (c,)}: the captured values go after its own
        place = _args_in_display(call)
    return slots, sorted(captured), place


def convertible_reads(fn, functions) -> set | None:
    """The names the lambda or nested ``def`` ``fn`` reads besides its parameters, or None
    when it cannot take them as parameters: defaults, ``*args`` or keyword-only parameters,
    a decorator, ``nonlocal`` writes, or a call of one of the local ``functions`` (which
    would travel as a value)."""
    if not simple_parameters(fn.args):
        return None
    if isinstance(fn, gast.FunctionDef):
        if fn.decorator_list or writes_outside(fn):
            return None
        reads = free_names(fn) - params_of(fn)
    else:
        reads = lambda_free(fn)
    return None if reads & functions else reads


def value_index(display, value) -> int:
    """Where ``value`` sits in the list or tuple display ``display``."""
    return next(k for k, e in enumerate(display.elts) if e is value)


def params_of(fn) -> set:
    return {a.id for a in fn.args.args + fn.args.posonlyargs if isinstance(a, gast.Name)}


def writes_outside(fn) -> bool:
    return any(isinstance(n, (gast.Nonlocal, gast.Global)) for n in walk(fn))


def _apply(tree, call, plan) -> None:
    slots, captured, place = plan
    statement = statement_of(tree, call)
    made = []
    for _, (kind, where, *value), fn in slots:
        value = value[-1]
        name = f"_pb_solver_{value.lineno}_{value.col_offset}"
        made.append(converted_def(name, fn, captured))
        replacement = N.located(N.load(name), value)
        if kind == "elt":
            where.elts[value_index(where, value)] = replacement
        elif kind == "arg":
            call.args[where] = replacement
        else:
            where.value = replacement
    extra = [N.located(N.load(c), call) for c in captured]
    if place == "star":  # after the extra arguments the call passes on already
        call.args.extend(extra)
    elif place is None:
        value = N.located(N.tuple_(extra), call)
        call.keywords.append(N.located(gast.keyword(arg="args", value=value), call))
    elif place[0] == "display":
        _, display, k = place
        joined = gast.BinOp(
            left=N.call(N.load("tuple"), [display.values[k]]), op=gast.Add(), right=N.tuple_(extra)
        )
        display.values[k] = N.located(joined, display.values[k])
    else:
        place[2].elts.extend(extra)
    body, k = statement
    for _, (kind, where, *_), _ in slots:
        if kind == "elt":  # a display bound to a name earlier: the functions go before it
            k = min(k, statement_of(tree, where)[1])
    body[k:k] = made


def _args_in_display(call):
    """``("display", dict display, index of its "args" entry)`` for a call passing a
    dict display that holds ``args`` (``quad(lambda t, a: a * p * t, 0, 1, **{"args":
    (c,)})``: the converted closure is called with ``(c, p)``), else None. A mapping held
    in a name is passed on as it is (a collision with the ``args`` added here is refused
    when the call runs, star_runtime.py)."""
    for kw in call.keywords:
        if kw.arg is None and isinstance(kw.value, gast.Dict):
            for k, key in enumerate(kw.value.keys):
                if isinstance(key, gast.Constant) and key.value == "args":
                    return "display", kw.value, k
    return None


def converted_def(name, fn, captured):
    """The lambda or nested ``def`` ``fn`` as a ``def name`` that takes ``captured`` after
    its own parameters (it then captures nothing)."""
    if isinstance(fn, gast.Lambda):
        d = lambda_as_def(name, copy.deepcopy(fn))
    else:
        d = copy.deepcopy(fn)
        d.name = name
    for c in captured:
        d.args.args.append(N.located(gast.Name(c, gast.Param(), None, None), fn))
    return N.located(d, fn)


def statement_of(tree, node):
    """``(statement list, index)`` of the statement of ``tree``'s body holding ``node`` (a
    statement of the body itself: the converted functions capture nothing, so they may be
    defined there, before a loop or a branch the call is in)."""
    for k, s in enumerate(tree.body):
        if any(n is node for n in own_nodes([s])):
            return tree.body, k
    raise LookupError("the call is not in the function's own statements")
