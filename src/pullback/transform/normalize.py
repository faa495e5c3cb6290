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

>>> def f(x, y):
...     if x > 0:
...         return x * y
...     return -y
>>> print(core_source(f))
def f(x, y):
    _ret = None
    _returned = False
    _t1 = x > 0
    if _t1:
        _ret = x * y
        _returned = True
    _go2 = not _returned
    if _go2:
        _ret = -y
        _returned = True
    return _ret

The result is still runnable Python that computes what the original computes. The
families of constructs live in mixins of :class:`Normalizer`: expressions
(expressions.py), loops and early exits (loop_jumps.py), assignments, comprehensions,
calls, ``try``, ... (one module each).
"""

from __future__ import annotations

import itertools

import gast
import numpy as np

from ..check import deferred_augassigns, owned_item_augassigns
from ..resolve import bindings_fixed, dotted_parts, local_names
from ..source import load_source
from ..tree_walk import lean_nodes, walk
from . import nodes as N
from .assignments import Assignments
from .closures import lifted_nodes
from .comprehensions import Comprehensions
from .expressions import Expressions
from .free_stores import FreeStores
from .free_values import FreeValues, rename_reserved_locals
from .hand_iteration import hand_iteration_body
from .helper_calls import use_owning_helpers
from .higher_order_builtins import HigherOrderBuiltins
from .iterator_values import IteratorValues
from .loop_iterables import LoopIterables
from .loop_jumps import RET, RETURNED, Loop, LoopJumps, may_jump
from .mutation import ArrayStores
from .property_reads import read_properties_as_calls
from .ssa import to_ssa  # core_source shows the next pass too
from .star_calls import StarCalls
from .try_blocks import TryStatements
from .ufunc_calls import UfuncCalls
from .with_blocks import WithBlock, as_with, is_general, manager_text


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


class Normalizer(
    Expressions,
    LoopJumps,
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
        self.loops: list[Loop] = []
        self.flags: set[str] = set()  # guard flags: assigned twice per iteration on purpose
        self.live: set[str] = set()  # free names read live (data), not baked in
        self.deferred: set = set()  # `name op= v` checked when it runs (normalize())
        self.owned_items: set = set()  # `d[k] op= v` on arrays only `d` holds (normalize())
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
        body = hand_iteration_body(self, tree)  # it = iter(xs); next(it)
        with bindings_fixed(self.fs):  # (it builds a new tree: fs.tree's bindings stay)
            body = self.block(body)
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
            for sub in walk(default):
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

    def stmt(self, s):
        """Normalize one statement: ``(new statements, jumps)``.

        ``jumps`` is falsy when the statement always falls through, ``"always"`` when it
        never does, and true when it may leave its block.
        """
        if self.outside_item_store(s):
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

    def stmt_Pass(self, s):
        return [], False

    def stmt_Import(self, s):
        # The check accepted it: its names are free names bound in the generated code's
        # namespace and guarded against sys.modules (source_imports.py).
        return [], False

    stmt_ImportFrom = stmt_Import

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
        return stmts, may_jump(body) or may_jump(orelse)

    def stmt_With(self, s):
        if is_general(self.fs, s, self.locals):  # run once around the forward body
            return self.general_with(s)
        # np.errstate (the check accepted it): a block that always runs (with_blocks.py)
        body = self.block(s.body)
        manager = manager_text(self.fs, s, self.locals)
        block = WithBlock(body or [N.located(gast.Pass(), s)], manager, s)
        return [block], may_jump(body)

    def general_with(self, s):
        """``with m as t: body`` of any context manager (with_blocks.py): ``m`` evaluated
        as a statement and held in a Context, ``t`` bound at the top of the body; several
        items nest, as in Python."""
        from ..with_contexts import Context, entered

        item, rest = s.items[0], s.items[1:]
        body = s.body
        if rest:
            inner = gast.With(items=rest, body=body, type_comment=None)
            body = [gast.copy_location(inner, rest[0].context_expr)]
        stmts, value = self.expr(item.context_expr)
        holder = self.fresh("with")
        where = N.const(self.fs.where(s))
        line = N.const(self.fs.file_line(self.fs.location(s)[1]).strip())
        made = self.bound_call(Context, [value, where, line], s, name="_pb_context")
        stmts.append(N.assign(holder, made, s))
        top = []
        if item.optional_vars is not None:
            value = self.fresh("entered")
            call = self.bound_call(entered, [N.load(holder)], s, name="_pb_entered")
            top.append(N.assign(value, call, s))
            bind = gast.Assign(targets=[item.optional_vars], value=N.load(value), type_comment=None)
            body = [gast.copy_location(bind, s), *body]
        inner_body = top + self.block(body)
        block = WithBlock(inner_body or [N.located(gast.Pass(), s)], None, s, N.load(holder))
        stmts.append(block)
        return stmts, may_jump(inner_body)


def normalize(fs, registry=None, environment=None) -> Normalized:
    """Normalize a loaded function (see the module docstring). ``registry`` is the rule
    registry the gradient is built with (a call of an object whose class's ``__call__`` has
    a rule is rewritten to reach it). ``environment``: the check's ``LiveEnvironment``,
    which knows already which helpers write into their parameters."""
    # nested defs become functions of their own first; one walk of the tree as it is then
    # (the lift's own when it rewrote nothing), and the local names read from it, for the
    # three passes below (each reads them, none changes the set; the normalizer then adds
    # its temporaries to it)
    nodes = lifted_nodes(fs, registry)
    local = local_names(fs.tree, nodes)
    if read_properties_as_calls(fs, nodes, local):  # self.kinetic of a known class: its getter
        nodes = lean_nodes(fs.tree)  # one walk: which calls may reach a helper, the local names
        local = local_names(fs.tree, nodes)
    if use_owning_helpers(fs, registry, environment, nodes, local):  # fill(buf, x): a rebinding
        nodes = local = None  # the tree may have been rewritten: walked again
    normalizer = Normalizer(fs, registry, nodes, local)
    # s = x[i]; s += v: a rebinding when the value is immutable as it runs, checked there
    normalizer.deferred = deferred_augassigns(fs, registry)
    # d[k] -= v on arrays only the local dict d holds: written out, no guard
    normalizer.owned_items = owned_item_augassigns(fs, registry)
    return normalizer.run()


def core_source(fn, ssa: bool = False) -> str:
    """The normalized (and optionally SSA-renamed) form of ``fn`` as runnable source.

    Markers for loop ends become ``pass``. Useful to see what the transformation works on.
    """
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
