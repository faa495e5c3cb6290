"""Every rule's ``bind(...)`` names its function, so a keyword the rule does not know is
refused with the public name the user wrote (``np.choose(..., bogus=)``), never with
"this function"."""

from __future__ import annotations

import ast
import pathlib

import numpy as np
import pytest
import scipy.linalg as sl

import pullback.rules
from pullback.errors import UnsupportedCallError
from pullback.registry import default_registry

RULES = pathlib.Path(pullback.rules.__file__).parent


def _bind_calls_without_name():
    for path in sorted(RULES.glob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "bind"
                and not any(k.arg == "name" for k in node.keywords)
            ):
                yield f"{path.name}:{node.lineno}"


def test_every_bind_in_the_rules_passes_a_name():
    found = list(_bind_calls_without_name())
    assert found == []


def test_the_scan_sees_bind_calls():
    # (the scan above would pass vacuously if the rules stopped calling bind by that name)
    count = 0
    for path in RULES.glob("*.py"):
        count += path.read_text().count("bind(args, kwargs")
    assert count > 40


A = np.array([[2.0, 0.5, 0.1], [0.3, 1.5, 0.2], [0.1, 0.4, 3.0]])
B = np.array([1.0, -2.0, 0.5])

# Rules that read their options before calling the function: an unknown keyword reaches
# the rule's bind (NumPy or SciPy would otherwise refuse it first).
GOLDEN = [
    (np.choose, (np.array([0, 1, 0]), [B, 2 * B]), "np.choose"),
    (sl.lstsq, (A, B), "scipy.linalg.lstsq"),
    (sl.lu, (A,), "scipy.linalg.lu"),
]


@pytest.mark.parametrize("fn,args,name", GOLDEN, ids=[g[2] for g in GOLDEN])
def test_unknown_keyword_names_the_function(fn, args, name):
    rule = default_registry().lookup(fn)
    with pytest.raises(UnsupportedCallError) as info:
        rule.rrule(*args, bogus=1)
    text = str(info.value)
    assert f"pullback: {name}(..., bogus=) has no rule for this keyword" in text
    assert "this function" not in text


def test_too_many_options_names_the_function():
    rule = default_registry().lookup(np.choose)
    with pytest.raises(UnsupportedCallError) as info:
        rule.rrule(np.array([0, 1, 0]), [B, 2 * B], None, "raise", 3)
    assert str(info.value).startswith("pullback: np.choose got 3 positional options")
