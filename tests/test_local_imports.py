"""Imports at the top of a differentiated function's body (pullback/source_imports.py).

They bind free names like globals: calls through them reach their rules, user functions
imported this way are transformed, and a cached gradient is rebuilt when what the import
line would bind changes (a module replaced in ``sys.modules``, an attribute rebound).
"""

import sys
import types

import numpy as np
import pytest
from fd import check_grad, numerical_grad

import pullback
from pullback import grad, hessian, jvp
from pullback.check import check

FAKE = "pb_test_local_imports_fake"


def with_library_imports(x):
    import math
    from math import pi as PI

    import numpy.linalg as la
    from scipy import stats

    return np.sum(stats.norm.logpdf(x, loc=0.2, scale=1.5)) + la.norm(x) + math.sin(x[0]) * PI


def with_user_import(x):
    from pb_test_local_imports_fake import scale

    return np.sum(scale(x) ** 2)


def with_module_import(x):
    import pb_test_local_imports_fake as fake

    return np.sum(fake.scale(x) * x)


def nested_import(x):
    if x[0] > 0:
        import math
    return math.sin(x[0])


def import_and_parameter(x, math):
    import math

    return math.sin(x[0])


def failing_import(x):
    import pb_test_no_such_module_anywhere  # noqa: F401 - refused before it runs

    return x


def _triple(v):
    return 3.0 * v


def _square(v):
    return v * v


@pytest.fixture
def fake_module(monkeypatch):
    module = types.ModuleType(FAKE)
    module.scale = _triple
    monkeypatch.setitem(sys.modules, FAKE, module)
    return module


X = np.array([0.3, -0.7, 1.1])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_library_imports_in_the_body(dtype):
    check_grad(with_library_imports, X.astype(dtype))


def test_second_order_and_forward_mode_through_imported_names():
    h = hessian(with_library_imports)(X)
    g = grad(with_library_imports)
    want = np.stack([numerical_grad(lambda v, k=k: g(v)[k], [X], 0) for k in range(3)])
    np.testing.assert_allclose(h, want, rtol=1e-6, atol=1e-6)
    direction = np.array([1.0, -2.0, 0.5])
    _, tangent = jvp(with_library_imports, (X,), (direction,))
    np.testing.assert_allclose(tangent, numerical_grad(with_library_imports, [X], 0) @ direction,
                               rtol=1e-6)


def test_the_check_passes_imports_at_the_top_of_the_body():
    assert check(with_library_imports) == []


def test_a_user_function_imported_in_the_body_is_transformed(fake_module):
    np.testing.assert_allclose(grad(with_user_import)(X), 18.0 * X)  # d/dx sum (3x)^2
    np.testing.assert_allclose(grad(with_module_import)(X), 6.0 * X)  # d/dx sum 3x^2


def test_a_rebound_attribute_is_seen_by_the_next_gradient(fake_module):
    g = grad(with_user_import)
    np.testing.assert_allclose(g(X), 18.0 * X)
    fake_module.scale = _square  # what `from ... import scale` binds now
    np.testing.assert_allclose(g(X), 4.0 * X**3)  # d/dx sum x^4
    gm = grad(with_module_import)
    np.testing.assert_allclose(gm(X), 3.0 * X**2)  # d/dx sum x^3


def test_a_module_replaced_in_sys_modules_is_seen(fake_module, monkeypatch):
    g = grad(with_module_import)
    np.testing.assert_allclose(g(X), 6.0 * X)
    other = types.ModuleType(FAKE)
    other.scale = _square
    monkeypatch.setitem(sys.modules, FAKE, other)
    np.testing.assert_allclose(g(X), 3.0 * X**2)


@pytest.mark.parametrize(
    "fn, why",
    [
        (nested_import, "it is inside a block"),
        (import_and_parameter, "the function binds 'math' another way too"),
        (failing_import, "it fails: ModuleNotFoundError"),
    ],
)
def test_imports_that_cannot_be_bound_in_advance_are_refused_before_running(fn, why):
    with pytest.raises(pullback.UnsupportedSyntaxError) as info:
        grad(fn)(X, 1) if fn is import_and_parameter else grad(fn)(X)
    text = str(info.value)
    assert "PB408" in text and why in text
    assert f"{__name__.rsplit('.', 1)[-1]}.py:" in text  # the user's file and line


def test_the_file_check_binds_imports_in_the_body(tmp_path, capsys):
    from pullback.check.cli import main

    path = tmp_path / "model.py"
    path.write_text(
        "import numpy as np\n\n\n"
        "def loss(x):\n"
        "    from scipy import special\n\n"
        "    return np.sum(special.expit(x))\n\n\n"
        "def bad(x):\n"
        "    if x > 0:\n"
        "        import math\n"
        "    return math.exp(x)\n"
    )
    assert main([f"{path}:loss"]) == 0
    assert capsys.readouterr().out == ""
    assert main([str(path)]) == 1
    out = capsys.readouterr().out
    assert out.splitlines() == [
        f"{path}:12:9: PB408 import inside a differentiated function: it is inside a block, "
        "so whether it runs decides what its names are bound to"
    ]
