"""The operators as Python functions pullback transforms (``def add(a, b): return a + b``),
for :mod:`pullback.operator_dispatch`: the reverse of an operator on numbers, arrays or
sequences that the transform could not prove to be such, where the gradient is
differentiated again, is their generated vjp function (``dynamic_vjps.function_vjp``),
which differentiates again in turn.

Their operands are not dispatched a second time (``__pullback_operands_plain__``: the
transform writes their operators inline, as for any value of unknown kind), since the
dispatch found that no user's method computes them.
"""

from __future__ import annotations


def add(a, b):
    return a + b


def sub(a, b):
    return a - b


def mul(a, b):
    return a * b


def truediv(a, b):
    return a / b


def floordiv(a, b):
    return a // b


def mod(a, b):
    return a % b


def pow(a, b):  # noqa: A001 - the operator's name
    return a**b


def matmul(a, b):
    return a @ b


def neg(a):
    return -a


def pos(a):
    return +a


def absolute(a):
    return abs(a)


def getitem(a, index):
    return a[index]


BY_NAME = {
    "__pb_add__": add,
    "__pb_sub__": sub,
    "__pb_mul__": mul,
    "__pb_truediv__": truediv,
    "__pb_floordiv__": floordiv,
    "__pb_mod__": mod,
    "__pb_pow__": pow,
    "__pb_matmul__": matmul,
    "__pb_neg__": neg,
    "__pb_pos__": pos,
    "__pb_abs__": absolute,
    "__pb_getitem__": getitem,
}
for _f in BY_NAME.values():
    _f.__pullback_operands_plain__ = True
