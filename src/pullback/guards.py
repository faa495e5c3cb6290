"""Guards: what a generated adjoint baked in, re-checked before every reuse.

The transformation decides things from the objects a function's free names refer to when
it runs: which call has a rule, which callee is a user function to transform, which
builtin a name is, the function's code and defaults. Values that only flow as data (a
global array, a configuration flag, a closure cell holding a float) are read live by the
generated code, so they need no guard. Everything else is guarded: a cached adjoint is
reused only while each such name still refers to the very object it was built from.

>>> import numpy as np
>>> def f(x):
...     return np.sin(x)
>>> from pullback.source import load_source
>>> fs = load_source(f)
>>> fs.lookup("np")[0]
True
>>> guard = WorldGuard.from_source(fs, live=set())
>>> guard(), guard.names
(True, ('np',))

A guard is one compiled expression (a chain of ``is`` tests), so checking it costs a few
tens of nanoseconds per baked name.
"""

from __future__ import annotations

import sys
import types

_MISSING = object()

# Roots whose modules are library code (NumPy, SciPy, pullback, the standard library):
# what the check and the callables treat as library functions. Their attribute chains
# (`np.tanh`) are guarded like any other: a library function patched after a gradient was
# built (a test's mock, `np.tanh = np.sin`) is a different callee, so the adjoint is
# built again rather than pairing the new forward value with the old rule's pullback.
LIBRARY_ROOTS = frozenset({"numpy", "scipy", "pullback"}) | frozenset(
    getattr(sys, "stdlib_module_names", ())
)


def current_property(cls, name: str):
    """The property ``obj.name`` runs for every object of ``cls``: the one the class holds
    now when no subclass (defined so far) defines ``name`` again, else None. A property
    read rewritten as a call of its getter (transform/property_reads.py) is guarded by it:
    a subclass defined later that overrides the property, or a property replaced on the
    class, makes the adjoint be built again instead of calling the old getter."""
    for c in cls.__mro__:
        if name in c.__dict__:
            raw = c.__dict__[name]
            break
    else:
        return None
    stack = list(cls.__subclasses__())
    while stack:
        sub = stack.pop()
        if name in sub.__dict__:
            return None
        stack.extend(sub.__subclasses__())
    return raw


def is_library_module_name(name: str) -> bool:
    """Whether a module name belongs to NumPy, SciPy, pullback or the standard library."""
    return name.split(".", 1)[0] in LIBRARY_ROOTS


def is_library_module(value) -> bool:
    return isinstance(value, types.ModuleType) and is_library_module_name(value.__name__)


def is_baked_value(value) -> bool:
    """Whether the transformation looks *into* a value of this kind (modules, classes,
    functions and other callables, whose identity decides rules and callees), so that
    the generated code binds it and a guard checks it; any other value is plain data,
    read live by the generated code."""
    return isinstance(value, (types.ModuleType, type)) or callable(value)


class WorldGuard:
    """Builds guards: ``guard()`` is True while everything an adjoint was built from is
    unchanged. A guard is a plain generated function (its ``source`` and the ``names``
    it watches are attributes), every watched object bound as a default argument so that
    each test is a local load, an attribute read and an ``is``."""

    @staticmethod
    def from_source(fs, live: set):
        """The guard for a function whose free names were resolved through ``fs``
        (``fs.resolved`` and ``fs.resolved_chains``); names in ``live`` are read live
        by the generated code and are not guarded."""
        fn = fs.fn
        env = {
            "_F": fn,
            "_G": fn.__globals__,
            "_C": fn.__closure__,
            "_M": _MISSING,
            "_S": sys.modules,
            "_P": current_property,
            "_code": fn.__code__,
            "_defaults": fn.__defaults__,
            "_kwdefaults": fn.__kwdefaults__,
        }
        tests = [
            "_F.__code__ is _code",
            "_F.__defaults__ is _defaults",
            "_F.__kwdefaults__ is _kwdefaults",
        ]
        names = []

        def const(value) -> str:
            name = f"_k{len(env)}"
            env[name] = value
            return name

        for name, (where, value) in sorted(fs.resolved.items()):
            if name in live:
                continue
            names.append(name)
            if where[0] == "cell":
                tests.append(f"_C[{where[1]}].cell_contents is {const(value)}")
            elif where[0] == "global":
                tests.append(f"_G.get({name!r}, _M) {_same(value)} {const(value)}")
            elif where[0] == "import":  # what the import line would bind now
                tests.append(f"{_root_expr(name, where)} {_same(value)} {const(value)}")
            else:  # a builtin: guarded against a global of the same name appearing
                tests.append(f"{name!r} not in _G")
        for parts, value in sorted(fs.resolved_chains.items()):
            root = fs.resolved.get(parts[0])
            if root is None or parts[0] in live:
                continue
            expr = _root_expr(parts[0], root[0])
            tests.append(f"{expr}.{'.'.join(parts[1:])} {_same(value)} {const(value)}")
            names.append(".".join(parts))
        for parts, cls in sorted(fs.type_guards.items()):
            root = fs.resolved.get(parts[0])
            if root is None:
                continue
            expr = ".".join([_root_expr(parts[0], root[0])] + list(parts[1:]))
            tests.append(f"type({expr}) is {const(cls)}")
            names.append("type(" + ".".join(parts) + ")")
        for (cls, attr), prop in fs.property_guards.items():
            tests.append(f"_P({const(cls)}, {attr!r}) is {const(prop)}")
            names.append(f"{cls.__qualname__}.{attr}")
        params = ", ".join(f"{k}={k}" for k in env)
        body = " and ".join(tests)
        source = (
            f"def _world_is_current({params}):\n"
            "    try:\n"
            f"        return {body}\n"
            "    except Exception:  # an emptied cell, a deleted attribute: rebuild\n"
            "        return False\n"
        )
        bound = dict(env)  # the objects the test reads (exec adds __builtins__ to env)
        exec(compile(source, "<pullback guard>", "exec"), env)  # noqa: S102 - generated
        guard = env["_world_is_current"]
        guard.source = source
        guard.names = tuple(names)
        # The test itself and the objects it reads: what a caller that generates code of
        # its own (running.hot_entry) inlines instead of calling the guard.
        guard.test = body
        guard.env = bound
        return guard


def _same(value) -> str:
    """How a guard compares what a name reads now with what the adjoint was built from.

    Identity, except for a bound method: ``rng.normal`` makes a new method object at
    every read, so identity would never hold and the adjoint would be rebuilt at every
    call; two bound methods are ``==`` exactly when they bind the same function to the
    very same object.
    """
    bound = getattr(value, "__self__", None)
    if isinstance(value, (types.MethodType, types.BuiltinMethodType)) and not (
        bound is None or isinstance(bound, types.ModuleType)
    ):
        return "=="
    return "is"


def _root_expr(name: str, where: tuple) -> str:
    if where[0] == "cell":
        return f"_C[{where[1]}].cell_contents"
    if where[0] == "global":
        return f"_G[{name!r}]"
    if where[0] == "import":  # sys.modules[module] or an attribute of it
        module = f"_S[{where[1]!r}]"
        return module if where[2] is None else f"getattr({module}, {where[2]!r})"
    return f"__builtins__[{name!r}]"  # pragma: no cover - builtins have no user chains
