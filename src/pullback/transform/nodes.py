"""Small constructors for gast nodes, so passes read like the code they build."""

from __future__ import annotations

import gast

from ..tree_walk import lean_nodes


def load(name: str) -> gast.Name:
    return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)


def store(name: str) -> gast.Name:
    return gast.Name(id=name, ctx=gast.Store(), annotation=None, type_comment=None)


def const(value) -> gast.Constant:
    return gast.Constant(value=value, kind=None)


def assign(target: str | gast.AST, value: gast.AST, where=None) -> gast.Assign:
    tgt = store(target) if isinstance(target, str) else target
    node = gast.Assign(targets=[tgt], value=value, type_comment=None)
    return located(node, where)


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
        # what gast.copy_location(child, where) copies, read from ``where`` once
        source = where._attributes
        place = {k: getattr(where, k) for k in _PLACE if k in source and hasattr(where, k)}
        for child in lean_nodes(node):  # (contexts and operators have no position)
            attributes = child._attributes
            # (a node's position is in its __dict__, never on its class: no AttributeError
            # raised and dropped for each new node, as getattr(child, "lineno", None) does)
            if "lineno" in attributes and child.__dict__.get("lineno") is None:
                if len(attributes) == 4:  # the four places (every expr and stmt)
                    child.__dict__.update(place)
                else:  # type_ignore: (lineno, tag)
                    for key, value in place.items():
                        if key in attributes:
                            setattr(child, key, value)
    return node


_PLACE = ("lineno", "col_offset", "end_lineno", "end_col_offset")


def is_atom(node) -> bool:
    return isinstance(node, (gast.Name, gast.Constant))
