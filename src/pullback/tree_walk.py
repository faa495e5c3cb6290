"""A fast walk over a syntax tree, for the passes that walk a long function many times.

>>> import ast
>>> [type(n).__name__ for n in all_nodes(ast.parse("x = 1").body[0])]
['Assign', 'Name', 'Constant', 'Store']
>>> [type(n).__name__ for n in statements(ast.parse("x = 1; y = x"))]
['Module', 'Assign', 'Assign']
"""

from __future__ import annotations

from ast import AST, excepthandler, match_case, stmt

# Fields that hold only names, strings, numbers or flags in every node class of that name
# (ast's and gast's alike, per their grammars): the walks skip them, and a long function's
# names and constants, most of its nodes, then cost one or two reads instead of four.
# (Not ExceptHandler.name or TypeAlias.name: gast makes those Name nodes.)
_SCALAR_FIELDS = {
    "Name": ("id", "type_comment"),
    "Constant": ("value", "kind"),
    "NameConstant": ("value", "kind"),
    "Attribute": ("attr",),
    "keyword": ("arg",),
    "arg": ("arg", "type_comment"),
    "alias": ("name", "asname"),
    "ImportFrom": ("module", "level"),
    "Global": ("names",),
    "Nonlocal": ("names",),
    "comprehension": ("is_async",),
    "FormattedValue": ("conversion",),
    "FunctionDef": ("name", "type_comment"),
    "AsyncFunctionDef": ("name", "type_comment"),
    "ClassDef": ("name",),
    "Assign": ("type_comment",),
    "For": ("type_comment",),
    "AsyncFor": ("type_comment",),
    "With": ("type_comment",),
    "AsyncWith": ("type_comment",),
    "AnnAssign": ("simple",),
    "TypeIgnore": ("lineno", "tag"),
}


class _FieldsByClass(dict):
    """Each node class mapped to the fields of it that ``keep(class, field)`` accepts, in
    ``_fields`` order (filled on first sight of a class: what a field may hold depends only
    on the class)."""

    def __init__(self, keep):
        super().__init__()
        self.keep = keep

    def __missing__(self, cls):
        fields = self[cls] = tuple(f for f in cls._fields if self.keep(cls, f))
        return fields


# the fields that may hold nodes
_CHILD_FIELDS = _FieldsByClass(lambda cls, f: f not in _SCALAR_FIELDS.get(cls.__name__, ()))
# the fields that may hold nodes other than contexts and operators (``ctx`` holds only Load,
# Store or Del; ``op`` and ``ops`` only operators: leaves, per the grammar of ast and gast)
_LEAN_FIELDS = _FieldsByClass(
    lambda cls, f: f not in ("ctx", "op", "ops") and f not in _SCALAR_FIELDS.get(cls.__name__, ())
)
#: Each node class mapped to its fields that may hold nodes other than contexts and
#: operators, in ``_fields`` order: for visitors with nothing to do at those leaves.
LEAN_FIELDS = _LEAN_FIELDS
# the fields that may hold statements, handlers or cases: lists of them (no statement sits
# under an expression; an expression ``body``, of a lambda or an ``if`` expression, is no list)
_BLOCK_FIELDS = _FieldsByClass(
    lambda cls, f: f in ("body", "orelse", "finalbody", "handlers", "cases")
)


def all_nodes(node) -> list:
    """Every node under ``node`` (itself first), in the order of ``ast.walk`` (breadth
    first): the same list, built about three times as fast (no generator per node and
    field, no read of a field that holds no node), which matters because the passes walk
    a long function's whole tree many times."""
    return list(_walk(node, _CHILD_FIELDS))


def walk(node):
    """``ast.walk(node)`` (``gast.walk`` is the same function): the same nodes in the same
    order, read at the same moments (a node's children are read when the walk reaches it,
    before it is yielded, so a caller that edits the tree as it walks sees what it saw
    with ``ast.walk``), about three times as fast on the small trees most calls walk (an
    expression, a statement): no deque, no generator per node and field, no read of a
    field that holds no node. The passes call it hundreds of thousands of times per
    transform of a long function.

    >>> import ast
    >>> tree = ast.parse("y = f(x) + [a, 2]")
    >>> [type(n).__name__ for n in walk(tree)] == [type(n).__name__ for n in ast.walk(tree)]
    True
    """
    return _walk(node, _CHILD_FIELDS)


def lean_nodes(node) -> list:
    """``all_nodes(node)`` without the contexts and operators (``Load``, ``Add``, ``Eq``,
    ...): the same nodes otherwise, in the same order (those are leaves, so leaving them
    out of a breadth-first walk moves nothing else). For the passes that look only at
    names, statements, calls or displays: a normalized long function has about as many
    contexts and operators as other nodes, and each costs a visit.

    >>> import ast
    >>> [type(n).__name__ for n in lean_nodes(ast.parse("x = -y + 1").body[0])]
    ['Assign', 'Name', 'BinOp', 'UnaryOp', 'Constant', 'Name']
    """
    return list(_walk(node, _LEAN_FIELDS))


def _walk(node, child_fields):
    """``node`` and every node under it in the fields ``child_fields`` names, breadth first,
    each node's children read when the walk reaches it, before it is yielded (as
    ``ast.walk``). ``list()`` of it costs no more than filling the list in a loop."""
    todo = [node]
    append = todo.append
    for n in todo:  # grows while it is read: breadth first, as ast.walk's deque
        for name in child_fields[n.__class__]:
            v = getattr(n, name, None)
            if isinstance(v, AST):
                append(v)
            elif isinstance(v, list):
                for item in v:
                    if isinstance(item, AST):
                        append(item)
        yield n


def lean_children(node) -> list:
    """The nodes right under ``node`` that ``lean_nodes`` visits, in its order (for the
    walks that read names and constants where they meet them instead of queueing them)."""
    out = []
    for name in _LEAN_FIELDS[node.__class__]:
        v = getattr(node, name, None)
        if v.__class__ is list:
            out += [item for item in v if isinstance(item, AST)]
        elif isinstance(v, AST):
            out.append(v)
    return out


def parent_map(tree) -> dict:
    """Each node of ``tree`` mapped to the node that contains it (as ``ast.walk`` with
    ``ast.iter_child_nodes`` would map it), in one breadth-first pass."""
    parents = {}
    out = [tree]
    append = out.append
    child_fields = _CHILD_FIELDS
    for n in out:
        for name in child_fields[n.__class__]:
            v = getattr(n, name, None)
            if isinstance(v, AST):
                parents[v] = n
                append(v)
            elif isinstance(v, list):
                for item in v:
                    if isinstance(item, AST):
                        parents[item] = n
                        append(item)
    return parents


_BLOCKS = (stmt, excepthandler, match_case)  # what holds statements (a handler, a case)
_HOLDERS = (excepthandler, match_case)


def statements(tree) -> list:
    """The statements under ``tree`` (itself first when it is one, a module too), in the
    order of ``ast.walk``: ``[n for n in all_nodes(tree) if isinstance(n, ast.stmt)]``
    (plus a module ``tree``) without visiting one expression. Statements sit only in the
    lists of statements, handlers and cases (never under an expression), and a breadth
    first walk of those, handlers and cases at their own depth, meets them in the same
    order; a long function has about ten nodes per statement."""
    out = [tree]
    append = out.append
    block_fields = _BLOCK_FIELDS
    for n in out:  # grows while it is read: breadth first
        for name in block_fields[n.__class__]:
            v = getattr(n, name, None)
            if v.__class__ is list:
                for item in v:
                    if isinstance(item, _BLOCKS) or _is_case(item):
                        append(item)
    return [n for n in out if not (isinstance(n, _HOLDERS) or _is_case(n))]


def _is_case(node) -> bool:
    """A ``case`` of gast (whose class does not derive from ``ast.match_case``)."""
    return node.__class__.__name__ == "match_case"


def copy_tree(node):
    """A copy of the syntax tree ``node`` as ``copy.deepcopy`` makes it (every node new,
    with the same class, fields, positions and other attributes; lists new; strings,
    numbers and constants shared, as immutable; a context or operator node shared within
    the tree stays shared within the copy), several times faster: no memo of every node,
    no ``__reduce_ex__`` per node. For a cached tree handed out to passes that rewrite it.

    >>> import ast
    >>> tree = ast.parse("y = f(x) + 1")
    >>> twin = copy_tree(tree)
    >>> ast.dump(twin, include_attributes=True) == ast.dump(tree, include_attributes=True)
    True
    >>> any(a is b for a, b in zip(all_nodes(twin), all_nodes(tree)) if a._fields)
    False
    """
    leaves: dict = {}  # id of a node without fields (Load, Add) -> its one copy

    def copied(n):
        cls = n.__class__
        if not cls._fields:  # a context or an operator: copied once, shared as it was
            twin = leaves.get(id(n))
            if twin is None:
                twin = leaves[id(n)] = cls.__new__(cls)
                twin.__dict__.update(n.__dict__)
            return twin
        twin = cls.__new__(cls)
        values = n.__dict__.copy()  # then the nodes and lists in it replaced by copies
        for key, v in values.items():
            if v.__class__ is list:
                values[key] = copied_list(v)
            elif isinstance(v, AST):
                values[key] = copied(v)
        twin.__dict__.update(values)
        return twin

    def copied_list(items):
        return [
            copied(v) if isinstance(v, AST) else copied_list(v) if v.__class__ is list else v
            for v in items
        ]

    return copied(node)
