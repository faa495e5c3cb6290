"""A tiny line-oriented code model that the forward and reverse passes build.

Each :class:`Line` knows the primal names it reads and the user's line it comes from;
:class:`Compound` is an ``if``/``for``/``while`` with nested blocks. Rendering yields Python
source with a comment naming the user line wherever that line changes.
"""

from __future__ import annotations

import re

from ..lazy_patterns import LazyPattern

#: the forward sweeps' header of a step of a try body (transform/try_blocks.py), rendered
#: as ``try:`` ... ``except BaseException as _caught: <exc> = _caught``, after a clause
#: that lets pullback's own errors through (a user's handler never takes their path)
TRY_HEADER = "with _pb_try("
#: the name that ``except`` clause binds, and the tuple of pullback's own error classes
#: bound in the generated code's namespace (both reserved: free_values.RESERVED)
CAUGHT = "_caught"
OWN_ERRORS = "_pullback_errors"


def render_try(header: str) -> tuple[str, str]:
    """``(try line, except clauses and their bodies)`` for the header of a try body's
    step."""
    exc = header[len(TRY_HEADER) : -len("):")]
    own = f"except {OWN_ERRORS}:\n    raise"
    return "try:", f"{own}\nexcept BaseException as {CAUGHT}:\n    {exc} = {CAUGHT}"


class _Fields:
    """What ``@dataclass`` gave :class:`Line` and :class:`Compound` (field-wise ``==``, no
    hash, a repr naming the fields), as a plain class: each dataclass costs about half a
    millisecond to create at import, which every cold start pays."""

    __slots__ = ()
    _FIELDS: tuple = ()
    __hash__ = None  # mutable, compared by value (as a dataclass with eq and not frozen)

    def _values(self) -> tuple:
        return tuple(getattr(self, f) for f in self._FIELDS)

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __repr__(self) -> str:
        inner = ", ".join(f"{f}={getattr(self, f)!r}" for f in self._FIELDS)
        return f"{type(self).__name__}({inner})"


class Line(_Fields):
    """One line of generated code, the primal names it reads and the user line it comes
    from; ``alt``: the text in functions that must stay differentiable again (the fused
    gradient and vjp), where calls of user functions go through their generated vjp
    functions; ``once``: the text in the fused sweeps, whose reverse part runs once per
    forward (grad's hot entry): there a loop's tape is popped, freed as the reverse sweep
    walks it."""

    __slots__ = ("text", "reads", "src", "alt", "once")  # no dict: a long function has
    _FIELDS = __slots__  # tens of thousands of lines, each kept while its adjoint lives

    def __init__(self, text: str, reads: frozenset = frozenset(), src: int | None = None,
                 alt: str | None = None, once: str | None = None):  # fmt: skip
        self.text = text
        self.reads = reads
        self.src = src
        self.alt = alt
        self.once = once


class Compound(_Fields):
    """An ``if``/``for``/``while`` (its ``header`` line) with nested blocks; ``loop``: the
    LoopInfo of a reverse loop."""

    _FIELDS = ("header", "body", "orelse", "reads", "src", "loop")

    def __init__(self, header: str, body: list, orelse: list | None = None,
                 reads: frozenset = frozenset(), src: int | None = None, loop=None):  # fmt: skip
        self.header = header
        self.body = body
        self.orelse = [] if orelse is None else orelse
        self.reads = reads
        self.src = src
        self.loop = loop


def replace(item, **changes):
    """A copy of a :class:`Line` or :class:`Compound` with some fields changed (what
    ``dataclasses.replace`` did for them)."""
    values = {f: getattr(item, f) for f in item._FIELDS}
    unknown = set(changes) - set(values)
    if unknown:
        raise TypeError(f"{type(item).__name__} has no field {sorted(unknown)[0]!r}")
    values.update(changes)
    return type(item)(**values)


def render(
    block, indent: int, src_text, out: list, line_map: list, last_src=None, use_alt=False,
    once=False,
):
    """Append rendered lines to ``out``; ``line_map[i]`` is the user line of ``out[i]``
    (``once``: the fused sweeps' texts, :attr:`Line.once`, where lines have one)."""
    if once:
        block = once_texts(block)
    pad = "    " * indent

    def note(src):
        nonlocal last_src
        if src is not None and src != last_src:
            comment = src_text(src)
            out.append(f"{pad}# {comment}")
            line_map.append(src)
            last_src = src

    def chosen(line):  # the differentiable-again text where there is one
        return line.alt if use_alt and line.alt is not None else line.text

    if all(isinstance(item, Line) and not chosen(item) for item in block):
        # empty, or only placeholders that turned out to be unneeded (a loop whose reverse
        # body lost its every line): a statement Python accepts
        out.append(pad + "pass")
        line_map.append(last_src)
        return last_src
    for item in block:
        if isinstance(item, Line) and not chosen(item):
            continue  # a placeholder that turned out to be unneeded (or only in one form)
        note(item.src)
        if isinstance(item, Line):
            # a line may hold a small compound statement (an inline fast path): each of
            # its lines at this indentation
            for part in chosen(item).split("\n"):
                out.append(pad + part)
                line_map.append(item.src if item.src is not None else last_src)
        else:
            header, handler = item.header, None
            if header.startswith(TRY_HEADER):  # an Attempt of a try body (try_blocks.py)
                header, handler = render_try(header)
            out.append(pad + header)
            line_map.append(item.src if item.src is not None else last_src)
            last_src = render(item.body, indent + 1, src_text, out, line_map, last_src, use_alt)
            for part in handler.split("\n") if handler else ():
                out.append(pad + part)
                line_map.append(last_src)
            if item.orelse:
                out.append(pad + "else:")
                line_map.append(last_src)
                last_src = render(
                    item.orelse, indent + 1, src_text, out, line_map, last_src, use_alt
                )
    return last_src


def once_texts(block) -> list:
    """A copy of ``block`` in which each :class:`Line` with a ``once`` text has it as its
    text (the lines themselves are shared by every rendering, so they are not changed)."""
    out = []
    for item in block:
        if isinstance(item, Compound):
            item = replace(item, body=once_texts(item.body), orelse=once_texts(item.orelse))
        elif item.once is not None:
            item = replace(item, text=item.once)
        out.append(item)
    return out


_IDENT = LazyPattern(r"[^\W\d]\w*")


def identifiers(text: str) -> set[str]:
    """Every identifier in a line of generated code (names inside strings included, which
    only ever over-approximates what a line reads)."""
    return set(_IDENT.findall(text))


def walk_reads(block, stop_at_loops=False):
    """All identifiers used by a block (optionally not descending into reverse loops)."""
    names = set()
    for item in block:
        names |= identifiers(item.text if isinstance(item, Line) else item.header)
        if isinstance(item, Line) and item.alt:
            names |= identifiers(item.alt)
        if isinstance(item, Line) and item.once:
            names |= identifiers(item.once)
        if isinstance(item, Compound):
            if stop_at_loops and item.loop is not None:
                continue
            names |= walk_reads(item.body, stop_at_loops)
            names |= walk_reads(item.orelse, stop_at_loops)
    return names


def walk_text(block, use_alt=True):
    """The texts of a block's lines and compound headers, nested blocks too (``use_alt``:
    the differentiable-again text where a line has one)."""
    for item in block:
        if isinstance(item, Compound):
            yield item.header
            yield from walk_text(item.body, use_alt)
            yield from walk_text(item.orelse, use_alt)
        else:
            yield item.alt if use_alt and item.alt is not None else item.text


def mentions(items, name, alt=False) -> int:
    """How many times the name ``name`` appears in the lines of ``items`` (nested blocks
    too), in their text and, with ``alt``, in their differentiable-again text as well."""
    pattern = re.compile(rf"\b{re.escape(name)}\b")
    total = 0
    for item in items:
        if isinstance(item, Line):
            total += len(pattern.findall(item.text))
            if alt and item.alt:
                total += len(pattern.findall(item.alt))
        else:
            total += len(pattern.findall(item.header))
            total += mentions(item.body, name, alt) + mentions(item.orelse, name, alt)
    return total
