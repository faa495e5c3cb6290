"""An append to a list held inside another container (``d[k].append(v)``,
``d.setdefault(k, []).append(v)``) is refused with a fix that works: rebuild the entry."""

import numpy as np
import pytest

from pullback import UnsupportedSyntaxError, grad
from pullback.testing import check_grads


def by_index(x):
    d = {0: [], 1: []}
    for i, v in enumerate(x):
        d[i % 2].append(v)
    return sum(d[0]) * sum(d[1])


def by_setdefault(x):
    d = {}
    for i, v in enumerate(x):
        d.setdefault(i % 2, []).append(v * v)
    return sum(d[0]) * sum(d[1])


def by_index_fixed(x):
    d = {0: [], 1: []}
    for i, v in enumerate(x):
        d[i % 2] = d[i % 2] + [v]
    return sum(d[0]) * sum(d[1])


def by_setdefault_fixed(x):
    d = {}
    for i, v in enumerate(x):
        d[i % 2] = d.get(i % 2, []) + [v * v]
    return sum(d[0]) * sum(d[1])


@pytest.mark.parametrize(
    "fn, fix",
    [
        (by_index, "d[i % 2] = d[i % 2] + [v]"),
        (by_setdefault, "d[i % 2] = d.get(i % 2, []) + [v * v]"),
    ],
)
def test_the_refusal_names_the_line_and_the_rewrite(fn, fix):
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(fn)(np.ones(4))
    text = str(info.value)
    assert "test_inner_list_appends.py:" in text and "PB106" in text
    assert "a list held inside another container" in text
    assert f"Fix: rebuild the entry instead of appending to it in place: `{fix}`." in text


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_rewrites_differentiate(dtype):
    x = np.array([0.5, -1.0, 1.5, 2.0, 0.25], dtype=dtype)
    even, odd = x[::2], x[1::2]
    np.testing.assert_allclose(
        grad(by_index_fixed)(x),
        np.where(np.arange(5) % 2 == 0, odd.sum(), even.sum()),
        rtol=1e-6,
    )
    check_grads(by_index_fixed, x)
    check_grads(by_setdefault_fixed, x)
    assert by_index_fixed(x) == by_index(x)
    assert by_setdefault_fixed(x) == by_setdefault(x)


STATIC_MODULE = '''\
import numpy as np


def inner(x):
    rows = [[], []]
    for i in range(3):
        rows[0].append(x[i] * 2)
    return np.sum(np.array(rows[0]))


def argument_list(x, acc):
    acc.append(x * 2)
    return np.sum(np.array(acc))


class Model:
    def run(self, x):
        self.trace["x"].append(x * 2)
        return self.trace["x"][-1]


def never_read_back(x, log):
    log["a"].append(x * 2)
    return x * 3


def local_list(x):
    out = []
    out.append(x * 2)
    return out[0]


def carries_no_gradient(x, acc):
    for k in range(3):
        acc.append(k * 0.5)
    return x * acc[-1]
'''


def test_the_static_check_reports_what_grad_refuses(tmp_path, capsys):
    """``pullback check`` finds the appends grad refuses, with grad's message and fix, and
    stays silent on the ones grad accepts (never read back, a local list, no gradient)."""
    from pullback.check.cli import main

    path = tmp_path / "appends.py"
    path.write_text(STATIC_MODULE)
    assert main([str(path)]) == 1
    out = capsys.readouterr().out
    found = [line for line in out.splitlines() if " PB106 " in line]
    # lines 23 (never read back), 29 (a local list) and 35 (no gradient) are accepted
    assert [line.split(":")[1] for line in found] == ["7", "12", "18"], out
    assert "'rows[0].append(...)' adds a differentiated value to a list held inside" in found[0]
    said = "'acc.append(...)' adds a differentiated value to a list that came from outside"
    assert said in found[1]
    assert "self.trace['x'].append(...)" in found[2]
    verbose = _static_report(path, "inner")
    assert "rebuild the entry instead of appending to it in place: " in verbose
    assert "`rows[0] = rows[0] + [x[i] * 2]`" in verbose


def _static_report(path, name) -> str:
    """The full diagnostic text of the static check of ``path:name``."""
    from pullback.check.cli import _check_target
    from pullback.registry import default_registry

    return "\n".join(str(d) for d in _check_target(f"{path}:{name}", default_registry(), set()))
