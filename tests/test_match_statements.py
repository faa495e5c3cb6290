"""``match`` statements, differentiated as the if/elif chains they stand for (match_cases.py).

Each pattern kind chooses a case from values that carry no gradient and binds reads of the
subject, which may carry one: value and or-patterns, enum members, sequence patterns with
captures and ``*rest``, mapping and class patterns (keywords, and a builtin matching itself),
guards reading a captured name, a match inside a loop and nested in a case, a case that
returns. Gradients in float64 and float32 against central differences (tests/fd.py), the
second derivative by hvp; the patterns left as a ``match`` are refused with PB409, naming the
pattern and a rewrite (golden texts).
"""

import dataclasses
import enum

import numpy as np
import pytest
from fd import check_grad, check_hvp

import pullback
from pullback import UnsupportedSyntaxError


class Act(enum.Enum):
    TANH = "tanh"
    SOFTPLUS = "softplus"


@dataclasses.dataclass
class Scale:
    factor: float
    shift: float = 0.0


def by_value(x, kind):
    match kind:
        case "square" | "sq":
            y = x * x
        case "cube":
            y = x**3
        case None:
            y = x
        case _:
            y = np.sin(x)
    return np.sum(y)


def by_enum(x, act=Act.SOFTPLUS):
    match act:
        case Act.TANH:
            return np.sum(np.tanh(x))
        case Act.SOFTPLUS:
            return np.sum(np.log1p(np.exp(x)))


def by_sequence(x, spec):
    """The subject carries the gradient: a tuple holding the argument."""
    match (spec, x):
        case (("scale", k), v):
            return np.sum(k * v**2)
        case (("power", k, *_), v) if k > 1:
            return np.sum(v**k)
        case ((_, *rest), v):
            return np.sum(v) * len(rest)
    return 0.0


def star_rest(x):
    match list(x):
        case [head, *middle, last]:
            return head * last + sum(middle) ** 2
        case [only]:
            return only
    return 0.0


def by_mapping(x, config):
    match {"w": x, **config}:
        case {"kind": "ridge", "w": w, "alpha": alpha}:
            return np.sum(w**2) * alpha + np.sum(np.cos(w))
        case {"w": w}:
            return np.sum(np.cos(w))


def by_class(x, model):
    match model:
        case Scale(factor=f, shift=s) if f > 0:
            return np.sum(np.exp(f * x + s))
        case Scale(factor=f):
            return np.sum(f * x)
        case float(c) | int(c):
            return np.sum(c * x**2)


def in_a_loop(x, kinds):
    total = 0.0
    for kind in kinds:
        match kind:
            case "exp":
                total = total + np.sum(np.exp(0.5 * x))
            case ("poly", degree):
                match degree:
                    case 2:
                        total = total + np.sum(x**2)
                    case _:
                        total = total + np.sum(x**degree)
            case _:
                continue
    return total


X = np.array([0.3, -0.7, 1.1])
V = np.array([0.5, 1.0, -0.25])

CASES = {
    "square": (by_value, ("square",)),
    "sq": (by_value, ("sq",)),
    "cube": (by_value, ("cube",)),
    "none": (by_value, (None,)),
    "wildcard": (by_value, ("other",)),
    "enum_default": (by_enum, ()),
    "enum_tanh": (by_enum, (Act.TANH,)),
    "sequence_scale": (by_sequence, (("scale", 1.5),)),
    "sequence_guard": (by_sequence, (("power", 3, "unused"),)),
    "sequence_guard_fails": (by_sequence, (("power", 1, "unused"),)),
    "star_rest": (star_rest, ()),
    "mapping_ridge": (by_mapping, ({"kind": "ridge", "alpha": 0.3},)),
    "mapping_other": (by_mapping, ({"kind": "lasso"},)),
    "class_guard": (by_class, (Scale(0.5, 0.1),)),
    "class_no_guard": (by_class, (Scale(-2.0),)),
    "class_builtin": (by_class, (1.5,)),
    "class_builtin_int": (by_class, (2,)),
    "loop_nested": (in_a_loop, (["exp", ("poly", 2), "skip", ("poly", 3)],)),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gradient(name, dtype):
    f, rest = CASES[name]
    check_grad(f, X.astype(dtype), *rest)


@pytest.mark.parametrize(
    "name", ["cube", "sequence_guard", "mapping_ridge", "class_guard", "loop_nested"]
)
def test_second_order(name):
    f, rest = CASES[name]
    check_hvp(lambda x: f(x, *rest), X, V)


def test_scalar_argument():
    check_grad(by_class, 0.4, Scale(1.2, -0.3))
    check_grad(star_rest, np.array([0.9]))


def test_no_case_matches_returns_the_fallthrough():
    assert pullback.grad(by_sequence)(X, ()) is pullback.ZERO or np.all(
        pullback.grad(by_sequence)(X, ()) == 0
    )


def test_the_subject_is_evaluated_once():
    calls = []

    def subject(v):
        calls.append(1)
        return ("scale", v)

    def f(x):
        match subject(2.0):
            case ("scale", k):
                return np.sum(k * x * x)
            case ("power", k):
                return np.sum(x**k)

    check_grad(f, X)
    calls.clear()
    pullback.grad(f)(X)
    assert len(calls) == 1


def or_binding(x, spec):
    match spec:
        case ("scale", k) | (k, "scale"):
            return np.sum(k * x)
    return np.sum(x)


def mapping_rest(x, config):
    match config:
        case {"alpha": a, **others}:
            return np.sum(a * x) + len(others)
    return np.sum(x)


def class_positional(x, model):
    match model:
        case Scale(f, s):
            return np.sum(f * x + s)
    return np.sum(x)


REFUSED = {
    "or_binding": (
        or_binding,
        (("scale", 2.0),),
        "an or-pattern whose alternatives bind names to different reads",
        "write one `case` for each alternative",
    ),
    "mapping_rest": (
        mapping_rest,
        ({"alpha": 2.0},),
        "a mapping pattern with `**rest`",
        "match the keys you need",
    ),
    "class_positional": (
        class_positional,
        (Scale(2.0),),
        "positional sub-patterns of a class pattern",
        "`case Point(x=px, y=py):`",
    ),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_patterns(name):
    f, rest, why, fix = REFUSED[name]
    with pytest.raises(UnsupportedSyntaxError) as info:
        pullback.grad(f)(X, *rest)
    text = str(info.value)
    assert f"PB409 match statement cannot be differentiated: {why}" in text
    assert fix in text
    assert "test_match_statements.py:" in text and "match " in text


STATIC_FILE = """\
import numpy as np


def by_kind(x, kind):
    match kind:
        case ("scale", k) if k > 0:
            return np.sum(k * x)
        case float(c) | int(c):
            return np.sum(c * x)
        case _:
            return np.sum(x)


def or_binding(x, spec):
    match spec:
        case ("scale", k) | (k, "scale"):
            return np.sum(k * x)
    return np.sum(x)
"""


def test_the_static_check_lowers_as_grad_does(tmp_path, capsys):
    from pullback.check.cli import main

    path = tmp_path / "cases.py"
    path.write_text(STATIC_FILE)
    assert main([f"{path}:by_kind"]) == 0
    assert main([f"{path}:or_binding"]) == 1
    out = capsys.readouterr().out
    assert out == (
        f"{path}:15:5: PB409 match statement cannot be differentiated: an or-pattern whose "
        "alternatives bind names to different reads\n"
    )
