"""Higher-order builtins over user functions and lambdas, as the code they compute.

* ``functools.reduce(f, xs, init)`` becomes the loop it runs (``acc = init; for x in
  xs: acc = f(acc, x)``), so gradients flow through ``f`` as through any call (a lambda
  ``f`` is inlined, a user function transformed, ``operator.add`` uses its rule).
* ``sorted(xs, key=k)``, ``max(xs, key=k)``, ``min(xs, key=k)``: the key only chooses an
  order (it carries no gradient, the values do). The call runs through
  :mod:`pullback.star_runtime` (``sorted`` with a permutation pullback, ``max``/``min``
  through their rules); a lambda key becomes a plain function of the values it captures
  (passed explicitly, so it sees them as the lambda would).

A mixin of :class:`~.normalize.Normalizer`.
"""

from __future__ import annotations

import builtins
import functools
import operator
import types

import gast

from ..callables import call_method_of
from ..guards import is_library_module
from ..iteration import iterator_kind
from ..resolve import Callee, resolve_call
from ..star_permutations import bind_front
from ..star_runtime import star_call
from ..tree_walk import walk
from . import nodes as N

KEYED = (builtins.sorted, builtins.max, builtins.min)


def _spelled(call) -> str | None:
    func = call.func
    return func.id if isinstance(func, gast.Name) else getattr(func, "attr", None)


# The spellings the normalizer looks at (resolving every call would cost first-call time).
SPELLINGS = ("reduce", "sorted", "max", "min")


def is_reduce_call(call, obj) -> bool:
    """``functools.reduce(f, xs)`` or ``functools.reduce(f, xs, init)``, written plainly."""
    return (
        obj is functools.reduce
        and _spelled(call) == "reduce"
        and 2 <= len(call.args) <= 3
        and not call.keywords
        and not any(isinstance(a, gast.Starred) for a in call.args)
    )


def reduced_iterator(call, resolve) -> bool:
    """``reduce(f, it(...), init)`` with ``it`` zip, enumerate or reversed: the loop
    that reduce runs consumes the iterator whole where it is made (the check and the
    normalizer both ask this)."""
    return len(call.args) == 3 and iterator_kind(call.args[1], resolve) is not None


def is_keyed_call(call, obj) -> bool:
    """``sorted/max/min(..., key=k)`` (the key chooses; it carries no gradient)."""
    return (
        any(obj is f for f in KEYED)
        and _spelled(call) in SPELLINGS
        and any(k.arg == "key" for k in call.keywords)
        and not any(isinstance(a, gast.Starred) for a in call.args)
        and all(k.arg is not None for k in call.keywords)
    )


def _free_names(lam) -> list[str]:
    params = {a.id for a in lam.args.posonlyargs + lam.args.args}
    seen: list[str] = []
    for node in walk(lam.body):
        if isinstance(node, gast.Name) and node.id not in params and node.id not in seen:
            seen.append(node.id)
    return seen


def _module_attribute(normalizer, func) -> bool:
    """Whether ``func`` is ``name.attr`` with ``name`` a global or closure variable bound
    to a user module (not NumPy's, SciPy's or the standard library's)."""
    if not (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name)):
        return False
    if func.value.id in normalizer.locals:
        return False
    found, value = normalizer.fs.lookup(func.value.id)
    return found and isinstance(value, types.ModuleType) and not is_library_module(value)


class HigherOrderBuiltins:
    """Normalizer methods; see the module docstring."""

    def higher_order_builtin(self, e, stmts):
        """The value of a reduce or keyed call, normalized, or None for other calls."""
        item = self.itemgetter_call(e)
        if item is not None:
            return self.operation(item, stmts)
        func = e.func
        if isinstance(func, gast.Name) and func.id not in self.locals:
            found, value = self.fs.lookup(func.id)
            if found and isinstance(value, functools.partial):
                return self.partial_call(e, stmts)
            if found and call_method_of(value) is not value:
                # A callable object (a layer, a loss): Python calls obj.__call__, a
                # method pullback transforms with obj first. The call goes on as that.
                e.func = N.located(gast.Attribute(func, "__call__", gast.Load()), func)
                return None
        if _module_attribute(self, func):
            # ``config.loss(x)`` with ``config.loss = partial(...)`` in a module: the same
            # as a partial found by name, read when it runs
            callee = resolve_call(self.fs, e, self.locals)
            if callee.kind == "object" and isinstance(callee.obj, functools.partial):
                return self.partial_call(e, stmts)
        if _spelled(e) not in SPELLINGS:
            return None
        callee = resolve_call(self.fs, e, self.locals)
        if callee.kind != "object":
            return None
        if is_reduce_call(e, callee.obj):
            return self.reduce_loop(e, stmts)
        if is_keyed_call(e, callee.obj):
            return self.keyed_call(e, callee.obj, stmts)
        return None

    def partial_call(self, e, stmts):
        """A call of a ``functools.partial`` object found in the globals: dispatched when
        it runs (its function, with the bound arguments first; pullback.dynamic_calls)."""
        func = self.atom(e.func, stmts)
        args = [self.atom(a, stmts) for a in e.args]
        keywords = [gast.keyword(arg=k.arg, value=self.atom(k.value, stmts)) for k in e.keywords]
        node = N.located(gast.Call(func=func, args=args, keywords=keywords), e)
        node.pb_callee = Callee("dynamic", name="partial")
        return node

    def itemgetter_call(self, e):
        """``operator.itemgetter(i)(x)`` is ``x[i]``."""
        inner = e.func
        if not (isinstance(inner, gast.Call) and len(e.args) == 1 and not e.keywords):
            return None
        if len(inner.args) != 1 or inner.keywords or isinstance(inner.args[0], gast.Starred):
            return None
        if isinstance(e.args[0], gast.Starred):
            return None
        callee = resolve_call(self.fs, inner, self.locals)
        if callee.kind != "object" or callee.obj is not operator.itemgetter:
            return None
        return N.located(N.subscript(e.args[0], inner.args[0]), e)

    def reduce_loop(self, e, stmts):
        f, xs, *init = e.args
        acc, item = self.fresh("acc"), self.fresh("item")
        seq = self.fresh("seq")
        # The sequence itself (not list(xs)): indexing and iteration keep the gradient
        # differentiable again.
        user = [N.assign(seq, xs, e)]
        if init and self.reduced_iterator(e):
            # reduce(f, reversed(xs), 0): the loop reads the iterator where it is made,
            # as `for x in reversed(xs)` does (transform/loop_iterables.py)
            user = [N.assign(acc, init[0], e)]
            iterable = xs
        elif init:
            user.append(N.assign(acc, init[0], e))
            iterable = N.load(seq)
        else:  # Python's reduce starts from the first item (a sequence here)
            user.append(N.assign(acc, N.subscript(N.load(seq), N.const(0)), e))
            iterable = N.subscript(N.load(seq), gast.Slice(lower=N.const(1), upper=None, step=None))
        step = N.assign(acc, gast.Call(func=f, args=[N.load(acc), N.load(item)], keywords=[]), e)
        loop = gast.For(
            target=N.store(item), iter=iterable, body=[step], orelse=[], type_comment=None
        )
        user.append(N.located(loop, e))
        for s in user:
            new, _ = self.stmt(N.located(s, e))
            stmts.extend(new)
        return N.load(acc)

    def reduced_iterator(self, e) -> bool:
        """Whether the sequence of ``reduce(f, xs, init)`` is a plain ``zip``,
        ``enumerate`` or ``reversed`` call (consumed whole by the loop reduce runs)."""
        return reduced_iterator(e, lambda c: resolve_call(self.fs, c, self.locals))

    def keyed_call(self, e, fn, stmts):
        self.namespace.setdefault("tuple", tuple)
        args = self.atom(N.located(N.tuple_(list(e.args)), e), stmts)
        keys, values = [], []
        for k in e.keywords:
            keys.append(N.const(k.arg))
            key = self.key_as_lambda(k.value) if k.arg == "key" else None
            if key is not None:
                values.append(self.key_function(key, stmts))
            else:
                values.append(self.atom(k.value, stmts))
        keywords = self.atom(N.located(gast.Dict(keys=keys, values=values), e), stmts)
        self.namespace[fn.__name__] = fn
        self.namespace["star_call"] = star_call
        node = N.located(N.call(N.load("star_call"), [N.load(fn.__name__), args, keywords]), e)
        node.pb_callee = Callee("star", star_call, name="star_call")
        return node

    def key_as_lambda(self, value):
        """The key as a lambda: itself, or the lambda a local one-line helper stands for
        (``def k(v): return abs(v)`` passed as ``key=k`` is inlined: its ``def`` does
        nothing in the normalized code, so the name alone would be undefined)."""
        if isinstance(value, gast.Lambda):
            return value
        if isinstance(value, gast.Name) and value.id in self.inlinable():
            args, expression = self.inlinable()[value.id]
            return N.located(gast.Lambda(args=args, body=expression), value)
        return None

    def key_function(self, lam, stmts):
        """A lambda key as a plain function: its free local names become leading
        parameters, bound to their values here (``bind_front``); globals are the user's."""
        free = _free_names(lam)
        captured = [n for n in free if n in self.locals or self._in_closure(n)]
        # Lifted nested functions (transform/closures.py) live in the transform's
        # namespace, not in the user's globals: the key gets them from an enclosing scope.
        lifted = [n for n in free if n not in captured and n in self.fs.namespace]
        params = [a.id for a in lam.args.posonlyargs + lam.args.args]
        source = f"lambda {', '.join(captured + params)}: {gast.unparse(lam.body).strip()}"
        if lifted:
            source = f"lambda {', '.join(lifted)}: {source}"
        compiled = eval(source, self.fs.fn.__globals__)  # noqa: S307 - the user's own lambda
        if lifted:
            compiled = compiled(*(self.fs.namespace[n] for n in lifted))
        name = self.fresh("key_fn")
        self.namespace[name] = compiled
        if not captured:
            return N.load(name)
        values = [self.atom(N.located(N.load(n), lam), stmts) for n in captured]
        self.namespace["bind_front"] = bind_front
        packed = self.atom(N.located(N.tuple_([N.load(name)] + values), lam), stmts)
        empty = self.atom(N.located(gast.Dict(keys=[], values=[]), lam), stmts)
        node = N.call(N.load("star_call"), [N.load("bind_front"), packed, empty])
        self.namespace["star_call"] = star_call
        node.pb_callee = Callee("star", star_call, name="star_call")
        key = self.fresh("key")
        stmts.append(N.assign(key, N.located(node, lam), lam))
        return N.load(key)

    def _in_closure(self, name) -> bool:
        code = getattr(self.fs.fn, "__code__", None)
        return code is not None and name in code.co_freevars
