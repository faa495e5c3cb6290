"""When is ``x += y`` a plain rebinding ``x = x + y``? (code PB105)

On an array ``x += y`` writes into the array, so every other name that refers to the same
array sees the change; ``x = x + y`` makes a new array. The transform may rewrite the first
into the second only when no other name can refer to ``x``'s array. That is provable when

* every definition of ``x`` reaching the statement (from ``beniget``'s def-use chains) is a
  *fresh* value: an arithmetic result, a constant, a tuple display, a call known to return a
  new object, or another augmented assignment to ``x`` that is itself a rebinding; a
  parameter is never fresh, since it is the caller's array;
* and every use of those definitions that may run before the statement only reads ``x``:
  an operand of arithmetic or a comparison, a subscript read used that way, a test, an
  argument of a call known not to keep it, ``return x``.

The set of rebinding statements is the greatest fixed point of these conditions, so loops
(``s = 0.0; for ...: s += v``) are handled.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable

import gast

from ..resolve import parent_map
from ..transform.inplace_calls import inplace_statement_call
from ..transform.owned_helpers import is_owned_result
from ..tree_walk import walk
from .alias_uses import AliasUses, selects_elements
from .moves import Moves


def is_number(node) -> bool:
    """``0.0``, ``-1``, ``1e-3j`` written in the source: an immutable number."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        node = node.operand
    return (
        isinstance(node, gast.Constant)
        and isinstance(node.value, (int, float, complex))
        and not isinstance(node.value, bool)
    )


class Reason:
    """Why an augmented assignment is not a provable rebinding (a plain class, not a
    dataclass: dataclasses cost about half a millisecond each at import)."""

    def __init__(self, kind: str, node=None):
        self.kind = kind  # "parameter", "not_fresh", "shared", "unknown"
        self.node = node  # the definition or the use that made it so


@functools.cache
def _quiet_chains():
    """The class of def-use chains without beniget's warnings on stderr (free names are
    expected). beniget is imported by the first analysis, not by ``import pullback``: most
    functions have no ``name op= value`` to analyse, and a cold start pays each import."""
    import beniget

    class QuietChains(beniget.DefUseChains):
        def warn(self, msg, node):  # noqa: D102 - silence
            pass

    return QuietChains


class AliasAnalysis(AliasUses):
    """Classify every ``name op= value`` statement of a function as rebinding or not.

    ``fresh_call(call)`` tells whether a call returns a new object that does not keep a
    reference to its arguments (the checker resolves it against the rule registry).
    """

    def __init__(
        self,
        tree: gast.FunctionDef,
        fresh_call: Callable[[gast.Call], bool],
        inplace_call: Callable | None = None,
        helper_writes=None,
        container_kind: Callable | None = None,
        new_object: Callable | None = None,
    ):
        self.tree = tree
        # name -> "list" / "dict" / None: the names whose slice stores copy values (arrays)
        self.container_kind = container_kind
        self.fresh_call = fresh_call
        # a call that makes a new object of a user's class (which may keep its arguments,
        # so it is no harmless use of them): a fresh definition for `v += w`
        self.new_object = new_object
        self.parent = parent_map(tree)
        # The arrays that in-place calls in statement position write (``a.fill(v)``,
        # ``np.copyto(a, s)``, ``f(..., out=a)``): such a use is a write, like ``a[i] = v``,
        # unless the call's result (the array itself, for out=) gets a name.
        self.inplace_uses: dict[gast.Name, bool] = {}
        # Their other arguments are only read (the values are copied into the array).
        self.inplace_calls: set[gast.Call] = set()
        for node in walk(tree) if inplace_call is not None else ():
            call = inplace_statement_call(node)
            spec = inplace_call(call) if call is not None else None
            if spec is not None and spec.problem is None:
                kept = isinstance(node, gast.Assign) and spec.kind == "out"
                self.inplace_uses[spec.target] = kept
                self.inplace_calls.add(call)
        # fill(buf, x) with a helper that writes into buf: a write too (check/helper_writes.py)
        self.owned_fresh = None
        self.checker = helper_writes  # the checker, when it passed itself
        if helper_writes is not None:
            self.owned_fresh = helper_writes.owned_result_fresh
            for node in walk(tree):
                if isinstance(node, gast.Call):
                    for arg, rebound in helper_writes.owned_argument_uses(node):
                        self.inplace_uses[arg] = not rebound and not self._harmless_use(node)
        self.reaching: dict[gast.AST, list[gast.AST]] = defaultdict(list)
        self.users: dict[gast.AST, list[gast.AST]] = {}
        module = gast.Module(body=[tree], type_ignores=[])
        chains = _quiet_chains()()
        chains.visit(module)
        for node, definition in chains.chains.items():
            users = [u.node for u in definition.users()]
            self.users[node] = users
            for user in users:
                self.reaching[user].append(node)
        self.moves = Moves(tree, self.parent)
        self._assumed: set = set()  # move definitions taken as fresh while proving a cycle
        self._map_calls: dict = {}  # map(f, (a, b)): the calls f(a), f(b) asked about
        self.reasons: dict[gast.AugAssign, Reason] = {}
        self._solve()

    # -- the fixed point ---------------------------------------------------------------
    def _solve(self) -> None:
        candidates = [
            node
            for node in walk(self.tree)
            if isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name)
        ]
        self.allowed = set(candidates)
        changed = True
        while changed:
            changed = False
            for stmt in candidates:
                if stmt not in self.allowed:
                    continue
                reason = self._check(stmt)
                if reason is not None:
                    self.allowed.discard(stmt)
                    self.reasons[stmt] = reason
                    changed = True
        self._solve_deferred([c for c in candidates if c not in self.allowed])

    def _solve_deferred(self, candidates) -> None:
        """``s = x[i]; s += v``: not provably a rebinding (``x[i]`` is a view of a row when
        ``x`` has two axes), but one whenever the value is immutable when the statement
        runs (a float, a NumPy scalar: Python rebinds those), which is what an element
        read of a vector gives. These statements are *deferred*: the transform checks the
        value when it runs and refuses it there if ``+=`` would change an object in place
        (containers_mutation.immutable_value). A statement stays deferred while every
        definition reaching it is fresh, an element read, or such a statement itself."""
        self.deferred = set(candidates)
        changed = True
        while changed:
            changed = False
            for stmt in list(self.deferred):
                if not self._deferrable(stmt):
                    self.deferred.discard(stmt)
                    changed = True
        # Only those whose value comes from an element read, a number or a call's result
        # (directly or through another such statement): `t = 0.0; ... f(t); t += h` (a
        # clock passed to a right-hand side) is a float each time it runs unless `h` is an
        # array, while `y = x * 1.0; z = y; y += 1` stays reported before it runs.
        # A parameter is an origin too (`def f(x, n): ... n += 1`): an int or a float
        # rebinds, the caller's array would change (refused by the check when the call's
        # kinds say array, else when it runs).
        origin = {
            s
            for s in self.deferred
            if any(
                self._element_read(d)
                or self._number(d)
                or self._picked(d)
                or self._call_result(d)
                or self._is_parameter(d)
                or self._parameter_copy(d)
                for d in self._defs(s)
            )
        }
        changed = True
        while changed:
            changed = False
            for stmt in self.deferred - origin:
                if any(self.parent.get(d) in origin for d in self._defs(stmt)):
                    origin.add(stmt)
                    changed = True
        self.deferred &= origin
        self._parameter_origins()

    def _parameter_origins(self) -> None:
        """For each deferred statement, the parameters whose value it may change: those
        reaching it directly or through another deferred statement (`n += 1` in a loop)."""
        self.parameters = {s: set() for s in self.deferred}
        changed = True
        while changed:
            changed = False
            for stmt in self.deferred:
                found = set(self.parameters[stmt])
                for d in self._defs(stmt):
                    if self._is_parameter(d):
                        found.add(d.id)
                    elif self._parameter_copy(d):
                        found.add(self._parameter_copy(d))
                    elif self.parent.get(d) in self.parameters:
                        found |= self.parameters[self.parent.get(d)]
                if found != self.parameters[stmt]:
                    self.parameters[stmt] = found
                    changed = True

    def parameter_origins(self, stmt) -> set:
        """The parameters whose caller's value the deferred ``stmt`` may hold."""
        return self.parameters.get(stmt, set())

    def is_deferred(self, stmt: gast.AugAssign) -> bool:
        return stmt in self.deferred

    def _defs(self, stmt) -> list:
        name = stmt.target
        return [
            d for d in self.reaching.get(name, ()) if isinstance(d, gast.Name) and d.id == name.id
        ]

    def _deferrable(self, stmt) -> bool:
        defs = self._defs(stmt)
        if not defs:
            return False
        for definition in defs:
            if self._is_parameter(definition) or self._parameter_copy(definition):
                continue  # the caller's value: checked against the call's kinds, or as it runs
            parent = self.parent.get(definition)
            if isinstance(parent, gast.AugAssign) and parent.target is definition:
                if parent in self.allowed or parent in self.deferred:
                    continue
                return False
            if (
                self._fresh_definition(definition)
                or self._element_read(definition)
                or self._picked(definition)
                or self._call_result(definition)
            ):
                continue
            return False
        return True

    def _picked(self, definition) -> bool:
        """``name = min(a, b)`` (or ``max``): one of the arguments itself, a number when
        they are (``h = min(h, T - t); h *= 0.5`` in an adaptive step loop), which the
        deferred statement's run-time check tells from an array."""
        parent = self.parent.get(definition)
        return (
            isinstance(parent, gast.Assign)
            and parent.targets == [definition]
            and picks_an_argument(parent.value)
        )

    def _number(self, definition) -> bool:
        """``name = 0.0`` (or ``-1``, ``1e-3j``, or ``t, y = 0.0, y0``): an immutable
        number."""
        parent = self.parent.get(definition)
        if isinstance(parent, gast.Tuple):  # t, y = 0.0, y0: the number at t's place
            owner = self.parent.get(parent)
            if not (isinstance(owner, gast.Assign) and owner.targets == [parent]):
                return False
            value = owner.value
            return (
                isinstance(value, gast.Tuple)
                and len(value.elts) == len(parent.elts)
                and is_number(
                    value.elts[next(k for k, e in enumerate(parent.elts) if e is definition)]
                )
            )
        if not (isinstance(parent, gast.Assign) and parent.targets == [definition]):
            return False
        return is_number(parent.value)

    def _element_read(self, definition) -> bool:
        """``name = base[index]`` with an index of no slice, ``None`` or ``...``."""
        parent = self.parent.get(definition)
        if not (isinstance(parent, gast.Assign) and parent.targets == [definition]):
            return False
        return isinstance(parent.value, gast.Subscript) and selects_elements(parent.value.slice)

    def _call_result(self, definition) -> bool:
        """``loss, cache = f(x)`` (or ``loss = f(x)``) with a call pullback cannot tell
        returns a new object (a user's function, a method found when it runs): the
        ``out, cache`` and ``loss, grads`` convention of layer code, whose
        ``loss += reg * ...`` rebinds a float or NumPy scalar. Whether the value is one is
        known only when it runs (an array there is refused then)."""
        parent = self.parent.get(definition)
        if isinstance(parent, gast.Tuple):
            if any(isinstance(e, gast.Starred) for e in parent.elts):
                return False
            parent = self.parent.get(parent)
            if not (isinstance(parent, gast.Assign) and isinstance(parent.targets[0], gast.Tuple)):
                return False
        elif not (isinstance(parent, gast.Assign) and parent.targets == [definition]):
            return False
        value = parent.value
        # a call known to return a new object is decided before it runs (fresh, or shared)
        return (
            len(parent.targets) == 1 and isinstance(value, gast.Call) and not self.fresh_expr(value)
        )

    def is_rebinding(self, stmt: gast.AugAssign) -> bool:
        return stmt in self.allowed

    def reason(self, stmt: gast.AugAssign) -> Reason | None:
        return self.reasons.get(stmt)

    def _check(self, stmt: gast.AugAssign) -> Reason | None:
        name = stmt.target.id
        defs, reason = self._fresh_definitions(stmt.target)
        if reason is not None:
            return reason
        for definition in defs:
            for use in self.users.get(definition, ()):
                if use is stmt.target or not isinstance(use, gast.Name) or use.id != name:
                    continue
                if self._harmless_use(use) or self.moves.is_move_use(use):
                    continue
                if self._may_precede(use, stmt):
                    return Reason("shared", use)
        return None

    def store_reason(self, target: gast.Subscript) -> Reason | None:
        """``None`` when ``target`` (``a[idx]`` being written) writes into a *local* array:
        every definition of ``a`` reaching the store is fresh, and no use of it that may
        run before the store lets another name, container or call keep the array (index
        reads without slices, other stores, arithmetic are fine). Else why not."""
        return self.write_reason(target.value, self._statement(target))

    def write_reason(self, base, stmt) -> Reason | None:
        """As :meth:`store_reason`, for a write into ``base`` (a Name) by ``stmt``: a
        subscript store or an in-place call (``base.fill(v)``, ``np.copyto(base, s)``)."""
        if not isinstance(base, gast.Name):
            return Reason("unknown")
        defs, reason = self._fresh_definitions(base)
        if reason is not None:
            return reason
        for definition in defs:
            for use in self.users.get(definition, ()):
                if use is base or not isinstance(use, gast.Name) or use.id != base.id:
                    continue
                if self._harmless_use(use) or self._store_or_read(use):
                    continue
                if self.moves.is_move_use(use):
                    continue  # u, un = un, u: the name that gets the array is checked
                if self._consumed_by_store(use, stmt):
                    continue
                if self._may_precede(use, stmt, self._renewed_loops(definition, stmt)):
                    return Reason("shared", use)
        return None

    def _renewed_loops(self, definition, stmt) -> set:
        """The loops whose every pass binds ``definition`` anew before ``stmt`` runs:
        ``x = np.zeros(n); x[i] = 1; xs[t] = x`` in a loop body writes each pass into the
        array made in that pass, so the keeping use of the pass before holds another array.
        That is so when the definition's statement comes before ``stmt`` in one statement
        list (nothing conditional between them) inside the loop."""
        first = self.parent.get(definition)
        if not isinstance(first, (gast.Assign, gast.AnnAssign)) or not self._fresh_definition(
            definition
        ):
            return set()
        if self.moves.source(definition) is not None:
            return set()  # a = b hands on b's array: not a new one each pass
        block = self.parent.get(first)
        body = next(
            (
                getattr(block, f)
                for f in ("body", "orelse", "finalbody")
                if any(s is first for s in getattr(block, f, ()) or ())
            ),
            None,
        )
        if body is None:
            return set()
        later = body[next(k for k, s in enumerate(body) if s is first) + 1 :]
        if not any(self._inside(stmt, s) for s in later):
            return set()
        return set(self._repeating_loops(first))

    def _fresh_definitions(self, name: gast.Name):
        """``(definitions of name reaching it, None)`` when all are fresh, else
        ``([], why not)``."""
        defs = [
            d for d in self.reaching.get(name, ()) if isinstance(d, gast.Name) and d.id == name.id
        ]
        if not defs:
            return [], Reason("unknown")
        for definition in defs:
            if self._is_parameter(definition):
                return [], Reason("parameter", definition)
            if not self._fresh_definition(definition):
                return [], Reason("not_fresh", definition)
        return defs, None

    def _statement(self, node):
        while not isinstance(node, gast.stmt):
            node = self.parent[node]
        return node

    # -- definitions ---------------------------------------------------------------------
    def _is_parameter(self, definition) -> bool:
        return isinstance(definition, gast.Name) and isinstance(definition.ctx, gast.Param)

    def _parameter_copy(self, definition) -> str | None:
        """The parameter whose value ``definition`` takes as it is (``th = theta0``,
        ``th, om = theta0, 0.0``), which no statement rebound before: its name, else None.
        ``th += v`` on it is then deferred as on the parameter itself (a number rebinds)."""
        parent = self.parent.get(definition)
        if isinstance(parent, gast.Tuple):
            parent = self.parent.get(parent)
        if not (isinstance(parent, gast.Assign) and len(parent.targets) == 1):
            return None
        target, value = parent.targets[0], parent.value
        if isinstance(target, gast.Tuple) and isinstance(value, gast.Tuple):
            if len(target.elts) != len(value.elts) or definition not in target.elts:
                return None
            value = value.elts[target.elts.index(definition)]
        elif target is not definition:
            return None
        if not isinstance(value, gast.Name):
            return None
        defs = [d for d in self.reaching.get(value, ()) if isinstance(d, gast.Name)]
        if defs and all(self._is_parameter(d) and d.id == value.id for d in defs):
            return value.id
        return None

    def _fresh_definition(self, definition) -> bool:
        if not isinstance(definition, gast.Name):
            return False
        source = self.moves.source(definition)
        if source is not None:
            return self._moved_fresh(definition, source)
        parent = self.parent.get(definition)
        if isinstance(parent, gast.AugAssign) and parent.target is definition:
            return parent in self.allowed
        if isinstance(parent, gast.AnnAssign) and parent.target is definition:
            return parent.value is not None and self.fresh_expr(parent.value)
        if isinstance(parent, gast.Assign):
            return parent.targets == [definition] and self.fresh_expr(parent.value)
        if isinstance(parent, (gast.Tuple, gast.List)):
            owner = self.parent.get(parent)
            if isinstance(owner, gast.Assign) and owner.targets == [parent]:
                value = owner.value
                if (
                    isinstance(value, (gast.Tuple, gast.List))
                    and len(value.elts) == len(parent.elts)
                    and not any(isinstance(e, gast.Starred) for e in value.elts)
                ):
                    index = next(k for k, e in enumerate(parent.elts) if e is definition)
                    return self.fresh_expr(value.elts[index])
                return self._fresh_map(value, len(parent.elts))
        return False

    def _fresh_map(self, value, count: int) -> bool:
        """``ac, bc = map(np.array, (a, b))``: each item the call of a function returning
        a new object on one item of a display (a copy of each array)."""
        if not (
            isinstance(value, gast.Call)
            and isinstance(value.func, gast.Name)
            and value.func.id == "map"
            and len(value.args) == 2
            and not value.keywords
            and isinstance(value.args[1], (gast.Tuple, gast.List))
            and len(value.args[1].elts) == count
            and not any(isinstance(e, gast.Starred) for e in value.args[1].elts)
        ):
            return False
        calls = self._map_calls.get(id(value))
        if calls is None:  # kept: the resolver remembers calls by id
            calls = [
                gast.Call(func=value.args[0], args=[item], keywords=[])
                for item in value.args[1].elts
            ]
            self._map_calls[id(value)] = calls
        return all(self.fresh_call(call) for call in calls)

    def _moved_fresh(self, definition, source) -> bool:
        """``a = b`` (or ``u, un = un, u``) after which ``b`` is dead: ``a`` owns the array
        when every definition of ``b`` reaching the move is fresh and nothing but reads,
        stores and moves use it (so no view or other name of it is left). A cycle of moves
        (a swap in a loop) is proved by assuming it (the greatest fixed point)."""
        if definition in self._assumed:
            return True
        defs = [
            d
            for d in self.reaching.get(source, ())
            if isinstance(d, gast.Name) and d.id == source.id
        ]
        if not defs:
            return False
        self._assumed.add(definition)
        try:
            for d in defs:
                if self._is_parameter(d) or not self._fresh_definition(d):
                    return False
                for use in self.users.get(d, ()):
                    if use is source or not isinstance(use, gast.Name) or use.id != source.id:
                        continue
                    if not (
                        self._harmless_use(use)
                        or self._store_or_read(use)
                        or self.moves.is_move_use(use)
                    ):
                        return False
            return True
        finally:
            self._assumed.discard(definition)

    def fresh_expr(self, node) -> bool:
        """Whether an expression always evaluates to a new object no other name holds."""
        if isinstance(node, (gast.Constant, gast.BinOp, gast.UnaryOp, gast.Compare)):
            return True
        if isinstance(node, gast.Tuple):
            return not any(isinstance(e, gast.Starred) for e in node.elts)
        if isinstance(node, gast.IfExp):
            return self.fresh_expr(node.body) and self.fresh_expr(node.orelse)
        if is_owned_result(node):
            return True  # the final state of an array a helper owned: a copy
        if isinstance(node, gast.Call):
            # x.astype(t, copy=False) or f(..., out=y) may return an existing array.
            if any(kw.arg in ("copy", "out") for kw in node.keywords):
                return False
            if self.owned_fresh is not None and self.owned_fresh(node):
                return True
            if self.new_object is not None and self.new_object(node):
                return True
            return self.fresh_call(node)
        return False


def picks_an_argument(value) -> bool:
    """``min(...)`` or ``max(...)``: a value that is one of the arguments itself."""
    return (
        isinstance(value, gast.Call)
        and isinstance(value.func, gast.Name)
        and value.func.id in ("min", "max")
    )
