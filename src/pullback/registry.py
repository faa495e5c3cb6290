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
active one for a block of code (in the current thread or asyncio task only).

A rule family whose rules only make sense once some module is imported (SciPy's) can be
*deferred* (:meth:`RuleRegistry.defer`): it is registered on the first lookup that misses
after that module appears in ``sys.modules``. Importing pullback and differentiating
NumPy code therefore never imports SciPy, while a function that calls
``scipy.special.erf`` (which its author has imported) finds the rule at once.
"""

from __future__ import annotations

import _thread
import contextlib
import contextvars
import sys
from collections.abc import Callable

import numpy as np

from .errors import PullbackError, describe
from .tangents import NO_TANGENT, ZERO, unbroadcast

RULE = "rule"
SCALAR = "scalar"
NONDIFF = "non-differentiable"
# Rule.extra key of a non-differentiable rule that a differentiated value may not reach (a
# random draw that moves with its parameters, rules/numpy_random.py): the fix to name.
REFUSED_WHEN_VARIED = "refused_when_varied"


class Rule:
    """One entry of the registry.

    ``kind`` is ``"rule"`` (an rrule), ``"scalar"`` (elementwise, from its partial
    derivatives, which the code generator may inline) or ``"non-differentiable"``.
    ``trusted`` rules ship with pullback and are tested; a user's rule is checked when used.
    (A plain class, not a dataclass: dataclasses cost about half a millisecond each at
    import, which every cold start pays.)

    ``name`` (``numpy.sum``) is worked out from ``fn`` when first read unless given: the
    registry is built on the first gradient, and naming its ~700 rules then was a third of
    the building, for names that only messages, listings and generated code read.
    """

    def __init__(self, fn: Callable, kind: str, rrule: Callable | None = None,
                 derivatives: tuple = (), name: str | None = None, family: str = "user",
                 trusted: bool = False, notes: str = "", extra: dict | None = None,
                 pullback_fn: Callable | None = None):  # fmt: skip
        self.fn = fn
        self.kind = kind
        self.rrule = rrule
        self.derivatives = derivatives
        self._name = name
        self.family = family
        self.trusted = trusted
        self.notes = notes
        self.extra = {} if extra is None else extra
        # ``pullback_fn(dy, *args, **kwargs)``: the pullback as a plain function written in
        # the differentiable subset (marked with @transformable). Generated code calls it
        # directly, and a second derivative transforms it like user code.
        self.pullback_fn = pullback_fn

    @property
    def name(self) -> str:
        if self._name is None:
            self._name = qualified_name(self.fn)
        return self._name

    @name.setter
    def name(self, value: str) -> None:
        self._name = value

    def __repr__(self) -> str:
        return f"Rule(fn={self.fn!r}, kind={self.kind!r}, family={self.family!r})"

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
        return describe(fn)
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
    name = getattr(fn, "__name__", "")
    for public in ("numpy", "numpy.linalg", "numpy.fft"):
        # Only modules already loaded: ``np.fft`` would import numpy.fft (a cost at every
        # start), and a function of a module that is not loaded is not in it. Read from
        # the module's own namespace: no module ``__getattr__`` runs (which warns for
        # names such as np.bytes, or imports), and no warnings filter is needed (entering
        # one per rule made up a large part of building the registry).
        module = sys.modules.get(public)
        if module is not None and vars(module).get(name) is fn:
            return public
    return mod


class RuleRegistry:
    """A table of rules keyed by the function object they differentiate."""

    def __init__(self):
        self._rules: dict = {}
        self.version = 0
        # Families waiting for the module they need (see ``defer``), in registration order.
        self._deferred: list = []
        # Families waiting for a lookup of a function in their DOMAIN (see ``add_family``).
        self._by_domain: list = []
        # Qualified names in no waiting family's DOMAIN: what ``_load_domain`` answered for
        # them, kept while ``_by_domain`` is the very list it was answered for (see there).
        self._outside: tuple = (None, set())
        # Rules for whole kinds of callables no table can list (each namedtuple class):
        # ``provider(fn) -> Rule | None``, asked on a miss; what they give is kept.
        self.providers: list = []
        self._provided: dict = {}

    # -- families -------------------------------------------------------------------
    def add_family(self, family) -> None:
        """Register a family module (``FAMILY``, ``register(reg)``, optional ``REQUIRES``).

        A family with ``REQUIRES`` (a module name such as ``"scipy.special"``) is deferred
        until that module has been imported by someone else. A family with ``DOMAIN`` (a
        dotted prefix such as ``"math"``, or a set of qualified names: see
        ``rules/family_domains.py``), every rule of which is for a function whose
        :func:`qualified_name` lies in that domain, waits for the first lookup (or user
        rule, or removal) of such a function: a gradient that calls none of them never
        imports nor registers it. The others register now.
        """
        requires = getattr(family, "REQUIRES", None)
        if getattr(family, "DOMAIN", None) is not None:
            with _LOAD_LOCK:
                if family not in self._by_domain:
                    self._by_domain = [*self._by_domain, family]  # (replaced: see _load_domain)
        elif requires is None or requires in sys.modules:
            family.register(self)
        else:
            self.defer(family)

    def _load_domain(self, fn) -> bool:
        """Register the families waiting for a function in the namespace of ``fn``; True if
        any. Every lookup of one of their functions comes here before it answers, and
        registering them changes no other entry (tests/test_registry_domains.py holds it),
        so the table reads as if they had registered in their place.

        A lookup that misses for a user's function (a call found at run time, at every
        call) comes here too: the qualified names found in no waiting family's domain are
        kept, and what decides that answer is the name and the waiting families alone. The
        list of those is replaced, never changed in place, whenever families leave it or
        join it, so the kept names hold for the list they were answered for only."""
        try:
            name = qualified_name(fn)
        except Exception:  # an object whose attributes raise: in no family's namespace
            return False
        if not isinstance(name, str):
            return False
        waiting, outside = self._outside
        if waiting is not self._by_domain:  # (families registered since: answer again)
            waiting, outside = self._outside = (self._by_domain, set())
        if name in outside:
            return False
        if not any(in_domain(name, f.DOMAIN) for f in waiting):
            if len(outside) >= _OUTSIDE_LIMIT:  # (names of functions made at run time)
                outside.clear()
            outside.add(name)
            return False
        with _LOAD_LOCK:
            ready = [f for f in self._by_domain if in_domain(name, f.DOMAIN)]
            self._by_domain = [f for f in self._by_domain if f not in ready]
            for family in ready:
                family.register(self)  # (its rules bump the version, like any new rule)
        return bool(ready)

    def defer(self, family) -> None:
        """Register ``family`` on the first lookup miss after ``family.REQUIRES`` (a module
        name) is in ``sys.modules``."""
        with _LOAD_LOCK:
            if family not in self._deferred:
                self._deferred.append(family)

    def deferred_families(self) -> list:
        """The family modules not registered yet (waiting for their module or a lookup in
        their domain)."""
        return list(self._deferred) + list(self._by_domain)

    def _load_ready(self) -> bool:
        """Register the deferred families whose module is imported now; True if any."""
        modules = sys.modules
        if not any(f.REQUIRES in modules for f in self._deferred):
            return False
        with _LOAD_LOCK:  # two threads missing at once register a family only once
            ready = [f for f in self._deferred if f.REQUIRES in modules]
            # Out of the queue before any registers: a family's register() may look up a
            # rule and so come back here (re-entrantly) for the families still queued.
            self._deferred = [f for f in self._deferred if f not in ready]
            for family in ready:
                family.register(self)
            if ready:
                self.version += 1  # adjoints built before may have missed these rules
        return bool(ready)

    def load_all(self) -> None:
        """Import what every deferred family needs (where installed) and register them
        (for listings; a lookup never imports anything)."""
        import importlib

        with _LOAD_LOCK:
            by_domain, self._by_domain = self._by_domain, []
            for family in by_domain:
                family.register(self)
        for family in list(self._deferred):
            try:
                importlib.import_module(family.REQUIRES)
            except ImportError:  # an optional dependency that is not installed
                continue
        self._load_ready()

    # -- registering ----------------------------------------------------------------
    def _put(self, fn, rule: Rule) -> Rule:
        if self._by_domain and not rule.trusted:
            self._load_domain(fn)  # a user's rule replaces the shipped one, as if it were there
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
            name=name or None,  # None: worked out when read
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
        if self._by_domain:
            self._load_domain(fn)
        if self._rules.pop(_key(fn), None) is not None:
            self.version += 1

    # -- reading --------------------------------------------------------------------
    def lookup(self, fn) -> Rule | None:
        """The rule for ``fn``, or ``None``."""
        try:
            entry = self._rules.get(_key(fn))
        except TypeError:
            return None
        if entry is None:
            # A miss is the moment to look for newly imported modules (cheap: a few dict
            # lookups while families wait, nothing once they are all registered).
            if self._deferred and self._load_ready():
                entry = self._rules.get(_key(fn))
            if entry is None and self._by_domain and self._load_domain(fn):
                entry = self._rules.get(_key(fn))
            cls = getattr(fn, "__pullback_class__", None)
            if entry is None and cls is not None:  # a plain class's constructor function
                entry = self._rules.get(_key(cls))  # (plain_classes.py): the class's rule
            if entry is None:
                return self._provide(fn) if self.providers else None
        return entry[1]

    def _provide(self, fn) -> Rule | None:
        """The rule a provider gives for ``fn`` (kept: the same object every time)."""
        key = _key(fn)
        if key in self._provided:
            return self._provided[key]
        rule = next((r for r in (p(fn) for p in self.providers) if r is not None), None)
        if rule is not None:  # a miss is not kept: it would keep every callee alive
            self._provided[key] = rule
        return rule

    def __contains__(self, fn) -> bool:
        return self.lookup(fn) is not None

    def rules(self) -> list[Rule]:
        """Every rule, in registration order (deferred families are loaded first, importing
        the modules they need where installed)."""
        if self._deferred or self._by_domain:
            self.load_all()
        return [rule for _, rule in self._rules.values()]

    def copy(self) -> RuleRegistry:
        """An independent registry with the same rules and the same deferred families (for
        tests and experiments)."""
        new = RuleRegistry()
        new._rules = dict(self._rules)
        new._deferred = list(self._deferred)
        new._by_domain = list(self._by_domain)
        new.providers = list(self.providers)
        new.version = self.version
        return new


def in_domain(name: str, domain) -> bool:
    """Whether the qualified name ``name`` lies in a family's ``DOMAIN``: a namespace
    (``"math"``: the names under it) or a set of qualified names (its members)."""
    if isinstance(domain, str):
        return name.startswith(domain + ".")
    return name in domain


def _key(fn):
    try:
        hash(fn)
    except TypeError:
        return ("id", id(fn))
    return fn


_OUTSIDE_LIMIT = 4096  # names kept by ``RuleRegistry._load_domain`` before it starts again

_LOAD_LOCK = _thread.RLock()  # threading.RLock, without importing threading


class EntryPoints:
    """The differentiation entry points that layers below the api reach without importing it.

    Imports flow one way, from the lowest layer up (docs/design.md, "Layers"): the
    registry, runtime helpers, rules and transform passes never import the api layer. Yet
    a few of them must differentiate a user's function while they run (``np.vectorize``'s
    rule, ``scipy.optimize.minimize``'s implicit gradient, the tangent of a call through a
    rule), name an api function (the rules of ``grad`` itself) or build the rules that
    ship with pullback. They find those objects here: ``api.py`` and ``jacobian.py``
    install them with :func:`install_entry_points` when imported, which ``import pullback``
    does before anything can differentiate. One object, so a test swaps an entry with
    ``monkeypatch.setattr(ENTRY_POINTS, "vjp", fake)``.
    """

    NAMES = (
        "vjp",  # api.vjp: (y, pullback) of a user's function
        "grad",
        "value_and_grad",
        "jacobian",
        "hessian",
        "hvp",
        "get_adjoint",  # adjoints.get_adjoint: the generated adjoint for (fn, wrt, kinds)
        "VJPRef",  # adjoints.VJPRef: a user function's vjp function, transformed on use
        "LazyAdjoint",
        "resolve_wrt",  # arguments: parameter names of differentiated positions
        "kinds_key",  # arguments: the argument kinds an adjoint is specialised for
        "run_forward",  # running: the forward sweep of an adjoint
        "run_pullback",  # running: the reverse sweep
        "inline_form",  # transform.inline: a scalar rule's derivative as source
        "items_version",  # transform.iter_items: a user's __iter__ returning its items
        "build_default_registry",  # rules: a registry of every shipped family
    )
    __slots__ = NAMES

    def __getattr__(self, name):  # only reached for an entry nobody installed
        if name in EntryPoints.NAMES:
            raise PullbackError(
                f"pullback: the entry point {name!r} is not installed: a module below the "
                "api layer was used before pullback's api was imported.\n"
                "Fix: import pullback (which installs every entry point) before using "
                "its submodules."
            )
        raise AttributeError(name)


ENTRY_POINTS = EntryPoints()


def install_entry_points(**entries) -> None:
    """Install differentiation entry points (called by the api layer at import)."""
    for name, value in entries.items():
        if name not in EntryPoints.NAMES:
            raise PullbackError(f"pullback: unknown entry point {name!r}.")
        setattr(ENTRY_POINTS, name, value)


# The registry pullback's own tables make, built once on first use (tests may swap it with
# ``set_builtin_registry``), and the registry active in this thread or task: ``None`` means
# the built-in one. A ContextVar, so that ``use_registry`` in one thread never changes the
# rules another thread uses.
_builtin: list[RuleRegistry] = []
_active: contextvars.ContextVar[RuleRegistry | None] = contextvars.ContextVar(
    "pullback_active_registry", default=None
)


def builtin_registry() -> RuleRegistry:
    """The registry of every rule that ships with pullback (built once, lazily, by the
    ``rules`` package's builder that the api layer installs in :data:`ENTRY_POINTS`)."""
    if not _builtin:
        with _LOAD_LOCK:
            if not _builtin:
                _builtin.append(ENTRY_POINTS.build_default_registry())
    return _builtin[0]


def set_builtin_registry(registry: RuleRegistry | None) -> RuleRegistry | None:
    """Replace the built-in registry (``None``: build a fresh one on next use); returns the
    previous one, so a test can put it back."""
    with _LOAD_LOCK:
        previous = _builtin[0] if _builtin else None
        _builtin.clear()
        if registry is not None:
            _builtin.append(registry)
    return previous


def default_registry() -> RuleRegistry:
    """The registry that ``grad`` and friends use unless given another one: the one a
    surrounding ``use_registry`` made active in this thread or task, else the built-in one."""
    registry = _active.get()
    return registry if registry is not None else builtin_registry()


@contextlib.contextmanager
def use_registry(registry: RuleRegistry):
    """Make ``registry`` the default inside a ``with`` block, in this thread (or asyncio
    task) only; other threads keep theirs."""
    token = _active.set(registry)
    try:
        yield registry
    finally:
        _active.reset(token)


def rrule(fn, *, registry: RuleRegistry | None = None):
    """Decorator registering a custom rule for ``fn`` (in the default registry).

    The example registers into a copy made the default for its ``with`` block, so that
    running it leaves the built-in registry as it was:

    >>> import pullback
    >>> def cube(x):
    ...     return x ** 3
    >>> mine = pullback.default_registry().copy()
    >>> with pullback.use_registry(mine):
    ...     @pullback.rrule(cube)
    ...     def _(x):
    ...         def cube_pullback(dy):
    ...             return (3 * x ** 2 * dy,)
    ...         return cube(x), cube_pullback
    >>> mine.lookup(cube).fn is cube, pullback.default_registry().lookup(cube)
    (True, None)
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
