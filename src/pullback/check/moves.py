"""An array handed from one name to another: ``u, un = un, u`` and ``tmp = u; u = un; un =
tmp`` (the double buffering of stencil and PDE solvers).

A *move* is an assignment whose value is a bare name ``b`` (``a = b``, or one element of a
tuple display assigned to a tuple of names, ``u, un = un, u``) after which ``b`` is dead: on
every path from the statement ``b`` is bound again before anything reads it, or the function
ends. After a move the array has again one name that can reach it, so the alias analysis
(:mod:`pullback.check.aliasing`) lets the target own the array when the source owned it, and
the move is no use that keeps the array under a second name.

Proving ``b`` dead is a walk over the statements that may run next, conservative wherever
the control flow is not plain: a statement that mentions ``b`` in any other way than binding
it as a plain name reads it; a ``break`` or ``continue`` between the move and the binding, a
move inside ``try``, and a name that a nested function or lambda reads, a ``global`` or a
``nonlocal`` declares, are never proved dead. The transform then writes every array that
takes part in a move by copies (``transform/mutation.py``), so names are values again.
"""

from __future__ import annotations

import gast

from ..tree_walk import walk

_READ, _BOUND, _CLEAR = "read", "bound", "clear"


class Moves:
    """The moves of ``tree`` (a function), given its parent map."""

    def __init__(self, tree, parent):
        self.tree = tree
        self.parent = parent
        self._captured = _captured_names(tree)
        self._dead: dict = {}

    # -- which assignments are moves ------------------------------------------------------
    def source(self, definition):
        """The Name a move reads to bind ``definition`` (a Name stored), else None."""
        parent = self.parent.get(definition)
        if isinstance(parent, (gast.Assign, gast.AnnAssign)):
            targets = parent.targets if isinstance(parent, gast.Assign) else [parent.target]
            if targets == [definition] and isinstance(parent.value, gast.Name):
                return parent.value if self.is_move_use(parent.value) else None
            return None
        if isinstance(parent, (gast.Tuple, gast.List)):
            owner = self.parent.get(parent)
            if not (isinstance(owner, gast.Assign) and owner.targets == [parent]):
                return None
            value = owner.value
            if not isinstance(value, (gast.Tuple, gast.List)) or len(value.elts) != len(
                parent.elts
            ):
                return None
            index = next(k for k, e in enumerate(parent.elts) if e is definition)
            read = value.elts[index]
            if isinstance(read, gast.Name) and self.is_move_use(read):
                return read
        return None

    def is_move_use(self, use) -> bool:
        """Whether ``use`` (a Name read) is the value of a move: it goes whole to one plain
        name, nothing else in the statement reads it, and its name is dead afterwards."""
        if not (isinstance(use, gast.Name) and isinstance(use.ctx, gast.Load)):
            return False
        parent = self.parent.get(use)
        if isinstance(parent, (gast.Assign, gast.AnnAssign)) and parent.value is use:
            stmt = parent
            targets = stmt.targets if isinstance(stmt, gast.Assign) else [stmt.target]
            if not (len(targets) == 1 and isinstance(targets[0], gast.Name)):
                return False
        elif isinstance(parent, (gast.Tuple, gast.List)):
            stmt = self.parent.get(parent)
            if not (
                isinstance(stmt, gast.Assign)
                and stmt.value is parent
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], (gast.Tuple, gast.List))
                and len(stmt.targets[0].elts) == len(parent.elts)
                and not any(isinstance(e, gast.Starred) for e in parent.elts)
            ):
                return False
            target = stmt.targets[0].elts[next(k for k, e in enumerate(parent.elts) if e is use)]
            if not isinstance(target, gast.Name):
                return False
        else:
            return False
        mentions = [n for n in walk(stmt.value) if isinstance(n, gast.Name) and n.id == use.id]
        if mentions != [use]:
            return False  # a, b = u, u: two names for one array
        return self.dead_after(stmt, use.id)

    # -- is a name dead after a statement? -------------------------------------------------
    def dead_after(self, stmt, name: str) -> bool:
        key = (id(stmt), name)
        if key not in self._dead:
            self._dead[key] = self._dead_after(stmt, name)
        return self._dead[key]

    def _dead_after(self, stmt, name) -> bool:
        if name in self._captured or self._in_try(stmt):
            return False
        if _binds(stmt, name):
            return True  # u, un = un, u: the value is read before the targets are bound
        return self._rest_dead(stmt, name, set())

    def _rest_dead(self, node, name, seen) -> bool:
        """Whether ``name`` is dead on the paths that continue after the statement ``node``."""
        owner, block = self._block(node)
        if block is None:
            return False
        index = next(k for k, s in enumerate(block) if s is node)
        state = _scan_block(block[index + 1 :], name)
        if state != _CLEAR:
            return state == _BOUND
        if owner is self.tree:
            return True  # the function ends
        if isinstance(owner, (gast.For, gast.While)) and block is owner.body:
            if owner not in seen:
                seen.add(owner)
                if not _loop_top_dead(owner, name):
                    return False
            state = _scan_block(owner.orelse, name)
            if state != _CLEAR:
                return state == _BOUND
            return self._rest_dead(owner, name, seen)
        if isinstance(owner, (gast.If, gast.With, gast.For, gast.While)):
            return self._rest_dead(owner, name, seen)
        return False

    def _block(self, node):
        owner = self.parent.get(node)
        for field in ("body", "orelse"):
            block = getattr(owner, field, None)
            if isinstance(block, list) and any(s is node for s in block):
                return owner, block
        return owner, None

    def _in_try(self, node) -> bool:
        while node is not None and node is not self.tree:
            if isinstance(node, gast.Try):
                return True
            node = self.parent.get(node)
        return False


def _loop_top_dead(loop, name) -> bool:
    """After a pass of ``loop``: the next pass binds ``name`` before reading it (or never
    mentions it, and leaving the loop is checked apart)."""
    if isinstance(loop, gast.For):
        if isinstance(loop.target, gast.Name) and loop.target.id == name:
            return True
        if _mentions(loop.target, name):
            return False
    elif _mentions(loop.test, name):
        return False
    return _scan_block(loop.body, name) != _READ


def _scan_block(block, name) -> str:
    """The first statement of ``block`` that reads ``name`` or binds it, in that order:
    ``_READ``, ``_BOUND`` or ``_CLEAR`` (neither). A jump out of a clear statement reads."""
    for s in block:
        if isinstance(s, (gast.Assign, gast.AnnAssign)) and s.value is not None:
            if _mentions(s.value, name):
                return _READ
            if _binds(s, name):
                return _BOUND
        if _mentions(s, name):
            return _READ
        if any(isinstance(n, (gast.Break, gast.Continue)) for n in walk(s)):
            return _READ
    return _CLEAR


def _binds(stmt, name) -> bool:
    """``stmt`` binds ``name`` as a plain name (in a tuple of names too), and its targets
    read it nowhere (``name[i] = v`` writes into the array)."""
    if isinstance(stmt, gast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, gast.AnnAssign) and stmt.value is not None:
        targets = [stmt.target]
    else:
        return False
    bound = False
    for target in targets:
        for n in walk(target):
            if isinstance(n, gast.Name) and n.id == name:
                if not isinstance(n.ctx, gast.Store):
                    return False
                bound = True
            elif isinstance(n, (gast.Subscript, gast.Attribute, gast.Starred)):
                if _mentions(n, name):
                    return False
    return bound


def _mentions(node, name) -> bool:
    return any(isinstance(n, gast.Name) and n.id == name for n in walk(node))


def _captured_names(tree) -> set:
    """Names a nested function or lambda mentions, or a ``global``/``nonlocal`` declares:
    such a name may be read where the walk does not look."""
    found = set()
    for node in walk(tree):
        if node is tree:
            continue
        if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda)):
            found |= {n.id for n in walk(node) if isinstance(n, gast.Name)}
        elif isinstance(node, (gast.Global, gast.Nonlocal)):
            found |= set(node.names)
    return found
