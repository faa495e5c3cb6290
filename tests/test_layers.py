"""The import graph of pullback goes one way: from the api down to the foundation.

Every ``import`` of a pullback module — at module level or inside a function — must name a
module of the same layer or a lower one (docs/design.md, "Layers"). A lower layer that needs
an api function (a rule that differentiates a user's function, the rules of ``grad`` itself)
reaches it through ``registry.ENTRY_POINTS``, which the api layer installs. And an import
inside a function never hides a cycle: a module imported lazily must not import its
importer back, directly or through others (none is left: ``KNOWN_LAZY_CYCLES`` below is
empty, and the test fails when one appears).
"""

from __future__ import annotations

import ast
import collections
import fnmatch
import functools
import pathlib

import pytest

import pullback
from pullback.errors import PullbackError
from pullback.registry import ENTRY_POINTS, EntryPoints

ROOT = pathlib.Path(pullback.__file__).parent

# Lowest first. A module belongs to the first layer with a matching pattern.
LAYERS = (
    # errors, cotangent values and the array backends: import nothing above them
    (
        "foundation",
        (
            "pullback.errors",
            "pullback.zero",
            "pullback.tangents",
            "pullback.records_dataclasses",
            "pullback.records_plain",
            "pullback.read_folds",
            "pullback.loop_buffers",
            "pullback.loop_offsets",
            "pullback.indexed_cotangent",
            "pullback.diagonal_stack",
            "pullback.band_stack",
            "pullback.backends",
            "pullback.guards",
            "pullback.match_cases",
            "pullback.called_objects",
            "pullback.recompute_draws",
            "pullback.closure_cells",
            "pullback.source_match",
            "pullback.tree_walk",
            "pullback.signatures",
            "pullback.gast_convert",
            "pullback.where_masks",
            "pullback.lazy_patterns",
            "pullback.user_objects",
            "pullback.zero_safe",
            "pullback.sparse_values",
            "pullback.with_contexts",
            "pullback.refused",
            "pullback.object_tangents",
            "pullback.value_leaves",
        ),
    ),
    # pipeline step 1-2: the user's source and the objects its names resolve to
    (
        "source",
        (
            "pullback.source",
            "pullback.source_cache",
            "pullback.source_lambdas",
            "pullback.source_imports",
            "pullback.resolve",
            "pullback.binding_index",
            "pullback.receiver_classes",
            "pullback.plain_classes",
            "pullback.plain_classes_static",
            "pullback.plain_methods",
            "pullback.nested_factories",
        ),
    ),
    # the rule registry and the registry-keyed cache tokens
    ("registry", ("pullback.registry", "pullback.cache")),
    # the helpers generated code calls at run time
    (
        "runtime",
        (
            "pullback.runtime",
            "pullback.explicit_dunders",
            "pullback.inplace_fields",
            "pullback.rule_tangents",
            "pullback.star_runtime",
            "pullback.star_permutations",
            "pullback.keyword_shims",
            "pullback.sweep_cotangents",
            "pullback.unit_cotangents",
            "pullback.dynamic_calls",
            "pullback.dynamic_vjps",
            "pullback.unfollowed_objects",
            "pullback.ruled_objects",
            "pullback.dynamic_attrs",
            "pullback.call_cotangents",
            "pullback.iterators_by_hand",
            "pullback.scalar_vjps",
            "pullback.list_operands",
            "pullback.where_helpers",
            "pullback.call_sites",
            "pullback.dict_views",
            "pullback.dynamic_reverse",
            "pullback.callables",
            "pullback.lambdas",
            "pullback.iteration",
            "pullback.dict_calls",
            "pullback.unpacking",
            "pullback.ufunc_methods",
            "pullback.operator_dispatch",
            "pullback.operator_functions",
            "pullback.object_items",
            "pullback.escapes",
            "pullback.recompute_state",
            "pullback.records",
            "pullback.records_calls",
            "pullback.records_named",
            "pullback.object_versions",
            "pullback.containers*",
            "pullback.arrays_*",
        ),
    ),
    # the rule families that ship with pullback
    ("rules", ("pullback.rules", "pullback.rules.*")),
    # pipeline steps 3-7: check -> normalize -> analyze -> reverse -> codegen (the check
    # reuses the transform's analyses of closures and generators, and the argument kinds
    # an adjoint is specialised for are read with the transform's kinds, so they share a
    # layer; transform/pipeline.py orders the passes)
    (
        "transform",
        (
            "pullback.check",
            "pullback.check.*",
            "pullback.transform",
            "pullback.transform.*",
            "pullback.arguments",
            "pullback.wrapped_signatures",
        ),
    ),
    # what users call: adjoint cache, sweeps, grad/vjp/jacobian/jvp, the CLI and testing
    ("api", ("*",)),
)

# Within-layer cycles closed by a function-level import, (importer, imported): none is
# left; a new one fails the test below (untangle it: move the shared piece to a lower module,
# pass a function in from the higher one, or let the higher one fill a hook at import).
KNOWN_LAZY_CYCLES: set = set()


def _modules() -> dict[str, pathlib.Path]:
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _targets(module: str, is_package: bool, node) -> list[str]:
    """The pullback modules an import statement of ``module`` loads."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "pullback"]
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - node.level + 1]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if target.split(".")[0] != "pullback":
        return []
    # ``from . import runtime`` loads a module; ``from .api import vjp`` a name of one
    return [f"{target}.{a.name}" if f"{target}.{a.name}" in MODULES else target for a in node.names]


@functools.cache  # read when a test asks, not at import: both workers collect this file
def _imports():
    """(importer, imported, line, at module level) for every import of a pullback module."""
    out = []
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = {id(n) for n in tree.body}
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in _targets(module, path.name == "__init__.py", node):
                    if target in MODULES and target != module:
                        out.append((module, target, node.lineno, id(node) in top))
    return out


def layer_of(module: str) -> int:
    for k, (_, patterns) in enumerate(LAYERS):
        if any(fnmatch.fnmatchcase(module, p) for p in patterns):
            return k
    raise AssertionError(module)  # pragma: no cover - the api layer matches everything


def test_the_graph_is_read():
    # the walk sees the imports the package is built from (guards against a vacuous pass)
    assert len(MODULES) > 100
    assert ("pullback.api", "pullback.adjoints") in {(a, b) for a, b, _, _ in _imports()}
    assert ("pullback.registry", "pullback.tangents") in {(a, b) for a, b, _, _ in _imports()}
    lazy = {(a, b) for a, b, _, top in _imports() if not top}
    assert ("pullback.api", "pullback.rules") in lazy


def test_every_layer_is_populated():
    for k, (name, _) in enumerate(LAYERS):
        assert any(layer_of(m) == k for m in MODULES), name


def test_imports_only_go_down():
    upward = [
        f"{a}:{line} ({LAYERS[layer_of(a)][0]}) imports {b} ({LAYERS[layer_of(b)][0]})"
        f"{'' if top else ' inside a function'}"
        for a, b, line, top in _imports()
        if layer_of(b) > layer_of(a)
    ]
    assert upward == []


def _reachable(graph, start):
    seen, todo = {start}, [start]
    while todo:
        for nxt in graph[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def test_no_cycle_hides_behind_a_function_level_import():
    graph = collections.defaultdict(set)
    for a, b, _, _ in _imports():
        graph[a].add(b)
    hidden = {(a, b) for a, b, _, top in _imports() if not top and a in _reachable(graph, b)}
    assert hidden - KNOWN_LAZY_CYCLES == set()
    # a cycle untangled: take it off the list
    assert KNOWN_LAZY_CYCLES - hidden == set()


def test_the_api_installs_every_entry_point():
    for name in EntryPoints.NAMES:
        assert callable(getattr(ENTRY_POINTS, name)), name
    assert ENTRY_POINTS.vjp is pullback.vjp
    assert ENTRY_POINTS.hessian is pullback.hessian


def test_a_missing_entry_point_is_a_pullback_error():
    empty = EntryPoints()
    with pytest.raises(PullbackError, match="(?s)'grad' is not installed.*Fix: import pullback"):
        empty.grad  # noqa: B018
    with pytest.raises(AttributeError):
        empty.no_such_entry  # noqa: B018


def test_a_rule_reaches_a_swapped_entry_point(monkeypatch):
    # np.vectorize's rule differentiates the user function through ENTRY_POINTS.vjp
    import numpy as np

    seen = []
    real = ENTRY_POINTS.vjp

    def spy(fn, *args, **kwargs):
        seen.append(fn)
        return real(fn, *args, **kwargs)

    monkeypatch.setattr(ENTRY_POINTS, "vjp", spy)

    def cube(t):
        return t * t * t

    def f(x):
        return np.sum(np.vectorize(cube)(x))

    g = pullback.grad(f)(np.array([1.0, 2.0]))
    np.testing.assert_allclose(g, [3.0, 12.0])
    assert cube in seen


def test_the_check_installs_the_returned_items_proof():
    # the container analysis (transform) asks the checker's proof through a hook that
    # pullback.check fills when imported, rather than importing it back
    from pullback.check import returned_items_own
    from pullback.transform.list_analysis import ContainerAnalysis

    assert ContainerAnalysis.prove_returned_items is returned_items_own
