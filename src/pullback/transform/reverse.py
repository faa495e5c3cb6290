"""Step 6: build the forward sweep and the reverse sweep of a normalized SSA function.

For ``def f(x, y): return x * y + np.sin(x)`` (wrt ``x``) the result reads::

    def f__forward(x, y):
        _t1 = x * y
        _t2 = np.sin(x)
        _ret = _t1 + _t2
        return _ret, _partial(f__backward, (x, y))

    def f__backward(_saved, _dret):
        x, y = _saved
        d_ret = _dret
        d_t1 = d_ret ...
        d_x = unbroadcast(d_t1 * y, x)
        d_x = add(d_x, unbroadcast(d_t2 * _d_sin(_t2, x), x))
        return (densify(d_x),)

Design points:

* Zero cotangents are symbolic and tracked statically: the first contribution to an
  adjoint is an assignment, an adjoint nobody contributed to is never read, and where
  paths merge the quiet path sets ``ZERO`` explicitly.
* Arithmetic, indexing, containers and elementwise (scalar) rules are written inline;
  other calls use their rule's ``(y, pullback)``; calls of user functions use those
  functions' own generated adjoints (made lazily, so recursion works).
* Loops count their iterations and, at each iteration's exit, push a snapshot of exactly
  the values the reverse sweep reads (a linked tuple, so the adjoint stays re-callable);
  the reverse loop pops one snapshot per iteration.
"""

from __future__ import annotations

import itertools
import keyword
from ast import AST

import gast

from ..errors import UnsupportedSyntaxError
from ..tree_walk import LEAN_FIELDS
from .analyze import names_in
from .code import Line
from .direct_reads import direct_reads
from .inline_stores import InlineStores
from .kinds import adds_with_plus
from .loop_identity import LoopIdentities
from .loop_reads import batch_loop_reads
from .owned_inline import inline_list_cotangents
from .ownership import drop_identity_pullbacks, line_statements, own_cotangents
from .peephole import drop_copy_pairs, fold_negations
from .pullback_plans import PullbackPlans
from .reverse_attributes import AttributeAdjoints
from .reverse_calls import CallAdjoints
from .reverse_exprs import ExpressionAdjoints
from .reverse_flow import ControlFlowAdjoints
from .reverse_where import WhereMasks
from .sweep_common import IDENTIFIER, State, source_position, src
from .try_blocks import Attempt
from .with_blocks import WithBlock
from .with_blocks import compound as with_compound


class ReverseBuilder(
    LoopIdentities,
    ExpressionAdjoints,
    CallAdjoints,
    InlineStores,
    PullbackPlans,
    ControlFlowAdjoints,
    AttributeAdjoints,
    WhereMasks,
):
    """Builds the forward and backward code (as :mod:`.code` blocks) for one function."""

    def __init__(
        self, fs, norm, loops, activity, registry, wrt, adjoint_of, diagnostic, kinds=None
    ):
        self.fs = fs
        self.norm = norm
        self.tree = norm.tree
        self.ns = norm.namespace
        self.loops = loops
        self.activity = activity
        self.registry = registry
        self.wrt = wrt
        self.adjoint_of = adjoint_of  # (fn, active param names) -> LazyAdjoint
        self.diagnostic = diagnostic  # (node, code, message, why, fix) -> Diagnostic
        self.kinds = kinds or {}  # SSA name -> kind (see .kinds)
        self.counter = itertools.count(1)
        # one walk for the two facts below, and the calls and set displays plan_pullbacks
        # (called next, before anything changes the tree) reads
        self.primal, self.subscript_bases, calls = self._primal_names()
        self.first_walk: list | None = calls
        self.prefix = self._adjoint_prefix()
        self.pb_names: dict[int, str] = {}  # id(Assign) -> pullback name
        self.call_sites: dict[int, str] = {}  # id(Assign) -> bound CallSite name
        self.loop_stack: list = []
        self.loop_ids: dict[int, int] = {}
        self.problems: list = []
        # Whether the sweeps call other user functions (so recursion costs frames per level).
        self.calls_user_code = False
        self.alias: dict[str, str] = {}
        self.block_defs: list[set] = []
        self.internals: set[str] = set()
        self.chains: dict[str, str] = {}
        # Parameters whose cotangents the fused sweeps return concrete (see direct_reads).
        self.concrete: set[str] = set()
        # Names the sweeps use for themselves, never a name of the function being transformed
        # (which may itself be generated code, for a second derivative).
        self.dret = self.internal("_dret")
        self.saved = self.internal("_saved")
        self.loop_var = self.internal("_")

    # -- names --------------------------------------------------------------------
    def _primal_names(self) -> tuple[set[str], set[str], list]:
        """The names the function binds (its parameters too), the names it indexes
        (``x[i]``), and its calls and set displays in the order of ``lean_nodes``: one
        breadth-first pass over a long function's nodes, by class (no class of the
        transform derives from these), its names read where they are met (leaves but for
        an annotation: they add nothing to the order of the other nodes)."""
        names = set(self.norm.params)
        indexed = set()
        found = []
        name, store, for_, subscript = gast.Name, gast.Store, gast.For, gast.Subscript
        call, set_, constant = gast.Call, gast.Set, gast.Constant
        fields_of = LEAN_FIELDS
        out = [self.tree]
        append = out.append
        for n in out:  # grows while it is read: breadth first
            cls = n.__class__
            if cls is name:  # one with an annotation (met in the walk's order)
                if n.ctx.__class__ is store:
                    names.add(n.id)
                if n.annotation is not None:
                    append(n.annotation)
                continue
            if cls is for_:
                names.add(n.target.id)
            elif cls is subscript:
                if n.value.__class__ is name:
                    indexed.add(n.value.id)
            elif cls is call or cls is set_:
                found.append(n)
            # the nodes of lean_children(n), in its order, read where they are met (no
            # list of them per node)
            for field in fields_of[cls]:
                v = getattr(n, field, None)
                if v.__class__ is list:
                    items = v
                elif isinstance(v, AST):
                    items = (v,)
                else:
                    continue
                for item in items:
                    kind = item.__class__
                    if kind is name and item.annotation is None:
                        if item.ctx.__class__ is store:
                            names.add(item.id)
                    elif kind is not constant and isinstance(item, AST):
                        append(item)  # (a constant holds only values: no node under it)
        return names, indexed, found

    def _adjoint_prefix(self) -> str:
        for prefix in ("d_", "_d_", "__d_"):
            if not any(n.startswith(prefix) for n in self.primal):
                return prefix
        return "_adj_"  # pragma: no cover

    def internal(self, base: str) -> str:
        """A name for the sweeps' own bookkeeping that no primal name uses."""
        name = base
        k = 0
        while name in self.primal or name in self.internals:
            k += 1
            name = f"{base}_{k}"
        self.internals.add(name)
        return name

    def adj(self, name: str) -> str:
        return self.prefix + name

    def bind(self, hint: str, value) -> str:
        """Put ``value`` in the generated code's namespace under a readable fresh name."""
        base = "".join(ch if ch.isalnum() else "_" for ch in hint).strip("_") or "obj"
        for k in itertools.count():
            name = f"_{base}" if k == 0 else f"_{base}{k}"
            if keyword.iskeyword(name) or name in self.primal:
                continue
            existing = self.ns.get(name, _MISSING)
            if existing is _MISSING or existing is value:
                self.ns[name] = value
                return name
        raise AssertionError("unreachable")  # pragma: no cover

    def loop_id(self, info) -> int:
        if id(info) not in self.loop_ids:
            self.loop_ids[id(info)] = len(self.loop_ids) + 1
        return self.loop_ids[id(info)]

    def note_assigned(self, name: str):
        for info in self.loop_stack:
            info.assigned.add(name)
        self.primal.add(name)

    # -- entry ----------------------------------------------------------------------
    def build(self):
        ret = self.tree.body[-1]
        ret_name = ret.value.id
        state = State()
        body: list = []
        if self.activity.is_active(ret_name):
            body.append(Line(f"{self.adj(ret_name)} = {self.dret}", src=ret.lineno))
            state[ret_name] = "M"
        body.extend(self.rev_block(self.tree.body[:-1], state))
        body[:0] = self.stepped_mask_defaults()
        self.full_masks_in_alt(body)
        results = []
        for p in self.wrt:
            if state.get(p) == "Z":
                results.append("ZERO")
            elif p in self.subscript_bases:
                results.append(f"fold_reads({self.adj(p)}, {p}, {self.reads_chain(p)})")
            else:
                results.append(f"densify({self.adj(p)})")
        chains = sorted(
            self.reads_chain(n) for n in self.subscript_bases if self.activity.is_active(n)
        )
        if chains:
            body.insert(0, Line(" = ".join(chains) + " = None"))
        tail = ", ".join(results) + ("," if len(results) == 1 else "")
        body.append(Line(f"return ({tail})"))
        # The fused gradient function returns concrete values (never ZERO), one per
        # parameter, or the value itself for a single parameter: an adjoint that may be
        # ZERO at run time (a tuple item no use reached) becomes zeros like its parameter.
        concrete = []
        for p, r in zip(self.wrt, results, strict=True):
            if r == "ZERO":
                r = f"zero_cotangent({p})"
            elif r.startswith("densify("):
                r = r[len("densify(") : -1]  # only index chains need densifying, and they fold
            concrete.append(r)
        returned = [
            r if r.startswith("zero_cotangent(") else f"_pb_concrete({r}, {p})"
            for p, r in zip(self.wrt, concrete, strict=True)
        ]
        self.gradient_return = Line(
            "return " + (returned[0] if len(returned) == 1 else "(" + ", ".join(returned) + ")")
        )
        # The vjp function is called by differentiable code as a pullback, whose
        # cotangents are added to others: a parameter without floats gets NO_TANGENT.
        vjp = [
            f"_pb_vjp_zero({p})" if r == "ZERO" else c
            for p, r, c in zip(self.wrt, results, concrete, strict=True)
        ]
        self.vjp_return = Line("return (" + ", ".join(vjp) + ("," if len(vjp) == 1 else "") + ")")
        if self.problems:
            problems = sorted(self.problems, key=source_position)
            raise UnsupportedSyntaxError(self.fs.name, problems)
        drop_copy_pairs(body, self.prefix)
        fold_negations(body, self.prefix)
        own_cotangents(body, self.ns, self.bind, self.internal, self.prefix, self.kinds)
        drop_identity_pullbacks(body, self.ns)
        inline_list_cotangents(body, self.ns, self.bind, line_statements)
        batch_loop_reads(body, self.bind, self.internal)
        saved = self.finish_loops(body)
        forward = self.fwd_block(self.tree.body[:-1])
        # after the saved values are known: its lines read nothing the chain's did not
        self.concrete = direct_reads(
            body, forward, self.wrt, self.kinds, self.prefix, self.chains, self.bind, self.internal
        )
        return forward, body, saved, ret_name

    # -- reverse ----------------------------------------------------------------------
    def rev_block(self, stmts, state) -> list:
        out: list = []
        self.block_defs.append({s.targets[0].id for s in stmts if isinstance(s, gast.Assign)})
        for s in reversed(stmts):
            if isinstance(s, (gast.If, gast.For, gast.While, WithBlock)):
                self.flush_aliases(out, s.lineno)
            out.extend(self.rev_stmt(s, state))
        self.flush_aliases(out, getattr(stmts[0], "lineno", None) if stmts else None)
        self.block_defs.pop()
        return out

    # An adjoint that is a plain copy of another (d_a = d_b) is not written: later code
    # reads d_b directly. Only names defined in the block being reversed are aliased, and
    # an alias is written out before its target changes or control flow branches.
    def ref(self, name: str) -> str:
        return self.alias.get(name) or self.adj(name)

    def flush_aliases(self, out, line, pointing_to=None):
        for name, target in list(self.alias.items()):
            if pointing_to is None or target == pointing_to:
                if target != self.adj(name):
                    out.append(Line(f"{self.adj(name)} = {target}", src=line))
                del self.alias[name]

    def write(self, name, out, line):
        """About to assign the adjoint of ``name``: settle aliases that read it."""
        self.flush_aliases(out, line, pointing_to=self.adj(name))

    def rev_stmt(self, s, state) -> list:
        if isinstance(s, gast.Assign):
            return self.rev_assign(s, state)
        if isinstance(s, gast.If):
            return self.rev_if(s, state)
        if isinstance(s, (gast.For, gast.While)):
            return self.rev_loop(s, state)
        if isinstance(s, Attempt):  # a step of a try body: reversed if it completed
            return self.rev_if(s.as_if(), state)
        if isinstance(s, WithBlock):  # the body's reverse, under the same error modes
            return with_compound(s, self.rev_block(s.body, state), s.lineno, reverse=True)
        return []

    def contrib(self, name: str, expr: str, reads, state, src_line, out: list):
        """Accumulate ``expr`` into the adjoint of ``name`` (if ``name`` is active)."""
        if not self.activity.is_active(name):
            return
        if self.where_context:  # a statement of a np.where branch (see reverse_where)
            expr = self.mask_contribution(name, expr)
        a = self.adj(name)
        self.write(name, out, src_line)
        if state.get(name) == "Z":
            state[name] = "M"
            if expr == a:  # the adjoint already holds this value
                self.alias.pop(name, None)
                return
            if (
                IDENTIFIER.fullmatch(expr)
                and self.block_defs
                and name in self.block_defs[-1]
                and name not in self.subscript_bases
            ):
                self.alias[name] = expr
                return
            out.append(Line(f"{a} = {expr}", frozenset(reads), src_line))
            return
        current = self.alias.pop(name, a)
        if adds_with_plus(self.kinds, name):
            # NumPy scalars and arrays (and ZERO, IndexedCotangent) add with "+".
            if expr.startswith("-") and IDENTIFIER.fullmatch(expr[1:]):
                out.append(Line(f"{a} = {current} - {expr[1:]}", frozenset(reads), src_line))
                return
            out.append(Line(f"{a} = {current} + {expr}", frozenset(reads), src_line))
        else:
            out.append(Line(f"{a} = add({current}, {expr})", frozenset(reads), src_line))

    def temp(self) -> str:
        """A fresh name for a reverse-sweep temporary (never a name of the function)."""
        while True:
            name = f"_cot{next(self.counter)}"
            if name not in self.primal:
                return name

    def rev_assign(self, s, state) -> list:
        t = s.targets[0].id
        if not self.activity.is_active(t) or state.get(t) == "Z":
            # (a np.where no cotangent reaches still computes the masks of its branches'
            # members: the primal result of a generated vjp function, see where_branches)
            return self.where_mask_lines(t, s.lineno) if s.value.__class__ is gast.Call else []
        line = s.lineno
        out: list = []
        if t in self.subscript_bases:
            self.fold(t, out, line)
        g = self.alias.pop(t, None) or self.adj(t)
        if g != self.adj(t) and g in {self.adj(n) for n in names_in(s.value)}:
            # The cotangent lives in an operand's adjoint, which this statement updates.
            out.append(Line(f"{self.adj(t)} = {g}", src=line))
            g = self.adj(t)
        state[t] = "Z"  # consumed: earlier (in reverse) contributions start afresh
        out.extend(self.where_mask_lines(t, line))
        self.where_context = self.where_groups_of(s)
        try:
            self.rev_value(s, t, g, state, line, out)
        finally:
            self.where_context = ()
        return out

    def rev_value(self, s, t, g, state, line, out):
        """The contributions of ``t = <s.value>`` (cotangent ``g``) to its operands."""
        v = s.value
        if isinstance(v, gast.Name):
            self.contrib(v.id, g, (), state, line, out)
        elif isinstance(v, gast.BinOp):
            self.rev_binop(s, t, g, v, state, out)
        elif isinstance(v, gast.UnaryOp):
            a = v.operand
            if isinstance(a, gast.Name):
                expr = f"-{g}" if isinstance(v.op, gast.USub) else g
                self.contrib(a.id, expr, (), state, line, out)
        elif isinstance(v, gast.Subscript):
            self.rev_subscript(t, g, v, state, out, line)
        elif isinstance(v, (gast.Tuple, gast.List)):
            for k, e in enumerate(v.elts):
                if isinstance(e, gast.Name):
                    self.contrib(e.id, f"tuple_item({g}, {k})", (), state, line, out)
        elif isinstance(v, gast.Dict):
            for key, e in zip(v.keys, v.values, strict=True):
                if isinstance(e, gast.Name):
                    self.contrib(
                        e.id, f"dict_item({g}, {src(key)})", names_in(key), state, line, out
                    )
        elif isinstance(v, gast.Call):
            self.rev_call(s, t, g, v, state, out)
        elif isinstance(v, gast.Attribute) and isinstance(v.value, gast.Name):
            # A declared attribute of a rule's result object (plan_pullbacks refuses the
            # others): its cotangent reaches the object as a dict {attribute: cotangent}.
            self.contrib(v.value.id, f"{{{v.attr!r}: {g}}}", (), state, line, out)


_MISSING = object()

__all__ = ["ReverseBuilder"]
