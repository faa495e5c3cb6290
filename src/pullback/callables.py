"""Every kind of callable as the function to differentiate.

pullback transforms Python functions. A bound method, a ``functools.partial``, a callable
object or a static/class method is such a function with some arguments already bound:
:func:`as_bound_call` finds the function and the arguments that go before the user's.

>>> import functools
>>> class Model:
...     def loss(self, x):
...         return x * x
>>> m = Model()
>>> call = as_bound_call(m.loss)
>>> call.target is Model.loss, call.args == (m,)
(True, True)
>>> def f(w, x, scale=1.0):
...     return scale * w * x
>>> p = as_bound_call(functools.partial(f, 2.0, scale=3.0))
>>> p.target is f, p.args, p.kwargs
(True, (2.0,), {'scale': 3.0})
"""

from __future__ import annotations

import functools
import inspect
import types

from .guards import is_library_module_name
from .source import transform_target


def user_method_function(obj):
    """The function of a method bound to an object (not to a module, nor to a class but by
    ``@classmethod``) when that function is user Python code, else ``None``:
    ``model.loss`` is ``Model.loss`` called with ``model`` first, ``Model.create`` its
    function with ``Model`` first."""
    if not isinstance(obj, types.MethodType) or isinstance(obj.__self__, types.ModuleType):
        return None
    fn = obj.__func__
    if isinstance(obj.__self__, type) and not _class_method(obj.__self__, fn):
        return None
    if not isinstance(fn, types.FunctionType):
        return None
    transformable = getattr(fn, "__pullback_transformable__", False)
    if not transformable and is_library_module_name(getattr(fn, "__module__", None) or ""):
        return None
    return fn


def ruled_method(obj, registry):
    """``(function, receiver)`` for a method bound to an object of a library's class whose
    function has a rule (``A.dot`` of a SciPy sparse matrix: ``_spbase.dot`` with ``A``
    first; ``lu.solve`` of a SuperLU object: its method descriptor), else None."""
    receiver = getattr(obj, "__self__", None)
    if receiver is None or isinstance(receiver, (types.ModuleType, type)):
        return None
    if isinstance(obj, types.MethodType):
        fn = obj.__func__
    elif isinstance(obj, types.BuiltinMethodType):
        fn = inspect.getattr_static(type(receiver), obj.__name__, None)
    else:
        return None
    if fn is None or not is_library_module_name(type(receiver).__module__ or ""):
        return None
    try:
        return (fn, receiver) if registry.lookup(fn) is not None else None
    except TypeError:  # unhashable
        return None


def _class_method(cls, fn) -> bool:
    """Whether ``fn`` is a ``@classmethod`` of ``cls`` (or of a base): ``Model.create(w)``
    is ``fn(Model, w)``, the class an ordinary argument."""
    for c in cls.__mro__:
        raw = c.__dict__.get(getattr(fn, "__name__", ""))
        if raw is not None:
            return isinstance(raw, classmethod) and raw.__func__ is fn
    return False


def super_method_function(cls, obj, name: str, receiver: bool = True):
    """The function ``super(cls, obj).name`` calls with ``obj`` first: generated code runs
    ``super().name(x)`` of a method of ``cls`` as ``super_method_function(__class__, self,
    "name")(self, x)``, so that ``self`` (a record whose fields carry a gradient) is an
    argument of the parent's method and gets its cotangent (transform/free_values.py).
    Without ``receiver`` (a static or class method), the attribute as ``super`` finds it,
    called without ``self``."""
    found = getattr(super(cls, obj), name)
    if not receiver:
        return found
    if not (isinstance(found, types.MethodType) and found.__self__ is obj):
        from .errors import UnsupportedCallError

        raise UnsupportedCallError(
            f"super().{name} of '{cls.__name__}' is no method of the object here "
            f"('{type(found).__name__}'). Fix: call the parent's method by its class, "
            f"`Parent.{name}(self, ...)`."
        )
    return found.__func__


class BoundCall:
    """``target(*args, *user_args, **{**kwargs, **user_kwargs})`` is the call. (A plain
    class, not a dataclass: dataclasses cost about half a millisecond each at import.)"""

    __slots__ = ("target", "args", "kwargs")

    def __init__(self, target: types.FunctionType, args: tuple = (), kwargs: dict | None = None):
        self.target = target
        self.args = args
        self.kwargs = {} if kwargs is None else kwargs

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.target, self.args, self.kwargs) == (other.target, other.args, other.kwargs)

    def __hash__(self):
        return hash((self.target, self.args, self.kwargs))

    def __repr__(self) -> str:
        return f"BoundCall(target={self.target!r}, args={self.args!r}, kwargs={self.kwargs!r})"

    @property
    def is_plain(self) -> bool:
        return not self.args and not self.kwargs

    def arguments(self, args, kwargs):
        """The target's arguments for a call of the callable with ``args, kwargs``."""
        if self.is_plain:
            return args, kwargs
        return self.args + tuple(args), {**self.kwargs, **kwargs}


def as_bound_call(fn, _depth: int = 0) -> BoundCall | None:
    """The Python function behind ``fn`` and its bound arguments, or ``None`` when there
    is no Python function to transform (a builtin, a C function)."""
    if _depth > 16:
        return None
    fn = transform_target(fn)
    if isinstance(fn, types.FunctionType):
        return BoundCall(fn)
    if isinstance(fn, (staticmethod, classmethod)) and not isinstance(fn, type):
        inner = fn.__func__
        return as_bound_call(inner, _depth + 1) if isinstance(fn, staticmethod) else None
    if isinstance(fn, types.MethodType):
        inner = as_bound_call(fn.__func__, _depth + 1)
        if inner is None:
            return None
        return BoundCall(inner.target, inner.args + (fn.__self__,), inner.kwargs)
    if isinstance(fn, functools.partial):
        inner = as_bound_call(fn.func, _depth + 1)
        if inner is None:
            return None
        return BoundCall(inner.target, inner.args + fn.args, {**inner.kwargs, **fn.keywords})
    if type(fn).__module__.split(".", 1)[0] == "pullback":
        return None  # grad(f), jacobian(f), ...: differentiated through their own paths
    call = type(fn).__dict__.get("__call__") if callable(fn) else None
    for klass in type(fn).__mro__[1:] if call is None and callable(fn) else ():
        call = klass.__dict__.get("__call__")
        if call is not None:
            break
    if isinstance(call, types.FunctionType) and not isinstance(fn, type):
        inner = as_bound_call(call, _depth + 1)
        if inner is None:
            return None
        return BoundCall(inner.target, inner.args + (fn,), inner.kwargs)
    return None


def call_method_of(obj, registry=None):
    """For a callable object whose class defines ``__call__`` in Python (a layer, a loss,
    an objective), the bound method ``obj.__call__``, which Python calls for ``obj(...)``
    (and pullback transforms with ``obj`` its first argument); ``obj`` itself otherwise."""
    if isinstance(obj, (types.FunctionType, types.MethodType, type, functools.partial)):
        return obj
    if not callable(obj) or (registry is not None and registry.lookup(obj) is not None):
        return obj
    module = type(obj).__module__ or ""
    if module.split(".", 1)[0] in ("pullback", "builtins") or is_library_module_name(module):
        return obj  # grad(f) objects have their own paths; library classes are not ours
    method = inspect.getattr_static(type(obj), "__call__", None)
    if isinstance(method, types.FunctionType) and library_call_function(obj) is None:
        return obj.__call__
    return obj  # a subclass keeping a library's __call__ (np.vectorize) calls its rule


def library_call_function(obj):
    """``type(obj).__call__`` when ``obj`` is an instance of a class whose ``__call__`` is
    a library's Python function (a ``np.vectorize`` object, or of a subclass): Python calls that
    function with ``obj`` first for ``obj(...)``, so a rule registered for it (the rule of
    ``np.vectorize.__call__``) is the rule of the call. None for anything else.

    >>> import numpy as np
    >>> library_call_function(np.vectorize(abs)) is np.vectorize.__call__
    True
    >>> library_call_function(np.sin) is None   # a ufunc: its __call__ is C code
    True
    """
    if isinstance(obj, (type, types.FunctionType, types.MethodType, functools.partial)):
        return None
    method = inspect.getattr_static(type(obj), "__call__", None)
    if not isinstance(method, types.FunctionType):
        return None
    module = getattr(method, "__module__", None) or ""
    if module.split(".", 1)[0] == "pullback" or not is_library_module_name(module):
        return None  # grad(f) objects have their own paths; user classes are transformed
    return method


def rule_call_function(obj, registry):
    """``type(obj).__call__`` (see :func:`library_call_function`) when ``obj`` has no rule
    of its own (a distribution generator such as ``scipy.stats.norm`` has one): ``obj(...)``
    is then the call of that function with ``obj`` first, differentiated by its rule or
    refused by its name (the name a user registers a rule for). Else None."""
    method = library_call_function(obj)
    if method is None or registry is None or registry.lookup(obj) is not None:
        return None
    return method
