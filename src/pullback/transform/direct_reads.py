"""A parameter read a few times by constant positions or by slices, its adjoint written
directly instead of through a chain that ``fold_reads`` walks (issue 13).

The reverse sweep records each read ``x[index]`` as a node of a linked chain and folds it
into ``x``'s adjoint at the end. For ``a[0] + a[1] + a[2]`` that is three tuples and a call
that checks every node again, many times the cost of the function itself. Here, when a
differentiated parameter's every read is a line of the sweep's top level, all by integer
constants of a vector or all by slices, and nothing else adds to its adjoint, the pushes
only keep their cotangents and the return writes them into a fresh array inline::

    _reads_a = (0, d__t3, _reads_a)              # becomes: nothing (d__t3 kept to the end)
    return (fold_reads(d_a, a, _reads_a),)       # becomes:
    if _batch_axes.axes or a.dtype.kind != 'f' or _type(d__t3) not in _scalar_types ...:
        d_a = fold_reads(ZERO, a, (0, d__t3, (1, d__t2, None)))   # the very chain
    else:
        d_a = _zeros(_len(a), a.dtype)
        if d__t3:
            d_a[0] = d__t3
        ...
    return (d_a,)

The fast branch does what ``fold_reads`` does for that chain (``_few_scalar_reads`` or
``_few_view_reads`` in :mod:`pullback.read_folds`) in the same order, the first read first:
the same sums. Under any other condition checked at run time (a batch of cotangents, an
integer array, a cotangent that is zero, complex or an array where a number is expected)
the else of the test is the call with the chain the sweep would have built. A later store
of an element already written adds (``+=``); zeros are skipped, as the fold skips them, so
``+0.0`` never becomes ``-0.0``. The differentiable-again functions keep the chain
(``Line.alt``).
"""

from __future__ import annotations

import ast
import re

import numpy as np

from ..indexed_cotangent import _SCALAR_VALUE_TYPES
from ..lazy_patterns import LazyPattern
from ..read_folds import _FEW_READS
from ..tangents import batch_axes, materialize
from ..tree_walk import walk
from .code import Compound, Line, identifiers

_INT_BINDING = LazyPattern(r"([^\W\d]\w*) = (-?\d+)")


def direct_reads(body, forward, wrt, kinds, prefix, chains, bind, internal) -> set:
    """Rewrite, in place, the reads of each parameter in ``wrt`` that the module docstring
    describes (``body`` the whole reverse sweep, its last line the return). Returns the
    parameters rewritten: in the fused sweeps their cotangents are concrete (an array of
    their shape and dtype, writable, what ``materialize`` would give)."""
    done: set = set()
    if not body or not isinstance(body[-1], Line) or not body[-1].text.startswith("return ("):
        return done
    ints = None
    for p in wrt:
        chain = chains.get(p)
        kind = kinds.get(p)
        if chain is None or not (isinstance(kind, tuple) and kind[0] == "array"):
            continue
        call = f"fold_reads({prefix}{p}, {p}, {chain})"
        if body[-1].text.count(call) != 1:
            continue
        if ints is None:
            ints = _int_constants(forward)
        if _rewrite(body, p, prefix + p, chain, call, kind[1], ints, bind, internal):
            done.add(p)
    return done


def _rewrite(body, p, adj, chain, call, ndim, ints, bind, internal) -> bool:
    pushes = []  # (position in body, index text, cotangent text)
    start = zero = None  # the positions of the lines that start the chain and the adjoint
    for k, item in enumerate(body[:-1]):
        if isinstance(item, Compound):
            if any(chain in ids or adj in ids for ids in _compound_ids(item)):
                return False
            continue
        ids = identifiers(item.text)
        if chain in ids and item.once is None and _is_initialization(item.text):
            if pushes:  # the chain started again after reads: the fold sums only the later
                return False
            start = k  # (a chain rewritten before it may have left the others' start)
            continue
        if item.alt is not None or item.once is not None:
            if chain in ids or adj in ids:
                return False
            continue
        if adj in ids:
            if item.text != f"{adj} = ZERO":
                return False
            zero = k
            continue
        if chain not in ids:
            continue
        push = _push(item.text, chain)
        if push is None:
            return False
        pushes.append((k, *push))
    if not pushes or len(pushes) > _FEW_READS:
        return False
    positions = [_position(index, ints) for _, index, _ in pushes]
    if ndim == 1 and all(type(i) is int for i in positions):
        scalar = True  # elements of a vector
    elif type(ndim) is int and all(
        i is _SLICE or (type(i) is int and ndim >= 2) for i in positions
    ):
        scalar = False  # views: slices, or rows (``a[0]`` of a matrix)
    else:
        return False
    for k, index, _ in pushes:  # an index is read at the return: the same value there
        if any(_stored_after(body, k, n) for n in identifiers(index) - _BUILTIN_NAMES):
            return False
    values = []
    for (k, index, value), position in zip(pushes, positions, strict=True):
        item = body[k]
        if _IDENTIFIER.fullmatch(value) and not _stored_after(body, k, value):
            text = ""
        else:  # kept in a name of its own until the return
            name = internal("_read")
            text, value = f"{name} = {value}", name
        body[k] = Line(text, item.reads, item.src, alt=item.text)
        values.append((index, position, value))
    if start is not None:  # the chain is no longer built (nor released in the fused sweeps)
        item = body[start]
        names = [n for n in item.text.split(" = ")[:-1] if n != chain]
        text = " = ".join([*names, "None"]) if names else ""
        body[start] = Line(text, item.reads, item.src, alt=item.alt or item.text)
    if zero is not None:  # the adjoint is bound by the return's block
        item = body[zero]
        body[zero] = Line("", item.reads, item.src, alt=item.text)
    values.reverse()  # the chain's order: the first read (the last push) first
    view = None if scalar else internal("_view")
    block, once = _block(p, adj, values, scalar, bind, view)
    ret = body[-1]
    body[-1:] = [
        Line(block, src=ret.src, alt="", once=once),
        Line(ret.text.replace(call, adj), ret.reads, ret.src, ret.alt, ret.once),
    ]
    return True


_IDENTIFIER = LazyPattern(r"[^\W\d]\w*")
_SLICE = object()
_BUILTIN_NAMES = frozenset({"slice", "None"})


def _compound_ids(item):
    yield identifiers(item.header)
    for inner in (item.body, item.orelse or ()):
        for sub in inner:
            if isinstance(sub, Compound):
                yield from _compound_ids(sub)
            else:
                yield (
                    identifiers(sub.text) | identifiers(sub.alt or "") | identifiers(sub.once or "")
                )


def _is_initialization(text: str) -> bool:
    """``_reads_a = _reads_b = None``: the chains' start."""
    names = text.split(" = ")
    return names[-1] == "None" and all(_IDENTIFIER.fullmatch(n) for n in names[:-1])


def _push(text: str, chain: str):
    """``(index text, cotangent text)`` of ``chain = (index, cotangent, chain)``, or None."""
    try:
        stmts = ast.parse(text).body
    except SyntaxError:
        return None
    if len(stmts) != 1 or not isinstance(stmts[0], ast.Assign):
        return None
    (target,), value = stmts[0].targets, stmts[0].value
    if not (
        isinstance(target, ast.Name)
        and target.id == chain
        and isinstance(value, ast.Tuple)
        and len(value.elts) == 3
        and isinstance(value.elts[2], ast.Name)
        and value.elts[2].id == chain
    ):
        return None
    index, cotangent = (ast.get_source_segment(text, e) for e in value.elts[:2])
    if chain in identifiers(index) or chain in identifiers(cotangent):
        return None
    return index, cotangent


def _position(index: str, ints: dict):
    """The int an index text stands for, ``_SLICE`` for a slice, or None."""
    if re.fullmatch(r"-?\d+", index):
        return int(index)
    if index in ints:
        return ints[index]
    if index.startswith("slice(") and index.endswith(")"):
        try:
            node = ast.parse(index, mode="eval").body
        except SyntaxError:
            return None
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "slice"
            and not node.keywords
            and all(isinstance(a, (ast.Name, ast.Constant)) for a in node.args)
        ):
            return _SLICE
    return None


def _int_constants(forward) -> dict:
    """``{name: value}`` of names the forward sweep binds once, to an int literal, and
    never again."""
    found: dict = {}
    texts = list(_texts(forward))
    for text in texts:
        match = _INT_BINDING.fullmatch(text)
        if match:
            found[match.group(1)] = int(match.group(2))
    if not found:
        return found
    # Only those names' bindings are counted, and a line binds only names written in it
    # (_stores): the lines that spell none of them are not parsed.
    stored: dict = {}
    for text in texts:
        if any(name in text for name in found):
            for name in _stores(text):
                stored[name] = stored.get(name, 0) + 1
    return {n: v for n, v in found.items() if stored.get(n) == 1}


def _texts(block):
    for item in block:
        if isinstance(item, Compound):
            yield item.header
            yield from _texts(item.body)
            yield from _texts(item.orelse or ())
        else:
            for text in (item.text, item.alt, item.once):
                if text:
                    yield text


def _stores(text: str) -> set:
    """Names a line binds (every identifier, when it cannot be read alone)."""
    try:
        tree = ast.parse(text if not text.rstrip().endswith(":") else text + "\n    pass")
    except SyntaxError:
        return identifiers(text)
    return {
        n.id for n in walk(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
    } | {
        n.name
        for n in walk(tree)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }


def _stored_after(body, k: int, name: str) -> bool:
    """Whether anything after ``body[k]`` may bind ``name`` again."""
    return any(name in _stores(text) for text in _texts(body[k + 1 :]) if name in text)


def _block(p, adj, values, scalar, bind, view) -> tuple[str, str]:
    """The return's fast path and, as its else, the chain's fold (see the module
    docstring); ``values`` are ``(index text, position, cotangent name)``, first read
    first. Also the text of the fused sweeps, which grad's hot entry runs only for float
    arrays (no dtype test there) and whose cotangents are concrete (the fold's result
    materialized, as the entry would)."""
    t = bind("type", type)
    kinds = (
        f"{t}({v}) not in {bind('scalar_types', _SCALAR_VALUE_TYPES)}"
        if scalar
        else f"{t}({v}) is not {bind('ndarray', np.ndarray)}"
        for v in dict.fromkeys(v for _, _, v in values)
    )
    batch, dtype = f"{bind('batch_axes', batch_axes)}.axes", f"{p}.dtype.kind != 'f'"
    chain = "None"
    for index, _, value in reversed(values):
        chain = f"({index}, {value}, {chain})"
    fold = f"fold_reads(ZERO, {p}, {chain})"
    size = f"{bind('len', len)}({p})" if scalar else f"{p}.shape"
    lines = [
        "else:",
        # (a vector's length: no shape tuple made)
        f"    {adj} = {bind('zeros', np.zeros)}({size}, {p}.dtype)",
    ]
    if scalar:
        lines += _scalar_stores(adj, values)
    else:
        for index, _, value in values:  # in place: no copy back through __setitem__
            lines += [f"    {view} = {adj}[{index}]", f"    {view} += {value}"]
    kinds = list(kinds)
    text = [f"if {' or '.join([batch, dtype, *kinds])}:", f"    {adj} = {fold}", *lines]
    once = [
        f"if {' or '.join([batch, *kinds])}:",
        f"    {adj} = {bind('materialize', materialize)}({fold}, {p})",
        *lines,
    ]
    return "\n".join(text), "\n".join(once)


def _scalar_stores(adj, values) -> list:
    """Each nonzero cotangent stored (its element's first) or added; consecutive reads of
    one cotangent under one test."""
    written: set = set()
    signs = {position < 0 for _, position, _ in values}
    lines: list = []
    last = None
    for index, position, value in values:
        if value != last:
            lines.append(f"    if {value}:")
            last = value
        first = position not in written and (len(signs) == 1 or not written)
        written.add(position)
        lines.append(f"        {adj}[{index}] {'=' if first else '+='} {value}")
    return lines


def writes_only_its_array(statement) -> bool:
    """Whether ``statement`` is a block this module wrote (see :func:`_block`): its only
    writes are into the array it makes itself (``d = zeros(...)``, then stores into ``d``
    or into views ``v = d[...]`` of it), so it writes into no other value (what
    :mod:`.unit_products` must know of every line)."""
    if not (
        isinstance(statement, ast.If)
        and len(statement.body) == 1
        and isinstance(statement.body[0], ast.Assign)
        and statement.orelse
        and isinstance(first := statement.orelse[0], ast.Assign)
        and len(first.targets) == 1
        and isinstance(first.targets[0], ast.Name)
        and isinstance(first.value, ast.Call)
    ):
        return False
    own = {first.targets[0].id}
    body_target = statement.body[0].targets
    if len(body_target) != 1 or not isinstance(body_target[0], ast.Name):
        return False
    for s in statement.orelse[1:]:
        for inner in s.body if isinstance(s, ast.If) and not s.orelse else (s,):
            if isinstance(inner, ast.Assign) and len(inner.targets) == 1:
                target = inner.targets[0]
                if isinstance(target, ast.Name) and _view_of(inner.value, own):
                    own.add(target.id)  # a view of the array: written through below
                    continue
            elif isinstance(inner, ast.AugAssign):
                target = inner.target
            else:
                return False
            if isinstance(target, ast.Subscript):
                target = target.value
            if not (isinstance(target, ast.Name) and target.id in own):
                return False
    return True


def _view_of(value, own) -> bool:
    return (
        isinstance(value, ast.Subscript)
        and isinstance(value.value, ast.Name)
        and value.value.id in own
    )
