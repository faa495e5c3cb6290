"""Inline forms of the owned-buffer helpers for one entry of a vector (issue 11).

:mod:`pullback.transform.ownership` proves that a reverse loop's cotangent buffer of a
local array is held by nobody else and passes it to ``array_set_pullback_owned`` and
``fold_reads_owned``. For a write ``out[i] = v`` of a scalar into a vector (kinds prove
``out`` of rank 1 and ``v`` a real scalar) the helper's work is two index operations; this
module writes them into the sweep instead, behind the test that the cotangent *is* the
owned buffer and the index an ``int`` (what the helper's own fast path tests), the helper
staying as the other branch::

    if d_out_2 is _own and type(i) is int:
        d__t8 = d_out_2[i]; d_out_2[i] = 0.0; d_out_1 = d_out_2
    else:
        _cot1 = _array_set_pullback_owned(d_out_2, out_1, i, 0.0, _own); _own = _cot1[3]
        d_out_1 = _cot1[0]
        d__t8 = _cot1[2]

(both pullbacks read the value only for its shape, proved ``()``: ``0.0`` stands for it,
so the loop does not save the value). A read ``y[t - 1]`` (or by a basic index such as
``g[i, 1:-1]``) recorded into a chain that the same loop folds into the owned buffer at the
top of its next step is added into the buffer where it is read, when nothing between the
read and that fold (or the fold after the loop) mentions the adjoint; ``_own_read`` is the
token when the buffer has the array's dtype (set where the token changes), else None::

    if d_y_2 is _own_read and type(_t6) is int: d_y_2[_t6] += d__t7
    else: _reads_y_2 = (_t6, d__t7, _reads_y_2)

The sweep's own cotangent lists take the same inline forms for ``list_set_pullback_sweep``
and ``append_cotangent`` (:func:`inline_list_cotangents`). The differentiable-again
functions keep the plain lines (``Line.alt``).
"""

from __future__ import annotations

import ast
import re

from ..tree_walk import walk
from .code import Compound, Line, mentions
from .kinds import FOREIGN_ARRAYS, LAZY_ARRAYS, SCALAR


def parent_block(block, target):
    """The list (a block of ``block`` or nested in it) that holds ``target``, or None."""
    for item in block:
        if item is target:
            return block
    for item in block:
        if isinstance(item, Compound):
            for inner in (item.body, item.orelse):
                found = parent_block(inner, target)
                if found is not None:
                    return found
    return None


def _scalar_vector_write(kinds, call) -> bool:
    """Whether kinds prove ``array_set_pullback(dy, a, index, value)`` a write of a real
    scalar into a NumPy vector, at an index that is a name or an int."""
    if kinds is None or any(kinds.get(mark) for mark in (FOREIGN_ARRAYS, LAZY_ARRAYS)):
        return False
    _, a, index, value = call.args
    if not isinstance(a, ast.Name) or kinds.get(a.id) != ("array", 1):
        return False
    if isinstance(value, ast.Constant):
        scalar = type(value.value) in (int, float)
    else:
        scalar = kinds.get(value.id) == SCALAR
    if isinstance(index, ast.Constant):
        return scalar and type(index.value) is int
    return scalar


def inline_write(item, call, temp, tok, owned_pb, kinds, loop, items_of) -> bool:
    """Rewrite the pullback line ``item`` (``temp = pullback(*call.args)``) with the inline
    form of the module docstring, absorbing the lines ``x = temp[k]`` right after it;
    ``owned_pb`` names the owned helper. False (nothing changed) where it does not apply.

    Both pullbacks read the value only for its shape, which kinds prove ``()``: ``0.0``
    stands for it (in the differentiable-again line too), so the loop does not save it."""
    if not _scalar_vector_write(kinds, call):
        return False
    block = parent_block(loop.body, item)
    if block is None:
        return False
    dy, _, index, _ = (ast.unparse(a) for a in call.args)
    taken = _taken_items(block, item, temp, items_of)
    if not taken or mentions(loop.body, temp) != 1 + len(taken):
        return False  # the result is read elsewhere too: keep the helper alone
    if any(t in (dy, index, tok) for _, t, _ in taken):
        return False
    fast = [f"{t} = {dy}[{index}]" for _, t, k in taken if k == 2]
    fast.append(f"{dy}[{index}] = 0.0")
    fast += [f"{t} = {dy}" for _, t, k in taken if k == 0]
    fast += [f"{t} = NO_TANGENT" for _, t, k in taken if k == 1]
    test = f"{dy} is {tok}" + ("" if index.isdigit() else f" and type({index}) is int")
    array = ast.unparse(call.args[1])
    slow = f"{temp} = {owned_pb}({dy}, {array}, {index}, 0.0, {tok}); {tok} = {temp}[3]"
    slow_lines = [slow] + [line.text for line, _, _ in taken]
    if item.alt is None:  # else the differentiable-again line is another: left as it is
        item.alt = f"{temp} = {call.func.id}({dy}, {array}, {index}, 0.0)"
    text = "\n".join(
        [f"if {test}:", "    " + "; ".join(fast), "else:"] + ["    " + s for s in slow_lines]
    )
    _set(item, text)
    for line, _, _ in taken:
        _set(line, "")
    return True


def inline_fold_skip(item, chain, text) -> None:
    """The owned fold ``text`` run only when the chain holds a read (the helper returns
    its arguments for an empty chain)."""
    _set(item, f"if {chain} is not None: {text}")


def inline_reads(loop, block, fold, live_after, group, items_of, internal) -> None:
    """Add the reads recorded into a chain that the owned fold line ``fold`` (at the top
    level of ``loop``'s body) consumes into the buffer where they are read (see the module
    docstring). ``fold`` is ``(line, acc, x, chain, tok)``; ``group`` the other names of
    the buffer's family, none of which may be live after a read that is rewritten. The
    test that the buffer has the array's dtype (what ``fold_reads_owned`` adds in place) is
    made where the token changes: ``_own_read`` is the token when it has, else None."""
    line, acc, x, chain, tok = fold
    body = loop.body
    if line not in body:
        return
    at = body.index(line)
    reset = body[at + 1] if at + 1 < len(body) else None
    if not (isinstance(reset, Line) and reset.text == f"{chain} = None"):
        return
    pushes = []
    for k, item in enumerate(body):
        if k <= at + 1:
            continue
        stmts = items_of(item)
        if (
            len(stmts) == 1
            and isinstance(stmts[0], ast.Assign)
            and ast.unparse(stmts[0].targets[0]) == chain
            and isinstance(stmts[0].value, ast.Tuple)
            and len(stmts[0].value.elts) == 3
            and ast.unparse(stmts[0].value.elts[2]) == chain
        ):
            pushes.append(k)
    if not pushes or mentions(body, chain) != mentions([line], chain) + 1 + 2 * len(pushes):
        return  # the chain is used elsewhere in the loop
    # From the body's start to the fold nothing touches the adjoint (nor, below, from a
    # rewritten read to the end of the body): the loop goes round to the fold, or leaves
    # it, and then the fold right after the loop adds what is left.
    if mentions(body[:at], acc) or x in _stores(body, items_of):
        return
    after = block[block.index(loop) + 1] if block.index(loop) + 1 < len(block) else None
    if not (isinstance(after, Line) and after.text == f"{acc} = fold_reads({acc}, {x}, {chain})"):
        return
    same_dtype = None
    for k in pushes:
        item = body[k]
        if live_after.get(id(item), set()) & group:
            continue
        node = items_of(item)[0].value.elts[0]
        ints = _basic_index_names(node)
        if ints is None:
            continue
        index, value, _ = (ast.unparse(e) for e in items_of(item)[0].value.elts)
        if mentions(body[k + 1 :], acc) or re.search(rf"\b{re.escape(acc)}\b", value):
            continue  # a later line of the step reads or writes the adjoint
        if same_dtype is None:
            same_dtype = internal("_own_read")
            _follow_token(
                body,
                tok,
                f"{same_dtype} = {tok} if {tok} is not None and {tok}.dtype is {x}.dtype else None",
            )
            block.insert(block.index(loop), Line(f"{same_dtype} = None", src=loop.src, alt=""))
        test = " and ".join([f"{acc} is {same_dtype}"] + [f"type({n}) is int" for n in ints])
        _set(item, f"if {test}: {acc}[{index}] += {value}\nelse: {item.text}")


def _basic_index_names(node):
    """The names that must hold ints for the index ``node`` to be basic (an int, a slice
    or a tuple of them, which ``fold_reads_owned`` adds into a view in place): the index
    itself, or the names among a tuple's items next to ints and ``slice(...)`` of names
    and constants. None for any other index."""

    def plain(part):
        return isinstance(part, ast.Name) or (
            isinstance(part, ast.Constant) and (part.value is None or type(part.value) is int)
        )

    def item(part):
        if isinstance(part, ast.Name):
            return [part.id]
        if isinstance(part, ast.Constant) and type(part.value) is int:
            return []
        if (
            isinstance(part, ast.Call)
            and isinstance(part.func, ast.Name)
            and part.func.id == "slice"
            and not part.keywords
            and all(plain(a) for a in part.args)
        ):
            return []  # a slice of any bounds is basic (the bounds' types are slice's own)
        return None

    if isinstance(node, ast.Tuple):
        parts = [item(p) for p in node.elts]
        if not node.elts or any(p is None for p in parts):
            return None
        return [n for p in parts for n in p]
    return item(node) if not isinstance(node, ast.Call) else None


def _follow_token(block, tok, statement) -> None:
    """Append ``statement`` to every physical line of ``block`` (nested ones too) that
    assigns ``tok`` (a simple statement there, or the suite of a one-line ``if``)."""
    assigns = re.compile(rf"\b{re.escape(tok)}\s*=(?!=)")
    for item in block:
        if isinstance(item, Compound):
            _follow_token(item.body, tok, statement)
            _follow_token(item.orelse, tok, statement)
        elif assigns.search(item.text):
            parts = item.text.split("\n")
            parts = [p + f"; {statement}" if assigns.search(p) else p for p in parts]
            _set(item, "\n".join(parts))


def _stores(items, items_of) -> set:
    """The names the lines of ``items`` (nested ones too) assign."""
    out = set()
    for item in items:
        if isinstance(item, Compound):
            head = ast.parse(item.header + "\n    pass").body[0]
            if isinstance(head, ast.For):
                out |= {n.id for n in walk(head.target) if isinstance(n, ast.Name)}
            out |= _stores(item.body, items_of) | _stores(item.orelse, items_of)
            continue
        for stmt in items_of(item):
            out |= {
                n.id
                for n in walk(stmt)
                if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))
            }
    return out


def _set(item: Line, text: str) -> None:
    if item.alt is None:
        item.alt = item.text  # differentiable again: the plain lines
    item.text = text


# -- local lists: the sweeps' own cotangent lists ---------------------------------------
def _list_forms():
    from .. import containers, containers_inplace

    # (helper, its fast test, its fast statements); {d}: the cotangent, {p}: the position,
    # {t0}/{t1}/{t2}: the targets of the result's items (None: the item is not taken)
    return (
        (
            containers_inplace.list_set_pullback_sweep,
            "type({d}) is {CL}",
            ["{t2} = {d}[{p}]", "{d}[{p}] = ZERO", "{t0} = {d}", "{t1} = NO_TANGENT"],
        ),
        (
            containers.append_cotangent,
            "type({d}) is {CL} and {d}",
            ["{t1} = {d}.pop()", "{t0} = {d}"],
        ),
    )


def inline_list_cotangents(body, namespace, bind, items_of) -> None:
    """``_cot1 = _list_set_pullback_sweep(d, xs, p, v)`` and ``_cot1 =
    _append_cotangent(d)`` with the lines ``x = _cot1[k]`` after them, written inline where
    the cotangent is the sweep's own :class:`~pullback.tangents.CotangentList` (what the
    helpers themselves test first; they stay as the other branch)."""
    from ..tangents import CotangentList

    forms = {}
    for helper, test, fast in _list_forms():
        for name, value in namespace.items():
            if value is helper:
                forms[name] = (test, fast)
    if not forms:
        return
    cotangent_list = None
    for block in _blocks(body):
        for item in list(block):
            stmts = items_of(item)
            if not (
                len(stmts) == 1
                and isinstance(stmts[0], ast.Assign)
                and isinstance(stmts[0].targets[0], ast.Name)
                and isinstance(stmts[0].value, ast.Call)
                and isinstance(stmts[0].value.func, ast.Name)
                and stmts[0].value.func.id in forms
                and stmts[0].value.args
                and isinstance(stmts[0].value.args[0], ast.Name)
                and not stmts[0].value.keywords
            ):
                continue
            call = stmts[0].value
            temp = stmts[0].targets[0].id
            taken = _taken_items(block, item, temp, items_of)
            if not taken or mentions(body, temp) != 1 + len(taken):
                continue
            test, fast = forms[call.func.id]
            cotangent_list = cotangent_list or bind("CotangentList", CotangentList)
            names = {"d": call.args[0].id, "CL": cotangent_list, "t0": None, "t1": None}
            names["t2"] = None
            if len(call.args) > 2:
                names["p"] = ast.unparse(call.args[2])
            for _, target, k in taken:
                names[f"t{k}"] = target
            if names["d"] in {t for _, t, _ in taken}:
                continue
            parts = []
            for statement in fast:
                fields = re.findall(r"\{(t\d)\}", statement)
                if all(names[f] is not None for f in fields):
                    parts.append(statement.format(**names))
                elif ".pop()" in statement:
                    parts = []  # the item popped is not taken: keep the helper
                    break
            if not parts:
                continue
            head = item.text
            plain = item.alt or item.text
            if len(call.args) == 4 and _without_value(plain):
                # a list store's pullbacks never read the value itself
                head, item.alt = _without_value(item.text), _without_value(plain)
            slow = [head] + [line.text for line, _, _ in taken]
            text = "\n".join(
                [f"if {test.format(**names)}:", "    " + "; ".join(parts), "else:"]
                + ["    " + s for s in slow]
            )
            _set(item, text)
            for line, _, _ in taken:
                _set(line, "")


def _without_value(text: str) -> str | None:
    """``t = f(d, xs, p, 0.0)`` for the line ``t = f(d, xs, p, v)``: ``list_set_pullback``
    (and its sweep form) take the value only to mirror ``list_set``'s arguments, so the
    loop need not save it. None for a line of another shape."""
    body = ast.parse(text).body
    if not (
        len(body) == 1
        and isinstance(body[0], ast.Assign)
        and isinstance(body[0].value, ast.Call)
        and len(body[0].value.args) == 4
    ):
        return None
    body[0].value.args[3] = ast.Constant(0.0)
    return ast.unparse(body[0])


def _blocks(block):
    yield block
    for item in block:
        if isinstance(item, Compound):
            yield from _blocks(item.body)
            yield from _blocks(item.orelse)


def _taken_items(block, item, temp, items_of) -> list:
    """``(line, target, k)`` for the lines ``target = temp[k]`` (k 0, 1 or 2) right after
    ``item`` in ``block``."""
    taken = []
    for later in block[block.index(item) + 1 :]:
        stmts = items_of(later)
        if len(stmts) != 1 or not isinstance(stmts[0], ast.Assign):
            break
        (target,), value = stmts[0].targets, stmts[0].value
        if not (
            isinstance(target, ast.Name)
            and isinstance(value, ast.Subscript)
            and isinstance(value.value, ast.Name)
            and value.value.id == temp
            and isinstance(value.slice, ast.Constant)
            and value.slice.value in (0, 1, 2)
        ):
            break
        taken.append((later, target.id, value.slice.value))
    return taken
