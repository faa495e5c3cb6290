"""Cotangent buffers the reverse sweep owns: writes into local arrays in loops at O(1) a write.

The pullback of ``out = array_set(out, i, v)`` turns the cotangent of ``out`` after the write
into the cotangent before it by zeroing the written entries. The plain pullback copies the
whole cotangent to do that (it cannot know who else holds it): a loop that fills an
``n``-vector then costs O(n^2). This pass, run on the built reverse sweep, proves for the
writes in an innermost reverse loop that the cotangent buffer an earlier write's pullback
returned is held by nobody else, and then lets the pullback (and the folding of the
array's index reads) update that buffer in place::

    _own1 = None
    for i in reversed(_range1):
        ...
        _cot1 = _array_set_pullback_owned(d_out_2, out_1, i, _t8, _own1); _own1 = _cot1[3]

The run-time helpers (:mod:`pullback.arrays_inplace`) update in place only a cotangent that
*is* the owned buffer (identity), so the first write of every loop entry copies once.

What is proved, statically, on the generated text (never a guess from reference counts):

* the *family* of a write is the adjoints its cotangent moves through: the pullback's
  argument, the names ``_cotN[0]`` is assigned to, and everything joined to them by plain
  renames ``d_a = d_b`` and ``d_a = fold_reads(d_b, x, chain)`` inside the loop;
* inside the loop every line that mentions a family name is one of those forms, a test
  ``if d_a is (not) ZERO:`` or ``d_a = ZERO``, and the pullback's result tuple is only read
  as ``_cotN[k]`` with ``_cotN[0]`` going to the family: so the buffer never reaches a
  variable outside the family (the value's cotangent, ``_cotN[2]``, is a copy);
* where a buffer is updated in place, no other family name is live (a backward liveness
  analysis of the whole reverse sweep, loops to a fixed point), so no alias of the buffer
  is read afterwards.

The owned form is the line's text (the sweeps); the differentiable-again functions keep the
plain, transformable pullback (``Line.alt``), so second derivatives are unchanged. Where
kinds prove a write a scalar into a vector, :mod:`.owned_inline` writes the helper's two
index operations into the sweep instead (and adds a read into the buffer where it is read).
"""

from __future__ import annotations

import ast
import functools

from .. import arrays_inplace, containers_inplace
from ..tree_walk import walk
from .code import Compound, Line
from .owned_inline import inline_fold_skip, inline_reads, inline_write


def own_cotangents(body, namespace, bind, internal, prefix, kinds=None) -> None:
    """Rewrite, in place, the array-write pullbacks of innermost reverse loops in ``body``
    (a list of :class:`Line`/:class:`Compound`) whose cotangent buffer is provably owned.

    ``bind(hint, value)`` names a helper in the generated namespace, ``internal(base)``
    makes a fresh internal name, ``prefix`` is the adjoints' prefix (``d_``); ``kinds``
    (the names' kinds) lets a scalar write into a vector run inline (owned_inline.py)."""
    pullbacks = {n for n, v in namespace.items() if v is arrays_inplace.array_set_pullback}
    if not pullbacks or not any(_mentions_any(body, pullbacks)):
        return
    try:
        live_after = _liveness(body)
        loops = list(_innermost_loops(body))
    except SyntaxError:  # a line this pass cannot read alone: leave the sweep as it is
        return
    # ``a[i] += v`` pullbacks hand the array's cotangent through as it is (never written
    # to): members of a family like a rename, left as they are.
    passing = {n for n, v in namespace.items() if v in _PASSING_PULLBACKS}
    for block, loop in loops:
        _own_loop(block, loop, (pullbacks, passing), live_after, bind, internal, (prefix, kinds))


_PASSING_PULLBACKS = (
    arrays_inplace.array_add_set_pullback,
    arrays_inplace.array_sub_set_pullback,
)


# The pullbacks of the normalizer's read helpers hand the cotangent through unchanged.
_IDENTITY_PULLBACKS = (
    arrays_inplace.array_fresh_pullback,
    arrays_inplace.array_named_read_pullback,
)


def drop_identity_pullbacks(body, namespace) -> None:
    """``d_t = _array_fresh_pullback(d_u, t)[0]`` is ``d_t = d_u`` (the function returns
    ``d_u`` itself): written so in the sweeps, one call less per read of a written array.
    Pullbacks with a sweep form (:func:`_sweep_forms`) call it in the sweeps. The
    differentiable-again functions keep the calls (``Line.alt``)."""
    _use_sweep_forms(body, namespace)
    names = {n for n, v in namespace.items() if any(v is f for f in _IDENTITY_PULLBACKS)}
    if not names:
        return
    for item in _lines(body):
        if not isinstance(item, Line) or not any(n in item.text for n in names):
            continue
        try:
            target, value = _single(item)
        except SyntaxError:
            continue
        if (
            target is not None
            and isinstance(value, ast.Subscript)
            and isinstance(value.slice, ast.Constant)
            and value.slice.value == 0
            and isinstance(value.value, ast.Call)
            and _plain(value.value.func) in names
            and value.value.args
            and isinstance(value.value.args[0], ast.Name)
            and not value.value.keywords
        ):
            _rewrite(item, f"{target} = {value.value.args[0].id}")


# Transformable pullbacks and the faster functions, equal in value, that the sweeps call
# instead (the transformable one stays for second order).
@functools.cache
def _sweep_forms() -> tuple:
    # imported on first use: importing pullback loads no rule module (test_cold_start)
    from ..rules import numpy_assemble_pullbacks

    return (
        (containers_inplace.list_set_pullback, containers_inplace.list_set_pullback_sweep),
        (numpy_assemble_pullbacks.array_pullback, numpy_assemble_pullbacks.array_pullback_sweep),
    )


def _use_sweep_forms(body, namespace) -> None:
    for slow, fast in _sweep_forms():
        names = [n for n, v in namespace.items() if v is slow]
        if not names:
            continue
        fast_name = "_" + fast.__name__
        if namespace.setdefault(fast_name, fast) is not fast:
            continue  # the name is taken (never by the generator): keep the calls
        for item in _lines(body):
            if not isinstance(item, Line) or not any(n + "(" in item.text for n in names):
                continue
            try:
                target, value = _single(item)
            except SyntaxError:
                continue
            call, item_of = value, ""
            if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Constant):
                call, item_of = value.value, f"[{value.slice.value!r}]"  # fn(...)[0]
            if (
                target is not None
                and isinstance(call, ast.Call)
                and _plain(call.func) in names
                and not call.keywords
                and not any(isinstance(a, ast.Starred) for a in call.args)
            ):
                args = ", ".join(ast.unparse(a) for a in call.args)
                _rewrite(item, f"{target} = {fast_name}({args}){item_of}")


# -- parsing generated lines ------------------------------------------------------------
@functools.lru_cache(maxsize=8192)
def _statements(text: str) -> tuple:
    """The statements of one generated line (``a = b; c = d`` is two); never mutated."""
    return tuple(ast.parse(text).body) if text.strip() else ()


def _header(item: Compound):
    """The ``if``/``for``/``while`` statement of a compound's header (with an empty body)."""
    return _statements(item.header + "\n    pass")[0]


def _names(node, ctx) -> set[str]:
    return {n.id for n in walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ctx)}


def _uses_defs(stmt) -> tuple[set, set]:
    if isinstance(stmt, (ast.For, ast.While, ast.If)):
        test = stmt.iter if isinstance(stmt, ast.For) else stmt.test
        defs = _names(stmt.target, ast.Store) if isinstance(stmt, ast.For) else set()
        return _names(test, ast.Load), defs
    uses = _names(stmt, ast.Load)
    if isinstance(stmt, ast.AugAssign):
        uses |= _names(stmt.target, ast.Store)
    return uses, _names(stmt, ast.Store) | _names(stmt, ast.Del)


def _mentions_any(block, names):
    for item in block:
        if isinstance(item, Line):
            yield any(n in item.text for n in names)
        else:
            yield any(n in item.header for n in names)
            yield from _mentions_any(item.body, names)
            yield from _mentions_any(item.orelse, names)


def _is_loop(item) -> bool:
    return isinstance(item, Compound) and isinstance(_header(item), (ast.For, ast.While))


def _innermost_loops(block):
    """``(block, loop)`` for every loop compound with no loop inside it."""
    for item in block:
        if not isinstance(item, Compound):
            continue
        inner = list(_innermost_loops(item.body)) + list(_innermost_loops(item.orelse))
        if inner:
            yield from inner
        elif _is_loop(item):
            yield block, item


# -- liveness ---------------------------------------------------------------------------
def _liveness(body) -> dict[int, set]:
    """``{id(line): names live after it}`` for every line of ``body`` (a whole sweep)."""
    record: dict[int, set] = {}
    _live_before(body, set(), record)
    return record


def _live_before(block, after: set, record) -> set:
    live = set(after)
    for item in reversed(block):
        if isinstance(item, Line):
            record[id(item)] = set(live)
            for stmt in reversed(_statements(item.text)):
                uses, defs = _uses_defs(stmt)
                live = (live - defs) | uses
            continue
        head = _header(item)
        uses, defs = _uses_defs(head)
        if isinstance(head, ast.If):
            live = (
                uses
                | _live_before(item.body, live, record)
                | _live_before(item.orelse, live, record)
            )
            continue
        # A loop: live at its head = live after it, or what an iteration needs (to a fixed
        # point, the sets only grow); an else block runs after the last iteration.
        exit_live = _live_before(item.orelse, live, record) if item.orelse else live
        at_head = set(exit_live) | uses
        while True:
            body_in = _live_before(item.body, at_head, record)
            new = exit_live | uses | (body_in - defs)
            if new == at_head:
                break
            at_head = new
        live = at_head
    return live


# -- one loop ---------------------------------------------------------------------------
class _Family:
    """Union-find of adjoint names joined by renames, folds and pullbacks."""

    def __init__(self):
        self.parent: dict[str, str] = {}

    def find(self, a: str) -> str:
        self.parent.setdefault(a, a)
        while self.parent[a] != a:
            self.parent[a] = self.parent[self.parent[a]]
            a = self.parent[a]
        return a

    def join(self, a: str, b: str):
        self.parent[self.find(a)] = self.find(b)


def _lines(block):
    for item in block:
        if isinstance(item, Line):
            if item.text:
                yield item
        else:
            yield item
            yield from _lines(item.body)
            yield from _lines(item.orelse)


def line_statements(item) -> tuple:
    return _statements(item.text) if isinstance(item, Line) else ()


def _single(item):
    stmts = _statements(item.text) if isinstance(item, Line) else []
    if len(stmts) == 1 and isinstance(stmts[0], ast.Assign) and len(stmts[0].targets) == 1:
        target = stmts[0].targets[0]
        if isinstance(target, ast.Name):
            return target.id, stmts[0].value
    return None, None


def _plain(node) -> str | None:
    return node.id if isinstance(node, ast.Name) else None


def _pullback_call(value, pullbacks):
    """The adjoint name passed to an array-write pullback call, or None."""
    if (
        isinstance(value, ast.Call)
        and _plain(value.func) in pullbacks
        and len(value.args) == 4
        and not value.keywords
        and all(isinstance(a, (ast.Name, ast.Constant)) for a in value.args)
    ):
        return _plain(value.args[0])
    return None


def _fold_call(value):
    """``(acc, x, chain)`` of ``fold_reads(acc, x, chain)`` with plain names, or None."""
    if (
        isinstance(value, ast.Call)
        and _plain(value.func) == "fold_reads"
        and len(value.args) == 3
        and not value.keywords
        and all(isinstance(a, ast.Name) for a in value.args)
    ):
        return tuple(a.id for a in value.args)
    return None


def _item_of(value, temps) -> tuple[str, int] | None:
    """``(temp, k)`` for ``_cotN[k]`` with ``_cotN`` a pullback's result."""
    if (
        isinstance(value, ast.Subscript)
        and _plain(value.value) in temps
        and isinstance(value.slice, ast.Constant)
        and type(value.slice.value) is int
    ):
        return value.value.id, value.slice.value
    return None


def _own_loop(block, loop, pullbacks, live_after, bind, internal, prefix_kinds):
    prefix, kinds = prefix_kinds
    writing, passing = pullbacks
    pullbacks = writing | passing
    items = list(_lines(loop.body))
    calls = {}  # id(line) -> (temp, adjoint argument): the pullbacks that write
    passes = {}  # the same for the pullbacks that hand the cotangent through
    for item in items:
        target, value = _single(item)
        arg = _pullback_call(value, pullbacks) if target else None
        if arg is not None and arg.startswith(prefix) and not target.startswith(prefix):
            found = calls if _plain(value.func) in writing else passes
            found[id(item)] = (target, arg)
    if not calls:
        return
    temps = {t for t, _ in calls.values()} | {t for t, _ in passes.values()}
    if len(temps) != len(calls) + len(passes):
        return  # one temporary for two pullbacks: not the generator's shape, leave it
    fam = _Family()
    for t, arg in (*calls.values(), *passes.values()):
        fam.join(t, arg)
    for item in items:
        target, value = _single(item)
        if target is None or not target.startswith(prefix):
            continue
        got = _item_of(value, temps)
        if got is not None and got[1] == 0:
            fam.join(target, got[0])
        elif _plain(value) and _plain(value).startswith(prefix):
            fam.join(target, value.id)
        elif _fold_call(value) and _fold_call(value)[0].startswith(prefix):
            fam.join(target, _fold_call(value)[0])
    roots = {fam.find(t) for t in temps}
    members = {n for n in list(fam.parent) if fam.find(n) in roots}
    if not all(_allowed(item, members, temps, pullbacks) for item in items):
        return
    # sorted: the tokens' names must not depend on the hash seed
    tokens = {root: internal("_own") for root in sorted(roots)}
    owned_pb = bind("array_set_pullback_owned", arrays_inplace.array_set_pullback_owned)
    owned_fold = bind("fold_reads_owned", arrays_inplace.fold_reads_owned)
    changed = set()
    folds = []
    for item in items:
        if not isinstance(item, Line):
            continue
        target, value = _single(item)
        if id(item) in calls:
            temp, arg = calls[id(item)]
            root = fam.find(temp)
            group = {n for n in members if fam.find(n) == root} - {temp}
            if live_after.get(id(item), set()) & group:
                continue  # an alias of the cotangent is read later: keep the copy
            tok = tokens[root]
            args = ", ".join(ast.unparse(a) for a in value.args)
            if not inline_write(item, value, temp, tok, owned_pb, kinds, loop, line_statements):
                _rewrite(item, f"{temp} = {owned_pb}({args}, {tok}); {tok} = {temp}[3]")
            changed.add(root)
        elif target in members and _fold_call(value):
            acc, x, chain = _fold_call(value)
            root = fam.find(target)
            group = {n for n in members if fam.find(n) == root} - {target}
            if acc not in members or live_after.get(id(item), set()) & group:
                continue
            tok = tokens[root]
            _rewrite(item, f"{target}, {tok} = {owned_fold}({acc}, {x}, {chain}, {tok})")
            if target == acc:
                folds.append(((item, acc, x, chain, tok), group))
    for fold, group in folds:
        inline_reads(loop, block, fold, live_after, group, line_statements, internal)
        inline_fold_skip(fold[0], fold[3], fold[0].text)
    k = next(i for i, item in enumerate(block) if item is loop)  # earlier inserts shift it
    for root in sorted(changed, key=tokens.get):
        block.insert(k, Line(f"{tokens[root]} = None", src=loop.src))


def _rewrite(item: Line, text: str):
    if item.alt is None:
        item.alt = item.text  # differentiable again: the plain, transformable pullback
    item.text = text


def _allowed(item, members, temps, pullbacks) -> bool:
    """Whether a line of the loop keeps every family buffer inside the family."""
    if isinstance(item, Compound):
        head = _header(item)
        if not (_names(head, ast.Load) | _names(head, ast.Store)) & (members | temps):
            return True
        test = head.test if isinstance(head, ast.If) else None
        return (
            isinstance(test, ast.Compare)
            and _plain(test.left) in members
            and len(test.ops) == 1
            and isinstance(test.ops[0], (ast.Is, ast.IsNot))
            and _plain(test.comparators[0]) == "ZERO"
        )
    stmts = _statements(item.text)
    mentioned = set().union(*(_names(s, ast.Load) | _names(s, ast.Store) for s in stmts))
    if not mentioned & (members | temps):
        return True
    target, value = _single(item)
    if target is None:
        return False
    if target in temps:  # the pullback itself: only its cotangent argument is a member
        return _pullback_call(value, pullbacks) in members and not (
            _names(value, ast.Load) - {value.args[0].id}
        ) & (members | temps)
    got = _item_of(value, temps)
    if got is not None:
        return (target in members) == (got[1] == 0)
    if target not in members:
        return False
    if _plain(value) in members or _plain(value) == "ZERO":
        return True
    fold = _fold_call(value)
    return fold is not None and fold[0] in members and not set(fold[1:]) & (members | temps)
