"""The fast tree walks (pullback.tree_walk) and the one-parse source check give exactly
what the standard library's walks give, on every source file of pullback itself and on
a generated long function (the transform passes rely on the same order and the same
locations)."""

from __future__ import annotations

import ast
import copy
from pathlib import Path

import gast
import numpy as np
import pytest

import pullback
from pullback import grad
from pullback.gast_convert import ast_to_gast
from pullback.source_match import _locate_scaffold, _shifted, source_matches_code
from pullback.testing import check_grads
from pullback.tree_walk import all_nodes, copy_tree, lean_nodes, parent_map, statements, walk

SOURCES = sorted(Path(pullback.__file__).resolve().parent.rglob("*.py"))[:60]


def _stdlib_parent_map(tree):
    parents = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    return parents


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_all_nodes_and_parent_map_are_the_walks_of_ast(path):
    text = path.read_text()
    for tree in (ast.parse(text), gast.parse(text)):
        assert all_nodes(tree) == list(ast.walk(tree))
        assert list(walk(tree)) == list(ast.walk(tree))
        assert parent_map(tree) == _stdlib_parent_map(tree)


@pytest.mark.parametrize("path", SOURCES[::12], ids=lambda p: p.name)
def test_copy_tree_is_deepcopy(path):
    # what load_source hands out of a tree it read before: a copy as deepcopy makes it
    text = path.read_text()
    for tree in (ast.parse(text), ast_to_gast(ast.parse(text))):
        mine, theirs = copy_tree(tree), copy.deepcopy(tree)
        dumped = gast.dump(mine, include_attributes=True)
        assert dumped == gast.dump(tree, include_attributes=True)
        assert dumped == gast.dump(theirs, include_attributes=True)
        # no node of the tree in the copy; leaves shared where the tree shares them
        assert not {id(n) for n in all_nodes(mine)} & {id(n) for n in all_nodes(tree)}
        assert _sharing(mine) == _sharing(theirs) == _sharing(tree)
        lists = [v for n in all_nodes(tree) for v in vars(n).values() if isinstance(v, list)]
        copied = [v for n in all_nodes(mine) for v in vars(n).values() if isinstance(v, list)]
        assert not {id(v) for v in lists} & {id(v) for v in copied}


def _sharing(tree):
    first = {}
    return [first.setdefault(id(n), k) for k, n in enumerate(all_nodes(tree))]


def _edit_while_walking(walker, text):
    # A pass that rewrites as it walks: each Call's arguments replaced after the walk has
    # reached the Call (its old arguments are already queued), and each Assign's value
    # replaced before the walk reaches it (the new value is walked instead).
    tree = ast.parse(text)
    seen = []
    for node in walker(tree):
        seen.append(ast.dump(node) if isinstance(node, ast.Name) else type(node).__name__)
        if isinstance(node, ast.Call):
            node.args = [ast.Name("replaced", ast.Load())]
        elif isinstance(node, ast.Module):
            for stmt in node.body:
                if isinstance(stmt, ast.Assign):
                    stmt.value = ast.Name("fresh", ast.Load())
    return seen, ast.dump(tree)


def test_walk_reads_children_when_it_reaches_a_node_as_ast_walk():
    text = "x = f(a, g(b))\ny = h(c)\nh(d, k(e))"
    assert _edit_while_walking(walk, text) == _edit_while_walking(ast.walk, text)
    assert "fresh" in str(_edit_while_walking(walk, text)[0])


_LEAVES = (ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_lean_nodes_are_the_walk_of_ast_without_contexts_and_operators(path):
    # The passes that look only at names, statements, calls and displays walk these: the
    # same nodes in the same order as ast.walk, less the leaves no such pass reads.
    text = path.read_text()
    for tree in (ast.parse(text), gast.parse(text)):
        lean = [n for n in ast.walk(tree) if not isinstance(n, _LEAVES + _GAST_LEAVES)]
        assert lean_nodes(tree) == lean
        assert len(lean) < len(list(ast.walk(tree)))


_GAST_LEAVES = (gast.expr_context, gast.operator, gast.unaryop, gast.boolop, gast.cmpop)


def _locations(tree):
    keys = ("lineno", "col_offset", "end_lineno", "end_col_offset")
    return [(type(n).__name__, *(getattr(n, k, "-") for k in keys)) for n in ast.walk(tree)]


def _code_lines(code):
    """Every line and position of ``code`` and of the code nested in it."""
    nested = [_code_lines(c) for c in code.co_consts if isinstance(c, type(code))]
    return (code.co_name, code.co_firstlineno, list(code.co_lines()), list(code.co_positions()),
            nested)  # fmt: skip


@pytest.mark.parametrize("path", SOURCES[:20], ids=lambda p: p.name)
@pytest.mark.parametrize("shift", [0, 1, 37])
def test_shifted_code_is_the_code_compiled_further_down(path, shift):
    # What the source check compares: the text compiled at line 1 and moved down by
    # ``shift`` lines is the text compiled after ``shift`` blank lines, line for line.
    text = path.read_text()
    moved = _shifted(compile(text, str(path), "exec"), shift)
    want = compile("\n" * shift + text, str(path), "exec")
    # (the functions and classes in it: a module's own code always starts at line 1)
    assert _code_lines(moved)[4] == _code_lines(want)[4]
    assert moved.co_consts == want.co_consts


def test_locate_scaffold_is_fix_missing_locations():
    target = ast.parse("def f(x):\n    return x * 2.0\n").body[0]
    ast.increment_lineno(target, 9)

    def scaffold(fn_node):
        imports = [ast.Import(names=[ast.alias(name="numpy")])]
        cls = ast.ClassDef(name="C", bases=[], keywords=[], body=[fn_node], decorator_list=[])
        binds = [ast.Assign(targets=[ast.Name(id="k", ctx=ast.Store())], value=ast.Constant(1))]
        scope = ast.FunctionDef(
            name="_s",
            args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
            body=binds + [cls],
            decorator_list=[],
            returns=None,
        )
        return ast.Module(body=imports + [scope], type_ignores=[])

    mine = scaffold(target)
    want = ast.fix_missing_locations(scaffold(copy.deepcopy(target)))
    _locate_scaffold(mine, target)
    assert _locations(mine) == _locations(want)
    compile(mine, "<scaffold>", "exec")


def long_fn(x, y):
    s = x * y
    for k in range(3):
        s = s + np.sin(x * k) * y
    t = s * 1.5 - x
    s = s * 0.5 + t * 0.25
    return s


def test_source_check_with_the_shared_parse_accepts_and_refuses():
    import inspect

    lines, start = inspect.getsourcelines(long_fn)
    text = "".join(lines)
    parsed = ast.parse(text)
    before = _locations(parsed)
    assert source_matches_code(long_fn, text, start, parsed=parsed)
    assert _locations(parsed) == before  # the shared parse is read, not changed
    assert not source_matches_code(long_fn, text, start + 1)  # the function moved down
    edited = text.replace("0.25", "0.5")
    assert not source_matches_code(long_fn, edited, start, parsed=ast.parse(edited))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_gradient_of_a_function_read_through_the_shared_parse(dtype):


    x = np.linspace(0.1, 0.9, 4).astype(dtype)
    y = np.asarray(0.7, dtype=dtype)
    check_grads(long_fn, x, y, wrt=(0, 1))
    check_grads(long_fn, x, y, wrt=(0, 1), order=2)


def test_scalar_gradient_matches_the_hand_derivative():
    x, y = 0.3, 0.7
    gx, gy = grad(long_fn, wrt=("x", "y"))(x, y)
    h = 1e-6
    fx = (long_fn(x + h, y) - long_fn(x - h, y)) / (2 * h)
    fy = (long_fn(x, y + h) - long_fn(x, y - h)) / (2 * h)
    assert abs(gx - fx) <= 1e-7 * max(1.0, abs(fx))
    assert abs(gy - fy) <= 1e-7 * max(1.0, abs(fy))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_statements_are_the_statements_of_ast_walk(path):
    text = path.read_text()
    for tree in (ast.parse(text), gast.parse(text)):
        want = [tree] + [n for n in ast.walk(tree) if isinstance(n, ast.stmt)]
        assert statements(tree) == want
        for node in ast.walk(tree):  # from any statement, as the passes walk them
            if isinstance(node, ast.stmt):
                assert statements(node) == [n for n in ast.walk(node) if isinstance(n, ast.stmt)]


def test_statements_meet_handlers_and_cases_at_their_depth():
    text = (
        "def f(x):\n"
        "    try:\n        a = 1\n    except E:\n        b = 2\n        if b:\n            c = 3\n"
        "    else:\n        d = 4\n    finally:\n        e = 5\n"
        "    match x:\n        case 1:\n            g = 6\n        case _:\n            h = 7\n"
        "    while x:\n        k = 8\n    else:\n        m = 9\n"
    )
    for tree in (ast.parse(text), gast.parse(text)):
        want = [tree] + [n for n in ast.walk(tree) if isinstance(n, ast.stmt)]
        assert statements(tree) == want


def _old_located(node, where):
    # transform.nodes.located as it was, with gast.copy_location per child
    if where is not None and getattr(where, "lineno", None) is not None:
        for child in all_nodes(node):
            if getattr(child, "lineno", None) is None and hasattr(child, "_attributes"):
                if "lineno" in child._attributes:
                    gast.copy_location(child, where)
    return node


@pytest.mark.parametrize("path", SOURCES[:4], ids=lambda p: p.name)
def test_located_places_children_as_copy_location_does(path):
    from pullback.transform.nodes import located

    tree = gast.parse(path.read_text())
    for where in [n for n in all_nodes(tree) if isinstance(n, (gast.stmt, gast.expr))][:200]:
        for node in (gast.Name("v", gast.Load(), None, None), gast.BinOp(
            gast.Name("a", gast.Load(), None, None), gast.Add(), gast.Constant(1.0, None)
        ), copy.deepcopy(where)):
            mine, theirs = copy.deepcopy(node), copy.deepcopy(node)
            keys = ("lineno", "col_offset", "end_lineno", "end_col_offset")
            if isinstance(where, gast.stmt):  # some without an end, as generated ones are
                for n in all_nodes(theirs):
                    for k in keys[2:]:
                        n.__dict__.pop(k, None)
                mine = copy.deepcopy(theirs)
            located(mine, where)
            _old_located(theirs, where)
            assert _locations(mine) == _locations(theirs)
