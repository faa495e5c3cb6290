"""The state a recomputed call reads: as the call read it, or a refusal.

A gradient that is differentiated again (``hessian``, ``grad(grad(f))``, ``jvp`` of a
gradient) pulls back through a call of a user function by its vjp function, which runs the
call's forward sweep again (transform/replay.py). That recompute runs later than the call:
after the rest of the function ran. Whatever the callee reads besides its arguments' values
-- the attributes of an object it is given (``self.n``), a list or array such an object
holds, a module-level or closure-captured object -- may have been changed in between by
code that carries no gradient and simply ran (``c.inc()``, ``c.n += 1``, ``bump(c)``,
``self.hist.append(...)``, ``self.w[0] += 1``). The recompute would then differentiate the
function as it computes *now*, not as the call computed: a wrong second derivative, silently.

So the differentiable-again form of each such call keeps, in the variable that holds the
call's pullback at first order, a record of that state: the objects' attributes as the call
found them (:func:`state_before`) and what it can read as the call left it
(:func:`state_after`; what the call itself changed, the recompute leaves out or refuses:
transform/replay.py); its reverse checks it first (:func:`state_as_read`):

* nothing changed (the common case): the recompute runs on the objects themselves;
* attributes of an object passed to the call were rebound, by the call itself or after it
  (``self.n = self.n + 1``, ``c.n += 1`` on a number): the recompute runs on a copy of
  that object holding the attributes the call began with (:func:`as_read`), which is
  exactly the object the call saw, and which a method the recompute calls again
  (``c.inc()`` in the function recomputed) changes in place of the object;
* anything else (a list, dict or array changed in place; an object held by another one,
  a module-level or a closure-captured object changed): refused, at the user's call,
  naming what changed and a fix. (Giving back such state would mean copying it.)

>>> class C:
...     def __init__(self):
...         self.n = 1.0
...         self.coef = [1.0]
>>> C.__module__ = "shop"  # (a user's module; pullback's own count as a library)
>>> c = C()
>>> stamp = state_after(state_before(None, c, 0.5))
>>> state_as_read(stamp, "f.py:3:10")[0] is c  # unchanged
True
>>> c.n = 2.0
>>> read = state_as_read(stamp, "f.py:3:10")
>>> as_read(read, 0, c).n, c.n
(1.0, 2.0)
>>> c.coef[0] = 5.0
>>> state_as_read(stamp, "f.py:3:10")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
pullback.errors.UnsupportedCallError: f.py:3:10: PB107 a second derivative ... 'coef' of a C, ...
"""

from __future__ import annotations

import copy
import dis
import functools
import inspect
import types

import numpy as np

from .errors import UnsupportedCallError
from .escapes import ESCAPE_RECORD, recompute_copy
from .guards import is_library_module_name
from .object_versions import snapshot
from .recompute_draws import generator_of, global_generators
from .records_plain import is_plain_record
from .registry import transformable
from .tangents import NO_TANGENT

FAMILY = "recompute_state"

# How deep into objects held by objects the record goes (self.layer.w: 2).
_DEPTH = 2


def _is_user_object(value) -> bool:
    """An instance of a class of user code (not a class, function or module, not a
    library's object): one whose attributes a method may read."""
    t = type(value)
    if t in _ATOMS or isinstance(value, (type, types.FunctionType, types.ModuleType)):
        return False
    if not (hasattr(value, "__dict__") or hasattr(t, "__dataclass_fields__")):
        return False
    return not is_library_module_name(getattr(t, "__module__", None) or "builtins")


_ATOMS = frozenset({float, int, bool, complex, str, bytes, type(None), tuple, np.ndarray})


def _attributes(obj) -> dict:
    fields = getattr(obj, "__dict__", None)
    if type(fields) is dict:
        return dict(fields)
    names = getattr(type(obj), "__dataclass_fields__", {})  # a dataclass with __slots__
    return {n: getattr(obj, n) for n in names if hasattr(obj, n)}


def _content(value, depth: int):
    """What of ``value`` a change in place would change, or None for a value nothing
    changes in place (a number, a string, a tuple of such, a function): a list's or dict's
    items (compared by identity, each item's own content kept too), an array's copy
    (an array held by an object), an object's attributes."""
    if isinstance(value, np.ndarray):
        return ("array", value.copy()) if depth > 0 else None
    if depth > _DEPTH or (type(value) in _ATOMS and type(value) is not tuple):
        return None
    if isinstance(value, list):
        return ("list", list(value), [_content(v, depth + 1) for v in value])
    if isinstance(value, dict):
        items = list(value.items())
        return ("dict", items, [_content(v, depth + 1) for _, v in items])
    if isinstance(value, tuple):  # (immutable: its items may be changed in place)
        inner = [_content(v, depth + 1) for v in value]
        return ("tuple", None, inner) if any(c is not None for c in inner) else None
    if _is_user_object(value):
        attrs = _attributes(value)
        return ("object", attrs, {k: _content(v, depth + 1) for k, v in attrs.items()})
    return None


def _operand_content(value, names):
    """:func:`_content` of an operand; of an object, only the attributes the callee's code
    may read (named by it, the functions it names or the methods of the object's class it
    names), when that code reads none by a computed name (``getattr``, ``vars``): the
    arrays of the others are not copied at every call."""
    if not names or not _is_user_object(value) or not _DYNAMIC.isdisjoint(names):
        return _content(value, 0)
    reads = _attribute_reads(type(value), frozenset(names))
    if reads is None:
        return _content(value, 0)
    attrs = {k: v for k, v in _attributes(value).items() if k in reads}
    return ("object", attrs, {k: _content(v, 1) for k, v in attrs.items()})


# The names of code that may read an object's attributes by a computed name.
_DYNAMIC = frozenset(
    {"getattr", "vars", "__dict__", "asdict", "astuple", "replace", "copy", "deepcopy"}
)


def _attribute_reads(cls, names: frozenset):
    """``names`` and the names used by the methods and properties of ``cls`` among them
    (and theirs, ...); None where one of those reads attributes by a computed name. (Kept
    per class and names while the methods found are still the class's.)"""
    kept = _READS.get((cls, names))
    if kept is not None and all(inspect.getattr_static(cls, n, None) is f for n, f in kept[1]):
        return kept[0]
    out, todo, found_here = set(names), list(names), []
    while todo:
        name = todo.pop()
        found = inspect.getattr_static(cls, name, None)
        raw = found.__func__ if isinstance(found, (staticmethod, classmethod)) else found
        codes = []
        if isinstance(raw, property):
            codes = [f.__code__ for f in (raw.fget, raw.fset) if hasattr(f, "__code__")]
        elif isinstance(raw, types.FunctionType):
            codes = [raw.__code__]
        if codes:
            found_here.append((name, found))
        for code in codes:
            used = set(_global_names(code))
            if not _DYNAMIC.isdisjoint(used):
                out = None
                break
            todo += [n for n in used if n not in out]
            out |= used
        if out is None:
            break
    reads = None if out is None else frozenset(out)
    if len(_READS) > 1024:
        _READS.clear()
    _READS[(cls, names)] = (reads, tuple(found_here))
    return reads


# (class, names) -> (what _attribute_reads found, the methods it found them in)
_READS: dict = {}


def _changed(value, content, path: str):
    """The path of what changed in place in ``value`` since ``content`` was taken, or
    None."""
    if content is None:
        return None
    kind = content[0]
    if kind == "array":
        old = content[1]
        same = (
            type(value) is np.ndarray
            and value.shape == old.shape
            and value.dtype == old.dtype
            and np.array_equal(value, old, equal_nan=value.dtype.kind in "fc")
        )
        return None if same else path
    if kind in ("object", "attributes"):  # (attributes: those named only)
        now = _attributes(value)
        for k, v in content[1].items():
            if k not in now or now[k] is not v:
                return f"{path}.{k}"
            inner = _changed(v, content[2][k], f"{path}.{k}")
            if inner is not None:
                return inner
        extra = set(now) - set(content[1]) if kind == "object" else ()
        return f"{path}.{sorted(extra)[0]}" if extra else None
    if kind == "tuple":
        for k, (v, c) in enumerate(zip(value, content[2], strict=True)):
            inner = _changed(v, c, f"{path}[{k}]")
            if inner is not None:
                return inner
        return None
    kept = ESCAPE_RECORD.containers.get(id(value))
    if kept is not None and kept[0] is value:
        return None  # changed by a store of a differentiated value: escapes.replayed_read's
    if kind == "list":
        items = content[1]
        if len(value) != len(items) or any(a is not b for a, b in zip(value, items, strict=True)):
            return path
        pairs = enumerate(items)
    else:  # dict
        items = content[1]
        now = list(value.items())
        if len(now) != len(items) or any(
            a[0] != b[0] or a[1] is not b[1] for a, b in zip(now, items, strict=True)
        ):
            return path
        pairs = items
    for (k, v), c in zip(pairs, content[2], strict=True):
        inner = _changed(v, c, f"{path}[{k!r}]")
        if inner is not None:
            return inner
    return None


class StateRecord:
    """What a call could read besides its arguments' values: per operand ``(place,
    value, attributes before the call, content after it)``, per global or closure holder
    ``(label, value, content after the call)``; ``callee``: the called function's name."""

    __slots__ = ("operands", "holders", "callee", "fn", "names", "before", "changed")

    def __init__(self, operands, fn, callee):
        self.operands = operands
        self.holders = ()
        self.names = ()
        self.fn = fn
        self.callee = callee
        self.before = ()  # per holder object, its real-number attributes as the call began
        self.changed = None  # what of a holder the call itself changed (state_after)


def state_before(callee, *operands):
    """The attributes of each object among ``operands`` (a method's receiver first; a
    method's name for ``callee``) as the call of ``callee`` finds them: the state a
    recompute of the call starts from. (A shallow copy of each object's attributes.)"""
    kept = []
    for k, value in enumerate(operands):
        if value is not None and type(value) not in _ATOMS:
            attributes = _attributes(value) if _is_user_object(value) else None
            if attributes:
                attributes = _with_plain_items(attributes)
            kept.append([k, value, attributes, None])
    fn = _function_of(callee, operands)
    record = StateRecord(kept, fn, getattr(fn, "__qualname__", None) or str(callee))
    if fn is not None:
        names, generators = set(), []
        record.holders = _holders(fn, names, generators)
        record.names = names
        record.before = tuple(_read_reals(value, names, fn) for _, value in record.holders)
        if "random" in names:  # np.random.normal(...), random.gauss(...)
            generators += global_generators()
        for entry in kept:
            for value in (entry[1], *(entry[2] or {}).values()):
                if generator_of(value) is not None:
                    generators.append(generator_of(value))
        if generators:  # (escapes.fresh_copies: its recompute may not draw)
            ESCAPE_RECORD.drawing[fn.__code__] = generators
    return record


class _Items:
    """The items a list or dict of plain values (counts, names: no real number) held when
    a call began, with the container itself: a recompute reads them as the call did."""

    __slots__ = ("container", "items")

    def __init__(self, container):
        self.container = container
        self.items = list(container) if type(container) is list else dict(container)

    def same(self, now) -> bool:
        if now is not self.container or len(now) != len(self.items):
            return False
        if type(now) is list:
            return all(a is b or a == b for a, b in zip(now, self.items, strict=True))
        return all(k in now and now[k] is v for k, v in self.items.items())

    def fresh(self):
        return type(self.container)(self.items)


def _with_plain_items(attributes: dict) -> dict:
    """``attributes`` with each list or dict of plain values (``self.hist``, a list of
    ints) kept as :class:`_Items`: its items as the call found them."""
    out = attributes
    for name, value in attributes.items():
        if type(value) in (list, dict) and not _may_carry(value):
            if out is attributes:
                out = dict(attributes)
            out[name] = _Items(value)
    return out


def _held(value):
    """An attribute's value in a record of :func:`state_before` (the container itself)."""
    return value.container if type(value) is _Items else value


def state_after(record):
    """``record`` (of :func:`state_before`) completed with the state as the call left it
    (it read it so, but for what it wrote itself, which the recompute leaves out or
    refuses: transform/replay.py); None when the call can read no such state."""
    kept = []
    for entry in record.operands:
        entry[3] = _operand_content(entry[1], record.names)
        if entry[3] is not None:
            kept.append(tuple(entry))
    holders = []
    if record.fn is not None:
        names = record.names
        for (label, value), before in zip(record.holders, record.before, strict=True):
            path = _changed(value, before, "")
            if path is not None and record.changed is None:
                record.changed = f"the {label}{path}'"
            if not _may_carry(value):
                continue
            # an object: the attributes it names that hold real numbers (a counter of
            # calls, a log of names changes freely: what the recompute may do on main too)
            content = _named_reals(value, names) if _is_user_object(value) else None
            if content is None:
                content = _content(value, 1)
            if content is not None:
                holders.append((label, value, content))
    if not kept and not holders and record.changed is None:
        return None
    record.operands = tuple(kept)
    record.holders = tuple(holders)
    return record


def _named_reals(value, names):
    """What of a module-level or captured object ``value`` a call may read and change:
    its attributes that ``names`` (the names the callee's code uses, and the methods of
    its class among them) name and that hold real numbers, as :func:`_content` keeps them
    (None for anything but a user's object)."""
    if not _is_user_object(value):
        return None
    content = _content(value, 1)
    if content is None or content[0] != "object":
        return None
    # (the names its class's methods named there use: MODEL.predict(x) reads MODEL.w)
    reads = _attribute_reads(type(value), frozenset(names))
    attrs = {k: v for k, v in content[1].items() if (reads is None or k in reads) and _may_carry(v)}
    return ("attributes", attrs, {k: content[2][k] for k in attrs})


def _read_reals(value, names, fn):
    """:func:`_named_reals` of the attributes of ``value`` that hold a real number or a
    real array (not a list or dict: a cache or a log the call writes, which the recompute
    leaves out, replay.py) and that ``fn`` or a method of ``value``'s class reads as an
    attribute (``self.w``, not only stores: ``self.last = z``): what a call that changes
    it reads differently in its recompute."""
    content = _named_reals(value, names)
    if content is None:
        return None
    loaded = _loaded_attributes(fn.__code__)
    for klass in type(value).__mro__:
        for member in vars(klass).values():
            member = getattr(member, "__func__", member)
            if isinstance(member, types.FunctionType):
                loaded = loaded | _loaded_attributes(member.__code__)
    attrs = {
        k: v
        for k, v in content[1].items()
        if k in loaded and (isinstance(v, (float, complex, np.inexact, np.ndarray)))
    }
    return ("attributes", attrs, {k: content[2][k] for k in attrs})


@functools.lru_cache(maxsize=4096)
def _loaded_attributes(code) -> frozenset:
    """The attribute names ``code`` (and the code nested in it) reads: ``x.name`` loaded,
    a method looked up, not stored."""
    out = {
        ins.argval
        for ins in dis.get_instructions(code)
        if ins.opname in ("LOAD_ATTR", "LOAD_METHOD") and isinstance(ins.argval, str)
    }
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            out |= _loaded_attributes(const)
    return frozenset(out)


def _function_of(callee, operands):
    """The Python function a call runs (a method's, for its name), or None."""
    if isinstance(callee, str):
        if not operands:
            return None
        callee = getattr(type(operands[0]), callee, None)
    callee = getattr(callee, "__func__", callee)  # a bound method
    if not isinstance(callee, types.FunctionType):  # a callable object: its __call__
        callee = inspect.getattr_static(type(callee), "__call__", None)
    return callee if isinstance(callee, types.FunctionType) else None


def _may_carry(value, depth: int = 0) -> bool:
    """Whether ``value`` is or holds a real number (a float, a float array, such an item
    of a list, tuple or dict, an object, a few levels deep)."""
    if isinstance(value, (float, complex, np.inexact)) or _is_user_object(value):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "fc"
    if depth > _DEPTH or not isinstance(value, (list, tuple, dict)):
        return False
    items = value.values() if isinstance(value, dict) else value
    return any(_may_carry(v, depth + 1) for v in items)


def _holders(fn, names: set, generators: list, depth: int = 0, seen=None):
    """``(label, value)`` of the module-level and closure-captured values ``fn`` (and the
    user functions it names, a few levels deep) reads that may change in place: objects
    of user classes, lists, dicts; ``names`` gets every name those functions use (the
    attributes they may read among them), ``generators`` the random number generators
    they name (recompute_draws.py)."""
    seen = set() if seen is None else seen
    if id(fn) in seen or depth > 3:
        return []
    seen.add(id(fn))
    out = []
    module = fn.__globals__
    used = _global_names(fn.__code__)
    names.update(used)
    for name in used:
        if name not in module:
            continue
        value = module[name]
        if isinstance(value, types.FunctionType):
            if not is_library_module_name(value.__module__ or "builtins"):
                out += _holders(value, names, generators, depth + 1, seen)
        elif isinstance(value, (list, dict)) or _is_user_object(value):
            out.append((f"module-level '{name}", value))
        elif generator_of(value) is not None:
            generators.append(generator_of(value))
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=False):
        try:
            value = cell.cell_contents
        except ValueError:  # not bound yet
            continue
        if isinstance(value, types.FunctionType):
            out += _holders(value, names, generators, depth + 1, seen)
        elif isinstance(value, (list, dict)) or _is_user_object(value):
            out.append((f"captured '{name}", value))
        elif generator_of(value) is not None:
            generators.append(generator_of(value))
    return out


@functools.lru_cache(maxsize=4096)
def _global_names(code) -> tuple:
    """The names ``code`` (and the code nested in it: comprehensions, lambdas) may read
    as globals (attribute names among them: only those the module binds count)."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names.update(_global_names(const))
    return tuple(sorted(names))


def state_as_read(record, where: str, line: str = ""):
    """Before the recompute of a call whose state ``record`` kept: ``{place: operand}``
    of the operands as the call read them (the object itself, or a copy of it holding the
    attributes it had when the call began, where they were rebound since: by the call,
    whose recompute then changes the copy, or after it); None when there is no record;
    refused where the state cannot be given back."""
    if record is None:
        return None
    if record.changed is not None:  # (its recompute would read what the call left)
        _refuse(where, line, record.callee, record.changed, by_the_call=True)
    for label, value, content in record.holders:
        path = _changed(value, content, "")
        if path is not None:
            _refuse(where, line, record.callee, f"the {label}{path}'")
    restored = {}
    for k, value, before, content in record.operands:
        restored[k] = value  # (the object the call read, whatever the name holds now)
        if content[0] != "object":
            path = _changed(value, content, "")
            if path is not None:
                _refuse(where, line, record.callee, f"its argument {k + 1}{path}")
            continue
        for a, v in content[1].items():  # what the call left must not be changed in place
            if not _may_carry(v):  # (a list of counts or names: as on main, not checked)
                continue
            path = _changed(v, content[2][a], "")
            if path is not None:
                _refuse(where, line, record.callee, f"'{a}{path}' of a {type(value).__name__}")
        now = _attributes(value)
        if before is not None and (
            len(now) != len(before)
            or any(now.get(a, now) is not _held(v) for a, v in before.items())
            or any(type(v) is _Items and not v.same(now[a]) for a, v in before.items())
        ):
            # (a list of counts the call or the code after it appended to: a copy holding
            # the items the call found, which the recompute's own appends then change)
            restored[k] = _as_it_was(value, _was(before))
            recompute_copy(restored[k], value, functools.partial(_reset, before), record.fn)
    return restored


def _was(before: dict) -> dict:
    """The attributes of ``before`` (a record of :func:`state_before`), a fresh list or
    dict for each one of plain values."""
    return {a: v.fresh() if type(v) is _Items else v for a, v in before.items()}


def _reset(before: dict, copy) -> None:
    """Give ``copy`` (of :func:`_as_it_was`) back the attributes of ``before``."""
    _fill(copy, _was(before))


def _as_it_was(obj, attributes: dict):
    """A copy of ``obj`` holding ``attributes`` (those it had when the call returned)."""
    new = snapshot(obj) if is_plain_record(obj) else copy.copy(obj)
    _fill(new, attributes)
    return new


def _fill(obj, attributes: dict) -> None:
    fields = getattr(obj, "__dict__", None)
    if type(fields) is dict:
        fields.clear()
        fields.update(attributes)
    else:
        for name, value in attributes.items():
            object.__setattr__(obj, name, value)


def as_read(restored, k: int, value):
    """Operand ``k`` of the call as the call read it (``restored`` from
    :func:`state_as_read`)."""
    if restored is None:
        return value
    return restored.get(k, value)


@transformable
def as_read_pullback(dy, restored, k, value):
    return NO_TANGENT, NO_TANGENT, dy


def _as_read_rrule(restored, k, value):
    return as_read(restored, k, value), lambda dy: (NO_TANGENT, NO_TANGENT, dy)


def _refuse(where: str, line: str, callee: str, what: str, by_the_call: bool = False):
    shown = f"        {line.strip()}\n" if line.strip() else ""
    when = (
        "was changed by the call itself (the recompute would read it as the call left it, "
        "and change it again)"
        if by_the_call
        else "was changed in place after the call ran (by a method, a helper or the code "
        "after the call)"
    )
    raise UnsupportedCallError(
        f"{where}: PB107 a second derivative pulls back through this call of '{callee}' by "
        f"running it again, later; but {what}, which it reads, {when}, so the call "
        "would be differentiated as it computes now, not as it computed.\n"
        f"{shown}"
        "Fix: pass the values the call reads as arguments, or build a new list, array or "
        "object instead of changing the one the call reads (see docs/limitations.md#PB107)."
    )


def register(reg) -> None:
    reg.non_differentiable(state_before, state_after, state_as_read, family=FAMILY, trusted=True)
    rule = reg.register(as_read, _as_read_rrule, family=FAMILY, trusted=True)
    reg.set_pullback_function(as_read, as_read_pullback)
    rule.extra["tangent"] = lambda args, tangents, kwargs: tangents[2]
