"""``sweep_common.src`` writes names, numbers and ``a op b`` directly (the sweeps ask for
tens of thousands of them on a long function): its text must be exactly what
``gast.unparse`` writes, for every shape it takes the short way and for those it does not."""

import itertools

import gast
import pytest

from pullback.transform.sweep_common import src

ATOMS = [
    gast.Name("x", gast.Load(), None, None),
    gast.Name("d_y1", gast.Load(), None, None),
    gast.Name("x", gast.Load(), gast.Name("int", gast.Load(), None, None), None),  # annotated
    gast.Constant(0, None),
    gast.Constant(-3, None),
    gast.Constant(12345678901234567890, None),
    gast.Constant(1.5, None),
    gast.Constant(-0.25, None),
    gast.Constant(-0.0, None),
    gast.Constant(1e300, None),
    gast.Constant(2.5e-310, None),
    gast.Constant(float("inf"), None),
    gast.Constant(float("-inf"), None),
    gast.Constant(float("nan"), None),
    gast.Constant(True, None),
    gast.Constant(None, None),
    gast.Constant(1j, None),
    gast.Constant("s'\"", None),
    gast.Constant("u", "u"),
    gast.Constant(b"b", None),
    gast.Constant((1, 2.0), None),
    gast.Constant(Ellipsis, None),
]

OPS = [
    gast.Add, gast.Sub, gast.Mult, gast.MatMult, gast.Div, gast.Mod, gast.LShift,
    gast.RShift, gast.BitOr, gast.BitXor, gast.BitAnd, gast.FloorDiv, gast.Pow,
]  # fmt: skip


def _unparsed(node) -> str:
    return gast.unparse(node).strip()


@pytest.mark.parametrize("node", ATOMS, ids=lambda n: gast.dump(n)[:40])
def test_atoms_read_as_the_unparser_writes_them(node):
    assert src(node) == _unparsed(node)


def test_binary_operations_of_atoms_read_as_the_unparser_writes_them():
    for left, op, right in itertools.product(ATOMS, OPS, ATOMS):
        node = gast.BinOp(left, op(), right)
        assert src(node) == _unparsed(node), gast.dump(node)


FUNCS = [
    gast.Name("f", gast.Load(), None, None),
    gast.Attribute(gast.Name("math", gast.Load(), None, None), "sin", gast.Load()),
    gast.Attribute(
        gast.Attribute(gast.Name("np", gast.Load(), None, None), "linalg", gast.Load()),
        "norm",
        gast.Load(),
    ),
    gast.Name("g", gast.Load(), gast.Name("int", gast.Load(), None, None), None),  # annotated
    gast.Attribute(gast.Constant(1, None), "real", gast.Load()),  # "1 .real"
    gast.Attribute(gast.Constant(1.5, None), "real", gast.Load()),
    gast.Attribute(gast.Call(gast.Name("h", gast.Load(), None, None), [], []), "a", gast.Load()),
    gast.Subscript(gast.Name("fs", gast.Load(), None, None), gast.Constant(0, None), gast.Load()),
    gast.Lambda(
        gast.arguments([], [], None, [], [], None, []), gast.Name("x", gast.Load(), None, None)
    ),
]


def test_calls_of_dotted_names_on_atoms_read_as_the_unparser_writes_them():
    keyword = gast.keyword("axis", gast.Constant(0, None))
    starred = gast.Starred(gast.Name("xs", gast.Load(), None, None), gast.Load())
    for func in FUNCS:
        for n in range(3):
            for args in itertools.product(ATOMS + [starred], repeat=n):
                for keywords in ([], [keyword]):
                    node = gast.Call(func, list(args), keywords)
                    assert src(node) == _unparsed(node), gast.dump(node)


def test_nested_and_other_expressions_read_as_the_unparser_writes_them():
    for text in [
        "a * b + c",
        "(a + b) * c",
        "a ** -b",
        "-a ** b",
        "(-1.0) ** x",
        "f(x, y=2) - g[1:2]",
        "x.T @ w",
        "not a",
        "a if b else c",
        "[a, b] + (c,)",
        "lambda v: v * 2",
        "x[..., None]",
        "'%s' % (a,)",
    ]:
        node = gast.parse(text).body[0].value
        assert src(node) == _unparsed(node), text
