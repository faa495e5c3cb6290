"""pullback.gast_convert builds the very tree gast.ast_to_gast builds (classes, fields,
positions, attribute order), on real sources: pullback's own modules and examples."""

from __future__ import annotations

import ast
import pathlib

import gast
import pytest

import pullback
from pullback.gast_convert import ast_to_gast

ROOT = pathlib.Path(pullback.__file__).parent
SOURCES = sorted(ROOT.rglob("*.py")) + sorted((ROOT.parents[1] / "examples").rglob("*.py"))


def _same(a, b) -> None:
    assert gast.dump(a, include_attributes=True) == gast.dump(b, include_attributes=True)
    for x, y in zip(gast.walk(a), gast.walk(b), strict=True):
        assert type(x) is type(y)
        assert list(vars(x)) == list(vars(y))  # fields, then positions, in gast's order


@pytest.mark.parametrize("path", SOURCES[::7], ids=lambda p: p.name)
def test_same_tree_as_gast(path):
    tree = ast.parse(path.read_text())
    _same(ast_to_gast(tree), gast.ast_to_gast(tree))


SNIPPETS = [
    "def f(x, /, y=1, *a, k: int = 2, **kw) -> float:\n    return x\n",
    "try:\n    pass\nexcept ValueError as e:\n    raise\nexcept:\n    pass\n",
    "async def g():\n    async with a as b, c:\n        async for i in b:\n            await i\n",
    "x = [i for i in range(3) if i]\ny = {k: v for k, v in z.items()}\nf(*a, **k)\n",
    "match p:\n    case [1, *rest] | {'k': _} if rest:\n        pass\n"
    "    case C(a=1):\n        pass\n",
    "x: int = 1\ndel x[1:2, ...]\nglobal g\nlambda: (yield)\ns = f'{a!r:>{w}}' + b'b'\n",
    "with open(p) as (a, b):\n    a.b[c] += -1j ** 2 if a else None\n",
    "import a.b as c\nfrom . import d as e, f\nx = 1 # type: int\n",
]


@pytest.mark.parametrize("text", SNIPPETS)
def test_same_tree_as_gast_on_every_kind_of_node(text):
    tree = ast.parse(text, type_comments=True)
    _same(ast_to_gast(tree), gast.ast_to_gast(tree))


def test_a_node_built_by_hand_without_positions():
    tree = ast.Module(body=[ast.Expr(value=ast.Name(id="x", ctx=ast.Load()))], type_ignores=[])
    _same(ast_to_gast(tree), gast.ast_to_gast(tree))


def test_contexts_and_operators_are_shared_within_one_conversion_only():
    # as in the trees ast.parse makes: one Load, one Add per tree, not one per use
    text = "def f(x, y):\n    a = x + y\n    return a + x * y\n"
    one, two = ast_to_gast(ast.parse(text)), ast_to_gast(ast.parse(text))
    loads = [n.ctx for n in gast.walk(one) if isinstance(getattr(n, "ctx", None), gast.Load)]
    assert len(loads) == 5 and all(ctx is loads[0] for ctx in loads)
    adds = [n.op for n in gast.walk(one) if isinstance(getattr(n, "op", None), gast.Add)]
    assert len(adds) == 2 and adds[0] is adds[1]
    assert not set(map(id, gast.walk(one))) & set(map(id, gast.walk(two)))  # nothing between
    _same(one, gast.ast_to_gast(ast.parse(text)))
