"""What a call in checked code reaches: a user function with source (handed back to the
driver as a :class:`UserCall`, to be checked in turn), or an object with neither source nor
rule, whose refusal (PB301) :func:`foreign_call_text` words for the checker and the
transform alike.

>>> import numpy as np
>>> message, fix = foreign_call_text(np.frompyfunc, "foreign")
>>> message.startswith("call of 'numpy.frompyfunc'"), "@pullback.rrule" in fix
(True, True)
"""

from __future__ import annotations

import builtins
import functools
import types

from ..callables import call_method_of, rule_call_function
from ..iteration import iterator_refusal
from ..plain_classes import refusal as plain_refusal
from ..records_dataclasses import class_refusal
from ..registry import qualified_name
from . import codes


class UserCall:
    """A call of a user function with source: the driver checks ``source`` next. (A plain
    class, not a dataclass: dataclasses cost about half a millisecond each at import.)"""

    def __init__(self, call, key, source, bound=0, owned=(), kinds=()):
        self.call = call
        self.key = key
        self.source = source
        # how many leading parameters the callable binds itself (1: a bound method, so the
        # call's first argument is the second parameter); None: not known (a partial, ...)
        self.bound = bound
        # the parameters the callee writes into and this call passes local arrays for: the
        # callee is checked as its specialization owning them (check/helper_writes.py)
        self.owned = owned
        self.kinds = kinds  # "list", "dict" or None (an array) for each owned parameter


def user_callee(checker, call):
    """``(function, source, bound)`` when ``call`` calls a user function with source
    (``bound`` as in :class:`UserCall`), else None."""
    callee = checker._resolve(call)
    if callee.kind != "object" or isinstance(callee.obj, functools.partial):
        return None
    called = callee.obj
    obj = rule_call_function(called, checker.registry) or call_method_of(called, checker.registry)
    kind = checker.env.classify(obj, checker.registry)
    if kind[0] != "user":
        return None
    bound = 1 if isinstance(called, types.MethodType) else (0 if obj is called else None)
    return kind[1], kind[2], bound


def foreign_call_text(obj, kind: str, failure=None) -> tuple[str, str]:
    """``(message, fix)`` of PB301 for a call of ``obj``, which ``LiveEnvironment.classify``
    calls ``kind`` ("foreign", "library" or "nosource"); ``failure`` is why its source could
    not be loaded, if known. The transform reports the same for a call it finds varied."""
    name = qualified_name(obj)
    iterator = iterator_refusal(obj)
    if iterator is not None:  # zip, enumerate, iter, next kept as values: pullback/iteration.py
        what, fix = iterator
        return f"call of '{name}', {what}", f"{fix} ({codes.see('PB301')})."
    if getattr(obj, "__module__", None) in ("pullback.api", "pullback.forward_mode") and getattr(
        obj, "__name__", ""
    ) in ("vjp", "jvp"):
        return (
            f"pullback.{obj.__name__} called inside a function being differentiated: its "
            "derivative is a second derivative, which pullback builds only by nesting grad",
            (
                "write the product with grad, which may be called here: `back(u)[0]` of "
                "`vjp(f, x)` is `grad(f_u)(x, u)` with `def f_u(x, u): return np.sum(f(x) * u)`"
                if obj.__name__ == "vjp"
                else "write the product with grad, which may be called here: element i of "
                "the tangent of `jvp(f, (x,), (v,))` is `np.dot(grad(f_i)(x, i), v)` with "
                "`def f_i(x, i): return f(x)[i]`"
            )
            + f" ({codes.see('PB301')}).",
        )
    if obj is builtins.getattr:  # a name known only when it runs (a constant one is obj.name)
        return (
            "call of 'getattr' with a name known only when it runs: pullback follows "
            "attributes read by their name in the code",
            'read the attribute by its name (`obj.w`, `getattr(obj, "w")`, or call the '
            "method `obj.f(x)`), or keep the values in a dict read by key "
            f"({codes.see('PB301')}).",
        )
    # (a class of a file the static check parsed: check/static_classes.py)
    static = getattr(obj, "__pullback_static_class__", False)
    if isinstance(obj, type) or static:
        what = "a class with no differentiation rule"
    elif kind == "library":
        what = "library code with no differentiation rule (pullback does not transform it)"
    elif kind == "nosource":
        what = "a function whose source cannot be read (made by exec?) and with no rule"
    else:
        what = "a function with no Python source and no differentiation rule"
    short = name.rsplit(".", 1)[-1]
    fix = (
        f"register a rule with `@pullback.rrule({name})` (returning `(y, pullback)`), "
        f"or declare it non-differentiable with `pullback.non_differentiable({name})` if "
        f"no gradient flows through '{short}' ({codes.see('PB301')})."
    )
    # (a library's class keeps the rule fix: its source is not the user's to change)
    custom = None
    if isinstance(obj, type) and kind != "library":
        custom = class_refusal(obj) or plain_refusal(obj)
    custom = getattr(obj, "__pullback_class_refusal__", None) if static else custom
    if custom is not None:  # a dataclass (records_dataclasses) or a plain class (plain_classes)
        what, fix = custom[0], f"{custom[1]} ({codes.see('PB301')})."
    if failure is not None and "no longer matches" in str(failure):
        what = "a function whose file changed after it was imported"
        fix = "reload its module (importlib.reload) or restart Python."
    return f"call of '{name}', {what}", fix
