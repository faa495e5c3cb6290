"""Calls the checker meets: rules, user functions (handed back to the driver to be checked
in turn), methods, in-place NumPy functions, star-arguments in calls and displays, and
objects with neither source nor rule.

A mixin of :class:`~pullback.check.checker.FunctionChecker`.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import types

import gast
import numpy as np

from ..callables import call_method_of, rule_call_function
from ..dict_calls import constant_getattr, dict_display, with_getattr_rewritten
from ..guards import is_library_module_name
from ..iteration import consumed_iterator, first_item, loop_itertools
from ..iterators_by_hand import hand_iterators
from ..receiver_classes import python_method_of_object
from ..registry import qualified_name
from ..resolve import (
    ARRAY_ATTRIBUTES,
    ARRAY_INPLACE_METHODS,
    ARRAY_METHODS,
    ARRAY_VARARG_METHODS,
    CONTAINER_INPLACE_METHODS,
    receiver_class,
    resolve_call,
    resolve_expr,
)
from ..star_runtime import RRULES as STAR_RRULES
from ..transform.higher_order_builtins import (
    _spelled,
    is_keyed_call,
    is_reduce_call,
    reduced_iterator,
)
from ..transform.local_partials import partial_sites
from ..tree_walk import walk
from ..ufunc_methods import rewritten_method
from . import codes
from .argument_reads import bound_names, reads_only
from .call_targets import UserCall, foreign_call_text, user_callee
from .container_checks import ContainerChecks
from .fresh_arrays import returns_fresh
from .mutation_fixes import (
    container_fix,
    inplace_function_fix,
    inplace_method_fix,
    inplace_name,
    is_inplace_numpy,
)


def _array_library_call(callee) -> bool:
    """Whether ``out=`` in this call may be an array library's output array (a ufunc, a
    NumPy/SciPy/Dask/CuPy function, a method or a callee found at run time); a user
    function's ``out=`` (or that of the vjp pullback generated for one) is an argument like
    any other, whose writes are judged inside the function."""
    if callee.kind != "object":
        return True
    obj = callee.obj
    if isinstance(obj, np.ufunc):
        return True
    module = getattr(obj, "__module__", None) or ""
    return module.split(".", 1)[0] in ("numpy", "scipy", "dask", "cupy")


def _visible_names(fs) -> list[str]:
    names = getattr(fs, "visible_names", None)
    if callable(names):
        return list(names())
    fn = getattr(fs, "fn", None)
    result = list(getattr(fn, "__globals__", {}))
    result += list(getattr(getattr(fn, "__code__", None), "co_freevars", ()))
    result += dir(builtins)
    return result


def _user_object_class(obj) -> bool:
    """A class of the user's (not a library's) whose objects are not containers: calling
    it makes a new object no other name refers to (the resolver gives a plain class's
    constructor function, which names its class)."""
    obj = getattr(obj, "__pullback_class__", None) or obj
    return (
        isinstance(obj, type)
        and not is_library_module_name(getattr(obj, "__module__", None) or "builtins")
        and not issubclass(obj, (list, dict, set, bytearray, np.ndarray))
        and not hasattr(obj, "__setitem__")
    )


class CallChecks(ContainerChecks):
    """Visitors of :class:`~pullback.check.checker.FunctionChecker`; see the module docstring."""

    def _returns_fresh(self, call) -> bool:
        """Whether a call returns a new object that keeps no reference to its arguments."""
        return returns_fresh(self._resolve(call), call)

    def callee_reads_only(self, call, position, returned=True) -> bool:
        """Whether the user function ``call`` calls (with source, not a method) keeps
        nothing of its ``position``-th argument (check/argument_reads.py; ``returned``:
        whether returning it counts as a read), its own calls resolved in its own module."""
        found = user_callee(self, call)
        if found is None or found[2] != 0 or not isinstance(found[1].tree, gast.FunctionDef):
            return False
        fs = found[1]
        own = bound_names(fs.tree)
        return reads_only(
            fs.tree, position, lambda c: returns_fresh(resolve_call(fs, c, own), c), returned
        )

    def _makes_user_object(self, call) -> bool:
        """Whether a call makes a new object of a user's class (`v = Vec(x, y)`, then
        `v += w`: its own __iadd__, or `v = v + w`, transform/dunder_operators.py)."""
        callee = self._resolve(call)
        return callee.kind == "object" and _user_object_class(callee.obj)

    def _resolve(self, call):
        key = id(call)
        if key not in self._resolved:
            self._resolved[key] = resolve_call(self.fs, call, self.locals)
        return self._resolved[key]

    def _hand_iterator_calls(self) -> set:
        """The ids of the ``iter``/``next`` calls of iterators stepped by hand that the
        transform reads by index (pullback/iterators_by_hand.py)."""
        found = getattr(self, "_hand_calls", None)
        if found is None:
            found = set()
            if isinstance(self.tree, gast.FunctionDef):
                found = hand_iterators(self.tree, self._resolve)[1]
            self._hand_calls = found
        return found

    # -- expressions ----------------------------------------------------------------------------
    def visit_Call(self, node):
        attribute = constant_getattr(node, self._resolve)
        if attribute is not None:  # getattr(obj, "w"): the read obj.w (pullback/dict_calls.py)
            self.visit(attribute)
            return
        method = with_getattr_rewritten(node, self._resolve)
        if method is not node:  # getattr(m, "f")(x): the call m.f(x)
            self.visit(method)
            return
        display = dict_display(node, self._resolve)
        if display is not None:  # dict(a=x): the display it builds (pullback/dict_calls.py)
            self.visit(display)
            return
        if id(node) in self._hand_iterator_calls():  # it = iter(xs); next(it): by index
            self.visit_all(node.args)
            return
        first = first_item(node, self._resolve)
        if first is not None:  # next(v for v in xs if c): a loop with break (iteration.py)
            iterable, generator = first
            if generator is None:
                self._loop_iterators.add(id(iterable))
            self.visit(iterable if generator is None else generator)
            self.visit_all(node.args[1:])
            return
        consumed = consumed_iterator(node, self._resolve)
        if consumed is not None:  # list(zip(a, b)): a comprehension (pullback/iteration.py)
            self._loop_iterators.add(id(consumed))
        elif self._reduced_iterator(node):  # reduce(f, reversed(xs), 0): the loop it runs
            self._loop_iterators.add(id(node.args[1]))
        self._check_call(node)
        self.visit(node.func)
        # *xs and **opts in calls are packed and spread at run time
        # (transform/star_calls.py), their gradients flowing through.
        for arg in node.args:
            self.visit(arg.value if isinstance(arg, gast.Starred) else arg)
        for kw in node.keywords:
            self.visit(kw.value)

    def visit_Starred(self, node, where="a display"):
        # [*xs, y], (*t, 1.0), {*a, b}: packed tuples (transform/star_calls.py).
        self.visit(node.value)

    def visit_Dict(self, node):
        # {**a, "k": v}: merged at run time, the cotangent of each key going to the dict
        # whose value the display kept (transform/star_calls.py).
        for key, value in zip(node.keys, node.values, strict=False):
            if key is not None:
                self.visit(key)
            self.visit(value)

    def _reduced_iterator(self, node) -> bool:
        if _spelled(node) != "reduce" or not 2 <= len(node.args) <= 3:
            return False
        callee = self._resolve(node)
        return (
            callee.kind == "object"
            and is_reduce_call(node, callee.obj)
            and reduced_iterator(node, self._resolve)
        )

    # -- calls ------------------------------------------------------------------------------------
    def _check_call(self, node):
        callee = self._resolve(node)
        if (
            callee.kind == "method"
            and not callee.python_method
            and isinstance(node.func, gast.Attribute)
            and self.check_container_call(node, node.func.attr) is not None
        ):
            return  # l.sort(), d.pop(k): a list or dict, allowed or reported (container_checks.py)
        inplace = self.check_inplace_call(node)  # PB103/PB104 on local arrays: mutation_checks.py
        if inplace == "done":
            return
        for kw in node.keywords:
            if (
                kw.arg == "out"
                and inplace is None
                and not (isinstance(kw.value, gast.Constant) and kw.value.value is None)
                and _array_library_call(callee)
            ):
                self.report(
                    kw,
                    "PB104",
                    f"array mutation: '{self.text(kw)}' writes the result into an existing array",
                    fix=f"use the returned value instead, e.g. `{self.text(kw.value)} = "
                    f"{self.text(node.func)}(...)` without `out=` ({codes.see('PB104')}).",
                )
        if callee.kind == "object":
            self._check_object_call(node, callee)
        elif callee.kind == "method" and not callee.python_method:
            self._check_method_name(node, callee.name)
        elif callee.kind == "unbound" and not self._forward_only:
            if not self._feature_tested(node.func):
                self._report_unbound(node, callee)

    def _check_method_name(self, node, name) -> bool:
        """PB103/PB106 for ``receiver.name(...)`` when the method changes its receiver."""
        func = node.func
        if not isinstance(func, gast.Attribute):
            return False
        handled = self.check_container_call(node, name)  # lists and dicts (PB106)
        if handled is not None:
            return handled
        receiver = self.text(func.value)
        call = self.text(node)
        if name in ARRAY_INPLACE_METHODS:
            self.report(
                node,
                "PB103",
                f"array mutation: in-place method '{call}' changes '{receiver}'",
                fix=f"{inplace_method_fix(receiver, name, node, self.text)} "
                f"({codes.see('PB103')}).",
            )
            return True
        if name in CONTAINER_INPLACE_METHODS and name != "append":
            if self._user_method_chain(func, name):
                return False  # Acc().add(v).add(w): the class's own method, found running
            # append runs as written; the transform refuses it only where a gradient
            # would have to flow through the list (transform/reverse_attributes.py).
            own = self._subclass_method(func, name)
            if own is not None:  # lmfit's Parameters(dict).add: not dict's or set's method
                base = next(b for b in (dict, list, set) if issubclass(own, b)).__name__
                self.report(
                    node,
                    "PB106",
                    f"container mutation: '{call}' calls {own.__name__}.{name}, a method of "
                    f"a {base} subclass, which changes '{receiver}' in place",
                    fix=f"keep the values in a plain {base} the function builds (for a dict: "
                    f"`{receiver} = {{}}` and `{receiver}[key] = value`) "
                    f"({codes.see('PB106')}).",
                )
                return True
            self.report(
                node,
                "PB106",
                f"container mutation: '{call}' changes '{receiver}' in place",
                fix=f"{container_fix(receiver, name, node, self.text)} ({codes.see('PB106')}).",
            )
            return True
        return False

    def _subclass_method(self, func, name):
        """The user's subclass of a list, dict or set whose object ``func.value`` is (a
        local bound once by a call of it), when its own Python method is ``name``."""
        cls = receiver_class(self.fs, func.value, self.locals)
        if (
            not isinstance(cls, type)
            or not issubclass(cls, (list, dict, set))
            or is_library_module_name(cls.__module__ or "")
        ):
            return None
        found = isinstance(inspect.getattr_static(cls, name, None), types.FunctionType)
        return cls if found else None

    def _user_method_chain(self, func, name) -> bool:
        """Whether ``func`` is ``C(...).name`` or ``C(...).m(...).name`` (a builder's
        chain) with ``C`` a user class whose ``name`` is a Python function: not the set
        or list method of that name."""
        root = func.value
        while isinstance(root, gast.Call) and isinstance(root.func, gast.Attribute):
            root = root.func.value
        if not isinstance(root, gast.Call):
            return False
        cls = self._resolved_object(root)
        cls = getattr(cls, "__pullback_class__", cls)  # a plain class's constructor function
        if not isinstance(cls, type) or is_library_module_name(cls.__module__ or ""):
            return False
        return isinstance(inspect.getattr_static(cls, name, None), types.FunctionType)

    def _check_object_call(self, node, callee):
        obj = callee.obj
        called = obj  # as the call names it (a bound method binds its receiver)
        if obj is builtins.exec or obj is builtins.eval:
            self.report(
                node.func,
                "PB407",
                f"{obj.__name__}() cannot be differentiated",
                fix=f"write the code out in the function instead of building it from a string "
                f"({codes.see('PB407')}).",
            )
            return
        if is_inplace_numpy(obj):
            name = inplace_name(obj)
            self.report(
                node,
                "PB104",
                f"array mutation: '{name}' writes into its argument",
                fix=f"{inplace_function_fix(obj, node, self.text)} ({codes.see('PB104')}).",
            )
            return
        owner = getattr(obj, "__self__", None)
        if (
            owner is not None
            and not isinstance(owner, (types.ModuleType, type))
            and isinstance(node.func, gast.Attribute)
            and not python_method_of_object(owner, node.func.attr)
            and self._check_method_name(node, node.func.attr)
        ):
            return
        if (
            isinstance(owner, np.ndarray)
            and isinstance(node.func, gast.Attribute)
            and (
                node.func.attr in ARRAY_METHODS
                or node.func.attr in ARRAY_VARARG_METHODS
                or node.func.attr in ARRAY_ATTRIBUTES
            )
        ):
            return  # a method of a global array: the same as x.sum() on a local one
        if self._forward_only:
            return
        if id(node) in self._loop_iterators and obj in (
            builtins.zip,
            builtins.enumerate,
            builtins.reversed,
            np.ndenumerate,
        ):
            # enumerate(zip(xs, ys)): what they iterate is read by index the same way
            # (transform/loop_iterables.py).
            self._loop_iterators.update(id(a) for a in node.args)
            return
        if id(node) in self._loop_iterators and loop_itertools(node, self._resolve):
            # accumulate(xs), chain(a, b), pairwise(xs), ... where a loop, a comprehension or
            # list(...) goes over it: the transform steps it (transform/loop_iterables.py), in
            # a callee as in the function itself, and refuses a form it cannot step
            return
        if not self._reads_locals(node):
            return  # only constants and globals go in: no gradient can flow through it
        if obj is builtins.zip and any(isinstance(a, gast.Starred) for a in node.args):
            return  # zip(*pairs): a transpose with its own pullback (star_runtime.py)
        if rewritten_method(obj) is not None:
            return  # np.add.reduce: written as np.sum (transform/ufunc_calls.py)
        if is_reduce_call(node, obj) or is_keyed_call(node, obj):
            return  # the loop it runs, the order a key chooses (higher_order_builtins.py)
        if obj in STAR_RRULES and not node.keywords:
            # star_call(f, args, keywords) in a generated gradient differentiated again (a
            # wrapper's `fn(*args, **kwargs)`): the normalizer's star-call, as when it wrote
            # it; its callee is found and checked when it runs (transform/free_values.py)
            return
        if isinstance(obj, functools.partial):
            obj = obj.func  # called as its function, the bound arguments first
        if obj is functools.partial:
            # a partial of values that carry no gradient (partial(g, k) in a loop) is made
            # as in the primal; its calls are found at run time (dynamic_calls.py)
            if not self._rewritten_partial(node) and self.may_carry_gradient(node):
                self._report_partial(node)
            return
        if (
            isinstance(owner, (list, dict, set))
            and isinstance(node.func, gast.Attribute)
            and node.func.attr == "append"
        ):
            return  # runs as written; refused by the transform only if read back (PB106)
        if (
            obj in (builtins.map, builtins.filter)
            and len(node.args) >= 2
            and not node.keywords
            and not any(isinstance(a, gast.Starred) for a in node.args)
        ):
            # the comprehension that computes the same list (transform/comprehensions.py)
            self.check_kept_iterator(node, f"{obj.__name__} object")
            return
        # vec(x) with a np.vectorize object calls type(vec).__call__ (transform/free_values.py)
        obj = rule_call_function(obj, self.registry) or call_method_of(obj, self.registry)
        kind = self.env.classify(obj, self.registry)
        if kind[0] in ("rule", "opaque"):
            return
        if kind[0] == "user":
            if isinstance(called, types.MethodType):
                bound = 1
            else:
                bound = 0 if obj is called else None
            owned, kinds = self.check_owning_call(node)  # helpers writing into arguments
            self.user_calls.append(UserCall(node, kind[1], kind[2], bound, owned, kinds))
            return
        if kind[0] == "async":
            self.report(
                node,
                "PB403",
                f"call of async function '{qualified_name(obj)}' cannot be differentiated",
                fix=f"await it outside and pass the result in ({codes.see('PB403')}).",
            )
            return
        if self.defer_inactive_calls:
            # The differentiated function itself: the transform, which knows what carries a
            # gradient, refuses this call only if a differentiated value reaches it
            # (transform/problems.py foreign_varied_call); otherwise it just runs.
            return
        if not self.may_carry_gradient(node):
            return  # in a callee, no differentiated value reaches it: it just runs
        self._report_foreign(node, obj, kind[0])

    def _rewritten_partial(self, node) -> bool:
        """``f = functools.partial(...)`` only called: its calls call the function
        (transform/local_partials.py)."""
        if getattr(self, "_partials", None) is None:
            sites = partial_sites(self.tree, self._resolved_object)
            self._partials = {id(assign.value) for assign, _ in sites}
        return id(node) in self._partials

    def _report_partial(self, node):
        func = self.text(node.args[0]) if node.args else "f"
        self.report(
            node.func,
            "PB301",
            "functools.partial of values of the differentiated function, stored, passed on "
            "or bound more than once",
            fix="bind the partial to a name once and only call it here (`g = partial("
            f"{func}, ...); g(x)`: its calls then call '{func}' with the bound values), or call "
            f"'{func}' directly with all its arguments ({codes.see('PB301')}).",
        )

    def _reads_locals(self, call) -> bool:
        """Whether any argument of ``call`` reads a parameter or local variable."""
        for part in list(call.args) + [k.value for k in call.keywords]:
            for sub in walk(part):
                if isinstance(sub, gast.Name) and sub.id in self.locals:
                    return True
        return False

    def _report_foreign(self, node, obj, kind):
        failure = getattr(self.env, "failures", {}).get(obj)
        message, fix = foreign_call_text(obj, kind, failure)
        self.report(node.func, "PB301", message, fix=fix)

    def _feature_tested(self, func) -> bool:
        """Whether ``func`` is ``base.name`` with ``base`` tested by ``hasattr(base, ...)``
        (or read by ``getattr(base, ..., default)``) in the function: a version check
        (``np.trapz(y) if hasattr(np, "trapz") else np.trapezoid(y)``) whose missing
        branch Python never runs. The name is looked up where it runs, as Python does."""
        if not isinstance(func, gast.Attribute):
            return False
        tested = getattr(self, "_tested_bases", None)
        if tested is None:
            tested = self._tested_bases = set()
            for n in walk(self.tree):
                if (
                    isinstance(n, gast.Call)
                    and isinstance(n.func, gast.Name)
                    and (n.func.id == "hasattr" or (n.func.id == "getattr" and len(n.args) == 3))
                    and len(n.args) >= 2
                    and self._resolved_object(n) in (builtins.hasattr, builtins.getattr)
                ):
                    tested.add(self.text(n.args[0]))
        return self.text(func.value) in tested

    def _report_unbound(self, node, callee):
        func = node.func
        import difflib  # only for this message: not imported by every cold start

        name = callee.name
        suggestion = None
        if isinstance(func, gast.Attribute):
            found, base = resolve_expr(self.fs, func.value, self.locals)
            base_text = self.text(func.value)
            if found and isinstance(base, types.ModuleType):
                detail = f"module '{base.__name__}' has no attribute '{func.attr}'"
            else:
                detail = f"'{base_text}' has no attribute '{func.attr}'"
            if found:
                close = difflib.get_close_matches(func.attr, dir(base), n=1, cutoff=0.75)
                if close:
                    suggestion = f"{base_text}.{close[0]}"
            message = f"'{name}' is not defined: {detail}"
        else:
            message = f"name '{name}' is not defined"
            close = difflib.get_close_matches(name, _visible_names(self.fs), n=1, cutoff=0.75)
            if close:
                suggestion = close[0]
        hint = f"did you mean '{suggestion}'? Otherwise, " if suggestion else ""
        self.report(
            func,
            "PB302",
            message,
            fix=f"{hint}define or import '{name}' at module level before the gradient is "
            f"first called ({codes.see('PB302')}).",
        )
