"""Side effects that carry a differentiated value out of the function: may it come back?

``self.cache = z`` or ``log.append(z)`` with ``z`` differentiated run as written: the
object outside gets the value, as in the primal. The gradient is still exact as long as
the function does not read that value back (it only leaves). Whether it can is decided on
the user's own code, conservatively: the stored attribute (or the appended-to object) is
read again, or the object is handed to a call (which may read it), anywhere in the
function. Then the transformation refuses the store (PB107) or the append (PB106).

>>> import gast
>>> tree = gast.parse('''
... def f(self, x):
...     self.cache = x * 2
...     return x * self.w
... ''').body[0]
>>> may_read_back(tree, "self", "cache")
False
>>> may_read_back(tree, "self", "w")
True
"""

from __future__ import annotations

import inspect

import gast

from ..resolve import own_nodes, parent_map, receiver_class
from ..tree_walk import statements, walk

# Methods that only add to a container (their result is not the container's content).
_WRITES = frozenset({"append", "extend", "insert", "add", "update", "setdefault"})


def may_read_back(
    tree, root: str, attr: str | None = None, parents=None, after=None, held=None
) -> bool:
    """Whether the function ``tree`` may read back what it stores in ``root.attr`` (or,
    with ``attr=None``, what it adds to the container ``root``); ``parents`` is
    :func:`~pullback.resolve.parent_map` of ``tree`` when the caller has it. With
    ``after`` (the statement that stores), only the uses that may run after it count:
    those later in the source, those in a loop around it too, those in nested functions
    (called who knows when); a use earlier in straight-line code ran before the store.

    ``root.attr.append(w)`` is another write, not a read (a loop appending at each step
    reads no value back). ``held(name)`` says whether ``root.name`` is a callable held on
    the instance (``self.f = f`` of a class that defines no ``f``): Python calls it without
    ``root``, so it is no method reading ``root.attr`` (a closure that does read it is
    transformed too, and its read refused when it runs: escapes.py)."""
    parents = parent_map(tree) if parents is None else parents
    for node in walk(tree):
        if not (isinstance(node, gast.Name) and node.id == root):
            continue
        if not isinstance(node.ctx, gast.Load):
            continue
        if after is not None and _runs_before(node, after, tree, parents):
            continue
        parent = parents.get(node)
        if isinstance(parent, gast.Attribute) and parent.value is node:
            grand = parents.get(parent)
            called = isinstance(grand, gast.Call) and grand.func is parent
            if attr is not None:
                stored_into = (
                    isinstance(grand, gast.Subscript)
                    and grand.value is parent
                    and not isinstance(grand.ctx, gast.Load)
                )
                if stored_into:
                    continue  # root.attr[k] = v: another write into the container
                if parent.attr == attr and isinstance(parent.ctx, gast.Load):
                    if _added_to(parent, parents):
                        continue  # root.attr.append(w): another write into the list
                    return True  # root.attr read (or root.attr.method(...))
                if called and not (held is not None and held(parent.attr)):
                    return True  # a method of root may read root.attr
                continue
            if called and parent.attr in _WRITES:
                continue  # another write into the container
            return True
        if isinstance(parent, gast.Call) or attr is None:
            return True  # handed to a call, or the container itself read
    return False


def held_callables(fs, receiver, locals_):
    """For ``root.attr.append(v)`` (``receiver`` is ``root.attr``), with the class of
    ``root`` known before running (``self`` of a method): ``held(name)``, whether the
    class defines no attribute ``name`` (``self.f(y)`` then calls a callable held on the
    instance, without ``root``; see :func:`may_read_back`); None when the class is not
    known."""
    root = receiver
    while isinstance(root, gast.Subscript):
        root = root.value
    if not (isinstance(root, gast.Attribute) and isinstance(root.value, gast.Name)):
        return None
    cls = receiver_class(fs, root.value, locals_)
    if not isinstance(cls, type) or "__getattr__" in dir(cls):
        return None
    missing = object()
    return lambda name: inspect.getattr_static(cls, name, missing) is missing


def _added_to(container, parents) -> bool:
    """``container.append(w)`` (``extend``, ``insert``, ``add``, ``update``) as a statement:
    a write whose result (None) is not used."""
    method = parents.get(container)
    call = parents.get(method)
    return (
        isinstance(method, gast.Attribute)
        and method.attr in _WRITES - {"setdefault"}
        and isinstance(call, gast.Call)
        and call.func is method
        and isinstance(parents.get(call), gast.Expr)
    )


def _name_aliases(tree, name: str) -> set:
    """``name`` and every name whose object one of the function's bindings may make
    ``name`` hold or reach, transitively: another name (``a = b``, ``a, b = b, a``,
    ``(a := b)``), an item or attribute of one (``h = d["h"]``, ``h = t.hist``,
    ``h = d.get("h")``), a loop's item (``for g in groups``)."""
    pairs = []
    for node in walk(tree):
        if isinstance(node, gast.Assign):
            for target in node.targets:
                pairs += _binding_pairs(target, node.value)
        elif isinstance(node, gast.NamedExpr):
            pairs += _binding_pairs(node.target, node.value)
        elif isinstance(node, (gast.For, gast.AsyncFor, gast.comprehension)):
            sources = [n.id for n in walk(node.iter) if isinstance(n, gast.Name)]
            for t in walk(node.target):
                if isinstance(t, gast.Name):
                    pairs += [(t.id, source) for source in sources]
    group = {name}
    grown = True
    while grown:
        grown = False
        for a, b in pairs:
            if (a in group) != (b in group):
                group |= {a, b}
                grown = True
    return group


def _binding_pairs(target, value) -> list:
    """``[(bound name, name of what it may share)]`` for ``target = value``."""
    if isinstance(target, (gast.Tuple, gast.List)):
        if isinstance(value, (gast.Tuple, gast.List)) and len(value.elts) == len(target.elts):
            return [
                p
                for t, v in zip(target.elts, value.elts, strict=True)
                for p in _binding_pairs(t, v)
            ]
        # names unpacked from one value may hold one object (`a, b = make()` returning
        # `h, h`): each is paired with the others and with what the value may share
        names = [t.id for t in walk(target) if isinstance(t, gast.Name)]
        root = _shared_root(value)
        return [(a, b) for a in names for b in names if a < b] + (
            [(a, root) for a in names] if root else []
        )
    root = _shared_root(value)
    return [(target.id, root)] if isinstance(target, gast.Name) and root else []


def _shared_root(value):
    """The name whose object ``value`` may be (part of): ``b``, ``b.attr``, ``b[k]``,
    ``b.get(k)``, ``b.setdefault(k, d)``; None for anything else (a call makes its own)."""
    if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute):
        if value.func.attr not in ("get", "setdefault"):
            return None
        value = value.func.value
    while isinstance(value, (gast.Attribute, gast.Subscript)):
        value = value.value
    return value.id if isinstance(value, gast.Name) else None


def returns_a_value(tree) -> bool:
    """Whether the function ``tree`` has a ``return`` with a value (in its own scope)."""
    return any(
        isinstance(n, gast.Return)
        and n.value is not None
        and not (isinstance(n.value, gast.Constant) and n.value.value is None)
        for n in own_nodes(tree.body)
    )


def kept_parameter_item(tree, target, parents=None, after=None) -> bool:
    """Whether ``target`` (a store target of the statement ``after``) is ``d["key"] = v``
    into a dict parameter ``d`` that the function never rebinds and, after the store,
    only stores more items into: the running statistics a course's ``batchnorm_forward``
    keeps in its ``bn_param`` (reads of other keys after it are fine). The store runs as in
    the primal (the caller's dict gets the value) and nothing of the function reads it
    back, so no gradient flows through it (where another function reads it, escapes.py
    refuses that read as it runs). A string key makes ``d`` a dict (an array takes no
    string index). A function that returns nothing fills an output parameter for its
    caller to read: refused before running, with the fix that returns it (PB106).

    >>> import gast
    >>> tree = gast.parse('''
    ... def f(x, p):
    ...     m = p.get("m", 0.0) * 0.9 + x
    ...     p["m"] = m
    ...     p["n"] = p.get("n", 0) + 1
    ...     return x * 2
    ... ''').body[0]
    >>> stores = [s for s in tree.body if isinstance(s, gast.Assign)][1:]
    >>> [kept_parameter_item(tree, s.targets[0], after=s) for s in stores]
    [True, True]
    >>> kept_parameter_item(tree, stores[0].targets[0])  # every use counts: p.get(...)
    False
    """
    if not (
        isinstance(target, gast.Subscript)
        and isinstance(target.value, gast.Name)
        and isinstance(target.slice, gast.Constant)
        and isinstance(target.slice.value, str)
        and isinstance(tree, gast.FunctionDef)
    ):
        return False
    name = target.value.id
    args = tree.args
    if name not in {a.id for a in args.posonlyargs + args.args + args.kwonlyargs}:
        return False
    if not returns_a_value(tree):
        return False  # an output parameter (`def _evaluate(x, out)`): the caller reads it
    parents = parent_map(tree) if parents is None else parents
    for node in walk(tree):
        if isinstance(node, (gast.Global, gast.Nonlocal)) and name in node.names:
            return False
        if not (isinstance(node, gast.Name) and node.id == name):
            continue
        if not isinstance(node.ctx, gast.Load):
            if isinstance(node.ctx, gast.Param) and parents.get(node) is args:
                continue
            return False  # rebound (or a nested function's parameter of that name)
        if after is not None and _runs_before(node, after, tree, parents):
            continue
        parent = parents.get(node)
        statement = parents.get(parent)
        if (
            isinstance(parent, gast.Subscript)
            and parent.value is node
            and isinstance(parent.ctx, gast.Store)
            and isinstance(statement, gast.Assign)
            and len(statement.targets) == 1
        ):
            continue  # another item stored
        if _other_key_read(node, parent, statement, target.slice.value):
            continue
        return False  # read back, handed on or changed otherwise after the store
    return True


def _other_key_read(node, parent, above, key: str) -> bool:
    """Whether the use ``node`` of a dict is ``d["other"]`` or ``d.get("other", ...)``
    with a constant key other than ``key``: it cannot read the value stored under ``key``."""
    if isinstance(parent, gast.Subscript) and isinstance(parent.ctx, gast.Load):
        index = parent.slice
    elif (
        isinstance(parent, gast.Attribute)
        and parent.attr == "get"
        and isinstance(above, gast.Call)
        and above.func is parent
        and above.args
    ):
        index = above.args[0]
    else:
        return False
    return isinstance(index, gast.Constant) and isinstance(index.value, str) and index.value != key


def _runs_before(use, store, tree, parents) -> bool:
    """Whether ``use`` runs only before the statement ``store`` (or as part of it)."""
    chain, node = [], use
    while node is not None and node is not tree:
        chain.append(node)
        node = parents.get(node)
    if store in chain:
        return True  # in the store statement itself: read before the store happens
    if any(isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda)) for n in chain):
        return False  # a nested function may run any time
    loops = set()
    node = parents.get(store)
    while node is not None and node is not tree:
        if isinstance(node, (gast.For, gast.While)):
            loops.add(id(node))
        node = parents.get(node)
    if any(id(n) in loops for n in chain):
        return False  # a loop around both: the use runs again after the store
    if _other_branch(chain, store, parents):
        return True  # `if training: self.m = ...` / `else: mu = self.m`: one or the other
    return (use.lineno, use.col_offset) < (store.lineno, store.col_offset)


def _other_branch(chain, store, parents) -> bool:
    """Whether the use (whose ancestors are ``chain``) and ``store`` sit in the two
    branches of one ``if`` (no loop around both: :func:`_runs_before` tested that first),
    so that a call runs at most one of them."""
    ancestors = set(map(id, chain))
    node, child = parents.get(store), store
    while node is not None:
        if id(node) in ancestors:
            if not isinstance(node, gast.If):
                return False
            in_body = any(child is s for s in node.body)
            use_child = next(c for c in chain if parents.get(c) is node)
            use_in_body = any(use_child is s for s in node.body)
            use_in_else = any(use_child is s for s in node.orelse)
            return (in_body and use_in_else) or (not in_body and use_in_body)
        node, child = parents.get(node), node
    return False


def shadow_read_back_attributes(tree) -> None:
    """``self.h = z`` whose value the same function reads back later (``self.h`` after the
    store), in place: the value also goes into a local variable, ``_pb_self_h = z;
    self.h = _pb_self_h``, and the reads after it read the local, through which the
    gradient flows. The object still gets the value, as in the primal.

    Exact only where every read sees the last store of this function: the first store is a
    statement of the function's body itself (not inside a branch or loop), every read comes
    in a later statement, ``self`` is never rebound, nothing of the function hands ``self``
    to a call or calls a method of it (which could change ``self.h`` or read it), and no
    nested function or lambda reads it. Anything else is left to :func:`may_read_back`
    (refused, PB107, when a gradient flows)."""
    parents = None
    for root, attr in _stored_attributes(tree):
        parents = parent_map(tree) if parents is None else parents
        first = _first_top_level_store(tree, root, attr)
        if first is None or not _only_attribute_uses(tree, root, parents):
            continue
        reads, stores = _attribute_nodes(tree, root, attr, parents)
        position = {id(n): k for k, s in enumerate(tree.body) for n in walk(s)}
        if any(position.get(id(r), -1) <= first for r in reads):
            continue  # read before (or in) the first store: the object's own value
        if any(in_nested_scope(r, tree, parents) for r in reads + stores):
            continue
        if any(isinstance(parents.get(s), gast.AugAssign) for s in stores):
            continue  # self.n += 1: a counter, which needs no gradient
        local = f"_pb_{root}_{attr}"
        for r in reads:
            _replace(parents, r, gast.Name(local, gast.Load(), None, None))
        for s in stores:
            assign = parents[s]
            value = assign.value
            assign.value = gast.copy_location(gast.Name(local, gast.Load(), None, None), value)
            keep = gast.Assign(
                targets=[gast.Name(local, gast.Store(), None, None)], value=value, type_comment=None
            )
            _insert_before(tree, parents, assign, gast.copy_location(keep, assign))
        parents = None


def _stored_attributes(tree) -> list:
    """``[(root, attr)]`` of the ``root.attr = value`` statements of ``tree``."""
    out = []
    for node in statements(tree):
        if isinstance(node, gast.Assign) and len(node.targets) == 1:
            t = node.targets[0]
            if isinstance(t, gast.Attribute) and isinstance(t.value, gast.Name):
                if (t.value.id, t.attr) not in out:
                    out.append((t.value.id, t.attr))
    return out


def _first_top_level_store(tree, root, attr) -> int | None:
    for k, s in enumerate(tree.body):
        if isinstance(s, gast.Assign) and len(s.targets) == 1:
            t = s.targets[0]
            if isinstance(t, gast.Attribute) and getattr(t.value, "id", None) == root:
                if t.attr == attr:
                    return k
        for n in walk(s):
            if (
                isinstance(n, gast.Attribute)
                and n.attr == attr
                and getattr(n.value, "id", None) == root
            ):
                return None  # met (stored or read) before a top-level store
    return None


def _only_attribute_uses(tree, root, parents) -> bool:
    """``root`` is only ever ``root.attr`` (read or stored), never rebound, never called or
    handed to a call, never a receiver of a method call."""
    for node in walk(tree):
        if not (isinstance(node, gast.Name) and node.id == root):
            continue
        if isinstance(node.ctx, gast.Param):
            continue
        if not isinstance(node.ctx, gast.Load):
            return False
        parent = parents.get(node)
        if not (isinstance(parent, gast.Attribute) and parent.value is node):
            return False
        grand = parents.get(parent)
        if isinstance(grand, gast.Call) and grand.func is parent:
            return False
    return True


def _attribute_nodes(tree, root, attr, parents):
    reads, stores = [], []
    for node in walk(tree):
        if isinstance(node, gast.Attribute) and node.attr == attr:
            if getattr(node.value, "id", None) != root:
                continue
            (reads if isinstance(node.ctx, gast.Load) else stores).append(node)
    return reads, stores


def in_nested_scope(node, tree, parents) -> bool:
    up = parents.get(node)
    while up is not None and up is not tree:
        if isinstance(up, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)):
            return True
        up = parents.get(up)
    return False


def _replace(parents, old, new) -> None:
    parent = parents[old]
    gast.copy_location(new, old)
    for field, value in gast.iter_fields(parent):
        if value is old:
            setattr(parent, field, new)
            return
        if isinstance(value, list):
            for k, item in enumerate(value):
                if item is old:
                    value[k] = new
                    return


def _insert_before(tree, parents, stmt, new) -> None:
    owner = parents.get(stmt, tree)
    for field in ("body", "orelse", "finalbody"):
        block = getattr(owner, field, None)
        if isinstance(block, list) and any(s is stmt for s in block):
            k = next(i for i, s in enumerate(block) if s is stmt)
            block.insert(k, new)
            return
    raise LookupError("statement not found")  # pragma: no cover - stores are statements


def append_read_back(tree, func, statement, parents, held=None) -> bool:
    """Whether the function ``tree`` may read back what ``receiver.append(v)`` adds,
    ``func`` being the call's ``receiver.append`` attribute and ``statement`` the statement
    it runs in. A list reached through an index (``self.trace["x"].append(v)``) counts as
    its root (``self.trace``); a receiver that is neither a name nor an attribute of one
    counts as read back. The transformation and ``pullback check`` decide PB106 by this.

    >>> import gast
    >>> tree = gast.parse("def f(x, acc):\\n    acc.append(x)\\n    return x").body[0]
    >>> call = tree.body[0]
    >>> append_read_back(tree, call.value.func, call, parent_map(tree))
    False
    """
    root = func.value
    while isinstance(root, gast.Subscript):  # self.trace["x"].append(v): self.trace
        root = root.value
    if isinstance(root, gast.Name):
        # the list may be held under other names too (`alias = hist; alias.append(v);
        # sum(hist)`): a read of any of them reads back what the append adds
        return any(
            may_read_back(tree, name, parents=parents, after=statement)
            for name in _name_aliases(tree, root.id)
        )
    if isinstance(root, gast.Attribute) and isinstance(root.value, gast.Name):
        # self.evals.append(v): read back where self.evals (or a method) is used after
        return may_read_back(tree, root.value.id, root.attr, parents, statement, held)
    return True
