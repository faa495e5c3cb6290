"""A tiny line-oriented code model that the forward and reverse passes build.

Each :class:`Line` knows the primal names it reads and the user's line it comes from;
:class:`Compound` is an ``if``/``for``/``while`` with nested blocks. Rendering yields Python
source with a comment naming the user line wherever that line changes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace


@dataclass
class Line:
    text: str
    reads: frozenset = frozenset()
    src: int | None = None
    # the text in functions that must stay differentiable again (the fused gradient and
    # vjp), where calls of user functions go through their generated vjp functions
    alt: str | None = None
    # the text in the fused sweeps, whose reverse part runs once per forward (grad's hot
    # entry): there a loop's tape is popped, freed as the reverse sweep walks it
    once: str | None = None


@dataclass
class Compound:
    header: str
    body: list
    orelse: list = field(default_factory=list)
    reads: frozenset = frozenset()
    src: int | None = None
    loop: object = None  # LoopInfo, for reverse loops


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
            out.append(pad + item.header)
            line_map.append(item.src if item.src is not None else last_src)
            last_src = render(item.body, indent + 1, src_text, out, line_map, last_src, use_alt)
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


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


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
