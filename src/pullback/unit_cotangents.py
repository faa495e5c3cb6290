"""Products by a cotangent of ones that hand out the other factor instead of a new array.

The gradient of ``np.sum(f(x) * g(x))`` starts from the cotangent of the sum: the seed
``1.0`` broadcast to the shape of the summed array (``np.broadcast_to``, every stride 0,
no memory). Each factor of the product then gets ``ones * other``: a new array as large
as ``x`` that equals ``other`` bit for bit, since ``1.0 * v == v`` for every real
floating ``v`` (zeros of either sign, infinities and NaNs included). On a large array that
product is the third full-size array alive at the gradient's peak.

:func:`unit_times` and :func:`times_unit` compute ``u * v`` and ``v * u`` — and return
``v`` itself when the result is provably ``v``: ``u`` is a real array whose strides are all
0 (so one element stands for all) holding 1, of ``v``'s shape and dtype, and ``v`` is a
real floating array. A filled array of ones or a broadcast of another value is multiplied
as before. The returned ``v`` is an alias: the code generator calls these only where the
result is then only read (``transform/unit_products.py``), never written into, returned
or stored.

>>> v = np.array([-0.0, 2.5, np.inf])
>>> unit_times(np.broadcast_to(1.0, (3,)), v) is v
True
>>> times_unit(v, np.broadcast_to(2.0, (3,)))
array([-0.,  5., inf])
>>> unit_times(np.broadcast_to(np.float32(1.0), (3,)), v) is v  # float64 result: a product
False
"""

from __future__ import annotations

import numpy as np

ndarray = _ndarray = np.ndarray  # ``_pb_ndarray`` in generated code (unit_products.py)


def _is_unit_of(u, v) -> bool:
    """Whether ``u * v`` is ``v`` exactly (see the module docstring)."""
    return (
        type(u) is _ndarray
        and not any(u.strides)  # first: a filled array (a short vector's) fails here
        and type(v) is _ndarray
        and u.dtype is v.dtype
        and v.dtype.kind == "f"
        and u.shape == v.shape
        and u.size != 0
        and u.item(0) == 1.0
    )


def unit_times(u, v):
    """``u * v``, or ``v`` itself where ``u`` is a broadcast 1 of ``v``'s shape and dtype."""
    if _is_unit_of(u, v):
        return v
    return u * v


def times_unit(v, u):
    """``v * u``, or ``v`` itself where ``u`` is a broadcast 1 of ``v``'s shape and dtype."""
    if _is_unit_of(u, v):
        return v
    return v * u
