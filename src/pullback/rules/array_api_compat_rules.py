"""array_api_compat: ``xp = array_namespace(x)`` inside a differentiated function.

Finding a namespace is a query with no tangent; the functions called on it then use the
rules of that namespace (``rules/array_api.py``). Deferred until array_api_compat is
imported.
"""

from __future__ import annotations

from ._util import Registrar

FAMILY = "array_api_compat"
REQUIRES = "array_api_compat"


def register(reg):
    try:
        import array_api_compat
    except ImportError:
        return
    fns = [array_api_compat.array_namespace, array_api_compat.is_array_api_obj]
    Registrar(reg, FAMILY).nondiff(*fns, names=[f"array_api_compat.{f.__name__}" for f in fns])
