"""Expressions in the core language: one operation on atoms per statement.

A mixin of :class:`~pullback.transform.normalize.Normalizer`, which supplies ``fresh``,
``locals``, ``namespace`` and the rewrites of calls its other mixins own (star calls,
comprehensions, inlined helpers, free names, ...). Every derivative rule of the reverse
sweep is written for one operation whose operands are names or constants, so a nested
expression is taken apart into temporaries in the order Python evaluates it; ``and``,
``or`` and ``a if c else b`` become ``if`` statements, so that an operand Python does not
evaluate is not evaluated (nor differentiated) here either.

>>> from pullback.transform.normalize import core_source
>>> def f(x, y):
...     return x * y + 1.0 if x > 0 else -y
>>> print(core_source(f))
def f(x, y):
    _ret = None
    _returned = False
    _t1 = x > 0
    if _t1:
        _t3 = x * y
        _t4 = _t3 + 1.0
        _v2 = _t4
    else:
        _t5 = -y
        _v2 = _t5
    _ret = _v2
    _returned = True
    return _ret
"""

from __future__ import annotations

import gast

from ..dict_calls import constant_getattr, dict_display, with_getattr_rewritten
from ..receiver_classes import module_class_with_any
from ..resolve import dotted_parts, resolve_call
from . import nodes as N
from .comprehensions import COMPREHENSIONS


class Expressions:
    """The normalizer's expressions (see the module docstring)."""

    def as_name(self, atom, stmts, where, hint) -> str:
        if isinstance(atom, gast.Name) and atom.id.startswith("_"):
            return atom.id
        name = self.fresh(hint)
        stmts.append(N.assign(name, atom, where))
        return name

    def expr(self, e, keep_call=False):
        """``(statements, value)``: value is an atom, or one operation on atoms when
        ``keep_call`` (the caller assigns it to a name directly)."""
        stmts: list = []
        value = self.operation(e, stmts)
        if not keep_call and not N.is_atom(value) and not self.is_static(value):
            name = self.fresh()
            stmts.append(N.assign(name, value, e))
            value = N.load(name)
        return stmts, value

    def explicit_dunder(self, e, stmts):
        """``x.__mul__(y)``, ``x.__rsub__(y)``, ``x.__getitem__(i)``, ... of a receiver known
        only at run time: the call of :mod:`pullback.explicit_dunders`' function of that
        name, which runs the operator on numbers and arrays (else the method itself)."""
        from .. import explicit_dunders

        func = e.func
        if not (isinstance(func, gast.Attribute) and func.attr in explicit_dunders.NAMES):
            return None
        if e.keywords or any(isinstance(a, gast.Starred) for a in e.args):
            return None
        if getattr(explicit_dunders, self.fs.fn.__name__, None) is self.fs.fn:
            return None  # (their own fallback calls the method itself)
        callee = self.resolver()(e)
        if callee is None or callee.kind != "method" or callee.python_method:
            return None
        if module_class_with_any(self.fs, (func.attr,)):
            return None  # it may be a user's object's own method (what it returns an object)
        receiver = self.atom(func.value, stmts)
        args = [self.atom(a, stmts) for a in e.args]
        fn = getattr(explicit_dunders, func.attr)
        name = f"_pb_dunder{func.attr[1:-2]}"
        return self.bound_call(fn, [receiver, *args], e, name=name)

    def atom(self, e, stmts):
        value = self.operation(e, stmts)
        if N.is_atom(value) or self.is_static(value):
            return value
        name = self.fresh()
        stmts.append(N.assign(name, value, e))
        return N.load(name)

    def resolver(self):
        """``resolve(call)``: the callee of a call of the function, as the check finds it."""
        return lambda c: resolve_call(self.fs, c, self.locals)

    def is_static(self, node) -> bool:
        """A global chain such as ``np.pi`` or ``np.newaxis``: a constant at run time."""
        if not isinstance(node, gast.Attribute):
            return False
        parts = dotted_parts(node)
        return parts is not None and parts[0] not in self.locals and parts[0] in self.namespace

    def operation(self, e, stmts):
        if isinstance(e, gast.Constant):
            return e
        if isinstance(e, gast.Name):
            if e.id not in self.locals:
                return self.free_name(e)
            return N.load(e.id)
        if isinstance(e, gast.BinOp):
            left = self.atom(e.left, stmts)
            right = self.atom(e.right, stmts)
            return N.copied_at(gast.BinOp, {"left": left, "op": e.op, "right": right}, e)
        if isinstance(e, gast.UnaryOp):
            operand = self.atom(e.operand, stmts)
            return gast.copy_location(gast.UnaryOp(op=e.op, operand=operand), e)
        if isinstance(e, gast.Compare):
            left = self.atom(e.left, stmts)
            comps = [self.atom(c, stmts) for c in e.comparators]
            return gast.copy_location(gast.Compare(left=left, ops=e.ops, comparators=comps), e)
        if isinstance(e, gast.NamedExpr):  # (n := len(x)): bound where it is evaluated
            value = self.atom(e.value, stmts)
            stmts.append(N.assign(e.target.id, value, e))
            return N.load(e.target.id)
        if isinstance(e, gast.BoolOp):
            return self.boolop(e, stmts)
        if isinstance(e, gast.IfExp):
            return self.ifexp(e, stmts)
        if isinstance(e, gast.Call):
            resolve = self.resolver()
            dunder = self.explicit_dunder(e, stmts)  # x.__mul__(y): explicit_dunders.py
            if dunder is not None:
                return dunder
            attribute = constant_getattr(e, resolve)  # getattr(obj, "w") is obj.w
            if attribute is not None:
                return self.operation(attribute, stmts)
            e = with_getattr_rewritten(e, resolve)  # getattr(m, "f")(x) is m.f(x)
            rewritten = self.kwargs_get(e)
            if rewritten is not None:
                return self.operation(rewritten, stmts)
            self.list_iterator_argument(e)  # sorted(zip(a, b), key=k): iterator_values.py
            starred = self.star_call(e, stmts)  # f(*xs, **opts): transform/star_calls.py
            if starred is None:  # reduce, sorted/max/min(key=): higher_order_builtins.py
                starred = self.higher_order_builtin(e, stmts)
            if starred is not None:
                return starred
            inlined = self.inline_call(e, stmts)
            if inlined is not None:
                return inlined
            rewritten = self.ufunc_method_call(e, stmts)  # np.add.reduce: ufunc_calls.py
            if rewritten is not None:
                return rewritten
            rewritten = self.iterator_value(e)  # list(zip(a, b)): iterator_values.py
            if rewritten is None:  # dict(a=x): the display it builds (pullback/dict_calls.py)
                rewritten = dict_display(e, lambda c: resolve_call(self.fs, c, self.locals))
            if rewritten is not None:
                return self.operation(rewritten, stmts)
            first = self.first_item_value(e, stmts)  # next(v for v in xs if ...)
            if first is not None:
                return first
            comprehension = self.higher_order(e)
            if comprehension is not None:
                return self.comprehension(comprehension, stmts)
            return self.call(e, stmts)
        if isinstance(e, gast.Attribute):
            return self.attribute(e, stmts)
        if isinstance(e, gast.Subscript):
            indexed = self.indexed_object(e.value)
            if indexed is not None:
                return self.getitem_call(e, indexed, stmts)
            value = self.atom(e.value, stmts)
            index = self.index(e.slice, stmts)
            return self.written_read(gast.copy_location(N.subscript(value, index), e), stmts)
        if isinstance(e, (gast.Tuple, gast.List, gast.Set)):
            if any(isinstance(x, gast.Starred) for x in e.elts):
                return self.star_display(e, stmts)
            elts = [self.atom(x, stmts) for x in e.elts]
            return gast.copy_location(type(e)(elts=elts, **_ctx(e)), e)
        if isinstance(e, gast.Dict):
            if any(k is None for k in e.keys):  # {**a, "k": v}: transform/star_calls.py
                return self.dict_display(e, stmts)
            keys = [self.atom(k, stmts) for k in e.keys]
            values = [self.atom(v, stmts) for v in e.values]
            return gast.copy_location(gast.Dict(keys=keys, values=values), e)
        if isinstance(e, COMPREHENSIONS):
            return self.comprehension(e, stmts)
        if isinstance(e, gast.JoinedStr):
            return e
        if isinstance(e, gast.Slice):  # pragma: no cover - only inside subscripts
            return self.index(e, stmts)
        raise NotImplementedError(type(e).__name__)  # pragma: no cover - refused by the check

    def index(self, node, stmts):
        if isinstance(node, gast.Slice):
            parts = {}
            for field in ("lower", "upper", "step"):
                v = getattr(node, field)
                parts[field] = None if v is None else self.atom(v, stmts)
            return gast.Slice(**parts)
        if isinstance(node, gast.Tuple):
            return N.tuple_([self.index(x, stmts) for x in node.elts])
        return self.atom(node, stmts)

    def boolop(self, e, stmts):
        # a and b  ->  t = a; if t: t = b      a or b  ->  t = a; if not t: t = b
        name = self.fresh("b")
        first = self.atom(e.values[0], stmts)
        stmts.append(N.assign(name, first, e))
        rest = e.values[1:]
        body: list = []
        target_block = body
        for k, v in enumerate(rest):
            inner: list = []
            atom = self.atom(v, inner)
            inner.append(N.assign(name, atom, v))
            target_block.extend(inner)
            if k < len(rest) - 1:
                nested: list = []
                test = N.load(name) if isinstance(e.op, gast.And) else N.not_(N.load(name))
                cond = self.fresh("c")
                target_block.append(N.assign(cond, test, v))
                branch = N.if_(N.load(cond), [gast.Pass()], where=v)
                branch.body = nested  # filled by the next operand (N.if_ copies its body)
                target_block.append(branch)
                target_block = nested
        test = N.load(name) if isinstance(e.op, gast.And) else N.not_(N.load(name))
        cond = self.fresh("c")
        stmts.append(N.assign(cond, test, e))
        stmts.append(N.if_(N.load(cond), body, where=e))
        return N.load(name)

    def ifexp(self, e, stmts):
        test = self.atom(e.test, stmts)
        cond = self.as_name(test, stmts, e, "c")
        name = self.fresh("v")
        body: list = []
        body.append(N.assign(name, self.atom(e.body, body), e.body))
        orelse: list = []
        orelse.append(N.assign(name, self.atom(e.orelse, orelse), e.orelse))
        stmts.append(N.if_(N.load(cond), body, orelse, where=e))
        return N.load(name)


def _ctx(node):
    return {} if isinstance(node, gast.Set) else {"ctx": gast.Load()}
