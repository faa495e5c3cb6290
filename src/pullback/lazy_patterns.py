"""Regular expressions compiled on their first use rather than at import.

A module-level ``re.compile`` is paid by every ``import pullback`` (a tenth to a fifth of a
millisecond each, some twenty of them), while most of them serve passes that a given
function never reaches (the liveness release of long sweeps, stores on objects, the
keyword reordering). :class:`LazyPattern` is written where ``re.compile`` was and is read
the same way (``P.match(text)``, ``P.findall(text)``, ``P.pattern``); the pattern is
compiled when an attribute is first read, and each attribute is then kept on the instance,
so later reads find the compiled pattern's bound method directly (no Python call in
between, which the hot passes would feel).
"""

from __future__ import annotations

import re


class LazyPattern:
    """``re.compile(text, flags)``, done when first used (see the module docstring)."""

    def __init__(self, text: str, flags: int = 0):
        self._text = text
        self._flags = flags

    def __getattr__(self, name: str):
        # Reached only for attributes not on the instance yet: the first read of each.
        if name.startswith("__") or name in ("_text", "_flags"):
            raise AttributeError(name)
        compiled = re.compile(self._text, self._flags)  # re's own cache: compiled once
        value = getattr(compiled, name)
        setattr(self, name, value)
        return value

    def __repr__(self) -> str:
        return f"LazyPattern({self._text!r})"
