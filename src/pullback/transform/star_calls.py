"""Star-arguments in both sweeps: calls of user functions with ``*args``/``**kwargs``
parameters, and star-calls ``f(*xs, **opts)`` and starred displays ``[*xs, y]``.

A user function's ``*args`` parameter is a tuple and its ``**kwargs`` a dict: each argument
that lands in one is differentiated as an element (``"args[1]"``, ``"kwargs['scale']"``,
see :func:`pullback.arguments.split_wrt`), so the caller receives one cotangent per
argument, as for any other parameter.
"""

from __future__ import annotations

import types

import gast

from ..arguments import split_wrt, spread_arguments
from ..callables import call_method_of
from ..resolve import (
    ARRAY_VARARG_METHODS,
    Callee,
    dotted_parts,
    namespace_locals,
    resolve_call,
)
from ..star_permutations import merge_dicts
from ..star_runtime import RRULES, TANGENTS, VJPS, star_call, star_method
from . import nodes as N
from .free_values import _is_user_method


def star_bindings(sig, bound) -> list:
    """``[(parameter name, argument node)]`` of a call bound to ``sig``: an argument
    that lands in ``*args`` or ``**kwargs`` is named as that element."""
    return spread_arguments(sig, bound)


# -- the normalizer: star-calls and starred displays as packed tuples and dicts -------------


def has_star(call) -> bool:
    """Whether a call spreads a sequence (``*xs``) or a mapping (``**opts``)."""
    return any(isinstance(a, gast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    )


_CONTAINER_METHODS = frozenset(dir(list)) | frozenset(dir(dict)) | frozenset(dir(set))


def run_time_keywords(fs, call, locals_) -> bool:
    """Whether ``call`` passes a keyword whose value is computed (not a constant) to a
    callee found only when it runs: a method of a value (``m.apply(x, scale=p)``,
    ``p._replace(w=v)``; not one named like a list's, dict's or set's method), a function
    held in a variable (``fs[k](x, scale=p)``, ``getattr(m, name)(x, scale=p)``) or a
    callable object (``model(x, scale=p)``). Its
    pullback, found at run time, gives cotangents to positional arguments only; as a
    star-call its keywords go by position where the callee takes them so, else through
    a keyword shim (keyword_shims.py), and get their cotangents at every order."""
    if not call.keywords or any(k.arg is None for k in call.keywords):
        return False
    if all(isinstance(k.value, gast.Constant) for k in call.keywords):
        return False
    func = call.func
    if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name):
        if func.value.id in namespace_locals(fs):
            return False  # xp.sum(x, axis=a): the namespace's function, a rule
    if isinstance(func, gast.Attribute) and func.attr in _CONTAINER_METHODS:
        return False  # xs.sort(key=k), d.update(w=v): the containers' own paths
    callee = resolve_call(fs, call, locals_)
    if _is_user_method(callee, func):
        return True  # MODEL.apply(x, scale=p): dispatched on the object when it runs
    if callee.kind == "object":  # a global callable object of a user class: its __call__
        method = call_method_of(callee.obj)
        return method is not callee.obj and isinstance(method, types.MethodType)
    return callee.kind in ("method", "dynamic")


def _located(node, where):
    return gast.copy_location(node, where)


def _packed(elts, where):
    """``(a,) + tuple(xs) + (b, c)`` for the elements ``a, *xs, b, c``: one tuple whose
    cotangent the existing rules split back (tuple concatenation, ``tuple()``)."""
    pieces, run = [], []
    for e in elts:
        if isinstance(e, gast.Starred):
            if run:
                pieces.append(_located(N.tuple_(run), where))
                run = []
            pieces.append(_located(N.call(N.load("tuple"), [e.value]), e))
        else:
            run.append(e)
    if run or not pieces:
        pieces.append(_located(N.tuple_(run), where))
    out = pieces[0]
    for p in pieces[1:]:
        out = _located(gast.BinOp(left=out, op=gast.Add(), right=p), where)
    return out


class StarCalls:
    """Normalizer methods (a mixin of :class:`~.normalize.Normalizer`): star-calls become
    ``star_call(f, args, keywords, *mappings)`` (:mod:`pullback.star_runtime`), starred
    displays tuple concatenations, and ``kwargs.get(k, d)`` on the ``**kwargs``
    parameter the conditional it computes."""

    def star_display(self, e, stmts):
        """``[*xs, y]``, ``(*t, 1.0)``, ``{*a, b}``: a packed tuple, then list or set."""
        self.namespace.setdefault("tuple", tuple)
        packed = _packed(e.elts, e)
        if isinstance(e, gast.Tuple):
            return self.operation(packed, stmts)
        kind = list if isinstance(e, gast.List) else set
        self.namespace.setdefault(kind.__name__, kind)
        return self.operation(_located(N.call(N.load(kind.__name__), [packed]), e), stmts)

    def dict_display(self, e, stmts):
        """``{**a, "k": v, **b}``: ``merge_dicts(a, {"k": v}, b)`` (later keys win)."""
        parts, run = [], ([], [])
        for key, value in zip(e.keys, e.values, strict=True):
            if key is None:
                if run[0]:
                    parts.append(_located(gast.Dict(keys=run[0], values=run[1]), e))
                    run = ([], [])
                parts.append(value)
            else:
                run[0].append(key)
                run[1].append(value)
        if run[0]:
            parts.append(_located(gast.Dict(keys=run[0], values=run[1]), e))
        args = self.atom(_located(N.tuple_(parts), e), stmts)
        empty = self.atom(_located(gast.Dict(keys=[], values=[]), e), stmts)
        self.namespace["star_call"] = star_call
        self.namespace["merge_dicts"] = merge_dicts
        node = _located(N.call(N.load("star_call"), [N.load("merge_dicts"), args, empty]), e)
        node.pb_callee = Callee("star", star_call, name="star_call")
        return node

    def star_call(self, e, stmts):
        """A call with ``*`` or ``**`` arguments, or with keywords of a callee found at
        run time (:func:`run_time_keywords`), or None for any other call."""
        if not has_star(e) and not run_time_keywords(self.fs, e, self.locals):
            return None
        vararg = self.vararg_method(e)
        if vararg is not None:
            return self.operation(vararg, stmts)
        self.namespace.setdefault("tuple", tuple)
        args = self.atom(_packed(e.args, e), stmts)
        named = [k for k in e.keywords if k.arg is not None]
        display = gast.Dict(keys=[N.const(k.arg) for k in named], values=[k.value for k in named])
        display = self.operation(_located(display, e), stmts)
        keywords = self.fresh()
        stmts.append(N.assign(keywords, display, e))
        keywords = N.load(keywords)
        mappings = [self.atom(k.value, stmts) for k in e.keywords if k.arg is None]
        callee = resolve_call(self.fs, e, self.locals)
        if callee.kind in ("method", "array_method") or _is_user_method(callee, e.func):
            receiver = self.atom(e.func.value, stmts)
            head, helper = [receiver, N.const(e.func.attr)], star_method
        else:
            if callee.kind == "object" and dotted_parts(e.func):
                func = self.bind_global(e.func)
            else:
                func = self.atom(e.func, stmts)
            head, helper = [func], star_call
        self.namespace[helper.__name__] = helper
        node = _located(N.call(N.load(helper.__name__), head + [args, keywords] + mappings), e)
        node.pb_callee = Callee("star", helper, name=helper.__name__)
        # each named keyword's atom: its activity is the key's (_keywords_active)
        node.pb_keyword_atoms = [(k.arg, v) for k, v in zip(named, display.values, strict=True)]
        return node

    def kwargs_view(self, e):
        """``kwargs.values()`` is ``[kwargs[k] for k in kwargs]``, ``.items()`` the pairs,
        ``.keys()`` the keys (in the dict's order, as Python iterates them): comprehensions
        whose items are subscripts of the dict, so gradients reach each value."""
        kwarg = self.fs.tree.args.kwarg
        func = e.func
        if (
            kwarg is None
            or not isinstance(func, gast.Attribute)
            or func.attr not in ("values", "items", "keys")
            or not isinstance(func.value, gast.Name)
            or func.value.id != kwarg.id
            or e.args
            or e.keywords
        ):
            return None
        key = self.fresh("key")
        item = N.subscript(N.load(kwarg.id), N.load(key))
        element = {
            "values": item,
            "items": N.tuple_([N.load(key), item]),
            "keys": N.load(key),
        }[func.attr]
        # over list(kwargs), its keys: the forward mode iterates over sequences only
        self.namespace.setdefault("list", list)
        keys = N.call(N.load("list"), [N.load(kwarg.id)])
        loop = gast.comprehension(target=N.store(key), iter=keys, ifs=[], is_async=0)
        return _located(gast.ListComp(elt=element, generators=[loop]), e)

    def vararg_method(self, e):
        """``X.reshape(*shape)`` (a method that takes its shape spread out or as one tuple):
        ``X.reshape(tuple(shape))``."""
        func = e.func
        if (
            not isinstance(func, gast.Attribute)
            or func.attr not in ARRAY_VARARG_METHODS
            or e.keywords
            or len(e.args) != 1
            or not isinstance(e.args[0], gast.Starred)
        ):
            return None
        callee = resolve_call(self.fs, e, self.locals)
        if callee.kind != "array_method":
            return None
        self.namespace.setdefault("tuple", tuple)
        packed = _located(N.call(N.load("tuple"), [e.args[0].value]), e)
        return _located(gast.Call(func=func, args=[packed], keywords=[]), e)

    def kwargs_get(self, e):
        """``kwargs.get(key, default)`` on the ``**kwargs`` parameter (a dict the call
        made): ``kwargs[key] if key in kwargs else default``, whose gradient flows; and
        ``kwargs.values()``/``.items()``/``.keys()`` as the lists they iterate over
        (:meth:`kwargs_view`)."""
        view = self.kwargs_view(e)
        if view is not None:
            return view
        kwarg = self.fs.tree.args.kwarg
        func = e.func
        if (
            kwarg is None
            or not isinstance(func, gast.Attribute)
            or func.attr != "get"
            or not isinstance(func.value, gast.Name)
            or func.value.id != kwarg.id
            or e.keywords
            or not 1 <= len(e.args) <= 2
            or has_star(e)
        ):
            return None
        key = e.args[0]
        default = e.args[1] if len(e.args) == 2 else N.const(None)
        test = gast.Compare(left=key, ops=[gast.In()], comparators=[N.load(kwarg.id)])
        item = N.subscript(N.load(kwarg.id), key)
        choice = gast.IfExp(test=_located(test, e), body=_located(item, e), orelse=default)
        return _located(choice, e)


def emit_star_forward(builder, s, t, pb, v):
    """``(line, alt)``: the forward-sweep line of an active star-call,
    ``t, pb = rrule(site, ...)``, and where the gradient is differentiated again the plain
    call (its reverse: :func:`emit_star_reverse`)."""
    rrule = builder.bind(v.pb_callee.name + "_rrule", RRULES[v.pb_callee.obj])
    site = builder.call_site_name(s)
    args = ", ".join(gast.unparse(a).strip() for a in v.args)
    plain = f"{t} = {gast.unparse(v.func).strip()}({args}); {pb} = None"
    return f"{t}, {pb} = {rrule}({site}, {_keywords_active(builder, v)}, {args})", plain


def emit_star_reverse(builder, s, c, g, v) -> str:
    """The reverse of a star-call in a gradient that is differentiated again: its
    cotangents ``c`` from the callee's vjp function (``star_call_vjp``), which has a rule."""
    vjp = builder.bind(v.pb_callee.name + "_vjp", VJPS[v.pb_callee.obj])
    site = builder.call_site_name(s)
    args = ", ".join(gast.unparse(a).strip() for a in v.args)
    return f"{c} = {vjp}({site}, {_keywords_active(builder, v)}, {g}, {args})"


def _keywords_active(builder, v):
    """Which keyword arguments of a star-call carry a gradient, as the run-time helpers
    take it (``star_runtime.active_keys``): False for none, else one entry per keyword
    dict, the named keywords' dict first: the names of its active keys (True where the
    atoms are not known), then True or False for each ``**`` mapping as a whole. A
    constant ``**opts`` (``rtol=1e-10``) then passes its floats as they are, beside an
    ``args=(p,)`` whose gradient the callee's rule takes."""
    operands = v.args[-1 - _n_mappings(v) :]
    if not any(builder.is_active_arg(a) for a in operands):
        return False
    atoms = getattr(v, "pb_keyword_atoms", None)
    if atoms is None or not builder.is_active_arg(operands[0]):
        head = builder.is_active_arg(operands[0])
    else:
        head = tuple(key for key, a in atoms if builder.is_active_arg(a))
    return (head, *(builder.is_active_arg(m) for m in operands[1:]))


def _n_mappings(v) -> int:
    fixed = 4 if v.pb_callee.obj is star_method else 3
    return len(v.args) - fixed


def star_tangent_head(builder, v, site) -> str:
    """The forward-mode call head of a star-call (``star_tangent(site, ``)."""
    fn = TANGENTS[v.pb_callee.obj]
    return f"{builder.bind(fn.__name__, fn)}({site}, "


def callee_wrt(active_names) -> tuple:
    """The parameters a callee's adjoint differentiates for the active arguments named by
    :func:`star_bindings` (an element of ``*args`` asks for the whole tuple)."""
    return split_wrt(tuple(active_names))[0]


def cotangent_exprs(c: str, active_names) -> list[str]:
    """For each active argument, the expression of its cotangent in the result ``c`` of
    the callee's pullback (an item of the tuple or dict cotangent of ``*args``/``**kwargs``
    where it landed there); ``tuple_item``/``dict_item`` have rules, so the expressions
    can be differentiated again."""
    params, picks = split_wrt(tuple(active_names))
    if picks is None:
        return [f"{c}[{k}]" for k in range(len(active_names))]
    out = []
    for k, key in picks:
        if key is None:
            out.append(f"{c}[{k}]")
        elif isinstance(key, int):
            out.append(f"tuple_item({c}[{k}], {key})")
        else:
            out.append(f"dict_item({c}[{k}], {key!r})")
    return out
