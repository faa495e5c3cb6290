"""Second-order cases for the rules of ``array_api_strict`` (``pullback.rules.array_api``):
the inputs at which reverse over reverse through each rule's transformable pullback is
checked (tests/test_array_api.py runs them against finite differences of the gradient).

Inputs are ``array_api_strict`` arrays; nothing is registered where it is not installed.
"""

from __future__ import annotations

import numpy as np
from second_order_table import case

try:
    import array_api_strict as xp
except ImportError:  # pragma: no cover - the array-API tests skip
    xp = None

if xp is not None:
    _rng = np.random.default_rng(3)
    X = xp.asarray(np.array([[0.3, 0.7, 1.2], [0.5, 0.9, 1.1]]))  # inside every domain
    Y = xp.asarray(np.array([1.4, 0.6, 0.8]))
    H = xp.asarray(np.array([[0.3, 0.4, 0.2], [0.1, 0.45, 0.35]]))  # |x| < 1
    M = xp.asarray(np.array([[2.0, 0.3, 0.1], [0.3, 1.5, 0.2], [0.1, 0.2, 1.8]]))
    B = xp.asarray(_rng.normal(size=(3, 2)))
    P = xp.asarray(np.array([[0.9, -0.4, 1.3], [0.2, 1.1, -0.7]]))  # no ties
    N = "array_api_strict."

    for name in "sin cos tan exp expm1 log log1p log2 log10 sqrt tanh sinh cosh atan".split():
        case(N + name, X)
    for name in "asin acos atanh".split():
        case(N + name, H)
    case(N + "acosh", X + 1.0)
    case(N + "asinh", P)
    for name in "negative positive abs square reciprocal conj".split():
        case(N + name, P)
    for name in "add subtract multiply divide pow maximum minimum atan2 hypot logaddexp".split():
        case(N + name, X, Y)  # (2, 3) with (3,): broadcasting
    for name in "sum mean prod max min".split():
        case(N + name, P)
        case(N + name, P, axis=1, keepdims=True)
    case(N + "std", X, axis=0)
    case(N + "var", X, correction=1.0)
    case(N + "cumulative_sum", X, axis=1)
    case(N + "cumulative_sum", X, axis=0, include_initial=True)
    case(N + "matmul", X, M)
    case(N + "matmul", X, Y)
    case(N + "matrix_transpose", X)
    case(N + "reshape", X, (3, 2))
    case(N + "broadcast_to", Y, (2, 3))
    case(N + "expand_dims", X, axis=1)
    case(N + "squeeze", xp.reshape(Y, (1, 3)), 0)
    case(N + "permute_dims", X, (1, 0))
    case(N + "astype", X, xp.float64)
    case(N + "tril", M, k=-1)
    case(N + "triu", M)
    case(N + "where", X > 0.6, X, P)
    case(N + "clip", P, min=-0.5, max=1.0)
    case(N + "concat", [X, P], axis=0)
    case(N + "stack", [X, P], axis=1)
    case(N + "flip", X, axis=1)
    case(N + "roll", X, 1, axis=1)
    case(N + "take", X, xp.asarray([2, 0, 2]), axis=1)
    case(N + "sort", P, axis=1)
    case(N + "linalg.inv", M)
    case(N + "linalg.det", M)
    case(N + "linalg.solve", M, B)
    case(N + "linalg.solve", M, Y)
    case(N + "linalg.cholesky", M)
    case(N + "linalg.vector_norm", P)
    case(N + "linalg.vector_norm", P, axis=1)
    case(N + "linalg.matrix_norm", M)
    case(N + "linalg.trace", M)
    case(N + "linalg.vecdot", X, P)
    case(N + "linalg.outer", Y, Y)
    case(N + "linalg.matmul", X, M)
    case(N + "linalg.matrix_transpose", X)
    Z = xp.astype(X, xp.complex128)  # the standard's FFTs take complex arrays
    case(N + "fft.fft", Z)
    case(N + "fft.ifft", Z, axis=0)
    case(N + "real", Z)
    case(N + "imag", Z * (1.0 + 0.5j))
