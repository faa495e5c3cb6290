"""Step 3 of the pipeline: the static check, "errors that teach".

Before any user code runs, pullback reads the function to differentiate and every user
function it calls (transitively, each once) and reports every construct outside the
supported subset at once, each with its place, the reason and a fix:

>>> def step(x, i):
...     x[i] = 2.0 * x[i]
...     return x.sum()
>>> [d.code for d in check(step)]                   # doctest: +SKIP
['PB101']
>>> raise_if_unsupported(step)                      # doctest: +SKIP
Traceback (most recent call last):
pullback.errors.UnsupportedSyntaxError: cannot differentiate 'step' — 1 unsupported construct
...

The codes are listed in :mod:`pullback.check.codes` and explained, with rewrites, in
``docs/limitations.md``. ``python -m pullback check file.py[:function]`` runs the same check
on a file without importing it (:mod:`pullback.check.cli`).
"""

from __future__ import annotations

import builtins
import types

import gast

from ..callables import ruled_method, user_method_function
from ..errors import Diagnostic, SourceUnavailableError, UnsupportedSyntaxError, describe
from ..guards import LIBRARY_ROOTS, is_library_module_name
from ..resolve import parameter_names
from ..source import load_source, transform_target
from ..transform.list_analysis import ContainerAnalysis
from ..tree_walk import statements
from .aliasing import AliasAnalysis, is_number
from .checker import FunctionChecker, Opaque, is_coroutine
from .codes import CODES
from .helper_writes import owning_source
from .param_rebinding import AT_RUN_TIME
from .taint import callee_active_params

__all__ = [
    "CODES",
    "LiveEnvironment",
    "check",
    "check_function",
    "check_source",
    "is_library_function",
    "raise_if_unsupported",
    "deferred_augassigns",
    "owned_item_augassigns",
    "rebinding_augassigns",
]


# Packages whose Python functions are library code: without a rule they are foreign
# calls (PB301), never transformed (their bodies are full of checks, dispatch and C calls).
LIBRARY_PACKAGES = LIBRARY_ROOTS


def is_library_function(fn) -> bool:
    """Whether ``fn`` belongs to NumPy, SciPy, pullback or the standard library."""
    if getattr(fn, "__pullback_transformable__", False):
        return False  # a rule's pullback written in the subset, to be differentiated again
    return is_library_module_name(getattr(fn, "__module__", None) or "")


class LiveEnvironment:
    """What a callee resolved from a live function's namespace is.

    :meth:`classify` returns one of ``("rule",)`` (a rule or non-differentiable entry),
    ``("user", key, source)`` (a Python function to check next), ``("nosource",)``
    (a Python function whose source cannot be read), ``("library",)`` (a NumPy, SciPy or
    standard-library Python function without a rule), ``("async",)``, ``("opaque",)``
    (unknown to a static check) or ``("foreign",)`` (neither source nor rule).
    """

    # Whether the check stands alone (``pullback check``): then it also reports what only
    # the transformation decides at grad time, from the name-level taint (check/taint.py).
    static = False

    def __init__(self):
        self._sources: dict = {}
        self.failures: dict = {}  # function -> why its source could not be used

    def classify(self, obj, registry):
        if isinstance(obj, Opaque) or getattr(obj, "__pullback_opaque__", False):
            return ("opaque",)  # resolved and checked when called
        if registry.lookup(obj) is not None or obj is builtins.print:
            return ("rule",)
        if ruled_method(obj, registry) is not None:  # A.dot of a library's object
            return ("rule",)
        if is_coroutine(obj):
            return ("async",)
        # a method of an object: its function, `self` an argument
        obj = user_method_function(obj) or obj
        target = transform_target(obj)
        if isinstance(target, types.FunctionType):
            if target is not obj and registry.lookup(target) is not None:
                return ("rule",)
            if is_library_function(target) or is_library_function(obj):
                return ("library",)
            source = self.source(target)
            if source is None:
                return ("nosource",)
            return ("user", target, source)
        if hasattr(obj, "__wrapped__") and is_library_function(obj):  # NumPy dispatchers
            return ("library",)
        return ("foreign",)

    def source(self, fn):
        """``load_source(fn)``, once per function; ``None`` when it has no source."""
        if fn not in self._sources:
            try:
                self._sources[fn] = load_source(fn)
            except SourceUnavailableError as exc:
                self._sources[fn] = None
                self.failures[fn] = exc
        return self._sources[fn]


def _registry(registry):
    if registry is not None:
        return registry
    from ..registry import default_registry

    return default_registry()


def check_source(
    fs,
    registry=None,
    *,
    environment=None,
    seen=None,
    defer_inactive_calls=False,
    active=None,
    param_kinds=None,
) -> list[Diagnostic]:
    """Diagnostics for an already loaded function ``fs`` and the user functions it calls.

    ``seen`` (a set of function keys) lets several calls share the "each once" rule.
    With ``defer_inactive_calls``, calls of ``fs`` itself (not of its callees) to callees
    with neither rule nor source are left to the transform, which refuses them only when
    a differentiated value reaches them (it knows ``wrt``).
    ``param_kinds``: the kinds of a call's arguments by parameter name (None: no call),
    which decide whether ``n += 1`` on a parameter rebinds (check/param_rebinding.py).
    The function's own findings come first, in source order, then each callee's (depth
    first, in the order of the calls).
    """
    registry = _registry(registry)
    env = environment if environment is not None else LiveEnvironment()
    seen = set() if seen is None else seen
    root_key = getattr(fs, "key", None) or getattr(fs, "fn", None) or id(fs)
    seen.add(root_key)
    result: list[Diagnostic] = []

    def run(source, defer=False, active=None, kinds=None):
        checker = FunctionChecker(
            source, registry, env, defer_inactive_calls=defer, active=active, param_kinds=kinds
        )
        result.extend(checker.run())
        return checker, iter(checker.user_calls)

    # Each callee is checked once per set of parameters differentiated values may reach
    # (check/taint.py), so a call that carries no gradient there is not reported.
    stack = [run(fs, defer_inactive_calls, active, param_kinds)]
    # a callee's kinds are known only as it runs (its guard decides), unless no call is
    callee_kinds = None if param_kinds is None else AT_RUN_TIME
    while stack:
        caller, calls = stack[-1]
        user_call = next(calls, None)
        if user_call is None:
            stack.pop()
            continue
        callee_active = _callee_active(caller, user_call)
        key = user_call.key if callee_active is None else (user_call.key, callee_active)
        source = user_call.source
        if user_call.owned:  # checked as the specialization owning what it writes into
            key = ("owned", user_call.owned, user_call.kinds, key)
            source = owning_source(source, user_call.owned, user_call.kinds)
        elif user_call.key in seen:
            continue
        if key in seen:
            continue
        seen.add(key)
        stack.append(run(source, active=callee_active, kinds=callee_kinds))
    return _unique(result)


def _callee_active(caller, user_call):
    """The parameters of the callee that differentiated values may reach, or None."""
    tree = getattr(user_call.source, "tree", None)
    if user_call.bound is None or not isinstance(tree, gast.FunctionDef):
        return None
    return callee_active_params(user_call.call, tree, caller.tainted(), user_call.bound)


def _unique(diagnostics) -> list:
    """Each finding once (a callee checked for two call sites reports its own twice)."""
    seen, out = set(), []
    for d in diagnostics:
        key = (d.code, d.filename, d.line, d.col, d.message)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


def check_function(
    fn,
    registry=None,
    *,
    defer_inactive_calls=False,
    active=None,
    fs=None,
    environment=None,
    param_kinds=None,
) -> list[Diagnostic]:
    """Diagnostics for ``fn`` and every user function it calls (transitively, each once).

    Each function's own findings are in source order; the function's come first, then its
    callees' in call order. Raises :class:`~pullback.errors.SourceUnavailableError` when
    ``fn`` itself has no Python source. Runs no user code. ``defer_inactive_calls``: see
    :func:`check_source`. ``fs``: ``fn``'s source already loaded; the check rewrites its
    tree in place into the form the transformation sees (calls into their rules' forms,
    closures given to solvers and to np.vectorize, nested factories, lambdas as
    definitions), and each rewrite finds nothing left to do the second time, so the
    transform may run them again.
    ``environment``: a :class:`LiveEnvironment` to share (what it learned about callees).
    ``param_kinds``: see :func:`check_source`.
    """
    if fs is None:
        fs = load_source(fn)
    return check_source(
        fs,
        registry,
        environment=environment,
        defer_inactive_calls=defer_inactive_calls,
        active=active,
        param_kinds=param_kinds,
    )


def check(fn, registry=None) -> list[Diagnostic]:
    """Every construct of ``fn`` (and the functions it calls) that pullback cannot differentiate.

    An empty list means the function is inside the supported subset. Each
    :class:`~pullback.errors.Diagnostic` has a code (see ``docs/limitations.md``), the
    place in the file, a reason and a fix; ``d.format()`` renders it.
    """
    return check_function(fn, registry)


def raise_if_unsupported(
    fn, registry=None, wrt=None, fs=None, environment=None, param_kinds=None
) -> None:
    """Raise :class:`~pullback.errors.UnsupportedSyntaxError` listing every finding, if any.

    Called before the transform, which then refuses the calls of ``fn`` with neither rule
    nor source that a differentiated value reaches (and lets the others run). ``wrt``:
    the parameters differentiated (None: all), which decides what the functions ``fn``
    calls receive differentiated values in (check/taint.py). ``fs``: the source the
    transform loaded, read here rather than parsed a second time. ``environment``: a
    :class:`LiveEnvironment` the transform shares (which helpers write into parameters).
    ``param_kinds``: the kinds of the call's arguments by parameter name (see
    :func:`check_source`).
    """
    # an element of *args is differentiated as "args[1]": the parameter is args
    active = None if wrt is None else frozenset(str(w).split("[")[0] for w in wrt)
    diagnostics = check_function(
        fn,
        registry,
        defer_inactive_calls=True,
        active=active,
        fs=fs,
        environment=environment,
        param_kinds=param_kinds,
    )
    if diagnostics:
        # Refused anyway: list every problem, the calls the transform would have judged by
        # activity included (each one a gradient may have to cross).
        found = diagnostics
        diagnostics = check_function(fn, registry, active=active, fs=fs, param_kinds=param_kinds)
        # (without the transform's environment a finding may not show: keep the first list)
        diagnostics = diagnostics or found
        target = transform_target(fn)
        name = getattr(target, "__name__", None) or describe(target)
        raise UnsupportedSyntaxError(name, diagnostics)


def deferred_augassigns(fs, registry=None) -> set:
    """The ``name op= value`` statements of ``fs.tree`` that rebind only when the value is
    immutable as they run (``s = x[i]; s += v``): the transform checks it there."""
    if not _may_defer(fs.tree):
        return set()
    checker = FunctionChecker(fs, _registry(registry), LiveEnvironment())
    return set(
        AliasAnalysis(
            fs.tree, checker._returns_fresh, new_object=checker._makes_user_object
        ).deferred
    )


def _may_defer(tree) -> bool:
    """Cheaply: whether some ``name op= v`` has a ``name = base[index]``, a
    ``name = <number>`` (or ``t, y = 0.0, y0``), a ``name = f(...)`` (or ``name, other =
    f(...)``, ``min``/``max`` among them) or a parameter ``name`` beside it (the origins of
    AliasAnalysis's deferred statements)."""
    augmented, read = set(), set(parameter_names(tree))
    for node in statements(tree):  # both are statements: no expression need be visited
        if isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):
            augmented.add(node.target.id)
        elif isinstance(node, gast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
            if isinstance(target, gast.Name) and (
                isinstance(value, (gast.Subscript, gast.Call)) or is_number(value)
            ):
                read.add(target.id)
            elif isinstance(target, gast.Tuple) and isinstance(value, gast.Call):
                read.update(e.id for e in target.elts if isinstance(e, gast.Name))
            else:
                read.update(_numbers_unpacked(node))
    return bool(augmented & read)


def _numbers_unpacked(node) -> set:
    """``t, y = 0.0, y0``: the names bound to numbers."""
    target, value = node.targets[0], node.value
    if not (
        len(node.targets) == 1
        and isinstance(target, gast.Tuple)
        and isinstance(value, gast.Tuple)
        and len(target.elts) == len(value.elts)
    ):
        return set()
    return {
        t.id
        for t, v in zip(target.elts, value.elts, strict=True)
        if isinstance(t, gast.Name) and is_number(v)
    }


def rebinding_augassigns(fs, registry=None) -> set:
    """The ``name op= value`` statements of ``fs.tree`` that are provably rebindings.

    The transform may rewrite exactly these into ``name = name op value``; every other
    augmented assignment to a name is reported as PB105 by the check.
    """
    checker = FunctionChecker(fs, _registry(registry), LiveEnvironment())
    analysis = AliasAnalysis(fs.tree, checker._returns_fresh, new_object=checker._makes_user_object)
    return set(analysis.allowed)


def owned_item_augassigns(fs, registry=None) -> set:
    """The ``d[k] op= value`` statements of ``fs.tree`` (``d`` a local list or dict) whose
    container holds only arrays of its own, which no other name, container or call holds
    while it changes (check/held_arrays.py): there ``op=`` changing the array in place and
    the rewrite ``d[k] = d[k] op value`` compute the same, so the transform writes it out
    without the guard that refuses an array item when it runs
    (containers_mutation.immutable_item)."""
    found = [
        s
        for s in statements(fs.tree)
        if isinstance(s, gast.AugAssign)
        and isinstance(s.target, gast.Subscript)
        and isinstance(s.target.value, gast.Name)
        and not isinstance(s.target.slice, gast.Slice)
    ]
    if not found:
        return set()
    from .held_arrays import held_arrays_refusal  # (only where such a store is written)

    checker = FunctionChecker(fs, _registry(registry), LiveEnvironment())
    proved: dict = {}
    out = set()
    for s in found:
        name = s.target.value.id
        if name not in proved:
            proved[name] = held_arrays_refusal(checker, name) is None
        if proved[name]:
            out.add(s)
    return out


def returned_items_own(fs, names) -> bool:
    """Whether every array held by the local containers ``names`` of ``fs``'s function is
    new and held by nothing else there, no read keeping one at all (check/held_arrays.py):
    the proof transform/returned_containers.py asks of a callee whose returned container
    its caller changes (``""`` among ``names``: a display returned whole, unproved)."""
    from .held_arrays import held_arrays_refusal  # (only where such a call is changed)

    checker = FunctionChecker(fs, _registry(None), LiveEnvironment())
    return "" not in names and all(
        held_arrays_refusal(checker, name, ever=True) is None for name in names
    )


# The container analysis asks this proof of a callee's returned container; it cannot
# import this package (which imports it), so the package hands it over when imported.
ContainerAnalysis.prove_returned_items = returned_items_own
