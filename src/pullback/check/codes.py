"""The diagnostic codes of the static check: a title and a default reason for each.

Codes are stable: tests, documentation anchors (``docs/limitations.md#PB101``) and users'
``noqa``-style notes refer to them. The hundreds group them:

* ``PB1xx`` — mutation (arrays, containers, attributes, names);
* ``PB2xx`` — exception and context-manager control flow;
* ``PB3xx`` — calls that cannot be differentiated or resolved;
* ``PB4xx`` — syntax outside the supported subset.
"""

from __future__ import annotations

DOCS = "docs/limitations.md"

#: code -> (title used in the documentation, default one-sentence reason)
CODES: dict[str, tuple[str, str]] = {
    "PB101": (
        "array mutation: element or slice assignment into an array not provably local",
        "A differentiated function may write only into arrays it created itself.",
    ),
    "PB102": (
        "array mutation: augmented element or slice assignment into an array not provably local",
        "A differentiated function may write only into arrays it created itself.",
    ),
    "PB103": (
        "array mutation: in-place array method",
        "This method changes its array in place, which a differentiated function may not do.",
    ),
    "PB104": (
        "array mutation: in-place NumPy function or out= argument",
        "This call writes into an existing array, which a differentiated function may not do.",
    ),
    "PB105": (
        "augmented assignment that may change a shared array",
        "`+=` and friends change an array in place when the name refers to an array.",
    ),
    "PB106": (
        "container mutation",
        "A differentiated function may change in place only the lists and dicts it built "
        "itself, while no other name sees them.",
    ),
    "PB107": (
        "attribute assignment",
        "Storing on an object is a side effect that the reverse sweep cannot undo or follow.",
    ),
    "PB108": (
        "del of a name",
        "Deleting a name would remove a value that the reverse sweep may still need.",
    ),
    "PB109": (
        "annotation without a value",
        "A bare annotation declares a name without binding it, which the transform cannot follow.",
    ),
    "PB202": (
        "with statement",
        "A context manager runs once around the forward body; the value `as` binds carries "
        "no gradient.",  # with blocks run once around the body: transform/with_blocks.py
    ),
    "PB301": (
        "call of a function with no source and no rule",
        "pullback differentiates a call through a rule or by transforming the callee's "
        "Python source, and this callee has neither.",
    ),
    "PB302": (
        "call of an undefined name",
        "pullback resolves every call before the function runs, and this name is not "
        "visible to the function.",
    ),
    "PB400": (
        "other unsupported syntax",
        "This construct is outside the subset of Python that pullback can differentiate.",
    ),
    "PB401": (
        "global and nonlocal",
        "Writing a differentiated value to a variable outside the function is a side effect "
        "that the reverse sweep cannot follow.",
    ),
    "PB402": (
        "generators: yield",
        "A generator is suspended and resumed by its caller, so its derivative is not one "
        "function call.",
    ),
    "PB403": (
        "async code",
        "Coroutines are driven by an event loop outside the function, which the reverse sweep "
        "cannot follow.",
    ),
    "PB404": (
        "lambda inside a differentiated function",
        "A lambda is differentiated where it is called, passed, stored or returned: one "
        "that escapes is a record of the values it captured; one whose captured variable "
        "is bound again after it is made (Python reads the new value when it is called) "
        "is a closure pullback does not follow.",
    ),
    "PB405": (
        "nested function definition",
        "A nested function that is only called is differentiated as a function of its own "
        "(one that writes nonlocal variables returns their new values to each call), one that "
        "escapes as a value as a record of the values it captured; one whose captured "
        "variable is bound again after it is made, or whose call cannot assign what it writes "
        "back, is a closure pullback does not follow.",
    ),
    "PB406": (
        "class definition inside a differentiated function",
        "A class made while the function runs cannot be differentiated.",
    ),
    "PB407": (
        "exec and eval",
        "Code built from a string has no source for pullback to read before it runs.",
    ),
    "PB408": (
        "import inside a differentiated function that cannot be bound in advance",
        "An import at the top of the function's body binds its names like globals; one "
        "inside a block, of a name the function also binds another way, or that fails "
        "leaves the name unknown until the line runs.",
    ),
    "PB409": (
        "match statement",
        "pullback differentiates a match statement as the if/elif chain it stands for, and "
        "writes no chain for this pattern.",
    ),
}


#: Codes no longer reported: what they refused now differentiates. They stay reserved (and
#: documented, so old links and suppressions keep their meaning).
RETIRED = {
    "PB201": "try/except/else/finally (differentiated along the path Python took)",
    "PB205": "a jump out of a try statement with finally (finally runs, then the jump)",
    "PB410": "star-arguments and starred targets (differentiated since stop 19)",
    "PB412": "assignment expression (differentiated since stop 19)",
}


def see(code: str) -> str:
    """The reference to a code's section of the documentation."""
    return f"see {DOCS}#{code}"


def title(code: str) -> str:
    return CODES[code][0]


def why(code: str) -> str:
    return CODES[code][1]
