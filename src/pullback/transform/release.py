"""Dead values released in grad's fused sweeps: ``name = None`` after the last top-level
statement that mentions it.

In the fused function (forward, seed and reverse in one frame, what ``grad``'s hot entry
runs) every local lives until the function returns, so an elementwise gradient on a large
array held each forward temporary and each cotangent at once (``np.sum(np.sin(x) * x)``:
five arrays of ``x``'s size at the peak, where three suffice). A name is released after
the last top-level statement (a loop or an ``if`` counts as one) that mentions it, when
that statement is not the final ``return``. Mentions are found in the text of the lines,
so a name that only appears in a string or in an attribute of the same spelling is kept
longer, never released early.

Only names that may hold an array are released (not those whose kind is a scalar: a
release costs a few nanoseconds that a scalar function's call would pay for nothing), and
nothing is released in a function that defines a nested function or lambda (a closure may
read a name after its last textual mention). The sweeps with a saved tuple and the
differentiable-again functions are not touched: their values live in the saved tuple, and
the latter must stay inside the supported subset.

>>> from pullback.transform.code import Line
>>> body = [Line("a = f(x)"), Line("b = a * 2"), Line("c = b + 1"), Line("return c")]
>>> [item.text for item in release_dead(body, lambda name: True)]
['a = f(x)', 'b = a * 2', 'a = None', 'c = b + 1', 'b = None', 'return c']
"""

from __future__ import annotations

from ..lazy_patterns import LazyPattern
from .code import Line

_IDENT = LazyPattern(r"[^\W\d]\w*")
# ``a = ...`` and ``a, b = ...`` (not ``==``, not an augmented or subscripted target)
_TARGETS = LazyPattern(r"^([^\W\d]\w*(?:\s*,\s*[^\W\d]\w*)*)\s*,?\s*=(?!=)")
_NESTED = LazyPattern(r"\b(?:lambda|def|del|locals|vars|exec|eval|nonlocal|global)\b")


def _texts(item):
    if isinstance(item, Line):
        yield item.text
        return
    yield item.header
    for inner in (item.body, item.orelse or ()):
        for sub in inner:
            yield from _texts(sub)


def release_dead(block: list, releasable) -> list:
    """``block`` (top-level items of one function) with releasing lines after each
    releasable name's last mention; ``releasable(name)`` says which names may be released.
    The block as it is when something in it could read a name out of sight."""
    mentions = []
    for item in block:
        text = "\n".join(_texts(item))
        if _NESTED.search(text):
            return block
        mentions.append(set(_IDENT.findall(text)))
    bound: set[str] = set()
    for item in block:
        for text in _texts(item):
            m = _TARGETS.match(text)
            if m:
                bound.update(n.strip() for n in m.group(1).split(","))
    last: dict[str, int] = {}
    for k, names in enumerate(mentions):
        for name in names & bound:
            last[name] = k
    final = len(block) - 1
    after: dict[int, list[str]] = {}
    for name, k in last.items():
        if k < final and releasable(name):
            after.setdefault(k, []).append(name)
    if not after:
        return block
    out = []
    for k, item in enumerate(block):
        out.append(item)
        if k in after:
            # ``= None`` rather than ``del``: right as well for a name only some branch bound
            out.append(Line(" = ".join(sorted(after[k])) + " = None", src=item.src))
    return out
