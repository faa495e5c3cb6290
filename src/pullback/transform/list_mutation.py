"""Changes of local lists and dicts, as the rebindings that compute the same values.

:mod:`pullback.transform.list_analysis` proves that no other name, container or call holds
a local list ``l`` (or dict ``d``) while it is being changed; then each change is exactly a
rebinding of the name to a new container, which the sweeps differentiate with the rules
they have (slices, concatenation, displays, ``sorted``)::

    l[i] = v              _v = v; _p = range(len(l))[i]; l = l[:_p] + [_v] + l[_p + 1:]
    l[i] += v             _p = range(len(l))[i]; _v = l[_p] + v; (then as above)
    del l[i]              _p = range(len(l))[i]; l = l[:_p] + l[_p + 1:]
    x = l.pop(i)          _p = range(len(l))[i]; x = l[_p]; l = l[:_p] + l[_p + 1:]
    l.insert(i, v)        _p = (i clipped as list.insert does); l = l[:_p] + [v] + l[_p:]
    l.extend(s)           l = l + list(s)
    l.remove(v)           _p = list_index(l, v); (then as del)
    l.sort(key=k)         l = sorted(l, key=k)
    l.reverse()           l = l[::-1]
    l.clear()             l = []
    d[k] = v              d = {**d, k: v}
    d.update(o, b=v)      d = {**d, **o, 'b': v}
    x = d.pop(k[, dflt])  x = d[k] (or dflt); d = {q: d[q] for q in keys_without(d, k)}
    del d[k]              d = {q: d[q] for q in keys_without(d, k)}
    x = d.setdefault(k, v)  if k not in d: d = {**d, k: v}; x = d[k]

``range(len(l))[i]`` raises the IndexError Python raises for a bad index, so the rewrite
fails where the primal fails. Each of these costs a copy of the container (O(len)).

When :meth:`~.list_analysis.ContainerAnalysis.in_place` proves that no earlier state of a
list is read again, its item stores, ``del l[i]``, ``pop`` and ``insert`` are calls that
change it in place at O(1) instead (:mod:`pullback.containers_inplace`)::

    l[i] = v              _v = v; l = list_set(l, i, _v)
    l[i] += v             _p = range(len(l))[i]; _r = list_take(l, _p); _o = pair_second(_r)
                          l = pair_first(_r)
                          _v = _o + v; l = list_set(l, _p, _v)
    del l[i]              _p = range(len(l))[i]; l = list_delete(l, _p)
    x = l.pop(i)          _p = ...; _r = list_pop(l, _p, len(l)); x = pair_second(_r)
                          l = pair_first(_r)
    l.insert(i, v)        _p = ...; l = list_insert(l, _p, v)

Slice stores and deletes gather the items in Python's order (:mod:`pullback.containers_slices`),
and a store into a row of a list of unshared rows rebuilds the row and the list::

    l[a:b:c] = s          _v = list(s); _o = slice_order(len(l), a, b, c, len(_v))
                          l = list_gather(l + _v, _o)
    del l[a:b:c]          _o = slice_keep(len(l), a, b, c); l = list_gather(l, _o)
    rows[i][j] = v        _p = ...; _r = rows[_p]; _q = range(len(_r))[j]
                          _row = _r[:_q] + [v] + _r[_q + 1:]
                          rows = rows[:_p] + [_row] + rows[_p + 1:]

``l[i] op= v`` first checks, when it runs, that the item is not an object ``op=`` would
change in place (``containers_mutation.immutable_item``).
"""

from __future__ import annotations

import copy
import operator

import gast

from .. import containers_inplace as ci
from .. import containers_mutation as cm
from .. import containers_slices as cs
from ..resolve import Callee
from ..tree_walk import walk
from . import nodes as N
from .list_analysis import ContainerAnalysis

_HELPERS = {
    "_pb_keys_without": cm.keys_without,
    "_pb_list_index": cm.list_index,
    "_pb_expect_kind": cm.expect_kind,
    "_pb_immutable_item": cm.immutable_item,
    # differentiable (rules in pullback.containers_inplace): the in-place changes
    "_pb_list_set": ci.list_set,
    "_pb_list_insert": ci.list_insert,
    "_pb_list_delete": ci.list_delete,
    "_pb_list_pop": ci.list_pop,
    "_pb_list_take": ci.list_take,
    "_pb_first": ci.pair_first,
    "_pb_second": ci.pair_second,
    # slice stores and deletes (pullback.containers_slices)
    "_pb_slice_order": cs.slice_order,
    "_pb_slice_keep": cs.slice_keep,
    "_pb_list_gather": cs.list_gather,
}


class ListMutations:
    """A mixin of :class:`~pullback.transform.normalize.Normalizer` (through
    :class:`~.comprehensions.Comprehensions`)."""

    def containers(self) -> ContainerAnalysis:
        found = getattr(self, "_containers", None)
        if found is None:
            found = self._containers = ContainerAnalysis(self.fs, self.fs.tree, self.locals)
        return found

    def container_kind(self, node) -> str | None:
        """ "list"/"dict" when ``node`` names a local container whose changes are modelled."""
        if not isinstance(node, gast.Name):
            return None
        return self.containers().kind(node.id)

    # -- the normalizer's hooks -----------------------------------------------------------
    def array_store(self, target, value, op, s):
        outer = target.value
        if isinstance(outer, gast.Subscript) and self.rows_of_lists(outer.value):
            return self.template_block(self.nested_store(target, value, op), s), False
        if isinstance(outer, gast.Subscript) and self.container_kind(outer.value) is not None:
            return self.held_array_store(target, value, op, s), False
        kind = self.container_kind(target.value)
        if kind == "list" and op is None and isinstance(target.slice, gast.Slice):
            name = target.value.id
            code = ["{v} = list({value})", _slice_order(name, target.slice)]
            code += [f"{{c}} = {name} + {{v}}", f"{name} = _pb_list_gather({{c}}, {{o}})"]
            parts = {"value": value, **_slice_parts(target.slice)}
            return self.template_block(self.guard(name, kind) + self.filled(code, parts), s), False
        if kind is None or isinstance(target.slice, gast.Slice):
            return super().array_store(target, value, op, s)
        name = target.value.id
        if kind == "list" and op is None and self.in_place(name):
            # the user's index as it is (list_set checks the kind, the list the index)
            lines = ["{v} = {value}", f"{name} = _pb_list_set({name}, {{i}}, {{v}})"]
            code = self.filled(lines, {"i": target.slice, "value": value})
            return self.template_block(code, s), False
        code = self.guard(name, kind) + self.item_store(kind, target, value, op, s)
        return self.template_block(code, s), False

    def held_array_store(self, target, value, op, s) -> list:
        """``xs[t][k] (op)= v`` into an array only the local list or dict ``xs`` holds (the
        check proved it: check/held_arrays.py) as a new array stored back, in Python's
        order of evaluation: ``_o = xs[t]; _a = _pb_array_set_copy(_o, k, v); xs[t] = _a``
        (``_pb_array_set_copy`` refuses a value that is not an array as it runs)."""
        outer = target.value
        stmts: list = []
        if op is None:
            v = self.atom(value, stmts)
        key = self.atom(outer.slice, stmts)
        read = gast.copy_location(N.subscript(N.load(outer.value.id), key), outer)
        old = self.atom(read, stmts)
        index = self.key_value(target.slice, stmts)
        if op is not None:
            item = N.subscript(copy.deepcopy(old), copy.deepcopy(index))
            gast.copy_location(item, target)
            binop = gast.copy_location(gast.BinOp(left=item, op=op, right=value), s)
            v = self.atom(binop, stmts)
        new = self.fresh()
        call = self.helper_call("_pb_array_set_copy", [old, index, v], s)
        stmts.append(N.assign(new, call, s))
        store = gast.copy_location(N.subscript(N.load(outer.value.id), copy.deepcopy(key)), outer)
        store.ctx = gast.Store()
        more, _ = self.array_store(store, N.load(new), None, s)
        return stmts + more

    def changed_container(self, node) -> bool:
        """Whether ``node`` names a local container the function changes."""
        return self.container_kind(node) is not None and bool(
            self.containers().changes.get(node.id)
        )

    def written_read(self, node, stmts):
        # ``l[i]`` of a list that changes is read through operator.getitem, whose pullback
        # keeps the list it read: its length may change in a loop, and the reverse sweep's
        # deferred index reads (fold_reads) assume one shape per loop-carried name.
        if not self.changed_container(node.value):
            return super().written_read(node, stmts)
        key = node.slice
        if isinstance(key, gast.Slice) or (
            isinstance(key, gast.Tuple) and any(isinstance(k, gast.Slice) for k in key.elts)
        ):
            for part in walk(key):
                if not hasattr(part, "lineno"):
                    gast.copy_location(part, node)
            key = self.key_value(key, stmts)
        self.namespace["_pb_item"] = operator.getitem
        call = gast.copy_location(N.call("_pb_item", [node.value, key]), node)
        call.pb_callee = Callee("object", operator.getitem, name="operator.getitem")
        return call

    def named_read(self, name, value, s):
        if isinstance(value, gast.Subscript) and self.changed_container(value.value):
            return None  # an ordinary read (written_read above), not an array's
        return super().named_read(name, value, s)

    def stmt_Delete(self, s):
        out: list = []
        for target in s.targets:
            kind = self.container_kind(getattr(target, "value", None))
            if not isinstance(target, gast.Subscript) or kind is None:
                raise NotImplementedError("del")  # pragma: no cover - refused by the check
            name = target.value.id
            if kind == "list" and isinstance(target.slice, gast.Slice):
                code = [_slice_keep(name, target.slice), f"{name} = _pb_list_gather({name}, {{o}})"]
                parts = _slice_parts(target.slice)
            elif kind == "list":
                code = [f"{{p}} = range(len({name}))[{{i}}]", _list_without(name)]
                if self.in_place(name):
                    code[1] = f"{name} = _pb_list_delete({name}, {{p}})"
                parts = {"i": target.slice}
            else:
                code = ["{k} = {i}", *_dict_without(name, "{k}", True)]
                parts = {"i": target.slice}
            guarded = self.guard(name, kind) + self.filled(code, parts)
            out.extend(self.template_block(guarded, s))
        return out, False

    def container_call(self, e, stmts):
        """The value of ``e`` when it changes a local container (its statements go to
        ``stmts``), else None."""
        func = e.func
        if not (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name)):
            return None
        if any(isinstance(a, gast.Starred) for a in e.args):
            return None
        if func.attr not in _LIST_METHODS and func.attr not in _DICT_METHODS:
            return None  # ``math.sin(x)``: no container method, so no analysis to build
        kind = self.container_kind(func.value)
        name, method = func.value.id, func.attr
        table = _LIST_METHODS if kind == "list" else _DICT_METHODS if kind == "dict" else {}
        build = table.get(method)
        if build is None:
            return None
        code, parts, result = build(self, name, e)
        if any(part is None for part in parts.values()):
            return None  # a call Python itself refuses (TypeError when it runs)
        stmts.extend(self.template_block(self.guard(name, kind) + self.filled(code, parts), e))
        return N.load(result) if result is not None else N.const(None)

    def rows_of_lists(self, node) -> bool:
        """Whether ``node`` names a local list whose rows are new lists only it holds."""
        return (
            self.container_kind(node) == "list" and self.containers().rows_refusal(node.id) is None
        )

    def nested_store(self, target, value, op) -> list:
        """``rows[i][j] (op)= v`` as the rebinding of a new row into a new list (the rows are
        unshared: list_analysis.rows_refusal), in Python's order of evaluation."""
        rows = target.value.value.id
        parts = {"i": target.value.slice, "j": target.slice, "value": value}
        head = [
            f"{{p}} = range(len({rows}))[{{i}}]",
            f"{{r}} = {rows}[{{p}}]",
            "{okr} = _pb_expect_kind({r}, 'list')",
            "{q} = range(len({r}))[{j}]",
        ]
        if op is None:
            code = ["{v} = {value}", *head]
        else:
            code = [*head, "{o} = {r}[{q}]", "{oko} = _pb_immutable_item({o})"]
            code.append("{v} = {o} + {value}")
        code += [
            "{row} = {r}[:{q}] + [{v}] + {r}[{q} + 1:]",
            f"{rows} = {rows}[:{{p}}] + [{{row}}] + {rows}[{{p}} + 1:]",
        ]
        stmts = self.guard(rows, "list") + self.filled(code, parts)
        if op is not None:  # the operator of `{v} = {o} + {value}`
            stmts[-3].value.op = op
        return stmts

    # -- building -------------------------------------------------------------------------
    def item_store(self, kind, target, value, op, s=None):
        name = target.value.id
        if kind == "list":
            store = f"{name} = _pb_list_set({name}, {{p}}, {{v}})"
            if not self.in_place(name):
                store = _list_with(name)
            key = [f"{{p}} = range(len({name}))[{{i}}]"]
            read = [f"{{o}} = {name}[{{p}}]"]
            if self.in_place(name):  # the item taken with its list: O(1) back
                read = [f"{{r}} = _pb_list_take({name}, {{p}})", "{o} = _pb_second({r})"]
                read.append(f"{name} = _pb_first({{r}})")
            if op is None:
                code = ["{v} = {value}", *key, store]
            else:
                code = [*key, *read, *self.item_guard(name, s), "{v} = {o} + {value}", store]
        elif op is None:
            code = ["{v} = {value}", f"{name} = {{{{**{name}, {{i}}: {{v}}}}}}"]
        else:
            code = ["{k} = {i}", f"{{o}} = {name}[{{k}}]", *self.item_guard(name, s)]
            code += ["{v} = {o} + {value}", f"{name} = {{{{**{name}, {{k}}: {{v}}}}}}"]
        stmts = self.filled(code, {"i": target.slice, "value": value})
        if op is not None:  # the operator of `l[i] op= v` (the line `_v = _o + value`)
            stmts[-2].value.op = op
        return stmts

    def item_guard(self, name, s=None) -> list:
        """``l[i] op= v`` changes the item itself when it is an array or a list: refused
        when it runs (containers_mutation.immutable_item) unless the items are rows only
        ``l`` holds, or arrays only ``l`` holds (the check proved it: ``s`` is one of
        ``owned_items``); then changing one in place and making a new one are the same."""
        if s is not None and s in self.owned_items:
            return []
        if self.container_kind(gast.Name(name, gast.Load(), None, None)) == "list" and (
            self.containers().rows_refusal(name) is None
        ):
            return []
        return ["{oko} = _pb_immutable_item({o})"]

    def in_place(self, name) -> bool:
        """Whether the changes of the local list ``name`` run in place (list_analysis)."""
        return self.containers().in_place(name)

    def guard(self, name, kind) -> list:
        """``_pb_expect_kind(name, kind)``: the object is the list or dict the check took it
        for (else a clear error when it runs, never a different computation)."""
        return self.filled([f"{{ok}} = _pb_expect_kind({name}, {kind!r})"], {})

    def filled(self, code, parts) -> list:
        """Parse the lines ``code`` with ``{name}`` holes: a hole named in ``parts`` takes
        that user expression, any other hole a fresh name (the same one throughout)."""
        names: dict[str, str] = {}
        holes = {}
        for key in parts:
            holes[key] = f"__pb_hole_{key}__"

        class _Names(dict):
            def __missing__(inner, key):
                if key in holes:
                    return holes[key]
                if key not in names:
                    names[key] = self.fresh(key)
                return names[key]

        text = "\n".join(line.format_map(_Names()) for line in code)
        tree = gast.parse(text)
        swap = {hole: parts[key] for key, hole in holes.items()}
        return [_Filler(swap).visit(stmt) for stmt in tree.body]

    def template_block(self, stmts, where) -> list:
        out: list = []
        for stmt in stmts:
            for node in walk(stmt):
                if hasattr(node, "lineno") and getattr(node, "pb_user", False) is False:
                    gast.copy_location(node, where)
            if isinstance(stmt, gast.Assign) and _is_helper_call(stmt.value):
                out.extend(self.helper_statement(stmt, where))
                continue
            new, _ = self.stmt(stmt)
            out.extend(new)
        return out

    def helper_statement(self, stmt, where) -> list:
        """``name = _pb_helper(args...)``: the helper (non-differentiable) bound directly."""
        call = stmt.value
        stmts: list = []
        args = [self.atom(a, stmts) for a in call.args]
        fn = _HELPERS[call.func.id]
        self.namespace[call.func.id] = fn
        new = gast.copy_location(N.call(call.func.id, args), where)
        new.pb_callee = Callee("object", fn, name=f"pullback.{fn.__name__}")
        stmts.append(N.assign(stmt.targets[0].id, new, where))
        return stmts


class _Filler(gast.NodeTransformer):
    """Put the user's expressions into a template's holes (copies, located where they were)."""

    def __init__(self, swap):
        self.swap = swap

    def visit_Name(self, node):
        if node.id in self.swap:
            new = copy.deepcopy(self.swap[node.id])
            for sub in walk(new):
                sub.pb_user = True
            return new
        return node


def _is_helper_call(value) -> bool:
    return (
        isinstance(value, gast.Call)
        and isinstance(value.func, gast.Name)
        and value.func.id in _HELPERS
    )


def _list_with(name) -> str:
    return f"{name} = {name}[:{{p}}] + [{{v}}] + {name}[{{p}} + 1:]"


def _slice_parts(index) -> dict:
    """The holes of a slice's bounds that the user wrote (the others are ``None``)."""
    parts = {"lower": index.lower, "upper": index.upper, "step": index.step}
    return {k: v for k, v in parts.items() if v is not None}


def _bounds(index) -> str:
    return ", ".join(
        "None" if getattr(index, k) is None else f"{{{k}}}" for k in ("lower", "upper", "step")
    )


def _slice_order(name, index) -> str:
    return f"{{o}} = _pb_slice_order(len({name}), {_bounds(index)}, len({{v}}))"


def _slice_keep(name, index) -> str:
    return f"{{o}} = _pb_slice_keep(len({name}), {_bounds(index)})"


def _list_without(name) -> str:
    return f"{name} = {name}[:{{p}}] + {name}[{{p}} + 1:]"


def _dict_without(d, k, strict) -> list:
    """Template lines rebinding ``d`` without the key ``k`` (a hole)."""
    return [
        f"{{ks}} = _pb_keys_without({d}, {k}, {strict})",
        d + " = {{{q}: " + d + "[{q}] for {q} in {ks}}}",
    ]


def _args(e, n):
    """The first ``n`` positional arguments of ``e`` (None where absent)."""
    return list(e.args[:n]) + [None] * (n - len(e.args[:n]))


# -- lists --------------------------------------------------------------------------------
def _list_append(norm, name, e):
    (v,) = _args(e, 1)
    return [f"{name} = {name} + [{{v}}]"], {"v": v}, None


def _list_extend(norm, name, e):
    (s,) = _args(e, 1)
    return [f"{name} = {name} + list({{s}})"], {"s": s}, None


def _list_insert(norm, name, e):
    i, v = _args(e, 2)
    code = [
        "{ii} = {i}",
        "{vv} = {v}",
        f"{{n}} = len({name})",
        "{p} = min(max({ii} + {n}, 0), {n}) if {ii} < 0 else min({ii}, {n})",
        f"{name} = {name}[:{{p}}] + [{{vv}}] + {name}[{{p}}:]",
    ]
    if norm.in_place(name):
        code[-1] = f"{name} = _pb_list_insert({name}, {{p}}, {{vv}})"
    return code, {"i": i, "v": v}, None


def _list_pop(norm, name, e):
    (i,) = _args(e, 1)
    index = "{i}" if i is not None else "-1"
    code = [
        f"{{p}} = range(len({name}))[{index}]",
        f"{{x}} = {name}[{{p}}]",
        _list_without(name),
    ]
    if norm.in_place(name):
        code[1:] = [
            f"{{r}} = _pb_list_pop({name}, {{p}}, len({name}))",
            "{x} = _pb_second({r})",
            f"{name} = _pb_first({{r}})",
        ]
    return code, ({"i": i} if i is not None else {}), _result(norm, code)


def _list_remove(norm, name, e):
    (v,) = _args(e, 1)
    code = [f"{{p}} = _pb_list_index({name}, {{v}})", _list_without(name)]
    return code, {"v": v}, None


def _list_sort(norm, name, e):
    # sorted() is differentiated through the order its key chooses: sorting by value is
    # the identity key (its derivative is a permutation of the cotangents).
    keywords = [f"{k.arg}={{kw_{k.arg}}}" for k in e.keywords]
    parts = {f"kw_{k.arg}": k.value for k in e.keywords}
    if "kw_key" not in parts:
        keywords.append("key=lambda {q}: {q}")
    return [f"{name} = sorted({name}, {', '.join(keywords)})"], parts, None


def _list_reverse(norm, name, e):
    return [f"{name} = {name}[::-1]"], {}, None


def _list_clear(norm, name, e):
    return [f"{name} = []"], {}, None


# -- dicts --------------------------------------------------------------------------------
def _dict_update(norm, name, e):
    items = [f"**{name}"]
    parts = {}
    if e.args:
        items.append("**{other}")
        parts["other"] = e.args[0]
    for k in e.keywords:
        if k.arg is None:
            items.append(f"**{{kw_{len(parts)}}}")
            parts[f"kw_{len(parts)}"] = k.value
        else:
            hole = f"kw_{len(parts)}"
            items.append(f"{k.arg!r}: {{{hole}}}")
            parts[hole] = k.value
    return [f"{name} = {{{{{', '.join(items)}}}}}"], parts, None


def _dict_pop(norm, name, e):
    k, default = _args(e, 2)
    parts = {"k": k}
    code = ["{kk} = {k}"]
    if len(e.args) > 1:
        parts["default"] = default
        code += ["{dflt} = {default}", f"{{x}} = {name}[{{kk}}] if {{kk}} in {name} else {{dflt}}"]
    else:
        code.append(f"{{x}} = {name}[{{kk}}]")
    code += _dict_without(name, "{kk}", len(e.args) < 2)
    return code, parts, _result(norm, code)


def _dict_setdefault(norm, name, e):
    k, default = _args(e, 2)
    parts = {"k": k}
    code = ["{kk} = {k}", "{dflt} = {default}" if default is not None else "{dflt} = None"]
    if default is not None:
        parts["default"] = default
    code += [
        f"if {{kk}} not in {name}:\n    {name} = {{{{**{name}, {{kk}}: {{dflt}}}}}}",
        f"{{x}} = {name}[{{kk}}]",
    ]
    return code, parts, _result(norm, code)


def _dict_clear(norm, name, e):
    return [f"{name} = {{{{}}}}"], {}, None


def _copy_of(kind):
    def build(norm, name, e):
        # a.copy() of a local container: the builtin's copy, which has a rule (and a
        # second derivative), instead of the method found at run time
        code = [f"{{x}} = {kind}({name})"]
        return code, {}, _result(norm, code)

    return build


def _result(norm, code):
    """The fresh name the template line ``{x} = ...`` will get: reserve it now."""
    name = norm.fresh("x")
    for k, line in enumerate(code):
        code[k] = line.replace("{x}", name)
    return name


_LIST_METHODS = {
    "append": _list_append,
    "extend": _list_extend,
    "insert": _list_insert,
    "pop": _list_pop,
    "remove": _list_remove,
    "sort": _list_sort,
    "reverse": _list_reverse,
    "clear": _list_clear,
    "copy": _copy_of("list"),
}
_DICT_METHODS = {
    "update": _dict_update,
    "pop": _dict_pop,
    "setdefault": _dict_setdefault,
    "clear": _dict_clear,
    "copy": _copy_of("dict"),
}
