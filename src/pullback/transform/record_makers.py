"""``P._make(values)`` of a named-tuple class ``P`` is ``P(*values)``: written so before
the check and the transformation alike (as a rule's keywords are, keyword_positions.py).

``_make`` is library code (``collections``) made anew for each named-tuple class, so no
rule can be registered for it; the class's constructor has one (records.py), and a
star-call of it gives each value its cotangent (star_calls.py), at every order and in
forward mode. Only a call that resolves, before running, to the ``_make`` of a named-tuple
class is rewritten; ``_make`` of anything else is left as written.

>>> import gast
>>> from collections import namedtuple
>>> P = namedtuple("P", "w b")
>>> tree = gast.parse("def f(w, b):\\n    return P._make([w, b])\\n").body[0]
>>> makers_as_calls(tree, lambda call: P._make)
True
>>> print(gast.unparse(tree).strip())
def f(w, b):
    return P(*[w, b])
"""

from __future__ import annotations

import gast

from ..records import is_record_class
from ..resolve import local_names, own_nodes, resolve_call


def convert_record_makers(fs, tree) -> bool:
    """:func:`makers_as_calls` on ``tree`` (``fs``'s function), resolving its names."""
    lines = getattr(fs, "lines", None)
    if lines is not None and "._make(" not in "".join(lines):
        return False  # (the common case, cheaply)
    names = []

    def resolve(call):
        if not names:
            names.append(local_names(tree))
        callee = resolve_call(fs, call, names[0])
        return callee.obj if callee.kind == "object" else None

    return makers_as_calls(tree, resolve)


def makers_as_calls(tree, resolve) -> bool:
    """Rewrite (in place) each ``P._make(values)`` of ``tree``'s own scope whose function
    ``resolve(call)`` finds to be a named-tuple class's ``_make`` as ``P(*values)``;
    whether any was rewritten."""
    changed = False
    for call in own_nodes(tree.body):
        if not (
            isinstance(call, gast.Call)
            and isinstance(call.func, gast.Attribute)
            and call.func.attr == "_make"
            and len(call.args) == 1
            and not call.keywords
            and not isinstance(call.args[0], gast.Starred)
        ):
            continue
        try:
            found = resolve(call)
        except Exception:  # noqa: BLE001 - unresolvable here: left to the checks
            continue
        owner = getattr(found, "__self__", None)
        if not is_record_class(owner) or getattr(owner, "_make", None) != found:
            continue
        value = call.args[0]
        call.args = [gast.copy_location(gast.Starred(value=value, ctx=gast.Load()), value)]
        call.func = call.func.value
        changed = True
    return changed
