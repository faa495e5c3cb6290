"""Golden tests: the exact text of each diagnostic, one case per construct.

The cases live in cases.py (and callee_cases.py) so that file names and line numbers stay
stable; the expected text is in golden/<case>.txt. To regenerate after an intended change
of wording, run ``PULLBACK_UPDATE_GOLDEN=1 pytest tests/check/test_golden.py`` and review
the diff.
"""

import os
from pathlib import Path

import numpy as np
import pytest

from pullback import grad
from pullback.check import check, codes, raise_if_unsupported
from pullback.errors import UnsupportedSyntaxError
from pullback.registry import default_registry

from . import cases

GOLDEN = Path(__file__).parent / "golden"
UPDATE = bool(os.environ.get("PULLBACK_UPDATE_GOLDEN"))
CASES = sorted(name for name in vars(cases) if name.startswith("pb"))


@pytest.fixture(scope="module")
def registry():
    """The default rules, minus `sorted`, which the PB301 case relies on being foreign."""
    reg = default_registry().copy()
    reg.remove(sorted)
    return reg


def render(diagnostics) -> str:
    relative = [d.replace(filename=os.path.basename(d.filename)) for d in diagnostics]
    return "\n\n".join(d.format() for d in relative) + "\n"


def compare(name: str, text: str) -> None:
    path = GOLDEN / f"{name}.txt"
    if UPDATE:
        path.write_text(text)
    assert text == path.read_text()


# Codes the transformation reports (it knows which values carry a gradient): found when
# grad(f) is built, still before the function runs.
FOUND_WHILE_TRANSFORMING = {"PB107"}
# Cases of other codes that only the transformation finds.
TRANSFORM_CASES = {"pb107_attribute", "pb106_append_read_back"}


def diagnostics_of(fn, registry):
    if fn.__name__ not in TRANSFORM_CASES:
        return check(fn, registry)
    n = fn.__code__.co_argcount
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(fn, registry=registry)(*[np.linspace(0.5, 2.0, 4) for _ in range(n)])
    assert check(fn, registry) == []  # the static check cannot know; the transform does
    return info.value.diagnostics


@pytest.mark.parametrize("name", CASES)
def test_golden_diagnostic(name, registry):
    diagnostics = diagnostics_of(getattr(cases, name), registry)
    expected_code = name[:5].upper()
    assert diagnostics and all(d.code == expected_code for d in diagnostics)
    compare(name, render(diagnostics))


def test_every_code_has_a_golden_case():
    covered = {name[:5].upper() for name in CASES}
    # PB400 is the catch-all for node types that Python 3.11 cannot even parse
    # (tested with a synthetic tree in test_check.py).
    assert covered == set(codes.CODES) - {"PB400"}


def test_several_problems_in_one_error(registry):
    with pytest.raises(UnsupportedSyntaxError) as info:
        raise_if_unsupported(cases.several, registry)
    error = info.value
    assert [d.code for d in error.diagnostics] == ["PB101", "PB106", "PB301"]
    lines = [d.line for d in error.diagnostics]
    assert lines == sorted(lines)
    folder = os.path.dirname(cases.__file__) + os.sep
    compare("several_error", str(error).replace(folder, "") + "\n")
    # The SyntaxError fields point at the first finding.
    assert isinstance(error, SyntaxError)
    assert (error.filename, error.lineno, error.offset) == (cases.__file__, lines[0], 5)
