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
import math
import re
import types

import gast

from ..errors import UnsupportedSyntaxError
from ..registry import RULE, SCALAR
from ..source import transform_target
from .analyze import names_in
from .code import Compound, Line, identifiers, walk_reads
from .inline import inline_form
from .kinds import SCALAR as SCALAR_KIND
from .kinds import is_real
from .problems import (
    attribute_of_varied,
    no_rule_for_varied_call,
    varied_attribute_store,
    varied_keyword,
)
from .ssa import SnapshotPoint

BINOP_SYMBOLS = {
    gast.Add: "+",
    gast.Sub: "-",
    gast.Mult: "*",
    gast.Div: "/",
    gast.Pow: "**",
    gast.Mod: "%",
    gast.MatMult: "@",
    gast.FloorDiv: "//",
}


def src(node):
    return gast.unparse(node).strip()


def index_expr(node) -> str:
    """An index (slices, tuples, None, ...) as a value expression: ``slice(1, None, None)``."""
    if isinstance(node, gast.Slice):
        parts = [src(p) if p is not None else "None" for p in (node.lower, node.upper, node.step)]
        return f"slice({', '.join(parts)})"
    if isinstance(node, gast.Tuple):
        inner = ", ".join(index_expr(e) for e in node.elts)
        return f"({inner},)" if len(node.elts) == 1 else f"({inner})"
    return src(node)


class ReverseBuilder:
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
        self.primal = self._primal_names()
        self.prefix = self._adjoint_prefix()
        self.subscript_bases = {
            n.value.id
            for n in gast.walk(self.tree)
            if isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name)
        }
        self.pb_names: dict[int, str] = {}  # id(Assign) -> pullback name
        self.loop_stack: list = []
        self.loop_ids: dict[int, int] = {}
        self.problems: list = []
        # Whether the sweeps call other user functions (so recursion costs frames per level).
        self.calls_user_code = False
        self.alias: dict[str, str] = {}
        self.block_defs: list[set] = []
        self.internals: set[str] = set()
        self.chains: dict[str, str] = {}
        # Names the sweeps use for themselves, never a name of the function being transformed
        # (which may itself be generated code, for a second derivative).
        self.dret = self.internal("_dret")
        self.saved = self.internal("_saved")
        self.loop_var = self.internal("_")

    # -- names --------------------------------------------------------------------
    def _primal_names(self) -> set[str]:
        names = set(self.norm.params)
        for n in gast.walk(self.tree):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                names.add(n.id)
            elif isinstance(n, gast.For):
                names.add(n.target.id)
        return names

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
        # parameter, or the value itself for a single parameter.
        concrete = []
        for p, r in zip(self.wrt, results, strict=True):
            if r == "ZERO":
                r = f"zero_cotangent({p})"
            elif r.startswith("densify("):
                r = r[len("densify(") : -1]  # only index chains need densifying, and they fold
            concrete.append(r)
        self.gradient_return = Line(
            "return " + (concrete[0] if len(concrete) == 1 else "(" + ", ".join(concrete) + ")")
        )
        self.vjp_return = Line(
            "return (" + ", ".join(concrete) + ("," if len(concrete) == 1 else "") + ")"
        )
        if self.problems:
            raise UnsupportedSyntaxError(self.fs.name, sorted(self.problems, key=_pos))
        _drop_copy_pairs(body, self.prefix)
        saved = self.finish_loops(body)
        forward = self.fwd_block(self.tree.body[:-1])
        return forward, body, saved, ret_name

    # -- reverse ----------------------------------------------------------------------
    def rev_block(self, stmts, state) -> list:
        out: list = []
        self.block_defs.append({s.targets[0].id for s in stmts if isinstance(s, gast.Assign)})
        for s in reversed(stmts):
            if isinstance(s, (gast.If, gast.For, gast.While)):
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
        return []

    def contrib(self, name: str, expr: str, reads, state, src_line, out: list):
        """Accumulate ``expr`` into the adjoint of ``name`` (if ``name`` is active)."""
        if not self.activity.is_active(name):
            return
        a = self.adj(name)
        self.write(name, out, src_line)
        if state.get(name) == "Z":
            state[name] = "M"
            if expr == a:  # the adjoint already holds this value
                self.alias.pop(name, None)
                return
            if (
                _IDENTIFIER.fullmatch(expr)
                and self.block_defs
                and name in self.block_defs[-1]
                and name not in self.subscript_bases
            ):
                self.alias[name] = expr
                return
            out.append(Line(f"{a} = {expr}", frozenset(reads), src_line))
            return
        current = self.alias.pop(name, a)
        if is_real(self.kinds.get(name)):
            # Scalars and arrays (and ZERO, IndexedCotangent) add with "+".
            if expr.startswith("-") and _IDENTIFIER.fullmatch(expr[1:]):
                out.append(Line(f"{a} = {current} - {expr[1:]}", frozenset(reads), src_line))
                return
            out.append(Line(f"{a} = {current} + {expr}", frozenset(reads), src_line))
        else:
            out.append(Line(f"{a} = add({current}, {expr})", frozenset(reads), src_line))

    def inline_scalar(self, rule, call) -> bool:
        """Elementwise rules are written inline when every argument is provably real;
        otherwise (complex values possible) their own pullback runs."""
        return (
            rule is not None
            and rule.kind == SCALAR
            and not call.keywords
            and all(self.known_kind(a) for a in call.args)
        )

    def known_kind(self, node) -> bool:
        """Whether an operand is provably a number or an array (not a tuple or list)."""
        if isinstance(node, gast.Constant):
            return isinstance(node.value, (int, float, complex)) and not isinstance(
                node.value, bool
            )
        return isinstance(node, gast.Name) and is_real(self.kinds.get(node.id))

    def known_real(self, node) -> bool:
        """Whether an operand is provably real (so its conjugate is itself): a real
        constant, or a name whose kind is a real number or array."""
        if isinstance(node, gast.Constant):
            return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
        return isinstance(node, gast.Name) and is_real(self.kinds.get(node.id))

    def temp(self) -> str:
        """A fresh name for a reverse-sweep temporary (never a name of the function)."""
        while True:
            name = f"_cot{next(self.counter)}"
            if name not in self.primal:
                return name

    def same_shape(self, operand, other, result) -> bool:
        """True when ``operand`` provably has the shape of ``result`` (no unbroadcast)."""
        if isinstance(other, gast.Constant) and isinstance(other.value, (int, float)):
            return True
        if isinstance(other, gast.Name) and self.kinds.get(other.id) == SCALAR_KIND:
            return True
        # Equal ranks do not mean equal shapes ((3, 1) * (1, 4)); only scalars are sure.
        if isinstance(operand, gast.Name):
            return (
                self.kinds.get(operand.id) == SCALAR_KIND and self.kinds.get(result) == SCALAR_KIND
            )
        return False

    def rev_assign(self, s, state) -> list:
        t = s.targets[0].id
        if not self.activity.is_active(t) or state.get(t) == "Z":
            return []
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
        return out

    def refuse_attribute(self, v):
        self.problems.append(attribute_of_varied(self.diagnostic, v))

    def rev_binop(self, s, t, g, v, state, out):
        line = s.lineno
        a, b = v.left, v.right
        op = type(v.op)
        an = a.id if isinstance(a, gast.Name) else None
        bn = b.id if isinstance(b, gast.Name) else None
        # With a scalar on one side the result has the other side's shape.
        a_ub = not self.same_shape(a, b, t)
        b_ub = not self.same_shape(b, a, t)
        sa, sb = src(a), src(b)

        def ub(expr, x, needed):
            return f"unbroadcast({expr}, {x})" if needed else expr

        reads_a = {n for n in (an, bn) if n}

        def cj(expr, node):
            # The cotangent of a product conjugates the other factor; real values
            # (proved by their kind) skip it.
            return expr if self.known_real(node) else f"_np.conj({expr})"

        real = self.known_real(a) and self.known_real(b)
        if an and an == bn and op in (gast.Add, gast.Mult):
            # x + x and x * x: one contribution instead of two.
            expr = f"2 * {g}" if op is gast.Add else f"2 * {g} * {cj(sa, a)}"
            self.contrib(an, ub(expr, sa, a_ub), reads_a, state, line, out)
        elif op is gast.Add and not real:
            # Operands of unknown kind may be tuples or lists: + concatenates them.
            c = self.temp()
            out.append(Line(f"{c} = plus_cotangents({g}, {sa}, {sb})", src=line))
            if an:
                self.contrib(an, f"{c}[0]", (), state, line, out)
            if bn:
                self.contrib(bn, f"{c}[1]", (), state, line, out)
        elif op is gast.Add:
            if an:
                self.contrib(an, ub(g, sa, a_ub), reads_a, state, line, out)
            if bn:
                self.contrib(bn, ub(g, sb, b_ub), reads_a, state, line, out)
        elif op is gast.Sub:
            if an:
                self.contrib(an, ub(g, sa, a_ub), reads_a, state, line, out)
            if bn:
                self.contrib(bn, ub(f"-{g}", sb, b_ub), reads_a, state, line, out)
        elif op is gast.Mult:
            if an:
                self.contrib(an, ub(f"{g} * {cj(sb, b)}", sa, a_ub), reads_a, state, line, out)
            if bn:
                self.contrib(bn, ub(f"{cj(sa, a)} * {g}", sb, b_ub), reads_a, state, line, out)
        elif op is gast.Div:
            if an:
                self.contrib(an, ub(f"{g} / {cj(sb, b)}", sa, a_ub), reads_a, state, line, out)
            if bn:
                quotient = t if real else f"_np.conj({t} / {sb})"
                expr = f"-{g} * {t} / {sb}" if real else f"-{g} * {quotient}"
                self.contrib(bn, ub(expr, sb, b_ub), reads_a | {t}, state, line, out)
        elif op is gast.Pow:
            if an:
                if isinstance(b, gast.Constant) and b.value == 2:
                    deriv = f"2 * {cj(sa, a)}"
                elif isinstance(b, gast.Constant) and b.value == 1:
                    deriv = None
                elif isinstance(b, gast.Constant):
                    deriv = f"{sb} * {sa} ** {src(gast.Constant(b.value - 1, None))}"
                else:
                    deriv = f"{sb} * {sa} ** ({sb} - 1)"
                if deriv is not None and not real and not deriv.startswith("2 * "):
                    deriv = f"_np.conj({deriv})"
                expr = g if deriv is None else f"{g} * {deriv}"
                self.contrib(an, ub(expr, sa, a_ub), reads_a, state, line, out)
            if bn:
                expr = f"pow_exponent_cotangent({g}, {sa}, {t})"
                self.contrib(bn, ub(expr, sb, b_ub), reads_a | {t}, state, line, out)
        elif op is gast.Mod:
            if an:
                self.contrib(an, ub(g, sa, a_ub), reads_a, state, line, out)
            if bn:
                expr = f"-{g} * ({sa} // {sb})"
                self.contrib(bn, ub(expr, sb, b_ub), reads_a, state, line, out)
        elif op is gast.MatMult:
            if an:
                expr = f"matmul_lhs_cotangent({g}, {sa}, {sb})"
                self.contrib(an, expr, reads_a, state, line, out)
            if bn:
                expr = f"matmul_rhs_cotangent({g}, {sa}, {sb})"
                self.contrib(bn, expr, reads_a, state, line, out)

    def reads_chain(self, name: str) -> str:
        if name not in self.chains:
            base = f"_reads_{name.lstrip('_')}" if not name.startswith("_t") else f"_reads{name}"
            self.chains[name] = self.internal(base)
        return self.chains[name]

    def rev_subscript(self, t, g, v, state, out, line):
        base = v.value
        if not isinstance(base, gast.Name) or not self.activity.is_active(base.id):
            return
        b = base.id
        if state.get(b) == "Z":  # the chain and the adjoint are consumed together
            out.append(Line(f"{self.adj(b)} = ZERO", src=line))
            state[b] = "M"
        chain = self.reads_chain(b)
        out.append(Line(f"{chain} = ({index_expr(v.slice)}, {g}, {chain})", src=line))

    def fold(self, name, out, line):
        """Fold the recorded index reads of ``name`` into its adjoint."""
        a = self.adj(name)
        current = self.alias.pop(name, a)
        self.write(name, out, line)
        chain = self.reads_chain(name)
        out.append(Line(f"{a} = fold_reads({current}, {name}, {chain})", src=line))
        out.append(Line(f"{chain} = None", src=line))

    def rev_call(self, s, t, g, v, state, out):
        line = s.lineno
        callee = v.pb_callee
        if callee.kind == "internal":  # as_sequence
            arg = v.args[0]
            if isinstance(arg, gast.Name):
                expr = f"sequence_cotangent({g}, {arg.id})"
                self.contrib(arg.id, expr, {arg.id}, state, line, out)
            return
        rule = self.registry.lookup(callee.obj) if callee.kind == "object" else None
        if self.inline_scalar(rule, v):
            self.rev_scalar_rule(t, g, v, rule, state, out, line)
            return
        if (
            rule is not None
            and id(s) not in self.pb_names
            and rule.pullback_fn_accepts(len(v.args), [k.arg for k in v.keywords])
        ):
            self.rev_direct_pullback(g, v, rule, state, out, line)
            return
        pb = self.pb_names[id(s)]
        if callee.kind == "object" and rule is None:
            # A user function: its pullback returns the cotangents of its active params.
            params = self.user_call_bindings(v)
            active = [(p, node) for p, node in params if self.is_active_arg(node)]
            self.rev_pullback_map(pb, g, active, state, out, line, v)
            return
        args = list(v.args)
        if callee.kind == "method":
            args = [v.func.value] + args
        trusted = rule.trusted if rule is not None else True
        name = rule.name if rule is not None else callee.name
        keywords = self.differentiated_keywords(rule, v)
        if keywords:
            self.rev_keyword_pullback_call(pb, g, args, keywords, state, out, line)
            return
        self.rev_pullback_call(pb, g, args, state, out, line, trusted=trusted, name=name)

    def differentiated_keywords(self, rule, v) -> list:
        """``[(keyword, name)]``: the active keyword arguments whose cotangents ``rule``
        returns (``rule.extra["keyword_cotangents"]``), in a dict after the positional ones."""
        declared = rule.extra.get("keyword_cotangents", ()) if rule is not None else ()
        return [
            (k.arg, k.value)
            for k in v.keywords
            if k.arg in declared and self.is_active_arg(k.value)
        ]

    def rev_keyword_pullback_call(self, pb, g, args, keywords, state, out, line):
        """A rule that differentiates keywords returns ``(*positional, {keyword: cot})``."""
        c = self.temp()
        out.append(Line(f"{c} = {pb}({g})", frozenset(), line))
        for k, a in enumerate(args):
            if self.is_active_arg(a):
                self.contrib(a.id, f"{c}[{k}]", (), state, line, out)
        for kw, node in keywords:
            self.contrib(node.id, f"dict_item({c}[{len(args)}], {kw!r})", (), state, line, out)

    def rev_direct_pullback(self, g, v, rule, state, out, line):
        """Call a rule's pullback function with the primal arguments (no closure)."""
        active = [(k, a) for k, a in enumerate(v.args) if self.is_active_arg(a)]
        if not active:
            return
        fname = getattr(rule.pullback_fn, "__name__", "pullback")
        pfn = self.bind(fname, rule.pullback_fn)
        parts = [g] + [src(a) for a in v.args] + [f"{k.arg}={src(k.value)}" for k in v.keywords]
        call = f"{pfn}({', '.join(parts)})"
        # A cotangent that is zero at run time never reaches the function.
        self.flush_aliases(out, line)
        inside = state.copy()
        body: list = []
        if len(active) == 1:
            k, a = active[0]
            self.contrib(a.id, f"{call}[{k}]", (), inside, line, body)
        else:
            c = self.temp()
            body.append(Line(f"{c} = {call}", src=line))
            for k, a in active:
                self.contrib(a.id, f"{c}[{k}]", (), inside, line, body)
        self.flush_aliases(body, line)
        skipped = state.copy()
        orelse: list = []
        self.merge_states(state, inside, body, skipped, orelse, line)
        out.append(Compound(f"if {g} is not ZERO:", body, orelse, src=line))

    def is_active_arg(self, node) -> bool:
        return isinstance(node, gast.Name) and self.activity.is_active(node.id)

    def rev_pullback_call(self, pb, g, args, state, out, line, trusted, name):
        active = [(k, a) for k, a in enumerate(args) if self.is_active_arg(a)]
        if not active:
            return
        call = f"{pb}({g})"
        if not trusted:
            checker = self.bind("check_cotangents", _runtime("check_cotangents"))
            arg_list = ", ".join(src(a) for a in args) + ("," if len(args) == 1 else "")
            call = f"{checker}({call}, ({arg_list}), {name!r})"
            reads = {a.id for a in args if isinstance(a, gast.Name)}
        else:
            reads = set()
        if len(active) == 1:
            k, a = active[0]
            self.contrib(a.id, f"{call}[{k}]", reads, state, line, out)
            return
        c = self.temp()
        out.append(Line(f"{c} = {call}", frozenset(reads), line))
        for k, a in active:
            self.contrib(a.id, f"{c}[{k}]", (), state, line, out)

    def rev_pullback_map(self, pb, g, active, state, out, line, v):
        if not active:
            return
        c = self.temp()
        # Where the code must be differentiable again, the callee's generated vjp function
        # (a plain function of the cotangent and the arguments) replaces the pullback.
        vjp = self.bind("vjp_" + v.pb_callee.obj.__name__, self.vjp_ref(v))
        call_args = ", ".join(
            [g] + [src(a) for a in v.args] + [f"{k.arg}={src(k.value)}" for k in v.keywords]
        )
        out.append(Line(f"{c} = {pb}({g})", frozenset(), line, alt=f"{c} = {vjp}({call_args})"))
        for k, (_, node) in enumerate(active):
            self.contrib(node.id, f"{c}[{k}]", (), state, line, out)

    def vjp_ref(self, v):
        from ..api import VJPRef

        active = tuple(p for p, node in self.user_call_bindings(v) if self.is_active_arg(node))
        return VJPRef(v.pb_callee.obj, active, self.registry)

    def rev_scalar_rule(self, t, g, v, rule, state, out, line):
        args = v.args
        arg_src = ", ".join(src(a) for a in args)
        reads = {a.id for a in args if isinstance(a, gast.Name)} | {t}
        fname = getattr(rule.fn, "__name__", "fn")
        form = inline_form(rule) if len(args) == 1 else None
        for k, a in enumerate(args):
            if not self.is_active_arg(a):
                continue
            if form is not None:
                self.ns.setdefault("_math", math)
                deriv = form.format(src(a), y=t)
                expr = f"{g} * {deriv}"
                self.contrib(a.id, expr, reads, state, line, out)
                continue
            d = rule.derivatives[k] if k < len(rule.derivatives) else None
            if d is None:
                continue
            dname = self.bind(f"d_{fname}" + (f"_{k}" if len(args) > 1 else ""), d)
            expr = f"{g} * {dname}({t}, {arg_src})"
            others = [o for j, o in enumerate(args) if j != k]
            if others and not all(self.same_shape(a, o, t) for o in others):
                expr = f"unbroadcast({expr}, {a.id})"
            self.contrib(a.id, expr, reads, state, line, out)

    def user_call_bindings(self, v):
        """``[(param name, argument node)]`` for a call of a user function."""
        import inspect

        fn = v.pb_callee.obj
        sig = inspect.signature(fn)
        try:
            bound = sig.bind(*v.args, **{k.arg: k.value for k in v.keywords})
        except TypeError:
            return []
        return list(bound.arguments.items())

    def rev_if(self, s, state) -> list:
        s_body = state.copy()
        s_else = state.copy()
        rb = self.rev_block(s.body, s_body)
        ro = self.rev_block(s.orelse, s_else)
        if not rb and not ro:
            return []
        self.merge_states(state, s_body, rb, s_else, ro, s.lineno)
        test = src(s.test)
        return [Compound(f"if {test}:", rb, ro, frozenset(names_in(s.test)), s.lineno)]

    def merge_states(self, state, s1, b1, s2, b2, line):
        for name in set(s1) | set(s2):
            z1 = s1.get(name) == "Z"
            z2 = s2.get(name) == "Z"
            if z1 and not z2:
                b1.append(Line(f"{self.adj(name)} = ZERO", src=line))
            elif z2 and not z1:
                b2.append(Line(f"{self.adj(name)} = ZERO", src=line))
            state[name] = "Z" if (z1 and z2) else "M"

    def rev_loop(self, s, state) -> list:
        info = s.pb_loop
        self.loop_stack.append(info)
        per_iteration = info.assigned - set(info.carried.values())
        # Inside the loop every adjoint that outlives an iteration is bound.
        body_state = State(lambda name: "Z" if name in per_iteration else "M")
        body = self.rev_block(s.body, body_state)
        self.loop_stack.pop()
        if not body:
            info.has_reverse = False
            return []
        info.has_reverse = True
        lid = self.loop_id(info)
        info.stack = self.internal(f"_stack{lid}")
        info.reverse_target = None
        if isinstance(s, gast.For) and not _breaks(s.body):
            # Every iteration runs to its end: the reverse loop walks the same range
            # backwards, so neither a count nor the loop variable needs saving.
            info.counter = self.internal(f"_range{lid}")
            info.reverse_target = s.target.id
            header = f"for {s.target.id} in reversed({info.counter}):"
        else:
            info.counter = self.internal(f"_count{lid}")
            header = f"for {self.loop_var} in range({info.counter}):"
        self.primal.add(info.counter)
        for outer in self.loop_stack:
            outer.assigned.add(info.counter)
        outliving = {name for name in _adjoints_touched(body, self) if name not in per_iteration}
        before: list = []
        for name in sorted(outliving):
            if state.get(name) == "Z":
                before.append(Line(f"{self.adj(name)} = ZERO", src=s.lineno))
            if body_state.get(name) == "Z":
                body.append(Line(f"{self.adj(name)} = ZERO", src=s.lineno))
            state[name] = "M"
        pop = Line("pass", src=s.lineno)  # filled in by finish_loops
        info.pop_line = pop
        # Index reads recorded by the previous reverse iteration are folded with the value
        # they read, before this iteration's snapshot replaces it (a carried array may
        # change shape from one iteration to the next: `w = w[k:]`).
        lead = 0
        while lead < len(body) and _is_fold_line(body[lead]):
            lead += 1
        loop = Compound(
            header,
            body[:lead] + [pop] + body[lead:],
            reads=frozenset({info.counter}),
            src=s.lineno,
            loop=info,
        )
        return before + [loop]

    # -- saved values -----------------------------------------------------------------
    def finish_loops(self, body) -> list[str]:
        """Decide each loop's snapshot and the values saved at the end of the forward."""
        needed_top = self._needs(body, None)
        saved = sorted(n for n in needed_top if n in self.primal)
        for info in self.loops:
            if getattr(info, "has_reverse", False) and info.parent is None:
                saved.append(info.counter)
        for info in self.loops:
            if getattr(info, "has_reverse", False) and (
                info.snapshot or info.reverse_target is None
            ):
                saved.append(info.stack)
        return list(dict.fromkeys(saved))

    def _needs(self, block, info) -> set[str]:
        reads = set(walk_reads(block, stop_at_loops=True))
        for item in _loops_in(block):
            reads |= self._needs(item.body, item.loop)
            reads |= item.reads
        if info is None:
            return reads
        invariant = self.loop_invariants(info)
        snap = sorted(
            n
            for n in reads
            if n in info.assigned
            and n in self.primal
            and n != info.reverse_target
            and n not in invariant
        )
        info.snapshot = snap
        pop = info.pop_line
        if len(snap) == 1:  # one value: no tuple around it
            pop.text = f"{snap[0]}, {info.stack} = {info.stack}"
        elif snap:
            pop.text = f"({', '.join(snap)}), {info.stack} = {info.stack}"
        elif info.reverse_target is not None:
            pop.text = ""  # nothing to restore: no stack at all
        else:
            pop.text = f"_, {info.stack} = {info.stack}"
        return {n for n in reads if n not in info.assigned or n in invariant}

    def loop_invariants(self, info) -> set[str]:
        """Names the loop assigns the same value in every iteration (one pure operation on
        values from outside the loop): the reverse sweep reads their final value instead of
        saving one per iteration."""
        assigns: dict[str, list] = {}
        for node in gast.walk(info.node):
            if isinstance(node, gast.Assign):
                assigns.setdefault(node.targets[0].id, []).append(node.value)
        candidates = {
            name: values[0]
            for name, values in assigns.items()
            if len(values) == 1
            and name not in info.carried.values()
            and isinstance(values[0], _PURE)
        }
        invariant: set[str] = set()
        changed = True
        while changed:
            changed = False
            for name, value in candidates.items():
                if name in invariant:
                    continue
                operands = set(names_in(value))
                if all(n not in info.assigned or n in invariant for n in operands):
                    invariant.add(name)
                    changed = True
        return invariant

    # -- forward ----------------------------------------------------------------------
    def fwd_block(self, stmts) -> list:
        out: list = []
        for s in stmts:
            out.extend(self.fwd_stmt(s))
        return out

    def fwd_stmt(self, s) -> list:
        if isinstance(s, gast.Assign):
            return [self.fwd_assign(s)]
        if isinstance(s, gast.If):
            return [
                Compound(
                    f"if {src(s.test)}:",
                    self.fwd_block(s.body),
                    self.fwd_block(s.orelse),
                    src=s.lineno,
                )
            ]
        if isinstance(s, (gast.For, gast.While)):
            info = s.pb_loop
            header = (
                f"for {s.target.id} in {src(s.iter)}:" if isinstance(s, gast.For) else "while True:"
            )
            body = self.fwd_block(s.body)
            if not getattr(info, "has_reverse", False):
                return [Compound(header, body, src=s.lineno)]
            if info.reverse_target is not None:
                # The range object itself is saved; the reverse loop walks it backwards.
                rng = info.counter
                return [
                    Line(f"{rng} = {src(s.iter)}", src=s.lineno),
                    Compound(f"for {s.target.id} in {rng}:", body, src=s.lineno),
                ]
            body.insert(0, Line(f"{info.counter} += 1", src=s.lineno))
            return [
                Line(f"{info.counter} = 0", src=s.lineno),
                Compound(header, body, src=s.lineno),
            ]
        if isinstance(s, SnapshotPoint):
            info = s.loop
            if not getattr(info, "has_reverse", False):
                return []
            snap = getattr(info, "snapshot", [])
            if not snap and info.reverse_target is not None:
                return []
            if not snap:
                return [Line(f"{info.stack} = (None, {info.stack})", src=s.lineno)]
            names = snap[0] if len(snap) == 1 else "(" + ", ".join(snap) + ")"
            return [Line(f"{info.stack} = ({names}, {info.stack})", src=s.lineno)]
        if isinstance(s, (gast.Break, gast.Continue)):
            return [Line(type(s).__name__.lower(), src=s.lineno)]
        if isinstance(s, gast.Pass):
            return []
        return [Line(src(s), src=getattr(s, "lineno", None))]

    def fwd_assign(self, s) -> Line:
        t = s.targets[0].id
        v = s.value
        pb = self.pb_names.get(id(s))
        if pb is None:
            return Line(f"{t} = {src(v)}", src=s.lineno)
        callee = v.pb_callee
        args = ", ".join([src(a) for a in v.args] + [f"{k.arg}={src(k.value)}" for k in v.keywords])
        if callee.kind == "object":
            rule = self.registry.lookup(callee.obj)
            if rule is not None:
                rr = self.bind("rrule_" + _short(rule.name), rule.rrule)
            else:
                active = tuple(
                    p for p, node in self.user_call_bindings(v) if self.is_active_arg(node)
                )
                fn = callee.obj
                self.calls_user_code = True
                rr = self.bind("adjoint_" + fn.__name__, self.adjoint_of(fn, active))
                plain = f"{t} = {src(v.func)}({args}); {pb} = None"
                return Line(f"{t}, {pb} = {rr}({args})", src=s.lineno, alt=plain)
            return Line(f"{t}, {pb} = {rr}({args})", src=s.lineno)
        if callee.kind == "method":
            cm = self.bind("call_method", _runtime("call_method"))
            rest = (", " + args) if args else ""
            site = self.bind("site", self.site(s))
            return Line(
                f"{t}, {pb} = {cm}({site}, {src(v.func.value)}, {callee.name!r}{rest})",
                src=s.lineno,
            )
        cf = self.bind("call_function", _runtime("call_function"))
        rest = (", " + args) if args else ""
        site = self.bind("site", self.site(s))
        return Line(f"{t}, {pb} = {cf}({site}, {src(v.func)}{rest})", src=s.lineno)

    def site(self, s):
        from ..runtime import CallSite

        filename, line, col = self.fs.location(s.value)
        self.calls_user_code = True  # a call resolved at run time may reach user code
        return CallSite(
            filename, line, col, self.fs.file_line(line), self.registry, self.adjoint_of
        )

    # -- which statements need a pullback ----------------------------------------------
    def plan_pullbacks(self):
        """Name the pullback of every active statement that calls through a rule."""
        for s in gast.walk(self.tree):
            if isinstance(s, gast.Expr):
                self.refuse_varied_attribute_store(s.value)
            if not isinstance(s, gast.Assign):
                continue
            t = s.targets[0].id
            v = s.value
            needs = False
            if (
                isinstance(v, gast.Attribute)
                and not getattr(v, "pb_constant", False)
                and isinstance(v.value, gast.Name)
                and v.value.id in self.activity.varied
                and not self.declared_attribute(v)
            ):
                self.refuse_attribute(v)
            if not self.activity.is_active(t):
                continue
            if isinstance(v, gast.Call):
                callee = v.pb_callee
                if callee.kind == "internal":
                    needs = False
                elif callee.kind == "object":
                    rule = self.registry.lookup(callee.obj)
                    if rule is None and callee.name.endswith(".__getitem__") and not (
                        _has_source(callee.obj)
                    ):
                        self.problems.append(
                            no_rule_for_varied_call(self.diagnostic, v, callee.name)
                        )
                    needs = not self.inline_scalar(rule, v)
                    if (
                        needs
                        and rule is not None
                        and rule.pullback_fn_accepts(len(v.args), [k.arg for k in v.keywords])
                    ):
                        needs = False  # its pullback is a plain function, called directly
                    if rule is not None and rule.kind == RULE:
                        self.check_keywords(v, rule)
                else:
                    needs = True
            if needs:
                name = self.internal(f"_pb_{t.lstrip('_')}")
                self.pb_names[id(s)] = name
                self.primal.add(name)
                for info in self.loops_containing(s):
                    info.assigned.add(name)

    def refuse_varied_attribute_store(self, call):
        target = getattr(call, "pb_attribute_store", None)
        if target is None:
            return
        value = call.args[2]
        if isinstance(value, gast.Name) and value.id in self.activity.varied:
            obj = gast.unparse(target.value).strip()
            self.problems.append(varied_attribute_store(self.diagnostic, target, obj, target.attr))

    def check_keywords(self, v, rule):
        declared = rule.extra.get("keyword_cotangents", ())
        for k in v.keywords:
            if k.arg in declared:
                continue
            if isinstance(k.value, gast.Name) and k.value.id in self.activity.varied:
                self.problems.append(
                    varied_keyword(self.diagnostic, k.value, k.arg, v.pb_callee.name)
                )

    def declared_attribute(self, v) -> bool:
        """Whether ``v`` (``obj.attr``) reads an attribute that every rule defining ``obj``
        declares differentiable (``rule.extra["result_attributes"]``, e.g. ``sol.y`` of
        ``solve_ivp``)."""
        calls = [
            s.value
            for s in gast.walk(self.tree)
            if isinstance(s, gast.Assign) and s.targets[0].id == v.value.id
        ]
        for c in calls:
            callee = getattr(c, "pb_callee", None) if isinstance(c, gast.Call) else None
            rule = self.registry.lookup(callee.obj) if callee and callee.kind == "object" else None
            if rule is None or v.attr not in rule.extra.get("result_attributes", ()):
                return False
        return bool(calls)

    def loops_containing(self, stmt):
        found = []

        def visit(block, stack):
            for s in block:
                if s is stmt:
                    found.extend(stack)
                    return True
                if isinstance(s, (gast.For, gast.While)):
                    if visit(s.body, stack + [s.pb_loop]):
                        return True
                elif isinstance(s, gast.If):
                    if visit(s.body, stack) or visit(s.orelse, stack):
                        return True
            return False

        visit(self.tree.body, [])
        return found


class State(dict):
    """Static state of each adjoint: "Z" (symbolically zero, unbound) or "M" (bound,
    maybe zero at run time). Names not set explicitly take ``fallback(name)``."""

    def __init__(self, fallback=None):
        super().__init__()
        self.fallback = fallback or (lambda name: "Z")

    def get(self, name, default=None):
        if name in self:
            return self[name]
        return self.fallback(name)

    def copy(self):
        new = State(self.fallback)
        new.update(self)
        return new


def _adjoints_touched(block, builder) -> set[str]:
    """Primal names whose adjoints a reverse block reads or writes."""
    prefix = builder.prefix
    names = set()

    def visit(items):
        for item in items:
            text = item.text if isinstance(item, Line) else item.header
            for token in identifiers(text):
                if token.startswith(prefix) or token.startswith("_reads"):
                    names.add(token)
            if isinstance(item, Compound):
                visit(item.body)
                visit(item.orelse)

    visit(block)
    out = set()
    for primal in builder.primal:
        if builder.adj(primal) in names:
            out.add(primal)
    # Index reads recorded in a chain count as touching the array's adjoint.
    for primal in builder.subscript_bases:
        if builder.reads_chain(primal) in names:
            out.add(primal)
    return out


_COPY = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*) = ([A-Za-z_][A-Za-z0-9_]*)$")


def _assigned_name(item):
    if isinstance(item, Line) and " = " in item.text:
        target = item.text.split(" = ", 1)[0]
        if _IDENTIFIER.fullmatch(target):
            return target
    return None


def _count_mentions(items, name) -> int:
    pattern = re.compile(rf"\b{re.escape(name)}\b")
    total = 0
    for item in items:
        if isinstance(item, Line):
            total += len(pattern.findall(item.text))
            total += len(pattern.findall(item.alt)) if item.alt else 0
        else:
            total += len(pattern.findall(item.header))
            total += _count_mentions(item.body, name) + _count_mentions(item.orelse, name)
    return total


def _drop_copy_pairs(block, prefix, whole=None):
    """Remove ``x = y ... y = x`` between two adjoints when nothing in between writes
    either and ``x`` appears nowhere else in the reverse sweep: the code in between reads
    ``y`` instead."""
    whole = block if whole is None else whole
    for item in block:
        if isinstance(item, Compound):
            _drop_copy_pairs(item.body, prefix, whole)
            _drop_copy_pairs(item.orelse, prefix, whole)
    i = 0
    while i < len(block):
        item = block[i]
        m = _COPY.match(item.text) if isinstance(item, Line) else None
        if m and m.group(1).startswith(prefix) and m.group(2).startswith(prefix):
            x, y = m.group(1), m.group(2)
            for j in range(i + 1, len(block)):
                other = block[j]
                if not isinstance(other, Line):
                    break
                if other.text == f"{y} = {x}":
                    if _count_mentions(whole, x) == _count_mentions(block[i : j + 1], x):
                        pattern = re.compile(rf"\b{re.escape(x)}\b")
                        for k in range(i + 1, j):
                            block[k].text = pattern.sub(y, block[k].text)
                            if block[k].alt:
                                block[k].alt = pattern.sub(y, block[k].alt)
                        del block[j]
                        del block[i]
                        i -= 1
                    break
                if _assigned_name(other) in (x, y):
                    break
        i += 1


def _has_source(obj) -> bool:
    """Whether a callee is a Python function pullback can transform (else it needs a rule)."""
    return isinstance(transform_target(obj), types.FunctionType)


def _is_fold_line(item) -> bool:
    return isinstance(item, Line) and (
        "= fold_reads(" in item.text
        or (item.text.startswith("_reads") and item.text.endswith("= None"))
    )


def _breaks(stmts) -> bool:
    """Whether a loop body may leave its loop early (not counting nested loops)."""
    for s in stmts:
        if isinstance(s, gast.Break):
            return True
        if isinstance(s, gast.If) and (_breaks(s.body) or _breaks(s.orelse)):
            return True
    return False


def _loops_in(block):
    for item in block:
        if isinstance(item, Compound):
            if item.loop is not None:
                yield item
            else:
                yield from _loops_in(item.body)
                yield from _loops_in(item.orelse)


def _short(name: str) -> str:
    return name.replace("numpy.", "").replace(".", "_")


def _runtime(name):
    from .. import runtime

    return getattr(runtime, name)


def _pos(d):
    return (d.filename, d.line, d.col)


_MISSING = object()
# Operations without side effects whose result depends only on their operands.
_PURE = (gast.BinOp, gast.UnaryOp, gast.Compare, gast.Name, gast.Constant, gast.Subscript)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

__all__ = ["ReverseBuilder"]
