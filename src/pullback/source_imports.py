"""Imports inside a differentiated function, bound as the function binds them.

Real code imports where it needs a module (``from scipy import stats`` in the body of the
one function that uses it). An import carries no gradient: it binds a name to a module or
to an object of a module, and at the second call Python only reads ``sys.modules``. So an
import statement at the top level of the function's body is taken as a binding of a free
name, found like a global: the check and the transform resolve ``stats.norm.logpdf``
through it (and reach its rule), the generated code gets the object baked in, and the
guard of every cached adjoint re-reads ``sys.modules`` before each reuse, so a module
replaced in ``sys.modules`` (or an attribute rebound) rebuilds the adjoint, as the import
line would see the new object (:mod:`pullback.guards`).

What stays refused (PB408, by the check): an import nested in a branch or loop (whether it
runs decides what the name is), a name the function also binds another way, and an import
that fails (the error is shown at the import's line).

>>> import gast
>>> tree = gast.parse('''
... def f(x):
...     import numpy.linalg as la
...     from math import sin as s
...     return la.norm(x) + s(1.0)
... ''').body[0]
>>> sorted(function_imports(tree))
['la', 's']
>>> b = function_imports(tree)["s"]
>>> b.module, b.attr
('math', 'sin')
>>> import math
>>> b.value() is math.sin
True
"""

from __future__ import annotations

import importlib
import sys

import gast

from .tree_walk import walk


class ImportBinding:
    """One name bound by an import statement: the module imported (``imports``), and what
    the name reads after it: ``sys.modules[module]`` or, for a from-import, its ``attr``;
    ``node``: the import statement, for messages. (A plain class, not a dataclass:
    dataclasses cost about half a millisecond each at import, paid by every cold start.)"""

    __slots__ = ("imports", "module", "attr", "node")

    def __init__(self, imports: str, module: str, attr: str | None, node):
        self.imports = imports
        self.module = module
        self.attr = attr
        self.node = node

    def __repr__(self) -> str:
        return (
            f"ImportBinding(imports={self.imports!r}, module={self.module!r}, "
            f"attr={self.attr!r}, node={self.node!r})"
        )

    def value(self, import_module=importlib.import_module):
        """Run the import as the function would, and return what the name is bound to.

        ``import_module`` imports a module by name; one that may decline (returns None:
        the file checker, which imports only safe library modules) makes this None too."""
        if import_module(self.imports) is None:
            return None
        module = sys.modules.get(self.module)
        if self.attr is None or module is None:
            return module
        try:
            return getattr(module, self.attr)
        except AttributeError:
            # `from package import submodule` imports the submodule when it is not an
            # attribute yet, as Python's import statement does.
            return import_module(f"{self.module}.{self.attr}")


def function_imports(tree, fn=None) -> dict:
    """The names that import statements directly in the body of ``tree`` bind (not those
    in branches, loops or nested functions), each with its :class:`ImportBinding`. A
    relative import is resolved against ``fn``'s package."""
    out = {}
    for stmt in tree.body:
        for name, binding in _bindings(stmt, fn):
            out[name] = binding
    return out


def _bindings(stmt, fn):
    if isinstance(stmt, gast.Import):
        for alias in stmt.names:
            if alias.asname:
                yield alias.asname, ImportBinding(alias.name, alias.name, None, stmt)
            else:  # `import a.b` binds the package `a`, with `a.b` loaded
                top = alias.name.split(".", 1)[0]
                yield top, ImportBinding(alias.name, top, None, stmt)
    elif isinstance(stmt, gast.ImportFrom):
        module = _absolute(stmt, fn)
        if module is None:
            return
        for alias in stmt.names:
            yield alias.asname or alias.name, ImportBinding(module, module, alias.name, stmt)


def _absolute(stmt, fn) -> str | None:
    """The absolute module name of a from-import (None: a relative import with no
    package to be relative to)."""
    if not stmt.level:
        return stmt.module
    package = None
    if fn is not None:
        g = getattr(fn, "__globals__", {})
        package = g.get("__package__") or None
    if not package:
        return None
    import importlib.util  # (here: importlib.util costs every cold start half a millisecond)

    try:
        return importlib.util.resolve_name("." * stmt.level + (stmt.module or ""), package)
    except ImportError:
        return None


def import_refusal(fs, stmt) -> str | None:
    """Why the import statement ``stmt`` of ``fs``'s function cannot be taken as a binding
    of free names (None: it can). ``fs`` that can import (the running function's source)
    also tries the import, and a failure is the reason."""
    tree = fs.tree
    if not any(stmt is s for s in tree.body):
        return (
            "it is inside a block, so whether it runs decides what its names are bound to"
        )
    can_import = getattr(fs, "fn", None) is not None  # not a file's static view
    bindings = dict(_bindings(stmt, getattr(fs, "fn", None)))
    for alias in stmt.names:
        name = alias.asname or alias.name.split(".", 1)[0]
        if name not in bindings and can_import:
            return "it is a relative import and the function's module has no package"
        if _binding_count(tree, name) != 1:
            return f"the function binds '{name}' another way too"
    if can_import:
        for binding in bindings.values():
            try:
                binding.value()
            except Exception as exc:  # noqa: BLE001 - shown to the user as the reason
                return f"it fails: {type(exc).__name__}: {exc}"
    return None


def accepted_import_names(fs) -> set:
    """The names that imports of ``fs``'s function bind and :func:`import_refusal`
    accepts: free names to resolve, not locals."""
    imports = getattr(fs, "imports", None)
    if imports is None:
        return set()
    names = set()
    refused = {}
    for name, binding in imports().items():
        key = id(binding.node)
        if key not in refused:
            refused[key] = import_refusal(fs, binding.node) is not None
        if not refused[key]:
            names.add(name)
    return names


def _binding_count(tree, name: str) -> int:
    """How many times ``tree`` binds ``name``: parameters, stores, ``del``, nested
    definitions, imports and ``global``/``nonlocal`` declarations (each counts)."""
    count = 0
    a = tree.args
    params = a.posonlyargs + a.args + a.kwonlyargs + [p for p in (a.vararg, a.kwarg) if p]
    count += sum(p.id == name for p in params)
    for node in walk(tree):
        if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load):
            count += node.id == name and not any(node is p for p in params)
        elif isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            count += node is not tree and node.name == name
        elif isinstance(node, (gast.Import, gast.ImportFrom)):
            count += sum((al.asname or al.name.split(".", 1)[0]) == name for al in node.names)
        elif isinstance(node, (gast.Global, gast.Nonlocal)):
            count += name in node.names
    return count
