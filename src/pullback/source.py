"""Step 1 of the pipeline: a function's source, parsed with gast, with its place in the file.

>>> def square(x):
...     return x * x
>>> fs = load_source(square)          # doctest: +SKIP
>>> fs.tree.name, fs.location(fs.tree.body[0])[1:]   # doctest: +SKIP
('square', (2, 4))

Every node keeps line numbers relative to the parsed (dedented) text; :meth:`location`
maps them back to the user's file.
"""

from __future__ import annotations

import ast
import builtins
import copy
import functools
import inspect
import linecache
import textwrap
import types

import gast

from .errors import SourceUnavailableError, describe, location_text
from .gast_convert import ast_to_gast
from .lazy_patterns import LazyPattern
from .match_cases import lower_matches
from .source_cache import cached_file, checked_before, keep_checked, keep_read, read_before
from .source_imports import function_imports
from .source_lambdas import lambda_tree
from .source_match import innermost_class, source_matches_code
from .tree_walk import copy_tree, walk


class FunctionSource:
    """A user's function as pullback sees it.

    ``tree`` is a gast ``FunctionDef`` without decorators (a lambda becomes a ``def``
    returning its body). Line ``k`` of ``tree`` is line ``first_line + k - 1`` of
    ``filename``; columns are shifted by ``indent``. (A plain class, not a dataclass:
    dataclasses cost about half a millisecond each at import, paid by every cold start.)
    """

    def __init__(self, fn: types.FunctionType, filename: str, first_line: int, indent: int,
                 lines: list[str], tree: gast.FunctionDef, is_lambda: bool = False,
                 namespace: dict | None = None, file_text: object = None):  # fmt: skip
        self.fn = fn
        self.filename = filename
        self.first_line = first_line
        self.indent = indent
        self.lines = lines
        self.tree = tree
        self.is_lambda = is_lambda
        self.namespace = {} if namespace is None else namespace
        # Every free name resolved so far: name -> (where, value), where is ("cell", k),
        # ("global",), ("builtin",) or ("import", module, attr) (an import in the body).
        # What the transformation baked in is guarded from this.
        self.resolved: dict = {}
        # Attribute chains resolved to objects: ("np", "linalg", "solve") -> object.
        self.resolved_chains: dict = {}
        # Live data whose class decided how it is indexed: ("table",) -> its class.
        self.type_guards: dict = {}
        # Properties read as calls of their getter: (class, name) -> the property
        # (transform/property_reads.py; guarded by guards.current_property).
        self.property_guards: dict = {}
        # Locals and parameters renamed because generated code uses their names itself.
        self.renames: dict = {}
        # The whole file's text, shared with every function read from it (see
        # source_lines): holding it keeps it in the weak file cache while this function's
        # adjoints live.
        self.file_text = file_text
        # Names bound by import statements at the top of the body (source_imports.py).
        self._imports: dict | None = None

    def user_kwdefaults(self):
        """``fn.__kwdefaults__`` keyed by the names the generated code uses."""
        kw = self.fn.__kwdefaults__
        if not kw or not self.renames:
            return kw
        return {self.renames.get(k, k): v for k, v in kw.items()}

    @property
    def name(self) -> str:
        return self.fn.__name__

    def location(self, node) -> tuple[str, int, int]:
        """``(filename, line, col)`` of a node in the user's file (line 1-based, col 0-based)."""
        lineno = getattr(node, "lineno", None) or 1
        col = getattr(node, "col_offset", 0) or 0
        return self.filename, self.first_line + lineno - 1, col + self.indent

    def where(self, node) -> str:
        """``file:line:col`` of a node (col 1-based), as messages show a place."""
        return location_text(*self.location(node))

    def end_col(self, node) -> int:
        """End column of a node in the file, clipped to the node's first line."""
        lineno = getattr(node, "lineno", None) or 1
        end_line = getattr(node, "end_lineno", None) or lineno
        col = getattr(node, "col_offset", 0) or 0
        end = getattr(node, "end_col_offset", None)
        text = self.file_line(self.first_line + lineno - 1)
        if end is None or end_line != lineno:
            end = len(text.rstrip()) - self.indent
        return max(end + self.indent, col + self.indent + 1)

    def file_line(self, line: int) -> str:
        """The text of a 1-based line of the user's file (without the newline)."""
        k = line - self.first_line
        if 0 <= k < len(self.lines):
            return self.lines[k].rstrip("\n")
        return linecache.getline(self.filename, line).rstrip("\n")

    def lookup(self, name: str):
        """Resolve a free name as the function would: closure, then globals, then builtins.

        Returns ``(True, value)`` or ``(False, None)``, and remembers where it was found
        (see ``resolved``).
        """
        where, value = self.locate(name)
        if where is None:
            return False, None
        self.resolved[name] = (where, value)
        return True, value

    def locate(self, name: str):
        """``(where, value)`` of a free name (``where`` as in ``resolved``), or
        ``(None, None)`` when the function cannot see it."""
        if name in self.namespace:  # a lifted nested function (transform/closures.py)
            return ("builtin",), self.namespace[name]
        binding = self.imports().get(name)
        if binding is not None:  # `from scipy import stats` in the body: as Python binds it
            try:
                value = binding.value()
            except Exception:  # the check shows the import's own error at its line
                return None, None
            return ("import", binding.module, binding.attr), value
        return locate_free_name(self.fn, name)

    def imports(self) -> dict:
        """The names the body's top-level import statements bind (name -> binding)."""
        if self._imports is None:
            self._imports = function_imports(self.tree, self.fn)
        return self._imports


def locate_free_name(fn, name: str):
    """Where ``fn`` finds the free name ``name`` and its value: ``(("cell", k), v)``,
    ``(("global",), v)``, ``(("builtin",), v)``, or ``(None, None)``."""
    code = fn.__code__
    if fn.__closure__:
        for k, (cell_name, cell) in enumerate(zip(code.co_freevars, fn.__closure__, strict=False)):
            if cell_name == name:
                try:
                    return ("cell", k), cell.cell_contents
                except ValueError:  # an empty cell: the name is not bound yet
                    return None, None
    g = fn.__globals__
    if name in g:
        return ("global",), g[name]
    b = g.get("__builtins__", builtins)
    if isinstance(b, dict):
        if name in b:
            return ("builtin",), b[name]
    elif hasattr(b, name):
        return ("builtin",), getattr(b, name)
    return None, None


def _describe(fn) -> str:
    return describe(fn)


def transform_target(fn):
    """The function whose code pullback transforms when asked to differentiate ``fn``.

    A decorated function is differentiated as it runs: the wrapper, which calls what it
    wraps. ``__wrapped__`` is followed only where that changes nothing: a pure cache
    (``functools.cache``/``lru_cache``) or a wrapper whose whole body is
    ``return wrapped(*args, **kwargs)``. A wrapper that does anything more (doubles the
    result, converts the inputs) is transformed itself.
    """
    seen = set()
    while id(fn) not in seen:
        seen.add(id(fn))
        wrapped = getattr(fn, "__wrapped__", None)
        if wrapped is None or not callable(wrapped):
            return fn
        if isinstance(fn, functools._lru_cache_wrapper) or _forwards_only(fn, wrapped):
            fn = wrapped
        else:
            return fn
    return fn


def _forwards_only(wrapper, wrapped) -> bool:
    """Whether ``wrapper``'s body is exactly ``return wrapped(*args, **kwargs)`` (after an
    optional docstring), with ``wrapped`` read from its closure or globals."""
    if not isinstance(wrapper, types.FunctionType):
        return False
    try:
        lines, start, _ = source_lines(wrapper.__code__)  # not through __wrapped__
        text = textwrap.dedent("".join(lines))
        tree = ast.parse(text).body[0]
    except (OSError, TypeError, SyntaxError, IndexError):
        return False
    if not isinstance(tree, ast.FunctionDef) or not source_matches_code(wrapper, text, start):
        return False
    a = tree.args
    if a.posonlyargs or a.args or a.kwonlyargs or a.vararg is None or a.kwarg is None:
        return False
    body = tree.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # a docstring
    if len(body) != 1 or not isinstance(body[0], ast.Return):
        return False
    call = body[0].value
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and len(call.args) == 1
        and isinstance(call.args[0], ast.Starred)
        and isinstance(call.args[0].value, ast.Name)
        and call.args[0].value.id == a.vararg.arg
        and len(call.keywords) == 1
        and call.keywords[0].arg is None
        and isinstance(call.keywords[0].value, ast.Name)
        and call.keywords[0].value.id == a.kwarg.arg
    ):
        return False
    where, value = locate_free_name(wrapper, call.func.id)
    return where is not None and value is wrapped


# Where inspect.findsource looks for a code object's first line (a def, a decorator or a
# line with a lambda), from co_firstlineno upwards.
_DEF_LINE = LazyPattern(r"^(\s*def\s)|(\s*async\s+def\s)|(.*(?<!\w)lambda(:|\s))|^(\s*@)")


def source_lines(code):
    """``inspect.getsourcelines(code)`` for a code object, reading each file once (cached
    by name, modification time and size) instead of through ``inspect.getmodule``, which
    walks every loaded module on its first call. Returns ``(lines, first_line, file_text)``;
    ``file_text`` is None where inspect was asked."""
    return _source_block(code)[:3]


def _source_block(code):
    """:func:`source_lines` and ``(text, module)``: the block dedented and parsed with
    :mod:`ast` while finding it (so :func:`load_source` parses it once), or None."""
    text = cached_file(code.co_filename)
    if text is not None:
        lines = text.lines
    elif _is_pseudo_file(code.co_filename) and linecache.getlines(code.co_filename):
        # A doctest example's or a notebook cell's lines, as inspect would read them, without
        # its getmodule, which walks every loaded module for such a name (tens of
        # milliseconds each time in a process that has imported SciPy).
        lines = linecache.getlines(code.co_filename)
    else:
        lines, start = inspect.getsourcelines(code)
        return lines, start, None, None
    lnum = code.co_firstlineno - 1
    if not 0 <= lnum < len(lines):
        raise OSError("lineno is out of bounds")
    while lnum > 0 and not _DEF_LINE.match(lines[lnum]):
        lnum -= 1
    block, parsed = _def_block_parsed(lines, lnum)
    if block is None:
        block = inspect.getblock(lines[lnum:])
    return block, lnum + 1, text, parsed


def _is_pseudo_file(filename: str) -> bool:
    """A name like ``<doctest m.f[0]>``: no file; its lines, where any, are linecache's
    (doctest serves its examples' there; a notebook registers its cells)."""
    return filename.startswith("<") and filename.endswith(">")


# A ``def`` (or a decorator above one) starts the block; lambdas go through inspect.
_DEF_START = LazyPattern(r"\s*(@|(async\s+)?def\s)")
_DEF_ONLY = LazyPattern(r"\s*(async\s+)?def\s")
_CLOSING = (")", "]", "}")


def _def_block(lines, start):
    """The lines of the function whose ``def`` starts at ``lines[start]`` (see
    :func:`_def_block_parsed`), or None."""
    return _def_block_parsed(lines, start)[0]


def _def_block_parsed(lines, start):
    """``(block, (text, module))``: the lines of the function whose ``def`` (or first
    decorator) is ``lines[start]``, found by indentation, with their dedented text and its
    ``ast`` module; ``(None, None)`` where that is unsure (then ``inspect.getblock``
    tokenizes; its tokenizer costs milliseconds on first use, a share of cold start).

    The block runs to the last statement before the first line indented no deeper than
    the ``def`` that is not blank, a comment or a closing bracket; it is used only if it
    parses as exactly one function definition, so a multi-line string or bracket that
    goes back to the left margin falls back to the tokenizer.
    """
    first = lines[start]
    if not _DEF_START.match(first):
        return None, None
    base = len(first) - len(first.lstrip())
    k = start
    while not _DEF_ONLY.match(lines[k]):  # decorators, possibly over several lines
        k += 1
        if k >= len(lines):
            return None, None
    end = k + 1  # one past the last line of code in the block
    for j in range(k + 1, len(lines)):
        line = lines[j]
        body = line.lstrip()
        if not body or body.startswith("#"):
            continue
        if len(line) - len(body) <= base and not body.startswith(_CLOSING):
            break
        end = j + 1
    block = lines[start:end]
    text = textwrap.dedent("".join(block))
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None, None
    if len(tree.body) != 1 or not isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None, None
    return block, (text, tree)


def factory_code(name, parameters, body, filename: str, first_line: int = 1):
    """The code object of ``def name(*parameters): body``, compiled alone as ``filename``
    with its lines moved to start at ``first_line`` (a traceback names the user's line): a
    factory whose body makes functions that close over its parameters (closures made at
    run time, lifted functions, a plain class's constructor)."""
    factory = gast.FunctionDef(
        name=name,
        args=gast.arguments(
            [gast.Name(p, gast.Param(), None, None) for p in parameters], [], None, [], [], None, []
        ),
        body=body,
        decorator_list=[],
        returns=None,
        type_comment=None,
        type_params=[],
    )
    module = gast.Module(body=[factory], type_ignores=[])
    gast.fix_missing_locations(module)
    compiled = gast.gast_to_ast(module)
    if first_line != 1:
        ast.increment_lineno(compiled, first_line - 1)
    code = compile(compiled, filename, "exec")
    return next(c for c in code.co_consts if isinstance(c, types.CodeType))


def with_source(fn, fs: FunctionSource, tree: gast.FunctionDef, namespace=None):
    """``fn``, made by pullback from ``tree`` (a part of ``fs``'s function, or a rewrite of
    it: a lifted def, a plain class's constructor), told where its source is
    (:func:`load_source` reads ``__pullback_source__``): the user's own lines, a fresh copy
    of ``tree`` each time (the passes rewrite the tree they are given), seeing ``namespace``
    (a fresh copy too) besides its globals."""
    kept = dict(namespace or {})

    def source():
        return FunctionSource(
            fn=fn,
            filename=fs.filename,
            first_line=fs.first_line,
            indent=fs.indent,
            lines=fs.lines,
            tree=copy.deepcopy(tree),
            namespace=dict(kept),
            file_text=fs.file_text,
        )

    fn.__pullback_source__ = source
    return fn


def load_source(fn) -> FunctionSource:
    """Read and parse ``fn``'s source, or raise :class:`SourceUnavailableError`."""
    fn = transform_target(fn)
    lifted = getattr(fn, "__pullback_source__", None)  # a lifted nested function
    if lifted is not None:
        return lifted()
    if not isinstance(fn, types.FunctionType):
        kind = type(fn).__name__
        article = "an" if kind[0] in "aeiou" else "a"
        raise SourceUnavailableError(
            f"cannot differentiate {_describe(fn)!s}: it is {article} {kind}, not a Python "
            "function, "
            "so it has no source to transform.\n"
            "Fix: register a rule for it with `@pullback.rrule(fn)`, or declare it "
            "non-differentiable with `pullback.non_differentiable(fn)`."
        )
    before = read_before(fn)
    if before is not None:  # (a tree of its own: the passes rewrite the tree they get)
        text, read = before
        return _source_from(fn, text, *read[:4], copy_tree(read[4]), *read[5:])
    try:
        # What runs, not __wrapped__; ``parsed``: the block as ast parsed it to find it.
        raw_lines, start, file_text, parsed = _source_block(fn.__code__)
    except (OSError, TypeError) as exc:
        raise SourceUnavailableError(
            f"cannot differentiate '{_describe(fn)}': its source is not available "
            f"({exc}). Functions made by exec/eval or typed at an interactive prompt "
            "without a file have no source.\n"
            "Fix: define the function in a .py file, or register a rule for it with "
            "`@pullback.rrule(fn)`."
        ) from None
    filename = fn.__code__.co_filename
    if file_text is None and not _is_pseudo_file(filename):  # (which it would give back)
        filename = inspect.getsourcefile(fn.__code__) or filename
    first = raw_lines[0]
    indent = len(first) - len(first.lstrip())
    lines = [_dedent_line(ln, indent) for ln in raw_lines]
    text = "".join(lines)
    is_lambda = fn.__name__ == "<lambda>"
    if is_lambda:
        tree, parsed_text, position = lambda_tree(fn, text, filename, start, indent)
        _require_match(fn, parsed_text, start, filename, position)
    else:
        # One parse of the text: the gast tree is a copy of the ast one, which the check
        # that the text still compiles to the running code then reads (and shifts).
        if parsed is not None and parsed[0] == text:
            py_module = parsed[1]
        else:
            try:
                py_module = ast.parse(text)
            except SyntaxError as exc:  # pragma: no cover - inspect gave us a partial block
                raise SourceUnavailableError(
                    f"cannot parse the source of '{_describe(fn)}' ({exc.msg})."
                ) from None
        tree = ast_to_gast(py_module).body[0]
        if not isinstance(tree, gast.FunctionDef):
            # Python 3.13's inspect reads the line the code starts on, whatever is there now:
            # text that is no function there means the file was edited (said so first).
            _require_match(fn, text, start, filename, parsed=py_module)
            raise SourceUnavailableError(
                f"cannot differentiate '{_describe(fn)}': its source is not a plain "
                "function definition."
            )
        tree.decorator_list = []
        _require_match(fn, text, start, filename, parsed=py_module)
    _mangle_private_names(tree, fn)
    read = (filename, start, indent, raw_lines, copy_tree(tree), is_lambda, "match" in text)
    if file_text is not None:
        keep_read(fn, file_text, read)
    return _source_from(fn, file_text, *read[:4], tree, *read[5:])


def _source_from(fn, file_text, filename, start, indent, raw_lines, tree, is_lambda, has_match):
    """The :class:`FunctionSource` of ``fn`` read as ``tree`` (a tree of its own)."""
    fs = FunctionSource(
        fn=fn,
        filename=filename,
        first_line=start,
        indent=indent,
        lines=list(raw_lines),
        tree=tree,
        is_lambda=is_lambda,
        file_text=file_text,
    )
    if has_match:  # `match` statements become the if/elif chains they stand for
        fs.namespace.update(lower_matches(tree, fs.lookup))
    return fs


def _dedent_line(line: str, indent: int) -> str:
    """``line`` without the function's indentation, keeping its line ending (a blank line
    shorter than the indentation used to lose it, shifting every later line)."""
    body = line.rstrip("\r\n")
    end = line[len(body) :]
    if body[:indent].strip() == "":
        return body[indent:] + end
    return body.lstrip() + end  # a continuation line of a string, less indented


def _mangle_private_names(tree, fn) -> None:
    """Spell private names (``self.__scale``) as Python runs them inside a class body
    (``self._Model__scale``): the generated code is compiled outside the class."""
    owner = innermost_class(getattr(fn, "__qualname__", "") or "")
    prefix = None if owner is None else owner.lstrip("_")
    if not prefix:
        return

    def mangled(name):
        if name and name.startswith("__") and not name.endswith("__") and "." not in name:
            return f"_{prefix}{name}"
        return name

    for node in walk(tree):
        if isinstance(node, gast.Attribute):
            node.attr = mangled(node.attr)
        elif isinstance(node, gast.Name):
            node.id = mangled(node.id)
        elif isinstance(node, gast.keyword) and node.arg:
            node.arg = mangled(node.arg)


def _require_match(fn, text: str, start: int, filename: str, lambda_at=None, parsed=None) -> None:
    """Refuse source text that no longer compiles to the code that runs (the file was
    edited after the import): never differentiate another function's text. ``parsed``:
    ``text`` already parsed by :func:`ast.parse` (and not needed after)."""
    # Checked once per (code, text): the verdict lives on the function and dies with it.
    key = (fn.__code__, text, start, lambda_at)
    if checked_before(fn, key):
        return
    if source_matches_code(fn, text, start, lambda_at, parsed=parsed):
        keep_checked(fn, key)
        return
    if "@pytest_ar" in getattr(fn, "__globals__", {}) and "assert" in text:
        # pytest compiled the module with its own assert statements: the code that runs is
        # not the code of the text, though the file is unchanged
        raise SourceUnavailableError(
            f"cannot differentiate '{_describe(fn)}': pytest rewrote the assert statements "
            f"of {filename} (a test module), so the code that runs is not the code of its "
            "source.\nFix: define the function in a module that is not a test module and "
            "import it, or add PYTEST_DONT_REWRITE to the test module's docstring."
        )
    raise SourceUnavailableError(
        f"cannot differentiate '{_describe(fn)}': its source in {filename} no longer matches "
        f"the code that runs (the file was changed after '{fn.__module__}' was imported, or "
        "the function was made from other text).\n"
        "Fix: reload the module (importlib.reload) or restart Python, so the code that runs "
        "is the code in the file."
    )
