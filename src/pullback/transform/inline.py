"""Inline derivative forms for hot elementwise functions.

The reverse sweep writes ``dx = dy * <form>`` straight into the adjoint instead of calling
the rule's derivative function, so a scalar loop pays no Python call per operation.
In a form, ``{y}`` is the function's result and ``{0}``, ``{1}`` its arguments; ``_math``
and ``_np`` are the math and numpy modules.
"""

from __future__ import annotations

import math

import numpy as np

INLINE_DERIVATIVES = {
    math.sin: "_math.cos({0})",
    math.cos: "-_math.sin({0})",
    math.tan: "(1.0 + {y} * {y})",
    math.exp: "{y}",
    math.log: "(1.0 / {0})",
    math.sqrt: "(0.5 / {y})",
    math.tanh: "(1.0 - {y} * {y})",
    math.sinh: "_math.cosh({0})",
    math.cosh: "_math.sinh({0})",
    math.atan: "(1.0 / (1.0 + {0} * {0}))",
    np.sin: "_np.cos({0})",
    np.cos: "-_np.sin({0})",
    np.tan: "(1.0 + {y} * {y})",
    np.exp: "{y}",
    np.log: "(1.0 / {0})",
    np.sqrt: "(0.5 / {y})",
    np.tanh: "(1.0 - {y} * {y})",
    np.sinh: "_np.cosh({0})",
    np.cosh: "_np.sinh({0})",
    np.square: "(2.0 * {0})",
    np.negative: "-1.0",
}


def inline_form(rule):
    """The inline derivative form of a one-argument scalar rule, or None."""
    form = getattr(rule, "inline", None)
    if form:
        return form
    try:
        return INLINE_DERIVATIVES.get(rule.fn)
    except TypeError:
        return None
