"""Check the functions of a file without running it (``python -m pullback check``).

A live function knows its globals; a file that is only parsed does not. :class:`FileModule`
reconstructs what it can from the module's top-level statements:

* ``import numpy as np``, ``from math import exp`` and the like for a few well-known,
  side-effect-free modules (:data:`SAFE_MODULES`) are imported for real, so ``np.sum``
  resolves to :func:`numpy.sum` and is looked up in the rule registry — but only from
  outside the checked file's folder and the current directory (a local ``statistics.py``
  would otherwise run during a "static" check): while resolving, those folders are taken
  off ``sys.path``, and a module found there anyway is treated as unknown;
* functions defined in the file are :class:`StaticFunction` callees, checked in turn;
* every other module-level name (assignments, classes, imports of other modules) is an
  :class:`~pullback.check.checker.Opaque` value: calls through it are not reported, since
  only running the file could tell what it is.

:class:`FileFunctionSource` offers the interface of :class:`pullback.source.FunctionSource`
that the checker uses (``tree``, ``location``, ``end_col``, ``file_line``, ``lookup``).
"""

from __future__ import annotations

import builtins
import contextlib
import importlib
import os
import sys

import gast

from ..match_cases import lower_matches
from ..resolve import local_names
from ..source_imports import function_imports
from ..tree_walk import statements, walk
from . import LiveEnvironment
from .checker import Opaque
from .static_classes import StaticClass, static_class

# Modules that may be imported to resolve names: importing them runs no user code.
SAFE_MODULES = frozenset(
    "numpy scipy math cmath operator functools itertools builtins pullback random "
    "statistics collections fractions decimal typing".split()
)
# Calls that give a function a rule: ``rrule(f)``, ``pullback.non_differentiable(f, g)``.
RULE_MAKERS = frozenset({"rrule", "scalar_rule", "non_differentiable", "register"})

_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef, gast.Lambda)
_COMPOUND = (
    gast.If,
    gast.For,
    gast.AsyncFor,
    gast.While,
    gast.Try,
    gast.TryStar,
    gast.With,
    gast.AsyncWith,
)


def _real(path: str) -> str:
    return os.path.normcase(os.path.realpath(path or os.curdir))


def _inside(module, folders: frozenset) -> bool:
    """Whether top-level ``module`` was found in one of ``folders`` (as a file or package).

    Only the folder it was found in counts, not folders above it: a virtual environment
    inside the current directory holds NumPy, which is not user code.
    """
    origin = getattr(module, "__file__", None)
    if not origin:
        return False
    found_in = os.path.dirname(origin)
    if os.path.basename(origin).startswith("__init__."):
        found_in = os.path.dirname(found_in)
    return _real(found_in) in folders


@contextlib.contextmanager
def _path_without(folders: frozenset):
    """``sys.path`` without ``folders`` (and without ``''``, the current directory)."""
    saved = list(sys.path)
    sys.path[:] = [p for p in saved if _real(p) not in folders]
    try:
        yield
    finally:
        sys.path[:] = saved


def _import_safe(name: str, folders: frozenset = frozenset()):
    """Import ``name`` when its top-level package is safe; ``None`` otherwise.

    Nothing is imported from ``folders`` (the checked file's folder and the current
    directory): a module there that shadows a safe name is user code, and this check must
    not run it.
    """
    if name.split(".", 1)[0] not in SAFE_MODULES:
        return None
    top = name.split(".", 1)[0]
    if top in sys.modules and _inside(sys.modules[top], folders):
        return None
    try:
        with _path_without(folders):
            module = importlib.import_module(name)
    except Exception:  # noqa: BLE001 - any failure only means "cannot resolve"
        return None
    return None if _inside(sys.modules.get(top), folders) else module


def _last_name(func) -> str | None:
    if isinstance(func, gast.Name):
        return func.id
    if isinstance(func, gast.Attribute):
        return func.attr
    return None


class StaticFunction:
    """A function defined in the checked file, known by its tree only."""

    def __init__(self, module: FileModule, node, qualname: str, enclosing=()):
        self.module = module
        self.node = node
        self.qualname = qualname
        self.enclosing = tuple(enclosing)
        self._source = None

    @property
    def __name__(self):  # noqa: D401 - mimic a function's name for messages
        return self.node.name

    @property
    def has_rule(self) -> bool:
        return not self.enclosing and self.node.name in self.module.ruled

    @property
    def is_rule_definition(self) -> bool:
        """Decorated with ``@rrule(...)``: a rule's implementation, never transformed."""
        for dec in self.node.decorator_list:
            func = dec.func if isinstance(dec, gast.Call) else dec
            if _last_name(func) in RULE_MAKERS:
                return True
        return False

    def source(self) -> FileFunctionSource:
        if self._source is None:
            self._source = FileFunctionSource(self)
        return self._source

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return Opaque(f"{self.qualname}.{attr}")

    def __repr__(self):
        return f"<function {self.qualname} in {self.module.filename}>"


class FileModule:
    """A parsed file and what its module-level names statically are."""

    def __init__(self, filename: str, text: str):
        self.filename = filename
        # Folders whose modules must never be imported while resolving this file's names.
        self.private_folders = frozenset(
            {_real(os.path.dirname(os.path.abspath(filename))), _real(os.getcwd())}
        )
        self.lines = text.splitlines()
        self.tree = gast.parse(text, filename=filename)
        self.bindings: dict[str, object] = {}
        self.unknown_star = False
        self.ruled: set[str] = set()
        self.functions: dict[str, StaticFunction] = {}
        self._bind_block(self.tree.body)
        self._find_rules()
        self._find_globals()
        # `match` statements become the if/elif chains grad differentiates (match_cases.py)
        self.match_helpers = lower_matches(self.tree, self.lookup) if "match" in text else {}

    # -- module-level bindings -------------------------------------------------------------
    def _import(self, name: str):
        return _import_safe(name, self.private_folders)

    def _bind_block(self, body):
        for stmt in body:
            self._bind(stmt)

    def _bind(self, stmt):
        if isinstance(stmt, gast.Import):
            for alias in stmt.names:
                if alias.asname:
                    value = self._import(alias.name)
                    self.bindings[alias.asname] = value if value is not None else Opaque(alias.name)
                else:
                    root = alias.name.split(".", 1)[0]
                    value = self._import(root)
                    if value is not None:
                        self._import(alias.name)  # makes the submodule an attribute
                    self.bindings[root] = value if value is not None else Opaque(root)
        elif isinstance(stmt, gast.ImportFrom):
            module = self._import(stmt.module or "") if not stmt.level else None
            for alias in stmt.names:
                if alias.name == "*":
                    if module is None:
                        self.unknown_star = True
                    else:
                        public = getattr(module, "__all__", None) or [
                            n for n in dir(module) if not n.startswith("_")
                        ]
                        for name in public:
                            if hasattr(module, name):
                                self.bindings[name] = getattr(module, name)
                    continue
                bound = alias.asname or alias.name
                value = None
                if module is not None:
                    value = getattr(module, alias.name, None)
                    if value is None:
                        value = self._import(f"{stmt.module}.{alias.name}")
                self.bindings[bound] = value if value is not None else Opaque(bound)
        elif isinstance(stmt, (gast.FunctionDef, gast.AsyncFunctionDef)):
            fn = StaticFunction(self, stmt, stmt.name)
            self.bindings[stmt.name] = fn
            self.functions[stmt.name] = fn
        elif isinstance(stmt, gast.ClassDef):
            # opaque, or a class whose construction is refused (check/static_classes.py)
            module = os.path.splitext(os.path.basename(self.filename))[0]
            self.bindings[stmt.name] = static_class(self, module, stmt)
        elif isinstance(stmt, _COMPOUND):
            headers = []
            if isinstance(stmt, (gast.For, gast.AsyncFor)):
                headers.append(stmt.target)
            if isinstance(stmt, (gast.With, gast.AsyncWith)):
                headers += [item.optional_vars for item in stmt.items if item.optional_vars]
            for handler in getattr(stmt, "handlers", ()):
                if handler.name is not None:
                    headers.append(handler.name)
                self._bind_block(handler.body)
            for header in headers:
                self._bind_stores(header)
            for field in ("body", "orelse", "finalbody"):
                self._bind_block(getattr(stmt, field, ()) or ())
        else:
            self._bind_stores(stmt)

    def _bind_stores(self, node):
        """Every name a simple statement binds is opaque: only running it tells its value."""
        for sub in _walk_scope(node):
            if isinstance(sub, gast.Name) and isinstance(sub.ctx, (gast.Store, gast.Del)):
                self.bindings[sub.id] = Opaque(sub.id)

    def _find_rules(self):
        for node in walk(self.tree):
            if isinstance(node, gast.Call) and _last_name(node.func) in RULE_MAKERS:
                name = _last_name(node.func)
                args = node.args if name == "non_differentiable" else node.args[:1]
                for arg in args:
                    if isinstance(arg, gast.Name):
                        self.ruled.add(arg.id)

    def _find_globals(self):
        for node in statements(self.tree):
            if isinstance(node, gast.Global):
                for name in node.names:
                    self.bindings.setdefault(name, Opaque(name))

    # -- lookups -----------------------------------------------------------------------------
    def lookup(self, name: str):
        if name in self.bindings:
            return True, self.bindings[name]
        if hasattr(builtins, name):
            return True, getattr(builtins, name)
        if self.unknown_star:
            return True, Opaque(name)
        return False, None

    def visible_names(self) -> list[str]:
        return list(self.bindings) + dir(builtins)

    def find(self, qualname: str) -> StaticFunction | None:
        """The function ``name`` or ``Class.method`` / ``outer.inner`` defined in the file."""
        parts = qualname.split(".")
        body = self.tree.body
        enclosing = []
        node = None
        for k, part in enumerate(parts):
            node = next(
                (
                    s
                    for s in body
                    if isinstance(s, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef))
                    and s.name == part
                ),
                None,
            )
            if node is None:
                return None
            if k < len(parts) - 1:
                enclosing.append(node)
                body = node.body
        if not isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef)):
            return None
        if not enclosing:
            return self.functions.get(node.name) or StaticFunction(self, node, qualname)
        return StaticFunction(self, node, qualname, enclosing)

    def methods(self) -> list[StaticFunction]:
        """Every function defined in a class of the file (``Class.method``, nested classes
        too), in file order: a class-based model is mostly methods."""
        found = []

        def visit(body, prefix, enclosing):
            for stmt in body:
                if isinstance(stmt, gast.ClassDef):
                    visit(stmt.body, f"{prefix}{stmt.name}.", enclosing + [stmt])
                elif enclosing and isinstance(stmt, (gast.FunctionDef, gast.AsyncFunctionDef)):
                    found.append(StaticFunction(self, stmt, prefix + stmt.name, enclosing))

        visit(self.tree.body, "", [])
        return found

    def top_level_functions(self) -> list[StaticFunction]:
        """Every function defined at the top level, in file order (last definition wins)."""
        seen = {}
        for stmt in self.tree.body:
            if isinstance(stmt, (gast.FunctionDef, gast.AsyncFunctionDef)):
                seen[stmt.name] = self.functions[stmt.name]
        return list(seen.values())


def _walk_scope(node):
    """``gast.walk`` that does not enter nested functions, classes and lambdas."""
    todo = [node]
    while todo:
        current = todo.pop()
        yield current
        if current is not node and isinstance(current, _SCOPES):
            continue
        todo.extend(gast.iter_child_nodes(current))


class FileFunctionSource:
    """A :class:`~pullback.source.FunctionSource` look-alike for a function in a parsed file.

    Lines and columns of the tree are the file's own (the whole file was parsed), so no
    offset is needed.
    """

    first_line = 1
    indent = 0
    is_lambda = False

    def __init__(self, function: StaticFunction):
        self.key = function
        self.module = function.module
        self.filename = function.module.filename
        self.lines = function.module.lines
        self.tree = function.node
        self._imports = None
        self._enclosing_names: set[str] = set()
        for scope in function.enclosing:
            if isinstance(scope, (gast.FunctionDef, gast.AsyncFunctionDef)):
                self._enclosing_names |= local_names(scope)

    @property
    def name(self) -> str:
        return self.tree.name

    def location(self, node) -> tuple[str, int, int]:
        lineno = getattr(node, "lineno", None) or self.tree.lineno
        col = getattr(node, "col_offset", 0) or 0
        return self.filename, lineno, col

    def end_col(self, node) -> int:
        lineno = getattr(node, "lineno", None) or self.tree.lineno
        end_line = getattr(node, "end_lineno", None) or lineno
        col = getattr(node, "col_offset", 0) or 0
        end = getattr(node, "end_col_offset", None)
        if end is None or end_line != lineno:
            end = len(self.file_line(lineno).rstrip())
        return max(end, col + 1)

    def file_line(self, line: int) -> str:
        if 1 <= line <= len(self.lines):
            return self.lines[line - 1]
        return ""

    def lookup(self, name: str):
        if name in self.module.match_helpers:  # a lowered match's test (match_cases.py)
            return True, self.module.match_helpers[name]
        binding = self.imports().get(name)
        if binding is not None:  # an import in the body binds it (source_imports.py)
            value = binding.value(self.module._import)
            return True, value if value is not None else Opaque(name)
        if name in self._enclosing_names:
            return True, Opaque(name)
        return self.module.lookup(name)

    def imports(self) -> dict:
        """The names the body's top-level imports bind (as FunctionSource.imports)."""
        if self._imports is None:
            self._imports = function_imports(self.tree)
        return self._imports

    def visible_names(self) -> list[str]:
        return sorted(self._enclosing_names) + self.module.visible_names()


class StaticEnvironment(LiveEnvironment):
    """Classify callees of a parsed file: its own functions are checked in turn."""

    static = True

    def classify(self, obj, registry):
        if isinstance(obj, StaticClass):
            # (a rule registered in the file for the class: rrule(Plain))
            return ("rule",) if obj.__qualname__ in obj.file.ruled else ("foreign",)
        if isinstance(obj, StaticFunction):
            if obj.has_rule:
                return ("rule",)
            if isinstance(obj.node, gast.AsyncFunctionDef):
                return ("async",)
            return ("user", obj, obj.source())
        return super().classify(obj, registry)
