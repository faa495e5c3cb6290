"""Where a call known only at run time stands in the user's code, and the refusals it builds.

The generated code binds one :class:`CallSite` per such call (the file, line and column,
the source line, the registry and how to build adjoints), so that an error met when the
callee turns out to be library code without a rule, an in-place array method or something
with neither source nor rule names the user's line and a fix.

>>> site = CallSite("model.py", 3, 4, "    y = f(x)", registry=None, adjoint_of=None)
>>> site.where()
'model.py:3:5'
>>> print(site.missing("f", "mod.f"))  # doctest: +ELLIPSIS
model.py:3:5: cannot differentiate the call of f: it has neither Python source nor a rule.
        y = f(x)
Fix: register a rule with `@pullback.rrule(mod.f)`, ...
"""

from __future__ import annotations

from .errors import (
    Diagnostic,
    HigherOrderError,
    MissingRuleError,
    UnsupportedSyntaxError,
    generated_line_source,
)
from .registry import REFUSED_WHEN_VARIED, qualified_name


def site_place(fs, node) -> tuple:
    """``(filename, line, col, source_line)`` of ``node`` in ``fs`` for a :class:`CallSite`:
    in generated code differentiated again (a gradient's own source), the user's line it was
    written for, its column that of the one call found at run time the first derivative
    made on that line (its call site, in the gradient's namespace), else the statement's
    first."""
    filename, line, col = fs.location(node)
    g = getattr(getattr(fs, "fn", None), "__globals__", {})
    if filename.startswith("<pullback") and "__pullback_line_map__" in g:
        found = generated_line_source(g["__pullback_line_map__"], g["__pullback_source__"], line)
        if found is not None:
            users, line = found
            text = users.file_line(line)
            cols = {
                v.col
                for v in g.values()
                if type(v) is CallSite and v.filename == users.filename and v.line == line
            }
            col = cols.pop() if len(cols) == 1 else len(text) - len(text.lstrip())
            return users.filename, line, col, text
    return filename, line, col, fs.file_line(line)


class CallSite:
    """Where a call known only at run time stands in the user's code (a plain class, not a
    dataclass: see ``transform.analyze.Activity``)."""

    def __init__(self, filename, line, col, source_line, registry, adjoint_of, vjp_of=None):
        self.filename = filename
        self.line = line
        self.col = col
        self.source_line = source_line
        self.registry = registry
        self.adjoint_of = adjoint_of
        # ``vjp_of(fn, wrt)``: the generated vjp function of a user function (api.VJPRef),
        # handed down by the transform so that this module needs no import of the api.
        self.vjp_of = vjp_of
        # The positions (ints) and keywords (strs) of the call's arguments that the
        # activity analysis knows carry no gradient (a name bound to constants only): an
        # object a rule made there (interp1d of constant data) is a constant to the
        # callee found at run time, never a differentiated value (ruled_objects.py).
        self.constants = frozenset()
        self.arity = 0  # (the call's positional arguments, with constants: its last ones)

    def where(self) -> str:
        return f"{self.filename}:{self.line}:{self.col + 1}"

    def constant_positions(self, npositional: int) -> frozenset:
        """The positions of :attr:`constants` in ``npositional`` positional arguments
        whose last :attr:`arity` are the call's own (after a partial's or a bound
        method's arguments, after the cotangent a vjp function takes first)."""
        shift = npositional - self.arity
        if shift < 0 or not self.constants:
            return frozenset()
        return frozenset(c + shift for c in self.constants if type(c) is int)

    def library(self, what: str, fn) -> MissingRuleError:
        """The refusal for library code found at run time (pullback never transforms it)."""
        qualified = qualified_name(fn)
        return MissingRuleError(
            f"{self.where()}: cannot differentiate the call of {what}: it is library code "
            f"({getattr(fn, '__module__', '?')}) with no differentiation rule, and pullback "
            "does not transform library code.\n"
            f"        {self.source_line.strip()}\n"
            f"Fix: register a rule with `@pullback.rrule({qualified})`, declare it "
            f"non-differentiable with `pullback.non_differentiable({qualified})` if no gradient "
            "flows through it, or write that step with operations pullback differentiates."
        )

    def refusal(self, name: str, code: str, message: str, why: str, fix: str):
        """A refusal met at run time, at this call, as the check would have reported it."""
        text = self.source_line.rstrip("\n")
        diagnostic = Diagnostic(
            code=code,
            message=message,
            filename=self.filename,
            line=self.line,
            col=self.col,
            end_col=len(text),
            source_line=text,
            why=why,
            fix=fix,
        )
        return UnsupportedSyntaxError(name, [diagnostic])  # "cannot differentiate '<name>'"

    def varied_random_draw(self, rule) -> UnsupportedSyntaxError:
        """PB506 met at run time: a differentiated value reaches a random draw that moves
        with its parameters, found only when the call ran (``rng.normal(mu, s)`` of a
        local generator); transform/problems.py reports the calls it sees before."""
        fix = rule.extra.get(REFUSED_WHEN_VARIED, "")
        return self.refusal(
            rule.name, "PB506", random_draw_message(rule.name), RANDOM_DRAW_WHY, f"{fix}."
        )

    def inplace_array_method(self, name: str) -> UnsupportedSyntaxError:
        """The refusal of an array method that changes its array, met at run time (the
        receiver's type was not known before running)."""
        return self.refusal(
            name,
            "PB103",
            f"array mutation: in-place array method '{name}' changes its array",
            "The receiver turned out to be a NumPy array when the function ran; "
            "this method changes it in place, which a differentiated function may not do.",
            "make a new array instead (`np.sort(a)`, `np.full_like(a, v)`, or write into "
            "`a = a.copy()`) (see docs/limitations.md#PB103).",
        )

    def varied_function_value(self, name: str) -> UnsupportedSyntaxError:
        """PB504 met at run time: ``f(y)`` with ``f`` a value that depends on a
        differentiated value turned out to be no record with a ``__call__`` method (a
        closure that captured one): transform/problems.py's refusal, as the call runs."""
        return self.refusal(
            name,
            "PB504",
            f"'{name}' is a function value that depends on a differentiated value",
            "A function made from a differentiated value (a closure that captured it) "
            "carries that value inside; the gradient through what it captured would be lost.",
            "call a function defined with `def` and pass the differentiated value as an "
            "argument, or make the callable a @dataclass with a `__call__` method.",
        )

    def refused_class(self, cls, why: str, fix: str) -> MissingRuleError:
        """A plain class found at run time whose construction pullback cannot follow
        (plain_classes.py says why, ``__slots__``, a stored lambda over ``self``...)."""
        return MissingRuleError(
            f"{self.where()}: cannot differentiate the call of '{cls.__name__}', found at run "
            f"time: {why}.\n"
            f"        {self.source_line.strip()}\n"
            f"Fix: {fix}."
        )

    def derivative_inside(self, made: str, name: str) -> HigherOrderError:
        """``jacobian(v)(x)``, ``hessian(g)(x)`` or ``hvp(g)(x, u)`` called inside a
        function being differentiated (``made`` the call that made it, ``name`` the
        function it differentiates): the derivative of a derivative. ``grad(g)(x)``
        there is differentiated (its generated gradient, differentiated again)."""
        if made == "jacobian":
            why = (
                f"its derivative is a second derivative of '{name}', which pullback "
                "builds only by nesting grad"
            )
            fix = (
                "build the Jacobian from grad of a helper that returns one element, which "
                f"may be called here: `def {name}_i(x, i): return {name}(x)[i]`, then "
                f"`np.stack([grad({name}_i)(x, i) for i in range(n)])`"
            )
        else:
            why = f"its derivative is a third derivative of '{name}', which pullback does not build"
            fix = (
                f"compute it outside the differentiated function and pass it in (no "
                f"gradient then flows through it), or call grad({name}) here, which is "
                "differentiated (a second derivative)"
            )
        return HigherOrderError(
            f"{self.where()}: {made}({name}) is called inside a function being "
            f"differentiated: {why}.\n"
            f"        {self.source_line.strip()}\n"
            f"Fix: {fix}."
        )

    def missing(self, what: str, qualified: str, fn=None) -> MissingRuleError:
        fix = (
            f"register a rule with `@pullback.rrule({qualified})`, or declare it "
            f"non-differentiable with `pullback.non_differentiable({qualified})`."
        )
        if type(fn).__name__ == "ufunc" and getattr(fn, "__name__", "").endswith("(vectorized)"):
            # np.frompyfunc's ufunc, whose name is its function's: nothing a rule can be
            # registered for by that name
            what = "a ufunc made by np.frompyfunc"
            fix = (
                "make it with np.vectorize(fn, otypes=[float]) instead, whose calls pullback "
                "differentiates through fn's source, or write fn with NumPy operations."
            )
        return MissingRuleError(
            f"{self.where()}: cannot differentiate the call of {what}: it has neither Python "
            f"source nor a rule.\n"
            f"        {self.source_line.strip()}\n"
            f"Fix: {fix}"
        )


RANDOM_DRAW_WHY = (
    "With a seed fixed in the function, the draw is a function of its parameters (or picks "
    "elements of its argument), but pullback treats random draws as constants: the "
    "gradient through it would be silently zero (see docs/limitations.md#PB506)."
)


def random_draw_message(name: str) -> str:
    return f"a differentiated value reaches the random draw {name}"
