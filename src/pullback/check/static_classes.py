"""Classes defined in a file that ``pullback check`` only parses, whose construction with a
differentiated value the transformation refuses (PB301), known from their tree alone: a
dataclass whose constructor is no store of its fields (records_dataclasses.refusal says
why, for a live class), and a plain class whose body has ``__new__``,
``__setattr__`` or ``__getattr__`` (plain_classes.static_refusal). Every other class (a
dataclass with the generated ``__init__``, a plain class, whose ``__init__`` grad follows,
a subclass, a decorated class) stays opaque: only running the file tells what it is, and
its calls are not reported.

The refusal's text is the live one's (``records_dataclasses.class_refusal``), so that
``pullback check`` and ``grad`` report the same call the same way.
"""

from __future__ import annotations

import gast

from ..plain_classes_static import static_refusal
from ..records_dataclasses import NOT_A_STORE
from .checker import Opaque


class StaticClass(Opaque):
    """A class of the checked file that has no rule: calling it with a differentiated
    value is PB301. ``refusal`` is ``(what, fix)`` where that is specific, else None."""

    def __init__(self, file, module: str, name: str, refusal):
        super().__init__(name)
        self.file = file  # the FileModule: the names it gives rules (``ruled``)
        self.__module__ = module
        self.__qualname__ = name
        self.__pullback_static_class__ = True  # read by call_targets.foreign_call_text
        self.__pullback_class_refusal__ = refusal


def _last(node) -> str | None:
    node = node.func if isinstance(node, gast.Call) else node
    if isinstance(node, gast.Name):
        return node.id
    return node.attr if isinstance(node, gast.Attribute) else None


def _keyword_true(call, name: str) -> bool:
    return isinstance(call, gast.Call) and any(
        k.arg == name and isinstance(k.value, gast.Constant) and k.value.value is True
        for k in call.keywords
    )


def _keyword_false(call, name: str) -> bool:
    return isinstance(call, gast.Call) and any(
        k.arg == name and isinstance(k.value, gast.Constant) and k.value.value is False
        for k in call.keywords
    )


def _dataclass_refusal(node, decorator):
    """What the live ``records_dataclasses.refusal`` says of this dataclass, or None (it
    has the generated constructor's rule)."""
    methods = {s.name for s in node.body if isinstance(s, gast.FunctionDef)}
    if "__init__" in methods or _keyword_false(decorator, "init"):
        return NOT_A_STORE["init"]
    if "__post_init__" in methods:
        return NOT_A_STORE["post_init"]
    fields = [s.value for s in node.body if isinstance(s, gast.AnnAssign) and s.value]
    calls = [v for v in fields if isinstance(v, gast.Call) and _last(v) == "field"]
    if any(_keyword_false(c, "init") for c in calls):
        return NOT_A_STORE["init_false"]
    keyword_only, flag = [], _keyword_true(decorator, "kw_only")
    for stmt in node.body:
        if not isinstance(stmt, gast.AnnAssign):
            continue
        annotation = stmt.annotation
        if isinstance(annotation, gast.Subscript):
            annotation = annotation.value
        if _last(annotation) in ("ClassVar", "InitVar"):
            continue  # no field (an InitVar goes with __post_init__, refused above)
        if _last(stmt.annotation) == "KW_ONLY":
            flag = True  # the fields after `_: KW_ONLY`
            continue
        value = stmt.value
        called = isinstance(value, gast.Call) and _last(value) == "field"
        if called and _keyword_true(value, "kw_only"):
            keyword_only.append(True)
        elif called and _keyword_false(value, "kw_only"):
            keyword_only.append(False)
        else:
            keyword_only.append(flag)
    if any(keyword_only):
        return NOT_A_STORE["kw_only"]
    return None


def static_class(file, module: str, node) -> object:
    """What a ``class`` statement of the checked file binds: a :class:`StaticClass` where
    calling it with a differentiated value is refused whatever the rest of the file does,
    else an opaque value."""
    if node.bases or node.keywords:
        return Opaque(node.name)  # its bases decide: only running the file tells
    decorators = node.decorator_list
    if len(decorators) == 1 and _last(decorators[0]) == "dataclass":
        refusal = _dataclass_refusal(node, decorators[0])
        return (
            Opaque(node.name) if refusal is None else StaticClass(file, module, node.name, refusal)
        )
    if decorators:
        return Opaque(node.name)
    # a plain class: grad follows its __init__ where it can (plain_classes.py)
    refusal = static_refusal(node, file.filename)
    return Opaque(node.name) if refusal is None else StaticClass(file, module, node.name, refusal)
