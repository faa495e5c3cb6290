"""Tools to test rules and gradients against finite differences.

* :func:`check_rrule` checks one rule of a registry: the value it computes, the shapes,
  dtypes and values of its cotangents (against central finite differences), that it
  changes neither its arguments nor the incoming cotangent, and that it accepts a
  symbolic ``ZERO`` cotangent.
* :func:`check_grads` checks what :func:`pullback.vjp` computes for a whole function.
* :func:`arrays`, :func:`broadcastable_shapes`, :func:`distinct_arrays` and
  :data:`DOMAINS` are `hypothesis <https://hypothesis.readthedocs.io>`_ strategies for
  inputs inside a function's domain (hypothesis is needed only for these).

>>> import numpy as np
>>> check_rrule(np.tanh, np.linspace(-1.0, 1.0, 5))

How the comparison works
------------------------
For an output cotangent ``dy`` (random, with the structure, shapes and dtypes of the
output) a rule's cotangent ``dx`` must satisfy ``<dx, v> = d/dt <f(x + t v), dy>`` for
every direction ``v``. Both sides are computed for a few random directions per argument;
the right side with a fourth-order central difference in float64 (float32 and complex64
inputs are promoted for the finite differences, so the reference is accurate and the
tolerance only has to absorb the rule's own rounding). Complex values are paired as
``<a, b> = Re(sum(conj(a) * b))``: the cotangent of ``z = u + iw`` is ``dL/du + i dL/dw``.

A mismatch is reported element by element: the worst ``(argument, index, expected, got)``.

Tolerances (``|got - expected| <= atol + rtol * scale`` where ``scale`` is the size of the
terms summed in ``<dx, v>``) are chosen from the lowest precision among the inputs and
outputs, see :data:`TOLERANCES`. float32 is looser because the rule computes in float32:
its cotangents carry about ``1e-7`` relative rounding per operation, more through a
matrix factorization (the shipped rules' largest float32 errors are about a tenth of
the tolerance; float64 ones about a hundredth).
"""

from __future__ import annotations

from .grads_check import check_grads
from .numeric import PRIMAL_RTOL, TOLERANCES, random_like
from .rrule_check import check_rrule
from .second_order import check_rrule_second_order
from .strategies import DOMAINS, arrays, broadcastable_shapes, distinct_arrays

__all__ = [
    "DOMAINS",
    "TOLERANCES",
    "arrays",
    "broadcastable_shapes",
    "check_grads",
    "check_rrule",
    "check_rrule_second_order",
    "distinct_arrays",
    "random_like",
    "PRIMAL_RTOL",
]
