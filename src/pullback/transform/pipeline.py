"""The passes both sweeps start from: source → check → normalize → SSA → activity → kinds.

>>> # prepared = prepare(f, ("x",), registry, kinds_key)
>>> # prepared.norm.tree is f in the core language, SSA-renamed; prepared.activity says
>>> # which names carry derivatives; prepared.kinds which are provably scalars or arrays.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

from ..errors import Diagnostic
from ..source import load_source
from .analyze import Activity, analyze
from .kinds import infer, kind_of
from .normalize import Normalized, normalize
from .ssa import to_ssa


@dataclass
class Prepared:
    fs: object
    params: list
    wrt: tuple
    norm: Normalized
    loops: list
    activity: Activity
    kinds: dict

    def diagnostic(self, node, code, message, why, fix) -> Diagnostic:
        """A diagnostic at ``node`` of the user's function (for facts found while
        transforming, after the check)."""
        filename, line, col = self.fs.location(node)
        return Diagnostic(
            code,
            message,
            filename,
            line,
            col,
            self.fs.end_col(node),
            self.fs.file_line(line),
            why,
            fix,
        )


def parameter_names(tree) -> list[str]:
    a = tree.args
    return [p.id for p in a.posonlyargs + a.args + a.kwonlyargs]


def prepare(fn, wrt, registry, kinds_key=None, check=True) -> Prepared:
    """Run the shared passes on ``fn`` differentiated in ``wrt`` (None: every parameter)."""
    fs = load_source(fn)
    if check:
        from ..check import raise_if_unsupported

        raise_if_unsupported(fn, registry)
    params = parameter_names(fs.tree)
    wrt = tuple(params) if wrt is None else tuple(p for p in wrt if p in params)
    norm = normalize(fs)
    # On the SSA form a statement never overwrites its own operands.
    loops = to_ssa(norm.tree, norm.params, norm.flags)
    activity = analyze(norm.tree, list(wrt), registry)
    kinds = infer(norm.tree, param_kinds(fn, kinds_key), registry)
    return Prepared(fs, params, wrt, norm, loops, activity, kinds)


def param_kinds(fn, kinds_key) -> dict:
    """Map the kinds of a call's arguments to parameter names (defaults included)."""
    if kinds_key is None:
        return {}
    positional, keywords = kinds_key
    sig = inspect.signature(fn)
    try:
        bound = sig.bind(*positional, **dict(keywords))
    except TypeError:
        return {}
    out = dict(bound.arguments)
    for name, p in sig.parameters.items():
        if name not in out and p.default is not p.empty:
            out[name] = kind_of(p.default)
    return out
