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


UNARY = [gast.USub, gast.UAdd, gast.Invert, gast.Not]
COMPARE = [
    gast.Eq, gast.NotEq, gast.Lt, gast.LtE, gast.Gt, gast.GtE, gast.Is, gast.IsNot, gast.In,
    gast.NotIn,
]  # fmt: skip
STRINGS = [
    gast.Constant(s, None) for s in ("f.py:23:20", "it's", 'say "x"', "a\\b", "tab\t", "é", "")
]


def test_unary_operations_and_comparisons_of_atoms_read_as_the_unparser_writes_them():
    for op, operand in itertools.product(UNARY, ATOMS + STRINGS):
        node = gast.UnaryOp(op(), operand)
        assert src(node) == _unparsed(node), gast.dump(node)
    for left, op, right in itertools.product(ATOMS, COMPARE, ATOMS):
        node = gast.Compare(left, [op()], [right])
        assert src(node) == _unparsed(node), gast.dump(node)
    chain = gast.Compare(ATOMS[0], [gast.Lt(), gast.LtE()], [ATOMS[1], ATOMS[3]])
    assert src(chain) == _unparsed(chain) == "x < d_y1 <= 0"


def test_subscripts_of_atoms_read_as_the_unparser_writes_them():
    values = ATOMS[:3] + FUNCS[1:3] + [FUNCS[6]]
    bounds = [
        None,
        *ATOMS[:9],
        gast.UnaryOp(gast.USub(), ATOMS[3]),
        gast.UnaryOp(gast.Not(), ATOMS[0]),
    ]
    for value in values:
        for index in ATOMS + STRINGS:
            node = gast.Subscript(value, index, gast.Load())
            assert src(node) == _unparsed(node), gast.dump(node)
        for n in range(4):
            node = gast.Subscript(value, gast.Tuple(ATOMS[:n], gast.Load()), gast.Load())
            assert src(node) == _unparsed(node), gast.dump(node)
        for lower, upper, step in itertools.product(
            bounds[:6], bounds[:6] + bounds[9:], bounds[:3]
        ):
            node = gast.Subscript(value, gast.Slice(lower, upper, step), gast.Load())
            assert src(node) == _unparsed(node), gast.dump(node)


def test_conditional_expressions_of_primaries_read_as_the_unparser_writes_them():
    escaped_read = (
        gast.parse(
            "read_item(_t6, 0, 'first_call.py:23:20', True) if _pb_escaped.values else _t6[0]"
        )
        .body[0]
        .value
    )
    assert src(escaped_read) == _unparsed(escaped_read)
    calls = [gast.Call(FUNCS[0], [ATOMS[0], s, gast.Constant(True, None)], []) for s in STRINGS]
    parts = ATOMS[:4] + ATOMS[14:16] + STRINGS + calls + [FUNCS[1], FUNCS[7]]
    for body, test, orelse in itertools.product(parts, ATOMS[:2] + FUNCS[1:2], parts):
        node = gast.IfExp(test, body, orelse)
        assert src(node) == _unparsed(node), gast.dump(node)
    for text in [
        "(a if b else c) if d else e",
        "a if b else (c if d else e)",
        "f(x=1) if a else b",
    ]:
        node = gast.parse(text).body[0].value
        assert src(node) == _unparsed(node), text


def test_every_expression_of_a_module_reads_as_the_unparser_writes_it():
    import inspect

    from pullback.transform import reverse_calls, sweep_common

    for module in (sweep_common, reverse_calls):
        for node in gast.walk(gast.parse(inspect.getsource(module))):
            if isinstance(node, gast.expr):
                assert src(node) == _unparsed(node), gast.dump(node)[:200]
