"""In grad's fused sweeps, single-use temporaries folded back into the expression that
reads them, and copies of a name read through the name itself.

The forward sweep names every intermediate value (``_t2 = _t1 * y``, ``_t3 =
math.sin(y)``, ``_t4 = _t2 + _t3``) so that the reverse sweep can read what it needs. A
temporary the reverse sweep never reads is a store and a load that a hand-written loop
would not make, and in a scalar loop of a few float operations a part of each
iteration that shows (the Euler loop of benchmarks/workloads: a few percent of the
gradient). The reverse sweep likewise copies an adjoint before it is accumulated
(``d_y_2 = d_y_1`` then ``d_y_1 = d_y_2 + ...``).

Two rewrites, on the lines of one block (never across a loop's or an ``if``'s boundary,
never across lines of different user lines, so errors still name the same line):

* **fold**: ``T = E`` where ``T`` is a generated temporary (``_tN``, ``d__tN``) mentioned
  exactly twice in the whole function, and the very next line reads ``T`` once, where
  everything Python evaluates before that read is a constant or a local name: the next
  line reads ``(E)`` instead. Python then evaluates ``E`` at the same point relative to
  every operation with an effect, so the values, the errors and their order are the same.
  An ``E`` of operators on names and constants may also move below lines that are such
  arithmetic themselves and bind neither ``T`` nor a name ``E`` reads (``d__t1 = d__t4 *
  y`` read two lines below by ``d_k = d_k - d__t1``): arithmetic on the reverse sweep's
  floats and arrays, whose order among such lines changes no value.
* **copy**: ``X = Y`` (two adjoint names) where every other mention of ``X`` lies in the
  following lines up to the first that binds ``Y`` again, none of which binds ``X``: those
  lines read ``Y``, the very object ``X`` named.

Only the fused sweeps are rewritten (their texts are Line.once copies); the sweeps with a
saved tuple and the differentiable-again functions are left as built. A function with a
nested function, a lambda or a dynamic name lookup is left alone (a name may be read out
of sight).

>>> body = [Line("_t2 = _t1 * y"), Line("_t3 = math.sin(y)"), Line("_t4 = _t2 + _t3"),
...         Line("y_2 = y + h * _t4"), Line("return y_2")]
>>> [item.text for item in fold_fused(body, {"y", "h", "_t1"})]
['y_2 = y + h * (_t1 * y + math.sin(y))', 'return y_2']
>>> body = [Line("d_b = d_a"), Line("t = d_b * h"), Line("d_a = d_b + t"), Line("return d_a")]
>>> [item.text for item in fold_fused(body, {"h"})]
['t = d_a * h', 'd_a = d_a + t', 'return d_a']
"""

from __future__ import annotations

import ast
import re
from collections import Counter

from ..tree_walk import walk
from .code import Compound, Line, replace
from .release import _texts  # every text of an item, nested blocks too

_IDENT = re.compile(r"[^\W\d]\w*")
_TEMP_DEF = re.compile(r"^(_t\d+|d__t\d+) = (.+)$")
_COPY = re.compile(r"^(d_\w+) = (d_\w+)$")
_NESTED = re.compile(r"\b(?:lambda|def|class|del|locals|vars|exec|eval|nonlocal|global)\b")
# expressions whose evaluation never skips a part (no short circuit, no condition)
_EAGER = (ast.BinOp, ast.UnaryOp, ast.Call, ast.Attribute, ast.Subscript, ast.Tuple,
          ast.List, ast.Slice, ast.Starred, ast.keyword, ast.Name, ast.Constant)  # fmt: skip
_ARITHMETIC = (ast.BinOp, ast.UnaryOp, ast.Name, ast.Constant, ast.operator, ast.unaryop,
               ast.expr_context)  # fmt: skip
_BANNED_IN_E = (ast.NamedExpr, ast.Lambda, ast.Yield, ast.YieldFrom, ast.Await,
                ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)  # fmt: skip


class _Unsupported(Exception):
    pass


def _bound_names(text: str) -> set[str] | None:
    """The names a line (or a compound's header) binds; None where it does not parse."""
    if text.endswith(":"):
        text += " pass"
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    return {n.id for n in walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def fold_fused(block: list, params: set[str]) -> list:
    """``block`` (the top-level items of the fused sweeps) with single-use temporaries
    folded and adjoint copies read through (see the module docstring); ``params``: the
    function's parameters. Items are replaced by copies, never changed in place."""
    texts = [t for item in block for t in _texts(item)]
    if any(_NESTED.search(t) for t in texts):
        return block
    local = set(params)
    for t in texts:
        bound = _bound_names(t)
        if bound is None:
            return block
        local |= bound
    counts = Counter(n for t in texts for n in _IDENT.findall(t))
    return _fold_block(block, counts, local)


def _fold_block(block, counts, local) -> list:
    out = []
    for item in block:
        if isinstance(item, Compound):
            item = replace(
                item,
                body=_fold_block(item.body, counts, local),
                orelse=_fold_block(item.orelse, counts, local),
            )
        out.append(item)
    i = 0
    while i < len(out):
        if _fold_at(out, i, counts, local):
            i = max(i - 1, 0)  # the line before may now fold into the merged one
            continue
        if _copy_at(out, i, counts):
            continue
        i += 1
    return out


def _single(item) -> bool:
    return isinstance(item, Line) and "\n" not in item.text and ";" not in item.text


def _word(name: str):
    return re.compile(rf"\b{re.escape(name)}\b")


def _arithmetic(node) -> bool:
    """Whether an expression is only operators on names and constants."""
    return all(isinstance(n, _ARITHMETIC) for n in walk(node))


def _passes_over(line, value, name, src) -> bool:
    """Whether ``T = value`` may move below ``line``: a line of the same user line that
    only binds names to arithmetic on names and constants, binding neither ``T`` nor a
    name ``value`` reads."""
    if not _single(line) or line.src != src:
        return False
    try:
        stmts = ast.parse(line.text).body
    except SyntaxError:
        return False
    if len(stmts) != 1 or not isinstance(stmts[0], ast.Assign):
        return False
    stmt = stmts[0]
    if not all(isinstance(t, ast.Name) for t in stmt.targets) or not _arithmetic(stmt.value):
        return False
    reads = {n.id for n in walk(value) if isinstance(n, ast.Name)} | {name}
    return not any(t.id in reads for t in stmt.targets)


def _fold_at(block, i, counts, local) -> bool:
    item = block[i]
    if i + 1 >= len(block) or not _single(item):
        return False
    m = _TEMP_DEF.match(item.text)
    if m is None or counts[m.group(1)] != 2:
        return False
    name, expr = m.groups()
    try:
        value = ast.parse(expr, mode="eval").body
    except SyntaxError:
        return False
    if any(isinstance(n, _BANNED_IN_E) for n in walk(value)):
        return False
    use = i + 1
    if not _word(name).search(getattr(block[use], "text", "")) and _arithmetic(value):
        # arithmetic moves below arithmetic lines that neither read nor bind what it reads
        while use < len(block) and not _word(name).search(getattr(block[use], "text", "")):
            if not _passes_over(block[use], value, name, item.src):
                return False
            use += 1
        if use == len(block):
            return False
    nxt = block[use]
    if not _single(nxt) or nxt.src != item.src or len(_word(name).findall(nxt.text)) != 1:
        return False
    try:
        stmts = ast.parse(nxt.text).body
    except SyntaxError:
        return False
    if len(stmts) != 1 or not isinstance(stmts[0], (ast.Assign, ast.Expr)):
        return False
    try:
        if not _read_first(stmts[0].value, name, local):
            return False
    except _Unsupported:
        return False
    folded = expr if _bare(value, stmts[0], name) else f"({expr})"
    text = _word(name).sub(lambda _: folded, nxt.text)
    block[use] = replace(nxt, text=text, reads=item.reads | nxt.reads, alt=None, once=None)
    del block[i]
    return True


_PRECEDENCE = {ast.Add: 1, ast.Sub: 1, ast.Mult: 2, ast.Div: 2, ast.FloorDiv: 2,
               ast.Mod: 2, ast.MatMult: 2}  # fmt: skip


def _bare(value, stmt, name) -> bool:
    """Whether ``value`` reads the same without parentheses where ``name`` stands in
    ``stmt``: a primary (name, call, attribute, subscript) anywhere; a sum or product as
    the whole value, an argument, an element, or an operand of a looser operator (or the
    left one of an equal one: Python groups from the left)."""
    if isinstance(value, (ast.Name, ast.Call, ast.Attribute, ast.Subscript)):
        return True
    for parent in walk(stmt):
        for field, child in ast.iter_fields(parent):
            kids = child if isinstance(child, list) else [child]
            if not any(isinstance(k, ast.Name) and k.id == name for k in kids):
                continue
            if not isinstance(value, ast.BinOp) or type(value.op) not in _PRECEDENCE:
                return False
            if isinstance(parent, (ast.Assign, ast.Expr, ast.Call, ast.keyword, ast.Tuple)):
                return not (isinstance(parent, ast.Call) and field == "func")
            if isinstance(parent, ast.BinOp) and type(parent.op) in _PRECEDENCE:
                inner, outer = _PRECEDENCE[type(value.op)], _PRECEDENCE[type(parent.op)]
                return inner > outer or (inner == outer and field == "left")
            return False
    return False


def _read_first(node, name, local) -> bool:
    """Whether the one read of ``name`` in the expression ``node`` comes after only reads
    of constants and local names (in Python's order of evaluation); raises _Unsupported
    where the expression has a part that may not be evaluated, or is not eager."""
    events: list = []

    def visit(n):
        if not isinstance(n, _EAGER):
            raise _Unsupported
        if isinstance(n, ast.Name):
            events.append(n.id if n.id == name or n.id in local else None)
            return
        if isinstance(n, ast.Constant):
            return
        if isinstance(n, ast.Call):
            visit(n.func)
            for a in n.args:
                visit(a)
            for k in n.keywords:
                visit(k.value)
        else:
            for child in ast.iter_child_nodes(n):
                if not isinstance(child, (ast.operator, ast.unaryop, ast.expr_context)):
                    visit(child)
        if not isinstance(n, (ast.Tuple, ast.List, ast.Slice, ast.Starred, ast.keyword)):
            events.append(None)  # an operation: it may run code

    visit(node)
    if events.count(name) != 1:
        return False
    before = events[: events.index(name)]
    return all(e is not None for e in before)


def _copy_at(block, i, counts) -> bool:
    item = block[i]
    if not _single(item):
        return False
    m = _COPY.match(item.text)
    if m is None or m.group(1) == m.group(2):
        return False
    x, y = m.groups()
    wx = _word(x)
    seen = 0
    for j in range(i + 1, len(block)):
        other = block[j]
        if not _single(other):
            return False
        n = len(wx.findall(other.text))
        bound = _bound_names(other.text)
        if bound is None or x in bound or "NamedExpr" in _node_kinds(other.text):
            return False
        seen += n
        if n != _name_reads(other.text, x):
            return False  # a mention that is not a read of the name (in a string)
        if y in bound and n and not _reads_before_binding(other.text, x):
            return False
        if y in bound or seen == counts[x] - 1:
            if seen != counts[x] - 1:
                return False  # x is read after y is bound again
            for k in range(i + 1, j + 1):
                line = block[k]
                if wx.search(line.text):
                    text = wx.sub(y, line.text)
                    block[k] = replace(line, text=text, alt=None, once=None)
            del block[i]
            return True
    return False


def _name_reads(text: str, name: str) -> int:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return -1
    return sum(1 for n in walk(tree) if isinstance(n, ast.Name) and n.id == name)


def _reads_before_binding(text: str, name: str) -> bool:
    """Whether a line that binds names reads ``name`` only in the value it assigns
    (evaluated before any binding)."""
    stmt = ast.parse(text).body[0]
    if not isinstance(stmt, ast.Assign):
        return False
    return all(_name_reads(ast.unparse(t), name) == 0 for t in stmt.targets)


def _node_kinds(text: str) -> set[str]:
    try:
        return {type(n).__name__ for n in walk(ast.parse(text))}
    except SyntaxError:
        return {"NamedExpr"}  # not understood: treated as the case that stops a copy
