"""Does the source pullback read still describe the code that runs?

``inspect.getsource`` reads the file as it is on disk *now*, at the line where the function
started when it was compiled. If the file was edited after the import (a line inserted
above the function, the body changed), that text is another function's, or another
version of this one. pullback differentiates ``fn.__code__``, so it compiles the text it
read, in a scope like the function's (its class, its enclosing function's cells), and
compares the instructions, their arguments and their line numbers with the running code.

>>> def f(x):
...     return x * 2.0
>>> import inspect
>>> lines, start = inspect.getsourcelines(f)
>>> source_matches_code(f, "".join(lines), start)
True
>>> source_matches_code(f, "def f(x):\\n    return x * 3.0\\n", start)
False
"""

from __future__ import annotations

import ast
import dis
import types

from .tree_walk import walk

# Instructions that differ with the scope a function is compiled in, not with its code.
_SCOPE_OPS = frozenset(
    {"COPY_FREE_VARS", "MAKE_CELL", "RESUME", "NOP", "CACHE", "EXTENDED_ARG", "PUSH_NULL"}
)
# Instructions whose argument is an offset: compared by name only (offsets move with the
# scope instructions above).
_OFFSET_OPS = frozenset({"FOR_ITER", "SEND", "SETUP_FINALLY", "SETUP_WITH", "SETUP_CLEANUP"})
# Where a name is read from depends on the scope: compared as one kind of load.
_NAME_LOADS = frozenset({"LOAD_GLOBAL", "LOAD_DEREF", "LOAD_NAME", "LOAD_CLASSDEREF"})
_FUTURE_FLAGS = 0
for _feature in ("annotations", "generator_stop", "division", "barry_as_FLUFL"):
    import __future__

    _FUTURE_FLAGS |= getattr(getattr(__future__, _feature, None), "compiler_flag", 0)


def source_matches_code(fn, text: str, start: int, lambda_at=None, parsed=None) -> bool:
    """Whether ``text`` (the dedented lines holding ``fn``, the first being line ``start``
    of its file) compiles to ``fn.__code__``. ``lambda_at=(line, col)`` names the lambda in
    ``text`` (lines of ``text``, 1-based; col in ``text``) when ``fn`` is one. ``parsed``:
    ``ast.parse(text)`` when the caller has it (read, not changed)."""
    code = fn.__code__
    if parsed is not None:
        tree = parsed
    else:
        try:
            tree = ast.parse(text)
        except SyntaxError:
            return False
    target = _target(tree, lambda_at)
    if target is None:
        return False
    # The text compiles at line 1; its code is then moved to line ``start`` (_shifted).
    shift = start - 1
    # Names the function's module bound by `import`: the compiler calls their attributes
    # without LOAD_METHOD, so declare them the same way (this code is never run).
    imports = [
        ast.Import(names=[ast.alias(name=name)])
        for name in sorted(code.co_names)
        if isinstance(fn.__globals__.get(name), types.ModuleType)
    ]
    module = ast.Module(body=imports + [_enclose(target, fn)], type_ignores=[])
    _locate_scaffold(module, target)
    try:
        compiled = compile(
            module, code.co_filename, "exec", flags=code.co_flags & _FUTURE_FLAGS, dont_inherit=True
        )
    except (SyntaxError, ValueError):
        return False
    candidate = _find_code(compiled, code.co_name, code.co_firstlineno - shift)
    if candidate is None:
        return False
    candidate = _shifted(candidate, shift)
    if _same_code(candidate, code):
        return True
    return fingerprint(candidate) == fingerprint(code)


def lambdas_matching_code(fn, text: str, start: int, candidates) -> list:
    """The lambdas among ``candidates`` (nodes of ``text`` parsed, with ``lineno`` and
    ``col_offset`` in ``text``) whose own source compiles to ``fn.__code__``.

    Before Python 3.11 code objects carry no columns, so several lambdas on one line cannot
    be told apart by position: each is compiled alone and compared with the running code.
    Two lambdas that both match compile to the same instructions, constants and names, so
    they compute the same function (either one is the right source)."""
    return [
        node
        for node in candidates
        if source_matches_code(fn, text, start, (node.lineno, node.col_offset))
    ]


def _same_code(a, b) -> bool:
    """The fast, exact comparison (the usual case: the scope was rebuilt faithfully)."""
    return (
        a.co_code == b.co_code
        and a.co_consts == b.co_consts
        and a.co_names == b.co_names
        and a.co_varnames == b.co_varnames
        and list(a.co_lines()) == list(b.co_lines())
    )


def _shifted(code, n: int):
    """``code`` (and the code nested in it) with every line ``n`` lines further down.

    Line tables count from ``co_firstlineno``, so moving it moves every line (and every
    position) of that code object: the code of the text compiled at line 1 becomes the code
    of the text read at its place in the file, without walking the tree first to shift
    each of its nodes (a long function has tens of thousands)."""
    if not n:
        return code
    consts = tuple(_shifted(c, n) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return code.replace(co_firstlineno=code.co_firstlineno + n, co_consts=consts)


def _locate_scaffold(module, target) -> None:
    """:func:`ast.fix_missing_locations` for the nodes built around ``target`` (imports,
    a class, a scope function), not walking into ``target``: parsed, it is located."""
    _fix_scaffold(
        module, target, {"lineno": 1, "col_offset": 0, "end_lineno": 1, "end_col_offset": 0}
    )


def _fix_scaffold(node, target, inherited: dict) -> None:
    # A function of the module, not a closure calling itself: such a closure is a cycle
    # (function -> cell -> function) holding ``target``, and so the whole parsed tree of
    # the user's function, until the next garbage collection.
    if node is target:
        return
    here = dict(inherited)
    for key in _LOCATION_KEYS.intersection(node._attributes):
        value = getattr(node, key, _MISSING)
        # a start may be present as None; an end that is None is missing
        if value is _MISSING or (value is None and key.startswith("end_")):
            setattr(node, key, here[key])
        else:
            here[key] = value
    for child in ast.iter_child_nodes(node):
        _fix_scaffold(child, target, here)


_LOCATION_KEYS = frozenset({"lineno", "col_offset", "end_lineno", "end_col_offset"})
_MISSING = object()


def _target(tree, lambda_at):
    if lambda_at is None:
        first = tree.body[0] if tree.body else None
        if isinstance(first, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return first
        return None
    line, col = lambda_at
    for node in walk(tree):
        if isinstance(node, ast.Lambda) and (node.lineno, node.col_offset) == (line, col):
            return ast.copy_location(ast.Expr(value=node), node)
    return None


def _enclose(node, fn):
    """Put ``node`` in a scope like ``fn``'s: the class of a method (so private names are
    mangled and ``super()`` has its cell), inside a function binding the free variables."""
    owner = innermost_class(getattr(fn, "__qualname__", "") or "")
    if owner is not None:
        node = ast.ClassDef(
            name=owner, bases=[], keywords=[], body=[node], decorator_list=[], type_params=[]
        )
    freevars = [v for v in fn.__code__.co_freevars if v != "__class__"]
    if freevars:
        binds = [
            ast.Assign(targets=[ast.Name(id=v, ctx=ast.Store())], value=ast.Constant(None))
            for v in freevars
        ]
        node = ast.FunctionDef(
            name="_pullback_scope",
            args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
            body=binds + [node],
            decorator_list=[],
            returns=None,
            type_params=[],
        )
    return node


def innermost_class(qualname: str):
    """The class a function was defined in (directly or in a method's nested function):
    in a qualified name, a class is a part followed by a part other than ``<locals>``."""
    parts = qualname.split(".")
    for k in range(len(parts) - 2, -1, -1):
        if parts[k + 1] != "<locals>" and parts[k] != "<locals>" and parts[k].isidentifier():
            return parts[k]
    return None


def _find_code(code, name: str, firstlineno: int):
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if const.co_name == name and const.co_firstlineno == firstlineno:
                return const
            found = _find_code(const, name, firstlineno)
            if found is not None:
                return found
    return None


def fingerprint(code) -> tuple:
    """The instructions of ``code`` (and of the code nested in it) with their arguments and
    line numbers, leaving out what depends only on the enclosing scope."""
    lines = {}
    for begin, end, line in code.co_lines():
        for offset in range(begin, end, 2):
            lines[offset] = line
    out = []
    after_code = False
    for ins in dis.get_instructions(code):
        op = ins.opname
        if op in _SCOPE_OPS:
            continue
        arg = ins.argval
        if after_code and op == "LOAD_CONST" and isinstance(arg, str):
            # Python 3.10 loads a nested function's qualified name after its code: it
            # names the enclosing scope too, so only its last part is the function's own.
            arg = arg.rsplit(".", 1)[-1]
        after_code = isinstance(ins.argval, types.CodeType)
        if "JUMP" in op or op in _OFFSET_OPS:
            arg = None
        elif isinstance(arg, types.CodeType):
            arg = fingerprint(arg)
        elif op == "LOAD_CONST" or not isinstance(arg, (str, int, type(None))):
            arg = (type(arg).__name__, repr(arg))
        if op in _NAME_LOADS:
            op = "LOAD_FREE_NAME"
        elif op == "LOAD_METHOD":  # `mod.f(...)` skips it when `mod` was imported there
            op = "LOAD_ATTR"
        out.append((op, arg, lines.get(ins.offset)))
    return (
        code.co_argcount,
        code.co_posonlyargcount,
        code.co_kwonlyargcount,
        code.co_varnames,
        tuple(out),
    )
