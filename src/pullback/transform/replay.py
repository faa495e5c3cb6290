"""The forward part of a function's ``__vjp`` form: a recompute of a call that already ran.

A gradient that is differentiated again (``hessian``, ``hvp``, ``grad(grad(f))``) runs each
call of a user function once for its value (``m.predict(X)``, with what it keeps on its
object: ``self.cache["z"] = z``, ``self.running_mean = ...``) and later pulls back through
the function's ``__vjp`` form, which recomputes that call's forward sweep to have its
intermediate values. Python ran the call once, so the recompute must not change the
object's state again (a running mean updated twice, a counter counting two calls), nor
compute with the state that call left behind (a recompute reading a counter after the call
incremented it differentiates another function).

So in the recompute (:func:`replay_forward`):

* the statements that write state outside the function's own variables are dropped: the
  stores that keep a differentiated value outside (escapes.py's ``*_escaping`` helpers)
  and attribute stores on an object the function was given (``_pb_setattr(self, ...)``),
  which run only where the recompute runs on a copy of that object made for it
  (``store_on_copy``: recompute_state.py gives a recompute the object as the call found
  it, when its attributes changed since);
* so are the statements whose results nothing else reads any more (the value that only
  fed such a store: ``self.momentum * self.running_mean + ...``), and an ``if`` left
  with nothing in either branch (``if self.n_in is None: self.n_in = X.shape[1]``);
* a statement that still reads an attribute the function writes gets a check before it
  (escapes.replayed_read), so the recompute never differentiates a state the call did
  not see: refused if the store of a differentiated value there ran in this evaluation
  (a read that runs only on another path, ``else: mu = self.running_mean``, checks only
  when it runs), and always for an attribute that keeps a counter or another plain
  value, whose stores are not recorded (``y = x * self.n`` before ``self.n += 1``).

>>> from pullback.transform.code import Line
>>> lines = [Line("_t1 = read_attribute(self, 'm', 'f.py:3:9')"),
...          Line("_t2 = 0.9 * _t1"),
...          Line("setattr_escaping(self, 'm', _t2, 'f.py:3:9')"),
...          Line("y = x * 2.0")]
>>> [line.text for line in replay_forward(lines, "return y", {"self", "x"}, str)]
['fresh_copies(_pb_origin, self, x)', 'y = x * 2.0', 'copies_done(_pb_origin, self, x)']
>>> lines = [Line("y = x * self.n"), Line("_t1 = self.n + 1.0"),
...          Line("_pb_setattr(self, 'n', _t1)")]
>>> for line in replay_forward(lines, "return y", {"self", "x"}, lambda s: "f.py:4"):
...     print(line.text)
fresh_copies(_pb_origin, self, x)
replayed_read(self, 'n', True, 'f.py:4')
y = x * self.n
_t1 = self.n + 1.0
store_on_copy(self, 'n', _t1)
copies_done(_pb_origin, self, x)
"""

from __future__ import annotations

import ast
import builtins
import inspect
import re
import textwrap
import types
from collections import Counter

import gast
import numpy as np

from ..guards import is_library_module_name
from ..recompute_draws import seeds_itself
from ..tree_walk import walk
from .code import Compound, Line, replace, walk_text

# The statements that keep a differentiated value outside the function (escapes.py).
_ESCAPING = re.compile(r"^(?:store_item_escaping|setattr_escaping|append_escaping)\((\w+)\b")
# An attribute store on an object (free_values.attribute_store), a constant one included.
_SETATTR = re.compile(r"^_pb_setattr\((\w+), '(\w+)'")
# A temporary bound to an object's attribute (the container of an item store, an append).
_ATTRIBUTE_READ = re.compile(r"^(\w+) = .*?\b(\w+), '(\w+)'|^(\w+) = (\w+)\.(\w+)$")


def _text(item, use_alt=True) -> str:
    if isinstance(item, Compound):
        return item.header
    return item.alt if use_alt and item.alt is not None else item.text


def replay_forward(block, after, params, where, outside=None) -> list:
    """``block`` (the forward lines of the ``__vjp`` form, differentiable-again texts) as
    the recompute runs them (module docstring); ``after``: the text of everything that
    follows it (the reverse part), ``params``: the function's parameter names, ``where``:
    the user's place of a line's ``src``. The same lines when nothing writes outside."""
    # first, the copies made for a recompute among the arguments as the call found them
    # (escapes.fresh_copies: a recompute of this recompute runs on them again)
    fresh, done = [], []
    if params:
        names = ", ".join(["_pb_origin", *sorted(params)])
        fresh, done = [Line(f"fresh_copies({names})")], [Line(f"copies_done({names})")]
    stores = set()
    trimmed = _drop_effects(block, params, stores, _effect_only(block, params, outside))
    if not stores:
        # (the values only a call left out printed or logged: left out too)
        return fresh + (block if trimmed is block else _pruned(trimmed, after)) + done
    # what the recompute needs on the object itself (its stores left out): the lines
    # guarded; those only a store on a copy reads run too, unguarded (on the object
    # itself, their value is thrown away)
    needed = {id(line) for line in _lines_of(_pruned(_without_copies(trimmed), after))}
    trimmed = _pruned(trimmed, after)
    attributes = _stored_attributes(stores, block)
    return fresh + _guard_reads(trimmed, attributes, where, needed) + done


def _pruned(block, after):
    counts = Counter()
    for text in walk_text(block):
        counts.update(_names(text))
    counts.update(_names(after))
    while True:
        pruned = _prune(block, counts)
        if pruned is block:
            return block
        block = pruned


def _without_copies(block) -> list:
    out = []
    for item in block:
        if isinstance(item, Compound):
            body, orelse = _without_copies(item.body), _without_copies(item.orelse)
            out.append(replace(item, body=body, orelse=orelse))
        elif not _text(item).startswith("store_on_copy("):
            out.append(item)
    return out


def _lines_of(block):
    for item in block:
        if isinstance(item, Compound):
            yield from _lines_of(item.body)
            yield from _lines_of(item.orelse)
        else:
            yield item


def _names(text: str) -> list:
    return re.findall(r"[^\W\d]\w*", text)


# A global or nonlocal name bound by the function (containers_mutation.store_free).
_STORE_FREE = re.compile(r"^store_free\((\w+), '(\w+)'")
# A temporary bound to a module-level value (free_values: ``_t1 = read_item(_pb_globals, 'LOG',
# ...) if ... else _pb_globals['LOG']``).
_GLOBAL_READ = re.compile(r"^(\w+) = read_item\(_pb_globals, '(\w+)'")
# A call made only for its effect: ``print(...)``, ``CALLS.append(1)``, ``log.info(...)``.
_EFFECT_CALL = re.compile(r"^(\w+)(?:\.\w+)*\(.*\)$", re.DOTALL)


def _effect_only(block, params, outside):
    """The predicate of the lines that are a call made only for its effect on the world
    outside the function: a statement that is a call of ``print``, or of a method of a
    module-level object (``CALLS.append(1)``, ``LOGGER.info(...)``, ``logging.info``): what
    ``outside(name)`` tells of a name the function neither takes nor binds. The call ran
    once, for the primal; the recompute leaves it out."""
    if outside is None:
        return lambda text: False
    bound, globals_ = set(params), {}
    for text in walk_text(block):
        bound.update(_assigned(text) or ())
        read = _GLOBAL_READ.match(text)
        if read is not None:  # (a module-level object read into a temporary first)
            globals_[read.group(1)] = read.group(2)

    def effect(text):
        m = _EFFECT_CALL.match(text)
        if m is None or "\n" in text or _assigned(text) is not None:
            return False
        root = m.group(1)
        attribute = text[len(root)] == "."
        if root in globals_:
            return attribute and outside(globals_[root], True)
        return root not in bound and outside(root, attribute)

    return effect


def outside_effects(namespace):
    """``outside(name, attribute)`` for :func:`replay_forward`, from the module namespace
    ``namespace`` of the function: whether a statement calling ``name(...)`` (``attribute``
    False) or ``name.method(...)`` is made only for its effect outside the function:
    ``print``; a method of a module-level object that is data (a list, a dict, a logger, a
    file, an object of a user's class; not a random generator, whose draws a recompute
    replays, recompute_state.py); the ``logging``, ``warnings`` and ``sys`` modules'
    functions (``logging.info``, ``sys.stdout.write``)."""
    builtin = namespace.get("__builtins__", builtins)
    builtin = builtin if isinstance(builtin, dict) else vars(builtin)

    def outside(name, attribute):
        value = namespace[name] if name in namespace else builtin.get(name, _MISSING)
        if not attribute:
            return value is print
        if isinstance(value, types.ModuleType):
            return value.__name__ in ("logging", "warnings", "sys")
        if value is _MISSING or isinstance(value, (type, types.FunctionType, np.random.Generator)):
            return False
        module = getattr(type(value), "__module__", None) or ""
        return not module.startswith(("pullback", "numpy")) and not callable(value)

    return outside


_MISSING = object()


def _drop_effects(block, params, stores, effect=lambda text: False) -> list:
    """``block`` without its stores outside the function (each added to ``stores`` as
    ``(name of the object or container written, attribute or None, plain)``) and without
    the calls made only for their effect outside (``effect``); ``block`` itself when it
    has neither."""
    out, changed = [], False
    for item in block:
        if isinstance(item, Compound):
            body = _drop_effects(item.body, params, stores, effect)
            orelse = _drop_effects(item.orelse, params, stores, effect)
            if body is not item.body or orelse is not item.orelse:
                item, changed = replace(item, body=body, orelse=orelse), True
            out.append(item)
            continue
        text = _text(item)
        free = _STORE_FREE.match(text)
        if free is not None and "\n" not in text:
            # a global or nonlocal bound again: it holds what the call bound already
            stores.add((free.group(1), free.group(2), True))
            changed = True
            continue
        if effect(text):
            changed = True
            continue
        escaping = _ESCAPING.match(text)
        setattr_ = _SETATTR.match(text)
        if escaping is not None and "\n" not in text:
            helper, args = text.split("(", 1)
            attr = re.match(r"\w+, '(\w+)'", args) if helper == "setattr_escaping" else None
            # (a container written: its attribute from its binding, _stored_attributes)
            stores.add((escaping.group(1), attr.group(1) if attr else None, False))
            changed = True
            continue
        if setattr_ is not None and setattr_.group(1) in params and "\n" not in text:
            stores.add((setattr_.group(1), setattr_.group(2), True))
            # (run only on a copy made for the recompute: escapes.store_on_copy)
            out.append(Line("store_on_copy(" + text[len("_pb_setattr(") :], item.reads, item.src))
            changed = True
            continue
        out.append(item)
    return out if changed else block


def _assigned(text: str):
    """The names a line binds when it is only assignments to names (``a = ...``,
    ``a, b = ...``, ``a = ...; b = None``), else None (kept whatever it binds)."""
    try:
        body = ast.parse(text).body
    except SyntaxError:
        return None
    names = []
    for s in body:
        if not isinstance(s, ast.Assign):
            return None
        for target in s.targets:
            elts = target.elts if isinstance(target, ast.Tuple) else [target]
            if not all(isinstance(e, ast.Name) for e in elts):
                return None
            names += [e.id for e in elts]
    return names


def _prune(block, counts):
    """``block`` without the assignments none of whose names is read anywhere else (the
    counts of every name's mentions are kept up to date); ``block`` itself when none."""
    out, changed = [], False
    for item in block:
        if isinstance(item, Compound):
            body, orelse = _prune(item.body, counts), _prune(item.orelse, counts)
            if body is not item.body or orelse is not item.orelse:
                item, changed = replace(item, body=body, orelse=orelse), True
            if item.header.startswith("if ") and not _lines(body) and not _lines(orelse):
                counts.subtract(_names(item.header))  # nothing left to choose between
                changed = True
                continue
            out.append(item)
            continue
        text = _text(item)
        bound = _assigned(text)
        if bound:
            own = Counter(_names(text))
            if all(counts[n] - own[n] <= 0 for n in bound):
                counts.subtract(own)
                changed = True
                continue
        out.append(item)
    return out if changed else block


def _lines(block) -> bool:
    """Whether ``block`` holds a line that renders (not only empty placeholders)."""
    return any(isinstance(item, Compound) or _text(item) for item in block)


def _stored_attributes(stores, block) -> dict:
    """``{(object name, attribute): plain}`` the dropped stores wrote (``plain``: a value
    that carries no gradient, whose store escapes.py does not record): an attribute
    store's own, and for a container written (an item store, an append) the attribute
    that held it (``_t2 = attribute_of(self, 'cache', ...)``)."""
    bound = {}
    for text in walk_text(block):
        m = _ATTRIBUTE_READ.match(text)
        if m is not None:
            if m.group(1):
                bound[m.group(1)] = (m.group(2), m.group(3))
            else:
                bound[m.group(4)] = (m.group(5), m.group(6))
    out = {}
    for name, attr, plain in stores:
        key = (name, attr) if attr is not None else bound.get(name)
        if key is not None:
            out[key] = out.get(key, False) or plain
    return out


def _guard_reads(block, attributes, where, needed) -> list:
    """Each line that reads one of ``attributes`` preceded by its check (a line whose
    id is in ``needed``, and each compound's header)."""
    if not attributes:
        return block
    patterns = [
        (obj, attr, plain, re.compile(rf"\b{obj}\s*,\s*'{attr}'|\b{obj}\.{attr}\b"))
        for (obj, attr), plain in sorted(attributes.items())
    ]
    out = []
    for item in block:
        if isinstance(item, Compound):
            item = replace(
                item,
                body=_guard_reads(item.body, attributes, where, needed),
                orelse=_guard_reads(item.orelse, attributes, where, needed),
            )
        elif id(item) not in needed:
            out.append(item)
            continue
        text = _text(item)
        for obj, attr, plain, pattern in patterns:
            if pattern.search(text):
                check = f"replayed_read({obj}, {attr!r}, {plain}, {where(item.src)!r})"
                out.append(Line(check, frozenset({obj}), item.src))
        out.append(item)
    return out


def unseeded_generator(tree, locate, depth=0, seen=None):
    """The first call in ``tree`` (a function's) that makes a random number generator
    without a seed (``np.random.default_rng()``, ``RandomState(None)``,
    ``random.Random()``: recompute_draws.seeds_itself), or that calls a user's function
    or class whose code does (``sim = Sim()`` whose ``__init__`` makes one; two levels
    deep), or None; ``locate(name)``: ``(where, value)`` of a free name
    (source.FunctionSource.locate). Its recompute would make another generator and draw
    other numbers: codegen refuses that recompute (recompute_draws.refuse_unseeded); a
    seeded one draws the same numbers again.

    >>> import numpy as np
    >>> text = "def f(x):\\n    a = np.random.default_rng(0)\\n    b = np.random.default_rng()\\n"
    >>> unseeded_generator(gast.parse(text).body[0], lambda name: ("globals", np)).lineno
    3
    """
    seen = set() if seen is None else seen
    for node in walk(tree):
        if not isinstance(node, gast.Call):
            continue
        fn = _resolved(node.func, locate)
        if seeds_itself(fn):
            seed = node.args[0] if node.args else None
            for k in node.keywords:
                if k.arg in ("seed", "x", "entropy"):
                    seed = k.value
            if getattr(fn, "__name__", "") == "SystemRandom" or seed is None or _is_none(seed):
                return node
        elif depth < 2 and any(_unseeded_inside(f, depth, seen) for f in _user_code(fn)):
            return node
    return None


def _user_code(fn) -> list:
    """The Python functions of a user's that calling ``fn`` runs: itself, or a class's
    ``__init__`` (none for library code)."""
    if isinstance(fn, type):
        fn = fn.__dict__.get("__init__")
    fn = getattr(fn, "__func__", fn)
    if not isinstance(fn, types.FunctionType):
        return []
    return [] if is_library_module_name(fn.__module__ or "builtins") else [fn]


def _unseeded_inside(fn, depth, seen) -> bool:
    if fn.__code__ in seen:
        return False
    seen.add(fn.__code__)
    try:
        tree = gast.parse(textwrap.dedent(inspect.getsource(fn))).body[0]
    except (OSError, TypeError, SyntaxError, IndexError):
        return False
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=False))

    def locate(name):
        if name in cells:
            try:
                return "closure", cells[name].cell_contents
            except ValueError:
                return None, None
        if name in fn.__globals__:
            return "globals", fn.__globals__[name]
        if hasattr(builtins, name):
            return "builtins", getattr(builtins, name)
        return None, None

    return unseeded_generator(tree, locate, depth + 1, seen) is not None


def _resolved(node, locate):
    """The object a name or an attribute chain of a free name stands for, or None."""
    if isinstance(node, gast.Attribute):
        base = _resolved(node.value, locate)
        return None if base is None else getattr(base, node.attr, None)
    if isinstance(node, gast.Name):
        where, value = locate(node.id)
        return value if where is not None else None
    return None


def _is_none(node) -> bool:
    return isinstance(node, gast.Constant) and node.value is None
