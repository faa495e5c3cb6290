"""Objects of plain classes (no dataclass) as differentiated records.

An object built inside a differentiated function by a call of its class, ``Layer(W, 1.0)``,
is made by the class's *constructor function* (plain_classes.py: the class's ``__init__``
rewritten to keep each ``self.name = value`` in a local and return them all), which ends
with :func:`new_record`: the object with those attributes, and no other code run. Its
cotangent (and tangent) is the tuple of its attributes' cotangents in the order of the
class's *layout*, the names its ``__init__`` stores, as for a dataclass's fields
(records_dataclasses.py): field reads, accumulation and ``ZERO`` entries are the tuple ones.

The layout is known once the constructor function is made; it is kept here per class
(weakly: a class that dies takes its entry with it). Only the objects :func:`new_record`
made are records (kept weakly by id, so a class's ``__eq__`` or ``__hash__`` is never
asked): an object of the same class made elsewhere (an argument, a global, a callable
model) stays what it was, an object whose attributes carry no gradient.

>>> class P:
...     pass
>>> set_layout(P, ("w", "n"))
>>> p = new_record(P, ("w", "n"), 2.0, UNSET)
>>> vars(p), is_plain_record(p), plain_fields(p)
({'w': 2.0}, True, (2.0, None))
"""

from __future__ import annotations

import weakref


class _Unset:
    """An attribute the ``__init__`` did not store on this path (``if ...: self.b = b``):
    the object gets no such attribute, and its place in the cotangent tuple stays ZERO."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNSET"


UNSET = _Unset()

#: id(class) -> (weak reference to the class, the names its constructor function stores, in
#: cotangent order): a cache of a fact of the class, filled by plain_classes.constructor_of.
#: Keyed by id so that asking it of any value costs one dict lookup (a WeakKeyDictionary
#: makes a weak reference per lookup); the entry leaves with its class.
LAYOUTS: dict = {}


def set_layout(cls, names: tuple) -> None:
    """Record ``names`` as the layout of ``cls``'s records."""
    key = id(cls)
    ref = weakref.ref(cls, lambda _, key=key: LAYOUTS.pop(key, None))
    names = tuple(names)
    LAYOUTS[key] = (ref, names, {n: k for k, n in enumerate(names)})


def layout(cls):
    """The names of ``cls``'s fields in cotangent order, or None (no plain record class)."""
    entry = LAYOUTS.get(id(cls))
    return entry[1] if entry is not None and entry[0]() is cls else None


#: id -> weak reference, for every object :func:`new_record` made that is still alive (a
#: plain dict: its lookup is C, where a WeakValueDictionary's is Python code).
_MADE: dict = {}


def plain_position(record, name: str):
    """Where the field ``name`` of the plain record ``record`` sits in its cotangent tuple,
    or None (no plain record, or no such field)."""
    cls = type(record)
    entry = LAYOUTS.get(id(cls))
    if entry is None or entry[0]() is not cls:
        return None
    ref = _MADE.get(id(record))  # (is_plain_record, inline: every field read asks this)
    return entry[2].get(name) if ref is not None and ref() is record else None


def is_plain_record(v) -> bool:
    """Whether ``v`` is an object :func:`new_record` made (a plain record)."""
    ref = _MADE.get(id(v))
    return ref is not None and ref() is v


def plain_fields(record) -> tuple:
    """The values of ``record``'s fields in layout order (None where it has none)."""
    cls = type(record)
    if has_slots(cls):
        return tuple([getattr(record, n, None) for n in layout(cls)])
    d = record.__dict__
    return tuple([d.get(n) for n in layout(cls)])


def new_record(cls, names, *values):
    """An instance of ``cls`` holding ``values`` as the attributes ``names`` (those that
    are not :data:`UNSET`), made without running ``__init__``: what the constructor
    function returns, once the ``__init__`` it was written from has computed them. (A
    class with ``__slots__`` gets them in its slots, as its ``__init__`` would store them.)"""
    out = object.__new__(cls)
    if has_slots(cls):
        for n, v in zip(names, values, strict=True):
            if v is not UNSET:
                object.__setattr__(out, n, v)  # (a slot, or the __dict__ a base gives)
    else:
        d = out.__dict__
        for n, v in zip(names, values, strict=True):
            if v is not UNSET:
                d[n] = v
    register_record(out)
    return out


def has_slots(cls) -> bool:
    """Whether ``cls`` or a base of it declares ``__slots__``."""
    return any("__slots__" in c.__dict__ for c in cls.__mro__[:-1])


def register_record(out) -> None:
    """Make ``out`` a record (a copy of one, which holds the same fields)."""
    key = id(out)
    try:
        _MADE[key] = weakref.ref(out, lambda r, key=key: _MADE.pop(key, None))
    except TypeError:  # __slots__ without __weakref__: held until only _MADE holds it
        _MADE[key] = _Strong(out)
        if len(_MADE) > _STRONG_PRUNE[0]:
            _prune_strong()


class _Strong:
    """A record that cannot be weakly referenced (a class with ``__slots__`` and no
    ``__weakref__``), held strongly; called as a weak reference is."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def __call__(self):
        return self.obj


#: the size of _MADE above which held records only _MADE holds are let go (doubles as
#: the live ones grow, so the pruning costs O(1) per record made)
_STRONG_PRUNE = [256]


def _prune_strong() -> None:
    import sys

    for key, ref in list(_MADE.items()):
        # the _Strong's slot, getrefcount's argument and `ref.obj` evaluated: nobody else
        if type(ref) is _Strong and sys.getrefcount(ref.obj) <= 2:
            del _MADE[key]
    _STRONG_PRUNE[0] = max(256, 2 * len(_MADE))


def adopt_copies(original, made, memo=None) -> None:
    """Make records of the copies ``copy.copy``/``copy.deepcopy`` made of records: ``made``
    (the copy of ``original``) and, for a deep copy, every copy in its ``memo`` (id of an
    original -> its copy). A copy holds the same attributes as its original, so its
    cotangent is the same tuple; without this its fields would carry no gradient."""
    pairs = [(original, made)]
    if memo is not None:
        kept = memo.get(id(memo), [])  # deepcopy keeps each original alive there
        originals = {id(o): o for o in kept}
        pairs += [(originals[k], v) for k, v in memo.items() if k in originals]
    for old, new in pairs:
        if new is not old and type(new) is type(old) and is_plain_record(old):
            register_record(new)


def adopt_object(obj) -> bool:
    """Make ``obj`` a record if its class is a plain record class (a layout is known):
    for code differentiated again, which runs a user's helper as written (its ``cls(w)``
    calls the class, not the constructor function). Whether it is a record then."""
    if is_plain_record(obj):
        return True
    if layout(type(obj)) is None:
        return False
    if not isinstance(getattr(obj, "__dict__", None), dict) and not has_slots(type(obj)):
        return False
    register_record(obj)
    return True


def rebuilt_plain(like, values):
    """An instance of ``like``'s class holding ``values`` in layout order (a gradient)."""
    return new_record(type(like), layout(type(like)), *values)
