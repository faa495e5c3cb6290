"""What the first gradient leaves unloaded (numpy.random, numpy.polynomial: each costs
every start that does not use it), and that the deferred random family is still found by
a function that uses numpy.random."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np

from pullback import grad
from pullback.registry import NONDIFF, RuleRegistry
from pullback.rules import numpy_random


def _run(code: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


def test_first_gradient_leaves_numpy_random_and_polynomial_unloaded(tmp_path):
    (tmp_path / "smooth_mod.py").write_text("def f(x):\n    return (x * x).sum()\n")
    lazy = ("numpy.random", "numpy.polynomial")
    out = _run(
        f"import sys; sys.path.insert(0, {str(tmp_path)!r}); import numpy, pullback, smooth_mod; "
        "pullback.grad(smooth_mod.f)(numpy.ones(2)); "
        f"print(sorted(m for m in {lazy!r} if m in sys.modules))"
    )
    assert out == "[]"


def test_random_calls_in_a_first_gradient_find_their_rules(tmp_path):
    # numpy.random is imported only when the function's call is resolved: the deferred
    # family registers then, and the noise is a constant of the gradient.
    (tmp_path / "noisy_mod.py").write_text(
        "import numpy as np\n\n"
        "def f(x):\n"
        "    noise = np.random.default_rng(0).normal(size=x.shape)\n"
        "    return np.sum(x * noise)\n"
    )
    out = _run(
        f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import numpy as np
        import pullback
        import noisy_mod
        g = pullback.grad(noisy_mod.f)(np.ones(3))
        want = np.random.default_rng(0).normal(size=3)
        print(np.array_equal(g, want), 'numpy_random' in [
            f.FAMILY for f in pullback.default_registry().deferred_families()])
        """
    )
    assert out == "True False"


def test_random_family_is_deferred_until_numpy_random_is_imported():
    assert numpy_random.REQUIRES == "numpy.random"
    reg = RuleRegistry()
    reg.add_family(numpy_random)  # numpy.random is imported in this test process
    assert reg.lookup(np.random.normal).kind == NONDIFF
    assert reg.lookup(np.random.Generator.normal).kind == NONDIFF
    assert {r.family for r in reg.rules()} == {"numpy_random"}


def test_gradient_through_a_generator_draw():
    def f(x):
        rng = np.random.default_rng(3)
        return np.sum(x * rng.standard_normal(x.shape))

    x = np.linspace(0.0, 1.0, 4)
    np.testing.assert_array_equal(grad(f)(x), np.random.default_rng(3).standard_normal(4))


def test_deferred_families_name_their_modules_as_the_modules_do():
    # The registry defers a family by the names its DeferredFamily carries, before its
    # module is imported: they must be the module's own.
    from pullback import rules

    deferred = [f for f in rules._ORDER if isinstance(f, rules.DeferredFamily)]
    assert {f.module for f in deferred} >= {"fft", "scipy_special", "scipy_quad", "array_api"}
    for family in deferred:
        module = family.load()
        names = (module.FAMILY, getattr(module, "REQUIRES", None), getattr(module, "DOMAIN", None))
        assert names == (family.FAMILY, family.REQUIRES, family.DOMAIN), family
        assert (family.REQUIRES is None) != (family.DOMAIN is None), family  # one of the two
    # FAMILIES holds the modules themselves, in the registration order
    assert [m.__name__ for m in rules.FAMILIES] == [
        (f.module if f.module.startswith("pullback.") else f"pullback.rules.{f.module}")
        if f in deferred
        else f.__name__
        for f in rules._ORDER
    ]


def test_first_numpy_gradient_imports_no_deferred_family_module(tmp_path):
    (tmp_path / "plain_mod.py").write_text(
        "import numpy as np\n\ndef f(x):\n    return np.sum(np.tanh(x) ** 2)\n"
    )
    out = _run(
        f"import sys; sys.path.insert(0, {str(tmp_path)!r}); import numpy, pullback, plain_mod; "
        "pullback.grad(plain_mod.f)(numpy.ones(2)); from pullback import rules; "
        "print(sorted(f.module for f in rules._ORDER if isinstance(f, rules.DeferredFamily) "
        "and 'pullback.rules.' + f.module in sys.modules), 'numpy.fft' in sys.modules)"
    )
    assert out == "[] False"


def test_fft_rules_are_found_when_the_function_first_uses_np_fft(tmp_path):
    # numpy.fft is imported when the call np.fft.rfft is resolved: the deferred family
    # registers on that lookup's miss, and the gradient is the rule's.
    (tmp_path / "spectral_mod.py").write_text(
        "import numpy as np\n\n"
        "def f(x):\n"
        "    return np.sum(np.abs(np.fft.rfft(x)) ** 2)\n"
    )
    out = _run(
        f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import numpy as np
        import pullback
        import spectral_mod
        assert 'numpy.fft' not in sys.modules
        x = np.linspace(0.1, 1.0, 6)
        g = pullback.grad(spectral_mod.f)(x)
        h = 1e-6
        fd = [(spectral_mod.f(x + h * e) - spectral_mod.f(x - h * e)) / (2 * h)
              for e in np.eye(6)]
        print(np.allclose(g, fd, rtol=1e-6, atol=1e-6), pullback.default_registry().lookup(
            np.fft.rfft).family)
        """
    )
    assert out == "True fft"
