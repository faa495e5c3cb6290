"""The rewrites of docs/limitations.md, tested.

For every code, the documentation shows code that fails the check ("before"), the exact
error, and a rewrite ("after"). This module checks that

* each "before" block, run as a file of its own named example.py, produces exactly the
  error text shown in the documentation;
* each "after" block appears verbatim below, passes the check with no diagnostics and
  computes the same value as the "before" code on sample inputs.
"""

import asyncio
import contextlib
import importlib.util
import math
import re
import types
from pathlib import Path

import numpy as np
import pytest

import pullback
from pullback.check import check
from pullback.registry import default_registry

from .test_golden import FOUND_WHILE_TRANSFORMING

DOC = Path(__file__).resolve().parents[2] / "docs" / "limitations.md"

# -- the "after" code of each section, verbatim ------------------------------------------------


# PB101
def double_at(x, i):
    x = x.copy()
    x[i] = 2.0 * x[i]
    return np.sum(x * x)


# PB102
def bump_middle(x, v):
    x = x.copy()
    x[1:3] += v
    return np.sum(x * x)


# PB103
def smallest_two(x):
    x = x[np.argsort(x)]
    return x[0] + x[1]


# PB104
def scaled_total(a, b):
    a = np.multiply(a, b)
    return np.sum(a)


# PB105
def shifted_energy(x):
    x = x + 1.0
    return np.sum(x * x)


# PB106
def stacked_squares(x, rows):
    rows = list(rows)
    for v in x:
        rows.extend([v, v * v])
    return np.sum(np.stack(rows))


# PB107
def remember(x):
    last = x * 2.0
    return np.sum(last)


# PB108
def tidy(x):
    big = np.outer(x, x)
    total = np.sum(big)
    return total


# PB109
def annotated(x):
    y: float = np.sum(x)
    return y


# PB202
def doubled_sum(x):
    y = x * 2.0
    with contextlib.nullcontext():
        z = y * x
    return np.sum(z)


# PB302
def total(x):
    return np.sum(x * x)


# PB401
def norm(x):
    return np.sqrt(np.sum(x * x))


def remembered_norm(x):
    value = norm(x)
    return value, float(value)  # the caller keeps float(value)


# PB402
def squares(x):
    acc = ()
    for v in x:
        acc = acc + (v * v,)
    return np.stack(acc)


# PB403
def total_now(x):
    return np.sum(x * x)


# PB404
def weighted(x, w):
    w = 2.0 * w
    scales = {"w": lambda v: w * v}
    return np.sum(scales["w"](x))


# PB405
def smooth_total(x, beta):
    beta = 2.0 * beta

    def softplus(v):
        e = np.exp(beta * v)
        return np.log(1.0 + e) / beta

    helpers = {"softplus": softplus}
    return np.sum(helpers["softplus"](x))


# PB406
class Bounds:
    low = 0.0


def spread(x):
    return np.max(x) - np.min(x) + Bounds.low


# PB407
def doubled_total(x):
    return np.sum(2.0 * x)


# PB408
def log_norm(x, exact):
    import math

    return math.log(np.sqrt(np.sum(x * x)))


# PB409
def scaled(x, spec):
    match spec:
        case ("scale", k):
            return np.sum(k * x)
        case (k, "scale"):
            return np.sum(k * x)
        case _:
            return np.sum(x)



# PB301: the callee is unchanged; the rule below (the documented block) is registered in a
# registry of the test's own, in place of pullback's default one.
def erf_total(x):
    total = 0.0
    for v in x:
        total = total + math.erf(v)
    return total


ERF_RULE = """\
@pullback.rrule(math.erf)
def erf_rule(x):
    def erf_pullback(dy):
        return (dy * 2.0 / math.sqrt(math.pi) * math.exp(-x * x),)

    return math.erf(x), erf_pullback
"""


# -- reading the documentation -----------------------------------------------------------------
def doc_sections() -> dict:
    """code -> {"before": str, "text": str, "after": str} for each documented example."""
    text = DOC.read_text(encoding="utf-8")
    sections = {}
    parts = re.split(r'^<a id="(PB\d{3})"></a>.*$', text, flags=re.M)
    for code, body in zip(parts[1::2], parts[2::2], strict=True):
        blocks = dict(
            (info or "text", content)
            for info, content in re.findall(r"^```(?:python )?(\w*)\n(.*?)^```$", body, re.M | re.S)
        )
        sections[code] = blocks
    return sections


SECTIONS = doc_sections()
EXAMPLES = sorted(code for code, blocks in SECTIONS.items() if "before" in blocks)


def registry_without_erf():
    registry = default_registry().copy()
    registry.remove(math.erf)
    return registry


@pytest.fixture(scope="module")
def befores(tmp_path_factory):
    """code -> the last function of the "before" block, imported from its own example.py."""
    result = {}
    for code in EXAMPLES:
        path = tmp_path_factory.mktemp(code) / "example.py"
        source = SECTIONS[code]["before"]
        path.write_text(source)
        spec = importlib.util.spec_from_file_location(f"limitations_{code.lower()}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        name = re.findall(r"^def (\w+)", source, re.M)[-1]
        result[code] = getattr(module, name)
    return result


def test_every_code_is_documented_with_an_example():
    from pullback.check.codes import CODES, RETIRED

    assert set(SECTIONS) == set(CODES) | set(RETIRED)
    assert not set(CODES) & set(RETIRED)
    assert set(EXAMPLES) == set(CODES) - {"PB400"}
    for code in EXAMPLES:
        assert {"before", "text", "after"} <= set(SECTIONS[code]), code


@pytest.mark.parametrize("code", EXAMPLES)
def test_documented_error_is_the_real_output(code, befores):
    if code in FOUND_WHILE_TRANSFORMING:
        with pytest.raises(pullback.UnsupportedSyntaxError) as info:
            pullback.grad(befores[code], registry=registry_without_erf())(X.copy())
        diagnostics = info.value.diagnostics
    else:
        diagnostics = check(befores[code], registry_without_erf())
    shown = "\n\n".join(d.replace(filename="example.py").format() for d in diagnostics)
    assert shown + "\n" == SECTIONS[code]["text"]
    assert all(d.code == code for d in diagnostics)


@pytest.mark.parametrize("code", EXAMPLES)
def test_documented_rewrite_is_the_tested_one(code):
    after = SECTIONS[code]["after"]
    assert after in Path(__file__).read_text(encoding="utf-8")


# -- the rewrites pass the check and compute the same values -----------------------------------
X = np.array([0.5, 2.5, 1.5, 3.0, 0.25])


def fresh():
    return X.copy()  # the "before" functions may change their argument


CALLS_AFTER = {
    "PB101": (double_at, lambda f: f(fresh(), 2)),
    "PB102": (bump_middle, lambda f: f(fresh(), np.array([0.1, -0.2]))),
    "PB103": (smallest_two, lambda f: f(fresh())),
    "PB104": (scaled_total, lambda f: f(fresh(), X[::-1].copy())),
    "PB105": (shifted_energy, lambda f: f(fresh())),
    "PB106": (stacked_squares, lambda f: f(fresh(), [1.0])),
    "PB107": (remember, lambda f: f(fresh())),
    "PB108": (tidy, lambda f: f(fresh())),
    "PB109": (annotated, lambda f: f(fresh())),
    "PB202": (doubled_sum, lambda f: f(fresh())),
    "PB302": (total, lambda f: f(fresh())),
    "PB401": (norm, lambda f: f(fresh())),
    "PB402": (squares, lambda f: f(fresh())),
    "PB403": (total_now, lambda f: f(fresh())),
    "PB404": (weighted, lambda f: f(fresh(), 1.5)),
    "PB405": (smooth_total, lambda f: f(fresh(), 1.5)),
    "PB406": (spread, lambda f: f(fresh())),
    "PB407": (doubled_total, lambda f: f(fresh())),
    "PB408": (log_norm, lambda f: f(fresh(), True)),
    "PB409": (scaled, lambda f: (f(fresh(), ("scale", 2.0)), f(fresh(), (3.0, "scale")),
                                 f(fresh(), "none"))),
}

# How to get the "before" value where the call differs from the rewrite's.
CALLS_BEFORE = {
    "PB302": lambda f: np.sum(fresh() * fresh()),  # the original cannot run: np.summ
    "PB402": lambda f: np.stack(list(f(fresh()))),
    "PB403": lambda f: asyncio.run(f(fresh())()),
}


@pytest.mark.parametrize("code", sorted(CALLS_AFTER))
def test_rewrite_passes_the_check_and_keeps_the_value(code, befores):
    after, call = CALLS_AFTER[code]
    assert check(after) == []
    before = befores[code]
    expected = CALLS_BEFORE.get(code, call)(before)
    np.testing.assert_allclose(call(after), expected, rtol=1e-12)


def test_callers_that_keep_the_unsupported_part_still_compute_the_value(befores):
    # The rewrite of PB401 moves the construct into an undifferentiated caller.
    value, kept = remembered_norm(fresh())
    np.testing.assert_allclose(value, befores["PB401"](fresh()))
    assert kept == pytest.approx(float(value)) and isinstance(kept, float)


def test_registering_the_documented_rule_makes_the_call_supported(befores):
    registry = registry_without_erf()
    assert [d.code for d in check(erf_total, registry)] == ["PB301"]
    namespace = {"math": math, "pullback": types.SimpleNamespace(rrule=registry.rrule)}
    exec(ERF_RULE, namespace)
    assert check(erf_total, registry) == []
    assert erf_total(X) == befores["PB301"](X)
    # The rule itself: value and a central finite difference of its pullback.
    y, pullback = namespace["erf_rule"](0.7)
    (dx,) = pullback(1.0)
    h = 1e-6
    assert y == math.erf(0.7)
    assert abs(dx - (math.erf(0.7 + h) - math.erf(0.7 - h)) / (2 * h)) < 1e-8
