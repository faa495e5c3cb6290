"""``n += 1`` on a parameter: a rebinding or a write into the caller's array? (PB105)

Python decides by the argument: on an int, a float, a tuple or a NumPy scalar ``n += 1``
binds a new value to ``n``; on an array it writes into the caller's array. The alias
analysis defers such a statement (check/aliasing.py ``_solve_deferred``) and the transform
guards it as it runs (containers_mutation.immutable_value). The check refuses it before
running where the kinds say the argument is an array:

* at a call (``grad(f)(x, n)``) the kinds of its arguments are known (transform/kinds.py):
  an array of one axis or more is reported, a scalar (a 0-d array too: the guard refuses
  it) or a value of no kind (a tuple, a list: the guard decides) is let through;
* without a call (``pullback.check(f)``) only a literal default says the kind: a parameter
  with a number for default is let through, any other is reported as it may be an array.
"""

from __future__ import annotations

import gast

from .aliasing import is_number

# The value of FunctionChecker.param_kinds in a callee of a checked call: its arguments'
# kinds are not known before running, and the guard decides as it runs.
AT_RUN_TIME: dict = {}


def array_parameters(checker, params) -> list:
    """The parameters among ``params`` whose argument is (or may be, without a call) an
    array that ``op=`` would change in place."""
    kinds = checker.param_kinds
    if kinds is None:
        defaults = number_defaults(checker.tree)
        return sorted(p for p in params if p not in defaults)
    return sorted(p for p in params if is_array_kind(kinds.get(p)))


def is_array_kind(kind) -> bool:
    """An array with at least one axis (NumPy's, Dask's or another array API's)."""
    if isinstance(kind, tuple) and len(kind) == 2 and kind[0] in ("dask", "array-api"):
        kind = kind[1]
    return isinstance(kind, tuple) and kind[:1] == ("array",) and kind[1] != 0


def number_defaults(tree) -> set:
    """The parameters of ``tree`` whose default is a number written in the source."""
    if not isinstance(tree, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda)):
        return set()
    args = tree.args
    positional = args.posonlyargs + args.args
    with_default = positional[len(positional) - len(args.defaults) :]
    pairs = [*zip(with_default, args.defaults, strict=True)]
    pairs += zip(args.kwonlyargs, args.kw_defaults, strict=True)
    return {a.id for a, d in pairs if d is not None and is_number(d)}
