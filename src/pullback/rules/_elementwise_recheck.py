"""The per-call part of an elementwise proof (``_elementwise.py``) as one generated test.

:func:`~._elementwise.elementwise_in_x` keeps the structural part of its proof per code
object and checks the free names on every call (globals and cells may be rebound between
calls): each function name must still resolve to the very ufunc it verified, each scalar
name to a real scalar. For quad's first step (``_quad_first``), called by an optimizer
again and again with the same integrand, that walk through the proof's entries costs as
much as a third of the integrand's own pass. :func:`recheck_of` compiles the same checks,
for a proof just made, into one expression (a chain of ``is`` and type tests, as
``guards.WorldGuard`` does for an adjoint): while it holds, the proof holds, with the same
functions (so their same-bits checks too); when it fails, the caller makes the full proof
again.

>>> import numpy as np
>>> from pullback.rules._user_vjp import UserVJP
>>> def f(x, c):
...     return np.exp(-c * x)
>>> owner = UserVJP(f, (1,))
>>> from pullback.rules._elementwise import elementwise_in_x
>>> elementwise_in_x(f, (0.5,), owner=owner, same_types=True)
True
>>> holds = recheck_of(f, owner)
>>> holds()
True
>>> f.__code__ = (lambda x, c: np.sin(c * x)).__code__
>>> holds()
False
"""

from __future__ import annotations

import numpy as np

__all__ = ["recheck_of"]

# The scalar types a free scalar name may hold for the generated test to pass: those whose
# arithmetic with a Python float and with a float64 array is float64 alike (what the proof
# accepts as ``same_types``; any other real scalar sends the caller to the full proof).
_FLOAT64_SCALARS = frozenset((float, int, bool, np.float64))


def recheck_of(fn, owner):
    """A function ``() -> bool`` that is True while the elementwise proof last made for
    ``fn`` (kept in ``owner.proof``, and successful: call it right after
    ``elementwise_in_x(fn, floats, owner=owner, same_types=True)`` returned True) still
    holds for Python float parameters: ``fn``'s code is the same object, each function its
    calls name resolves to the object verified then, each free scalar name to a float64
    scalar. ``None`` where a name is not a global or a closure cell (a builtin, an import
    inside the function: the full proof looks those up)."""
    entry = owner.proof
    if entry is None or entry[0] is not fn.__code__ or entry[2] is None:
        return None
    plan, verified = entry[2][0], entry[3]
    env = {
        "_F": fn,
        "_G": fn.__globals__,
        "_C": fn.__closure__,
        "_code": fn.__code__,
        "_T": _FLOAT64_SCALARS,
    }
    tests = ["_F.__code__ is _code"]
    for j, (where, attributes, arity) in enumerate(plan):
        if type(where) is int:
            expr = f"_C[{where}].cell_contents"
        elif type(where) is str and where in fn.__globals__:
            expr = f"_G[{where!r}]"
        else:
            return None
        for attr in attributes:
            if not attr.isidentifier():
                return None
            expr += f".{attr}"
        if arity is None:
            tests.append(f"{expr}.__class__ in _T")
        elif verified[j] is None:
            return None
        else:
            name = f"_v{j}"
            env[name] = verified[j]
            tests.append(f"{expr} is {name}")
    params = ", ".join(f"{k}={k}" for k in env)
    source = (
        f"def _proof_holds({params}):\n"
        "    try:\n"
        f"        return {' and '.join(tests)}\n"
        "    except Exception:  # an emptied cell, a deleted name or attribute: prove again\n"
        "        return False\n"
    )
    exec(compile(source, "<pullback elementwise recheck>", "exec"), env)  # noqa: S102
    holds = env["_proof_holds"]
    holds.source = source
    return holds
