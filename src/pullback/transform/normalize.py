"""Step 4 of the pipeline: rewrite a checked function into a small core language.

After this pass a function body holds only:

* ``name = <one operation on atoms>`` where an atom is a name or a constant and the
  operation is a binary/unary operator, a comparison, a call, an attribute read, an index
  read, or a tuple/list/dict display;
* ``if name: ... else: ...``;
* ``for name in range(atoms): ...`` and ``while True: ...`` (left by ``break``);
* ``break``, ``continue``, ``raise``, ``assert``, call statements;
* one ``return name`` at the very end.

``and``/``or``/``a if c else b`` become ``if`` statements, augmented assignments become
rebindings (the check refused the ones that are not), tuple targets become index reads,
loops over sequences become loops over indices, and every early exit (``return`` inside a
branch or a loop, ``break``, ``continue``) becomes a flag that guards the rest of its
block, so the reverse sweep can follow the same path.

>>> import textwrap, gast
>>> def f(x, y):
...     return x * y + 1.0 if x > 0 else -y
>>> print(normalized_source(f))                      # doctest: +SKIP
def f(x, y):
    _returned = False
    ...

The result is still runnable Python that computes what the original computes.
"""

from __future__ import annotations

import itertools

import gast
import numpy as np

from ..check import deferred_augassigns
from ..dict_calls import constant_getattr, dict_display, with_getattr_rewritten
from ..resolve import (
    dotted_parts,
    local_names,
    object_item_target,
    resolve_call,
)
from ..source import load_source
from ..tree_walk import lean_nodes, statements
from . import nodes as N
from .assignments import Assignments
from .closures import lift_nested_functions
from .comprehensions import COMPREHENSIONS, Comprehensions
from .free_stores import FreeStores
from .free_values import FreeValues, rename_reserved_locals
from .hand_iteration import hand_iteration_body
from .helper_calls import use_owning_helpers
from .higher_order_builtins import HigherOrderBuiltins
from .iterator_values import IteratorValues
from .loop_iterables import LoopIterables
from .mutation import ArrayStores
from .property_reads import read_properties_as_calls
from .star_calls import StarCalls
from .try_blocks import TryStatements
from .ufunc_calls import UfuncCalls
from .with_blocks import WithBlock, as_with, manager_text

RET = "_ret"
RETURNED = "_returned"


# Names that generated adjoints use for their own helpers.
class Normalized:
    """The normalized function: its tree, the names the code needs, and per-call facts.

    ``live`` holds the free names the generated code reads at run time (data: arrays,
    numbers, flags, containers, objects); every other resolved name is baked in and
    guarded (see :mod:`pullback.guards`).
    """

    def __init__(self, tree, namespace, params, flags, live=frozenset(), renames=None):
        self.tree = tree
        self.namespace = namespace
        self.params = params
        self.flags = flags
        self.live = live
        self.renames = renames or {}  # user names generated code needed for itself


class _Loop:
    def __init__(self, break_flag: str | None):
        self.break_flag = break_flag


class Normalizer(
    Assignments,
    FreeStores,
    FreeValues,
    Comprehensions,
    StarCalls,
    HigherOrderBuiltins,
    ArrayStores,
    LoopIterables,
    UfuncCalls,
    IteratorValues,
    TryStatements,
):
    def __init__(self, fs, registry=None, nodes=None, local=None):
        self.fs = fs
        self.registry = registry  # which calls reach a rule decides some rewrites
        # nodes: lean_nodes(fs.tree), if walked already; local: their local_names then
        local = local_names(fs.tree, nodes) if local is None or nodes is None else local
        self.renames = fs.renames = rename_reserved_locals(fs.tree, local)
        # the same names unless some were renamed: then walked again
        self.locals = local_names(fs.tree) if self.renames else local
        self.counter = itertools.count(1)
        self.namespace: dict = {"_np": np}
        self.loops: list[_Loop] = []
        self.flags: set[str] = set()  # guard flags: assigned twice per iteration on purpose
        self.live: set[str] = set()  # free names read live (data), not baked in
        self.deferred: set = set()  # `name op= v` checked when it runs (normalize())
        self.declare_free_names()  # global/nonlocal names: read and written where they live

    # -- names ------------------------------------------------------------------------
    def fresh(self, hint: str = "t") -> str:
        while True:
            name = f"_{hint}{next(self.counter)}"
            if name not in self.locals:
                self.locals.add(name)
                return name

    def run(self) -> Normalized:
        tree = self.fs.tree
        body = self.block(hand_iteration_body(self, tree))  # it = iter(xs); next(it)
        prologue = [N.assign(RET, N.const(None), tree), N.assign(RETURNED, N.const(False), tree)]
        body = prologue + body + [N.located(gast.Return(value=N.load(RET)), tree.body[-1])]
        new = gast.FunctionDef(
            name=tree.name,
            args=tree.args,
            body=body,
            decorator_list=[],
            returns=None,
            type_comment=None,
            type_params=[],
        )
        gast.copy_location(new, tree)
        a = tree.args
        star = [p for p in (a.vararg, a.kwarg) if p is not None]  # *args/**kwargs
        params = [p.id for p in a.posonlyargs + a.args + a.kwonlyargs + star]
        for default in tree.args.defaults + [d for d in tree.args.kw_defaults if d is not None]:
            for sub in gast.walk(default):
                if isinstance(sub, (gast.Name, gast.Attribute)) and dotted_parts(sub):
                    if dotted_parts(sub)[0] not in self.locals:
                        self.bind_global(sub)
        return Normalized(
            new, self.namespace, params, self.flags, frozenset(self.live), self.renames
        )

    def block(self, stmts) -> list:
        out: list = []
        for i, stmt in enumerate(stmts):
            new, jumps = self.stmt(stmt)
            rest = stmts[i + 1 :]
            if jumps == "always":
                out.extend(new)
                return out
            if jumps and rest:
                out.extend(self.guarded(new, rest, stmt))
                return out
            out.extend(new)
        return out

    def guarded(self, new, rest, where) -> list:
        """``new`` may leave the block: run ``rest`` only when it did not.

        Inside a loop the guard is a flag set before ``new`` and cleared just before each
        of its ``break``/``continue``, so it is right even in the iteration that left
        (the reverse sweep reads it from that iteration's snapshot). Outside loops only
        ``return`` leaves, and the guard is ``not _returned``.
        """
        guard = self.fresh("go")
        if self.loops:
            self.flags.add(guard)
            for stmts in _jump_blocks(new):
                k = next(
                    i for i, s in enumerate(stmts) if isinstance(s, (gast.Break, gast.Continue))
                )
                stmts.insert(k, N.assign(guard, N.const(False), stmts[k]))
            head = [N.assign(guard, N.const(True), where)] + new
        else:
            head = new + [N.assign(guard, N.not_(N.load(RETURNED)), where)]
        return head + [N.if_(N.load(guard), self.block(rest), where=rest[0])]

    def stmt(self, s):
        """Normalize one statement: ``(new statements, jumps)``.

        ``jumps`` is falsy when the statement always falls through, ``"always"`` when it
        never does, and true when it may leave its block.
        """
        if isinstance(s, gast.Assign) and len(s.targets) == 1 and object_item_target(s.targets[0]):
            return self.stmt_Assign(s)  # self.cache[k] = v: no local array (object_item_store)
        inplace = self.inplace_statement(s)  # a[i] = v, a.fill(v), a += v: inplace_calls.py
        if inplace is not None:
            return inplace, False
        method = getattr(self, "stmt_" + type(s).__name__, None)
        if method is None:  # pragma: no cover - the check refuses these first
            raise NotImplementedError(type(s).__name__)
        return method(s)

    def stmt_Expr(self, s):
        if isinstance(s.value, gast.Constant):  # docstring or bare constant
            return [], False
        append = self.local_append(s)
        if append is not None:
            return self.stmt_Append(append)
        stored = self.setattr_statement(s)  # setattr(obj, "w", v) is obj.w = v
        if stored is not None:
            return stored, False
        stmts, value = self.expr(s.value, keep_call=True)
        if isinstance(value, gast.Call):
            self.mark_outside_append(s.value, value)
            stmts.append(N.expr_stmt(value, s))
        return stmts, False

    @staticmethod
    def may_jump(stmts) -> bool:
        return _may_jump(stmts)

    def stmt_LoopEnd(self, s):
        return [s], False

    def stmt_Pass(self, s):
        return [], False

    def stmt_Import(self, s):
        # The check accepted it: its names are free names bound in the generated code's
        # namespace and guarded against sys.modules (source_imports.py).
        return [], False

    stmt_ImportFrom = stmt_Import

    def stmt_Return(self, s):
        stmts = []
        if s.value is None:
            value = N.const(None)
        else:
            stmts, value = self.expr(s.value, keep_call=True)
        stmts.append(N.assign(RET, value, s))
        stmts.append(N.assign(RETURNED, N.const(True), s))
        if self.loops:
            stmts.append(N.located(gast.Break(), s))
        return stmts, "always"

    def stmt_Break(self, s):
        loop = self.loops[-1]
        stmts = []
        if loop.break_flag:
            stmts.append(N.assign(loop.break_flag, N.const(True), s))
        stmts.append(N.located(gast.Break(), s))
        return stmts, "always"

    def stmt_Continue(self, s):
        return [N.located(gast.Continue(), s)], "always"

    def stmt_Raise(self, s):
        self.bind_free_names(s)
        return [s], "always"

    def stmt_Assert(self, s):
        self.bind_free_names(s)
        return [s], False

    def stmt_If(self, s):
        stmts, test = self.expr(s.test)
        cond = self.as_name(test, stmts, s, "c")
        body = self.block(s.body)
        orelse = self.block(s.orelse)
        stmts.append(N.if_(N.load(cond), body, orelse, where=s))
        return stmts, _may_jump(body) or _may_jump(orelse)

    def stmt_With(self, s):
        # np.errstate (the check accepted it): a block that always runs (with_blocks.py)
        body = self.block(s.body)
        manager = manager_text(self.fs, s, self.locals)
        block = WithBlock(body or [N.located(gast.Pass(), s)], manager, s)
        return [block], _may_jump(body)

    def stmt_While(self, s):
        # while test: body   ->   while True: c = test; if c: body; else: break
        loop = _Loop(self.fresh("broke") if s.orelse else None)
        self.loops.append(loop)
        test_stmts, test = self.expr(s.test)
        cond = self.as_name(test, test_stmts, s, "c")
        inner = self.block(s.body)
        step = N.if_(N.load(cond), inner, [N.located(gast.Break(), s)], where=s)
        body = test_stmts + self.guarded([step], [LoopEnd(s)], s)
        self.loops.pop()
        pre = []
        if loop.break_flag:
            pre.append(N.assign(loop.break_flag, N.const(False), s))
        loop_node = N.located(gast.While(test=N.const(True), body=body, orelse=[]), s)
        return self.after_loop(s, pre, loop_node, loop, body)

    def stmt_For(self, s):
        loop = _Loop(self.fresh("broke") if s.orelse else None)
        pre, var, prefix, iter_value = self.loop_header(s)
        self.loops.append(loop)
        body = prefix + self.block(s.body + [LoopEnd(s)])
        self.loops.pop()
        if loop.break_flag:
            pre.append(N.assign(loop.break_flag, N.const(False), s))
        loop_node = N.located(
            gast.For(target=N.store(var), iter=iter_value, body=body, orelse=[], type_comment=None),
            s,
        )
        return self.after_loop(s, pre, loop_node, loop, body)

    def after_loop(self, s, pre, loop_node, loop, body):
        stmts = pre + [loop_node]
        jumps = False
        if loop.break_flag:
            else_body = self.block(s.orelse)
            stmts.append(N.if_(N.not_(N.load(loop.break_flag)), else_body, where=s.orelse[0]))
            jumps = _may_jump(else_body)
        if _contains_return(body):
            if self.loops:
                stmts.append(N.if_(N.load(RETURNED), [N.located(gast.Break(), s)], where=s))
            jumps = True
        return stmts, jumps

    def as_name(self, atom, stmts, where, hint) -> str:
        if isinstance(atom, gast.Name) and atom.id.startswith("_"):
            return atom.id
        name = self.fresh(hint)
        stmts.append(N.assign(name, atom, where))
        return name

    # -- expressions ------------------------------------------------------------------
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


class LoopEnd(gast.Pass):
    """Marks the end of one loop iteration, where the SSA pass puts the loop's carried
    copies and the reverse sweep its snapshot. It is guarded like any other statement."""

    def __init__(self, where):
        super().__init__()
        gast.copy_location(self, where)


def _jump_blocks(stmts):
    """The statement lists, outside nested loops, that end in ``break``/``continue``."""
    found = []
    if any(isinstance(s, (gast.Break, gast.Continue)) for s in stmts):
        found.append(stmts)
    for s in stmts:
        if isinstance(s, gast.If):
            found.extend(_jump_blocks(s.body))
            found.extend(_jump_blocks(s.orelse))
        elif isinstance(s, WithBlock):
            found.extend(_jump_blocks(s.body))
    return found


def _ctx(node):
    return {} if isinstance(node, gast.Set) else {"ctx": gast.Load()}


def _may_jump(stmts) -> bool:
    for s in stmts:
        for node in _walk_no_loops(s):
            if isinstance(node, (gast.Break, gast.Continue)):
                return True
            if isinstance(node, gast.Assign) and any(
                isinstance(t, gast.Name) and t.id == RETURNED for t in node.targets
            ):
                return True
    return False


def _contains_return(stmts) -> bool:
    for s in stmts:
        for node in statements(s):
            if isinstance(node, gast.Assign) and any(
                isinstance(t, gast.Name) and t.id == RETURNED for t in node.targets
            ):
                if isinstance(node.value, gast.Constant) and node.value.value is True:
                    return True
    return False


def _walk_no_loops(node):
    """Walk a statement without entering nested loops (their jumps are their own)."""
    yield node
    if isinstance(node, (gast.For, gast.While)):
        return
    for child in gast.iter_child_nodes(node):
        if isinstance(child, gast.stmt) or isinstance(child, gast.AST):
            yield from _walk_no_loops(child)


def normalize(fs, registry=None, environment=None) -> Normalized:
    """Normalize a loaded function (see the module docstring). ``registry`` is the rule
    registry the gradient is built with (a call of an object whose class's ``__call__`` has
    a rule is rewritten to reach it). ``environment``: the check's ``LiveEnvironment``,
    which knows already which helpers write into their parameters."""
    lift_nested_functions(fs, registry=registry)  # nested defs: functions of their own
    # one walk, and the local names read from it, for the three passes below (each reads
    # them, none changes the set; the normalizer then adds its temporaries to it)
    nodes = lean_nodes(fs.tree)
    local = local_names(fs.tree, nodes)
    if read_properties_as_calls(fs, nodes, local):  # self.kinetic of a known class: its getter
        nodes = lean_nodes(fs.tree)  # one walk: which calls may reach a helper, the local names
        local = local_names(fs.tree, nodes)
    if use_owning_helpers(fs, registry, environment, nodes, local):  # fill(buf, x): a rebinding
        nodes = local = None  # the tree may have been rewritten: walked again
    normalizer = Normalizer(fs, registry, nodes, local)
    # s = x[i]; s += v: a rebinding when the value is immutable as it runs, checked there
    normalizer.deferred = deferred_augassigns(fs, registry)
    return normalizer.run()


def core_source(fn, ssa: bool = False) -> str:
    """The normalized (and optionally SSA-renamed) form of ``fn`` as runnable source.

    Markers for loop ends become ``pass``. Useful to see what the transformation works on.
    """
    from .ssa import to_ssa  # the next pass, which imports this one: see tests/test_layers.py

    norm = normalize(load_source(fn))
    if ssa:
        to_ssa(norm.tree, norm.params, norm.flags)

    def strip(stmts):
        out = []
        for s in stmts:
            if isinstance(s, gast.Pass):
                out.append(gast.Pass())
                continue
            for field in ("body", "orelse"):
                block = getattr(s, field, None)
                if isinstance(block, list) and block:
                    setattr(s, field, strip(block))
            out.append(as_with(s) if isinstance(s, WithBlock) else s)
        return out

    norm.tree.body = strip(norm.tree.body)
    return gast.unparse(norm.tree)
