"""Adjoints of calls: rules, inlined elementwise rules, user functions, run-time callees.

A call through a rule keeps its pullback (or calls the rule's plain pullback function
directly); a user function's call uses that function's own generated adjoint (built
lazily, so recursion works); a call whose callee is a run-time value goes through
:func:`pullback.dynamic_calls.call_function` / ``call_method``.
"""

from __future__ import annotations

import math

import gast

from .. import containers, dynamic_calls, dynamic_vjps, scalar_vjps
from ..arguments import code_signature
from ..call_sites import site_place
from ..called_objects import refuse_hidden_records, takes_callables
from ..operator_dispatch import INPLACE, expression, is_operator_name
from ..registry import ENTRY_POINTS, SCALAR
from ..runtime import closure_cotangents, parameter_places
from ..scalar_vjps import elementwise_vjp
from .code import Compound, Line
from .inline import inline_form
from .inplace_calls import numpy_array_method
from .integer_dtypes import guard_contributions, rule_dtype
from .kinds import calls_pullback_function
from .recompute_guard import RecomputeGuards
from .star_calls import (
    callee_wrt,
    cotangent_exprs,
    emit_star_forward,
    emit_star_reverse,
    star_bindings,
)
from .sweep_common import runtime_function, short_name, src


def _same(expr: str) -> str:
    return expr


def _unbroadcast_to(name: str):
    return lambda expr: f"unbroadcast({expr}, {name})"


class CallAdjoints(RecomputeGuards):
    """:class:`~.reverse.ReverseBuilder`: calls in both sweeps."""

    def inline_scalar(self, rule, call) -> bool:
        """Elementwise rules are written inline when every argument is provably real;
        otherwise (complex values possible) their own pullback runs."""
        return (
            rule is not None
            and rule.kind == SCALAR
            and not call.keywords
            and all(self.known_kind(a) for a in call.args)
        )

    def rev_call(self, s, t, g, v, state, out, guarded=False):
        line = s.lineno
        dtype = None if guarded else rule_dtype(self, v)
        if dtype is not None:  # none where it makes integer results (integer_dtypes.py)

            def emit(st, o):
                self.rev_call(s, t, g, v, st, o, guarded=True)

            guard_contributions(self, dtype, state, out, line, emit)
            return
        callee = v.pb_callee
        if callee.kind == "internal":
            self.rev_internal(callee.name, g, v, state, out, line)
            return
        rule = self.registry.lookup(callee.obj) if callee.kind == "object" else None
        if self.inline_scalar(rule, v):
            self.rev_scalar_rule(t, g, v, rule, state, out, line)
            return
        if rule is not None and self.direct_pullback(rule, v):
            if id(s) not in self.pb_names:
                self.rev_direct_pullback(g, v, rule, state, out, line)
                return
            if self.keeps_closure(rule, v):
                closure = self.pb_names[id(s)]
                self.rev_direct_pullback(g, v, rule, state, out, line, closure)
                return
        pb = self.pb_names[id(s)]
        vjp = self.scalar_vjp(rule, v)
        active = [(k, a) for k, a in enumerate(v.args) if self.is_active_arg(a)]
        if vjp is not None and active:
            # an elementwise rule on a value of unknown kind: its closure pullback, and
            # where the gradient is differentiated again its vjp in the subset (alt)
            c = self.temp()
            f = self.bind(vjp.__name__, vjp)
            alt = f"{c} = {f}({g}, {', '.join(src(a) for a in v.args)})"
            out.append(Line(f"{c} = {pb}({g})", frozenset(), line, alt=alt))
            for k, a in active:
                self.contrib(a.id, f"{c}[{k}]", (), state, line, out)
            return
        if callee.kind == "object" and rule is None:
            # A user function: its pullback returns the cotangents of its active params.
            params = self.user_call_bindings(v)
            active = [(p, node) for p, node in params if self.is_active_arg(node)]
            self.rev_pullback_map(pb, g, active, state, out, line, v)
            return
        if callee.kind != "object":  # a method or a function found at run time
            self.rev_dynamic_call(s, pb, g, v, state, out, line)
            return
        args = list(v.args)
        trusted = rule.trusted if rule is not None else True
        name = rule.name if rule is not None else callee.name
        if rule is not None:
            self.objects_guard(rule, v, out, line)
        keywords = self.differentiated_keywords(rule, v)
        if keywords:
            self.rev_keyword_pullback_call(pb, g, args, keywords, state, out, line)
            return
        self.rev_pullback_call(pb, g, args, state, out, line, trusted=trusted, name=name)

    def rev_dynamic_call(self, s, pb, g, v, state, out, line):
        """A call found at run time: its pullback's cotangents (of ``obj`` then each
        argument for ``obj.name(*args)``; of each argument for ``f(*args)``). Where the
        code must be differentiable again, ``method_vjp``/``function_vjp`` compute them
        from the callee's generated vjp function."""
        method = v.pb_callee.kind == "method"
        args = ([v.func.value] if method else []) + list(v.args)
        active = [(k, a) for k, a in enumerate(args) if self.is_active_arg(a)]
        if not active:
            return
        site = self.call_site_name(s)
        rest = "".join(
            [f", {src(a)}" for a in v.args] + [f", {k.arg}={src(k.value)}" for k in v.keywords]
        )
        c = self.temp()
        if v.pb_callee.kind != "star" and not is_operator_name(v.pb_callee.name or ""):
            # the recompute reads the state the call read (recompute_guard.py)
            nodes = args + [k.value for k in v.keywords]
            prefix, texts = self.read_operands(pb, v, nodes)
            n = len(args)
            rest = "".join(
                [f", {t}" for t in texts[1 if method else 0 : n]]
                + [f", {k.arg}={t}" for k, t in zip(v.keywords, texts[n:], strict=True)]
            )
        else:
            prefix, texts = "", [src(a) for a in args]
        if v.pb_callee.kind == "star":  # f(*xs, **opts): star_call_vjp
            plain = emit_star_reverse(self, s, c, g, v)
        elif method:
            mv = self.bind("method_vjp", dynamic_vjps.method_vjp)
            callee = f"{texts[0]}, {v.pb_callee.name!r}"
            plain = f"{prefix}{c} = {mv}({site}, {g}, {callee}{rest})"
        else:
            mv = self.bind("function_vjp", dynamic_vjps.function_vjp)
            plain = f"{prefix}{c} = {mv}({site}, {g}, {src(v.func)}{rest})"
        out.append(Line(f"{c} = {pb}({g})", frozenset(), line, alt=plain))
        for k, a in active:
            self.contrib(a.id, f"{c}[{k}]", (), state, line, out)

    def rev_internal(self, name, g, v, state, out, line):
        """The normalizer's own calls: loops over sequences, lists and dicts being built."""
        if name == "as_sequence":
            arg = v.args[0]
            if isinstance(arg, gast.Name):
                expr = f"sequence_cotangent({g}, {arg.id})"
                self.contrib(arg.id, expr, {arg.id}, state, line, out)
            return
        container, *key, value = v.args
        if not (self.is_active_arg(container) or self.is_active_arg(value)):
            return
        c = self.temp()
        if name == "dict_set":
            split = self.bind("dict_set_cotangent", containers.dict_set_cotangent)
            reads = {key[0].id} if isinstance(key[0], gast.Name) else set()
            out.append(Line(f"{c} = {split}({g}, {src(key[0])})", frozenset(reads), line))
        else:  # list_append, list_appended
            split = self.bind("append_cotangent", containers.append_cotangent)
            # differentiable again: a split that leaves g as it was (its pullback reads g)
            keep = self.bind("append_cotangent_split", containers.append_cotangent_split)
            out.append(Line(f"{c} = {split}({g})", frozenset(), line, alt=f"{c} = {keep}({g})"))
        if self.is_active_arg(value):
            self.contrib(value.id, f"{c}[1]", (), state, line, out)
        if self.is_active_arg(container):
            self.contrib(container.id, f"{c}[0]", (), state, line, out)

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

    def scalar_vjp(self, rule, v):
        """For a trusted one-argument elementwise rule called without keywords, its vjp
        function in the differentiable subset (scalar_vjps.scalar_vjp), else None."""
        if rule is None or rule.kind != SCALAR or not rule.trusted:
            return None
        if not v.args or v.keywords or v.pb_callee.kind != "object":
            return None
        if len(v.args) > 1:  # np.maximum(a, b), np.hypot(a, b): F(g, a, b)
            return elementwise_vjp(self.registry, v.pb_callee.obj, len(v.args))
        return scalar_vjps.scalar_vjp(self.registry, v.pb_callee.obj)

    def direct_pullback(self, rule, v) -> bool:
        """Whether the call ``v`` through ``rule`` calls its plain pullback function in the
        reverse sweep (instead of keeping the closure pullback of the forward sweep)."""
        return calls_pullback_function(self.kinds, rule.pullback_fn) and rule.pullback_fn_accepts(
            len(v.args), [k.arg for k in v.keywords]
        )

    def keeps_closure(self, rule, v) -> bool:
        """Whether the sweeps keep the closure pullback of the call ``v`` although ``rule``
        has a pullback function it may call (``rule.extra["sweeps_keep_closure"]``: the
        rule's forward keeps what its pullback needs, a solver's interpolants or
        subintervals, which the function, given only the arguments, computes again). The
        differentiable-again code calls the function (``Line.alt``)."""
        if not rule.extra.get("sweeps_keep_closure", False):
            return False
        places = parameter_places(rule.pullback_fn)
        return all(kw in places for kw, _ in self.differentiated_keywords(rule, v))

    def rev_direct_pullback(self, g, v, rule, state, out, line, closure=None):
        """Call a rule's pullback function with the primal arguments (no closure). It returns
        one cotangent per positional argument; the cotangent of a differentiated keyword
        (``rule.extra["keyword_cotangents"]``) is at its parameter's place when the function
        has a parameter of that name (it returns one per parameter: scipy.stats), else in a
        dict ``{keyword: cotangent}`` after the positional ones. With ``closure`` (the name
        of the forward's pullback, :meth:`keeps_closure`) the sweeps call that instead, its
        cotangents put in the function's layout."""
        n = len(v.args)
        positional = [(k, a) for k, a in enumerate(v.args) if self.is_active_arg(a)]
        keywords = self.differentiated_keywords(rule, v)
        if not positional and not keywords:
            return
        fname = getattr(rule.pullback_fn, "__name__", "pullback")
        pfn = self.bind(fname, rule.pullback_fn)
        parts = [g] + [src(a) for a in v.args] + [f"{k.arg}={src(k.value)}" for k in v.keywords]
        call = f"{pfn}({', '.join(parts)})"
        # A cotangent that is zero at run time never reaches the function.
        self.flush_aliases(out, line)
        inside = state.copy()
        body: list = []
        self.objects_guard(rule, v, body, line)
        places = parameter_places(rule.pullback_fn)
        if len(positional) == 1 and not keywords and closure is None:
            k, a = positional[0]
            self.contrib(a.id, f"{call}[{k}]", (), inside, line, body)
        else:
            c = self.temp()
            if closure is None:
                body.append(Line(f"{c} = {call}", src=line))
            else:
                adapt = self.bind("closure_cotangents", closure_cotangents)
                kw_places = tuple((kw, places[kw]) for kw, _ in keywords)
                text = f"{c} = {adapt}({closure}({g}), {n}, {kw_places!r})"
                body.append(Line(text, src=line, alt=f"{c} = {call}"))
            for k, a in positional:
                self.contrib(a.id, f"{c}[{k}]", (), inside, line, body)
            for kw, node in keywords:
                # a function that names the keyword as a parameter returns its cotangent at
                # that parameter's place; otherwise in the dict after the positional ones
                read = f"{c}[{places[kw]}]" if kw in places else f"dict_item({c}[{n}], {kw!r})"
                self.contrib(node.id, read, (), inside, line, body)
        self.flush_aliases(body, line)
        skipped = state.copy()
        orelse: list = []
        self.merge_states(state, inside, body, skipped, orelse, line)
        out.append(Compound(f"if {g} is not ZERO:", body, orelse, src=line))

    def objects_guard(self, rule, v, out, line) -> None:
        """For a rule that takes callables (SciPy's solvers, np.piecewise), refuse a user
        object holding differentiated values handed to it (called_objects.py): its rule
        differentiates the arguments, never the object's fields. Only the active arguments
        are looked into: an object that carries no gradient is a constant, as it is."""
        if not takes_callables(rule):
            return
        given = [a for a in v.args if self.is_active_arg(a)]
        named = [k for k in v.keywords if self.is_active_arg(k.value)]
        if not given and not named:
            return
        guard = self.bind("refuse_hidden_records", refuse_hidden_records)
        items = ", ".join(src(a) for a in given) + ("," if len(given) == 1 else "")
        kw = ", ".join(f"{k.arg!r}: {src(k.value)}" for k in named)
        reads = frozenset(a.id for a in given) | {k.value.id for k in named}
        out.append(Line(f"{guard}({rule.name!r}, ({items}), {{{kw}}})", reads, line))

    def is_active_arg(self, node) -> bool:
        return isinstance(node, gast.Name) and self.activity.is_active(node.id)

    def rev_pullback_call(self, pb, g, args, state, out, line, trusted, name):
        active = [(k, a) for k, a in enumerate(args) if self.is_active_arg(a)]
        if not active:
            return
        call = f"{pb}({g})"
        if not trusted:
            checker = self.bind("check_cotangents", runtime_function("check_cotangents"))
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
        n = len(v.args)
        prefix, texts = self.read_operands(pb, v, list(v.args) + [k.value for k in v.keywords])
        call_args = ", ".join(
            [g, *texts[:n]] + [f"{k.arg}={t}" for k, t in zip(v.keywords, texts[n:], strict=True)]
        )
        text = self.spread_helper_call(f"{pb}({g})", g, v) if self.where_context else None
        text = f"{c} = {text or f'{pb}({g})'}"
        out.append(Line(text, frozenset(), line, alt=f"{prefix}{c} = {vjp}({call_args})"))
        exprs = cotangent_exprs(c, [p for p, _ in active])
        for expr, (_, node) in zip(exprs, active, strict=True):
            self.contrib(node.id, expr, (), state, line, out)

    def vjp_ref(self, v):
        active = tuple(p for p, node in self.user_call_bindings(v) if self.is_active_arg(node))
        return ENTRY_POINTS.VJPRef(v.pb_callee.obj, callee_wrt(active), self.registry)

    def rev_scalar_rule(self, t, g, v, rule, state, out, line):
        args = v.args
        arg_src = ", ".join(src(a) for a in args)
        reads = {a.id for a in args if isinstance(a, gast.Name)} | {t}
        fname = getattr(rule.fn, "__name__", "fn")
        form = inline_form(rule) if len(args) == 1 else None
        # a derivative that may be infinite (sqrt's at 0): zero-safe (zero_safe.py)
        singular = rule.extra.get("singular", False)
        for k, a in enumerate(args):
            if not self.is_active_arg(a):
                continue
            if form is not None:
                self.ns.setdefault("_math", math)
                deriv = form.format(src(a), y=t)
                if singular:
                    self.contrib_zero_safe(a.id, g, deriv, _same, reads, state, line, out)
                else:
                    self.contrib(a.id, f"{g} * {deriv}", reads, state, line, out)
                continue
            d = rule.derivatives[k] if k < len(rule.derivatives) else None
            if d is None:
                continue
            dname = self.bind(f"d_{fname}" + (f"_{k}" if len(args) > 1 else ""), d)
            deriv = f"{dname}({t}, {arg_src})"
            others = [o for j, o in enumerate(args) if j != k]
            wrap = _same
            if others and not all(self.same_shape(a, o, t) for o in others):
                wrap = _unbroadcast_to(a.id)
            if singular:
                self.contrib_zero_safe(a.id, g, deriv, wrap, reads, state, line, out)
            else:
                self.contrib(a.id, wrap(f"{g} * {deriv}"), reads, state, line, out)

    def user_call_bindings(self, v):
        """``[(param name, argument node)]`` for a call of a user function."""
        fn = v.pb_callee.obj
        sig = code_signature(fn)  # a decorator's wrapper: its own *args/**kwargs
        try:
            bound = sig.bind(*v.args, **{k.arg: k.value for k in v.keywords})
        except TypeError:
            return []
        return star_bindings(sig, bound)

    def fwd_assign(self, s) -> Line:
        t = s.targets[0].id
        v = s.value
        pb = self.pb_names.get(id(s))
        if pb is None:
            store = self.inline_store(v)
            if store is not None:  # differentiable again: the call, which has a rule
                return Line(f"{t} = {store}", src=s.lineno, alt=f"{t} = {src(v)}")
            store = self.inline_list_store(t, v)
            if store is not None:
                return Line(store, src=s.lineno, alt=f"{t} = {src(v)}")
            store = self.inline_sum(v)
            if store is not None:
                return Line(f"{t} = {store}", src=s.lineno, alt=f"{t} = {src(v)}")
            return Line(f"{t} = {src(v)}", src=s.lineno)
        callee = v.pb_callee
        if callee.kind == "star":
            text, plain = emit_star_forward(self, s, t, pb, v)
            return Line(text, src=s.lineno, alt=plain)
        args = ", ".join([src(a) for a in v.args] + [f"{k.arg}={src(k.value)}" for k in v.keywords])
        if callee.kind == "object":
            rule = self.registry.lookup(callee.obj)
            if rule is not None:
                # (the generated sweeps guard a rule that takes callables themselves,
                # looking at the active arguments only: objects_guard)
                rrule = getattr(rule.rrule, "unguarded", rule.rrule)
                rr = self.bind("rrule_" + short_name(rule.name), rrule)
            else:
                active = tuple(
                    p for p, node in self.user_call_bindings(v) if self.is_active_arg(node)
                )
                fn = callee.obj
                self.calls_user_code = True
                # The bound method, not the object: on CPython 3.12 calling an object with
                # __call__ counts against a C recursion limit (about 1500, which
                # sys.setrecursionlimit does not raise), so recursion stopped at ~500 levels.
                lazy = self.adjoint_of(fn, callee_wrt(active))
                rr = self.bind("adjoint_" + fn.__name__, lazy.__call__)
                func = src(v.func)
                if getattr(fn, "__pullback_class__", None) is not None:
                    # a plain class: its constructor function, whose object is a record
                    # (the class itself would make one whose fields carry no gradient)
                    func = self.bind("construct_" + fn.__name__, fn)
                nodes = list(v.args) + [k.value for k in v.keywords]
                plain = self.stamped_forward(t, f"{func}({args})", pb, func, nodes)
                return Line(f"{t}, {pb} = {rr}({args})", src=s.lineno, alt=plain)
            if self.scalar_vjp(rule, v) is not None or (
                self.direct_pullback(rule, v) and self.keeps_closure(rule, v)
            ):  # its reverse: the vjp function or the pullback function (alt)
                plain = f"{t} = {src(v.func)}({args}); {pb} = None"
                return Line(f"{t}, {pb} = {rr}({args})", src=s.lineno, alt=plain)
            return Line(f"{t}, {pb} = {rr}({args})", src=s.lineno)
        if callee.kind == "method":
            cm = self.bind("call_method", dynamic_calls.call_method)
            rest = (", " + args) if args else ""
            site = self.call_site_name(s)
            # Differentiable again: the plain call, its reverse by method_vjp (rev_call).
            nodes = [v.func.value, *v.args] + [k.value for k in v.keywords]
            call = f"{src(v.func.value)}.{callee.name}({args})"
            plain = self.stamped_forward(t, call, pb, repr(callee.name), nodes)
            if is_operator_name(callee.name):  # `a + b` written as Python dispatches it
                operands = [src(a) for a in v.args]
                text = expression(callee.name, src(v.func.value), operands)
                if callee.name in INPLACE:  # `a += b`: operator.iadd(a, b)
                    fn = INPLACE[callee.name][2]
                    text = f"{self.bind(fn.__name__, fn)}({src(v.func.value)}, {operands[0]})"
                plain = f"{t} = {text}; {pb} = None"
            return Line(
                f"{t}, {pb} = {cm}({site}, {src(v.func.value)}, {callee.name!r}{rest})",
                src=s.lineno,
                alt=plain,
            )
        cf = self.bind("call_function", dynamic_calls.call_function)
        rest = (", " + args) if args else ""
        site = self.call_site_name(s)
        func = src(v.func)
        if isinstance(v.func, gast.Name) and not self.is_active_arg(v.func):
            # a plain class found at run time makes a record there too (no gradient flows
            # into the class itself: a function value that carries one stays as it is)
            func = f"{self.bind('as_constructed', dynamic_calls.as_constructed)}({func})"
        nodes = list(v.args) + [k.value for k in v.keywords]
        plain = self.stamped_forward(t, f"{func}({args})", pb, src(v.func), nodes)  # function_vjp
        return Line(f"{t}, {pb} = {cf}({site}, {src(v.func)}{rest})", src=s.lineno, alt=plain)

    def call_site_name(self, s) -> str:
        """The bound name of the CallSite of a call found at run time (a method or a
        function value): the forward call and its reverse (method_vjp/function_vjp) share it."""
        if id(s) not in self.call_sites:
            self.call_sites[id(s)] = self.bind("site", self.site(s))
        return self.call_sites[id(s)]

    def site(self, s):
        filename, line, col, text = site_place(self.fs, s.value)
        if not numpy_array_method(self.kinds, s.value):
            self.calls_user_code = True  # a call resolved at run time may reach user code
        registry = self.registry

        def vjp_of(fn, wrt):
            return ENTRY_POINTS.VJPRef(fn, wrt, registry)

        site = dynamic_calls.CallSite(filename, line, col, text, registry, self.adjoint_of, vjp_of)
        call = s.value
        if (
            isinstance(call, gast.Call)
            and not isinstance(call.func, gast.Attribute)
            and not any(isinstance(a, gast.Starred) for a in call.args)
        ):
            site.arity = len(call.args)
            site.constants = frozenset(
                [k for k, a in enumerate(call.args) if self._constant_name(a)]
                + [k.arg for k in call.keywords if k.arg and self._constant_name(k.value)]
            )
        return site

    def _constant_name(self, node) -> bool:
        """A name the activity analysis knows carries no gradient here."""
        return isinstance(node, gast.Name) and not self.is_active_arg(node)
