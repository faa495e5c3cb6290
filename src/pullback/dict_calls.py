"""``dict(a=x, b=y)`` and ``dict({...}, k=v)`` as the dict displays they equal, decided in
one place for the check and the transform.

Keyword arguments of calls are never differentiated (a rule's pullback returns one
cotangent per positional argument), so ``dict(a=x)`` would hide ``x``'s gradient. Python
builds exactly what a display builds, in the same order, with the same winner among
repeated keys::

    dict(a=x, b=y)          ==  {"a": x, "b": y}
    dict({"a": x}, b=y)     ==  {"a": x, "b": y}

and a display is a local dict whose entries carry their cotangents. ``dict(m)`` of a
mapping or of pairs held in a name, and ``dict(**opts)``, are left as written.

>>> import builtins, gast
>>> call = gast.parse("dict({'a': u}, b=v)").body[0].value
>>> class Callee:
...     kind = "object"
...     obj = builtins.dict
>>> display = dict_display(call, lambda c: Callee())
>>> gast.unparse(display).strip()
"{'a': u, 'b': v}"
"""

from __future__ import annotations

import builtins

import gast


def dict_display(call, resolve):
    """The ``gast.Dict`` that ``call`` (a call of ``dict`` with keywords, or with a dict
    display and keywords) builds, located at the call; None for any other call."""
    if not isinstance(call, gast.Call) or len(call.args) > 1:
        return None
    if not call.keywords or any(k.arg is None for k in call.keywords):
        return None  # dict() already runs; dict(**opts) is left as written
    if call.args and not isinstance(call.args[0], gast.Dict):
        return None
    callee = resolve(call)
    if callee.kind != "object" or callee.obj is not builtins.dict:
        return None
    keys = list(call.args[0].keys) if call.args else []
    values = list(call.args[0].values) if call.args else []
    for kw in call.keywords:
        keys.append(gast.copy_location(gast.Constant(value=kw.arg, kind=None), kw.value))
        values.append(kw.value)
    return gast.copy_location(gast.Dict(keys=keys, values=values), call)


def constant_getattr(call, resolve):
    """``obj.name`` (a ``gast.Attribute`` located at the call) for ``getattr(obj, "name")``
    with a constant identifier and no default, which reads exactly that attribute; None
    for any other call. The check and the normalizer both rewrite it so (the attribute
    read, a method call ``getattr(m, "f")(x)`` as ``m.f(x)``, is then followed as
    written)."""
    if not isinstance(call, gast.Call) or call.keywords or len(call.args) != 2:
        return None
    obj, name = call.args
    if isinstance(obj, gast.Starred) or not isinstance(name, gast.Constant):
        return None
    if not isinstance(name.value, str) or not name.value.isidentifier():
        return None
    if not isinstance(call.func, gast.Name):
        return None
    callee = resolve(call)
    if callee is None or callee.kind != "object" or callee.obj is not builtins.getattr:
        return None
    return gast.copy_location(gast.Attribute(value=obj, attr=name.value, ctx=gast.Load()), call)


def with_getattr_rewritten(call, resolve):
    """``call`` with a constant ``getattr`` as its function made the attribute
    (``getattr(m, "f")(x)`` is ``m.f(x)``), or ``call`` itself."""
    if not isinstance(call, gast.Call):
        return call
    attribute = constant_getattr(call.func, resolve)
    if attribute is None:
        return call
    return gast.copy_location(
        gast.Call(func=attribute, args=call.args, keywords=call.keywords), call
    )
