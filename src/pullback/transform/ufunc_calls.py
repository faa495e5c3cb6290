"""Calls of ufunc methods written as the NumPy functions that compute them.

A mixin of :class:`~pullback.transform.normalize.Normalizer` (the table is in
:mod:`pullback.ufunc_methods`)::

    np.add.reduce(a, 1)          ->  np.sum(a, axis=1)
    np.multiply.reduce(a)        ->  np.prod(a, axis=0)
    np.add.accumulate(a)         ->  np.cumsum(a, axis=0)
    np.maximum.accumulate(a)     ->  _pb_maximum_accumulate(a, axis=0)  (ufunc_methods.py)
    np.add.reduceat(a, idx)      ->  _pb_add_reduceat(a, idx, axis=0)   (and multiply, maximum,
                                                                         minimum)
    np.subtract.outer(a, b)      ->  np.subtract(np.reshape(a, np.shape(a) + (1,) * np.ndim(b)), b)

A call the table does not cover (``out=``, ``np.logaddexp.reduce``, a ``dtype`` for
``np.maximum.reduce``) is left as it is: without a rule, the transformation refuses it
where a gradient would flow through it.

>>> import numpy as np
>>> from pullback import grad
>>> def pairwise(x):
...     return np.sum(np.subtract.outer(x, x) ** 2) + np.add.reduce(x ** 3)
>>> grad(pairwise)(np.array([1.0, 2.0])).tolist()
[-1.0, 16.0]
"""

from __future__ import annotations

import gast
import numpy as np

from ..resolve import Callee, resolve_call
from ..ufunc_methods import PARAMETERS, rewritten_method
from . import nodes as N
from .star_calls import has_star


class UfuncCalls:
    """A mixin of the Normalizer."""

    def ufunc_method_call(self, e, stmts):
        """The rewritten operation for a call of a ufunc method, or None."""
        if has_star(e) or not isinstance(e.func, gast.Attribute):
            return None
        callee = resolve_call(self.fs, e, self.locals)
        if callee is None or callee.kind != "object":
            return None
        found = rewritten_method(callee.obj)
        if found is None:
            return None
        method, ufunc, target = found
        if method == "outer":
            return self._outer(e, ufunc, stmts)
        bound = dict(zip(PARAMETERS[method], e.args, strict=False))
        for k in e.keywords:
            bound[k.arg] = k.value
        if len(e.args) > len(PARAMETERS[method]) or set(bound) - set(PARAMETERS[method]):
            return None  # not a valid call: Python reports it when it runs
        if "array" not in bound or bound.get("out") is not None:
            return None  # out=: an in-place write, refused as such
        if target in (np.max, np.min) and "dtype" in bound:
            return None
        array = [self.atom(bound.pop("array"), stmts)]
        if method == "reduceat":
            if "indices" not in bound:
                return None
            array.append(self.atom(bound.pop("indices"), stmts))
        bound.setdefault("axis", N.const(0))  # the methods' default, unlike the functions'
        keywords = [gast.keyword(arg=k, value=self.atom(v, stmts)) for k, v in bound.items()]
        return self._numpy_call(target, array, keywords, e)

    def _outer(self, e, ufunc, stmts):
        if len(e.args) != 2:
            return None
        a, b = (self.atom(x, stmts) for x in e.args)
        keywords = [gast.keyword(arg=k.arg, value=self.atom(k.value, stmts)) for k in e.keywords]
        shape = self._temp(self._numpy_call(np.shape, [a], [], e), stmts, e)
        ndim = self._temp(self._numpy_call(np.ndim, [b], [], e), stmts, e)
        ones = self._temp(gast.BinOp(N.tuple_([N.const(1)]), gast.Mult(), ndim), stmts, e)
        grown = self._temp(gast.BinOp(shape, gast.Add(), ones), stmts, e)
        column = self._temp(self._numpy_call(np.reshape, [a, grown], [], e), stmts, e)
        return self._numpy_call(ufunc, [column, b], keywords, e)

    def _numpy_call(self, fn, args, keywords, where):
        if getattr(np, fn.__name__, None) is fn:
            func = N.attr("_np", fn.__name__)
            name = f"numpy.{fn.__name__}"
        else:  # a function of pullback.ufunc_methods (np.maximum.accumulate, ...)
            func = N.load(f"_pb_{fn.__name__}")
            self.namespace[func.id] = fn
            name = f"{fn.__module__}.{fn.__name__}"
        node = gast.copy_location(gast.Call(func=func, args=args, keywords=keywords), where)
        node.pb_callee = Callee("object", fn, name=name)
        return node

    def _temp(self, value, stmts, where):
        name = self.fresh()
        stmts.append(N.assign(name, value, where))
        return N.load(name)
