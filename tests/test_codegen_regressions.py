"""Generated code that Python must accept, from programs hypothesis found."""

from __future__ import annotations

import numpy as np

from pullback import grad
from pullback.testing import check_grads


def loop_with_no_reverse_work(x, y):
    pairs = [(x[k], y[k]) for k in range(len(x))]  # noqa: F841 - as generated
    s = 0.0
    a, b = x[0], y[0]
    a, b = b, a * b
    s = s + a - b
    for v0 in x:
        s = s + v0
    return s


def test_a_reverse_loop_whose_body_is_empty_compiles():
    # differentiated in y alone, the loop over x has nothing to do in reverse: its body
    # rendered no line, and Python refused the `for` with no body (IndentationError)
    x, y = np.array([0.5, 1.5, -0.3]), np.array([1.0, 2.0, 0.7])
    # s = y0 - x0 * y0 + sum(x): d/dy0 = 1 - x0
    assert grad(loop_with_no_reverse_work, wrt=1)(x, y).tolist() == [1.0 - 0.5, 0.0, 0.0]
    assert check_grads(loop_with_no_reverse_work, x, y, wrt=(0, 1), order=2) == (
        "reverse over reverse"
    )
