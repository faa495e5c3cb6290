"""Assignment statements in the normalizer: ``name = v``, tuple targets, attribute and
object-item stores, annotated assignments and augmented assignments (``x += v``,
``obj.n += 1``, and ``s += v`` after an element read, checked as it runs).

A mixin of :class:`pullback.transform.normalize.Normalizer`, which supplies ``expr``,
``fresh``, ``bound_call`` and the stores of the other mixins.

>>> import gast
>>> from pullback.source import load_source
>>> from pullback.transform.normalize import normalize
>>> def f(x):
...     s = x * 2.0
...     s += x
...     return s
>>> "s = s + x" in gast.unparse(normalize(load_source(f)).tree)
True
"""

from __future__ import annotations

import gast

from ..check.mutation_fixes import OPERATORS
from ..containers_mutation import immutable_value
from ..resolve import object_item_target
from . import nodes as N
from .side_effects import kept_parameter_item


class Assignments:
    """``stmt_Assign``, ``stmt_AnnAssign`` and ``stmt_AugAssign`` of the normalizer."""

    def outside_item_store(self, s) -> bool:
        """Whether ``s`` stores an item into a container from outside that gets it as in
        the primal: one an object holds (``self.cache[k] = v``) or a dict parameter the
        function does not use again but to store items (``bn_param["running_mean"] = rm``,
        side_effects.kept_parameter_item). Not a local array: no in-place write."""
        if not (
            isinstance(s, gast.Assign)
            and len(s.targets) == 1
            and isinstance(s.targets[0], gast.Subscript)
        ):
            return False  # (most statements: no parent map is made for them)
        target = s.targets[0]
        return object_item_target(target) or kept_parameter_item(
            self.fs.tree, target, self.parents(), after=s
        )

    def stmt_Assign(self, s):
        if len(s.targets) == 1 and isinstance(s.targets[0], gast.Attribute):
            stmts, value = self.expr(s.value)
            stmts.append(self.attribute_store(s.targets[0], value, stmts, s))
            return stmts, False
        if self.outside_item_store(s):  # self.cache[k] = v, bn_param["mean"] = m
            stmts, value = self.expr(s.value)
            stmts.append(self.object_item_store(s.targets[0], value, stmts, s))
            return stmts, False
        if len(s.targets) == 1 and isinstance(s.targets[0], gast.Name):
            if s.targets[0].id in self.declared:  # global n: n = v (free_stores.py)
                stmts, value = self.expr(s.value)
                stmts.append(self.free_store(s.targets[0].id, value, s))
                return stmts, False
            if isinstance(s.value, gast.Lambda):  # only called: inlined at its calls
                return [], False
            chosen = self.chosen_read(s.targets[0], s)
            if chosen is not None:
                return self.stmt_If(chosen)
            read = self.named_read(s.targets[0].id, s.value, s)  # of a written array
            if read is not None:
                return read, False
            stmts, value = self.expr(s.value, keep_call=True)
            stmts.append(N.assign(s.targets[0].id, value, s))
            return stmts, False
        swapped = self.tuple_assign(s)  # a, b = b, a + b
        if swapped is not None:
            return swapped, False
        stmts, value = self.expr(s.value)
        for target in s.targets:
            stmts.extend(self.unpack(target, value, s))
        return stmts, False

    def chosen_read(self, target, s):
        """``name = a[i] if c else b`` with ``a`` an array the function writes, as the
        statement ``if c: name = a[i]`` / ``else: name = b``: each branch a named read,
        checked as one (a row of a matrix stays a view the primal would see change), where
        the expression alone would copy it. None for any other assignment."""
        value = s.value
        if not isinstance(value, gast.IfExp):
            return None
        written = self.array_modes()
        if not any(
            isinstance(e, gast.Subscript)
            and isinstance(e.value, gast.Name)
            and e.value.id in written
            for e in _branches(value)
        ):
            return None

        def branch(e):
            store = gast.Name(id=target.id, ctx=gast.Store(), annotation=None, type_comment=None)
            return gast.copy_location(gast.Assign(targets=[store], value=e), e)

        chosen = gast.If(test=value.test, body=[branch(value.body)], orelse=[branch(value.orelse)])
        return gast.copy_location(chosen, s)

    def setattr_statement(self, s):
        """The statements of ``setattr(obj, name, value)`` (or ``object.__setattr__``) as
        those of ``obj.name = value``
        (the store the check and the transformation follow: PB107 where a gradient would
        flow through the stored value), or None for any other statement. A name that is
        not a constant is a store the function may read back under any name: refused
        whenever the value carries a gradient."""
        call = s.value
        if not isinstance(call, gast.Call) or len(call.args) != 3 or call.keywords:
            return None
        func = call.func
        if isinstance(func, gast.Attribute) and func.attr == "__setattr__":
            func = func.value  # object.__setattr__(obj, name, value)
            if not isinstance(func, gast.Name) or self.fs.lookup(func.id)[1] is not object:
                return None
        elif not isinstance(func, gast.Name) or self.fs.lookup(func.id)[1] is not setattr:
            return None
        if any(isinstance(a, gast.Starred) for a in call.args):
            return None
        obj, name, value = call.args
        known = isinstance(name, gast.Constant) and isinstance(name.value, str)
        known = known and name.value.isidentifier()
        attr = name.value if known else f"<{gast.unparse(name).strip()}>"
        target = gast.copy_location(gast.Attribute(obj, attr, gast.Store()), call)
        stmts, stored = self.expr(value)
        store = self.attribute_store(target, stored, stmts, s)
        if not known:
            store.value.args[1] = self.atom(name, stmts)
            store.value.pb_read_back = True  # under a name known only when it runs
        stmts.append(store)
        return stmts

    def stmt_AnnAssign(self, s):
        if s.value is None:
            return [], False
        return self.stmt(N.located(gast.Assign([s.target], s.value, None), s))

    def stmt_AugAssign(self, s):
        # The check allowed only rebindings of names whose value is provably fresh.
        target = s.target
        if isinstance(target, gast.Attribute):  # obj.n += 1: read, compute, store
            read = gast.Attribute(value=target.value, attr=target.attr, ctx=gast.Load())
            binop = gast.copy_location(
                gast.BinOp(left=gast.copy_location(read, target), op=s.op, right=s.value), s
            )
            stmts, value = self.expr(binop)
            stmts.append(self.attribute_store(target, value, stmts, s))
            return stmts, False
        if target.id in self.declared:  # global n: n += 1 read, computed, stored back
            binop = gast.copy_location(
                gast.BinOp(left=N.located(N.load(target.id), target), op=s.op, right=s.value), s
            )
            stmts, value = self.expr(binop)
            stmts.append(self.free_store(target.id, value, s))
            return stmts, False
        guard = []
        if s in self.deferred:  # refused as it runs if `op=` would change the value in place
            where = N.const(self.fs.where(s))
            op = N.const(OPERATORS.get(type(s.op), "+"))
            call = self.bound_call(
                immutable_value, [N.load(target.id), N.const(target.id), op, where], s
            )
            guard = [N.assign(self.fresh("ok"), call, s)]
        binop = gast.BinOp(left=N.load(target.id), op=s.op, right=s.value)
        gast.copy_location(binop, s)
        stmts, value = self.expr(binop, keep_call=True)
        if isinstance(value, gast.BinOp):  # an object's own __iadd__ runs first
            value.pb_inplace = True  # (transform/dunder_operators.py)
        stmts.append(N.assign(target.id, value, s))
        return guard + stmts, False


def _branches(e):
    """The values an expression ``a if c else (b if d else e)`` may take (its test aside)."""
    if isinstance(e, gast.IfExp):
        yield from _branches(e.body)
        yield from _branches(e.orelse)
    else:
        yield e
