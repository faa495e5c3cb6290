"""Index reads by a reverse loop's own counter, recorded into a list (issue 11).

The reverse sweep records a read ``x[i]`` as a node of a linked chain,
``_reads_x = (i, d, _reads_x)``, which ``fold_reads`` walks and scatters when ``x``'s
adjoint is needed. In a reverse loop ``for i in reversed(_range1):`` whose every step
records the same ``k`` reads ``x[i]`` (the fill and recurrence loops read ``x[i]`` once
or twice a step), the chain costs a tuple a read and a walk of all of them. This pass
records those cotangents with one list append instead and, after the loop, hands the list
to :func:`pullback.read_folds.loop_reads`, which pushes them as one node of two arrays
(or, for anything but real scalar reads of a 1-D float array, the chain the loop would
have built)::

    _lreads_x = []; _lreads_x_add = _lreads_x.append
    for i in reversed(_range1):
        ...
        _lreads_x_add(d__t5)               # was: _reads_x = (i, d__t5, _reads_x)
    _reads_x = _loop_reads(_range1, 1, _lreads_x, x, _reads_x)

One read a step (``k = 1``: mse_loop's ``y[i]``) is stored instead into a buffer the loop
owns, ``_lreads_x[i] = d__t5`` (:mod:`pullback.loop_buffers`: no list, no conversion, and
a fold that is the buffer itself; issue 13).

What is proved, on the generated text: the reads are lines of the loop body itself (so
each runs once a step), their index is the loop's target, which nothing in the body
assigns; the body has no ``break``, ``continue`` or ``return`` and no other mention of the
chain than pushes of reads by other indices (``x[i + 1]`` in rosenbrock_loop), which stay
in the chain: its fold sums every node, in whatever order; and every fold of the chain
anywhere in the sweep reads the same array name, which the sweep never assigns (the array
``loop_reads`` is given is the one folded into). The differentiable-again functions keep
the chain (``Line.alt``).

Reads by the counter plus a constant (:func:`offset_sites`: the forward loop assigns the
index ``i + c``) beside one or more by the counter, where the line after the loop folds the
chain, join the list instead, every read of a step in order, folded by one call
(:mod:`pullback.loop_offsets`); the differentiable-again text pushes ``(i + c, ...)``, so
the index is no longer saved on the tape.
"""

from __future__ import annotations

import ast
import re

import gast

from ..loop_buffers import fold_owned_reads, own_reads, owned_node
from ..loop_offsets import fold_loop_reads
from ..read_folds import loop_reads
from ..tree_walk import all_nodes, statements
from .code import Compound, Line
from .owned_inline import mentions
from .ownership import _header, _lines, _statements


def batch_loop_reads(body, bind, internal) -> None:
    """Rewrite, in place, the reads by the counter of every reverse loop in ``body`` (a
    whole sweep) that the module docstring describes."""
    loops = list(_loops(body))
    if not loops:  # nothing to batch: no reading of the whole sweep's text
        return
    try:
        arrays = _folded_arrays(body)
        if not arrays:  # no read folded with an array: no loop has a chain to batch
            return
        stored = _stored_names(body)
    except SyntaxError:  # a line this pass cannot read alone: leave the sweep as it is
        return
    for block, loop in loops:
        _batch_loop(block, loop, arrays, stored, bind, internal)


def _loops(block):
    for item in block:
        if isinstance(item, Compound):
            yield from _loops(item.body)
            yield from _loops(item.orelse)
            if item.header.startswith("for "):
                yield block, item


def _calls(tree):
    return (n for n in all_nodes(tree) if isinstance(n, ast.Call))


def _folded_arrays(body) -> dict:
    """``{chain: {array names it is folded with}}`` over the whole sweep."""
    arrays: dict = {}
    for item in _lines(body):
        if not isinstance(item, Line) or "_reads" not in item.text:
            continue
        for stmt in _statements(item.text):
            for call in _calls(stmt):
                args = call.args
                if len(args) >= 3 and all(isinstance(a, ast.Name) for a in args[1:3]):
                    if args[2].id.startswith("_reads"):
                        arrays.setdefault(args[2].id, set()).add(args[1].id)
    return arrays


def _stored_names(body) -> set:
    stored = set()
    for item in _lines(body):
        stmts = _statements(item.text) if isinstance(item, Line) else (_header(item),)
        for stmt in stmts:
            target = stmt.target if isinstance(stmt, ast.For) else stmt
            if isinstance(stmt, (ast.If, ast.While)):
                continue
            stored |= {
                n.id
                for n in all_nodes(target)
                if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))
            }
    return stored


def _push(item, counter):
    """``(chain, cotangent text)`` of a line ``chain = (counter, value, chain)``, or None
    (``counter`` None: a push by any index that does not mention the chain)."""
    if not isinstance(item, Line) or not item.text.startswith("_reads"):
        return None
    stmts = _statements(item.text)
    if len(stmts) != 1 or not isinstance(stmts[0], ast.Assign):
        return None
    (target,), value = stmts[0].targets, stmts[0].value
    if not (
        isinstance(target, ast.Name)
        and isinstance(value, ast.Tuple)
        and len(value.elts) == 3
        and (
            counter is None
            or isinstance(value.elts[0], ast.Name)
            and value.elts[0].id == counter
        )
        and isinstance(value.elts[2], ast.Name)
        and value.elts[2].id == target.id
    ):
        return None
    cotangent = ast.unparse(value.elts[1])
    mentioned = rf"\b{re.escape(target.id)}\b"
    if re.search(mentioned, cotangent) or re.search(mentioned, ast.unparse(value.elts[0])):
        return None
    return target.id, cotangent


def _other_pushes(body, chain, found) -> int:
    """How many lines of ``body`` (nested blocks too), besides ``found``, push a read of
    another index onto ``chain``: they stay in the chain, whose fold sums every node."""
    taken = {id(item) for item, _ in found}
    return sum(
        1
        for item in _lines(body)
        if id(item) not in taken and (_push(item, None) or ("",))[0] == chain
    )


def _batch_loop(block, loop, arrays, stored, bind, internal):
    head = _header(loop)
    if not (
        isinstance(head.target, ast.Name)
        and isinstance(head.iter, ast.Call)
        and isinstance(head.iter.func, ast.Name)
        and head.iter.func.id == "reversed"
        and len(head.iter.args) == 1
        and isinstance(head.iter.args[0], ast.Name)
        and not loop.orelse
    ):
        return
    counter, steps = head.target.id, head.iter.args[0].id
    pushes: dict = {}
    for item in loop.body:
        found = _push(item, counter)
        if found is not None:
            pushes.setdefault(found[0], []).append((item, found[1]))
    if not pushes:
        return  # nothing to batch (most loops): their lines are not walked
    items = list(_lines(loop.body))
    for item in items:
        stmts = _statements(item.text) if isinstance(item, Line) else (_header(item),)
        for stmt in stmts:
            if any(isinstance(n, (ast.Break, ast.Continue, ast.Return)) for n in statements(stmt)):
                return
    if {counter, steps} & _stored_names(loop.body):
        return
    for chain, found in pushes.items():
        folded = arrays.get(chain, set())
        others = _other_pushes(loop.body, chain, found)
        pushed = len(found) + others
        if len(folded) != 1 or mentions(loop.body, chain) != 2 * pushed:
            continue  # another use of the chain in the loop, or no single array
        (array,) = folded
        if array in stored:
            continue
        if others:  # x[i + 1] beside x[i]: one fold as the loop ends?
            sites = offset_sites(loop, chain, others)
            if sites is not None and _fold_after(block, loop, array, chain) is not None:
                _list_offsets(block, loop, chain, sites, steps, array, bind, internal)
                continue
        # one read a step: the loop's own buffer; several: a list of their cotangents
        record = _own_buffer if len(found) == 1 else _list_reads
        record(block, loop, chain, found, steps, array, bind, internal)


def _fold_after(block, loop, array, chain):
    """``(line, pattern)``: the line right after ``loop`` when it folds ``chain`` with
    ``array`` once and mentions it nowhere else (the sweep's return, or the adjoint of a
    local array), ``pattern`` matching that fold; else None."""
    k = block.index(loop)
    after = block[k + 1] if k + 1 < len(block) else None
    fold = re.compile(rf"\bfold_reads\((\w+), {re.escape(array)}, {re.escape(chain)}\)")
    if (
        isinstance(after, Line)
        and (after.text.startswith("return ") or re.match(r"\w+ = fold_reads\(", after.text))
        and "\n" not in after.text
        and len(fold.findall(after.text)) == 1
        and mentions([after], chain) == 1
    ):
        return after, fold
    return None


def offset_sites(loop, chain, others):
    """``[(line, cotangent, site)]``: every push onto ``chain`` in the reverse ``loop``'s
    body, in order, ``site`` None for a read by the counter and ``c`` for one by a name
    the forward loop assigns ``counter + c`` (``_t3 = i + 1``); None unless the ``others``
    pushes by another index are all such reads, lines of the body itself.

    What is proved, on the forward loop's tree: it has no ``break``, ``continue`` or
    ``return`` and never assigns its counter, and the name is assigned once in it, by a
    statement of its body itself that no statement before reads it: every step assigns
    it ``i + c`` before the step's read, so the value the reverse step restored is that
    step's ``i + c``."""
    info = getattr(loop, "loop", None)
    node = getattr(info, "node", None)
    counter = _header(loop).target.id
    if not (
        isinstance(node, gast.For)
        and isinstance(node.target, gast.Name)
        and node.target.id == counter
    ):
        return None
    inside = [n for s in node.body for n in all_nodes(s)]
    if any(isinstance(n, (gast.Break, gast.Continue, gast.Return)) for n in inside):
        return None
    stores: dict = {}
    for n in inside:
        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)):
            stores[n.id] = stores.get(n.id, 0) + 1
    if counter in stores:
        return None
    offsets = {}
    loaded: set = set()  # the names read by the statements before
    for s in node.body:
        c = _offset(s, counter)
        if c is not None and stores.get(s.targets[0].id) == 1 and s.targets[0].id not in loaded:
            offsets[s.targets[0].id] = c
        loaded |= {
            n.id for n in all_nodes(s) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
        }
    sites = []
    for item in loop.body:
        found = _push(item, None)
        if found is None or found[0] != chain:
            continue
        index = _statements(item.text)[0].value.elts[0]
        if isinstance(index, ast.Name) and index.id == counter:
            sites.append((item, found[1], None))
        elif isinstance(index, ast.Name) and index.id in offsets:
            sites.append((item, found[1], offsets[index.id]))
        else:
            return None
    if sum(c is not None for _, _, c in sites) != others:
        return None  # a push by another index in a nested block
    return sites


def _offset(stmt, counter):
    """``c`` when ``stmt`` is ``name = counter + c`` (or ``c + counter``, ``counter - c``)
    with ``c`` an int constant; else None."""
    if not (
        isinstance(stmt, gast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], gast.Name)
        and isinstance(stmt.value, gast.BinOp)
        and isinstance(stmt.value.op, (gast.Add, gast.Sub))
    ):
        return None
    left, right = stmt.value.left, stmt.value.right

    def is_counter(n):
        return isinstance(n, gast.Name) and n.id == counter

    def constant(n):
        ok = isinstance(n, gast.Constant) and type(n.value) is int
        return n.value if ok else None

    if is_counter(left) and constant(right) is not None:
        return constant(right) if isinstance(stmt.value.op, gast.Add) else -constant(right)
    if isinstance(stmt.value.op, gast.Add) and is_counter(right):
        return constant(left)
    return None


def _list_offsets(block, loop, chain, sites, steps, array, bind, internal):
    """Every read of a step (``x[i]`` and ``x[i + c]``) appended to one list, which
    ``fold_loop_reads`` folds in the line after the loop (:mod:`pullback.loop_offsets`)."""
    helper = bind("fold_loop_reads", fold_loop_reads)
    values = internal(f"_l{chain.lstrip('_')}")
    append = internal(f"{values}_add")
    counter = _header(loop).target.id
    for item, cotangent, c in sites:
        if item.alt is None:  # the read x[i + c] by its value: the tape keeps no index
            index = counter if c is None else f"{counter} + {c}"
            item.alt = item.text if c is None else f"{chain} = ({index}, {cotangent}, {chain})"
        item.text = f"{append}({cotangent})"
    k = block.index(loop)
    block.insert(k, Line(f"{values} = []; {append} = {values}.append", src=loop.src, alt=""))
    after, fold = _fold_after(block, loop, array, chain)
    if after.alt is None:  # the differentiable-again functions keep the chain's fold
        after.alt = after.text
    offsets = "(" + "".join(f"{c}, " for _, _, c in sites) + ")"
    after.text = fold.sub(
        lambda m: f"{helper}({m.group(1)}, {array}, {chain}, {steps}, {offsets}, {values})",
        after.text,
    )


def _list_reads(block, loop, chain, found, steps, array, bind, internal):
    """The reads ``x[i]`` of a step appended to a list, handed to ``loop_reads`` after the
    loop (the module docstring)."""
    helper = bind("loop_reads", loop_reads)
    values = internal(f"_l{chain.lstrip('_')}")
    append = internal(f"{values}_add")
    for item, cotangent in found:
        if item.alt is None:
            item.alt = item.text
        item.text = f"{append}({cotangent})"
    k = block.index(loop)
    block.insert(k, Line(f"{values} = []; {append} = {values}.append", src=loop.src, alt=""))
    block.insert(
        k + 2,
        Line(
            f"{chain} = {helper}({steps}, {len(found)}, {values}, {array}, {chain})",
            src=loop.src,
            alt="",
        ),
    )


def _own_buffer(block, loop, chain, found, steps, array, bind, internal):
    """The one read a step ``x[i]`` stored into the loop's own buffer (see
    :mod:`pullback.loop_buffers`): a real scalar cotangent into its slot, anything else
    pushed onto the chain as before."""
    ((item, cotangent),) = found
    counter = _header(loop).target.id
    buffer = internal(f"_l{chain.lstrip('_')}")
    types = internal(f"{buffer}_real")
    k = block.index(loop)
    # The chain folded right after the loop (the sweep's return, or the adjoint of a
    # local array): one call, the buffer itself when nothing else was read; its slots
    # hold 0.0 + cotangent (a zero stored as +0.0), what that fold would add up.
    folds = _fold_after(block, loop, array, chain)
    at_once = folds is not None
    after, fold = folds if at_once else (None, None)
    value = cotangent
    lines = []
    if not cotangent.isidentifier():  # an expression: evaluated once
        value = internal("_lread")
        lines.append(f"{value} = {cotangent}")
    lines += [
        f"if {bind('type', type)}({value}) in {types}:",
        f"    {buffer}[{counter}] = {value}{' or 0.0' if at_once else ''}",
        "else:",
        f"    {chain} = ({counter}, {value}, {chain})",
    ]
    if item.alt is None:
        item.alt = item.text
    item.text = "\n".join(lines)
    own = bind("own_reads", own_reads)
    block.insert(k, Line(f"{buffer}, {types} = {own}({steps}, {array})", src=loop.src, alt=""))
    if at_once:
        folded = bind("fold_owned_reads", fold_owned_reads)
        if after.alt is None:  # the differentiable-again functions keep the chain's fold
            after.alt = after.text
        after.text = fold.sub(
            lambda m: f"{folded}({m.group(1)}, {array}, {chain}, {steps}, {buffer})", after.text
        )
        return
    node = bind("owned_node", owned_node)
    block.insert(
        k + 2,
        Line(f"{chain} = {node}({steps}, {buffer}, {chain})", src=loop.src, alt=""),
    )
