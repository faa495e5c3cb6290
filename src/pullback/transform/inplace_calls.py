"""In-place array methods and ``out=`` on arrays the function created itself (issue 11).

:func:`inplace_call` recognizes a call that writes into an array named by a plain name
(the check and the normalizer share it)::

    a.fill(v)   a.sort(axis)   a.put(ind, v, mode)   np.copyto(a, s, casting=, where=)
    np.copyto(a[k], s)   (a part of a: kind ``"copyto_part"``, written as ``a[k] = s``)
    np.put(a, ind, v)   np.place(a, m, v)   np.putmask(a, m, v)   np.put_along_axis(a, i, v, ax)
    np.fill_diagonal(a, v, wrap)   np.add.at(a, idx, v)   np.subtract.at(a, idx, v)
    np.multiply.at / np.divide.at / np.maximum.at / np.minimum.at(a, idx, v)
    np.multiply(x, y, out=a)   np.cumsum(x, out=a)   np.add(x, y, a)   (any NumPy out=)

:meth:`InplaceCalls.inplace_statement` is the normalizer's one entry for writes into local
arrays (``Normalizer.stmt`` asks it first): subscript stores (``a[i] = v``, ``a[i] += v``,
see :mod:`pullback.transform.mutation`), these calls, ``a.flat[key] = v`` (written as
``np.put`` at the positions ``np.arange(a.size)[key]``), and ``a += v`` / ``a -= v`` on an
array written in place.

The check (:mod:`pullback.check.mutation_checks`) lets a call through only as a statement of
its own (``f(...)`` or ``r = f(...)``) and only when the array is provably local; the
normalizer (:class:`InplaceCalls`) then rewrites it as a functional store that rebinds the
name, reusing ``array_set`` (see :mod:`pullback.arrays_inplace_calls` for the table).
The call's result is what NumPy returns: the written array for ``out=`` (``r = a``: the
check then refuses later writes into either name, as for any alias), ``None`` otherwise.
"""

from __future__ import annotations

import inspect

import gast
import numpy as np

from .. import arrays_ufunc_at
from ..resolve import parent_map, resolve_call
from ..tree_walk import statements, walk
from . import nodes as N

# Methods and functions: (parameter names after the array, in order).
METHODS = {
    "fill": ("value",),
    "sort": ("axis", "kind", "order"),
    "put": ("indices", "values", "mode"),
}
FUNCTIONS = {
    "copyto": ("src", "casting", "where"),
    "put": ("ind", "v", "mode"),
    "fill_diagonal": ("val", "wrap"),
    "place": ("mask", "vals"),
    "putmask": ("mask", "values"),
    "put_along_axis": ("indices", "values", "axis"),
}
AT_UFUNCS = ("add", "subtract")
# ufuncs that are a binary operator on arrays (``ufunc(x, y, out=a, where=m)``'s rewrite)
_OPERATORS = {
    "add": gast.Add,
    "subtract": gast.Sub,
    "multiply": gast.Mult,
    "divide": gast.Div,
    "true_divide": gast.Div,
    "power": gast.Pow,
}
VALUE_AT_UFUNCS = tuple(arrays_ufunc_at.AT_UFUNCS)  # multiply, divide, maximum, minimum


class InplaceCall:
    """One recognized in-place call: ``kind`` (``"fill"``, ``"sort"``, ``"put"``,
    ``"copyto"``, ``"fill_diagonal"``, ``"add_at"``, ``"subtract_at"``, ``"out"``), the
    array ``target`` (a Name), the other arguments by parameter name (``args``), and
    ``problem``: why this form is not supported (a fix), or None. (A plain class, not a
    dataclass: see ``analyze.Activity``.)"""

    def __init__(self, kind, target, call, args, problem=None, ufunc=None):
        self.kind = kind
        self.target = target
        self.call = call
        self.args = args
        self.problem = problem
        self.ufunc = ufunc  # the ufunc's name, for "ufunc_at"


def inplace_call(call, callee) -> InplaceCall | None:
    """The in-place call ``call`` is (with its resolved ``callee``), or None."""
    if not isinstance(call, gast.Call) or any(isinstance(a, gast.Starred) for a in call.args):
        return None
    if any(k.arg is None for k in call.keywords):
        return None
    func = call.func
    if (
        callee.kind == "method"
        and not callee.python_method
        and isinstance(func, gast.Attribute)
        and func.attr in METHODS
    ):
        if not isinstance(func.value, gast.Name):
            return None
        return _bound(func.attr, func.value, call, METHODS[func.attr], call.args)
    if callee.kind != "object":
        return None
    obj = callee.obj
    owner = getattr(obj, "__self__", None)
    if getattr(obj, "__name__", None) == "at" and isinstance(owner, np.ufunc):
        if owner.__name__ in AT_UFUNCS:
            return _first_target(owner.__name__ + "_at", call, ("indices", "b"))
        if owner.__name__ in VALUE_AT_UFUNCS:
            spec = _first_target("ufunc_at", call, ("indices", "b"))
            if spec is not None:
                spec.ufunc = owner.__name__
            return spec
    for name, params in FUNCTIONS.items():
        if obj is getattr(np, name, None):
            return _first_target(name, call, params)
    return _out_call(call, obj)


def numpy_array_method(kinds, call) -> bool:
    """Whether ``call`` is ``x.name(...)`` of a method NumPy's ``ndarray`` defines in C
    (``x.copy()``) on a name whose kind says it is exactly a NumPy array: found at run
    time (:func:`pullback.dynamic_calls.call_method`), it still never runs user code."""
    func = call.func
    if not (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name)):
        return False
    kind = kinds.get(func.value.id)
    if not (isinstance(kind, tuple) and kind and kind[0] == "array"):
        return False
    return type(inspect.getattr_static(np.ndarray, func.attr, None)) is _METHOD_DESCRIPTOR


_METHOD_DESCRIPTOR = type(np.ndarray.copy)


def _first_target(kind, call, params):
    if call.args and kind == "copyto" and _part_of_a_name(call.args[0]):
        # np.copyto(p[0], p[1]): a write into p's part, as `p[0] = p[1]` (the target a Name)
        spec = _bound("copyto_part", call.args[0].value, call, params, call.args[1:])
        spec.args["part"] = call.args[0]
        if spec.problem is None and ("where" in spec.args or "casting" in spec.args):
            part, src = _text(call.args[0]), _text(spec.args["src"])
            if "where" in spec.args:
                src = f"np.where({_text(spec.args['where'])}, {src}, {part})"
            spec.problem = f"write the store `{part} = {src}` (a part of an array)"
        return spec
    if not call.args or not isinstance(call.args[0], gast.Name):
        return None
    return _bound(kind, call.args[0], call, params, call.args[1:])


def _text(node) -> str:
    return gast.unparse(node).strip()


def _part_of_a_name(node) -> bool:
    """``p[0]``, ``p[:, -1]``: a subscript read of a plain name."""
    return (
        isinstance(node, gast.Subscript)
        and isinstance(node.value, gast.Name)
        and isinstance(node.ctx, gast.Load)
    )


def _bound(kind, target, call, params, positional) -> InplaceCall:
    args = dict(zip(params, positional, strict=False))
    spec = InplaceCall(kind, target, call, args)
    if len(positional) > len(params):
        spec.problem = "pass at most the arguments NumPy documents"
        return spec
    for k in call.keywords:
        if k.arg not in params or k.arg in args:
            spec.problem = f"the keyword '{k.arg}' is not supported here"
            return spec
        args[k.arg] = k.value
    spec.problem = _unsupported(kind, args)
    return spec


def _unsupported(kind, args) -> str | None:
    if kind == "sort" and "order" in args:
        return "sort a structured array outside the differentiated function"
    if kind == "put_along_axis" and "axis" not in args:
        return "pass the axis (`np.put_along_axis(a, idx, v, axis=0)`)"
    needed = {
        "fill": "value",
        "put": "v",
        "fill_diagonal": "val",
        "copyto": "src",
        "copyto_part": "src",
        "place": "vals",
        "putmask": "values",
        "put_along_axis": "values",
    }
    if kind == "put" and "values" in args:
        args["v"], args["ind"] = args.pop("values"), args.pop("indices", None)
    if kind in ("add_at", "subtract_at", "ufunc_at") and "b" not in args:
        return "pass the values (`np.add.at(a, idx, v)`)"
    if kind in needed and args.get(needed[kind]) is None:
        return "pass the value to write"
    if kind == "put" and args.get("ind") is None:
        return "pass the indices to write"
    if kind in ("place", "putmask") and args.get("mask") is None:
        return "pass the mask"
    return None


def _out_call(call, obj) -> InplaceCall | None:
    """``f(..., out=a)`` (or a ufunc's positional out) of a NumPy function or ufunc."""
    is_ufunc = isinstance(obj, np.ufunc)
    if not (is_ufunc or (getattr(obj, "__module__", None) or "").startswith("numpy")):
        return None
    outs = [k for k in call.keywords if k.arg == "out"]
    inputs = list(call.args)
    keywords = [k for k in call.keywords if k.arg != "out"]
    if outs:
        out = outs[0].value
    elif is_ufunc and len(call.args) == obj.nin + 1:
        out = inputs.pop()
    else:
        out = _positional_out(obj, inputs, keywords)
        if out is None:
            return None
    if isinstance(out, gast.Tuple) and len(out.elts) == 1:
        out = out.elts[0]
    if isinstance(out, gast.Constant) and out.value is None:
        return None  # out=None writes nothing: an ordinary call
    bare = gast.copy_location(gast.Call(func=call.func, args=inputs, keywords=keywords), call)
    spec = InplaceCall("out", out, call, {"call": bare, "out": out})
    if not isinstance(out, gast.Name):
        spec.target = None
        spec.problem = "write into an array that has a plain name (`out=a`)"
    elif any(k.arg == "where" for k in keywords):
        _where_call(spec, obj, inputs, keywords)
    return spec


def _positional_out(fn, inputs, keywords):
    """The ``out`` array of a NumPy function passed by position (``np.sum(x, 0, None, a)``),
    taken out of ``inputs``; the positional arguments after it join ``keywords`` by their
    parameter names. ``None`` when ``fn``'s signature has no positional ``out`` or the
    call does not reach it."""
    if any(isinstance(a, gast.Starred) for a in inputs):
        return None
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    names = []
    for p in params:
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            break
        names.append(p.name)
    if "out" not in names or len(inputs) <= names.index("out"):
        return None
    at = names.index("out")
    out = inputs[at]
    later = inputs[at + 1 :]
    if (isinstance(out, gast.Constant) and out.value is None) or len(later) > len(names) - at - 1:
        return None  # no out array; or more arguments than parameters (Python's TypeError)
    del inputs[at:]
    keywords[:0] = [
        gast.keyword(arg=n, value=v)
        for n, v in zip(names[at + 1 : at + 1 + len(later)], later, strict=True)
    ]
    return out


def _where_call(spec, obj, inputs, keywords):
    """``ufunc(x, y, out=a, where=m)``: kind ``"out_where"`` (the ufunc computes and writes
    only where ``m`` holds; the other entries keep ``a``'s values), with the inputs and the
    other keywords apart. Reductions and functions with ``where=`` stay refused."""
    if not (isinstance(obj, np.ufunc) and obj.nout == 1 and len(inputs) == obj.nin):
        spec.problem = "use `a = np.where(mask, f(...), a)` instead of `where=`"
        return
    spec.kind = "out_where"
    spec.ufunc = obj.__name__
    spec.args["inputs"] = inputs
    spec.args["where"] = next(k.value for k in keywords if k.arg == "where")
    spec.args["keywords"] = [k for k in keywords if k.arg != "where"]


def flat_store_target(target) -> bool:
    """``a.flat[key]`` as a store target, ``a`` a plain name: a write into ``a`` at the
    flat positions ``key`` (the check lets it through where it lets ``a[i] = v``)."""
    return (
        isinstance(target, gast.Subscript)
        and isinstance(target.value, gast.Attribute)
        and target.value.attr == "flat"
        and isinstance(target.value.value, gast.Name)
    )


def inplace_statement_call(s):
    """The call of ``s`` when ``s`` is ``f(...)`` or ``name = f(...)``, else None."""
    if isinstance(s, gast.Expr) and isinstance(s.value, gast.Call):
        return s.value
    if (
        isinstance(s, gast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], gast.Name)
        and isinstance(s.value, gast.Call)
    ):
        return s.value
    return None


def _write_extents(tree, calls) -> dict:
    """``{name: (end of the last write, [(start, end) of each loop around a write])}``
    for every name the function writes into (subscript stores, in-place calls ``calls``,
    ``name += v``), positions as ``(line, column)``."""
    parents = parent_map(tree)
    stores = [(spec.target.id, stmt) for stmt, spec in calls]
    for node in statements(tree):
        if isinstance(node, (gast.Assign, gast.AugAssign, gast.AnnAssign)):
            targets = node.targets if isinstance(node, gast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name):
                    stores.append((t.value.id, node))
                elif isinstance(node, gast.AugAssign) and isinstance(t, gast.Name):
                    stores.append((t.id, node))
    extents: dict = {}
    for name, stmt in stores:
        end = (stmt.end_lineno, stmt.end_col_offset)
        last, loops = extents.get(name, ((0, 0), []))
        p = parents.get(stmt)
        while p is not None:
            if isinstance(p, (gast.For, gast.While)):
                loops.append(((p.lineno, p.col_offset), (p.end_lineno, p.end_col_offset)))
            p = parents.get(p)
        extents[name] = (max(last, end), loops)
    return extents


class InplaceCalls:
    """A mixin of :class:`~pullback.transform.normalize.Normalizer` (through
    :class:`~pullback.transform.mutation.ArrayStores`)."""

    def inplace_writes(self) -> list:
        """``(statement, InplaceCall)`` for every supported in-place call statement that
        writes into its array (``sort`` rebinds the name to a new array instead)."""
        out = []
        for s in walk(self.fs.tree):
            call = inplace_statement_call(s)
            if call is None:
                continue
            spec = inplace_call(call, resolve_call(self.fs, call, self.locals))
            if spec is not None and spec.problem is None and spec.kind != "sort":
                out.append((s, spec))
        return out

    def read_after_writes(self, name, node) -> bool:
        """Whether the read ``node`` of ``name`` (an array written in place) runs after
        every write into it: it follows the last write's statement and no loop around it
        holds a write. Such a read may stay a view (no ``array_fresh`` copy, in reverse
        and forward mode alike): nothing changes it afterwards."""
        extents = getattr(self, "_write_extents", None)
        if extents is None:
            extents = self._write_extents = _write_extents(self.fs.tree, self.inplace_writes())
        if name not in extents or getattr(node, "lineno", None) is None:
            return False
        last, loops = extents[name]
        at = (node.lineno, node.col_offset)
        return at > last and not any(start <= at <= end for start, end in loops)

    def inplace_statement(self, s):
        """The statements of a write into a local array (the check let only those
        through): ``a[idx] (op)= v`` (mutation.py), ``[result =] call`` of an in-place
        call, ``a += v`` / ``a -= v`` on an array written in place; else None."""
        if isinstance(s, gast.Assign) and len(s.targets) == 1:
            target = s.targets[0]
            if flat_store_target(target):  # a.flat[key] = v: np.put's positions
                name, stmts = target.value.value.id, []
                key = self.key_value(target.slice, stmts)
                in_place = self.array_modes().get(name, False)
                self._positions(name, in_place, "_pb_flat_index", [key], s.value, s, stmts)
                return stmts
            if isinstance(target, gast.Subscript):
                return self.array_store(target, s.value, None, s)[0]
        if isinstance(s, gast.AugAssign):
            if isinstance(s.target, gast.Subscript):
                return self.array_store(s.target, s.value, s.op, s)[0]
            return self.augmented_in_place(s)
        call = inplace_statement_call(s)
        if call is None:
            return None
        spec = inplace_call(call, resolve_call(self.fs, call, self.locals))
        if spec is None or spec.problem is not None:
            return None
        if self.container_kind(spec.target) is not None:
            return None  # l.sort() on a local list: transform/list_mutation.py
        result = s.targets[0].id if isinstance(s, gast.Assign) else None
        name = spec.target.id
        in_place = self.array_modes().get(name, False)
        stmts: list = []
        write = getattr(self, "_inplace_" + spec.kind)
        write(spec, name, in_place, s, stmts)
        if result is not None:
            value = N.load(name) if spec.kind in ("out", "out_where") else N.const(None)
            stmts.append(N.assign(result, value, s))
        return stmts

    def augmented_in_place(self, s):
        """``a += v`` as ``a = array_iadd(a, v)`` (``-=``: of ``-v``) when ``a`` is written
        in place (by index or call, and no pullback needs an earlier state of it); the
        check proved that no other name refers to its array. Else None (a rebinding)."""
        target = s.target
        if not (
            isinstance(target, gast.Name)
            and isinstance(s.op, (gast.Add, gast.Sub))
            and self.array_modes().get(target.id, False)
        ):
            return None
        if self.container_kind(target) is not None:
            return None  # l += [v] on a local list: a concatenation (list_mutation.py)
        value = s.value
        if isinstance(s.op, gast.Sub):
            value = gast.copy_location(gast.UnaryOp(op=gast.USub(), operand=value), value)
        stmts: list = []
        v = self.atom(value, stmts)
        call = self.helper_call("_pb_array_iadd", [N.load(target.id), v], s)
        stmts.append(N.assign(target.id, call, s))
        return stmts

    # -- one rewrite per kind (each appends to stmts) ---------------------------------------
    def _set(self, name, in_place, key, value, s, stmts):
        helper = "_pb_array_set" if in_place else "_pb_array_set_copy"
        stmts.append(N.assign(name, self.helper_call(helper, [N.load(name), key, value], s), s))

    def _fill(self, name, in_place, value, s, stmts):
        """``a = array_fill(a, value)``: every entry overwritten."""
        v = self.atom(value, stmts)
        helper = "_pb_array_fill" if in_place else "_pb_array_fill_copy"
        stmts.append(N.assign(name, self.helper_call(helper, [N.load(name), v], s), s))

    def _inplace_fill(self, spec, name, in_place, s, stmts):
        self._fill(name, in_place, spec.args["value"], s, stmts)

    def _inplace_copyto(self, spec, name, in_place, s, stmts):
        if "where" not in spec.args and "casting" not in spec.args:
            self._fill(name, in_place, spec.args["src"], s, stmts)
            return
        # a = array_copyto(a, src, where, casting): the masked entries take src.
        args = [N.load(name), self.atom(spec.args["src"], stmts)]
        args.append(self.atom(spec.args.get("where", N.const(True)), stmts))
        if "casting" in spec.args:
            args.append(self.atom(spec.args["casting"], stmts))
        helper = "_pb_array_copyto" if in_place else "_pb_array_copyto_copy"
        stmts.append(N.assign(name, self.helper_call(helper, args, s), s))

    def _inplace_copyto_part(self, spec, name, in_place, s, stmts):
        """``np.copyto(a[k], src)``: ``copyto_checked(a, k, src); a = array_set(a, k, src)``
        (NumPy's errors first, then the store ``a[k] = src``, which reads src first)."""
        key = self.key_value(spec.args["part"].slice, stmts)
        v = self.atom(spec.args["src"], stmts)
        call = self.helper_call("_pb_copyto_checked", [N.load(name), key, v], s)
        stmts.append(N.assign(self.fresh(), call, s))
        self._set(name, in_place, key, v, s, stmts)

    def _inplace_place(self, spec, name, in_place, s, stmts):
        mask = self.atom(spec.args["mask"], stmts)
        self._positions(name, in_place, "_pb_mask_index", [mask], spec.args["vals"], s, stmts)

    def _inplace_putmask(self, spec, name, in_place, s, stmts):
        """``i = mask_index(a, m); k = putmask_positions(a, m, v); w = take_flat(v, k);
        a = array_set(a, i, w)``: entry n of a takes v.flat[n % v.size]."""
        mask = self.atom(spec.args["mask"], stmts)
        value = self.atom(spec.args["values"], stmts)
        index, positions, taken = self.fresh(), self.fresh(), self.fresh()
        a = N.load(name)
        stmts.append(N.assign(index, self.helper_call("_pb_mask_index", [a, mask], s), s))
        call = self.helper_call("_pb_putmask_positions", [N.load(name), mask, value], s)
        stmts.append(N.assign(positions, call, s))
        call = self.helper_call("_pb_take_flat", [value, N.load(positions)], s)
        stmts.append(N.assign(taken, call, s))
        self._set(name, in_place, N.load(index), N.load(taken), s, stmts)

    def _inplace_put_along_axis(self, spec, name, in_place, s, stmts):
        """``i = along_axis_index(a, idx, axis); a = array_set(a, i, v)`` (``axis=None``:
        as ``np.put``, the values cycled)."""
        ind = self.atom(spec.args["indices"], stmts)
        axis = spec.args["axis"]
        if isinstance(axis, gast.Constant) and axis.value is None:
            self._positions(
                name, in_place, "_pb_along_axis_index", [ind, axis], spec.args["values"], s, stmts
            )
            return
        index = self.fresh()
        call = self.helper_call(
            "_pb_along_axis_index", [N.load(name), ind, self.atom(axis, stmts)], s
        )
        stmts.append(N.assign(index, call, s))
        value = self.atom(spec.args["values"], stmts)
        self._set(name, in_place, N.load(index), value, s, stmts)

    def _inplace_out(self, spec, name, in_place, s, stmts):
        self._fill(name, in_place, spec.args["call"], s, stmts)

    def _inplace_out_where(self, spec, name, in_place, s, stmts):
        """``i = where_index(a, m); s_k = take_broadcast(x_k, a, i); t = ufunc(s_1, ...);
        a = array_set(a, i, t)``: the inputs are read before the write, as NumPy does."""
        where = self.atom(spec.args["where"], stmts)
        index = self.fresh()
        call = self.helper_call("_pb_where_index", [N.load(name), where], s)
        stmts.append(N.assign(index, call, s))
        taken = []
        for x in spec.args["inputs"]:
            part = self.fresh()
            args = [self.atom(x, stmts), N.load(name), N.load(index)]
            stmts.append(N.assign(part, self.helper_call("_pb_take_broadcast", args, s), s))
            taken.append(N.load(part))
        operator = _OPERATORS.get(spec.ufunc)
        if operator is not None and not spec.args["keywords"]:
            # the operator's derivative is inline (second order runs through it)
            call = gast.BinOp(left=taken[0], op=operator(), right=taken[1])
        else:
            call = gast.Call(func=spec.call.func, args=taken, keywords=spec.args["keywords"])
        call = gast.copy_location(call, spec.call)
        self._set(name, in_place, N.load(index), self.atom(call, stmts), s, stmts)

    def _inplace_put(self, spec, name, in_place, s, stmts):
        mode = spec.args.get("mode")
        extra = [self.atom(mode, stmts)] if mode is not None else []
        ind = self.atom(spec.args["ind"], stmts)
        self._positions(name, in_place, "_pb_put_index", [ind] + extra, spec.args["v"], s, stmts)

    def _inplace_fill_diagonal(self, spec, name, in_place, s, stmts):
        wrap = spec.args.get("wrap")
        extra = [self.atom(wrap, stmts)] if wrap is not None else []
        self._positions(name, in_place, "_pb_diagonal_index", extra, spec.args["val"], s, stmts)

    def _positions(self, name, in_place, index_helper, args, value, s, stmts):
        """``i = index_helper(a, *args); w = cycled(value, i); a = array_set(a, i, w)``."""
        index, cycled = self.fresh(), self.fresh()
        stmts.append(N.assign(index, self.helper_call(index_helper, [N.load(name)] + args, s), s))
        v = self.atom(value, stmts)
        stmts.append(N.assign(cycled, self.helper_call("_pb_cycled", [v, N.load(index)], s), s))
        self._set(name, in_place, N.load(index), N.load(cycled), s, stmts)

    def _inplace_add_at(self, spec, name, in_place, s, stmts, negate=False):
        index = self.index(spec.args["indices"], stmts)
        value = spec.args["b"]
        if negate:
            value = gast.copy_location(gast.UnaryOp(op=gast.USub(), operand=value), value)
        v = self.atom(value, stmts)
        helper = "_pb_array_add_at" if in_place else "_pb_array_add_at_copy"
        stmts.append(N.assign(name, self.helper_call(helper, [N.load(name), index, v], s), s))

    def _inplace_ufunc_at(self, spec, name, in_place, s, stmts):
        """``a = array_ufunc_at_copy(a, "multiply", idx, v)``: always a new array, since
        the pullback needs the array as it was (see arrays_ufunc_at.py)."""
        index = self.index(spec.args["indices"], stmts)
        v = self.atom(spec.args["b"], stmts)
        args = [N.load(name), N.const(spec.ufunc), index, v]
        stmts.append(N.assign(name, self.helper_call("_pb_array_ufunc_at_copy", args, s), s))

    def _inplace_subtract_at(self, spec, name, in_place, s, stmts):
        self._inplace_add_at(spec, name, in_place, s, stmts, negate=True)

    def _inplace_sort(self, spec, name, in_place, s, stmts):
        axis = spec.args.get("axis")
        extra = [self.atom(axis, stmts)] if axis is not None else []
        call = self.helper_call("_pb_array_sort", [N.load(name)] + extra, s)
        stmts.append(N.assign(name, call, s))
