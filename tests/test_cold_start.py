"""What ``import pullback`` leaves unloaded (numpy.random, numpy.fft: each costs every
start) and that the checks which used to name those modules at import still see them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pullback.check.mutation_fixes import is_inplace_numpy
from pullback.errors import PullbackError
from pullback.forward_mode import jvp
from pullback.registry import qualified_name
from pullback.transform.linear_calls import _linear


def test_import_leaves_numpy_random_and_fft_unloaded():
    code = (
        "import sys, numpy, pullback\n"
        "print(sorted(m for m in ('numpy.random', 'numpy.fft') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_random_shuffle_is_still_an_inplace_numpy_function():
    assert is_inplace_numpy(np.random.shuffle)
    assert not is_inplace_numpy(np.random.permutation)
    assert not is_inplace_numpy(None)


def test_shuffle_in_a_differentiated_function_is_refused():
    from pullback import grad

    def f(x):
        y = x * 2.0
        np.random.shuffle(y)
        return np.sum(y)

    with pytest.raises(PullbackError, match="shuffle"):
        grad(f)(np.ones(3))


def test_fft_functions_are_linear_in_forward_mode():
    for name in ("fft", "ifft", "rfft", "fft2", "ifft2"):
        assert _linear(getattr(np.fft, name))
    assert not _linear(np.fft.fftfreq)
    assert _linear(np.sum)


def fft_energy(x):
    return np.fft.rfft(x * x)


def test_jvp_through_rfft_matches_finite_differences():
    x = np.linspace(0.1, 1.0, 6)
    v = np.cos(np.arange(6.0))
    _, dy = jvp(fft_energy, (x,), (v,))
    h = 1e-6
    want = (fft_energy(x + h * v) - fft_energy(x - h * v)) / (2 * h)
    np.testing.assert_allclose(dy, want, rtol=1e-6, atol=1e-8)


def test_qualified_names_of_numpy_submodule_functions():
    assert qualified_name(np.fft.fft) == "numpy.fft.fft"
    assert qualified_name(np.linalg.solve) == "numpy.linalg.solve"
    assert qualified_name(np.sin) == "numpy.sin"


BLOCKS = [
    "def f(x):\n    return x\n\n\ny = 1\n",
    "@deco\n@other(\n    1,\n)\ndef f(\n    x,\n) -> float:\n"
    "    # note\n\n    return x\n# after\nz = 2\n",
    "def f(x): return x\ndef g(x):\n    return x\n",
    "    def method(self, x):\n        if x:\n            return 1\n        return 2\n"
    "    def other(self):\n        pass\n",
    "async def f(x):\n    await x\n",
    "def f(x):\n    s = '''\nat the margin'''\n    return s\n\nw = 3\n",
    "def f(x):\n    y = (x +\n1)\n    return y\n",
    "def f(x):\n    return x \\\n+ 1\nv = 0\n",
]


@pytest.mark.parametrize("text", BLOCKS)
def test_def_block_is_inspects_block_or_falls_back(text):
    import inspect

    from pullback.source import _def_block

    lines = text.splitlines(True)
    block = _def_block(lines, 0)
    # None: source_lines asks inspect.getblock instead
    assert block is None or block == inspect.getblock(lines)


def test_def_block_falls_back_where_a_string_reaches_the_margin():
    from pullback.source import _def_block

    assert _def_block(BLOCKS[5].splitlines(True), 0) is None
    assert _def_block(BLOCKS[0].splitlines(True), 0) == ["def f(x):\n", "    return x\n"]
    assert len(_def_block(BLOCKS[1].splitlines(True), 0)) == 10


def multi_line_header(
    x,
    y=2.0,
) -> float:
    """A header over several lines, closed at the margin (black's style)."""
    s = x * y
    return s


def test_gradient_of_a_function_with_a_multi_line_header():
    from pullback import grad

    assert grad(multi_line_header)(3.0) == 2.0


def test_all_nodes_is_ast_walk():
    import ast
    import inspect

    import gast

    from pullback.transform import ssa
    from pullback.transform.analyze import all_nodes

    for tree in (gast.parse(inspect.getsource(ssa)), ast.parse("x = [a[i] for i in b]")):
        assert [id(n) for n in all_nodes(tree)] == [id(n) for n in ast.walk(tree)]


def test_forward_mode_is_imported_by_its_first_use(tmp_path):
    # import pullback leaves forward mode's bytecode unread; pullback.jvp, `from pullback
    # import stacked_jvp` and a forward-swept jacobian import it, and agree with finite
    # differences.
    (tmp_path / "fwd_mod.py").write_text(
        "import numpy as np\n\ndef f(x):\n    return np.sin(x) * x\n"
    )
    code = f"""
import sys
sys.path.insert(0, {str(tmp_path)!r})
import numpy as np
import pullback, fwd_mod
lazy = ('pullback.forward_mode', 'pullback.transform.forward')
print(sorted(m for m in lazy if m in sys.modules), 'jvp' in dir(pullback))
x = np.linspace(0.2, 1.0, 4)
h = 1e-6
fd = np.array([(fwd_mod.f(x + h * e) - fwd_mod.f(x - h * e)) / (2 * h) for e in np.eye(4)]).T
y, t = pullback.jvp(fwd_mod.f, (x,), (np.ones(4),))
from pullback import stacked_jvp
print(sorted(m for m in lazy if m in sys.modules), stacked_jvp is pullback.stacked_jvp)
print(np.allclose(t, fd.sum(axis=1), rtol=1e-7, atol=1e-9),
      np.allclose(pullback.jacobian(fwd_mod.f)(x), fd, rtol=1e-7, atol=1e-9))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:3] == [
        "[] True",
        "['pullback.forward_mode', 'pullback.transform.forward'] True",
        "True True",
    ]


def test_relative_imports_in_a_function_resolve_against_its_package():
    # importlib.util is imported where a relative import is resolved, not with pullback
    import gast

    from pullback.rules import numpy_shape
    from pullback.source_imports import _absolute

    def stmt(code):
        return gast.parse(code).body[0]

    fn = numpy_shape.register  # a function of the package pullback.rules
    assert _absolute(stmt("from . import _util"), fn) == "pullback.rules"
    assert _absolute(stmt("from ._util import Registrar"), fn) == "pullback.rules._util"
    assert _absolute(stmt("from ..errors import PullbackError"), fn) == "pullback.errors"
    assert _absolute(stmt("from ....x import y"), fn) is None  # beyond the top package
    assert _absolute(stmt("from math import exp"), fn) == "math"
    assert _absolute(stmt("from . import x"), lambda: None) is None  # no package


@pytest.mark.parametrize("before", [True, False])
def test_import_pauses_the_collector_and_puts_it_back_as_it_was(before):
    # pullback/__init__.py pauses the cyclic collector while it imports; afterwards it is
    # on or off as the program had it, and the names are gone.
    code = (
        "import gc, numpy as np\n"
        f"gc.enable() if {before} else gc.disable()\n"
        "import pullback\n"
        "print(gc.isenabled(), hasattr(pullback, '_gc'), hasattr(pullback, '_collecting'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(before), "False", "False"]


def _run(code: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_import_leaves_its_objects_old_without_a_collection():
    # The import's objects (tens of thousands) go to the oldest generation without being
    # walked: the youngest generation is (nearly) empty after it, nothing stays frozen, and
    # no collection ran during the import (gc.callbacks sees every one).
    code = (
        "import gc, numpy as np\n"
        "seen = []\n"
        "gc.callbacks.append(lambda phase, info: seen.append(info['generation']))\n"
        "before = len(gc.get_objects(generation=2))\n"
        "import pullback\n"
        "gc.callbacks.clear()\n"
        "old = len(gc.get_objects(generation=2)) - before\n"
        "print(gc.get_count()[0] < 1000, gc.get_freeze_count(), old > 10000, seen)\n"
    )
    assert _run(code) == ["True", "0", "True", "[]"]


def test_import_keeps_what_the_program_froze_frozen():
    code = (
        "import gc, numpy as np\n"
        "gc.freeze()\n"
        "frozen = gc.get_freeze_count()\n"
        "import pullback\n"
        "print(frozen > 0, gc.get_freeze_count() == frozen, gc.isenabled())\n"
    )
    assert _run(code) == ["True", "True", "True"]


def test_a_cycle_made_before_the_import_is_still_collected(tmp_path):
    # aged by the import, a program's garbage cycle waits for a full collection: later,
    # never lost; and the gradient after it is still the derivative
    script = tmp_path / "pb_aged_cycle.py"
    script.write_text(
        "import gc, weakref, numpy as np\n"
        "class Node:\n"
        "    pass\n"
        "a = Node()\n"
        "a.me = a\n"
        "ref = weakref.ref(a)\n"
        "del a\n"
        "import pullback\n"
        "gc.collect()\n"
        "def f(x):\n"
        "    return np.sum(np.sin(x) * x)\n"
        "g = pullback.grad(f)(np.array([0.5, 1.5]))\n"
        "x = np.array([0.5, 1.5])\n"
        "want = np.sin(x) + x * np.cos(x)\n"
        "print(ref() is None, bool(np.allclose(g, want, rtol=1e-12, atol=0)))\n"
    )
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True"]


def test_a_first_gradient_of_simple_shapes_leaves_gasts_unparser_unimported():
    # sweep_common.src writes the benchmark's 20-line function (slices, comparisons, an
    # escaped read `read_item(...) if ... else t[0]`) without gast.unparse, whose import
    # (with `string`'s) costs about 1.5 ms; the gradient still agrees with differences
    bench = str(Path(__file__).resolve().parent.parent / "benchmarks")
    code = (
        "import sys\n"
        f"sys.path.insert(0, {bench!r})\n"
        "import numpy as np\n"
        "import pullback\n"
        "from workloads import first_call as w\n"
        "args = w.make_args()\n"
        "g = pullback.grad(w.robust_fit)(*args)\n"
        "loaded = 'gast.unparser' in sys.modules\n"
        "w0, rest, h = args[0], args[1:], 1e-6\n"
        "fd = np.array([(w.robust_fit(w0 + h * e, *rest) - w.robust_fit(w0 - h * e, *rest))"
        " / (2 * h) for e in np.eye(w0.size)])\n"
        "print(loaded, bool(np.allclose(g, fd, rtol=1e-6, atol=1e-8)))\n"
    )
    assert _run(code) == ["False", "True"]
