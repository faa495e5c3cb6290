"""Which lists and dicts a differentiated function may change in place (issue 11, PB106).

A name is a *local container* when every binding of it in the function makes a new list or
dict — a display, a comprehension, ``list(...)``, ``dict(...)``, ``sorted(...)``, ``a + [..]``,
or a copy ``arg.copy()`` / ``arg[:]`` (whose kind the methods called on it must tell), or
comes after its last change and outside the loops that change it (``out = np.array(out)``) — and
no other name, container or call can hold that object while it is still being changed: every
use of the name that could keep the object (``m = l``, ``[l]``, ``f(l)``, ``return l``, a
loop over ``l``, a lambda reading it) comes after its last change and outside the loops
that change it. Then a change ``l.insert(i, v)`` is exactly the rebinding
``l = l[:p] + [v] + l[p:]``: nothing else sees the old object, so the primal computes the
same values, and the sweeps differentiate the rebinding with the rules they already have
(:mod:`pullback.transform.list_mutation`).

Both the check (:mod:`pullback.check.container_checks`) and the normalizer use this one
analysis, so what the check lets through is exactly what the normalizer rewrites.
"""

from __future__ import annotations

import builtins
import math

import gast
import numpy as np

from ..resolve import parent_map, resolve_call
from ..tree_walk import all_nodes, walk
from .container_readers import keeps_nothing
from .key_loops import comprehension_view, iterates_keys
from .list_rows import ListRows, Refusal, change_receiver
from .owned_helpers import ENTRY, OWNED, owned_result_kind
from .returned_containers import returned_container
from .temporary_holders import temporary_holder

LIST_ONLY = frozenset("append extend insert remove sort reverse".split())
DICT_ONLY = frozenset("update setdefault".split())
# Methods the rewrite models, on lists and on dicts.
LIST_MUTATORS = LIST_ONLY | {"pop", "clear"}
DICT_MUTATORS = DICT_ONLY | {"pop", "clear"}
MUTATORS = LIST_MUTATORS | DICT_MUTATORS
# Methods that read a container without keeping it.
READERS = frozenset("index count copy get".split())
# Builtins that read a container argument and keep no reference to it.
_SAFE_BUILTINS = (
    len, sum, max, min, sorted, list, tuple, dict, set, frozenset, any, all, print,
    str, repr, float, int, abs, bool,
)  # fmt: skip


class ContainerAnalysis(ListRows):
    """The local containers of one function (see the module docstring)."""

    # ``prove(fs, names)``: the checker's proof that the arrays in a callee's containers are
    # its own, for a container it returns (returned_containers.py). pullback.check fills it
    # when it is imported (it imports this module, so this one cannot import it): until
    # then no returned container is followed, and its changes are refused.
    prove_returned_items = None

    def __init__(
        self, fs, tree, locals_, owned_argument=None, owned_value=None, follow_returns=True
    ):
        self.fs = fs
        # whether a call's result may be a container the callee made (returned_containers.py)
        self.follow_returns = follow_returns
        self.own_item_results: set = set()  # ids of such calls whose arrays are new too
        # a helper call's result that is the list or dict it owned (check/helper_writes.py):
        # "same" (buf = fill(buf, x): the kind buf has), "list", "dict", or None
        self.owned_value = owned_value
        # (name node, parent) -> whether a helper call writes into that argument
        # (check/helper_writes.py); a call of a helper's specialization is one too
        self.owned_argument = owned_argument or self._specialization_argument
        self.tree = tree
        self.locals = locals_
        self.parents = parent_map(tree)
        args = tree.args
        self.params = {a.id for a in args.posonlyargs + args.args + args.kwonlyargs}
        self.params |= {a.id for a in (args.vararg, args.kwarg) if a is not None}
        self.declared = set()  # global / nonlocal
        self.kinds: dict[str, str | None] = {}
        self.changes: dict[str, list] = {}
        self.uses: dict[str, list] = {}
        self.unproved: dict[str, gast.AST] = {}  # a binding that is not a new container
        self.bindings: dict[str, list] = {}  # the values assigned to each name
        self.binds: dict[str, list] = {}  # (kind, where, statement) of each binding
        self.copied_at: dict[str, int] = {}  # a name made local by a copy at the top level
        self.nested: dict[str, list] = {}  # rows[i][j] (op)= v: the stores into a row
        # Statements in the order they appear (a compound statement before its body):
        # generated trees (a generator's list version) carry no reliable line numbers.
        self.order: dict[int, int] = {}
        self._number(tree.body)
        self._collect()

    def _number(self, stmts):
        for stmt in stmts:
            self.order[id(stmt)] = len(self.order)
            for field in ("body", "orelse", "handlers", "finalbody"):
                inner = getattr(stmt, field, None)
                if isinstance(inner, list):
                    self._number(inner)

    def _position(self, node) -> int:
        return self.order.get(id(self._statement(node)), -1)

    # -- collection -----------------------------------------------------------------
    def _collect(self):
        methods: dict[str, set] = {}
        for node in all_nodes(self.tree):
            if isinstance(node, (gast.Global, gast.Nonlocal)):
                self.declared.update(node.names)
            elif isinstance(node, gast.Name):
                self._name(node, methods)
        for name in self.changes:
            if self.kinds.get(name, "") is None:
                self._forget_final_rebindings(name)
            if self.kinds.get(name, "") is None and name not in self.params:
                self._forget_bindings_before_copy(name)
        for name, kind in list(self.kinds.items()):
            if kind == "copy":
                used = methods.get(name, set())
                # sort is a method of arrays too: it tells nothing about a copy's kind
                is_list, is_dict = bool(used & (LIST_ONLY - {"sort"})), bool(used & DICT_ONLY)
                self.kinds[name] = (
                    "list"
                    if is_list and not is_dict
                    else ("dict" if is_dict and not is_list else None)
                )

    def _bind(self, name, kind, where=None, statement=None):
        if kind == "same":
            return  # rows = fill(rows, x): the list rows was, changed by the helper
        self.binds.setdefault(name, []).append((kind, where, statement or where))
        old = self.kinds.get(name, kind)
        self.kinds[name] = kind if old == kind else None
        if kind is None and where is not None:
            self.unproved.setdefault(name, where)

    def _forget_final_rebindings(self, name):
        """``out = np.array(out)`` after the loop that appended to the list ``out``: a
        binding after the last change, outside the loops that change the name, gives the
        name a new object that no change reaches, so it does not decide the list's kind."""
        changes = self.changes[name]
        last = max(self._position(c) for c in changes)
        loops = {id(p) for c in changes for p in self._loops(c)}

        def final(statement):
            return (
                statement is not None
                and self._position(statement) > last
                and not any(id(p) in loops for p in self._loops(statement))
            )

        kept = [(k, w) for k, w, st in self.binds[name] if not final(st)]
        if not kept or any(k is None or k != kept[0][0] for k, _ in kept):
            return
        self.kinds[name] = kept[0][0]
        self.unproved.pop(name, None)

    def _forget_bindings_before_copy(self, name):
        """``loss, grads = model.loss(x)``, then ``grads = dict(grads)`` at the function's top
        level before any change: from the copy on, ``grads`` is a new container (what it
        was bound to before is the caller's business, as for a parameter copied first)."""
        changes = self.changes.get(name, ())
        for stmt in self.tree.body:
            kind = self._top_level_copy(stmt, name)
            if kind is None or any(self._position(c) <= self.order[id(stmt)] for c in changes):
                continue
            at = self.order[id(stmt)]
            later = [k for k, _, st in self.binds[name] if self._position(st) > at]
            if all(k == kind for k in later):
                self.kinds[name] = kind
                self.unproved.pop(name, None)
                self.copied_at[name] = at
            return

    def _top_level_copy(self, stmt, name):
        if not _assigns(stmt, name):
            return None
        kind = self.new_container(stmt.value)
        return kind if kind in ("list", "dict") else None

    def _name(self, node, methods):
        parent = self.parents.get(node)
        name = node.id
        if isinstance(node.ctx, gast.Store):
            if isinstance(parent, (gast.Assign, gast.AnnAssign)) and self._whole_target(
                parent, node
            ):
                self._bind(name, self.new_container(parent.value), parent)
                self.bindings.setdefault(name, []).append(parent.value)
            elif isinstance(parent, gast.AugAssign):
                ok = isinstance(parent.op, (gast.Add, gast.Mult))
                self._bind(name, "list" if ok else None, statement=parent)
                self.changes.setdefault(name, []).append(parent)
            elif self._comprehension_target(parent):
                pass  # the comprehension's own variable (`for k, v in d.items()` too)
            elif (value := self._paired_value(parent, node)) is not None:
                # xs, hs = {}, {} (min-char-rnn): each name gets its own new container
                self._bind(name, self.new_container(value), self._statement(node))
                self.bindings.setdefault(name, []).append(value)
            elif (found := self._unpacked_result(parent, node)) is not None:
                # loss, grads = model.loss(X, y): a dict the callee made and returned; its
                # arrays new and held by nothing else there, `grads[k] += v` changes them
                # as the rewrite does (check/held_arrays.py), else it is checked as it runs
                call = self.parents[parent].value
                self._bind(name, found[0], self._statement(node))
                self.bindings.setdefault(name, []).append(call)
                if found[1]:
                    self.own_item_results.add(id(call))
            else:
                self._bind(name, None, self._statement(node))
            return
        if not isinstance(node.ctx, gast.Load):
            return
        if isinstance(parent, gast.Call) and self.owned_argument(node, parent):
            self.changes.setdefault(name, []).append(parent)  # fill(acc, x): a change
            return
        grand = self.parents.get(parent)
        if isinstance(parent, gast.Subscript) and parent.value is node:
            if isinstance(parent.ctx, (gast.Store, gast.Del)):
                self.changes.setdefault(name, []).append(parent)
            elif (
                isinstance(grand, gast.Subscript)
                and grand.value is parent
                and isinstance(grand.ctx, gast.Store)
            ):
                self.nested.setdefault(name, []).append(grand)
                self.changes.setdefault(name, []).append(grand)
            return
        if (
            isinstance(parent, gast.Attribute)
            and isinstance(grand, gast.Call)
            and grand.func is parent
        ):
            if parent.attr in MUTATORS:
                methods.setdefault(name, set()).add(parent.attr)
                self.changes.setdefault(name, []).append(grand)
                return
            if parent.attr in READERS or comprehension_view(parent, grand, self.parents):
                return
        if self._reads_only(node, parent):
            return
        self.uses.setdefault(name, []).append(node)

    def _comprehension_target(self, parent) -> bool:
        """Whether a name stored under ``parent`` is a variable of a comprehension
        (``[... for v in xs]``, ``{k: ... for k, v in d.items()}``): it lives in the
        comprehension's own scope, so it binds nothing of the function's (a dict ``v``
        after ``{k: np.zeros_like(v) for k, v in params.items()}`` stays a dict)."""
        while isinstance(parent, (gast.Tuple, gast.List, gast.Starred)):
            parent = self.parents.get(parent)
        return isinstance(parent, gast.comprehension)

    def _specialization_argument(self, node, call) -> bool:
        """``_pb_owned_fill(acc, x)`` (transform/helper_calls.py): ``acc`` is an argument
        the specialization owns, rebound to its final state right after."""
        func = call.func
        if not isinstance(func, gast.Name):
            return False
        namespace = getattr(self.fs, "namespace", {})
        # (a recursive specialization's call of itself, renamed by free_values.bind_global)
        special = namespace.get(func.id) or namespace.get(func.id.removeprefix("_user_"))
        owned = getattr(special, OWNED, None)
        if not owned:
            return False
        code = special.__code__
        params = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
        for k, arg in enumerate(call.args):
            if arg is node:
                return k < len(params) and params[k] in owned
        return any(kw.value is node and kw.arg in owned for kw in call.keywords)

    def _paired_value(self, target, node):
        """The value ``node`` gets from ``a, b = va, vb`` (a display of as many values, no
        starred one, the whole target of the assignment), else None."""
        if not isinstance(target, (gast.Tuple, gast.List)):
            return None
        assign = self.parents.get(target)
        value = getattr(assign, "value", None)
        if not (
            isinstance(assign, gast.Assign)
            and assign.targets == [target]
            and isinstance(value, (gast.Tuple, gast.List))
            and len(value.elts) == len(target.elts)
            and not any(isinstance(e, gast.Starred) for e in value.elts + target.elts)
        ):
            return None
        return next(v for t, v in zip(target.elts, value.elts, strict=True) if t is node)

    @staticmethod
    def _whole_target(assign, node) -> bool:
        targets = assign.targets if isinstance(assign, gast.Assign) else [assign.target]
        return len(targets) == 1 and targets[0] is node

    def _reads_only(self, node, parent) -> bool:
        """A use that reads the container and keeps no reference to it."""
        if self._in_nested_scope(node):
            return False
        if isinstance(parent, (gast.Compare, gast.BinOp, gast.UnaryOp, gast.FormattedValue)):
            return True
        if isinstance(parent, (gast.If, gast.While, gast.Assert, gast.IfExp)) and (
            parent.test is node
        ):
            return True  # truth value only
        if isinstance(parent, gast.comprehension) and parent.iter is node:
            return True  # evaluated at once, before anything can change it
        if isinstance(parent, gast.Dict) and node in parent.values:
            return parent.keys[parent.values.index(node)] is None  # {**d}: a new dict
        if isinstance(parent, gast.Call) and node in parent.args:
            return self._safe_callee(parent, node)
        if isinstance(parent, gast.keyword) and isinstance(self.parents.get(parent), gast.Call):
            call = self.parents[parent]  # TinyNet(params=params).loss(X, y)
            return temporary_holder(self.fs, call, node, self.locals, self.parents)
        return False

    def _in_nested_scope(self, node) -> bool:
        p = self.parents.get(node)
        while p is not None and p is not self.tree:
            if isinstance(p, (gast.Lambda, gast.FunctionDef, gast.AsyncFunctionDef)):
                return True
            p = self.parents.get(p)
        return False

    def _safe_callee(self, call, node=None) -> bool:
        if node is not None and temporary_holder(self.fs, call, node, self.locals, self.parents):
            return True  # TwoLayerNet(params).loss(X, y): held for that call only
        callee = resolve_call(self.fs, call, self.locals)
        if callee.kind != "object":
            return False
        obj = callee.obj
        if any(obj is b for b in _SAFE_BUILTINS) or isinstance(obj, np.ufunc):
            return True
        module = getattr(obj, "__module__", None) or ""
        if module.startswith("numpy") and callable(obj) and not isinstance(obj, type):
            return True  # a NumPy function turns a list into a new array
        if node in call.args and not any(isinstance(a, gast.Starred) for a in call.args):
            if keeps_nothing(obj, call.args.index(node)):  # loss, grads = f(params, x)
                return True
        return getattr(math, getattr(obj, "__name__", ""), None) is obj

    def new_container(self, value) -> str | None:
        """ "list", "dict", "copy" (a copy of unknown kind) or None for a value."""
        owned = owned_result_kind(value)
        if owned is None and self.owned_value is not None:
            owned = self.owned_value(value)
        if owned is not None:
            return owned  # a helper's final state of the list or dict it owned
        if isinstance(value, gast.IfExp):  # {} if config is None else dict(config)
            kinds = {self.new_container(value.body), self.new_container(value.orelse)}
            return kinds.pop() if len(kinds) == 1 and None not in kinds else None
        if isinstance(value, (gast.List, gast.ListComp)):
            return "list"
        if isinstance(value, (gast.Dict, gast.DictComp)):
            return "dict"
        if isinstance(value, gast.BinOp) and isinstance(value.op, (gast.Add, gast.Mult)):
            # [..] + [..] and [..] * n; with an array on the other side the result is an
            # array, which the rewrite refuses when it runs (containers_mutation.expect_kind)
            sides = (value.left, value.right)
            if any(isinstance(s, (gast.List, gast.ListComp)) for s in sides):
                return "list"
            return None
        if isinstance(value, gast.Subscript):
            s = value.slice
            whole = isinstance(s, gast.Slice) and s.lower is None and s.upper is None
            return "copy" if whole and s.step is None else None
        if not isinstance(value, gast.Call):
            return None
        func = value.func
        if isinstance(func, gast.Attribute) and func.attr == "copy" and not value.args:
            return "copy"
        callee = resolve_call(self.fs, value, self.locals)
        if callee.kind != "object":
            return None
        if callee.obj is builtins.list or callee.obj is builtins.sorted:
            return "list"
        if callee.obj is builtins.dict:
            return "dict"
        found = self._returned(value)
        return None if found is None else found[0]

    def _returned(self, call, index=None, count=None):
        """``(kind, its arrays are new)`` of a container the callee made and returned
        (returned_containers.py), or None."""
        prove = type(self).prove_returned_items
        if not self.follow_returns or prove is None:
            return None
        return returned_container(
            self.fs, call, self.locals, index, count, analysis=ContainerAnalysis, prove=prove
        )

    def _unpacked_result(self, target, node):
        """The kind of container ``node`` gets from ``a, b = f(...)`` (the whole target of
        the assignment, no starred name) where ``f`` returns one it made, else None."""
        assign = self.parents.get(target)
        if not (
            isinstance(target, gast.Tuple)
            and isinstance(assign, gast.Assign)
            and assign.targets == [target]
            and isinstance(assign.value, gast.Call)
            and not any(isinstance(e, gast.Starred) for e in target.elts)
        ):
            return None
        return self._returned(assign.value, target.elts.index(node), len(target.elts))

    # -- answers -----------------------------------------------------------------------
    def kind(self, name) -> str | None:
        """ "list" or "dict" when ``name`` is a local container whose changes are modelled."""
        return self.kinds.get(name) if self.refusal(name) is None else None

    def _param_copy(self, name):
        """The position of ``name = list(name)`` (or another copy) in the function's top
        level, which makes a parameter the function's own from there on; else None."""
        for stmt in self.tree.body:
            if _assigns(stmt, name):
                kind = self.new_container(stmt.value)
                return self.order[id(stmt)] if kind is not None else None
            if isinstance(stmt, gast.If) and stmt.orelse:
                # if config is None: config = {} / else: config = dict(config)
                made = [self._branch_copy(b, name) for b in (stmt.body, stmt.orelse)]
                if None not in made:
                    return max(made)
        return None

    def _branch_copy(self, branch, name):
        """The position of the copy ``name = <new container>`` among a branch's own
        statements, else None."""
        for stmt in branch:
            if _assigns(stmt, name):
                return self.order[id(stmt)] if self.new_container(stmt.value) else None
        return None

    def refusal(self, name) -> Refusal | None:
        start = self.copied_at.get(name, -1)
        if name in self.params:
            start = self._param_copy(name)
            if start is None or any(self._position(c) <= start for c in self.changes.get(name, ())):
                return Refusal("parameter")
        if name in self.declared or name not in self.locals:
            code = getattr(getattr(self.fs, "fn", None), "__code__", None)
            free = getattr(code, "co_freevars", ())
            return Refusal("closure" if name in free else "global")
        if name not in self.kinds or self.kinds[name] is None:
            return Refusal("not_local", self.unproved.get(name))
        changes = self.changes.get(name, [])
        if not changes:
            return None
        last = max(self._position(c) for c in changes)
        loops = {id(p) for c in changes for p in self._loops(c)}
        for use in self.uses.get(name, ()):
            if self._position(use) <= start:
                continue  # the caller's object, before the function copied it
            if self._position(use) <= last or any(id(p) in loops for p in self._loops(use)):
                if self._new_each_pass(name, use, changes) or (
                    self.kinds[name] == "dict"  # (a list's loop reads the values it stores)
                    and iterates_keys(use, name, self.parents, changes)
                ):
                    continue
                return Refusal("shared", use)
        return None

    def _new_each_pass(self, name, use, changes) -> bool:
        """Whether ``use``, inside loops that change ``name``, sees only an object no change
        reaches after it: every change is inside each such loop, each loop's body binds
        ``name`` to a new container (a statement of its own body, before the changes), and
        ``use`` comes after the last change (an optimizer step's ``new = {}; new[k] = ...;
        params = new``: what ``params`` holds is never changed again)."""
        shared = [p for p in self._loops(use) if any(p in self._loops(c) for c in changes)]
        if not shared or self._position(use) <= max(self._position(c) for c in changes):
            return False
        for loop in shared:
            if not all(loop in self._loops(c) for c in changes):
                return False
            first = min(self._position(c) for c in changes)
            if not any(
                _assigns(stmt, name)
                and self.new_container(stmt.value) in ("list", "dict")
                and self._position(stmt) < first
                for stmt in loop.body
            ):
                return False
        return True

    def in_place(self, name) -> bool:
        """Whether the changes of the local list ``name`` may be made in place
        (:mod:`pullback.containers_inplace`): no earlier state of it is read again.

        Every load of ``name`` other than its changes must come after the last change and
        outside the loops that change it — except ``len(name)`` (an integer), and, when
        every change is an item store ``l[i] (op)= v`` (the length never changes), the
        item reads ``l[k]``, whose pullbacks need only the list's length."""
        changes = self.changes.get(name, [])
        if self.kind(name) != "list" or not changes or self.nested.get(name):
            return False
        stores = all(_item_store(c) for c in changes)
        if not stores and any(self._augmented(c) for c in changes):
            return False  # l[i] += v reads l[p], whose pullback needs a fixed length
        during = self._while_changing(changes)
        for node in self._loads(name, {id(change_receiver(c)) for c in changes}):
            if self._length_only(node) or (stores and self._item_read(node)):
                continue
            if during(node):
                return False
        return True

    def _loads(self, name, skip):
        """The loads of ``name`` in the function, but those whose ids are in ``skip``."""
        for node in walk(self.tree):
            if (
                isinstance(node, gast.Name)
                and node.id == name
                and isinstance(node.ctx, gast.Load)
                and id(node) not in skip
                and not getattr(node, ENTRY, False)  # a helper's copy of what it owns
            ):
                yield node

    def _while_changing(self, changes):
        """A test: whether a node runs before the last of ``changes`` or inside a loop
        that makes one (so it may see an earlier state)."""
        last = max(self._position(c) for c in changes)
        loops = {id(p) for c in changes for p in self._loops(c)}
        return lambda node: (
            self._position(node) <= last or any(id(p) in loops for p in self._loops(node))
        )

    def _numpy_argument(self, node) -> bool:
        """An argument of a NumPy function (which copies values into a new array)."""
        call = self.parents.get(node)
        if not (isinstance(call, gast.Call) and node in call.args):
            return False
        callee = resolve_call(self.fs, call, self.locals)
        module = getattr(callee.obj, "__module__", None) or "" if callee.kind == "object" else ""
        return module.startswith("numpy") and not isinstance(callee.obj, type)

    def _augmented(self, change) -> bool:
        statement = self.parents.get(change)
        return isinstance(statement, gast.AugAssign) and statement.target is change

    def _length_only(self, node) -> bool:
        call = self.parents.get(node)
        return (
            isinstance(call, gast.Call)
            and call.args == [node]
            and not call.keywords
            and isinstance(call.func, gast.Name)
            and call.func.id == "len"
            and resolve_call(self.fs, call, self.locals).obj is builtins.len
        )

    def _item_read(self, node) -> bool:
        parent = self.parents.get(node)
        return (
            isinstance(parent, gast.Subscript)
            and parent.value is node
            and isinstance(parent.ctx, gast.Load)
            and not isinstance(parent.slice, (gast.Slice, gast.Tuple))
        )

    def _statement(self, node):
        while not isinstance(node, gast.stmt):
            node = self.parents[node]
        return node

    def _loops(self, node):
        p = self.parents.get(node)
        while p is not None:
            if isinstance(p, (gast.For, gast.While)):
                yield p
            p = self.parents.get(p)


def _assigns(stmt, name) -> bool:
    """Whether ``stmt`` is ``name = value``."""
    return (
        isinstance(stmt, gast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], gast.Name)
        and stmt.targets[0].id == name
    )


def _item_store(change) -> bool:
    """``l[i] = v`` or ``l[i] op= v`` (not a slice, not ``del``)."""
    return (
        isinstance(change, gast.Subscript)
        and isinstance(change.value, gast.Name)
        and isinstance(change.ctx, gast.Store)
        and not isinstance(change.slice, gast.Slice)
    )
