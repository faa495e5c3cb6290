"""The rewrites that mutation refusals suggest: what to write instead of an in-place
write, an in-place method or an in-place NumPy function, in the user's own spelling."""

from __future__ import annotations

import sys

import gast
import numpy as np

from ..registry import qualified_name

# NumPy functions that write into one of their arguments.
INPLACE_NUMPY_FUNCTIONS = tuple(
    f
    for f in (
        getattr(np, "copyto", None),
        getattr(np, "put", None),
        getattr(np, "place", None),
        getattr(np, "putmask", None),
        getattr(np, "fill_diagonal", None),
        getattr(np, "put_along_axis", None),
    )
    if f is not None
)


def _random_shuffle():
    """``np.random.shuffle`` if NumPy's random module is loaded (a function that calls
    it loaded it), else None: importing it here would cost every ``import pullback``."""
    module = sys.modules.get("numpy.random")
    return None if module is None else getattr(module, "shuffle", None)


OPERATORS = {
    gast.Add: "+",
    gast.Sub: "-",
    gast.Mult: "*",
    gast.MatMult: "@",
    gast.Div: "/",
    gast.FloorDiv: "//",
    gast.Mod: "%",
    gast.Pow: "**",
    gast.LShift: "<<",
    gast.RShift: ">>",
    gast.BitOr: "|",
    gast.BitXor: "^",
    gast.BitAnd: "&",
}


# Binding strength of binary operators (higher binds tighter), for parenthesizing fixes.
PRECEDENCE = {
    gast.BitOr: 1,
    gast.BitXor: 2,
    gast.BitAnd: 3,
    gast.LShift: 4,
    gast.RShift: 4,
    gast.Add: 5,
    gast.Sub: 5,
    gast.Mult: 6,
    gast.MatMult: 6,
    gast.Div: 6,
    gast.FloorDiv: 6,
    gast.Mod: 6,
    gast.Pow: 8,
}


def quote_first(rewrite) -> str:
    """``code`` or ``(code, note)`` as a backquoted example followed by its note."""
    if isinstance(rewrite, tuple):
        code, note = rewrite
        return f"`{code}`{note}"
    return f"`{rewrite}`"


def is_inplace_numpy(obj) -> bool:
    if any(obj is f for f in INPLACE_NUMPY_FUNCTIONS) or (
        obj is not None and obj is _random_shuffle()
    ):
        return True
    return getattr(obj, "__name__", None) == "at" and isinstance(
        getattr(obj, "__self__", None), np.ufunc
    )


def inplace_name(obj) -> str:
    owner = getattr(obj, "__self__", None)
    if isinstance(owner, np.ufunc):
        return f"numpy.{owner.__name__}.at"
    return qualified_name(obj)


def is_whole(index) -> bool:
    if isinstance(index, gast.Constant) and index.value is Ellipsis:
        return True
    return (
        isinstance(index, gast.Slice)
        and index.lower is None
        and index.upper is None
        and index.step is None
    )


def is_scalar_literal(node) -> bool:
    if isinstance(node, gast.UnaryOp):
        node = node.operand
    return isinstance(node, gast.Constant) and isinstance(node.value, (int, float, complex))


def parenthesize(node, text, op) -> str:
    """``text`` as the right operand of ``op``, in parentheses only where needed."""
    if isinstance(node, (gast.BoolOp, gast.Compare, gast.IfExp, gast.Lambda, gast.NamedExpr)):
        return f"({text})"
    if isinstance(node, gast.BinOp):
        outer = next((p for t, p in PRECEDENCE.items() if OPERATORS[t] == op), 0)
        if PRECEDENCE.get(type(node.op), 0) <= outer:
            return f"({text})"
    return text


def plus_one(index: str) -> str:
    """``index + 1`` as source, folded when ``index`` is an integer literal."""
    try:
        return str(int(index) + 1)
    except ValueError:
        return f"{index} + 1"


def args_text(node, text, start=0) -> list[str]:
    return [text(a) for a in node.args[start:]]


def inplace_method_fix(receiver, name, node, text) -> str:
    args = args_text(node, text)
    if name == "sort":
        return (
            f"use a function that returns a new array: `{receiver} = np.sort({receiver})`, or "
            f"`{receiver} = {receiver}[np.argsort({receiver})]` for a 1-d array"
        )
    if name == "partition":
        kth = args[0] if args else "k"
        return f"use `{receiver} = np.partition({receiver}, {kth})`, which returns a new array"
    if name == "fill":
        value = args[0] if args else "v"
        return f"make a new array: `{receiver} = np.full_like({receiver}, {value})`"
    if name == "resize":
        shape = ", ".join(args) if args else "new_shape"
        return f"make a new array: `{receiver} = np.resize({receiver}, ({shape}))`"
    if name in ("put", "itemset"):
        index = args[0] if args else "i"
        value = args[-1] if len(args) > 1 else "v"
        return (
            "build a new array: "
            f"`{receiver} = np.where(np.arange({receiver}.size) == {index}, {value}, {receiver})`"
        )
    return f"compute a new array instead of changing '{receiver}' in place"


def container_fix(receiver, name, node, text) -> str:
    args = args_text(node, text)
    first = args[0] if args else "v"
    if name == "append":
        return (
            f"build a new tuple instead: start with `{receiver} = ()` and write "
            f"`{receiver} = {receiver} + ({first},)`; use `np.stack({receiver})` for an array"
        )
    if name == "extend":
        return f"make a new sequence: `{receiver} = {receiver} + {first}` (both of the same type)"
    if name == "insert":
        value = args[1] if len(args) > 1 else "v"
        return (
            f"make a new list: `{receiver} = {receiver}[:{first}] + [{value}] + "
            f"{receiver}[{first}:]`"
        )
    if name == "pop":
        index = args[0] if args else "-1"
        if index == "-1":
            return f"read and rebind: `v = {receiver}[-1]` then `{receiver} = {receiver}[:-1]`"
        return (
            f"read and rebind: `v = {receiver}[{index}]` then "
            f"`{receiver} = {receiver}[:{index}] + {receiver}[{plus_one(index)}:]`"
        )
    if name == "reverse":
        return f"make a reversed copy: `{receiver} = {receiver}[::-1]`"
    if name == "clear":
        return f"rebind to an empty value: `{receiver} = ()`"
    if name == "add":
        return f"make a new set: `{receiver} = {receiver} | {{{first}}}`"
    if name in ("update", "setdefault", "popitem"):
        return f"build a new dict display instead, e.g. `{receiver} = {{'key': value, ...}}`"
    return f"build a new value instead of changing '{receiver}' in place"


def inplace_function_fix(obj, node, text) -> str:
    args = args_text(node, text)
    name = getattr(obj, "__name__", "")
    target = args[0] if args else "a"
    if name == "at":
        ufunc = getattr(obj, "__self__", None)
        index = args[1] if len(args) > 1 else "idx"
        value = args[2] if len(args) > 2 else "v"
        if ufunc is np.add:
            return (
                f"sum into a new array: `{target} = {target} + np.bincount({index}, "
                f"weights={value}, minlength={target}.size)` (for 1-d integer indices)"
            )
        return f"compute a new array instead, e.g. with `np.where(mask, new_values, {target})`"
    if name == "copyto":
        src = args[1] if len(args) > 1 else "src"
        return f"rebind the name instead: `{target} = {src} * np.ones_like({target})`"
    if name == "fill_diagonal":
        value = args[1] if len(args) > 1 else "v"
        return (
            "build a new array: `"
            f"{target} = np.where(np.eye({target}.shape[0], {target}.shape[1], dtype=bool), "
            f"{value}, {target})`"
        )
    if name in ("put", "place", "putmask"):
        return f"build a new array with a mask: `{target} = np.where(mask, values, {target})`"
    if name == "shuffle":
        return f"use a permuted copy: `{target} = {target}[rng.permutation(len({target}))]`"
    return f"compute a new array instead of writing into '{target}'"


def outside_append_texts(receiver, value="v") -> tuple[str, str, str]:
    """What, why and the fix of PB106 for ``receiver.append(value)`` with a differentiated
    value, on a container the function did not create and may read back, or on a list held
    inside another container (``d[k].append(v)``, ``d.setdefault(k, []).append(v)``), which
    pullback does not follow either. ``receiver`` is the gast node of the list, ``value``
    the appended text.

    >>> import gast
    >>> what, why, fix = outside_append_texts(gast.parse("rows[0]").body[0].value, "x")
    >>> fix
    'rebuild the entry instead of appending to it in place: `rows[0] = rows[0] + [x]`.'
    """
    text = gast.unparse(receiver).strip()
    inner = _inner_list_fix(receiver, value)
    if inner is not None:
        return (
            f"container mutation: '{text}.append(...)' adds a differentiated value to a list "
            "held inside another container",
            "pullback follows appends to a list the function created and names, not to a "
            "list reached through an index or a call, so the gradient through the value read "
            "back from it would be lost.",
            f"rebuild the entry instead of appending to it in place: `{inner}`.",
        )
    return (
        f"container mutation: '{text}.append(...)' adds a differentiated value to a "
        "list that came from outside the function or has another name, which the function "
        "reads back",
        "pullback follows appends only to a list the function created and reads under the "
        "same one name, so the gradient through the value read back from it would be lost.",
        f"build a local list (`{text.split('.')[-1]}_local = []`, append to it and use "
        "it), and copy it out at the end if the caller needs it.",
    )


def _inner_list_fix(receiver, value):
    """The rewrite of ``receiver.append(value)`` for a list inside a container, or None."""
    if isinstance(receiver, gast.Subscript):
        entry = gast.unparse(receiver).strip()
        return f"{entry} = {entry} + [{value}]"
    if (
        isinstance(receiver, gast.Call)
        and isinstance(receiver.func, gast.Attribute)
        and receiver.func.attr == "setdefault"
        and len(receiver.args) == 2
        and not receiver.keywords
    ):
        obj = gast.unparse(receiver.func.value).strip()
        key, default = (gast.unparse(a).strip() for a in receiver.args)
        return f"{obj}[{key}] = {obj}.get({key}, {default}) + [{value}]"
    if isinstance(receiver, gast.Call):
        return f"entry = {gast.unparse(receiver).strip()} + [{value}]` and store `entry"
    return None


def cache_fix(node) -> str | None:
    """The fix for a nested ``def`` under ``@functools.cache`` or ``@lru_cache(...)`` (a
    memo of its recursion), else None: its cache lives for one call of the function."""
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, gast.Call) else decorator
        name = target.attr if isinstance(target, gast.Attribute) else getattr(target, "id", "")
        if name in ("cache", "lru_cache"):
            return (
                f"drop the cache decorator of '{node.name}' (its cache lives for one call, so "
                "the values, and the gradient, are the same without it), or keep the values "
                f"in a dict: `memo = {{}}` here, and a module-level '{node.name}' that takes "
                "what it reads and `memo` as arguments and reads and writes `memo[n]`"
            )
    return None
