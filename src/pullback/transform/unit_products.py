"""In grad's fused sweeps, a product by the sum's cotangent of ones may reuse the other
factor (``unit_cotangents.py``) instead of allocating a copy of it.

The gradient of ``np.sum(np.sin(x) * x)`` pulls the seed ``1.0`` back through ``np.sum``
to a broadcast of ones (no memory); each factor then gets ``ones * other``, a new array as
large as ``x`` that equals ``other`` bit for bit. At the peak that product is the third
full-size array beside the forward's ``sin(x)`` and the gradient being accumulated. Here
such a product, ``t = u * v`` or ``t = unbroadcast(u * v, p)`` with ``u`` a cotangent that
may be that broadcast, calls ``unit_times(u, v)`` (or ``times_unit(v, u)``, the operands'
order kept) where ``u`` is an array with a base (a view), which returns ``v`` itself when
it checks that ``u`` is a broadcast 1 of ``v``'s shape and dtype, and the product
otherwise; any other ``u`` (a short vector's filled cotangent) is multiplied inline, with
no call.

``t`` may then be an alias of ``v`` (an argument, a forward value), so the rewrite is made
only where that alias can never be seen, proved on the generated text:

* nothing in the function writes into an array (no subscript or attribute store, no
  augmented assignment, no ``out=``, no nested function, ``del``, ``exec``...);
* ``v`` is a parameter (never written, by design) or a name bound once, at top level, to a
  new array (an operator's or a NumPy ufunc's result), and every mention of ``v`` reads it
  into a new value (an operand of an operator or a comparison, an argument of a ufunc, the
  shape reference of ``unbroadcast``): no other name can ever hold it;
* after the rewritten line, ``t`` is only an operand of operators (whose results are new
  arrays) until it is bound again; it is never returned, passed to a call, copied to
  another name or mentioned inside a loop or an ``if``.

Which cotangents may be the broadcast ones is followed from the seed through copies,
``_sum_pullback(d, ...)[0]`` and ``unbroadcast(d, ...)``; that is only where a check is
worth its call, the check itself decides. Only names that may hold an array are
considered (a scalar's product costs less than the call).

>>> body = [Line("_t1 = np.sin(x)"), Line("d__t2 = _sum_pullback(_dret, _t1)[0]"),
...         Line("d__t1 = unbroadcast(d__t2 * x, _t1)"), Line("d_x = d__t1 * _t1"),
...         Line("return (d_x,)")]
>>> text = unit_products(body, "_dret", lambda name: True)[2].text
>>> print(text.replace(" if ", "\\n    if ").replace(" else ", "\\n    else "))
d__t1 = unbroadcast(d__t2 * x
    if d__t2.__class__ is not _pb_ndarray or d__t2.base is None
    else _pb_unit_times(d__t2, x), _t1)
"""

from __future__ import annotations

import ast

import numpy as np

from ..tree_walk import walk
from .code import Line, identifiers, replace
from .direct_reads import writes_only_its_array

_SUM_PULLBACK = "_sum_pullback"
_HIDDEN = frozenset({"locals", "vars", "exec", "eval", "globals"})


def _statements(text: str):
    try:
        return ast.parse(text).body
    except SyntaxError:
        return None


def _header_statements(header: str):
    return _statements(header + "\n    pass")


def _walk_texts(block):
    """(text, is a top-level line, statements) for every line and compound header."""
    for item in block:
        if isinstance(item, Line):
            yield item.text, True, _statements(item.text)
        else:
            yield from _nested_texts(item)


def _nested_texts(item):
    yield item.header, False, _header_statements(item.header)
    for inner in (item.body, item.orelse or ()):
        for sub in inner:
            if isinstance(sub, Line):
                yield sub.text, False, _statements(sub.text)
            else:
                yield from _nested_texts(sub)


def _plain_texts(block):
    for item in block:
        if isinstance(item, Line):
            yield item.text
        else:
            yield item.header
            yield from _plain_texts(item.body)
            yield from _plain_texts(item.orelse or ())


def _writes_or_hides(statements) -> bool:
    """Whether these statements may write into an array or read names out of sight."""
    for node in (n for s in statements for n in walk(s)):
        if isinstance(node, (ast.AugAssign, ast.Delete, ast.Global, ast.Nonlocal)):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return True
        if isinstance(node, (ast.NamedExpr, ast.Starred)):
            return True
        if isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, ast.Store):
            return True
        if isinstance(node, ast.keyword) and node.arg in (None, "out", "where"):
            return True
        if isinstance(node, ast.Name) and node.id in _HIDDEN:
            return True
    return False


def _is_ufunc_call(node) -> bool:
    """``<module>.<ufunc>(...)`` without keywords: its result is a new array."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and isinstance(getattr(np, node.func.attr, None), np.ufunc)
        and not node.keywords
    )


def _is_call_of(node, name: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name


def _parents(statements) -> dict:
    return {
        id(child): parent
        for s in statements
        for parent in walk(s)
        for child in ast.iter_child_nodes(parent)
    }


def _mentions(statements, name: str):
    """``(node, parent)`` for each ``Name`` node ``name`` in the statements."""
    parents = _parents(statements)
    for s in statements:
        for node in walk(s):
            if isinstance(node, ast.Name) and node.id == name:
                yield node, parents.get(id(node))


def _read_into_new(node, parent, ufunc_args: bool) -> bool:
    """Whether this read of a name gives only a new value (never the object itself)."""
    if isinstance(parent, (ast.BinOp, ast.UnaryOp, ast.Compare)):
        return True
    if not ufunc_args or not isinstance(parent, ast.Call) or node not in parent.args:
        return False
    if _is_ufunc_call(parent):
        return True
    # unbroadcast(g, p) reads only p's shape and dtype
    return _is_call_of(parent, "unbroadcast") and parent.args.index(node) == 1


def _fresh_value(value) -> bool:
    return isinstance(value, (ast.BinOp, ast.UnaryOp)) or _is_ufunc_call(value)


def _private_operand(texts, name: str) -> bool:
    """Whether no other name than ``name`` can ever hold its value and nothing writes
    into it (see the module docstring)."""
    bindings = 0
    for text, top, statements in texts:
        if name not in identifiers(text):
            continue
        for node, parent in _mentions(statements, name):
            if isinstance(node.ctx, ast.Load):
                if not _read_into_new(node, parent, True):
                    return False
                continue
            ok = (
                top
                and len(statements) == 1
                and isinstance(parent, ast.Assign)
                and parent.targets == [node]
                and _fresh_value(parent.value)
            )
            if not ok:
                return False
            bindings += 1
    return bindings <= 1


def _only_operand_later(block, k: int, name: str) -> bool:
    """Whether, after ``block[k]``, ``name`` is only an operand of operators until it is
    bound again (or never mentioned)."""
    for item in block[k + 1 :]:
        if isinstance(item, Line):
            if name not in identifiers(item.text):
                continue
            statements = _statements(item.text)
            if not statements or len(statements) != 1 or not isinstance(statements[0], ast.Assign):
                return False
            rebound = False
            for node, parent in _mentions(statements, name):
                if isinstance(node.ctx, ast.Store):
                    if node not in statements[0].targets:
                        return False
                    rebound = True
                elif not _read_into_new(node, parent, False):
                    return False
            if rebound:
                return True
        elif any(name in identifiers(text) for text, _, _ in _nested_texts(item)):
            return False
    return True


def _units(texts, seed: str) -> set[str]:
    """Names that may hold the seed pulled back through ``np.sum`` (a broadcast 1)."""
    units = {seed}
    for _, _, statements in texts:
        for s in statements or ():
            if not (isinstance(s, ast.Assign) and len(s.targets) == 1):
                continue
            target, value = s.targets[0], s.value
            if not isinstance(target, ast.Name):
                continue
            if isinstance(value, ast.Subscript):  # _sum_pullback(d, ...)[0]
                index = value.slice
                if not (isinstance(index, ast.Constant) and index.value == 0):
                    continue
                if not (_is_call_of(value.value, _SUM_PULLBACK) and value.value.args):
                    continue
                value = value.value.args[0]
            elif _is_call_of(value, "unbroadcast") and value.args:
                value = value.args[0]
            if isinstance(value, ast.Name) and value.id in units:
                units.add(target.id)
    return units


def _product(statement, units, releasable):
    """``(t, u, v, u_first, p)`` for ``t = u * v`` / ``t = unbroadcast(u * v, p)`` (either
    operand order) with ``u`` a possible unit, ``v`` another name, all possibly arrays;
    else None."""
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
        return None
    target, value, p = statement.targets[0], statement.value, None
    if not isinstance(target, ast.Name):
        return None
    if _is_call_of(value, "unbroadcast"):
        if len(value.args) != 2 or value.keywords or not isinstance(value.args[1], ast.Name):
            return None
        value, p = value.args[0], value.args[1].id
    if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult)):
        return None
    a, b = value.left, value.right
    if not (isinstance(a, ast.Name) and isinstance(b, ast.Name)) or a.id == b.id:
        return None
    if a.id in units:
        u, v, u_first = a.id, b.id, True
    elif b.id in units:
        u, v, u_first = b.id, a.id, False
    else:
        return None
    t = target.id
    if not (releasable(t) and releasable(u) and releasable(v)):
        return None
    return t, u, v, u_first, p


def _rewritten(u: str, v: str, u_first: bool, p: str | None) -> str:
    """The new right-hand side: the helper called only where ``u`` may be a broadcast (a
    view); a filled cotangent, a short vector's, is multiplied with no call."""
    if u_first:
        product, call = f"{u} * {v}", f"_pb_unit_times({u}, {v})"
    else:
        product, call = f"{v} * {u}", f"_pb_times_unit({v}, {u})"
    value = f"{product} if {u}.__class__ is not _pb_ndarray or {u}.base is None else {call}"
    return value if p is None else f"unbroadcast({value}, {p})"


def unit_products(block: list, seed: str, releasable) -> list:
    """``block`` (the top-level items of grad's fused sweeps, ``seed`` the name of the
    output's cotangent) with each product by a possible broadcast 1 that may reuse its
    other factor calling the helper that does (see the module docstring)."""
    if not any(_SUM_PULLBACK in text for text in _plain_texts(block)):
        return block  # no sum's cotangent: nothing to parse
    texts = list(_walk_texts(block))
    if any(
        s is None or _writes_or_hides([t for t in s if not writes_only_its_array(t)])
        for _, _, s in texts
    ):
        return block
    units = _units(texts, seed)
    out = list(block)
    aliases: set[str] = set()  # targets rewritten: no longer new arrays
    for k, item in enumerate(block):
        if not isinstance(item, Line):
            continue
        statements = _statements(item.text)
        if len(statements) != 1:
            continue
        found = _product(statements[0], units, releasable)
        if found is None:
            continue
        t, u, v, u_first, p = found
        if v in aliases or not (_private_operand(texts, v) and _only_operand_later(block, k, t)):
            continue
        aliases.add(t)
        out[k] = replace(item, text=f"{t} = {_rewritten(u, v, u_first, p)}", once=None)
    return out
