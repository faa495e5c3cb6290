"""Values that carry a gradient and leave the differentiated variables through state
outside them, and the reads that would bring them back.

A differentiated function may keep a differentiated value on an object (``self.out = y``,
``self.cache["X"] = X``) or append it to a list it did not build (``history.append(v)``):
that runs as in the primal. Within one function the transformation refuses such a store
where the function reads it back (PB106/PB107). Across functions it cannot see the read:
a layer's ``forward`` stores ``self.out`` and the model's loss reads ``layer.out`` after the
call. The gradient through that read would be lost, silently.

So the generated code records each such store while a gradient runs (the ``*_escaping``
helpers, which the transformation writes in place of the plain store), and reads of
objects and containers that carry no gradient go through :func:`read_attribute` and
:func:`read_item`, which refuse, at the user's line, a read that returns a recorded value
(or a list, tuple or dict holding one). The record lives for one evaluation
(:func:`escape_scope`, entered where a gradient that calls user code runs): a value kept
by an earlier call is an ordinary constant to the next one.

>>> class Layer:
...     pass
>>> layer = Layer()
>>> with escape_scope():
...     setattr_escaping(layer, "out", [1.0], "model.py:3:9")
...     read_attribute(layer, "out", "model.py:7:12")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
pullback.errors.UnsupportedCallError: model.py:7:12: this reads back a value that ...
>>> read_attribute(layer, "out", "model.py:7:12")  # outside that evaluation: a constant
[1.0]
"""

from __future__ import annotations

import contextlib
import types
import weakref
from _thread import _local as thread_local  # threading.local, without importing threading

from . import recompute_draws
from .callables import as_bound_call
from .containers_mutation import store_item
from .errors import UnsupportedCallError
from .guards import is_library_module_name
from .records_dataclasses import fields_of, is_dataclass_value
from .registry import ENTRY_POINTS
from .star_permutations import merged_keywords
from .tangents import is_differentiable_value


class _Record(thread_local):
    """The escaped values of the evaluation running on this thread: ``{id: (value,
    where)}`` (the value kept so that its id stays its own), and how deeply nested the
    scopes are."""

    def __init__(self):
        self.values: dict = {}
        # (id of an object, attribute) -> the object, for each attribute such a store
        # wrote: a record's field read refuses exactly those (records.field_of)
        self.attributes: dict = {}
        # id of a list or dict -> (it, where) for each one such a store added to: a
        # record's field holding one is refused where read (records.field_of)
        self.containers: dict = {}
        # id of a copy -> (the copy, the object it copies): the objects a recompute runs
        # on in place of an argument whose attributes changed (recompute_state.py)
        self.copies: dict = {}
        # id of such a copy -> (a weak reference to it, what gives it back the state the
        # call found: escapes.fresh_copies)
        self.resets: dict = {}
        # code of a function that may draw random numbers -> its generators (recorded by
        # recompute_state.state_before); the recomputes of such functions running:
        # [(code, the generators' states when it began)] (recompute_draws.py)
        self.drawing: dict = {}
        self.draws: list = []
        self.depth = 0


_RECORD = _Record()
#: What generated code tests before a checked read (``_pb_escaped.values``).
ESCAPE_RECORD = _RECORD

FAMILY = "escapes"


class escape_scope:
    """One evaluation of a gradient: stores recorded inside are forgotten when the
    outermost scope exits."""

    __slots__ = ()

    def __enter__(self):
        _RECORD.depth += 1
        return self

    def __exit__(self, *exc):
        _RECORD.depth -= 1
        if _RECORD.depth == 0:
            _RECORD.values.clear()
            _RECORD.attributes.clear()
            _RECORD.containers.clear()
            _RECORD.copies.clear()
            _RECORD.draws.clear()  # (a recompute that raised: not closed)
        return False


def _record(value, where: str) -> None:
    if _RECORD.depth:
        _RECORD.values[id(value)] = (value, where)


def setattr_escaping(obj, name: str, value, where: str) -> None:
    """``obj.name = value`` with ``value`` carrying a gradient."""
    setattr(obj, name, value)
    _record(value, where)
    if _RECORD.depth:
        _RECORD.attributes[(id(obj), name)] = obj


def store_item_escaping(container, key, value, where: str) -> None:
    """``obj.attr[key] = value`` with ``value`` carrying a gradient (a dict or list held
    by an object; ``containers_mutation.store_item`` refuses an array there)."""
    store_item(container, key, value, where)
    _record(value, where)
    _record_container(container, where)


def append_escaping(container, value, where: str) -> None:
    """``container.append(value)`` into a list the function did not build."""
    container.append(value)
    _record(value, where)
    _record_container(container, where)


def _record_container(container, where: str) -> None:
    if _RECORD.depth:
        _RECORD.containers[id(container)] = (container, where)


def _escaped_in(value, whole: bool):
    """The store that recorded ``value`` (or, ``whole``: an item of a list, tuple or dict
    ``value``, which the code uses as a whole), or None."""
    values = _RECORD.values
    found = values.get(id(value))
    if found is not None and found[0] is value:
        return found[1]
    if not whole:
        return None  # its items are read one by one, each read checked
    if isinstance(value, (list, tuple)):
        items = value
    elif isinstance(value, dict):
        items = value.values()
    else:
        return None
    for item in items:
        found = values.get(id(item))
        if found is not None and found[0] is item:
            return found[1]
    return None


def _refuse(where: str, stored: str):
    raise UnsupportedCallError(
        f"{where}: this reads back a value that carries a gradient, which {stored} stored "
        "outside the differentiated variables (on an object or in a list the function did "
        "not build): its gradient would be lost here.\n"
        "Fix: return the value from the function that computes it (or pass it on as an "
        "argument) and use that, instead of reading it back from the object or container "
        "(see docs/limitations.md#PB107)."
    )


def _checked(value, where: str, whole: bool):
    """``value`` as read at ``where``, refused if it (or, ``whole``, an item of it) is a
    value kept outside in this evaluation."""
    if _RECORD.values:
        stored = _escaped_in(value, whole)
        if stored is not None:
            _refuse(where, stored)
    return value


def read_attribute(obj, name: str, where: str, whole: bool = True):
    """``obj.name`` of an object that carries no gradient (``whole``: used as a whole,
    not only to read or store its items)."""
    return _checked(getattr(obj, name), where, whole)


def read_item(container, key, where: str, whole: bool = True):
    """``container[key]`` of a container that carries no gradient (``whole`` as for
    :func:`read_attribute`)."""
    return _checked(container[key], where, whole)


def read_again(value, where: str):
    """``value``, a list or dict read earlier from an object or container that carries no
    gradient, at a later use of the name holding it: refused if a value kept outside in
    this evaluation has come into it since (``vals = logger.vals; logger.log(v);
    sum(vals)``: the method appended ``v`` to the very list ``vals`` names)."""
    return _checked(value, where, True)


def replayed_read(obj, name: str, plain: bool, where: str) -> None:
    """Before a read of ``obj.name`` in the recompute of a call (a ``__vjp`` form, which a
    second derivative pulls back through: transform/replay.py), where the function also
    writes ``obj.name``: refused if that write may have run in this evaluation, since the
    recompute would then read the state the call left behind, not the one it read.
    ``plain``: a store of a value that carries no gradient (a counter), which is not
    recorded: refused whenever the read runs; else a differentiated value kept there (or
    in the list or dict it holds), refused if that store is recorded."""
    copied = _RECORD.copies.get(id(obj))
    if copied is not None and copied[0] is obj:
        if plain:
            return  # a copy a recompute runs on: its own stores run on it, in order
        obj = copied[1]  # (a store of a differentiated value, which the recompute drops)
    if not plain:
        if (id(obj), name) not in _RECORD.attributes:
            held = getattr(obj, name, None)
            found = _RECORD.containers.get(id(held))
            if found is None or found[0] is not held:
                return
    if isinstance(obj, dict) and "__name__" in obj:  # a module's globals (global N)
        what = f"the module-level '{name}'"
    elif isinstance(obj, types.CellType):  # (nonlocal n)
        what = f"the captured '{name}'"
    else:
        what = f"'{name}' of a {type(obj).__name__}"
    raise UnsupportedCallError(
        f"{where}: PB107 this reads {what}, which the function also changes: "
        "a second derivative pulls back through a recompute of the call, which would read "
        f"'{name}' as the call left it, not as the call read it, and differentiate another "
        "function.\n"
        f"Fix: update '{name}' outside the differentiated function (after calling it, from "
        "a value it returns), or pass the value it reads as an argument "
        "(see docs/limitations.md#PB107)."
    )


def recompute_copy(copy, original, reset=None, fn=None):
    """Note ``copy``, a copy of ``original`` that a recompute of a call of ``fn`` runs on
    (recompute_state.py), for this evaluation: a plain store of the recompute runs on it
    (:func:`store_on_copy`); ``reset(copy)`` gives it back the state the call found
    (:func:`fresh_copies`)."""
    if reset is not None and fn is not None:
        # (outlives the evaluation: a Hessian's reverse sweep, a scope of its own, runs the
        # recompute of the recompute on this copy; the entry dies with the copy)
        code = getattr(fn, "__code__", None)
        _RECORD.resets[id(copy)] = [_weak(copy), reset, code, 0]
        with contextlib.suppress(TypeError):  # (an object without weak references: kept)
            weakref.finalize(copy, _RECORD.resets.pop, id(copy), None)
    if _RECORD.depth:
        _RECORD.copies[id(copy)] = (copy, original)
        return True
    return False


def _weak(obj):
    try:
        return weakref.ref(obj)
    except TypeError:
        return lambda: obj


def fresh_copies(fn, *objs) -> None:
    """First in every recompute of ``fn`` (transform/replay.py): each of ``objs`` that is a
    copy made for a recompute of a call of ``fn`` gets back the state that call found. The
    recompute changes its copy as the call changed the object (``self.hist.append(...)``,
    ``self.n += 1``); the recompute of that recompute (a Hessian's reverse through the vjp
    function, a third derivative) runs on the same copy and must find it as the call did.
    (Not in a call the recompute makes, nor in one of ``fn`` itself nested in it: the copy
    is theirs as the recompute left it; :func:`copies_done` closes the recompute.)"""
    for entry in _entries(fn, objs):
        if entry[3] == 0:
            entry[1](entry[0]())
        entry[3] += 1
    if _RECORD.drawing:
        code = getattr(fn, "__code__", None)
        generators = _RECORD.drawing.get(code)
        if generators is not None:  # (recompute_draws.py: a draw here is refused)
            _RECORD.draws.append((code, recompute_draws.states(generators)))


def copies_done(fn, *objs) -> None:
    """Last in the forward part of a recompute of ``fn``: :func:`fresh_copies`'s close."""
    for entry in _entries(fn, objs):
        entry[3] = max(entry[3] - 1, 0)
    draws = _RECORD.draws
    if draws and draws[-1][0] is getattr(fn, "__code__", None):
        recompute_draws.refuse_draws(draws.pop()[1], fn)


def _entries(fn, objs):
    resets = _RECORD.resets
    if not resets:
        return ()
    code = getattr(fn, "__code__", None)
    out = []
    for obj in objs:
        entry = resets.get(id(obj))
        if entry is not None and entry[2] is code and entry[0]() is obj and entry not in out:
            out.append(entry)
    return out


def store_on_copy(obj, name: str, value) -> None:
    """``obj.name = value`` in a recompute (transform/replay.py), which the recompute runs
    only on a copy made for it (:func:`recompute_copy`), and leaves out on the object the
    call was given (the call stored it there already)."""
    copied = _RECORD.copies.get(id(obj))
    if copied is not None and copied[0] is obj:
        setattr(obj, name, value)


def _held_in(value, depth: int = 0):
    """The store that recorded ``value`` or a value it holds (items of a list, tuple or
    dict, fields of a record, a few levels deep), or None."""
    found = _RECORD.values.get(id(value))
    if found is not None and found[0] is value:
        return found[1]
    if depth > 4:
        return None
    if isinstance(value, (list, tuple)):
        items = value
    elif isinstance(value, dict):
        items = value.values()
    elif is_dataclass_value(value):
        items = fields_of(value)
    elif _is_user_object(value):
        items = tuple(vars(value).values())
    else:
        return None
    for item in items:
        stored = _held_in(item, depth + 1)
        if stored is not None:
            return stored
    return None


def changed_outside(value, depth: int = 0):
    """The store that added a differentiated value to the list or dict ``value`` (or to one
    it holds, a few levels deep) in this evaluation, or None: records.field_of refuses a
    record's field read back after a method appended to it (``self.items.append(y)``)."""
    found = _RECORD.containers.get(id(value))
    if found is not None and found[0] is value:
        return found[1]
    if depth > 4 or not isinstance(value, (list, tuple, dict)):
        return None
    for item in value.values() if isinstance(value, dict) else value:
        if isinstance(item, (list, tuple, dict)):
            stored = changed_outside(item, depth + 1)
            if stored is not None:
                return stored
    return None


def _is_user_object(value) -> bool:
    """An instance of a class of user code with a ``__dict__`` (its attributes may hold a
    kept value)."""
    t = type(value)
    if isinstance(value, type) or not hasattr(value, "__dict__"):
        return False
    return not is_library_module_name(getattr(t, "__module__", None) or "builtins")


def checked_call(fn, args, kwargs, where: str):
    """``fn(*args, **kwargs)`` of user code whose arguments carry no gradient the
    transformation sees, while values are kept outside in this evaluation: the callee runs
    as in the primal, so a read of a kept value inside it (``self.items`` that another
    method appended to) would lose its gradient. Refused when an argument (the object of a
    method among them) holds such a value."""
    if _RECORD.values:
        bound = as_bound_call(fn)
        module = getattr(bound.target, "__module__", None) if bound is not None else None
        if bound is not None and not is_library_module_name(module or "pullback"):
            every, keywords = bound.arguments(args, kwargs)
            for a in (*every, *keywords.values()):
                stored = _held_in(a)
                if stored is not None:
                    _refuse(where, stored)
    return fn(*args, **kwargs)


def _carries_gradient(value) -> bool:
    if isinstance(value, (list, tuple)):
        return any(map(_carries_gradient, value))
    if isinstance(value, dict):
        return any(map(_carries_gradient, value.values()))
    if is_dataclass_value(value):  # a record (a dataclass, a plain class's object)
        return any(map(_carries_gradient, fields_of(value)))
    return is_differentiable_value(value)


def effect_call(registry, fn, args, kwargs, marked=()):
    """``fn(*args, **kwargs)`` whose result is not used (a call for its effect), made
    where a differentiated value is passed: a user function runs its generated forward
    sweep, so that what it keeps outside the differentiated variables is recorded (and a
    read back refused) and what it may not do is refused; library code runs as it is.
    ``marked``: the positions (and keyword names) of the arguments the caller knows carry
    a gradient: an object built from a differentiated value that is no record (the caller
    made it only to hand it on, ``net.add(Dense(W1))``) carries one its value does not show,
    and a store of it must be recorded all the same."""
    bound = as_bound_call(fn)  # the Python function behind a method, partial or object
    module = getattr(bound.target, "__module__", None) if bound is not None else None
    if bound is None or is_library_module_name(module or "pullback"):
        return fn(*args, **kwargs)
    every, keywords = bound.arguments(args, kwargs)
    known = {id(args[m] if isinstance(m, int) else kwargs[m]) for m in marked}
    moving = tuple(k for k, a in enumerate(every) if id(a) in known or _carries_gradient(a))
    moving += tuple(k for k, v in keywords.items() if id(v) in known or _carries_gradient(v))
    if not moving:
        return fn(*args, **kwargs)
    wrt, _ = ENTRY_POINTS.resolve_wrt(bound.target, moving)
    key = ENTRY_POINTS.kinds_key(every, keywords)
    adjoint = ENTRY_POINTS.get_adjoint(bound.target, wrt, registry, key)
    value, _ = ENTRY_POINTS.run_forward(adjoint, every, keywords)
    return value


def effect_star_call(registry, fn, args, keywords, *mappings):
    """:func:`effect_call` of a star-call whose result is unused, ``fn(*args, **keywords,
    **mapping...)`` (star_runtime.star_call's operands): ``MODEL.keep(x, scale=s)`` stores
    what its keyword computes, which must be recorded as for a call written out."""
    return effect_call(registry, fn, tuple(args), merged_keywords(keywords, mappings))


def effect_star_method(registry, obj, name, args, keywords, *mappings):
    """:func:`effect_star_call` of ``obj.name(*args, ...)`` (star_runtime.star_method's
    operands): the bound method, whose ``self`` is the object's."""
    return effect_star_call(registry, getattr(obj, name), args, keywords, *mappings)


def register(reg) -> None:
    """Every helper here carries no gradient of its own (reads refuse what would)."""
    reg.non_differentiable(
        setattr_escaping,
        store_item_escaping,
        append_escaping,
        read_attribute,
        read_item,
        effect_call,
        effect_star_call,
        effect_star_method,
        checked_call,
        replayed_read,
        store_on_copy,
        fresh_copies,
        copies_done,
        family=FAMILY,
        trusted=True,
    )
