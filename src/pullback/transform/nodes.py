"""Small constructors for gast nodes, so passes read like the code they build."""

from __future__ import annotations

from ast import AST

import gast

from ..tree_walk import LEAN_FIELDS

# The constructors below fill a node's __dict__ as gast's constructor does when given
# keywords only (it updates the __dict__ with them, in their order), without a Python call
# of that constructor each: a long function's normalization makes tens of thousands.
_Name, _Constant, _Assign, _Load, _Store = (
    gast.Name, gast.Constant, gast.Assign, gast.Load, gast.Store
)  # fmt: skip


def _made(cls, fields: dict):
    node = cls.__new__(cls)
    node.__dict__.update(fields)
    return node


def copied_at(cls, fields: dict, where):
    """``gast.copy_location(cls(**fields), where)``: the node made from its fields, then
    given the positions of ``where`` that both classes have, as copy_location gives them."""
    node = _made(cls, fields)
    mine, theirs = cls._attributes, where._attributes
    values = node.__dict__
    for attr in _PLACE:
        if attr in theirs and attr in mine and hasattr(where, attr):
            values[attr] = getattr(where, attr)
    return node


def load(name: str) -> gast.Name:
    """``gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)``."""
    ctx = _Load.__new__(_Load)
    return _made(_Name, {"id": name, "ctx": ctx, "annotation": None, "type_comment": None})


def store(name: str) -> gast.Name:
    """``gast.Name(id=name, ctx=gast.Store(), annotation=None, type_comment=None)``."""
    ctx = _Store.__new__(_Store)
    return _made(_Name, {"id": name, "ctx": ctx, "annotation": None, "type_comment": None})


def const(value) -> gast.Constant:
    """``gast.Constant(value=value, kind=None)``."""
    return _made(_Constant, {"value": value, "kind": None})


def assign(target: str | gast.AST, value: gast.AST, where=None) -> gast.Assign:
    if not isinstance(target, str):
        node = _made(_Assign, {"targets": [target], "value": value, "type_comment": None})
        return located(node, where)
    tgt = store(target)
    node = _made(_Assign, {"targets": [tgt], "value": value, "type_comment": None})
    if where is not None and getattr(where, "lineno", None) is not None:
        # located(node, where), the two new nodes placed without a walk (the normalizer's
        # temporaries: most assignments of a long function); the value walked as there
        place = _place_of(where)
        node.__dict__.update(place)
        tgt.__dict__.update(place)
        _place_under(value, place)
    return node


def call(func: gast.AST | str, args=(), keywords=()) -> gast.Call:
    f = load(func) if isinstance(func, str) else func
    return gast.Call(func=f, args=list(args), keywords=list(keywords))


def attr(value: gast.AST | str, name: str) -> gast.Attribute:
    v = load(value) if isinstance(value, str) else value
    return gast.Attribute(value=v, attr=name, ctx=gast.Load())


def tuple_(elts, ctx=None) -> gast.Tuple:
    return gast.Tuple(elts=list(elts), ctx=ctx or gast.Load())


def subscript(value: gast.AST | str, index: gast.AST) -> gast.Subscript:
    v = load(value) if isinstance(value, str) else value
    return gast.Subscript(value=v, slice=index, ctx=gast.Load())


def if_(test, body, orelse=(), where=None) -> gast.If:
    node = gast.If(test=test, body=list(body) or [gast.Pass()], orelse=list(orelse))
    return located(node, where)


def not_(value) -> gast.UnaryOp:
    return gast.UnaryOp(op=gast.Not(), operand=value)


def expr_stmt(value, where=None) -> gast.Expr:
    return located(gast.Expr(value=value), where)


def located(node, where):
    """Give ``node`` (and its children without a position) the position of ``where``."""
    if where is not None and getattr(where, "lineno", None) is not None:
        _place_under(node, _place_of(where))
    return node


def _place_of(where) -> dict:
    """What ``gast.copy_location(child, where)`` copies, read from ``where`` once."""
    source = where._attributes
    return {k: getattr(where, k) for k in _PLACE if k in source and hasattr(where, k)}


def _place_under(node, place: dict) -> None:
    """``place`` given to ``node`` and to the nodes under it that have no position."""
    # The nodes of tree_walk.lean_nodes(node) (contexts and operators have no position),
    # each placed as it is met: one pass, no list of the subtree first.
    todo = [node]
    pop, push, extend = todo.pop, todo.append, todo.extend
    fields_of = LEAN_FIELDS
    while todo:
        child = pop()
        attributes = child._attributes
        values = child.__dict__
        # (a node's position is in its __dict__, never on its class: no AttributeError
        # raised and dropped for each new node, as getattr(child, "lineno", None) does)
        if "lineno" in attributes and values.get("lineno") is None:
            if len(attributes) == 4:  # the four places (every expr and stmt)
                values.update(place)
            else:  # type_ignore: (lineno, tag)
                for key, value in place.items():
                    if key in attributes:
                        setattr(child, key, value)
        for name in fields_of[child.__class__]:
            v = getattr(child, name, None)
            if isinstance(v, AST):
                push(v)
            elif isinstance(v, list):
                extend([item for item in v if isinstance(item, AST)])


_PLACE = ("lineno", "col_offset", "end_lineno", "end_col_offset")


def is_atom(node) -> bool:
    return isinstance(node, (gast.Name, gast.Constant))
