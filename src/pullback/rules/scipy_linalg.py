"""scipy.linalg: linear solves and structured matrices.

``solve`` (every ``assume_a``, ``lower``, ``transposed``), ``solve_triangular``, ``inv``,
``det``, ``solve_banded``, ``solve_sylvester``, ``lstsq``, ``pinv``, ``block_diag`` and
``toeplitz``. The factorizations live in ``scipy_linalg_decomp`` and the matrix functions
in ``scipy_linalg_matfuncs``; the helpers they share are here.

Conventions:

* The cotangent is the derivative of what SciPy computes: a solver that reads one triangle
  (``assume_a='pos'`` reads the upper one unless ``lower=True``), the diagonal or three
  diagonals of its matrix gives a cotangent on exactly those entries.
* Real matrices only (``block_diag`` takes any); a complex one is refused when the rule
  runs (the forward call), with the fix, as is every other case without a derivative (a
  rank-deficient ``lstsq`` or ``pinv``, ``toeplitz``'s ``r`` given by keyword...).
* Stacks of matrices are supported wherever SciPy supports them; a 1-D ``b`` is a vector.
* Where the pullback is written with operations pullback differentiates, it is given as a
  transformable function, so second derivatives run through it (solve, solve_triangular,
  inv, det, solve_sylvester, pinv, toeplitz). Such a pullback takes the primal arguments, not
  the output, so it solves or factorizes again: a first derivative pays the primal's
  factorization twice.
"""

from __future__ import annotations

import numpy as np

from ..errors import ArgumentError
from ..registry import transformable
from ..tangents import unbroadcast
from ._util import NO_TANGENT, ZERO, Registrar, bind, densify, dy_parts, finalize, zeros_for
from .linalg import _pinv_grad
from .linalg_pullbacks import lstsq_grad

FAMILY = "scipy_linalg"
REQUIRES = "scipy.linalg"

# scipy.linalg, bound by register(): the transformable pullbacks call it, and this module
# must not import SciPy when pullback itself is imported.
sl = None


def load_scipy():
    """Bind ``sl`` to scipy.linalg for the pullbacks of this module and its siblings."""
    global sl
    import scipy.linalg

    sl = scipy.linalg
    return scipy.linalg


def refuse(name, what, fix):
    """Raise the error for a call whose derivative pullback does not give (``name`` is
    the function's name in scipy.linalg, or a dotted name elsewhere)."""
    where = name if "." in name else f"scipy.linalg.{name}"
    raise ArgumentError(f"pullback cannot differentiate {where}: {what}.\n    Fix: {fix}")


_COMPLEX_FIX = (
    "differentiate the real and imaginary parts as separate real arrays, or use numpy.linalg, "
    "whose inv, solve and det rules accept complex matrices"
)


def real_only(name, *arrays, what="matrices", fix=_COMPLEX_FIX):
    """Refuse complex arguments (the rules are written for real values)."""
    for a in arrays:
        if np.iscomplexobj(a):
            refuse(name, f"its rule supports real {what} only, and an argument is complex", fix)


def square(name, a):
    """Refuse an argument that is not a square matrix (or a stack of them)."""
    shape = np.shape(a)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        refuse(name, f"it needs a square matrix, got shape {shape}", "pass an (..., n, n) array")


@transformable
def mT(x):
    """The transpose of the last two axes (of a matrix or a stack of them)."""
    return np.swapaxes(x, -1, -2)


@transformable
def diag_part(x):
    """``x`` with everything off its diagonal set to 0."""
    return x * np.eye(np.shape(x)[-1], dtype=x.dtype)


@transformable
def on_triangle(g, lower):
    """The cotangent of a symmetric matrix read from one triangle, from the gradient ``g``
    of its full form: an entry off the diagonal stands for itself and its mirror."""
    full = g + mT(g)
    tri = np.tril(full) if lower else np.triu(full)
    return tri - diag_part(g)


# How each assume_a reads its matrix: the full matrix, the diagonal, three diagonals, a
# triangle, or a symmetric matrix from a triangle ('banded' detects its band from the
# values, so it reads every entry).
_READS = {
    None: "full",
    "gen": "full",
    "general": "full",
    "banded": "full",
    "diagonal": "diagonal",
    "tridiagonal": "tridiagonal",
    "upper triangular": "upper",
    "lower triangular": "lower",
    "sym": "symmetric",
    "symmetric": "symmetric",
    "her": "symmetric",
    "hermitian": "symmetric",
    "pos": "symmetric",
    "positive definite": "symmetric",
}


def reads(name, assume_a, allowed=tuple(_READS)):
    if assume_a not in allowed:
        refuse(name, f"assume_a={assume_a!r} has no rule", f"use one of {allowed[1:]}")
    return _READS[assume_a]


@transformable
def project(g, kind, lower):
    """The cotangent of the matrix argument from the gradient ``g`` of the matrix the
    solver uses, for each way of reading it (see ``_READS``)."""
    if kind == "full":
        return g
    if kind == "diagonal":
        return diag_part(g)
    if kind == "tridiagonal":
        return np.triu(np.tril(g, 1), -1)
    if kind == "upper":
        return np.triu(g)
    if kind == "lower":
        return np.tril(g)
    return on_triangle(g, lower)


@transformable
def columns(v, b):
    """``v`` with a trailing axis of 1 when ``b`` is a vector (a 1-D right-hand side)."""
    if np.ndim(b) == 1:
        return v[..., None]
    return v


@transformable
def uncolumns(v, b):
    """The inverse of :func:`columns`."""
    if np.ndim(b) == 1:
        return v[..., 0]
    return v


@transformable
def solve_matrix_cotangent(db, x, transposed):
    """The cotangent of A for ``x = A^-1 b`` (``A^-T b`` when ``transposed``), from ``db``
    (the cotangent of b) and ``x``, both with columns."""
    if transposed:
        return -(x @ mT(db))
    return -(db @ mT(x))


# -- solve ---------------------------------------------------------------------------------
_SOLVE = ("lower", "overwrite_a", "overwrite_b", "check_finite", "assume_a", "transposed")
_SOLVE_DEFAULTS = (False, False, False, True, None, False)


@transformable
def solve_pullback(
    dy,
    a,
    b,
    lower=False,
    overwrite_a=False,
    overwrite_b=False,
    check_finite=True,
    assume_a=None,
    transposed=False,
):
    x = columns(sl.solve(a, b, lower=lower, assume_a=assume_a, transposed=transposed), b)
    back = not transposed
    db = sl.solve(a, columns(dy, b), lower=lower, assume_a=assume_a, transposed=back)
    da = project(solve_matrix_cotangent(db, x, transposed), _READS[assume_a], lower)
    return unbroadcast(da, a), unbroadcast(uncolumns(db, b), b)


def _solve_check(a, b, *args, **kwargs):
    p = bind(args, kwargs, _SOLVE, _SOLVE_DEFAULTS, name="scipy.linalg.solve")
    real_only("solve", a, b)
    reads("solve", p["assume_a"])


# -- solve_triangular ----------------------------------------------------------------------
@transformable
def transposes(trans):
    """Whether solve_triangular's ``trans`` solves with the transpose."""
    return trans in (1, 2, "T", "C")


@transformable
def solve_triangular_pullback(
    dy, a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, check_finite=True
):
    unit = unit_diagonal
    x = columns(sl.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit), b)
    back = 0 if transposes(trans) else 1
    db = sl.solve_triangular(a, columns(dy, b), trans=back, lower=lower, unit_diagonal=unit)
    da = solve_matrix_cotangent(db, x, transposes(trans))
    k = 0
    if unit_diagonal:  # the diagonal is taken as 1 and never read
        k = 1
    da = np.tril(da, -k) if lower else np.triu(da, k)
    return unbroadcast(da, a), unbroadcast(uncolumns(db, b), b)


def _solve_triangular_check(a, b, *args, **kwargs):
    real_only("solve_triangular", a, b)


# -- inv and det ---------------------------------------------------------------------------
# inv has no 'diagonal', 'tridiagonal' or 'banded' reading
_INV_READS = tuple(k for k in _READS if k not in ("diagonal", "tridiagonal", "banded"))


@transformable
def inv_pullback(dy, a, overwrite_a=False, check_finite=True, assume_a=None, lower=False):
    # SciPy < 1.17 has no assume_a/lower: pass them only when the call did.
    plain = assume_a is None and not lower
    yt = mT(sl.inv(a) if plain else sl.inv(a, assume_a=assume_a, lower=lower))
    return (project(-(yt @ dy @ yt), _READS[assume_a], lower),)


def _inv_check(a, *args, assume_a=None, **kwargs):
    real_only("inv", a)
    reads("inv", assume_a, _INV_READS)


@transformable
def det_pullback(dy, a, overwrite_a=False, check_finite=True):
    # d det(a) = det(a) tr(inv(a) da)
    d = sl.det(a)
    scale = np.reshape(dy * d, np.shape(d) + (1, 1))
    return (scale * mT(sl.inv(a)),)


def _det_check(a, *args, **kwargs):
    real_only("det", a)
    square("det", a)


# -- solve_sylvester -----------------------------------------------------------------------
@transformable
def solve_sylvester_pullback(dy, a, b, q):
    # A X + X B = Q. With Z solving A^T Z + Z B^T = dy: dQ = Z, dA = -Z X^T, dB = -X^T Z.
    x = sl.solve_sylvester(a, b, q)
    z = sl.solve_sylvester(mT(a), mT(b), dy)
    return -(z @ mT(x)), -(mT(x) @ z), z


def _solve_sylvester_check(a, b, q):
    real_only("solve_sylvester", a, b, q)


# -- solve_banded --------------------------------------------------------------------------
def _solve_banded_check(l_and_u, ab, b, *args, **kwargs):
    real_only("solve_banded", ab, b)


@transformable
def band_transpose(ab, lo, up):
    """The band storage of A^T from that of A (A has ``lo`` sub- and ``up`` super-diagonals):
    ``abT[k, j] = ab[up + lo - k, j + k - lo]``, zero outside the matrix."""
    n = np.shape(ab)[-1]
    rows = ()
    for k in range(lo + up + 1):
        shift = k - lo
        src = ab[up + lo - k]
        if shift >= 0:
            rows = rows + (np.concatenate([src[shift:], np.zeros(min(shift, n))]),)
        else:
            rows = rows + (np.concatenate([np.zeros(min(-shift, n)), src[: max(n + shift, 0)]]),)
    return np.stack(rows)


@transformable
def solve_banded_pullback(
    dy, l_and_u, ab, b, overwrite_ab=False, overwrite_b=False, check_finite=True
):
    lo = l_and_u[0]
    up = l_and_u[1]
    x = sl.solve_banded(l_and_u, ab, b)
    db = sl.solve_banded((up, lo), band_transpose(ab, lo, up), dy)
    # dA[i, j] = -sum_k db[i, k] x[j, k], kept on the band: ab[up + i - j, j] = A[i, j]
    n = np.shape(ab)[-1]
    dbm = np.reshape(db, (n, -1))
    xm = np.reshape(x, (n, -1))
    rows = ()
    for r in range(lo + up + 1):
        d = r - up  # i = j + d
        first = min(max(0, -d), n)
        last = max(min(n, n - d), first)
        inside = -np.sum(dbm[first + d : last + d] * xm[first:last], axis=-1)
        rows = rows + (np.concatenate([np.zeros(first), inside, np.zeros(n - last)]),)
    return NO_TANGENT, np.stack(rows), db


# -- lstsq and pinv ------------------------------------------------------------------------
def lstsq_refusals(a, b, cond=None):
    """Refuse what lstsq's rule does not differentiate: complex values, a stack, a rank
    deficient ``a``."""
    real_only("lstsq", a, b)
    if np.ndim(a) != 2:
        refuse("lstsq", "its rule is for one matrix", "call it once per matrix of the stack")
    rank = sl.lstsq(a, b, cond=cond)[2]
    if rank < min(np.shape(a)):
        refuse(
            "lstsq",
            f"a has rank {rank} < {min(np.shape(a))}: the solution is not differentiable there",
            "regularize the problem (e.g. solve (A^T A + eps I) x = A^T b)",
        )


# A check: transformed code (a second derivative) calls it as it is.
lstsq_refusals.__pullback_opaque__ = True


# lstsq's options that do not change its value (the LAPACK driver only picks a method).
_LSTSQ_KNOWN = ("overwrite_a", "overwrite_b", "check_finite", "lapack_driver")


def _lstsq_rrule(a, b, *args, **kwargs):
    cond = bind(args, kwargs, ("cond",), (None,), name="scipy.linalg.lstsq", known=_LSTSQ_KNOWN)
    lstsq_refusals(a, b, cond["cond"])
    y = sl.lstsq(a, b, *args, **kwargs)
    rest = (NO_TANGENT,) * len(args)

    def lstsq_pullback(dy):
        parts = dy_parts(dy, 4)
        if all(p is ZERO for p in parts):
            return zeros_for((a, b)) + rest
        da, db = lstsq_grad(parts, a, b)
        return (finalize(da, a), finalize(db, b)) + rest

    return y, lstsq_pullback


@transformable
def lstsq_pullback(
    dy,
    a,
    b,
    cond=None,
    overwrite_a=False,
    overwrite_b=False,
    check_finite=True,
    lapack_driver=None,
):
    lstsq_refusals(a, b, cond)  # (a check, run as it is: marked opaque above)
    da, db = lstsq_grad(dy, a, b)
    return da, db


def require_full_rank(a, atol=None, rtol=None):
    """Refuse a rank-deficient ``a`` (with pinv's tolerances): the pseudo-inverse is not
    differentiable across a change of rank."""
    _, rank = sl.pinv(a, atol=atol, rtol=rtol, return_rank=True)
    if np.any(rank < min(np.shape(a)[-2:])):
        refuse(
            "pinv",
            "a is rank deficient (with these tolerances): the pseudo-inverse is not "
            "differentiable across a change of rank, and pullback differentiates full-rank "
            "matrices only",
            "add a small multiple of the identity or regularize",
        )


# A check, not a computation: transformed code (a second derivative) calls it as it is.
require_full_rank.__pullback_opaque__ = True


@transformable
def pinv_pullback(dy, a, atol=None, rtol=None, check_finite=True):
    # For a full-rank a (dX for X = pinv(A), Golub and Pereyra 1973):
    #   -X^T G X^T + (I - A X) G^T X X^T + X^T X G^T (I - X A)
    require_full_rank(a, atol, rtol)
    x = sl.pinv(a, atol=atol, rtol=rtol)
    xt = mT(x)
    m, n = np.shape(a)[-2], np.shape(a)[-1]
    left = (np.eye(m) - a @ x) @ mT(dy) @ (x @ xt)
    right = (xt @ x) @ mT(dy) @ (np.eye(n) - x @ a)
    return (-(xt @ dy @ xt) + left + right,)


def _pinv_rrule(a, *, return_rank=False, **kwargs):
    real_only("pinv", a)
    require_full_rank(a, kwargs.get("atol"), kwargs.get("rtol"))
    y = sl.pinv(a, return_rank=return_rank, **kwargs)
    X = y[0] if return_rank else y
    A = np.asarray(a)

    def pinv_pullback(dy):
        g = dy_parts(dy, 2)[0] if return_rank else dy
        if g is ZERO:
            return zeros_for((a,))
        return (finalize(_pinv_grad(A, X, np.asarray(densify(g))), a),)

    return y, pinv_pullback


# -- block_diag and toeplitz ---------------------------------------------------------------
@transformable
def block_size(shape):
    """The size of the block an argument of block_diag fills (a vector is one row)."""
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return 1, shape[0]
    return shape[-2], shape[-1]


@transformable
def block_diag_cotangents(dy, arrs):
    """The cotangents of the blocks ``arrs`` of ``block_diag(*arrs)``."""
    out = ()
    r = 0
    c = 0
    for a in arrs:
        shape = np.shape(a)
        m, n = block_size(shape)
        block = dy[..., r : r + m, c : c + n]
        if len(shape) < 2:
            block = np.reshape(block, np.shape(block)[:-2] + shape)
        out = out + (unbroadcast(block, a),)
        r = r + m
        c = c + n
    return out


@transformable
def block_diag_pullback(dy, *arrs):
    # any number of blocks (a pullback of *arrs is transformed like user code)
    return block_diag_cotangents(dy, arrs)


def _block_diag_check(*arrs):
    """block_diag only moves values: every input, complex ones too, has a cotangent."""


@transformable
def diagonal_sums(g, count, sign):
    """``out[..., k]``: the sum of the diagonal ``j - i = sign * k`` of ``g``, k < count."""
    sums = ()
    for k in range(count):
        sums = sums + (np.sum(np.diagonal(g, sign * k, -2, -1), axis=-1),)
    return np.stack(sums, axis=-1)


@transformable
def toeplitz_pullback(dy, c, r=None):
    m = np.shape(c)[-1]
    dc = diagonal_sums(dy, m, -1)
    if r is None:  # T[i, j] = c[|i - j|]; the main diagonal is counted once
        return (dc + diagonal_sums(dy, m, 1) * (np.arange(m) != 0),)
    n = np.shape(r)[-1]
    return dc, diagonal_sums(dy, n, 1) * (np.arange(n) != 0)  # r[0] is never read


def _toeplitz_check(c, *args, **kwargs):
    real_only("toeplitz", c, *args, *kwargs.values())
    if kwargs.get("r") is not None:
        refuse(
            "toeplitz",
            "r is given by keyword, and keyword arguments get no gradient",
            "pass r by position: toeplitz(c, r)",
        )


def _finalize_arg(c, a):
    """``finalize`` for one argument; a tuple argument such as ``(c, lower)`` of cho_solve
    gets a tuple cotangent, one entry per element."""
    if type(a) is tuple and type(c) is tuple:
        return tuple(finalize(ci, ai) for ci, ai in zip(c, a, strict=True))
    return finalize(c, a)


def rule_from(fn, pullback_fn, check, name):
    """An rrule for ``fn`` whose pullback is ``pullback_fn(dy, *args, **kwargs)`` (which
    returns the cotangents of the leading array arguments), after ``check`` refuses the
    calls without a derivative."""

    def rrule(*args, **kwargs):
        check(*args, **kwargs)
        y = fn(*args, **kwargs)

        def pullback(dy):
            if dy is ZERO:
                return zeros_for(args)
            cots = pullback_fn(np.asarray(densify(dy)), *args, **kwargs)
            out = [_finalize_arg(c, a) for c, a in zip(cots, args, strict=False)]
            return tuple(out) + (NO_TANGENT,) * (len(args) - len(out))

        pullback.__name__ = f"{name}_pullback"
        return y, pullback

    rrule.__name__ = f"{name}_rrule"
    return rrule


def register_transformable(r, fn, pullback_fn, check, notes=""):
    """Register ``fn``'s rule from its transformable pullback (see :func:`rule_from`)."""
    name = fn.__name__
    module = fn.__module__.split("._")[0]
    r.rule(fn, rule_from(fn, pullback_fn, check, name), name=f"{module}.{name}", notes=notes)
    r.reg.set_pullback_function(fn, pullback_fn)


def register(reg):
    try:
        load_scipy()
    except ImportError:  # pragma: no cover - scipy is optional
        return
    r = Registrar(reg, FAMILY)

    def rule(fn, rrule, notes=""):
        r.rule(fn, rrule, name=f"scipy.linalg.{fn.__name__}", notes=notes)

    register_transformable(r, sl.solve, solve_pullback, _solve_check, "real; every assume_a")
    register_transformable(
        r,
        sl.solve_triangular,
        solve_triangular_pullback,
        _solve_triangular_check,
        "real; reads one triangle",
    )
    register_transformable(r, sl.inv, inv_pullback, _inv_check, "real")
    register_transformable(r, sl.det, det_pullback, _det_check, "real")
    register_transformable(
        r, sl.solve_sylvester, solve_sylvester_pullback, _solve_sylvester_check, "real"
    )
    rule(
        sl.solve_banded,
        rule_from(sl.solve_banded, solve_banded_pullback, _solve_banded_check,
                  "solve_banded"),
        notes="real; reads the band",
    )  # fmt: skip
    rule(sl.lstsq, _lstsq_rrule, notes="real, full rank")
    rule(sl.pinv, _pinv_rrule, notes="real, full rank")
    r.reg.set_pullback_function(sl.pinv, pinv_pullback)  # (not with return_rank=True)
    rule(
        sl.block_diag,
        rule_from(sl.block_diag, block_diag_pullback, _block_diag_check, "block_diag"),
    )
    r.reg.set_pullback_function(sl.block_diag, block_diag_pullback)
    r.reg.set_pullback_function(sl.solve_banded, solve_banded_pullback)
    r.reg.set_pullback_function(sl.lstsq, lstsq_pullback)
    register_transformable(
        r, sl.toeplitz, toeplitz_pullback, _toeplitz_check, "real; r given by position"
    )
