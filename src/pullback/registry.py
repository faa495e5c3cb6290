"""The rule registry: how pullback differentiates a call it does not transform.

A rule for ``fn`` follows the ChainRules convention: it takes ``fn``'s arguments and returns
``(y, pullback)``; ``pullback(dy)`` returns one cotangent per positional argument
(``NO_TANGENT`` for an argument with none). Keyword arguments are passed through and
never differentiated.

>>> reg = RuleRegistry()
>>> def double(x):
...     return 2 * x
>>> @reg.rrule(double)
... def _double_rule(x):
...     def double_pullback(dy):
...         return (2 * dy,)
...     return double(x), double_pullback
>>> reg.lookup(double).kind
'rule'

The registry is an object: tests build their own, and :func:`use_registry` swaps the
default one for a block of code.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .tangents import NO_TANGENT, ZERO, unbroadcast

RULE = "rule"
SCALAR = "scalar"
NONDIFF = "non-differentiable"


@dataclass
class Rule:
    """One entry of the registry.

    ``kind`` is ``"rule"`` (an rrule), ``"scalar"`` (elementwise, from its partial
    derivatives, which the code generator may inline) or ``"non-differentiable"``.
    ``trusted`` rules ship with pullback and are tested; a user's rule is checked when used.
    """

    fn: Callable
    kind: str
    rrule: Callable | None = None
    derivatives: tuple = ()
    name: str = ""
    family: str = "user"
    trusted: bool = False
    notes: str = ""
    extra: dict = field(default_factory=dict)
    # ``pullback_fn(dy, *args, **kwargs)``: the pullback as a plain function written in the
    # differentiable subset (marked with @transformable). Generated code calls it directly,
    # and a second derivative transforms it like user code.
    pullback_fn: Callable | None = None

    def pullback_fn_accepts(self, nargs: int, keywords) -> bool:
        """Whether ``pullback_fn(dy, *args, **kwargs)`` takes a call of this form."""
        if self.pullback_fn is None:
            return False
        import inspect

        try:
            inspect.signature(self.pullback_fn).bind(
                None, *([None] * nargs), **dict.fromkeys(keywords)
            )
        except TypeError:
            return False
        return True


def transformable(fn):
    """Mark a function of pullback's own (a rule's pullback) as one that pullback may
    transform like user code, so that derivatives can run through it again."""
    fn.__pullback_transformable__ = True
    return fn


def qualified_name(fn) -> str:
    """A readable dotted name for a callable: ``numpy.sin``, ``math.exp``, ``mymod.f``."""
    mod = getattr(fn, "__module__", None)
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    if name is None:
        return repr(fn)
    if isinstance(fn, type(abs)) and getattr(fn, "__self__", None) is not None:
        owner = fn.__self__
        if isinstance(owner, type(contextlib)):
            mod = owner.__name__
    if mod in (None, "builtins"):
        return name
    if mod.startswith("numpy"):
        mod = _numpy_public_module(fn, mod)
    return f"{mod}.{name}"


def _numpy_public_module(fn, mod: str) -> str:
    import numpy as np

    name = getattr(fn, "__name__", "")
    with warnings.catch_warnings():  # e.g. np.bytes warns about its future meaning
        warnings.simplefilter("ignore")
        for public, module in (("numpy", np), ("numpy.linalg", np.linalg), ("numpy.fft", np.fft)):
            if getattr(module, name, None) is fn:
                return public
    return mod


class RuleRegistry:
    """A table of rules keyed by the function object they differentiate."""

    def __init__(self):
        self._rules: dict = {}
        self.version = 0

    # -- registering ----------------------------------------------------------------
    def _put(self, fn, rule: Rule) -> Rule:
        self._rules[_key(fn)] = (fn, rule)
        self.version += 1
        return rule

    def register(
        self, fn, rrule: Callable, *, family: str = "user", trusted: bool = False, name=None
    ) -> Rule:
        """Register ``rrule`` (returning ``(y, pullback)``) as the rule for ``fn``."""
        if not callable(rrule):
            raise TypeError("a rule must be callable and return (y, pullback)")
        rule = Rule(
            fn=fn,
            kind=RULE,
            rrule=rrule,
            name=name or qualified_name(fn),
            family=family,
            trusted=trusted,
        )
        return self._put(fn, rule)

    def rrule(self, fn, *, family: str = "user", trusted: bool = False):
        """Decorator: ``@registry.rrule(fn)`` registers the decorated function as fn's rule."""

        def decorate(rule_fn):
            self.register(fn, rule_fn, family=family, trusted=trusted)
            return rule_fn

        return decorate

    def scalar_rule(self, fn, *derivatives, family: str = "user", trusted: bool = False):
        """Register an elementwise ``fn`` from its partial derivatives.

        Each derivative is called as ``d(y, *args)`` and returns the partial derivative of
        ``y = fn(*args)`` with respect to one argument (or ``None`` for an argument that
        has no tangent). Broadcasting is undone for you.

        >>> import numpy as np
        >>> reg = RuleRegistry()
        >>> _ = reg.scalar_rule(np.tanh, lambda y, x: 1 - y * y)
        """
        derivatives = tuple(derivatives)
        for d in derivatives:
            if d is not None:
                # Second derivatives transform the derivative functions like user code.
                try:
                    d.__pullback_transformable__ = True
                except (AttributeError, TypeError):  # pragma: no cover - builtins
                    pass

        def elementwise_rrule(*args, **kwargs):
            y = fn(*args, **kwargs)

            def elementwise_pullback(dy):
                if dy is ZERO:
                    return tuple(ZERO for _ in args)
                out = []
                for k, arg in enumerate(args):
                    d = derivatives[k] if k < len(derivatives) else None
                    if d is None:
                        out.append(NO_TANGENT)
                    else:
                        deriv = d(y, *args)
                        if np.iscomplexobj(deriv):  # the conjugating convention
                            deriv = np.conj(deriv)
                        out.append(unbroadcast(dy * deriv, arg))
                return tuple(out)

            return y, elementwise_pullback

        rule = Rule(
            fn=fn,
            kind=SCALAR,
            rrule=elementwise_rrule,
            derivatives=derivatives,
            name=qualified_name(fn),
            family=family,
            trusted=trusted,
        )
        return self._put(fn, rule)

    def non_differentiable(self, *fns, family: str = "user", trusted: bool = False, notes=""):
        """Declare functions whose output carries no gradient (rounding, predicates, ...)."""
        for fn in fns:
            self._put(
                fn,
                Rule(
                    fn=fn,
                    kind=NONDIFF,
                    name=qualified_name(fn),
                    family=family,
                    trusted=trusted,
                    notes=notes,
                ),
            )

    def set_pullback_function(self, fn, pullback_fn) -> None:
        """Give ``fn``'s rule a pullback written as a transformable function."""
        rule = self.lookup(fn)
        if rule is None:
            raise KeyError(f"no rule for {qualified_name(fn)}")
        rule.pullback_fn = transformable(pullback_fn)
        self.version += 1

    def remove(self, fn) -> None:
        """Forget the rule for ``fn`` (if any)."""
        if self._rules.pop(_key(fn), None) is not None:
            self.version += 1

    # -- reading --------------------------------------------------------------------
    def lookup(self, fn) -> Rule | None:
        """The rule for ``fn``, or ``None``."""
        try:
            entry = self._rules.get(_key(fn))
        except TypeError:
            return None
        return None if entry is None else entry[1]

    def __contains__(self, fn) -> bool:
        return self.lookup(fn) is not None

    def rules(self) -> list[Rule]:
        """Every rule, in registration order."""
        return [rule for _, rule in self._rules.values()]

    def copy(self) -> RuleRegistry:
        """An independent registry with the same rules (for tests and experiments)."""
        new = RuleRegistry()
        new._rules = dict(self._rules)
        new.version = self.version
        return new


def _key(fn):
    try:
        hash(fn)
    except TypeError:
        return ("id", id(fn))
    return fn


_current: list[RuleRegistry] = []


def default_registry() -> RuleRegistry:
    """The registry that ``grad`` and friends use unless given another one."""
    if not _current:
        from .rules import build_default_registry

        _current.append(build_default_registry())
    return _current[-1]


@contextlib.contextmanager
def use_registry(registry: RuleRegistry):
    """Make ``registry`` the default inside a ``with`` block."""
    default_registry()
    _current.append(registry)
    try:
        yield registry
    finally:
        _current.remove(registry)


def rrule(fn, *, registry: RuleRegistry | None = None):
    """Decorator registering a custom rule for ``fn`` (in the default registry).

    >>> import pullback
    >>> def cube(x):
    ...     return x ** 3
    >>> @pullback.rrule(cube)
    ... def _(x):
    ...     def cube_pullback(dy):
    ...         return (3 * x ** 2 * dy,)
    ...     return cube(x), cube_pullback
    """
    reg = registry if registry is not None else default_registry()
    return reg.rrule(fn)


def scalar_rule(fn, *derivatives, registry: RuleRegistry | None = None) -> Rule:
    """Register an elementwise rule from partial derivatives ``d(y, *args)``."""
    reg = registry if registry is not None else default_registry()
    return reg.scalar_rule(fn, *derivatives)


def non_differentiable(*fns, registry: RuleRegistry | None = None) -> None:
    """Declare ``fns`` non-differentiable: their outputs carry no gradient."""
    reg = registry if registry is not None else default_registry()
    reg.non_differentiable(*fns)
