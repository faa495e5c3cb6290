"""Whether a call of a user function keeps a list or dict it is passed.

``_, grads = loss_and_grads(params, x, t)`` inside an optimiser loop that then changes
``params``: the change is modelled as a rebinding of ``params`` to a new dict, which is the
primal's only if nothing else holds the old object. A user function that only reads its
parameter at once (items read into arithmetic, an index, a constant attribute: the test of
:func:`pullback.check.argument_reads.reads_only`) and never returns the parameter itself
keeps nothing of it: such a call is a read, like ``len(params)``
(:class:`pullback.transform.list_analysis.ContainerAnalysis`).

>>> import gast
>>> same = gast.parse("def f(params, x):\\n    return x, params").body[0]
>>> returned_as_is(same, "params"), returned_as_is(same, "y")
(True, False)
>>> import numpy as np
>>> keeps_nothing(np.sum, 0)  # no source: it may keep anything
False
"""

from __future__ import annotations

import types

import gast

from ..guards import is_library_module_name
from ..resolve import resolve_call
from ..source import load_source
from ..tree_walk import walk


def keeps_nothing(fn, position: int) -> bool:
    """Whether the user function ``fn`` (with source) keeps nothing of its ``position``-th
    positional argument: it only reads it at once and never returns it as it is."""
    from ..check.argument_reads import bound_names, reads_only
    from ..check.fresh_arrays import returns_fresh

    if isinstance(getattr(fn, "node", None), gast.FunctionDef) and callable(
        getattr(fn, "source", None)
    ):
        fs = fn.source()  # a function of a file `pullback check` parsed (check/static.py)
    elif not isinstance(fn, types.FunctionType) or is_library_module_name(
        getattr(fn, "__module__", None) or "builtins"
    ):
        return False
    else:
        try:
            fs = load_source(fn)
        except Exception:  # noqa: BLE001 - no source: the call may keep anything
            return False
    tree = fs.tree
    if not isinstance(tree, gast.FunctionDef) or tree.args.vararg is not None:
        return False
    params = tree.args.posonlyargs + tree.args.args
    if position >= len(params) or returned_as_is(tree, params[position].id):
        return False
    own = bound_names(tree)
    return reads_only(tree, position, lambda c: returns_fresh(resolve_call(fs, c, own), c))


def returned_as_is(tree, name) -> bool:
    """``return p`` or ``return x, p``: the caller gets the object itself."""
    for node in walk(tree):
        if isinstance(node, gast.Return) and node.value is not None:
            values = node.value.elts if isinstance(node.value, gast.Tuple) else [node.value]
            if any(isinstance(v, gast.Name) and v.id == name for v in values):
                return True
    return False
