"""The rewrite of iterators stepped by hand (``it = iter(xs)``, ``next(it)``,
``next(it, d)``, ``for v in it:``) into reads of ``xs`` by a position: see
:mod:`pullback.iterators_by_hand`, which decides where it applies (the check asks it too).

It runs on a copy of the function's body, before the normalizer walks it, so the
normalizer sees only index reads, an integer position and walrus assignments.
"""

from __future__ import annotations

import copy

import gast

from ..iterators_by_hand import hand_iterators, next_position
from ..resolve import Callee, resolve_call
from ..runtime import as_sequence
from . import nodes as N


def hand_iteration_body(normalizer, tree):
    """``tree``'s body with its iterators stepped by hand rewritten (a copy), or the body
    itself when it has none."""
    names, _ = hand_iterators(tree, lambda c: resolve_call(normalizer.fs, c, normalizer.locals))
    if not names:
        return tree.body
    body = copy.deepcopy(tree.body)
    seqs = {n: normalizer.fresh("seq_" + n) for n in sorted(names)}
    return _Rewrite(normalizer, seqs).block(body)


class _Rewrite(gast.NodeTransformer):
    def __init__(self, normalizer, seqs):
        self.nz = normalizer
        self.seqs = seqs

    def block(self, stmts) -> list:
        out = []
        for s in stmts:
            new = self.statement(s)
            out.extend(new)
        return out

    def statement(self, s) -> list:
        if (
            isinstance(s, gast.Assign)
            and len(s.targets) == 1
            and isinstance(s.targets[0], gast.Name)
            and s.targets[0].id in self.seqs
        ):  # it = iter(xs)
            name = s.targets[0].id
            source = self.visit(s.value.args[0])
            c = self._call(as_sequence, [source], s, "as_sequence")
            c.pb_callee = Callee("internal", as_sequence, name="as_sequence")
            return [
                N.located(gast.Assign([N.store(self.seqs[name])], c, None), s),
                N.located(gast.Assign([N.store(name)], N.const(0), None), s),
            ]
        for field in ("body", "orelse", "finalbody"):
            if isinstance(getattr(s, field, None), list):
                setattr(s, field, self.block(getattr(s, field)))
        if isinstance(s, gast.Try):
            for h in s.handlers:
                h.body = self.block(h.body)
        if isinstance(s, gast.For) and isinstance(s.iter, gast.Name) and s.iter.id in self.seqs:
            name = s.iter.id
            seq = self.seqs[name]
            window = gast.Slice(lower=N.load(name), upper=None, step=None)
            s.iter = N.located(gast.Subscript(N.load(seq), window, gast.Load()), s.iter)
            s.target = self.visit(s.target)
            length = N.located(gast.Call(N.load("len"), [N.load(seq)], []), s)
            done = N.located(gast.Assign([N.store(name)], length, None), s)
            if s.orelse:  # no break: the else runs, after the loop used it up
                s.orelse = [done] + s.orelse
                return [s]
            return [s, done]
        return [self.generic_visit_statement(s)]

    def generic_visit_statement(self, s):
        for field, value in gast.iter_fields(s):
            if field in ("body", "orelse", "finalbody", "handlers"):
                continue
            if isinstance(value, gast.AST):
                setattr(s, field, self.visit(value))
            elif isinstance(value, list):
                setattr(s, field, [self.visit(v) if isinstance(v, gast.AST) else v for v in value])
        return s

    def visit_Call(self, node):
        self.generic_visit(node)
        arg = node.args[0] if node.args else None
        if not (isinstance(arg, gast.Name) and arg.id in self.seqs):
            return node  # (every other use of the name is next(it, ...): iterators_by_hand)
        name, seq = arg.id, self.seqs[arg.id]
        # the position before the step: (it := it + 1) - 1
        step = gast.NamedExpr(N.store(name), gast.BinOp(N.load(name), gast.Add(), N.const(1)))
        before = gast.BinOp(step, gast.Sub(), N.const(1))
        if len(node.args) == 1:
            at = self._call(next_position, [N.load(seq), before], node, "_pb_next_position")
            return N.located(gast.Subscript(N.load(seq), at, gast.Load()), node)
        p = self.nz.fresh("pos")
        at = self._call(
            next_position, [N.load(seq), before, N.const(True)], node, "_pb_next_position"
        )
        test = gast.Compare(gast.NamedExpr(N.store(p), at), [gast.GtE()], [N.const(0)])
        item = gast.Subscript(N.load(seq), N.load(p), gast.Load())
        return N.located(gast.IfExp(test, item, node.args[1]), node)

    def _call(self, fn, args, where, name):
        self.nz.namespace[name] = fn
        call = N.located(gast.Call(N.load(name), args, []), where)
        call.pb_callee = Callee("object", fn, name=f"pullback.iterators_by_hand.{fn.__name__}")
        return call
