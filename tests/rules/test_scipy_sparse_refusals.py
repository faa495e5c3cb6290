"""What the scipy.sparse rules refuse, at the user's line, with the fix (golden texts)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from pullback import grad
from pullback.errors import PullbackError

sp = pytest.importorskip("scipy.sparse")
spl = pytest.importorskip("scipy.sparse.linalg")

N = 4
A = sp.diags([-np.ones(N - 1), 2.5 * np.ones(N), -np.ones(N - 1)], [-1, 0, 1], format="csr")


class Doubler:
    def __matmul__(self, x):
        return 2 * x


DOUBLER = Doubler()


def foreign_operand(x):
    return np.sum((DOUBLER @ x) ** 2)


def todense_of_differentiated(k):
    return np.sum(np.asarray(sp.diags(k, 0).todense()))


def unconverged_cg(b):
    return np.sum(spl.cg(A, b, maxiter=1)[0])


def expm_multiply_of_differentiated_matrix(k):
    return np.sum(spl.expm_multiply(sp.diags(k, 0), np.ones(N)))


def splu_of_differentiated_matrix(k):
    return np.sum(spl.splu(sp.csc_matrix(sp.diags(k, 0))).solve(np.ones(N)))


def spmatrix_star_is_a_product(k):
    return np.sum(sp.diags(k, 0) * np.ones(N))


def numpy_sum_of_a_sparse_matrix(s):
    return np.sum(s * A)


def lil_has_no_rule(k):
    return np.sum(sp.diags(k, 0).tolil().toarray())


CASES = [
    (
        foreign_operand,
        "the operand of '@' is a test_scipy_sparse_refusals.Doubler object, which is neither "
        "an array nor a SciPy sparse matrix, and pullback has no rule for its product, so no "
        "gradient can flow through it.\nFix: convert it first (`np.asarray(obj) @ x`), call "
        "the object's own method by name (`obj.__matmul__(x)`: a method of your class is "
        "differentiated), or register a rule with `@pullback.rrule` for a function that "
        "computes the product.",
    ),
    (
        todense_of_differentiated,
        "pullback: A.todense() of a differentiated sparse matrix returns a numpy.matrix, whose "
        "`*` and `**` are matrix products and powers, which pullback's rules (those of arrays) "
        "do not follow.\nFix: use A.toarray(), the same values as an ndarray.",
    ),
    (
        unconverged_cg,
        "pullback: scipy.sparse.linalg.cg did not converge in the forward solve (info=1); the "
        "implicit gradient is that of the exact solution, which this iterate is not.\nFix: "
        "raise maxiter, loosen rtol/atol, or give a preconditioner M.",
    ),
    (
        expm_multiply_of_differentiated_matrix,
        "pullback cannot differentiate scipy.sparse.linalg.expm_multiply(A, v) with respect to "
        "A: only v is differentiated (for a small A, scipy.linalg.expm(A.toarray()) @ v "
        "differentiates A)",
    ),
    (
        splu_of_differentiated_matrix,
        "pullback: scipy.sparse.linalg.splu of a matrix that depends on a differentiated value "
        "has no rule (its factors carry no gradient).\nFix: solve with "
        "scipy.sparse.linalg.spsolve(A, b), whose rule differentiates A and b (factor only "
        "constant matrices with splu).",
    ),
    (
        spmatrix_star_is_a_product,
        "a differentiated sparse matrix of shape (4, 4) got a cotangent of shape (4,) from an "
        "elementwise operator: for a scipy.sparse spmatrix `A * x` (and `x * A`) is a matrix "
        "product, which the elementwise derivative of `*` does not describe, and a sparse "
        "matrix does not broadcast.\nFix: write the matrix product as `A @ x`, the "
        "elementwise one as `A.multiply(x)`.",
    ),
    (
        numpy_sum_of_a_sparse_matrix,
        "pullback: np.sum of a differentiated scipy.sparse matrix has no rule (its cotangent "
        "would be a dense array where the matrix's is sparse).\nFix: call the matrix's own "
        "method, `S.sum()` (or `S.sum(axis=0)`).",
    ),
    (
        lil_has_no_rule,
        "cannot differentiate the call of the method 'dia_matrix.tolil': it is library code "
        "(scipy.sparse._base) with no differentiation rule",
    ),
]


@pytest.mark.parametrize("fn, said", CASES, ids=[c[0].__name__ for c in CASES])
def test_refused_at_the_users_line(fn, said):
    with pytest.raises(PullbackError) as info:
        grad(fn)(np.linspace(1.0, 2.0, N) if fn is not numpy_sum_of_a_sparse_matrix else 0.7)
    text = str(info.value)
    # what, the user's place and source line, then the fix (the house order)
    what, _, fix = said.partition("\nFix: ")
    assert what in text
    if fix:
        assert re.search(re.escape(what) + r"\n        [^\n]+\nFix: " + re.escape(fix), text)
    assert f"{__file__}:" in text or "test_scipy_sparse_refusals.py:" in text


def test_no_sparse_module_is_imported_for_a_numpy_gradient(tmp_path):
    # the family waits for scipy.sparse: a plain NumPy gradient never loads its rules
    import os
    import subprocess
    import sys

    script = tmp_path / "plain.py"
    script.write_text(
        "import sys\n"
        "import numpy as np\n"
        "from pullback import grad\n\n\n"
        "def f(x):\n"
        "    return np.sum(np.sin(x) ** 2)\n\n\n"
        "grad(f)(np.ones(3))\n"
        "print('scipy.sparse' in sys.modules, 'pullback.rules.scipy_sparse' in sys.modules)\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout.split() == ["False", "False"]
