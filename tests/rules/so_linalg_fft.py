"""Second-order cases: numpy.linalg and numpy.fft (see second_order_table.py)."""

from __future__ import annotations

import numpy as np
from rule_inputs import make, make_complex, spd, well_conditioned
from second_order_table import case

X = make("real", (4, 6))
V = make("real", (6,), seed=1)
Z = make_complex((4, 6), seed=2)
ZV = make_complex((5,), seed=3)

# -- fft: every transform, with n/s padding and truncation, norms, real and complex ------
for _name in ("fft", "ifft"):
    case(f"numpy.fft.{_name}", V)
    case(f"numpy.fft.{_name}", Z, 8, 0, "ortho")
    case(f"numpy.fft.{_name}", ZV, 3, norm="forward")
for _name in ("fft2", "ifft2", "fftn", "ifftn"):
    case(f"numpy.fft.{_name}", X)
    case(f"numpy.fft.{_name}", Z, (3, 8), norm="ortho")
case("numpy.fft.fftn", Z, axes=(1,))
for _name in ("rfft",):
    case(f"numpy.fft.{_name}", V)
    case(f"numpy.fft.{_name}", X, 5, 0, "ortho")
    case(f"numpy.fft.{_name}", X, 8, norm="forward")
for _name in ("rfft2", "rfftn"):
    case(f"numpy.fft.{_name}", X)
    case(f"numpy.fft.{_name}", X, (3, 5), norm="ortho")
case("numpy.fft.irfft", ZV)
case("numpy.fft.irfft", Z, 7, 0, "ortho")
case("numpy.fft.irfft", ZV, 6, norm="forward")
case("numpy.fft.irfft2", Z)
case("numpy.fft.irfftn", Z, (3, 9), norm="ortho")
case("numpy.fft.irfftn", Z)
case("numpy.fft.hfft", ZV)
case("numpy.fft.hfft", Z, 7, 0, "ortho")
case("numpy.fft.ihfft", V)
case("numpy.fft.ihfft", X, 8, norm="forward")
case("numpy.fft.fftshift", X)
case("numpy.fft.fftshift", Z, axes=1)
case("numpy.fft.ifftshift", X, 0)

# -- linalg ----------------------------------------------------------------------------
W3 = well_conditioned((3, 3), seed=4)
W23 = well_conditioned((2, 3, 3), seed=5)
S3 = spd(3, seed=6)
S23 = spd(3, seed=7, batch=(2,))
T43 = well_conditioned((4, 3), seed=8)
T34 = well_conditioned((3, 4), seed=9)
case("numpy.linalg.inv", W3)
case("numpy.linalg.inv", W23)
case("numpy.linalg.det", W3)
case("numpy.linalg.solve", W3, V[:3])
case("numpy.linalg.solve", W3, X[:3, :2])
# stacks of systems: matrices, vectors, and a matrix or a stack broadcast against the other
W23 = np.stack([W3, W3.T + 0.5 * np.eye(3)])
case("numpy.linalg.solve", W23, X[:, :3].reshape(2, 3, 2))
case("numpy.linalg.solve", W23, V[:3])
case("numpy.linalg.solve", W23, X[:3, :2])
case("numpy.linalg.solve", W3, X[:, :3].reshape(2, 3, 2))
case("numpy.linalg.slogdet", W3)
case("numpy.linalg.slogdet", W23)
case("numpy.linalg.pinv", T43)
case("numpy.linalg.pinv", T34)
case("numpy.linalg.matrix_power", W3 * 0.7, 3)
case("numpy.linalg.matrix_power", W3, -2)
case("numpy.linalg.matrix_power", W3, 1)
case("numpy.linalg.cholesky", S3)
case("numpy.linalg.cholesky", S23)
case("numpy.linalg.cholesky", S3, upper=True)
case("numpy.linalg.eigh", S3)
case("numpy.linalg.eigh", S23, "U")
case("numpy.linalg.eigvalsh", S3)
case("numpy.linalg.eigvalsh", S23, UPLO="U")
case("numpy.linalg.svd", W3)
case("numpy.linalg.svd", T43, False)
case("numpy.linalg.svd", T34, full_matrices=False)
case("numpy.linalg.svd", T43, compute_uv=False)
case("numpy.linalg.svdvals", T34)
case("numpy.linalg.qr", T43)
case("numpy.linalg.qr", W3, "r")
case("numpy.linalg.qr", W23)
case("numpy.linalg.norm", X)
case("numpy.linalg.norm", X, None, 1)  # the rows' lengths
case("numpy.linalg.norm", X, axis=0, keepdims=True)
for _ord in (1, np.inf, -np.inf):  # largest/smallest (sums of) absolute values
    case("numpy.linalg.norm", V, ord=_ord)
    case("numpy.linalg.norm", X, _ord)
case("numpy.linalg.norm", X, ord=-1)
# p-norms of vectors and along an axis, Frobenius over chosen axes, complex and kept sums
for _ord in (3, 0.5, -2, np.inf):
    case("numpy.linalg.norm", V, _ord)
    case("numpy.linalg.norm", X, _ord, 1, True)
case("numpy.linalg.norm", Z, 1.5, 0)
case("numpy.linalg.norm", Z, np.inf)
case("numpy.linalg.norm", X, -np.inf, keepdims=True)
case("numpy.linalg.norm", X, "fro")
case("numpy.linalg.norm", make("real", (2, 3, 4), seed=5), "fro", (0, 2))
case("numpy.linalg.norm", X, keepdims=True)
# eig/eigvals: real eigenvalues, and a real matrix with a complex pair (a real loss of the
# complex results); lstsq tall (with residuals) and wide, vector and matrix right sides
ROT = np.array([[0.3, -1.2, 0.1], [1.1, 0.2, 0.4], [0.2, 0.5, 0.9]])
REAL_EIG = np.array([[2.0, 0.3, 0.1], [0.2, 1.0, 0.4], [0.1, 0.5, -0.5]])
case("numpy.linalg.eig", REAL_EIG)
case("numpy.linalg.eig", ROT)
case("numpy.linalg.eigvals", REAL_EIG)
case("numpy.linalg.eigvals", ROT)
case("numpy.linalg.lstsq", T43, V[:4])
case("numpy.linalg.lstsq", T43, X[:, :2])
case("numpy.linalg.lstsq", T34, V[:3], None)
M6 = well_conditioned((6, 6), seed=11).reshape(2, 3, 6)
case("numpy.linalg.tensorsolve", M6, X[:2, :3])
case("numpy.linalg.tensorsolve", np.moveaxis(M6, 2, 0), X[:2, :3], (0,))  # axes

# -- vector_norm / matrix_norm (transformable but for "nuc", 2, -2 of a complex matrix) ------
case("numpy.linalg.vector_norm", V)
case("numpy.linalg.vector_norm", X, axis=1)
case("numpy.linalg.vector_norm", X, axis=(0, 1), keepdims=True)
for _ord in (1, 3, -1, np.inf, -np.inf):
    case("numpy.linalg.vector_norm", V, ord=_ord)
case("numpy.linalg.vector_norm", X, axis=0, keepdims=True, ord=1.5)
case("numpy.linalg.vector_norm", Z, axis=1, ord=3)
# ord=0 counts the nonzero entries: piecewise constant, so the second derivative is 0
case("numpy.linalg.vector_norm", V * np.sum(V * V), ord=0)
case("numpy.linalg.matrix_norm", X)
case("numpy.linalg.matrix_norm", make("real", (2, 3, 4), seed=5), keepdims=True)
# (column and row sums kept apart, so that the check's steps cross no kink)
MN = make("real", (2, 3, 4), seed=5) + np.arange(4.0) + 0.7 * np.arange(3.0)[:, None]
for _ord in (1, -1, np.inf, -np.inf):
    case("numpy.linalg.matrix_norm", MN, ord=_ord)
case("numpy.linalg.matrix_norm", MN[0] + 0.5j * make("real", (3, 4), seed=6), keepdims=True, ord=1)
# by the singular values: their sum, the largest, the smallest
case("numpy.linalg.matrix_norm", T43, ord="nuc")
case("numpy.linalg.matrix_norm", MN[1], ord=2, keepdims=True)  # (Dask: 2-D svd only)
case("numpy.linalg.matrix_norm", T34, ord=-2)
