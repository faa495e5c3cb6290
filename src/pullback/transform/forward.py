"""Forward mode: a source transformation that carries a tangent beside every varied value.

For ``def f(x): y = np.sin(x) * x; return y`` the generated function reads::

    def f__jvp(x, t_x):
        _t1 = np.sin(x)
        t__t1 = t_x * _np.cos(x)
        y = _t1 * x
        t_y = t__t1 * x + _t1 * t_x
        return y, t_y

It runs on the normalized function (same control flow, same flags), so branches and loops
cost what they cost in the primal. Tangents that are zero are the symbolic ``ZERO``.

Calls: elementwise rules use their derivatives; linear NumPy functions are applied to the
tangent; bilinear products use the product rule; a rule with a transformable pullback gets
its Jacobian-vector product by transposing that pullback (reverse mode on the pullback
function, exact); any other rule by pulling back one basis cotangent per output element
(exact, for small outputs); user functions get their own forward transformation.
"""

from __future__ import annotations

import itertools
import math

import gast

from .. import containers, dynamic_calls, list_operands, rule_tangents, runtime
from ..call_sites import site_place
from ..dynamic_attrs import attribute_tangent
from ..errors import UnsupportedSyntaxError
from ..guards import WorldGuard
from ..registry import NONDIFF, SCALAR
from ..tangents import both_tangent, broadcast_tangent, plus_tangent, sum_tangent
from ..tree_walk import lean_nodes, walk
from .analyze import analyze
from .code import Compound, Line, render
from .dunder_operators import dispatch_operators, dispatches_operators
from .escape_sites import EscapeSites
from .inline import inline_form
from .integer_dtypes import guard_tangent, rule_dtype
from .kinds import SCALAR as SCALAR_KIND
from .kinds import is_real
from .linear_calls import BILINEAR, LINEAR_IN_LIST, _linear, _member, _offset_given
from .loop_jumps import LoopEnd
from .pipeline import accepting_user_keywords, collector_paused, prepare
from .problems import (
    RUN_TIME_CALL,
    call_varied_values_through_call_method,
    calls_and_sets,
    foreign_varied_calls,
    varied_function_values,
    varied_keyword,
    varied_random_draws,
    varied_sets,
)
from .reverse_exprs import smooth_exponent, zero_safe
from .ssa import SnapshotPoint
from .star_calls import star_tangent_head
from .with_blocks import WithBlock
from .with_blocks import compound as with_compound

# The tangent of ``t = a op b``: the term for a's tangent, and the term for b's.
TANGENT_TERMS = {
    gast.Mult: ("{da} * {sb}", "{db} * {sa}"),  # the tangent first (see reverse_exprs)
    gast.Div: ("{da} / {sb}", "-{t} * {db} / {sb}"),
    gast.Pow: ("{da} * pow_base_derivative({sa}, {sb})", "pow_exponent_cotangent({db}, {sa}, {t})"),
    gast.Mod: ("{da}", "-{db} * ({sa} // {sb})"),
    gast.MatMult: ("{da} @ {sb}", "{sa} @ {db}"),
}

# The same where the derivative may be infinite (1 / b at b = 0): a zero tangent gives 0.
SINGULAR_DIV = (
    "zero_safe_product({da}, 1.0 / {sb})",
    "zero_safe_product(-{db}, {t} / {sb})",
)
SINGULAR_POW_BASE = "zero_safe_product({da}, pow_base_derivative({sa}, {sb}))"


def _times(tangent: str, derivative: str) -> str:
    return f"{tangent} * {derivative}"


class ForwardBuilder(EscapeSites):
    def __init__(self, fs, norm, activity, kinds, registry, wrt, jvp_of, diagnostic):
        self.fs = fs
        self.norm = norm
        self.tree = norm.tree
        self.ns = norm.namespace
        self.varied = activity.varied
        self.kinds = kinds
        self.registry = registry
        self.wrt = wrt
        self.jvp_of = jvp_of
        self.diagnostic = diagnostic
        self.problems: list = []
        self.counter = itertools.count(1)
        names = set(norm.params)
        for n in walk(self.tree):
            if isinstance(n, gast.Name):
                names.add(n.id)
            elif isinstance(n, gast.For):
                names.add(n.target.id)
        self.taken = names | set(self.ns)
        self.prefix = next(
            p for p in ("t_", "_t_", "__t_") if not any(n.startswith(p) for n in names)
        )

    def varied_names(self) -> set:
        return self.varied

    # -- names -------------------------------------------------------------------------
    def tan(self, node) -> str:
        """The tangent of an atom: its tangent variable, or ZERO."""
        if isinstance(node, gast.Name) and node.id in self.varied:
            return self.prefix + node.id
        return "ZERO"

    def fresh(self, base):
        while True:
            name = f"{base}{next(self.counter)}"
            if name not in self.taken:
                self.taken.add(name)
                return name

    def bind(self, hint, value):
        base = "_" + "".join(ch if ch.isalnum() else "_" for ch in hint)
        for k in itertools.count():
            name = base if k == 0 else f"{base}{k}"
            if name in self.taken and self.ns.get(name, None) is not value:
                continue
            self.ns[name] = value
            self.taken.add(name)
            return name
        raise AssertionError("unreachable")  # pragma: no cover

    # -- statements --------------------------------------------------------------------
    def build(self):
        varied = self.varied.__contains__
        nodes = calls_and_sets(lean_nodes(self.tree))  # one walk for the five checks
        call_varied_values_through_call_method(self.tree, varied, nodes)
        self.problems += varied_function_values(self.tree, varied, self.diagnostic, nodes)
        self.problems += varied_sets(self.tree, varied, self.diagnostic, nodes)
        self.problems += varied_random_draws(
            self.tree, varied, self.registry, self.diagnostic, nodes
        )
        self.problems += foreign_varied_calls(
            self.tree, varied, varied, self.registry, self.diagnostic, nodes
        )
        self.route_escapes()  # values kept outside, and reads from outside (escapes.py)
        body = []
        tangents = sorted({self.prefix + n for n in self.varied if n not in self.wrt})
        if tangents:
            body.append(Line(" = ".join(tangents) + " = ZERO"))
        body.extend(self.block(self.tree.body))
        if self.problems:
            raise UnsupportedSyntaxError(self.fs.name, self.problems)
        return body

    def block(self, stmts):
        out = []
        for s in stmts:
            out.extend(self.stmt(s))
        return out

    def stmt(self, s):
        line = getattr(s, "lineno", None)
        if isinstance(s, gast.Assign):
            return self.assign(s)
        if isinstance(s, gast.If):
            return [
                Compound(f"if {src(s.test)}:", self.block(s.body), self.block(s.orelse), src=line)
            ]
        if isinstance(s, gast.For):
            return [Compound(f"for {s.target.id} in {src(s.iter)}:", self.block(s.body), src=line)]
        if isinstance(s, gast.While):
            return [Compound("while True:", self.block(s.body), src=line)]
        if isinstance(s, WithBlock):  # primal and tangents under the same error modes
            return with_compound(s, self.block(s.body), line)
        if isinstance(s, gast.Return):
            value = s.value
            return [Line(f"return {src(value)}, {self.tan(value)}", src=line)]
        if isinstance(s, (LoopEnd, SnapshotPoint, gast.Pass)):
            return []
        if isinstance(s, (gast.Break, gast.Continue)):
            return [Line(type(s).__name__.lower(), src=line)]
        return [Line(src(s), src=line)]

    def assign(self, s):
        t = s.targets[0].id
        v = s.value
        line = s.lineno
        if t not in self.varied:
            return [Line(f"{t} = {src(v)}", src=line)]
        tangent = self.tangent(t, v, [])
        if isinstance(tangent, Combined):  # the value and its tangent come together
            lines = [Line(f"{t}, {self.prefix}{t} = {tangent.expr}", src=line)]
        else:
            lines = [
                Line(f"{t} = {src(v)}", src=line),
                Line(f"{self.prefix}{t} = {tangent}", src=line),
            ]
        dtype = rule_dtype(self, v) if v.__class__ is gast.Call else None
        if dtype is not None:  # a zero tangent where it makes integer results
            return guard_tangent(self, t, v, dtype, lines, line)
        return lines

    def tangent(self, t, v, out) -> str:
        if isinstance(v, gast.Name):
            return self.tan(v)
        if isinstance(v, gast.Constant):
            return "ZERO"
        if isinstance(v, gast.BinOp):
            return self.binop(t, v)
        if isinstance(v, gast.UnaryOp):
            if isinstance(v.op, gast.USub):
                return f"-{self.tan(v.operand)}"
            if isinstance(v.op, gast.UAdd):
                return self.tan(v.operand)
            return "ZERO"
        if isinstance(v, gast.Subscript):
            if isinstance(v.value, gast.Name) and v.value.id in self.varied:
                read = gast.Subscript(
                    value=gast.Name(self.tan(v.value), gast.Load(), None, None),
                    slice=v.slice,
                    ctx=gast.Load(),
                )
                return f"{src(read)} if {self.tan(v.value)} is not ZERO else ZERO"
            return "ZERO"
        if isinstance(v, (gast.Tuple, gast.List)):
            items = ", ".join(self.tan(e) for e in v.elts)
            if isinstance(v, gast.Tuple):
                return f"({items}{',' if len(v.elts) == 1 else ''})"
            return f"[{items}]"
        if isinstance(v, gast.Dict):
            items = ", ".join(
                f"{src(k)}: {self.tan(e)}" for k, e in zip(v.keys, v.values, strict=True)
            )
            return "{" + items + "}"
        if isinstance(v, gast.Call):
            return self.call(t, v, out)
        if isinstance(v, gast.Attribute):
            if (
                not getattr(v, "pb_constant", False)
                and isinstance(v.value, gast.Name)
                and (v.value.id in self.varied)
            ):
                # a field of a named tuple (records.py) or a record's method (its bound
                # method: dynamic_attrs.py), refused there for anything else
                fn = self.bind("attribute_tangent", attribute_tangent)
                where = self.fs.where(v)
                return f"{fn}({self.tan(v.value)}, {v.value.id}, {v.attr!r}, {where!r})"
            return "ZERO"
        return "ZERO"

    def internal_tangent(self, name, args) -> str:
        """Tangents of the normalizer's own calls (see transform/comprehensions.py); the
        primal statement has run already."""
        if name == "as_sequence":
            f = self.bind("sequence_tangent", runtime.sequence_tangent)
            return f"{f}({self.tan(args[0])}, {src(args[0])})"
        container, *key, value = args
        if name == "dict_set":
            f = self.bind("dict_set_tangent", containers.dict_set_tangent)
            return f"{f}({self.tan(container)}, {src(container)}, {src(key[0])}, {self.tan(value)})"
        helper = containers.append_tangent if name == "list_append" else containers.appended_tangent
        f = self.bind(helper.__name__, helper)
        return f"{f}({self.tan(container)}, {src(container)}, {self.tan(value)})"

    def varied_atom(self, node) -> bool:
        return isinstance(node, gast.Name) and node.id in self.varied

    def keeps_shape(self, other) -> bool:
        """Whether adding the constant operand ``other`` keeps the varied operand's shape."""
        if isinstance(other, gast.Constant):
            return not isinstance(other.value, (tuple, list))
        return isinstance(other, gast.Name) and self.kinds.get(other.id) == SCALAR_KIND

    def known_real(self, node) -> bool:
        """Whether the kinds prove ``node`` a number or a real array."""
        return isinstance(node, gast.Name) and is_real(self.kinds.get(node.id))

    def binop(self, t, v):
        a, b = v.left, v.right
        sa, sb = src(a), src(b)
        da, db = self.tan(a), self.tan(b)
        va, vb = self.varied_atom(a), self.varied_atom(b)
        op = type(v.op)
        if op is gast.Add or op is gast.Sub:
            if va and vb:
                if op is gast.Sub or (self.known_real(a) and self.known_real(b)):
                    both = f"{da} {'-' if op is gast.Sub else '+'} {db}"
                    if self.keeps_shape(a) and self.keeps_shape(b):
                        return both
                    # either tangent may still be ZERO when the line runs (a loop's
                    # `y = z[k] - H @ x` while x's tangent is ZERO): the other one alone
                    # has its operand's shape, not the broadcast result's
                    fn = self.bind("both_tangent", both_tangent)
                    return f"{fn}({da}, {db}, {t}, {op is gast.Sub})"
                # lists concatenate their tangents; a class's own __add__ is refused
                return f"{self.bind('sum_tangent', sum_tangent)}({da}, {sa}, {db}, {sb}, {t})"
            if not (va or vb):
                return "ZERO"
            one = da if va else (db if op is gast.Add else f"-{db}")
            if self.keeps_shape(b if va else a):
                return one
            if op is gast.Add:  # `buf[:1] + [x]` of lists too: plus_tangent places it
                plus = self.bind("plus_tangent", plus_tangent)
                return f"{plus}({da if va else 'ZERO'}, {sa}, {db if vb else 'ZERO'}, {sb}, {t})"
            # `data - mu` with a varied scalar mu: the tangent has the result's shape
            return f"{self.bind('broadcast_tangent', broadcast_tangent)}({one}, {t})"
        if op not in TANGENT_TERMS:
            return "ZERO"  # //, bit operations: no derivative
        left, right = TANGENT_TERMS[op]
        if op is gast.Div and not (isinstance(b, gast.Constant) and b.value != 0):
            left, right = SINGULAR_DIV  # a denominator that may be 0 (zero_safe.py)
        elif op is gast.Pow and not smooth_exponent(b):
            left = SINGULAR_POW_BASE  # a ** 0.5, a ** -1, a ** b: infinite at a = 0
        fill = {"da": da, "db": db, "sa": sa, "sb": sb, "t": t}
        terms = [left.format(**fill)] if va else []
        terms += [right.format(**fill)] if vb else []
        return " + ".join(terms) if terms else "ZERO"

    def call(self, t, v, out) -> str:
        callee = getattr(v, "pb_callee", None)
        kind = callee.kind if callee is not None else "dynamic"
        args = v.args
        varied_args = [a for a in args if self.varied_atom(a)]
        if kind == "internal":
            return self.internal_tangent(callee.name, args)
        if kind == "object":
            fn = callee.obj
            rule = self.registry.lookup(fn)
            if rule is not None and rule.kind == NONDIFF:
                return "ZERO"
            if not varied_args and not any(self.varied_atom(k.value) for k in v.keywords):
                return "ZERO"
            if rule is not None and rule.kind == SCALAR and not v.keywords:
                return self.scalar_rule(t, v, rule)
            linear_in_first = varied_args == args[:1] and not _offset_given(fn, v)
            if rule is not None and linear_in_first and _linear(fn):
                f = self.bind(getattr(fn, "__name__", "linear"), fn)
                d = self.tan(args[0])
                dense = self.dense_tangent(args[0]) if _numpy(fn) else d
                return f"{f}({self.with_other_args(dense, v)}) if {d} is not ZERO else ZERO"
            if rule is not None and linear_in_first and _member(fn, LINEAR_IN_LIST):
                f = self.bind(getattr(fn, "__name__", "linear"), fn)
                d = f"list_tangent({self.tan(args[0])}, {src(args[0])})"
                return f"{f}({self.with_other_args(d, v)})"
            if rule is not None and _member(fn, BILINEAR) and len(args) == 2 and not v.keywords:
                f = self.bind(getattr(fn, "__name__", "bilinear"), fn)
                terms = []
                # A varied name's tangent may still be ZERO when the line runs (a loop's
                # `h = np.dot(W, h)` on its first pass), and np.dot(W, ZERO) would take
                # ZERO for a scalar: a term with a ZERO tangent is ZERO.
                a, b = args
                if self.varied_atom(a):
                    da, dense = self.tan(a), self.dense_tangent(a)
                    terms.append(f"({f}({dense}, {src(b)}) if {da} is not ZERO else ZERO)")
                if self.varied_atom(b):
                    db, dense = self.tan(b), self.dense_tangent(b)
                    terms.append(f"({f}({src(a)}, {dense}) if {db} is not ZERO else ZERO)")
                return " + ".join(terms)
            if rule is not None:
                r = self.bind("rule_" + (getattr(fn, "__name__", None) or "fn"), rule)
                return self.through_rule(t, v, f"rule_tangent({r}, ", rule)
            # a user function: its own forward transformation
            jvp = self.bind("jvp_" + fn.__name__, self.jvp_of(fn))
            return self.through_user(t, v, jvp)
        # calls known only at run time
        site = self.bind("site", None)
        self.ns[site] = self.call_site(v)
        if kind == "star":  # f(*xs, **opts): transform/star_calls.py
            return self.through_dynamic(t, v, star_tangent_head(self, v, site))
        if kind == "method":
            receiver = v.func.value
            return self.through_dynamic(
                t,
                v,
                f"method_tangent({site}, {src(receiver)}, {self.tan(receiver)}, {callee.name!r}, ",
            )
        return self.through_dynamic(t, v, f"function_tangent({site}, {src(v.func)}, ")

    def with_other_args(self, first, v) -> str:
        """``first`` followed by the call's other arguments, as written."""
        rest = [src(a) for a in v.args[1:]] + [f"{k.arg}={src(k.value)}" for k in v.keywords]
        return ", ".join([first] + rest)

    def call_site(self, v):
        filename, line, col, text = site_place(self.fs, v)
        return dynamic_calls.CallSite(filename, line, col, text, self.registry, self.jvp_of)

    def arg_lists(self, v):
        primals = ", ".join(src(a) for a in v.args)
        tangents = ", ".join(self.tan(a) for a in v.args)
        p = f"({primals}{',' if len(v.args) == 1 else ''})"
        d = f"({tangents}{',' if len(v.args) == 1 else ''})"
        kw = "{" + ", ".join(f"{k.arg!r}: {src(k.value)}" for k in v.keywords) + "}"
        return p, d, kw

    def keyword_tangents(self, v):
        pairs = [f"{k.arg!r}: {self.tan(k.value)}" for k in v.keywords if self.varied_atom(k.value)]
        return "{" + ", ".join(pairs) + "}"

    def refuse_varied_keywords(self, v, what):
        for k in v.keywords:
            if self.varied_atom(k.value):
                self.problems.append(varied_keyword(self.diagnostic, k.value, k.arg, what))

    def through_rule(self, t, v, head, rule=None):
        # keywords the rule differentiates (rule.extra["keyword_cotangents"]) pass their
        # tangents on; any other varied keyword would get none: refused
        declared = rule.extra.get("keyword_cotangents", ()) if rule is not None else ()
        moving = [k for k in v.keywords if k.arg in declared and self.varied_atom(k.value)]
        callee = getattr(v, "pb_callee", None)
        fn = getattr(callee, "obj", None)
        what = getattr(callee, "name", None) or "a rule"
        aliases = rule.extra.get("keyword_aliases") if rule is not None else None
        for k in v.keywords:
            if k.arg not in declared and self.varied_atom(k.value):
                problem = varied_keyword(self.diagnostic, k.value, k.arg, what, fn, aliases)
                self.problems.append(problem)
        p, d, kw = self.arg_lists(v)
        if not moving:
            return Combined(f"{head}{p}, {d}, {kw})")
        pairs = ", ".join(f"{k.arg!r}: {self.tan(k.value)}" for k in moving)
        return Combined(f"{head}{p}, {d}, {kw}, {{{pairs}}})")

    def through_dynamic(self, t, v, head):
        self.refuse_varied_keywords(v, RUN_TIME_CALL)
        p, d, kw = self.arg_lists(v)
        return Combined(f"{head}{p}, {d}, {kw})")

    def through_user(self, t, v, jvp):
        p, d, kw = self.arg_lists(v)
        return Combined(f"{jvp}({p}, {d}, {kw}, {self.keyword_tangents(v)})")

    def scalar_rule(self, t, v, rule):
        args = v.args
        real = all(
            is_real(self.kinds.get(a.id)) if isinstance(a, gast.Name) else True for a in args
        )
        if not real and not rule.extra.get("holomorphic", True):
            r = self.bind("rule_" + getattr(rule.fn, "__name__", "fn"), rule)
            return self.through_rule(t, v, f"rule_tangent({r}, ")
        form = inline_form(rule) if len(args) == 1 else None
        terms = []
        operands = [self.dense_operand(a) for a in args]
        arg_src = ", ".join(operands)
        # a derivative that may be infinite (sqrt's at 0): a zero tangent gives 0 there
        product = zero_safe if rule.extra.get("singular", False) else _times
        for k, a in enumerate(args):
            if not self.varied_atom(a):
                continue
            if form is not None:
                self.ns.setdefault("_math", math)
                terms.append(product(self.dense_tangent(a), form.format(operands[k], y=t)))
                continue
            d = rule.derivatives[k] if k < len(rule.derivatives) else None
            if d is None:
                continue
            dname = self.bind(f"d_{getattr(rule.fn, '__name__', 'fn')}_{k}", d)
            terms.append(product(self.dense_tangent(a), f"{dname}({t}, {arg_src})"))
        return " + ".join(terms) if terms else "ZERO"

    # A NumPy function takes a list as np.asarray of it; the formulas written here apply
    # Python's operators to the value and its tangent (a list, ZERO where an entry has
    # none), which on a list fail or repeat it. Where the kinds do not prove an operand a
    # number or an array, it and its tangent go through list_operands first (a number or an
    # array passes unchanged, at the cost of a call).

    def dense_operand(self, node) -> str:
        if not isinstance(node, gast.Name) or self.known_real(node):
            return src(node)
        return f"{self.bind('dense_operand', list_operands.dense_operand)}({src(node)})"

    def dense_tangent(self, node) -> str:
        if not isinstance(node, gast.Name) or self.known_real(node):
            return self.tan(node)
        f = self.bind("dense_tangent", list_operands.dense_tangent)
        return f"{f}({self.tan(node)}, {src(node)})"


def _numpy(fn) -> bool:
    """Whether ``fn`` is NumPy's (which takes a list as an array), not one of pullback's."""
    return (getattr(fn, "__module__", None) or "").split(".")[0] == "numpy"


class Combined:
    """A call that gives the value and its tangent together: ``t, t_t = expr``."""

    def __init__(self, expr):
        self.expr = expr


def src(node) -> str:
    return gast.unparse(node).strip()


def build_jvp(fn, wrt, registry, jvp_of, kinds_key=None):
    """Generate ``fn__jvp(*params, *tangents_of_wrt) -> (value, tangent)``."""
    with collector_paused():  # (pipeline.py: the passes free nothing a collection finds)
        return _build_jvp(fn, wrt, registry, jvp_of, kinds_key)


def _build_jvp(fn, wrt, registry, jvp_of, kinds_key):
    prepared = prepare(fn, wrt, registry, kinds_key)
    fs, norm, wrt = prepared.fs, prepared.norm, prepared.wrt
    activity, kinds, diagnostic = prepared.activity, prepared.kinds, prepared.diagnostic
    varied = activity.varied.__contains__
    objects = prepared.params if kinds_key else ()  # `a + b` of an object
    if families := dispatches_operators(fn, fs):
        if dispatch_operators(norm.tree, kinds, varied, objects, families, varied):
            activity = analyze(norm.tree, list(wrt), registry)  # (a float key: an argument)
    builder = ForwardBuilder(fs, norm, activity, kinds, registry, wrt, jvp_of, diagnostic)
    body = builder.build()
    # names this pass's loop copies read before the user's code binds them (ssa.py)
    unbound = sorted({n for info in prepared.loops for n in info.unbound_at_entry})
    if unbound:
        body.insert(0, Line(" = ".join(unbound) + " = None"))
    name = fs.name if not fs.is_lambda else "lambda"
    from .codegen import _signature, forget_with, remember_source, runtime_namespace  # noqa: I001

    tangent_params = [builder.prefix + p for p in wrt]
    signature = _signature(fs.tree)
    parts = signature.split(", ") if signature else []
    starstar = [p for p in parts if p.startswith("**")]  # **kwargs stays last
    parts = [p for p in parts if not p.startswith("**")]
    if tangent_params:
        if not any(p.startswith("*") for p in parts):
            parts.append("*")
        parts.extend(tangent_params)
    parts += starstar
    header = f"def {name}__jvp({', '.join(parts)}):"
    import os

    base = os.path.basename(fs.filename)

    def src_text(line):
        line = fs.first_line + line - 1
        return f"{base}:{line}: {fs.file_line(line).strip()}"

    out: list[str] = [header]
    line_map: list = [1]
    render(body, 1, src_text, out, line_map)
    source = "\n".join(out) + "\n"
    line_map = [None if k is None else fs.first_line + k - 1 for k in line_map]
    filename = f"<pullback jvp of {name} at {base}:{fs.first_line}>"
    remember_source(filename, source)
    namespace = runtime_namespace()
    namespace.update(
        rule_tangent=rule_tangents.rule_tangent,
        list_tangent=runtime.list_tangent,
        function_tangent=rule_tangents.function_tangent,
        method_tangent=rule_tangents.method_tangent,
    )
    namespace.update(norm.namespace)
    namespace["__pullback_line_map__"] = line_map
    namespace["__pullback_source__"] = fs
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - generated code
    jvp_fn = namespace[f"{name}__jvp"]
    jvp_fn.__defaults__ = fs.fn.__defaults__
    jvp_fn.__kwdefaults__ = dict(fs.user_kwdefaults() or {})
    forget_with(jvp_fn, filename)
    jvp_fn = accepting_user_keywords(jvp_fn, prepared.renames)
    return JVP(fn, wrt, jvp_fn, source, tangent_params, WorldGuard.from_source(fs, norm.live))


class JVP:
    """A generated forward-mode function: ``jvp_fn(*args, **kwargs, t_<p>=...)``."""

    def __init__(self, fn, wrt, jvp_fn, source, tangent_params, guard):
        self.fn = fn
        self.wrt = wrt
        self.jvp_fn = jvp_fn
        self.source = source
        self.tangent_params = tangent_params
        self.guard = guard  # () -> bool, see pullback.guards

    def __call__(self, args, tangents, kwargs=None):
        params = self.tangent_params
        if not kwargs and len(params) == 1 == len(tangents):
            # one tangent, no keywords (a Jacobian's forward sweep): its one keyword
            # without the zip and dict of the general case
            return self.jvp_fn(*args, **{params[0]: tangents[0]})
        kw = dict(zip(params, tangents, strict=True))
        if kwargs:
            kw = {**kwargs, **kw}
        return self.jvp_fn(*args, **kw)


__all__ = ["build_jvp", "JVP"]
