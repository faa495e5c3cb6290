"""Which names of a function a differentiated value may reach: the check's activity.

The check reports a call of a function with neither rule nor source (PB301) only where a
gradient would have to flow through it. In the differentiated function itself the
transform decides that (it knows ``wrt`` and runs the activity analysis). In the user
functions it calls, the check decides it *before anything runs*, from the parameters the
call sites pass differentiated values to: a name is tainted when its value is computed
from a tainted name other than through its shape, size, rank or dtype (``x.shape``,
``len(x)``), flow-insensitively (a fixed point over every binding of the function,
nested scopes included). This over-approximates the transform's activity, so a
call it lets run carries no gradient; one it reports would need one. The transform still
refuses, as it builds each callee, any call its exact analysis finds active
(transform/problems.py), so nothing is silently lost.

>>> import gast
>>> tree = gast.parse('''
... def helper(x, n):
...     k = opaque(n)
...     y = x * 2.0
...     return y + k
... ''').body[0]
>>> sorted(tainted_names(tree, {"x"}))
['x', 'y']
"""

from __future__ import annotations

import gast

from ..tree_walk import walk

_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda)


def tainted_names(tree, active_params, modules=frozenset()) -> set:
    """The names of ``tree`` a value computed from ``active_params`` may reach.

    ``modules``: free names that are modules; ``np.convolve(w, x)`` is a call of a module's
    function, not a method that could keep ``x`` in ``np`` (then ``getattr(np, name)``
    read later would seem to carry a gradient)."""
    tainted = set(active_params)
    flows = [(t, s) for t, s in _flows(tree) if not t <= modules]
    changed = True
    while changed:
        changed = False
        for targets, sources in flows:
            if targets <= tainted or not (sources & tainted):
                continue
            tainted |= targets
            changed = True
    return tainted


# What an array's shape, size, rank or dtype is carries no gradient (``n = x.shape[0]``,
# ``range(len(x))``): a name read only there does not taint what is computed.
_SHAPE_ATTRIBUTES = frozenset({"shape", "ndim", "size", "dtype"})
_SHAPE_FUNCTIONS = frozenset({"len", "shape", "ndim", "size"})


def _names(node) -> set:
    out = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, gast.Name):
            out.add(n.id)
            continue
        if isinstance(n, gast.Attribute) and n.attr in _SHAPE_ATTRIBUTES:
            continue
        if isinstance(n, gast.Call) and _shape_function(n.func):
            stack.extend(k.value for k in n.keywords)
            continue
        stack.extend(gast.iter_child_nodes(n))
    return out


def _shape_function(func) -> bool:
    """``len``, ``np.shape``/``np.ndim``/``np.size`` (by their spelling: the check's
    activity is a name-level approximation)."""
    if isinstance(func, gast.Name):
        return func.id == "len"
    return (
        isinstance(func, gast.Attribute)
        and func.attr in _SHAPE_FUNCTIONS
        and isinstance(func.value, gast.Name)
        and func.value.id in ("np", "numpy")
    )


def _stored(target) -> set:
    """The names a target binds or changes: ``a``, ``a, b``, ``a[i]`` (a), ``*rest``."""
    out = set()
    for n in walk(target):
        if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load):
            out.add(n.id)
    if isinstance(target, (gast.Subscript, gast.Attribute)):  # a[i] = v, obj.w = v
        base = target.value
        while isinstance(base, (gast.Subscript, gast.Attribute)):
            base = base.value
        if isinstance(base, gast.Name):
            out.add(base.id)
    return out


def _flows(tree):
    """``(targets, sources)``: the values of ``sources`` may reach ``targets``."""
    for node in walk(tree):
        if isinstance(node, gast.Assign):
            sources = _names(node.value)
            for t in node.targets:
                yield _stored(t), sources
        elif isinstance(node, gast.AugAssign):
            targets = _stored(node.target)
            yield targets, _names(node.value) | targets
        elif isinstance(node, gast.AnnAssign) and node.value is not None:
            yield _stored(node.target), _names(node.value)
        elif isinstance(node, gast.NamedExpr):
            yield _stored(node.target), _names(node.value)
        elif isinstance(node, (gast.For, gast.comprehension)):
            yield _stored(node.target), _names(node.iter)
        elif isinstance(node, gast.With):
            for item in node.items:
                if item.optional_vars is not None:
                    yield _stored(item.optional_vars), _names(item.context_expr)
        elif isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef)) and node is not tree:
            # a nested function reading a tainted name returns values computed from it
            yield {node.name}, _names(node) - {node.name}
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute):
            # xs.append(v), d.update(v), a.fill(v): the receiver may now hold v
            receiver = node.func.value
            if isinstance(receiver, gast.Name):
                args = set()
                for a in node.args:
                    args |= _names(a)
                for k in node.keywords:
                    args |= _names(k.value)
                yield {receiver.id}, args


def reads_tainted(node, tainted) -> bool:
    """Whether the expression ``node`` reads a tainted name."""
    return any(isinstance(n, gast.Name) and n.id in tainted for n in walk(node))


def callee_active_params(call, callee_tree, tainted, bound: int = 0):
    """The parameters of ``callee_tree`` that the call ``call`` passes a tainted value
    to, or None (every parameter may be) when the binding is not plain (``*args``,
    ``**kwargs`` at the call or in the definition). ``bound``: how many leading
    parameters the callable binds itself (1 for ``obj.method(...)``: ``obj``)."""
    method = bound == 1
    if bound not in (0, 1):
        return None
    receiver = call.func.value if method and isinstance(call.func, gast.Attribute) else None
    passed = [*call.args, *(k.value for k in call.keywords)]
    if not any(reads_tainted(v, tainted) for v in passed) and (
        not method or (receiver is not None and not reads_tainted(receiver, tainted))
    ):
        # no argument carries a differentiated value, whatever the binding (a decorator's
        # `def helper(*args, **kwds)`, such as @contextlib.contextmanager's)
        return frozenset()
    a = callee_tree.args
    if a.vararg is not None or a.kwarg is not None or a.posonlyargs:
        return None
    if any(isinstance(x, gast.Starred) for x in call.args):
        return None
    if any(k.arg is None for k in call.keywords):
        return None
    params = [p.id for p in a.args]
    keyword_only = {p.id for p in a.kwonlyargs}
    args = list(call.args)
    active = set()
    if method:
        if not params:
            return None
        receiver = call.func.value if isinstance(call.func, gast.Attribute) else None
        if receiver is not None and reads_tainted(receiver, tainted):
            active.add(params[0])
        params = params[1:]
    if len(args) > len(params):
        return None
    for name, value in zip(params, args, strict=False):
        if reads_tainted(value, tainted):
            active.add(name)
    for k in call.keywords:
        if k.arg not in params and k.arg not in keyword_only:
            return None
        if reads_tainted(k.value, tainted):
            active.add(k.arg)
    return frozenset(active)
