"""The registry itself: deferred (lazily loaded) families and the per-thread active registry."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import types

import numpy as np
import pytest

import pullback
from pullback.registry import (
    RuleRegistry,
    builtin_registry,
    default_registry,
    set_builtin_registry,
    use_registry,
)
from pullback.rules import FAMILIES, build_default_registry


def _run(code: str) -> str:
    """Run ``code`` in a fresh interpreter (sys.modules untouched by the test session)."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_numpy_gradient_never_imports_scipy(tmp_path):
    # grad needs the function's source, so the user function lives in a file.
    (tmp_path / "user_mod.py").write_text(
        "import numpy as np\n\ndef f(x):\n    return np.sum(np.tanh(x) ** 2)\n"
    )
    out = _run(
        f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import numpy as np
        import pullback
        import user_mod
        g = pullback.grad(user_mod.f)(np.linspace(-1.0, 1.0, 4))
        assert g.shape == (4,)
        print('scipy' in sys.modules, sorted(
            f.FAMILY for f in pullback.default_registry().deferred_families()))
        """
    )
    loaded, deferred = out.split(" ", 1)
    assert loaded == "False"
    assert "scipy_special" in deferred


def test_scipy_rules_are_found_on_the_first_gradient(tmp_path):
    (tmp_path / "user_sc.py").write_text(
        "import numpy as np\nimport scipy.special as sc\n\n"
        "def f(x):\n    return np.sum(sc.erf(x) * sc.gammaln(x))\n"
    )
    out = _run(
        f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import numpy as np
        import pullback
        reg = pullback.default_registry()
        before = reg.version
        import user_sc
        x = np.array([0.5, 1.5, 2.5])
        from pullback.testing import check_grads
        check_grads(user_sc.f, (x,))
        print(reg.version > before, reg.deferred_families() == [] or
              all(f.FAMILY != 'scipy_special' for f in reg.deferred_families()))
        """
    )
    assert out.split() == ["True", "True"]


def _family(name, requires, fn):
    """A family module made on the fly, whose rule doubles the gradient of ``fn``."""
    mod = types.ModuleType(f"fake_{name}")
    mod.FAMILY = name
    mod.REQUIRES = requires

    def register(reg):
        @reg.rrule(fn, family=name, trusted=True)
        def _(x):
            return fn(x), lambda dy: (2.0 * dy,)

    mod.register = register
    return mod


def test_deferred_family_loads_on_a_miss_after_its_module_appears(monkeypatch):
    def fake(x):
        return x

    reg = RuleRegistry()
    fam = _family("fake_family", "pullback_fake_module_for_tests", fake)
    reg.add_family(fam)
    assert reg.deferred_families() == [fam]
    v0 = reg.version
    assert reg.lookup(fake) is None  # the module is not imported: still deferred
    assert reg.version == v0
    copied = reg.copy()
    monkeypatch.setitem(sys.modules, "pullback_fake_module_for_tests", types.ModuleType("m"))
    assert reg.lookup(fake).family == "fake_family"
    assert reg.version > v0
    assert reg.deferred_families() == []
    # the copy kept its own deferred family and loads it on its own first miss
    assert copied.deferred_families() == [fam]
    assert copied.lookup(fake) is not None
    # a family whose module is already imported registers at once
    other = RuleRegistry()
    other.add_family(fam)
    assert other.deferred_families() == [] and other.lookup(fake) is not None


def test_load_all_skips_what_is_not_installed():
    def fake(x):
        return x

    reg = RuleRegistry()
    reg.add_family(_family("missing", "pullback_no_such_module_anywhere", fake))
    reg.load_all()
    assert len(reg.deferred_families()) == 1
    assert reg.rules() == []


def test_families_keep_the_tuple_of_modules_shape():
    assert isinstance(FAMILIES, tuple)
    for family in FAMILIES:
        assert isinstance(family, types.ModuleType)
        assert isinstance(family.FAMILY, str) and callable(family.register)
        assert isinstance(getattr(family, "REQUIRES", ""), str)
    # rules() (what the listing reads) loads every deferred family
    reg = build_default_registry()
    names = {rule.family for rule in reg.rules()}
    assert {f.FAMILY for f in FAMILIES} - names <= {"transformable"}  # no rules of its own
    assert reg.deferred_families() == []


def test_builtin_registry_is_built_once_and_swappable():
    assert builtin_registry() is builtin_registry()
    mine = RuleRegistry()
    previous = set_builtin_registry(mine)
    try:
        assert default_registry() is mine
    finally:
        set_builtin_registry(previous)
    assert default_registry() is previous


def _scaled(x):
    return 3.0 * x


def _loss(x):
    return np.sum(_scaled(x))


def _registry_scaling_gradient_by(k):
    reg = default_registry().copy()

    @reg.rrule(_scaled)
    def _(x):
        return _scaled(x), lambda dy: (k * dy,)

    return reg


def test_use_registry_is_per_thread():
    regs = {1.0: _registry_scaling_gradient_by(1.0), 5.0: _registry_scaling_gradient_by(5.0)}
    barrier = threading.Barrier(2, timeout=30)
    results, errors = {}, []

    def work(k):
        try:
            with use_registry(regs[k]):
                barrier.wait()  # both threads are inside their own `with` now
                for _ in range(20):
                    g = pullback.grad(_loss)(np.ones(3))
                    assert default_registry() is regs[k]
                barrier.wait()
                results[k] = g
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=work, args=(k,)) for k in regs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    np.testing.assert_allclose(results[1.0], np.ones(3))
    np.testing.assert_allclose(results[5.0], 5.0 * np.ones(3))
    # outside both blocks, the built-in registry transforms _scaled itself
    np.testing.assert_allclose(pullback.grad(_loss)(np.ones(3)), 3.0 * np.ones(3))
    assert default_registry() is builtin_registry()


def test_use_registry_nests_and_restores():
    a, b = RuleRegistry(), RuleRegistry()
    with use_registry(a):
        with use_registry(b):
            assert default_registry() is b
        assert default_registry() is a
    assert default_registry() is builtin_registry()
    with pytest.raises(RuntimeError), use_registry(a):
        raise RuntimeError
    assert default_registry() is builtin_registry()
