"""The adjoint cache and the adjoints generated code calls: one generated adjoint per
(function, differentiated parameters, registry version, argument kinds), the lazy
adjoint of a user function called from generated code, and its vjp function.

>>> import numpy as np
>>> from pullback import default_registry
>>> def square(x):
...     return x * x
>>> adj = get_adjoint(square, ("x",), default_registry())
>>> y, back = adj.forward(3.0)
>>> y, float(back(1.0)[0])
(9.0, 6.0)
"""

from __future__ import annotations

import functools
import inspect
import re
import types

from .arguments import (
    _name,
    _signature,
    call_shape,
    fast_kinds,
    kinds_key,
    picked_adjoint,
    split_element,
    split_wrt,
    spread_arguments,
)
from .cache import function_entries, registry_token
from .check import is_library_function
from .errors import (
    HigherOrderError,
    SourceUnavailableError,
    UnsupportedSyntaxError,
    generated_line_place,
)
from .registry import RuleRegistry, qualified_name
from .ruled_objects import UndeclaredObject, declared_object, undeclared_object
from .signatures import signature_of
from .source import transform_target
from .tangents import NO_TANGENT, is_differentiable_value
from .transform.build import Adjoint, build_adjoint
from .value_leaves import held_leaves
from .wrapped_signatures import code_signature


class TransformedFunction:
    """What ``grad``/``value_and_grad`` return, as the adjoint cache sees it: differentiating
    one again differentiates its generated gradient function (``gradient_function``)."""

    fn = None
    registry = None
    # called inside a differentiated function (a grad object held in a global, a decorated
    # function), it is resolved when the call runs, as `grad(f)(x)` written there is: the
    # check must not read it as the function it wraps, nor as one with no source
    __pullback_opaque__ = True

    def gradient_function(self, kinds_key):  # pragma: no cover - overridden
        raise NotImplementedError


# -- the adjoint cache ------------------------------------------------------------------


class AdjointCache:
    """Generated adjoints of one registry, keyed by (function, differentiated params,
    registry version, argument kinds).

    An entry is reused only while its guard holds (the function's code, defaults and
    every baked-in callee are the same objects; see :mod:`pullback.guards`), and one made
    under an older registry version is rebuilt, so a rule registered after a function was
    differentiated takes effect. Entries are stored on the function and die with it.
    """

    def __init__(self, registry: RuleRegistry):
        self.token = registry_token(registry)

    def get(self, fn, wrt, registry: RuleRegistry, kinds_key=None) -> Adjoint:
        refusal = getattr(fn, "__pullback_refuse__", None)
        if refusal is not None:
            raise HigherOrderError(f"cannot differentiate {qualified_name(fn)} again: {refusal}.")
        if isinstance(fn, VJPRef):
            declared = list(signature_of(fn).parameters)
            fn = fn.function_for(kinds_key)
            # The generated function names its cotangent parameters itself (a vjp of a vjp
            # has one per level): the names callers use map to its parameters by position.
            actual = dict(zip(declared, signature_of(fn).parameters, strict=True))
            if wrt is not None:
                wrt = tuple(actual[w] for w in wrt)
        if isinstance(fn, TransformedFunction):
            # grad of a gradient: differentiate the generated gradient function itself.
            outer = fn
            fn = fn.gradient_function(kinds_key)
            try:
                return self.get(fn, wrt, registry, kinds_key)
            except UnsupportedSyntaxError as exc:
                raise higher_order_error(outer, exc, fn) from None
        fn = transform_target(fn)
        entries = function_entries(fn) if isinstance(fn, types.FunctionType) else None
        if entries is None:  # not a Python function: say why it cannot be transformed
            raise SourceUnavailableError(
                f"cannot differentiate {qualified_name(fn)} directly: it is a "
                f"{type(fn).__name__}, not a Python function (pullback transforms Python "
                "source).\n"
                f"Fix: wrap it in one, e.g. `grad(lambda x: {qualified_name(fn)}(x))`; its "
                "rule is used inside."
            ) from None
        if is_library_function(fn) and registry.lookup(fn) is not None:
            # statistics.variance, scipy.special.logsumexp: the library's own source is not
            # what pullback differentiates (its rule is), and would be refused line by line
            raise SourceUnavailableError(
                f"cannot differentiate {qualified_name(fn)} directly: it is library code, "
                "differentiated through its rule where user code calls it.\n"
                f"Fix: wrap it in a function of yours, e.g. "
                f"`grad(lambda x: {qualified_name(fn)}(x))`."
            ) from None
        key = ("adjoint", self.token, wrt, registry.version, kinds_key)
        adj = entries.get(key)
        if adj is None or not adj.guard():
            adjoint_of = functools.partial(LazyAdjoint, registry=registry)
            adj = build_adjoint(fn, wrt, registry, adjoint_of, kinds_key=kinds_key)
            entries[key] = adj
        return adj


def adjoint_cache(registry: RuleRegistry) -> AdjointCache:
    cache = getattr(registry, "_adjoint_cache", None)
    if cache is None:
        cache = registry._adjoint_cache = AdjointCache(registry)
    return cache


def higher_order_error(transformed, exc, gradient_fn=None) -> HigherOrderError:
    # Name the function whose rule it is (numpy.median), not the rule's own function. Rules
    # made by one factory share their function's name (quantile_rrule for median,
    # quantile and percentile): the call's line then tells which one the gradient uses,
    # through the global it calls.
    names, by_id = {}, {}
    for rule in transformed.registry.rules():
        if rule.rrule is not None:
            names.setdefault(qualified_name(rule.rrule), set()).add(rule.name)
            by_id[id(rule.rrule)] = rule.name
    namespace = getattr(gradient_fn, "__globals__", {})
    found, places, closures = set(), [], False
    for d in exc.diagnostics:
        if d.code != "PB301" or "'" not in d.message:
            continue
        place = _users_place(namespace, d)
        if place is not None and place not in places:
            places.append(place)
        callee = d.message.split("'")[1]
        if callee == _CHECKED_RULE:  # a user's rule, whose closure pullback is checked
            named = re.findall(r"'([^']+)'\)", d.source_line)
            if named:
                found.add(named[-1])
                closures = True
                continue
        candidates = names.get(callee, {callee})
        if len(candidates) > 1:
            called = {
                by_id.get(id(namespace[word]))
                for word in re.findall(r"[^\W\d]\w*", d.source_line)
                if word in namespace
            }
            candidates = (called & candidates) or candidates
        found |= candidates
    steps = ", ".join(sorted(found))
    at = "".join(f"{f}:{line}: " for f, line, _ in places[:1])
    quoted = "".join(f"        {text}\n" for _, _, text in places[:1])
    rule_fix = (
        "; a rule of yours needs a differentiable pullback: register one with "
        "registry.set_pullback_function(fn, pullback_fn) (docs/custom-rules.md, 'Second "
        "derivatives through a rule')"
        if closures
        else ""
    )
    return HigherOrderError(
        f"{at}cannot take a second derivative of '{_name(transformed.fn)}': its gradient uses "
        f"{'the rules ' + steps if steps else 'calls'} whose pullbacks pullback cannot "
        "differentiate yet (or calls of other user functions).\n"
        f"{quoted}"
        "Second derivatives work through arithmetic, indexing, control flow, `math` and the "
        "elementwise NumPy functions (np.sin, np.tanh, ...) in one function.\n"
        "Fix: write that step with those, or use finite differences of the gradient "
        f"(pullback.testing.check_grads(order=2) shows how){rule_fix}."
    )


#: the check generated code runs on what a user's rule returns (runtime.check_cotangents)
_CHECKED_RULE = "pullback.runtime.check_cotangents"


def _users_place(namespace, d):
    """``(filename, line, text)`` of the user's line a diagnostic ``d`` in a generated
    gradient (whose globals are ``namespace``) was written for, or None."""
    line_map = namespace.get("__pullback_line_map__")
    if line_map is None or not d.filename.startswith("<pullback"):
        return None
    return generated_line_place(line_map, namespace["__pullback_source__"], d.line)


def get_adjoint(fn, wrt, registry: RuleRegistry, kinds_key=None) -> Adjoint:
    params, picks = split_wrt(wrt)  # elements of *args/**kwargs: their tuple or dict
    adj = adjoint_cache(registry).get(fn, params, registry, kinds_key)
    return adj if picks is None else picked_adjoint(adj, wrt, picks)


def _first_refusal(fn, args, kwargs) -> None:
    """Before refusing to differentiate again a step pullback cannot (``by_rule``: a rule's
    own pullback, for call forms its transformable pullback leaves to it), run it as the
    first derivative does: where the rule refuses these inputs already (``pinv(...,
    hermitian=True)``, ``svd(full_matrices=True)`` of a tall matrix), its refusal, which
    says what to change, is the one the user needs."""
    if getattr(fn, "__pullback_refuse__", None) is not None:
        fn(*args, **kwargs)


class VJPRef:
    """The generated ``vjp(dvalue, *args)`` function of a user function, as differentiable
    code calls it. Resolved when used (so recursive functions can refer to their own)."""

    __pullback_opaque__ = True
    COTANGENT = "__pullback_dvalue__"

    def __init__(self, fn, wrt, registry):
        self.fn = fn
        self.wrt = tuple(wrt)
        self.registry = registry
        self.__name__ = f"{getattr(fn, '__name__', 'fn')}__vjp"

    @property
    def cotangent_name(self) -> str:
        """The cotangent parameter's name: one no parameter of ``fn`` has (a vjp of a vjp,
        for a third derivative, has one cotangent per level)."""
        return next(iter(self.__pullback_signature__().parameters))

    @staticmethod
    def _cotangent_name_for(sig) -> str:
        taken = set(sig.parameters)
        name, k = VJPRef.COTANGENT, 0
        while name in taken:
            k += 1
            name = f"__pullback_dvalue{k}__"
        return name

    def __pullback_signature__(self):
        """``(cotangent, *parameters of fn)``; derived again only when ``fn``'s signature
        is another object (:mod:`pullback.signatures` recomputes it when ``fn``'s code,
        defaults or annotations changed), so a derived signature never outlives its
        source."""
        # (a decorator's wrapper transformed itself: its own parameters, not those
        # functools.wraps shows, are the generated vjp function's)
        sig = code_signature(self.fn)
        memo = self.__dict__.get("_signature_memo")
        if memo is not None and memo[0] is sig:
            return memo[1]
        cotangent = inspect.Parameter(
            self._cotangent_name_for(sig), inspect.Parameter.POSITIONAL_ONLY
        )
        rest = [
            p.replace(kind=inspect.Parameter.POSITIONAL_OR_KEYWORD)
            if p.kind is inspect.Parameter.POSITIONAL_ONLY
            else p
            for p in sig.parameters.values()
        ]
        derived = sig.replace(parameters=[cotangent] + rest)
        self._signature_memo = (sig, derived)
        return derived

    @property
    def __signature__(self):
        return self.__pullback_signature__()

    def function_for(self, kinds):
        """The generated vjp function for a call whose arguments (cotangent first) have
        these kinds."""
        if kinds is None:
            key = None
        else:
            positional, keywords = kinds
            key = (positional[1:], keywords)
        return get_adjoint(self.fn, self.wrt, self.registry, key).vjp

    def __call__(self, dvalue, *args, **kwargs):
        adj = get_adjoint(self.fn, self.wrt, self.registry, kinds_key(args, kwargs))
        return adj.vjp(dvalue, *args, **kwargs)

    def __repr__(self) -> str:
        return f"<vjp of {getattr(self.fn, '__qualname__', self.fn)}>"


class LazyAdjoint:
    """The adjoint of a user function called from generated code, built on first use
    (so that recursive functions can refer to their own adjoint)."""

    __slots__ = ("fn", "wrt", "registry", "_cache")

    def __init__(self, fn, wrt, registry):
        self.fn = fn
        self.wrt = None if wrt is None else tuple(wrt)
        self.registry = registry
        self._cache = {}

    def __call__(self, *args, **kwargs):
        if self.wrt is None:
            return self._call_dynamic(args, kwargs)
        # Positional floats, ints and real arrays: the cheap key of their kinds (what
        # grad's fast path keys on) stands for kinds_key's, which a miss computes. Records
        # and objects: their call_shape (one pass, no generators) decides kinds_key too
        # (each leaf's type, rank and dtype kind; no array subclass to refuse), so it
        # stands for it; kinds_key itself only where no shape is found.
        fast = None if kwargs else fast_kinds(args)
        if fast is not None:
            key = ("fast", fast, self.registry.version)
        else:
            shape = call_shape(args, kwargs)
            if shape is not None:
                key = ("shape", shape, self.registry.version)
            else:
                key = (kinds_key(args, kwargs), self.registry.version)
        adj = self._cache.get(key)
        if adj is None or not adj.guard():
            try:
                adj = get_adjoint(self.fn, self.wrt, self.registry, kinds_key(args, kwargs))
            except HigherOrderError:
                _first_refusal(self.fn, args, kwargs)
                raise
            self._cache[key] = adj
        return adj.forward(*args, **kwargs)

    def call_given_constants(self, constants, *args, **kwargs):
        """A call found at run time whose arguments at ``constants`` (positions and
        keywords, ``CallSite.constants``) carry no gradient: an object a rule made there
        is a constant to the callee (:meth:`_plan`)."""
        return self._call_dynamic(args, kwargs, constants)

    def _call_dynamic(self, args, kwargs, constants=frozenset()):
        """A call found at run time: differentiate the arguments that hold floats, and
        give one cotangent per positional argument (the rule convention).

        A method called in a loop (``p = p.step(dt)``) is found again on every call: its
        plan (the adjoint, which arguments are differentiated, where their cotangents go)
        is kept on the function, keyed by the registry and the shape of the arguments
        (:func:`call_shape`: every leaf's type, rank and dtype kind, every record's
        class), and reused while the adjoint's guard holds."""
        fn = self.fn
        shape = call_shape(args, kwargs) if type(fn) is types.FunctionType else None
        if shape is not None and _PLAN_BLOCKERS.isdisjoint(fn.__dict__):
            entries = function_entries(fn)
            key = ("dynamic", registry_token(self.registry), self.registry.version, shape)
            if constants:
                key += (constants,)
            plan = entries.get(key)
            if plan is None or not plan[0].guard():
                plan = entries[key] = self._plan(args, kwargs, constants)
        else:
            plan = self._plan(args, kwargs, constants)
        adj, positions, positional, keyword_names, undeclared = plan
        y, pullback = adj.forward(*args, **kwargs)

        def left_out(n):
            # an object a rule made that declares no data: refused where its cotangent is used
            if n in undeclared:
                return UndeclaredObject.placed(undeclared[n], _name(fn))
            return NO_TANGENT

        def dynamic_call_pullback(dy):
            cots = pullback(dy)
            out = KeywordCotangents(
                left_out(n) if n not in positions else cots[positions[n]] for n in positional
            )
            out.keywords = {
                key: cots[positions[n]]
                for key, n in keyword_names.items()
                if key in kwargs and n in positions
            }
            return out

        return y, dynamic_call_pullback

    def _plan(self, args, kwargs, constants=frozenset()):
        """``(adjoint, {differentiated name: cotangent index}, positional names,
        {keyword: name}, {name: class of an undeclared object a rule made})`` of this call,
        found from its arguments' values."""
        sig = _signature(self.fn)
        bound = sig.bind(*args, **kwargs)
        # Arguments in *args/**kwargs are differentiated one by one ("args[1]").
        entries = spread_arguments(sig, bound)
        names = [n for n, _ in entries]
        reg = self.registry
        # (an object a rule made, interp1d(x, y): differentiated as by name where its rule
        # declares its data; refused where used otherwise, ruled_objects.py; a constant
        # where the caller's activity analysis knows it carries no gradient)
        fixed = _constant_names(names, len(args), constants)
        active = tuple(
            n
            for n, v in entries
            if any(
                is_differentiable_value(x) or (n not in fixed and declared_object(x, reg))
                for x in held_leaves(v)
            )
        )
        undeclared = {
            n: type(v).__name__
            for n, v in entries
            if n not in active and n not in fixed and undeclared_object(v, reg)
        }
        adj = get_adjoint(self.fn, active, self.registry, kinds_key(args, kwargs))
        positions = {n: k for k, n in enumerate(active)}
        positional = names[: len(args)]
        # each keyword argument's entry: a parameter's name, or its element of **kwargs
        keyword_names = {}
        for n in names[len(args) :]:
            _, key = split_element(n)
            keyword_names[n if key is None else key] = n
        return adj, positions, positional, keyword_names, undeclared


def _constant_names(names, npositional, constants) -> frozenset:
    """The entries of ``names`` (a call's arguments, positional first, as
    ``spread_arguments`` names them) at the positions and keywords ``constants``."""
    if not constants:
        return frozenset()
    fixed = set()
    for c in constants:
        if type(c) is int:
            if c < npositional:
                fixed.add(names[c])
        else:  # (a keyword: its parameter, or its element of **kwargs)
            fixed.update(n for n in names[npositional:] if n == c or split_element(n)[1] == c)
    return frozenset(fixed)


#: Attributes of a function under which get_adjoint differentiates something else (what it
#: wraps) or refuses: such a function's dynamic calls take the full path every time.
_PLAN_BLOCKERS = frozenset({"__wrapped__", "__pullback_refuse__"})


class KeywordCotangents(tuple):
    """One cotangent per positional argument (the rule convention), with those of the
    keyword arguments as ``keywords`` (``{name: cotangent}``): what a star-call passing
    ``**opts`` on to a user function gives back to the dict it unpacked."""

    keywords: dict = {}
